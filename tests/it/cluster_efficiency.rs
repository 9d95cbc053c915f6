//! `stats efficiency --cluster` (issue #48, item 3): the one-read analysis of a balanced
//! panel whose bootstrap draws whole clusters (the shared cluster draw on the resample
//! engine, clusters as rows), refitting the components from the drawn questions; the
//! direct check's SEs are cluster-level.
//!
//! References: tests/reference/cluster_anova.py (numpy) on tests/fixtures/cluster/balanced.csv
//! (2 strata × 24 clusters × 4 questions × T = R = 2) printed the SE of each stratum mean as
//! sd(cluster means, ddof 1)/√G, 0.11148313505196708 (hotpotqa) and 0.1208291131069067
//! (musique), and the question-level SE, sd(question means)/√Q, 0.0671274351483257 and
//! 0.07442662595427903. With R = 2 the direct check has one pair, whose two-read mean is
//! the panel's mean, so its two-read SE is the combined SE √(Σ_d SE²_d)/2.

use std::path::Path;

use ragstats_core::allocation::one_read::{analyse, analyse_clustered, OneReadReport, ReadCosts};
use ragstats_core::costs::panel_costs::QuestionCost;
use ragstats_core::panel::{load_panel, Clusters, LoadOptions, Panel, Stratum};
use ragstats_core::resample::clusters::ClusterDraw;
use ragstats_core::resample::{CpuBackend, Resampling};

use crate::common::{self, stats, write};

fn fixture() -> Panel {
    load_panel(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cluster/balanced.csv"),
        &LoadOptions {
            metric: Some("f1".into()),
            cluster: Some("article".into()),
            ..Default::default()
        },
    )
    .unwrap()
}

