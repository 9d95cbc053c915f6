//! Human labels of a judged panel (#49): `variance --labels` against ppi_py 0.2.3, the
//! strata and nested case against a hand computation, the labelling sheet, agreement, and
//! the labels file's errors.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;

const PANEL: &str = "tests/fixtures/judges/panel.csv";
const LABELS: &str = "tests/fixtures/judges/labels.csv";

/// `stats variance` of the fixture with labels and `extra` flags, as JSON.
fn judged(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "variance",
        PANEL,
        "--metric",
        "judge",
        "--labels",
        LABELS,
        "--label-metric",
        "human",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    json(&args)
}

fn close(doc: &serde_json::Value, est: f64, lo: f64, hi: f64) {
    let p = &doc["ppi"];
    let e = p["estimate"].as_f64().unwrap();
    let (l, h) = (p["ci"][0].as_f64().unwrap(), p["ci"][1].as_f64().unwrap());
    assert!((e - est).abs() < 1e-9, "estimate {e} vs {est}");
    assert!(
        (l - lo).abs() < 1e-6 && (h - hi).abs() < 1e-6,
        "[{l}, {h}] vs [{lo}, {hi}]"
    );
}

/// ppi_py's numbers: `python3 tests/reference/ppi_reference.py` (ppi-python 0.2.3, numpy
/// 2.4.6): ppi_mean_pointestimate and ppi_mean_ci(alpha=0.05) with the 40 labelled
/// questions as (Y, Yhat) and the judge on the other 160 as Yhat_unlabeled.
#[test]
fn one_level_estimates_equal_ppi_py() {
    // Arm b's mean: power-tuned, plain PPI (λ = 1), labels only (λ = 0).
    close(
        &judged(&["--arm", "b"]),
        0.5201461118352966,
        0.38831220070185274,
        0.6519800229687405,
    );
    close(
        &judged(&["--arm", "b", "--ppi-lambda", "1"]),
        0.5231693749999999,
        0.38958219150472595,
        0.6567565584952739,
    );
    close(
        &judged(&["--arm", "b", "--ppi-lambda", "0"]),
        0.475,
        0.320245049076726,
        0.6297549509232739,
    );
    // The paired difference b − a: the labelled questions of both arms.
    close(
        &judged(&["--contrast", "b-a"]),
        0.0372367329488554,
        -0.12041811929160229,
        0.1948915851893131,
    );
    close(
        &judged(&["--contrast", "b-a", "--ppi-lambda", "1"]),
        0.076628125,
        -0.10425186136798813,
        0.2575081113679881,
    );
    close(
        &judged(&["--contrast", "b-a", "--ppi-lambda", "0"]),
        0.0,
        -0.16973786011142572,
        0.16973786011142572,
    );
    let doc = judged(&["--arm", "b"]);
    assert_eq!(doc["ppi"]["strata"][0]["labelled"], 40);
    assert_eq!(doc["ppi"]["strata"][0]["unlabelled"], 160);
    assert_eq!(doc["ppi"]["level"], "question");
}

