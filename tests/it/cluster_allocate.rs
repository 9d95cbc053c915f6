//! `stats allocate --cluster` (issue #48, item 3): the paired exact-size walk with the master
//! panel's clusters as its units, on the CPU and on the GPU (`walk.wgsl`, 8 columns), and the
//! coverage of its pair intervals on simulated clustered panels.
//!
//! The numbers against independent references (the cluster SE against numpy's
//! tests/reference/cluster_anova.py, the bootstrap SE of a mean within Monte Carlo error of
//! it, singleton clusters = the question bootstrap, copies inside clusters) are unit tests of
//! `ragstats_core::allocation::allocate` (they need the walk's replicate sums).

use std::path::Path;

use ragstats_core::allocation::allocate::{
    compare, question_order, AllocateReport, AllocationCosts, AllocationSpec,
};
use ragstats_core::allocation::walk::CpuWalk;
use ragstats_core::costs::accounting::CellCosts;
use ragstats_core::coverage::clustered::{simulate, ClusteredDesign};
use ragstats_core::panel::{Panel, Stratum};
use ragstats_core::resample::clusters::ClusterDraw;
use ragstats_core::resample::Resampling;

use crate::common::{self, stats, write};

/// The demo panel with a `cluster` column: questions `<dataset>-NNNN` in clusters of four
/// consecutive numbers (56 clusters per stratum of 223 questions, the last of 3).
fn demo_with_clusters() -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo/panel.csv"))
            .unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push_str(&format!("{line},cluster\n"));
            continue;
        }
        let q = line.split(',').nth(1).unwrap();
        let (d, n) = q.rsplit_once('-').unwrap();
        let n: usize = n.parse().unwrap();
        out.push_str(&format!("{line},{d}-c{}\n", (n - 1) / 4));
    }
    out
}

fn allocate_args<'a>(panel: &'a str, backend: &'a str) -> Vec<&'a str> {
    vec![
        "allocate",
        panel,
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--prices",
        "data/demo/prices.toml",
        "--allocation",
        "A=446:2:1",
        "--allocation",
        "B=174:2:5",
        "--allocation",
        "C=298:3:1",
        "--cluster",
        "cluster",
        "--replicates",
        "2000",
        "--format",
        "json",
        "--backend",
        backend,
    ]
}

/// The demo with clusters of four: the clustered SEs are larger than the question-level
/// ones (A: the whole master), each allocation names its clusters, the output says that
/// whole clusters were drawn, and the GPU's document equals the CPU's (the walk's sums bit
/// for bit).
#[test]
fn clustered_allocations_are_the_same_on_cpu_and_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let panel = write(&dir, "clustered.csv", &demo_with_clusters());
    let panel = panel.to_str().unwrap();
    let run = |backend: &str| {
        stats()
            .args(allocate_args(panel, backend))
            .output()
            .unwrap()
    };
    let out = run("cpu");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cpu: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = &cpu["allocations"][0];
    assert_eq!(
        a["clusters"],
        serde_json::json!([["hotpotqa", 56], ["musique", 56]])
    );
    // B = 87 questions a stratum: clusters 0..21 (the 22nd holds questions 85..88).
    assert_eq!(cpu["allocations"][1]["clusters"][0][1], 22);
    let notes = cpu["notes"].to_string();
    assert!(notes.contains("whole clusters"), "{notes}");
    assert!(!notes.contains("undercover"), "{notes}");
    // The question-level run of the same allocations: the cluster SE of A is larger.
    let mut flat = allocate_args("data/demo/panel.csv", "cpu");
    flat.retain(|a| *a != "--cluster" && *a != "cluster");
    let q = common::json(&flat);
    let (se_c, se_q) = (
        a["se"].as_f64().unwrap(),
        q["allocations"][0]["se"].as_f64().unwrap(),
    );
    assert!(se_c > se_q, "cluster SE {se_c} vs question SE {se_q}");
    assert_eq!(a["estimate"], q["allocations"][0]["estimate"]);
    assert_eq!(a["model_tokens"], q["allocations"][0]["model_tokens"]);
    // The table says what the walk redrew.
    let mut text = allocate_args(panel, "cpu");
    text.truncate(text.len() - 4);
    let last = text.len() - 1;
    text[last] = "200";
    let out = stats().args(&text).output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("each sub-panel's clusters redrawn at its size"),
        "{t}"
    );
    let out = run("gpu");
    if common::gpu_ran(&out) {
        let gpu: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(gpu["run"]["backend"], "gpu");
        assert_eq!(common::body(cpu), common::body(gpu));
    }
}

