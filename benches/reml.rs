//! Criterion bench of the REML fit (`components::reml`) on a 100,000-question unbalanced
//! stratum: T = 4 trajectories per question (3% of questions lost one, 2% have a fifth),
//! R = 2 reads per trajectory (5% lost one, 2% have a third); σ²_q = 0.04, σ²_t = 0.01,
//! σ²_r = 0.0064. Paths: building the stratum from its grouped reads, the cold fit (lme4's
//! start θ = 1), and one question-bootstrap replicate refitted cold and warm (started from
//! the full-sample θ).
//!
//! And the bootstrap of a realistic unbalanced audit ([`Bootstrap::from_panel`] then
//! [`Bootstrap::run`] on the CPU engine): 446 questions in two strata (300 and 146), ~2% of
//! trajectories failed (dropped), ~1% of reads missing, at T = 3, R = 2 and at T = 5, R = 5;
//! 10,000 replicates, each refitting both strata and the pooled fit by REML (warm starts).
//! Run: `cargo bench --bench reml` (see docs/BENCHMARKS.md for the command used there).

use criterion::{criterion_group, criterion_main, Criterion};
use ragstats_core::bootstrap::stratified::{Bootstrap, BootstrapSpec};
use ragstats_core::components::reml::{fit, fit_resampled, NestedBuilder, NestedStratum};
use ragstats_core::panel::{Nested, Panel, Stratum};
use ragstats_core::resample::CpuBackend;

const QUESTIONS: usize = 100_000;

/// xorshift64* uniforms in (0, 1) and Box–Muller normals: reproducible synthetic data.
struct Draws(u64);

impl Draws {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self, sd: f64) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Reads grouped per trajectory, and trajectories per question.
struct Grouped {
    values: Vec<f64>,
    reads: Vec<usize>,
    trajectories: Vec<usize>,
}

fn synthetic() -> Grouped {
    let mut d = Draws(20_261_201);
    let mut g = Grouped {
        values: Vec::new(),
        reads: Vec::new(),
        trajectories: Vec::new(),
    };
    for _ in 0..QUESTIONS {
        let a = 0.5 + d.normal(0.2);
        let u = d.uniform();
        let t = if u < 0.03 {
            3
        } else if u < 0.05 {
            5
        } else {
            4
        };
        g.trajectories.push(t);
        for _ in 0..t {
            let b = a + d.normal(0.1);
            let u = d.uniform();
            let r = if u < 0.05 {
                1
            } else if u < 0.07 {
                3
            } else {
                2
            };
            g.reads.push(r);
            for _ in 0..r {
                g.values.push(b + d.normal(0.08));
            }
        }
    }
    g
}

fn build(g: &Grouped) -> NestedStratum {
    let mut b = NestedBuilder::new();
    let (mut row, mut traj) = (0, 0);
    for &t in &g.trajectories {
        for &r in &g.reads[traj..traj + t] {
            b.trajectory(&g.values[row..row + r]).unwrap();
            row += r;
        }
        traj += t;
        b.end_question().unwrap();
    }
    b.finish().unwrap()
}

fn reml(c: &mut Criterion) {
    let g = synthetic();
    let s = build(&g);
    let full = fit(&[&s]).unwrap();
    eprintln!(
        "100k stratum: {} rows, {} trajectories; components {:?}; {} Newton iterations, {} evaluations",
        s.rows(),
        s.trajectories(),
        full.components,
        full.iterations,
        full.evaluations
    );
    // One bootstrap replicate: Q draws with replacement.
    let mut d = Draws(7);
    let mut counts = vec![0u32; QUESTIONS];
    for _ in 0..QUESTIONS {
        counts[(d.uniform() * QUESTIONS as f64) as usize] += 1;
    }
    let warm = fit_resampled(&[&s], &[&counts], Some(full.theta)).unwrap();
    let cold = fit_resampled(&[&s], &[&counts], None).unwrap();
    eprintln!(
        "replicate: warm {} iterations / {} evaluations, cold {} / {}",
        warm.iterations, warm.evaluations, cold.iterations, cold.evaluations
    );

    let mut group = c.benchmark_group("reml_100k_questions");
    group.sample_size(10);
    group.bench_function("build_stratum", |b| b.iter(|| build(&g)));
    group.bench_function("fit_cold", |b| b.iter(|| fit(&[&s]).unwrap()));
    group.bench_function("replicate_cold", |b| {
        b.iter(|| fit_resampled(&[&s], &[&counts], None).unwrap())
    });
    group.bench_function("replicate_warm", |b| {
        b.iter(|| fit_resampled(&[&s], &[&counts], Some(full.theta)).unwrap())
    });
    group.finish();
}