/// Every question of the demo's two strata (T = 3, R = 5) labelled, the human score the
/// judge's + 0.1 for arm adaptive and the judge's for arm open: there are no unlabelled
/// questions, so PPI is the labels' nested mean per stratum, weighted equally: the judge's
/// contrast estimate + 0.1, with each stratum's SE the panel's times √((Q − 1)/Q) (ppi_py's
/// variance has denominator n, the panel's SE n − 1; Q = 223 in both strata).
#[test]
fn strata_and_nested_cells_are_corrected_within_strata_then_weighted() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("data/demo/panel.csv").unwrap();
    let mut labels = String::from("dataset,question,trajectory,read,arm,human\n");
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let f1: f64 = f[5].parse().unwrap();
        let human = if f[4] == "adaptive" { f1 + 0.1 } else { f1 };
        labels.push_str(&format!(
            "{},{},{},{},{},{human}\n",
            f[0], f[1], f[2], f[3], f[4]
        ));
    }
    let lp = write(&dir, "labels.csv", &labels);
    let plain = json(&[
        "variance",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    let doc = json(&[
        "variance",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--labels",
        lp.to_str().unwrap(),
        "--label-metric",
        "human",
        "--format",
        "json",
    ]);
    let ppi = &doc["ppi"];
    let judge = plain["estimate"].as_f64().unwrap();
    assert!((ppi["estimate"].as_f64().unwrap() - (judge + 0.1)).abs() < 1e-12);
    assert!((ppi["judge_estimate"].as_f64().unwrap() - judge).abs() < 1e-12);
    let se = plain["se"].as_f64().unwrap() * (222.0f64 / 223.0).sqrt();
    assert!((ppi["se"].as_f64().unwrap() - se).abs() < 1e-12);
    for s in ppi["strata"].as_array().unwrap() {
        assert_eq!(s["labelled"], 223);
        assert_eq!(s["unlabelled"], 0);
        assert_eq!(s["lambda"], 0.0);
    }
    // The judge's own components follow, unchanged.
    assert_eq!(doc["judge"]["estimate"], plain["estimate"]);
}

#[test]
fn the_sheet_is_random_deterministic_for_a_seed_and_refused_beyond_the_panel() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, name: &str| {
        let out = dir.path().join(name);
        stats()
            .args([
                "labels",
                "sample",
                "data/demo/panel.csv",
                "--contrast",
                "adaptive-open",
                "--n",
                "20",
                "--seed",
                seed,
                "--out",
            ])
            .arg(&out)
            .assert()
            .success()
            .stderr(predicate::str::contains("20 questions at random"));
        std::fs::read_to_string(out).unwrap()
    };
    let (a, b, c) = (run("3", "a.csv"), run("3", "b.csv"), run("4", "c.csv"));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let lines: Vec<&str> = a.lines().collect();
    assert_eq!(lines[0], "dataset,question,trajectory,read,arm,f1");
    // 10 questions per stratum (proportional: 223 and 223), 3 × 5 cells, 2 arms each.
    assert_eq!(lines.len() - 1, 20 * 15 * 2);
    assert!(lines[1..].iter().all(|l| l.ends_with(',')));
    let questions: std::collections::BTreeSet<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(questions.len(), 20);
    assert_eq!(
        questions
            .iter()
            .filter(|q| q.starts_with("hotpotqa"))
            .count(),
        10
    );
    stats()
        .args([
            "labels",
            "sample",
            "data/demo/panel.csv",
            "--contrast",
            "adaptive-open",
        ])
        .args(["--n", "447", "--seed", "1", "--out"])
        .arg(dir.path().join("x.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--n: 447 questions to label, but the panel has 446",
        ));
    stats()
        .args([
            "labels",
            "sample",
            "data/demo/panel.csv",
            "--contrast",
            "adaptive-open",
        ])
        .args(["--n", "224", "--per-stratum", "--seed", "1", "--out"])
        .arg(dir.path().join("x.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has 223"));
}

#[test]
fn a_bad_label_is_refused_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "question,arm,human\nq003,b,1\nq999,b,0\n",
            "l0.csv:3:",
            "question 'q999' is not in",
        ),
        (
            "question,arm,human\nq003,b,1\nq003,b,0\n",
            "l1.csv:3:",
            "a second label",
        ),
        (
            "question,arm,human\nq003,b,1\nq004,b,inf\n",
            "l2.csv:3:",
            "not finite",
        ),
        (
            "question,arm,human\nq003,b,\n",
            "l3.csv:2:",
            "no human score",
        ),
        (
            "question,arm,human\nq003,b,1\nq004,b,x\n",
            "l4.csv:3:",
            "score 'x' is not a number",
        ),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let p = write(&dir, &format!("l{i}.csv"), text);
        stats()
            .args(["variance", PANEL, "--metric", "judge", "--contrast", "b-a"])
            .args(["--label-metric"])
            .args(["human", "--labels"])
            .arg(&p)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*line).and(predicate::str::contains(*what)));
    }
    stats()
        .args([
            "variance",
            PANEL,
            "--metric",
            "judge",
            "--ppi-lambda",
            "0.5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--ppi-lambda"));
}

/// Agreement on the fixture's arm b, against numpy on the same 40 labelled cells:
/// python3 -c "import csv, numpy as np
/// j={r['question']:float(r['judge']) for r in csv.DictReader(open('tests/fixtures/judges/panel.csv')) if r['arm']=='b'}
/// l=[(j[r['question']],float(r['human'])) for r in csv.DictReader(open('tests/fixtures/judges/labels.csv')) if r['arm']=='b']
/// x,y=np.array(l).T; print(repr(float(np.corrcoef(x,y)[0,1])), repr(float((x-y).mean())))"
#[test]
fn agreement_reports_correlation_bias_and_effective_labels() {
    let doc = json(&[
        "labels",
        "agreement",
        PANEL,
        "--metric",
        "judge",
        "--arm",
        "b",
        "--labels",
        LABELS,
        "--label-metric",
        "human",
        "--format",
        "json",
    ]);
    let s = &doc["strata"][0];
    assert_eq!(s["questions"], 40);
    assert_eq!(s["cells"], 40);
    // The judge's scores are not 0/1: no κ.
    assert!(s["kappa"].is_null());
    let r = s["correlation"].as_f64().unwrap();
    assert!((r - AGREE_R).abs() < 1e-12, "{r}");
    let bias = s["bias"].as_f64().unwrap();
    assert!((bias - AGREE_BIAS).abs() < 1e-12, "{bias}");
    let ratio = s["variance_ratio"].as_f64().unwrap();
    let eff = s["effective_labels"].as_f64().unwrap();
    assert!((eff - 40.0 / ratio).abs() < 1e-9);
    // PPI++ is never worse than the labels alone at λ̂ (to first order): ratio below 1.
    assert!(ratio < 1.0);
}