/// Cell costs of every cell of `strata`: a trajectory 100 tokens, a read 50 (no dollars, no
/// searches).
fn unit_cells(strata: &[Stratum]) -> [CellCosts; 3] {
    let mut out = [
        CellCosts::default(),
        CellCosts::default(),
        CellCosts::default(),
    ];
    for s in strata {
        for q in 0..s.q() {
            for t in 0..s.t() {
                for r in 0..s.r() {
                    let (tl, rl) = s.cell_label(q, t, r).unwrap();
                    let key = (s.name.clone(), s.questions[q].clone(), tl.to_string());
                    for (c, (tc, rc)) in out.iter_mut().zip([(100.0, 50.0), (0.0, 0.0), (0.0, 0.0)])
                    {
                        c.trajectory.insert(key.clone(), tc);
                        c.read
                            .insert((key.0.clone(), key.1.clone(), key.2.clone(), rl.into()), rc);
                    }
                }
            }
        }
    }
    out
}

/// Allocate on a simulated panel, with its clusters or without.
fn allocate_simulated(
    panel: &Panel,
    specs: &[String],
    clustered: bool,
    seed: u64,
    replicates: u32,
) -> Option<AllocateReport> {
    let specs: Vec<AllocationSpec> = specs.iter().map(|s| s.parse().unwrap()).collect();
    let [tok, usd, searches] = unit_cells(&panel.strata);
    let draw = clustered.then(|| {
        ClusterDraw::new(
            &panel
                .strata
                .iter()
                .map(|s| s.clusters.as_ref().unwrap().of_question.clone())
                .collect::<Vec<_>>(),
        )
        .unwrap()
    });
    compare(
        &panel.strata,
        &[],
        &specs,
        &question_order(&panel.strata, None),
        draw.as_ref(),
        &AllocationCosts {
            cells: [&tok, &usd, &searches],
            sweep: &[0.0],
            ledger: Path::new("simulated"),
            question: [0.0, 0.0],
        },
        &Resampling {
            seed,
            replicates,
            confidence: 0.95,
        },
        &CpuWalk,
        &|_| {},
    )
    .ok()
}

/// The generator's components (coverage/clustered.rs): σ²_c, σ²_q, σ²_t and σ²_r =
/// 0.4 · 0.6 − their sum; the variance of a stratum mean of G clusters of M questions at
/// T, R.
fn design_variance(g: f64, m: f64, t: f64, r: f64) -> f64 {
    let (c, q, tr) = (0.04, 0.06, 0.02);
    let rd = 0.4 * 0.6 - c - q - tr;
    c / g + q / (g * m) + tr / (g * m * t) + rd / (g * m * t * r)
}

/// A small check that runs in CI: on one simulated panel of 6 clusters a stratum the pair
/// intervals are finite and bracket their values, clustered or not, the clustered interval
/// of the reduction is wider than the one that ignores the clusters, and the output says
/// that with 6 clusters a stratum they undercover.
#[test]
fn a_simulated_clustered_panel_gives_finite_pair_intervals() {
    let d = ClusteredDesign {
        clusters: 6,
        per_cluster: 4,
        trajectories: 2,
        reads: 2,
    };
    let p = simulate(&d, 48, 0);
    let specs = vec!["A=48:2:2".to_string(), "B=48:1:1".to_string()];
    let c = allocate_simulated(&p, &specs, true, 1, 400).unwrap();
    let q = allocate_simulated(&p, &specs, false, 1, 400).unwrap();
    for r in [&c, &q] {
        let x = r.pairs[0].se_reduction;
        assert!(x.ci.0[0] <= x.value && x.value <= x.ci.0[1], "{x:?}");
    }
    let w = |r: &AllocateReport| r.pairs[0].se_reduction.ci.0[1] - r.pairs[0].se_reduction.ci.0[0];
    assert!(w(&c) > w(&q), "{} vs {}", w(&c), w(&q));
    // 6 clusters a stratum: below the 12 at which the pair intervals held their level.
    assert!(
        c.notes.iter().any(|n| n.contains("undercover below 12")),
        "{:?}",
        c.notes
    );
}

