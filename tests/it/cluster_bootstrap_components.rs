//! The cluster bootstrap's refits (issue #48, item 3): `bootstrap --cluster --components`
//! refits the four-level components (σ²_c, σ²_q, σ²_t, σ²_r) on every replicate's drawn
//! clusters, and `--design` forecasts clustered designs `GxM:T:R` from them.
//!
//! Data: tests/fixtures/cluster/balanced.csv (2 strata × 24 clusters × 4 questions ×
//! T = R = 2, `python tests/reference/cluster_anova.py`), whose numpy ANOVA is recorded in
//! `components::cluster`'s tests and below.

use std::path::{Path, PathBuf};

use ragstats_core::bootstrap::analysis::{
    panel_cluster_draw, prepare, prepare_clustered, BootstrapJob, BootstrapRun,
};
use ragstats_core::bootstrap::report::CLUSTER_REFITS_NOTE;
use ragstats_core::bootstrap::stratified::BootstrapSpec;
use ragstats_core::components::variance::analyse_panel;
use ragstats_core::panel::{load_panel, Clusters, LoadOptions, Panel, Stratum};
use ragstats_core::resample::summary::Method;
use ragstats_core::resample::{CpuBackend, ResampleBackend};
use ragstats_core::rng::Generator;
use ragstats_gpu::{AdapterPolicy, GpuBackend};

use crate::common;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cluster/balanced.csv")
}

fn load(cluster: Option<&str>) -> Panel {
    load_panel(
        &fixture(),
        &LoadOptions {
            metric: Some("f1".into()),
            cluster: cluster.map(str::to_string),
            ..Default::default()
        },
    )
    .unwrap()
}

fn job(replicates: u32, designs: &[&str]) -> BootstrapJob {
    BootstrapJob {
        spec: BootstrapSpec {
            components: true,
            designs: designs.iter().map(|d| d.to_string()).collect(),
            pooled_forecast: false,
        },
        seed: 4848,
        replicates: 0..replicates,
        method: Method::Percentile,
        confidence: 0.95,
    }
}

fn run(panel: &Panel, j: &BootstrapJob, backend: &dyn ResampleBackend) -> BootstrapRun {
    prepare(panel, j).unwrap().run(backend, &|_| {}).unwrap()
}

/// The statistic named `name` of every replicate.
fn column(run: &BootstrapRun, name: &str) -> Vec<f64> {
    let h = &run.replicates.header;
    let n = h.plan.statistics.len();
    let i = h
        .plan
        .statistics
        .iter()
        .position(|s| s == name)
        .unwrap_or_else(|| panic!("no statistic {name}: {:?}", h.plan.statistics));
    run.replicates
        .values
        .iter()
        .skip(i)
        .step_by(n)
        .copied()
        .collect()
}

#[test]
fn singleton_clusters_refit_what_the_question_bootstrap_refits() {
    // Every question its own cluster (M = 1): the same draws as the question bootstrap; the
    // four-level ANOVA then has no question level (σ²_q = 0, σ²_c holds it), so σ²_c* is
    // the question bootstrap's σ²_q*, the lower levels are its own, and the designs
    // forecast the same SEs (a GxM:T:R design of G clusters of 1 question is Q:T:R).
    let plain = load(None);
    let ids: Vec<Vec<String>> = plain.strata.iter().map(|s| s.questions.clone()).collect();
    let j = job(300, &["192x1:3:1", "192:3:1"]);
    let one = prepare_clustered(&plain, Some(&ids), &j)
        .unwrap()
        .run(&CpuBackend::new(), &|_| {})
        .unwrap();
    let q = run(
        &plain,
        &job(300, &["192:3:1", "192:3:1"]),
        &CpuBackend::new(),
    );
    let same = |a: &[f64], b: &[f64], what: &str| {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                "{what}: {x} against {y}"
            );
        }
    };
    for s in ["hotpotqa", "musique", "pooled"] {
        same(
            &column(&one, &format!("component[{s}].cluster")),
            &column(&q, &format!("component[{s}].question")),
            s,
        );
        assert!(column(&one, &format!("component[{s}].question"))
            .iter()
            .all(|&v| v == 0.0));
        for l in ["trajectory", "read"] {
            let name = format!("component[{s}].{l}");
            same(&column(&one, &name), &column(&q, &name), &name);
        }
    }
    same(
        &column(&one, "se_nested[192x1:3:1]"),
        &column(&q, "se_nested[192:3:1]"),
        "clustered design",
    );
    same(
        &column(&one, "se_nested[192:3:1]"),
        &column(&q, "se_nested[192:3:1]"),
        "unclustered design",
    );
    same(
        &column(&one, "estimate"),
        &column(&q, "estimate"),
        "estimate",
    );
}

