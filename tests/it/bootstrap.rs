//! The stratified question bootstrap against analytic results and an f64 reference that
//! draws the same questions (via `draw_index`) but sums in f64.

use ragstats_core::bootstrap::replicates::{Replicates, ReplicatesHeader};
use ragstats_core::bootstrap::report::build_report;
use ragstats_core::bootstrap::stratified::{Bootstrap, BootstrapSpec};
use ragstats_core::components::variance::analyse;
use ragstats_core::panel::{QuestionStats, Stratum, StratumStats};
use ragstats_core::resample::summary::{sd, Method};
use ragstats_core::resample::CpuBackend;
use ragstats_core::rng::draw_index;

/// xorshift64* with Box–Muller: an independent generator for test panels.
struct Gen(u64);
impl Gen {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

/// A Gaussian nested stratum y = mu + a_q + b_qt + e_qtr.
fn stratum(g: &mut Gen, name: &str, q: usize, t: usize, r: usize, mu: f64, s: [f64; 3]) -> Stratum {
    let mut y = Vec::with_capacity(q * t * r);
    for _ in 0..q {
        let a = s[0] * g.normal();
        for _ in 0..t {
            let b = s[1] * g.normal();
            for _ in 0..r {
                y.push(mu + a + b + s[2] * g.normal());
            }
        }
    }
    Stratum {
        name: name.into(),
        questions: (0..q).map(|i| format!("{name}{i}")).collect(),
        trajectories: (0..t).map(|i| i.to_string()).collect(),
        reads: (0..r).map(|i| i.to_string()).collect(),
        y,
        dropped: 0,
        ..Default::default()
    }
}

fn run(stats: &[StratumStats], spec: BootstrapSpec, seed: u64, b: u32) -> (Bootstrap, Vec<f64>) {
    let boot = Bootstrap::new("y", stats, spec).unwrap();
    let values = boot.run(&CpuBackend::new(), seed, 0..b, &|_| {}).unwrap();
    (boot, values)
}

fn column(values: &[f64], n: usize, i: usize) -> Vec<f64> {
    values.iter().skip(i).step_by(n).copied().collect()
}

#[test]
fn bootstrap_se_matches_the_plug_in_se() {
    // For a mean, the ideal bootstrap variance is (Q−1)/Q · s²/Q per stratum; the Monte
    // Carlo SE of a bootstrap SD from B replicates is about SE/sqrt(2(B−1)).
    let mut g = Gen(0x1234_5678_9abc_def1);
    for (trial, (q1, q2)) in [(223usize, 223usize), (40, 300), (7, 1000)]
        .iter()
        .enumerate()
    {
        let strata = [
            stratum(&mut g, "a", *q1, 2, 1, 0.3, [0.2, 0.1, 0.05]),
            stratum(&mut g, "b", *q2, 2, 1, -0.1, [0.3, 0.05, 0.1]),
        ];
        let stats: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
        let rep = analyse("y", &stats, &[0, 0]).unwrap();
        let ideal = (rep
            .strata
            .iter()
            .map(|s| s.se * s.se * (s.questions as f64 - 1.0) / s.questions as f64)
            .sum::<f64>())
        .sqrt()
            / 2.0;
        let b = 10_000;
        let (boot, values) = run(&stats, BootstrapSpec::default(), 42 + trial as u64, b);
        let n = boot.plan.statistics.len();
        let se = sd(&column(&values, n, 0));
        let mc = ideal / (2.0 * (b as f64 - 1.0)).sqrt();
        assert!(
            (se - ideal).abs() < 4.0 * mc,
            "Q={q1},{q2}: bootstrap SE {se} vs ideal {ideal} (MC SE {mc})"
        );
        // The point estimate is the equal-weight mean of the stratum means.
        assert!((boot.point()[0] - rep.estimate).abs() < 1e-12);
    }
}

#[test]
fn tiny_variance_near_one_matches_f64_reference() {
    // Scores 0.999 ± 1e-4: f32 sums of uncentred values would lose most digits.
    let mut g = Gen(99);
    let strata = [
        stratum(&mut g, "a", 223, 2, 1, 0.999, [1e-4, 3e-5, 0.0]),
        stratum(&mut g, "b", 150, 2, 1, 0.999, [1e-4, 3e-5, 0.0]),
    ];
    let stats: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
    let b = 2000u32;
    let seed = 7;
    let (boot, values) = run(&stats, BootstrapSpec::default(), seed, b);
    let n = boot.plan.statistics.len();
    let got = sd(&column(&values, n, 0));
    // Reference: the same draws, every sum in f64 over the raw question means.
    let reference: Vec<f64> = (0..b)
        .map(|r| {
            let means: Vec<f64> = stats
                .iter()
                .enumerate()
                .map(|(s, st)| {
                    let q = st.q() as u32;
                    (0..q as u64)
                        .map(|i| st.questions[draw_index(seed, r, s as u32, i, q) as usize].mean)
                        .sum::<f64>()
                        / q as f64
                })
                .collect();
            means.iter().sum::<f64>() / means.len() as f64
        })
        .collect();
    let want = sd(&reference);
    assert!(
        ((got - want) / want).abs() < 1e-6,
        "SE {got} vs f64 reference {want}"
    );
    for (x, y) in column(&values, n, 0).iter().zip(&reference) {
        assert!((x - y).abs() < 1e-9, "{x} vs {y}");
    }
}

#[test]
fn components_refit_matches_direct_fit_on_resampled_panel() {
    // Replicate 0 refitted from sums must equal the ANOVA of the explicitly resampled panel.
    let mut g = Gen(5);
    let strata = [
        stratum(&mut g, "a", 30, 3, 2, 0.5, [0.2, 0.1, 0.05]),
        stratum(&mut g, "b", 20, 3, 2, 0.4, [0.1, 0.2, 0.1]),
    ];
    let stats: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
    let spec = BootstrapSpec {
        components: true,
        designs: vec!["100:2:1".into()],
        pooled_forecast: false,
    };
    let seed = 11;
    let (boot, values) = run(&stats, spec, seed, 3);
    let n = boot.plan.statistics.len();
    for r in 0..3u32 {
        let resampled: Vec<StratumStats> = stats
            .iter()
            .enumerate()
            .map(|(s, st)| StratumStats {
                name: st.name.clone(),
                t: st.t,
                r: st.r,
                questions: (0..st.q() as u64)
                    .map(|i| st.questions[draw_index(seed, r, s as u32, i, st.q() as u32) as usize])
                    .collect::<Vec<QuestionStats>>(),
            })
            .collect();
        let direct = analyse("y", &resampled, &[0, 0]).unwrap();
        let row = &values[r as usize * n..(r as usize + 1) * n];
        let close =
            |a: f64, b: f64| assert!((a - b).abs() <= 1e-5 * b.abs().max(1e-3), "{a} vs {b}");
        close(row[0], direct.estimate);
        let pos = |name: &str| boot.plan.statistics.iter().position(|s| s == name).unwrap();
        close(
            row[pos("component[a].question")],
            direct.strata[0].fit.components.question,
        );
        close(
            row[pos("component[b].trajectory")],
            direct.strata[1].fit.components.trajectory.unwrap(),
        );
        close(
            row[pos("component[b].read")],
            direct.strata[1].fit.components.read.unwrap(),
        );
        let pooled = direct.pooled.clone().unwrap();
        close(
            row[pos("component[pooled].question")],
            pooled.fit.components.question,
        );
        let audit = ragstats_core::components::forecast::Audit::from_report(&direct);
        let f = ragstats_core::components::forecast::forecast(
            &audit,
            &"100:2:1".parse().unwrap(),
            false,
        )
        .unwrap();
        close(row[pos("se_nested[100:2:1]")], f.se_nested);
    }
}

#[test]
fn percentile_interval_coverage_is_near_nominal() {
    let mut g = Gen(2024);
    let (panels, b) = (400, 1000);
    let mut covered = 0;
    for p in 0..panels {
        let strata = [
            stratum(&mut g, "a", 120, 2, 1, 0.0, [0.3, 0.1, 0.1]),
            stratum(&mut g, "b", 80, 2, 1, 0.0, [0.2, 0.1, 0.1]),
        ];
        let stats: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
        let boot = Bootstrap::new("y", &stats, BootstrapSpec::default()).unwrap();
        let values = boot.run(&CpuBackend::new(), p, 0..b, &|_| {}).unwrap();
        let reps = Replicates {
            header: ReplicatesHeader {
                seed: p,
                range: [0, b],
                method: Method::Percentile,
                confidence: 0.95,
                data_sha256: String::new(),
                plan: boot.plan.clone(),
                point: boot.point(),
                acceleration: None,
            },
            values,
        };
        let ci = build_report(&reps).summary.ci;
        if ci[0] <= 0.0 && 0.0 <= ci[1] {
            covered += 1;
        }
    }
    let rate = covered as f64 / panels as f64;
    // Binomial SD at 0.95 over 400 panels is 1.1%; percentile intervals run slightly short.
    assert!((0.91..=0.98).contains(&rate), "coverage {rate}");
}