fn draw_of(strata: &[Stratum]) -> ClusterDraw {
    ClusterDraw::new(
        &strata
            .iter()
            .map(|s| s.clusters.as_ref().unwrap().of_question.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

/// Costs per question (T = R = 2): trajectories 90 + i mod 7, reads 30 (first reads 16),
/// one read as billed 8 + i mod 5, two reads 13 + i mod 5.
fn costs(strata: &[Stratum]) -> (Vec<Vec<QuestionCost>>, Vec<Vec<ReadCosts>>) {
    let q = |s: &Stratum| 0..s.q();
    (
        strata
            .iter()
            .map(|s| {
                q(s).map(|i| QuestionCost {
                    trajectories: 90.0 + (i % 7) as f64,
                    reads: 30.0,
                    first_reads: 16.0,
                })
                .collect()
            })
            .collect(),
        strata
            .iter()
            .map(|s| {
                q(s).map(|i| ReadCosts {
                    one: 8.0 + (i % 5) as f64,
                    two: 13.0 + (i % 5) as f64,
                })
                .collect()
            })
            .collect(),
    )
}

fn resampling(replicates: u32) -> Resampling {
    Resampling {
        seed: 48,
        replicates,
        confidence: 0.95,
    }
}

fn run(strata: &[Stratum], clusters: Option<&ClusterDraw>, replicates: u32) -> OneReadReport {
    let (c, r) = costs(strata);
    match clusters {
        None => analyse(
            strata,
            &[],
            &c,
            &r,
            &resampling(replicates),
            10,
            0.0,
            &CpuBackend::new(),
            &|_| {},
        ),
        Some(d) => analyse_clustered(
            strata,
            &[],
            &c,
            &r,
            d,
            &resampling(replicates),
            10,
            0.0,
            &CpuBackend::new(),
            &|_| {},
        ),
    }
    .unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// Every interval of the report, in a fixed order.
fn intervals(r: &OneReadReport) -> Vec<[f64; 2]> {
    let mut v = Vec::new();
    for s in &r.strata {
        for ci in [
            s.loss_ci,
            s.r_star_ci,
            s.fixed_t_loss_ci,
            s.fixed_t_r_star_ci,
        ] {
            v.push(ci.unwrap().0);
        }
    }
    v.push(r.combined.loss_ci.unwrap().0);
    let d = r.direct.as_ref().unwrap();
    v.push(d.ci.unwrap().0);
    v
}

/// Every question its own cluster: the clustered analysis is the question analysis (the
/// same engine draws; sums in another order, so to 1e-9).
#[test]
fn singleton_clusters_are_the_question_analysis() {
    let p = fixture();
    let q = run(&p.strata, None, 400);
    let units: Vec<usize> = p.strata.iter().map(Stratum::q).collect();
    let c = run(&p.strata, Some(&ClusterDraw::singletons(&units)), 400);
    assert_eq!(c.clusters, Some(vec![96, 96]));
    for (a, b) in intervals(&q).iter().zip(intervals(&c)) {
        for k in 0..2 {
            assert!(rel(a[k], b[k]) < 1e-9, "{a:?} vs {b:?}");
        }
    }
    let (dq, dc) = (q.direct.as_ref().unwrap(), c.direct.as_ref().unwrap());
    assert!(rel(dq.se_one_read, dc.se_one_read) < 1e-12);
    assert!(rel(dq.ratio, dc.ratio) < 1e-12);
}

/// The point estimates are the question analysis's; the direct check's SE is numpy's
/// cluster SE (the question analysis's is numpy's question-level SE); the replicates draw
/// clusters, so the loss intervals differ from the question bootstrap's.
#[test]
fn the_direct_checks_se_is_numpys_cluster_se() {
    let p = fixture();
    let q = run(&p.strata, None, 300);
    let c = run(&p.strata, Some(&draw_of(&p.strata)), 300);
    assert_eq!(c.clusters, Some(vec![24, 24]));
    for (a, b) in q.strata.iter().zip(&c.strata) {
        let (ea, eb) = (a.efficiency.unwrap(), b.efficiency.unwrap());
        assert!(rel(ea.loss_percent, eb.loss_percent) < 1e-12);
        assert!(rel(a.components.question, b.components.question) < 1e-12);
        assert!(
            rel(
                a.fixed_t.unwrap().loss_percent,
                b.fixed_t.unwrap().loss_percent
            ) < 1e-12
        );
    }
    let combined = |a: f64, b: f64| (a * a + b * b).sqrt() / 2.0;
    let cl = combined(0.11148313505196708, 0.1208291131069067);
    let qu = combined(0.0671274351483257, 0.07442662595427903);
    let (dq, dc) = (q.direct.as_ref().unwrap(), c.direct.as_ref().unwrap());
    assert!(
        rel(dc.se_two_reads, cl) < 1e-9,
        "{} vs {cl}",
        dc.se_two_reads
    );
    assert!(
        rel(dq.se_two_reads, qu) < 1e-9,
        "{} vs {qu}",
        dq.se_two_reads
    );
    assert_ne!(intervals(&q), intervals(&c));
}

/// Every question copied inside its cluster: the direct check's cluster-level SEs and
/// ratio are the original's; analysed question by question the copies shrink them.
#[test]
fn copies_inside_clusters_do_not_shrink_the_direct_checks_se() {
    let p = fixture();
    let copied: Vec<Stratum> = p
        .strata
        .iter()
        .map(|s| {
            let per = s.t() * s.r();
            let of = s.clusters.as_ref().unwrap();
            Stratum {
                questions: s
                    .questions
                    .iter()
                    .flat_map(|q| [q.clone(), format!("{q}-copy")])
                    .collect(),
                y: s.y
                    .chunks_exact(per)
                    .flat_map(|y| y.iter().chain(y).copied().collect::<Vec<_>>())
                    .collect(),
                labels: None,
                clusters: Some(Clusters::from_names(
                    &of.of_question
                        .iter()
                        .flat_map(|&g| {
                            let n = of.names[g as usize].clone();
                            [n.clone(), n]
                        })
                        .collect::<Vec<_>>(),
                )),
                ..s.clone()
            }
        })
        .collect();
    let a = run(&p.strata, Some(&draw_of(&p.strata)), 50)
        .direct
        .unwrap();
    let b = run(&copied, Some(&draw_of(&copied)), 50).direct.unwrap();
    assert!(rel(a.se_one_read, b.se_one_read) < 1e-12);
    assert!(rel(a.se_two_reads, b.se_two_reads) < 1e-12);
    let q = run(&copied, None, 50).direct.unwrap();
    assert!(
        a.se_two_reads / q.se_two_reads > 2.0,
        "{} vs {}",
        a.se_two_reads,
        q.se_two_reads
    );
}

/// The demo panel with a `cluster` column (clusters of four consecutive question numbers).
fn demo_with_clusters(drop_line: Option<usize>) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo/panel.csv"))
            .unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if Some(i) == drop_line {
            continue;
        }
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

fn efficiency_args<'a>(panel: &'a str, backend: &'a str) -> Vec<&'a str> {
    vec![
        "efficiency",
        panel,
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--cluster",
        "cluster",
        "--replicates",
        "500",
        "--format",
        "json",
        "--backend",
        backend,
    ]
}

/// The clustered demo on the CPU and the GPU: the same document (the engine draws the
/// same clusters bit for bit); it names its clusters.
#[test]
fn clustered_efficiency_is_the_same_on_cpu_and_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let panel = write(&dir, "clustered.csv", &demo_with_clusters(None));
    let panel = panel.to_str().unwrap();
    let cpu = common::json(&efficiency_args(panel, "cpu"));
    assert_eq!(cpu["clusters"], serde_json::json!([56, 56]));
    // Its direct check's interval was measured short: the output says so.
    assert!(
        cpu["warnings"].to_string().contains("covered 0.907-0.920"),
        "{}",
        cpu["warnings"]
    );
    let out = stats()
        .args(efficiency_args(panel, "gpu"))
        .output()
        .unwrap();
    if common::gpu_ran(&out) {
        let gpu: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(gpu["run"]["backend"], "gpu");
        assert_eq!(common::body(cpu), common::body(gpu));
    }
    let mut text = efficiency_args(panel, "cpu");
    text.truncate(text.len() - 4);
    let out = stats().args(&text).output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("drew whole clusters"), "{t}");
}

/// The demo panel less line `drop_line` (an unbalanced panel: one question loses a read),
/// with each question's cluster `cluster(dataset, n)`.
fn unbalanced_demo(drop_line: usize, cluster: impl Fn(&str, usize) -> String) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/demo/panel.csv"))
            .unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == drop_line {
            continue;
        }
        if i == 0 {
            out.push_str(&format!("{line},cluster\n"));
            continue;
        }
        let q = line.split(',').nth(1).unwrap();
        let (d, n) = q.rsplit_once('-').unwrap();
        out.push_str(&format!("{line},{}\n", cluster(d, n.parse().unwrap())));
    }
    out
}