/// An audit stratum of `q` questions, nominally `t` trajectories of `r` reads: each
/// trajectory fails (is absent) with probability 2% (a question keeps at least one) and each
/// read is missing with probability 1% (a trajectory keeps at least one);
/// σ²_q = 0.04, σ²_t = 0.01, σ²_r = 0.0064.
fn audit_stratum(d: &mut Draws, name: &str, q: usize, t: usize, r: usize) -> Stratum {
    let mut n = Nested {
        traj_start: vec![0],
        read_start: vec![0],
        y: Vec::new(),
    };
    for _ in 0..q {
        let a = 0.5 + d.normal(0.2);
        let mut kept = 0;
        for i in 0..t {
            if d.uniform() < 0.02 && !(i + 1 == t && kept == 0) {
                continue;
            }
            kept += 1;
            let b = a + d.normal(0.1);
            let mut reads = 0;
            for j in 0..r {
                if d.uniform() < 0.01 && !(j + 1 == r && reads == 0) {
                    continue;
                }
                reads += 1;
                n.y.push(b + d.normal(0.08));
            }
            n.read_start.push(n.y.len());
        }
        n.traj_start.push(n.read_start.len() - 1);
    }
    Stratum {
        name: name.to_string(),
        questions: (0..q).map(|i| format!("{name}{i}")).collect(),
        nested: Some(n),
        ..Stratum::default()
    }
}

fn bootstrap(c: &mut Criterion) {
    let mut group = c.benchmark_group("bootstrap_446_questions_10000_replicates");
    group.sample_size(10);
    for (t, r) in [(3, 2), (5, 5)] {
        let mut d = Draws(446 + 10 * t as u64 + r as u64);
        let panel = Panel {
            notes: Vec::new(),
            weights: Vec::new(),
            source: "synthetic".into(),
            metric: "f1".into(),
            outcome: "f1".into(),
            selectors: Vec::new(),
            selector: None,
            strata: vec![
                audit_stratum(&mut d, "hotpot", 300, t, r),
                audit_stratum(&mut d, "musique", 146, t, r),
            ],
        };
        let spec = BootstrapSpec {
            components: true,
            ..BootstrapSpec::default()
        };
        let boot = Bootstrap::from_panel(&panel, spec.clone()).unwrap();
        let backend = CpuBackend::new();
        let values = boot.run(&backend, 1, 0..10_000, &|_| {}).unwrap();
        let nan = values.iter().filter(|v| !v.is_finite()).count();
        let shapes: Vec<String> = boot
            .plan
            .strata
            .iter()
            .filter_map(|s| s.shape)
            .map(|s| {
                format!(
                    "{} questions, {} trajectories, {} reads",
                    s.questions, s.trajectories.total, s.reads.total
                )
            })
            .collect();
        eprintln!(
            "T={t} R={r}: {shapes:?}; {} statistics x 10,000 replicates, {nan} not finite; point {:?}",
            boot.plan.statistics.len(),
            &boot.point()[3..]
        );
        group.bench_function(format!("T{t}_R{r}_prepare"), |b| {
            b.iter(|| Bootstrap::from_panel(&panel, spec.clone()).unwrap())
        });
        group.bench_function(format!("T{t}_R{r}_run"), |b| {
            b.iter(|| boot.run(&backend, 1, 0..10_000, &|_| {}).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, reml, bootstrap);
criterion_main!(benches);