const AGREE_R: f64 = 0.5933989012246782;
const AGREE_BIAS: f64 = 0.0856;

/// `compare --labels`: each arm's PPI++ estimate and the pair's paired difference equal
/// ppi_py's (the numbers of `one_level_estimates_equal_ppi_py`), and the pair's Wald p is
/// scipy's 2·norm.sf(|θ̂/SE|) = 0.6434168403410432 (`python3 tests/reference/ppi_reference.py`);
/// Holm and BH of one pair are p itself.
#[test]
fn compare_with_labels_is_ppi_per_arm_and_per_pair() {
    let doc = json(&[
        "compare",
        PANEL,
        "--metric",
        "judge",
        "--labels",
        LABELS,
        "--label-metric",
        "human",
        "--format",
        "json",
    ]);
    let b = &doc["systems"][1];
    assert_eq!(b["name"], "b");
    assert!((b["estimate"].as_f64().unwrap() - 0.5201461118352966).abs() < 1e-9);
    assert!((b["ci"][0].as_f64().unwrap() - 0.38831220070185274).abs() < 1e-6);
    let pair = &doc["pairs"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("a"), Some("b"))
    );
    assert!((pair["estimate"].as_f64().unwrap() - 0.0372367329488554).abs() < 1e-9);
    assert!((pair["ci"][1].as_f64().unwrap() - 0.1948915851893131).abs() < 1e-6);
    assert!((pair["p"].as_f64().unwrap() - 0.6434168403410432).abs() < 1e-9);
    assert_eq!(pair["p_holm"], pair["p"]);
    assert_eq!(pair["labelled"], 40);
    stats()
        .args([
            "compare",
            PANEL,
            "--metric",
            "judge",
            "--labels",
            LABELS,
            "--label-metric",
        ])
        .args(["human", "--ledger", "data/demo/ledger.jsonl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--label-cost: with labels, the ledger's next step prices the labels too",
        ));
}

/// `bootstrap --labels`: the PPI++ bootstrap on the CPU and the GPU give the same replicates
/// (the same interval and SE, bit for bit); its estimate is the analytic one (ppi_py's) and
/// its SE near the analytic SE. Without an adapter the GPU half skips (unless
/// `STATS_REQUIRE_GPU=1`).
#[test]
fn the_ppi_bootstrap_is_the_same_on_cpu_and_gpu() {
    let run = |backend: &str| {
        stats()
            .args([
                "bootstrap",
                PANEL,
                "--metric",
                "judge",
                "--contrast",
                "b-a",
                "--labels",
            ])
            .args([
                LABELS,
                "--label-metric",
                "human",
                "--replicates",
                "2000",
                "--backend",
            ])
            .args([backend, "--format", "json"])
            .output()
            .unwrap()
    };
    let cpu: serde_json::Value = serde_json::from_slice(&run("cpu").stdout).unwrap();
    assert!((cpu["estimate"].as_f64().unwrap() - 0.0372367329488554).abs() < 1e-9);
    let (se, analytic) = (
        cpu["se"].as_f64().unwrap(),
        cpu["analytic_se"].as_f64().unwrap(),
    );
    assert!(
        (se / analytic - 1.0).abs() < 0.15,
        "bootstrap SE {se}, analytic {analytic}"
    );
    let gpu = run("gpu");
    if common::gpu_ran(&gpu) {
        let gpu: serde_json::Value = serde_json::from_slice(&gpu.stdout).unwrap();
        assert_eq!(gpu["backend"], "gpu");
        assert_eq!(gpu["ci"], cpu["ci"]);
        assert_eq!(gpu["se"], cpu["se"]);
    }
    stats()
        .args([
            "bootstrap",
            PANEL,
            "--metric",
            "judge",
            "--arm",
            "b",
            "--labels",
            LABELS,
        ])
        .args(["--label-metric", "human", "--method", "bca"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--method: bca cannot be used with labels",
        ));
}