fn unbalanced_args<'a>(panel: &'a str, backend: &'a str, cluster: bool) -> Vec<&'a str> {
    let mut a = vec![
        "efficiency",
        panel,
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--replicates",
        "60",
        "--format",
        "json",
        "--backend",
        backend,
    ];
    if cluster {
        a.extend(["--cluster", "cluster"]);
    }
    a
}

/// Every number of two JSON values, in document order, equal to `tol` relative.
fn numbers_close(a: &serde_json::Value, b: &serde_json::Value, tol: f64, at: &str) {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= tol * y.abs().max(1.0),
                "{at}: {x} against {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                numbers_close(x, y, tol, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in y {
                numbers_close(&x[k], v, tol, &format!("{at}.{k}"));
            }
        }
        (x, y) => assert_eq!(x, y, "{at}"),
    }
}

/// An unbalanced clustered panel: the refits take each question its cluster's draw count
/// (REML for the unbalanced stratum, a question drawn twice counting as two), the direct
/// check's SEs are cluster-robust. With every question its own cluster that is the question
/// bootstrap draw for draw: every number of the document equals the unclustered one (to
/// 1e-9: the direct check's SE² is the cluster-robust formula, the same sum in another
/// order). With clusters of 4 it runs, names its clusters, and is the same on the GPU.
#[test]
fn an_unbalanced_clustered_panel_draws_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let single = write(
        &dir,
        "single.csv",
        &unbalanced_demo(7, |d, n| format!("{d}-{n}")),
    );
    let single = single.to_str().unwrap();
    let plain = common::json(&unbalanced_args(single, "cpu", false));
    let one = common::json(&unbalanced_args(single, "cpu", true));
    assert_eq!(one["clusters"], serde_json::json!([223, 223]));
    assert!(plain.get("clusters").is_none());
    let (plain, one) = (common::body(plain), common::body(one));
    for key in ["strata", "pooled", "combined", "direct", "unbalanced"] {
        numbers_close(&one[key], &plain[key], 1e-9, key);
    }
    let four = write(
        &dir,
        "four.csv",
        &unbalanced_demo(7, |d, n| format!("{d}-c{}", (n - 1) / 4)),
    );
    let four = four.to_str().unwrap();
    let cpu = common::json(&unbalanced_args(four, "cpu", true));
    assert_eq!(cpu["clusters"], serde_json::json!([56, 56]));
    assert_eq!(common::body(cpu.clone())["unbalanced"], true);
    // The cluster-robust direct check is wider than the question-level one of the same panel.
    let q = common::body(common::json(&unbalanced_args(four, "cpu", false)));
    let width = |v: &serde_json::Value| {
        let ci = &v["direct"]["ci"];
        ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()
    };
    let c = common::body(cpu.clone());
    assert!(width(&c) > width(&q), "{} vs {}", width(&c), width(&q));
    let out = stats()
        .args(unbalanced_args(four, "gpu", true))
        .output()
        .unwrap();
    if common::gpu_ran(&out) {
        let gpu: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(common::body(cpu), common::body(gpu));
    }
}