/// numpy (`python tests/reference/cluster_anova.py`): per stratum MS_c and the components
/// (σ²_c, σ²_q, σ²_t, σ²_r).
const NUMPY: [(&str, f64, [f64; 4]); 2] = [
    (
        "hotpotqa",
        4.77253992998981,
        [
            0.25087590029504453,
            0.14172079705295137,
            0.07698559255208334,
            0.037671151953125,
        ],
    ),
    (
        "musique",
        5.6062750364934315,
        [
            0.28691114423667713,
            0.19069602370659727,
            0.10301887346354167,
            0.04687488695312501,
        ],
    ),
];

#[test]
fn refitted_components_average_to_their_bootstrap_expectation() {
    // Drawing G clusters with replacement, the within-cluster sums of squares are unbiased
    // (each cluster drawn once on average, df fixed), so E*[σ²_q*], E*[σ²_t*], E*[σ²_r*] are
    // the data's components; the drawn cluster means have E*[Σ_g (ȳ*_g − ȳ*)²] = (G − 1)·v₀
    // with v₀ = SS_c/(G·MTR) their plug-in variance, so E*[SS_c*] = SS_c (G − 1)/G,
    // E*[MS_c*] = MS_c (G − 1)/G and E*[σ²_c*] = σ̂²_c − MS_c/(G·MTR) (the bootstrap's
    // known downward bias, MS_c/(GMTR) = SE² of the stratum mean: 0.01243 and 0.01460
    // here, several Monte Carlo SEs). Tolerance: 4 Monte Carlo SEs, SD(replicates)/√B.
    // numpy (`python tests/reference/cluster_boot_components.py`, B = 20,000 of its own):
    //   hotpotqa: bootstrap expectation [0.238447410894 0.141720797053 0.076985592552 0.037671151953]
    //   hotpotqa: numpy mean of 20000 [0.238823 0.141455 0.077128 0.037658]
    //   musique: bootstrap expectation [0.272311469662 0.190696023707 0.103018873464 0.046874886953]
    //   musique: numpy mean of 20000 [0.272083 0.190196 0.103073 0.046851]
    let panel = load(Some("article"));
    let b = 3000;
    let r = run(&panel, &job(b, &[]), &CpuBackend::new());
    let (g, mtr) = (24.0, 16.0);
    for (name, ms_c, comp) in NUMPY {
        let want = [comp[0] - ms_c / (g * mtr), comp[1], comp[2], comp[3]];
        for (l, want) in ["cluster", "question", "trajectory", "read"]
            .iter()
            .zip(want)
        {
            let v = column(&r, &format!("component[{name}].{l}"));
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let mc = sd / n.sqrt();
            assert!(
                (mean - want).abs() <= 4.0 * mc,
                "{name} {l}: bootstrap mean {mean} against {want} (MC SE {mc})"
            );
        }
        // The point estimates are numpy's components.
        let point = |l: &str| {
            let h = &r.replicates.header;
            let i = h
                .plan
                .statistics
                .iter()
                .position(|s| *s == format!("component[{name}].{l}"))
                .unwrap();
            h.point[i]
        };
        for (l, c) in ["cluster", "question", "trajectory", "read"]
            .iter()
            .zip(comp)
        {
            assert!(
                (point(l) - c).abs() < 1e-9,
                "{name} {l}: {} vs {c}",
                point(l)
            );
        }
    }
    // The bias is real: the cluster component's mean is off the data's by more than 4 MC SEs.
    let v = column(&r, "component[hotpotqa].cluster");
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!((mean - NUMPY[0].2[0]).abs() > 0.005, "{mean}");
    // The report carries σ²_c beside the lower levels, and says its intervals are short
    // (docs/COVERAGE.md, "Cluster bootstrap").
    let c = r.report.components.as_ref().unwrap();
    assert!(c.strata[0].cluster.is_some() && c.pooled.cluster.is_some());
    assert!(r.report.notes.iter().any(|n| n == CLUSTER_REFITS_NOTE));
    let q = run(&load(None), &job(10, &[]), &CpuBackend::new());
    assert!(!q.report.notes.iter().any(|n| n == CLUSTER_REFITS_NOTE));
}