/// Coverage of allocate's clustered pair interval (the reduction 1 − SE_A/SE_B, central
/// percentile, 95%) on simulated clustered panels (coverage/clustered.rs's generator: 2
/// strata × G clusters × 4 binary questions × T = R = 2), for docs/COVERAGE.md ("Cluster
/// bootstrap"). Two pairs: A = G×4:2:2 against B = the same questions at 1:1 (every
/// cluster in both), and A against C = the first half of the questions at 2:2 (G/2
/// clusters). The truth is 1 − sqrt(V_A / V_B) with V the generator's variance of a stratum
/// mean ([`design_variance`]); beside it the same panels read without their clusters.
///
/// `cargo test --test it cluster_allocate_coverage -- --ignored --nocapture`
#[test]
#[ignore]
fn cluster_allocate_coverage() {
    use rayon::prelude::*;
    let (panels, b) = (1000u64, 1000u32);
    let started = std::time::Instant::now();
    println!("| G per stratum | pair | bootstrap | covers | MC SE | n |");
    println!("|---|---|---|---|---|---|");
    for g in [6usize, 12, 24] {
        let q = 2 * g;
        let specs = vec![
            format!("A={}:2:2", 2 * q * 2),
            format!("B={}:1:1", 2 * q * 2),
            format!("C={}:2:2", q * 2),
        ];
        let gf = g as f64;
        let truth_ab =
            1.0 - (design_variance(gf, 4.0, 2.0, 2.0) / design_variance(gf, 4.0, 1.0, 1.0)).sqrt();
        let truth_ac = 1.0
            - (design_variance(gf, 4.0, 2.0, 2.0) / design_variance(gf / 2.0, 4.0, 2.0, 2.0))
                .sqrt();
        let d = ClusteredDesign {
            clusters: g,
            per_cluster: 4,
            trajectories: 2,
            reads: 2,
        };
        // Per panel: [A–B, A–C] covered, clustered then ignoring the clusters.
        let hits: Vec<[u32; 4]> = (0..panels)
            .into_par_iter()
            .map(|i| {
                let p = simulate(&d, 4800, i);
                let mut out = [0u32; 4];
                for (k, clustered) in [true, false].into_iter().enumerate() {
                    if let Some(r) = allocate_simulated(&p, &specs, clustered, 1000 + i, b) {
                        let covers = |x: &ragstats_core::allocation::allocate::Compared, t: f64| {
                            u32::from(x.value.is_finite() && x.ci.0[0] <= t && t <= x.ci.0[1])
                        };
                        out[2 * k] = covers(&r.pairs[0].se_reduction, truth_ab);
                        out[2 * k + 1] = covers(&r.pairs[1].se_reduction, truth_ac);
                    }
                }
                out
            })
            .collect();
        for (k, name) in ["cluster", "question (ignores clusters)"]
            .iter()
            .enumerate()
        {
            for (j, pair) in [
                format!("{g}x4:2:2 vs {g}x4:1:1 (1 − SE ratio, truth {truth_ab:.4})"),
                format!("{g}x4:2:2 vs {}x4:2:2 (truth {truth_ac:.4})", g / 2),
            ]
            .iter()
            .enumerate()
            {
                let c: u32 = hits.iter().map(|h| h[2 * k + j]).sum();
                let p = f64::from(c) / panels as f64;
                let se = (p * (1.0 - p) / panels as f64).sqrt();
                println!("| {g} | {pair} | {name} | {p:.3} | {se:.3} | {panels} |");
            }
        }
    }
    println!(
        "({} panels a size, B = {b}, {:.0} s)",
        panels,
        started.elapsed().as_secs_f64()
    );
}