/// The generator's variance of a stratum mean of G clusters of M questions at T, R
/// (coverage/clustered.rs: σ²_c, σ²_q, σ²_t = 0.04, 0.06, 0.02, σ²_r = 0.4 · 0.6 − 0.12).
fn design_variance(g: f64, m: f64, t: f64, r: f64) -> f64 {
    let (c, q, tr) = (0.04, 0.06, 0.02);
    let rd = 0.4 * 0.6 - c - q - tr;
    c / g + q / (g * m) + tr / (g * m * t) + rd / (g * m * t * r)
}

/// Coverage of `efficiency --cluster`'s direct-check interval (the one-read against
/// two-read variance × cost ratio, central percentile, 95%) on simulated clustered panels
/// (coverage/clustered.rs's generator: 2 strata × G clusters × 4 binary questions ×
/// T = R = 2), for docs/COVERAGE.md ("Cluster bootstrap"). Costs are constant (a trajectory
/// 3, each read 1), so C₁/C₂ = 4/5 and the truth is V(T, R = 1)/V(T, R = 2) · 4/5 with V
/// the generator's variance of a stratum mean; beside it the same panels read without
/// their clusters.
///
/// `cargo test --test it cluster_efficiency_coverage -- --ignored --nocapture`
#[test]
#[ignore]
fn cluster_efficiency_coverage() {
    direct_check_coverage(&[(6, 4), (12, 4), (24, 4)], 1000);
}

/// The same interval where clusters are questions (M = 1, 96 a stratum): the direct
/// check's percentile interval without any clustering, for comparison.
///
/// `cargo test --test it direct_check_coverage_without_clustering -- --ignored --nocapture`
#[test]
#[ignore]
fn direct_check_coverage_without_clustering() {
    direct_check_coverage(&[(96, 1)], 500);
}

/// Coverage of the direct check's interval at designs (G, M), `panels` panels each.
fn direct_check_coverage(designs: &[(usize, usize)], panels: u64) {
    use ragstats_core::coverage::clustered::{simulate, ClusteredDesign};
    use rayon::prelude::*;
    let b = 1000u32;
    let started = std::time::Instant::now();
    println!("| G per stratum | M | interval | bootstrap | covers | MC SE | n |");
    println!("|---|---|---|---|---|---|---|");
    for &(g, m) in designs {
        let (gf, mf) = (g as f64, m as f64);
        let truth = design_variance(gf, mf, 2.0, 1.0) / design_variance(gf, mf, 2.0, 2.0) * 0.8;
        let d = ClusteredDesign {
            clusters: g,
            per_cluster: m,
            trajectories: 2,
            reads: 2,
        };
        let hits: Vec<[u32; 2]> = (0..panels)
            .into_par_iter()
            .map(|i| {
                let p = simulate(&d, 4900, i);
                let c: Vec<Vec<QuestionCost>> = p
                    .strata
                    .iter()
                    .map(|s| {
                        vec![
                            QuestionCost {
                                trajectories: 6.0,
                                reads: 4.0,
                                first_reads: 2.0,
                            };
                            s.q()
                        ]
                    })
                    .collect();
                let r: Vec<Vec<ReadCosts>> = p
                    .strata
                    .iter()
                    .map(|s| vec![ReadCosts { one: 2.0, two: 4.0 }; s.q()])
                    .collect();
                let rs = Resampling {
                    seed: 2000 + i,
                    replicates: b,
                    confidence: 0.95,
                };
                let backend = CpuBackend::new();
                let draw = draw_of(&p.strata);
                let covers = |rep: ragstats_core::Result<OneReadReport>| {
                    let ci = rep.ok().and_then(|r| r.direct).and_then(|d| d.ci);
                    u32::from(ci.is_some_and(|ci| ci.0[0] <= truth && truth <= ci.0[1]))
                };
                [
                    covers(analyse_clustered(
                        &p.strata,
                        &[],
                        &c,
                        &r,
                        &draw,
                        &rs,
                        10,
                        0.0,
                        &backend,
                        &|_| {},
                    )),
                    covers(analyse(
                        &p.strata,
                        &[],
                        &c,
                        &r,
                        &rs,
                        10,
                        0.0,
                        &backend,
                        &|_| {},
                    )),
                ]
            })
            .collect();
        for (k, name) in ["cluster", "question (ignores clusters)"]
            .iter()
            .enumerate()
        {
            let c: u32 = hits.iter().map(|h| h[k]).sum();
            let p = f64::from(c) / panels as f64;
            let se = (p * (1.0 - p) / panels as f64).sqrt();
            println!(
                "| {g} | {m} | direct check ratio (truth {truth:.4}) | {name} | {p:.3} | {se:.3} | {panels} |"
            );
        }
    }
    println!(
        "({panels} panels a size, B = {b}, {:.0} s)",
        started.elapsed().as_secs_f64()
    );
}