/// The panel of replicate `rep`: every stratum's drawn clusters (by the shared cluster
/// draw's counts), a cluster drawn k times giving k clusters of copies of its questions.
fn drawn_panel(panel: &Panel, seed: u64, rep: u32) -> Panel {
    let draw = panel_cluster_draw(panel).unwrap().unwrap();
    let mut out = panel.clone();
    for (d, s) in panel.strata.iter().enumerate() {
        let mut counts = Vec::new();
        draw.draw_counts(
            Generator::from_env().unwrap(),
            seed,
            rep,
            d as u32,
            &mut counts,
        );
        let members = draw.strata()[d].members();
        let cell = s.t() * s.r();
        let (mut y, mut questions) = (Vec::new(), Vec::new());
        for (c, &k) in counts.iter().enumerate() {
            for copy in 0..k {
                for &q in &members[c] {
                    y.extend_from_slice(&s.y[q * cell..(q + 1) * cell]);
                    questions.push(format!("{}-copy{copy}", s.questions[q]));
                }
            }
        }
        let m = members[0].len();
        out.strata[d] = Stratum {
            clusters: Some(Clusters::even(questions.len(), m)),
            questions,
            y,
            ..s.clone()
        };
    }
    out
}

#[test]
fn each_replicate_refits_the_variance_analysis_of_its_drawn_panel() {
    // Replicates 0..3 against `variance --cluster` of the panel each replicate drew (built
    // here from the cluster draw's counts): the four components, and the forecast at the
    // audit's own design (48x4:2:2 = 24 clusters of 4 per stratum) equal to that panel's
    // measured SE (MS_c/(GMTR) per stratum, where no component is truncated). The engine
    // adds f32 rows, so to 1e-5 relative.
    let panel = load(Some("article"));
    let j = job(3, &["48x4:2:2"]);
    let r = run(&panel, &j, &CpuBackend::new());
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs().max(1e-3),
            "{what}: {a} against {b}"
        );
    };
    for rep in 0..3u32 {
        let drawn = drawn_panel(&panel, j.seed, rep);
        let v = analyse_panel(&drawn).unwrap();
        let at = |name: &str| column(&r, name)[rep as usize];
        for s in &v.strata {
            let c = s.cluster.as_ref().unwrap();
            assert!(!c.truncated && s.fit.truncated.is_empty());
            close(
                at(&format!("component[{}].cluster", s.name)),
                c.component,
                "σ²_c",
            );
            close(
                at(&format!("component[{}].question", s.name)),
                s.fit.components.question,
                "σ²_q",
            );
            close(
                at(&format!("component[{}].trajectory", s.name)),
                s.fit.components.trajectory.unwrap(),
                "σ²_t",
            );
            close(
                at(&format!("component[{}].read", s.name)),
                s.fit.components.read.unwrap(),
                "σ²_r",
            );
        }
        let pooled = v.pooled.as_ref().unwrap();
        close(
            at("component[pooled].cluster"),
            pooled.cluster.as_ref().unwrap().component,
            "pooled σ²_c",
        );
        close(
            at("se_nested[48x4:2:2]"),
            v.se,
            "forecast at the own design",
        );
    }
}

#[test]
fn clustered_refits_are_the_same_on_cpu_and_gpu() {
    let Some(gpu) = common::gpu_or_skip(GpuBackend::new(AdapterPolicy::Any)) else {
        return;
    };
    let panel = load(Some("article"));
    let j = job(400, &["48x4:2:2", "100x2:1:1", "300:2:1"]);
    let cpu = run(&panel, &j, &CpuBackend::new());
    let gpu = run(&panel, &j, &gpu);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&cpu.replicates.values), bits(&gpu.replicates.values));
    assert_eq!(cpu.replicates.header.plan.k(), 6);
}

#[test]
fn bca_leaves_out_one_cluster_in_the_refits_too() {
    // The stratified delete-one-cluster jackknife refits σ²_c without each cluster: its
    // acceleration of the estimate is the one without components (numpy:
    // tests/reference/cluster_bootstrap.py gives -0.002464732058 for its own fixture; here
    // the two runs must agree), and the components' accelerations are finite.
    let panel = load(Some("article"));
    let mut j = job(20, &["48x4:2:2"]);
    j.method = Method::Bca;
    let with = prepare(&panel, &j)
        .unwrap()
        .run(&CpuBackend::new(), &|_| {})
        .unwrap();
    j.spec = BootstrapSpec::default();
    let without = prepare(&panel, &j)
        .unwrap()
        .run(&CpuBackend::new(), &|_| {})
        .unwrap();
    let a = with.replicates.header.acceleration.as_ref().unwrap();
    let b = without.replicates.header.acceleration.as_ref().unwrap();
    assert!((a[0] - b[0]).abs() < 1e-12, "{} vs {}", a[0], b[0]);
    assert!(a.iter().all(|x| x.is_finite()), "{a:?}");
}

#[test]
fn unbalanced_clustered_refits_are_refused_naming_cluster() {
    let panel = load_panel(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cluster/unbalanced.csv"),
        &LoadOptions {
            metric: Some("y".into()),
            cluster: Some("cluster".into()),
            allow_unbalanced: true,
            ..Default::default()
        },
    )
    .unwrap();
    let e = prepare(&panel, &job(10, &[])).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let msg = e.to_string();
    assert!(
        msg.contains("cluster") && msg.contains("unbalanced"),
        "{msg}"
    );
    // Without components the same panel is drawn by clusters as before.
    let mut j = job(10, &[]);
    j.spec = BootstrapSpec::default();
    assert!(prepare(&panel, &j).is_ok());
}

/// The generator's variance of a stratum mean at G clusters of M questions, T, R
/// (coverage/clustered.rs: σ²_c, σ²_q, σ²_t = 0.04, 0.06, 0.02; binary reads of mean 0.4,
/// so σ²_r = 0.24 − 0.12).
fn design_variance(g: f64, m: f64, t: f64, r: f64) -> f64 {
    let (c, q, tr) = (0.04, 0.06, 0.02);
    let rd = 0.4 * 0.6 - c - q - tr;
    c / g + q / (g * m) + tr / (g * m * t) + rd / (g * m * t * r)
}

/// Coverage of the percentile intervals `bootstrap --cluster --components --design` reports
/// (95%, 1,000 replicates drawing whole clusters) on the clustered generator's panels
/// (coverage/clustered.rs: 2 strata × G clusters × 4 binary questions × T = R = 2): σ²_c
/// of each stratum (truth 0.04) and the forecast SE of the combined estimate at the audit's
/// own design (2G)x4:2:2 and at (2G)x4:1:1 (truth sqrt(V/2), V the generator's variance
/// of a stratum mean at the design), for docs/COVERAGE.md ("Cluster bootstrap").
///
/// `cargo test --test it cluster_refit_coverage -- --ignored --nocapture`
#[test]
#[ignore]
fn cluster_refit_coverage() {
    use ragstats_core::coverage::clustered::{simulate, ClusteredDesign};
    use rayon::prelude::*;
    let panels: u64 = std::env::var("PANELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let started = std::time::Instant::now();
    println!("| G per stratum | M | interval | covers | MC SE | n |");
    println!("|---|---|---|---|---|---|");
    for g in [6usize, 12, 24] {
        let d = ClusteredDesign {
            clusters: g,
            per_cluster: 4,
            trajectories: 2,
            reads: 2,
        };
        let gf = g as f64;
        let own = format!("{}x4:2:2", 2 * g);
        let one = format!("{}x4:1:1", 2 * g);
        let truths = [
            (design_variance(gf, 4.0, 2.0, 2.0) / 2.0).sqrt(),
            (design_variance(gf, 4.0, 1.0, 1.0) / 2.0).sqrt(),
        ];
        let hits: Vec<[u32; 3]> = (0..panels)
            .into_par_iter()
            .map(|i| {
                let p = simulate(&d, 4810, i);
                let mut j = job(1000, &[&own, &one]);
                j.seed = 7000 + i;
                let r = run(&p, &j, &CpuBackend::new());
                let c = r.report.components.as_ref().unwrap();
                let inside = |ci: Option<ragstats_core::resample::summary::Interval>, t: f64| {
                    u32::from(ci.is_some_and(|ci| ci[0] <= t && t <= ci[1]))
                };
                let sc: u32 = c
                    .strata
                    .iter()
                    .map(|s| inside(s.cluster.as_ref().map(|x| x.ci), 0.04))
                    .sum();
                let se =
                    |k: usize| inside(c.designs[k].se_nested.as_ref().map(|x| x.ci), truths[k]);
                [sc, se(0), se(1)]
            })
            .collect();
        let n = panels as f64;
        let rows = [
            (
                "σ²_c of a stratum (truth 0.04)".to_string(),
                0usize,
                2.0 * n,
            ),
            (format!("forecast SE at {own} (own design)"), 1, n),
            (format!("forecast SE at {one}"), 2, n),
        ];
        for (what, k, n) in rows {
            let p = hits.iter().map(|h| f64::from(h[k])).sum::<f64>() / n;
            println!(
                "| {g} | 4 | {what} | {p:.3} | {:.3} | {n} |",
                (p * (1.0 - p) / n).sqrt()
            );
        }
    }
    println!("{:.0} s", started.elapsed().as_secs_f64());
}
