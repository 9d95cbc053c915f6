//! `--weights` in every command that combines strata (#46): the forecast, plan, allocation,
//! efficiency, subsets, consistency and bootstrap-design SEs are Σ_d w_d²·SE²_d of the
//! per-stratum ones, checked against each stratum analysed alone or by hand; `size` is the
//! file with Q_d/ΣQ; a file lacking a stratum is refused by name; and `slice`, which
//! combines no strata, says why it refuses the flag.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;
use serde_json::Value;

/// Two strata, T = R = 1: A's questions 1, 0, 0.5 (mean 0.5, s² = 0.25, Q = 3), B's 0.2,
/// 0.6 (mean 0.4, s² = 0.08, Q = 2). With T = R = 1 the question component is s².
const TWO_STRATA: &str = "dataset,question,f1\nA,a1,1\nA,a2,0\nA,a3,0.5\nB,b1,0.2\nB,b2,0.6\n";
const ONLY_A: &str = "dataset,question,f1\nA,a1,1\nA,a2,0\nA,a3,0.5\n";
const ONLY_B: &str = "dataset,question,f1\nB,b1,0.2\nB,b2,0.6\n";
/// Weights 1 and 3: w = (0.25, 0.75) once normalised.
const W13: &str = "dataset,weight\nB,3\nA,1\n";

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "{got} vs {want}");
}

/// (nested, Q-only) SE of the first design of `stats forecast --audit PANEL --design D`.
fn forecast(panel: &str, design: &str, more: &[&str]) -> (f64, f64) {
    let mut args = vec!["forecast", "--audit", panel, "--design", design];
    args.extend_from_slice(more);
    args.extend(["--format", "json"]);
    let v = json(&args);
    let d = &v["designs"][0];
    (f(&d["se_nested"]), f(&d["se_q_only"]))
}

#[test]
fn the_weighted_forecast_is_the_weighted_sum_of_each_strata_forecast() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| write(&dir, name, text).to_str().unwrap().to_string();
    let (p, pa, pb, w) = (
        path("p.csv", TWO_STRATA),
        path("a.csv", ONLY_A),
        path("b.csv", ONLY_B),
        path("w.csv", W13),
    );
    // Each stratum alone at its part of the design: A at 6 questions, B at 8.
    let (a_nested, a_q) = forecast(&pa, "6:1:1", &[]);
    let (b_nested, b_q) = forecast(&pb, "8:1:1", &[]);
    // By hand: SE²_A(6) = 0.25/6, SE²_B(8) = 0.08/8 (T = R = 1, so nested = Q-only).
    close(a_nested * a_nested, 0.25 / 6.0, 1e-15);
    close(b_nested * b_nested, 0.01, 1e-15);
    let (nested, q_only) = forecast(&p, "A=6,B=8:1:1", &["--weights", &w]);
    let want = |a: f64, b: f64| (0.25f64.powi(2) * a * a + 0.75f64.powi(2) * b * b).sqrt();
    close(nested, want(a_nested, b_nested), 1e-15);
    close(q_only, want(a_q, b_q), 1e-15);
    // sqrt(0.0625·0.25/6 + 0.5625·0.01) = sqrt(0.00822916…) = 0.0907147…
    close(nested, 0.008229166666666667f64.sqrt(), 1e-15);
    // The forecast states its weights (text: a `weights:` line, JSON: `weights`).
    let text = stats()
        .args([
            "forecast",
            "--audit",
            &p,
            "--design",
            "A=6,B=8:1:1",
            "--weights",
            &w,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("\nweights: A 0.250000, B 0.750000\n"),
        "{text}"
    );
    // Without weights: the equal-weight forecast sqrt(SE²_A + SE²_B)/2, as before.
    let (equal, _) = forecast(&p, "A=6,B=8:1:1", &[]);
    close(
        equal,
        (a_nested.powi(2) + b_nested.powi(2)).sqrt() / 2.0,
        1e-15,
    );

    // `size` is the file with Q_d/ΣQ = 3/5, 2/5, to the bit.
    let sizes = path("sizes.csv", "dataset,weight\nA,3\nB,2\n");
    assert_eq!(
        forecast(&p, "A=6,B=8:1:1", &["--weights", "size"]),
        forecast(&p, "A=6,B=8:1:1", &["--weights", &sizes])
    );

    // A components file from `variance --weights` carries the weights; one written without
    // them is weighted by `--weights` at forecast time. Both give the audit panel's forecast.
    for (variance_flags, forecast_flags) in [
        (vec!["--weights", w.as_str()], vec![]),
        (vec![], vec!["--weights", w.as_str()]),
    ] {
        let mut args = vec!["variance", p.as_str()];
        args.extend(&variance_flags);
        args.extend(["--format", "json"]);
        let out = stats().args(&args).output().unwrap();
        assert!(out.status.success());
        let comps = dir.path().join("components.json");
        std::fs::write(&comps, &out.stdout).unwrap();
        let mut args = vec![
            "forecast",
            "--components",
            comps.to_str().unwrap(),
            "--design",
            "A=6,B=8:1:1",
        ];
        args.extend(&forecast_flags);
        args.extend(["--format", "json"]);
        let v = json(&args);
        assert_eq!(
            f(&v["designs"][0]["se_nested"]),
            nested,
            "{variance_flags:?}"
        );
    }

    // The panel measured at its own design: the SE `variance --weights` gives it,
    // sqrt(0.25²/12 + 0.75²·0.04) = 0.1664582029619848 (tests/it/panel_shape.rs, numpy).
    let v = json(&[
        "forecast",
        "--audit",
        &p,
        "--design",
        "A=3,B=2:1:1",
        "--measured",
        &p,
        "--weights",
        &w,
        "--format",
        "json",
    ]);
    close(
        f(&v["designs"][0]["se_measured"]),
        0.1664582029619848,
        1e-12,
    );
    close(f(&v["designs"][0]["rel_error_q_only"]), 0.0, 1e-12);
}

#[test]
fn plan_sizes_the_weighted_se() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", TWO_STRATA);
    let w = write(&dir, "w.csv", W13);
    let plan = |more: &[&str]| {
        let mut args = vec![
            "plan",
            "--audit",
            p.to_str().unwrap(),
            "--unit-costs",
            "1,1",
            "--weights",
            w.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        args.extend([
            "--replicates",
            "200",
            "--backend",
            "cpu",
            "--format",
            "json",
        ]);
        json(&args)
    };
    // A given design of 10 questions splits 6 + 4 (the audit's 3 : 2): SE² = 0.25²·0.25/6
    // + 0.75²·0.08/4.
    let v = plan(&["--questions", "10", "--trajectories", "1", "--reads", "1"]);
    let want = (0.0625 * 0.25 / 6.0 + 0.5625 * 0.08 / 4.0f64).sqrt();
    close(f(&v["allocations"][0]["se"]), want, 1e-15);
    assert_eq!(v["weights"], serde_json::json!([0.25, 0.75]));
    // The least-cost split for these weights (docs/METHODS.md): k_d = 2 per question,
    // Q_d ∝ w_d √(v_d/k_d) = 0.25·√0.125 : 0.75·√0.04 = 0.0883883 : 0.15, i.e. A=589,B=1000;
    // SE²·cost (Σ w_d √(v_d k_d))² = 0.4767767² = 0.2273160 against the 6 : 4 split's
    // (0.0625·0.25/0.6 + 0.5625·0.08/0.4)·2 = 0.2770833: 18.0% lower.
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("the shares A=589,B=1000 lower SE^2 x cost by 18.0% against the split"),
        "{notes}"
    );
    // A target SE of 0.1 (SE² 0.01): the least Q whose split reaches it. Q = 13 splits
    // 8 + 5: 0.0625·0.25/8 + 0.5625·0.08/5 = 0.0109531 > 0.01; Q = 14 splits 8 + 6
    // (largest remainder of 8.4, 5.6): 0.0019531 + 0.0075 = 0.0094531 ≤ 0.01.
    let v = plan(&["--target-se", "0.1"]);
    assert_eq!(v["allocations"][0]["questions"], 14, "{v}");
    close(
        f(&v["allocations"][0]["se"]),
        (0.0625 * 0.25 / 8.0 + 0.5625 * 0.08 / 6.0f64).sqrt(),
        1e-15,
    );
}

#[test]
fn bootstrap_designs_follow_the_weights() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", TWO_STRATA);
    let w = write(&dir, "w.csv", W13);
    let (p, w) = (p.to_str().unwrap(), w.to_str().unwrap());
    let v = json(&[
        "bootstrap",
        p,
        "--weights",
        w,
        "--components",
        "--design",
        "A=6,B=8:1:1",
        "--replicates",
        "200",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    // The design's forecast on the data is `forecast --weights`'s.
    let (nested, _) = forecast(p, "A=6,B=8:1:1", &["--weights", w]);
    close(
        f(&v["components"]["designs"][0]["se_nested"]["estimate"]),
        nested,
        1e-12,
    );
}

#[test]
fn allocate_and_efficiency_weigh_the_demo_strata() {
    let dir = tempfile::tempdir().unwrap();
    let w = write(&dir, "w.csv", "dataset,weight\nhotpotqa,1\nmusique,3\n");
    let w = w.to_str().unwrap();
    let demo = [
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--weights",
        w,
        "--replicates",
        "200",
        "--backend",
        "cpu",
        "--format",
        "json",
    ];
    // The whole panel as an allocation is measured as `variance --weights` measures it.
    let variance = json(&[
        "variance",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--weights",
        w,
        "--format",
        "json",
    ]);
    let mut args = vec!["allocate"];
    args.extend_from_slice(&demo);
    args.extend([
        "--prices",
        "data/demo/prices.toml",
        "--allocation",
        "all=446:3:5",
        "--allocation",
        "small=100:1:1",
    ]);
    let v = json(&args);
    close(
        f(&v["allocations"][0]["se"]),
        f(&variance["se"]),
        1e-12 * f(&variance["se"]),
    );
    close(
        f(&v["allocations"][0]["estimate"]),
        f(&variance["estimate"]),
        1e-12,
    );
    // The one-read combination: a = Σ_d w_d² (σ²_q,d + σ²_t,d/T)/π_d and
    // b = Σ_d w_d² σ²_r,d/(T π_d) from each stratum's own components (π_d = 1/2 here).
    let mut args = vec!["efficiency"];
    args.extend_from_slice(&demo);
    let v = json(&args);
    let (mut a, mut b) = (0.0, 0.0);
    let q_all: f64 = v["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| f(&s["questions"]))
        .sum();
    for (s, w) in v["strata"].as_array().unwrap().iter().zip([0.25, 0.75]) {
        let c = &s["components"];
        let pos = |x: &Value| f(x).max(0.0);
        let (sq, st, sr) = (pos(&c["question"]), pos(&c["trajectory"]), pos(&c["read"]));
        let t = f(&s["trajectories"]);
        let pi = f(&s["questions"]) / q_all;
        a += w * w * (sq + st / t) / pi;
        b += w * w * sr / (t * pi);
    }
    let product = &v["combined"]["product"];
    close(f(&product["a"]), a, 1e-12 * a);
    close(f(&product["b"]), b, 1e-12 * b);
}

#[test]
fn subsets_weigh_the_measured_and_forecast_ses() {
    // Two strata, T = 2, R = 1 (hand-chosen scores, no structure needed).
    let panel = "dataset,question,trajectory,read,f1\n\
        A,a1,0,0,1\nA,a1,1,0,0.5\nA,a2,0,0,0\nA,a2,1,0,0.25\nA,a3,0,0,0.75\nA,a3,1,0,0.5\n\
        B,b1,0,0,0.2\nB,b1,1,0,0.4\nB,b2,0,0,0.6\nB,b2,1,0,1\n";
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", panel);
    let w = write(&dir, "w.csv", W13);
    let (p, w) = (p.to_str().unwrap(), w.to_str().unwrap());
    let v = json(&[
        "subsets",
        p,
        "--audit",
        p,
        "--weights",
        w,
        "--per-subset",
        "--replicates",
        "200",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    // The subset of every trajectory and read is the panel: its SE is `variance --weights`'s.
    let variance = json(&["variance", p, "--weights", w, "--format", "json"]);
    let all = v["subsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["trajectories"].as_array().unwrap().len() == 2)
        .unwrap();
    close(f(&all["se"]), f(&variance["se"]), 1e-12);
    // Its configuration's forecasts are `forecast --weights`' at the panel's own design.
    let config = v["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["trajectories"] == 2)
        .unwrap();
    let (nested, q_only) = forecast(p, "A=3,B=2:2:1", &["--weights", w]);
    close(f(&config["se_nested"]), nested, 1e-15);
    close(f(&config["se_q_only"]), q_only, 1e-15);
}

#[test]
fn consistency_weighs_the_one_read_se_and_reads_mapped_columns() {
    // TWO_STRATA's scores at both reads of one trajectory (the answers differ at a2), in a
    // third party's column names.
    let mut reads = String::from("temp,task,qid,traj,read,answer,f1\n");
    for temp in ["0.7", "1.0"] {
        for (d, q, y) in [
            ("A", "a1", "1"),
            ("A", "a2", "0"),
            ("A", "a3", "0.5"),
            ("B", "b1", "0.2"),
            ("B", "b2", "0.6"),
        ] {
            for r in 0..2 {
                let answer = if q == "a2" && r == 1 { "other" } else { q };
                reads.push_str(&format!("{temp},{d},{q},0,{r},{answer},{y}\n"));
            }
        }
    }
    let renamed = reads.replacen(
        "temp,task,qid,traj",
        "temperature,dataset,question,trajectory",
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let mapped = write(&dir, "mapped.csv", &reads);
    let plain = write(&dir, "plain.csv", &renamed);
    let w = write(&dir, "w.csv", W13);
    let run = |path: &std::path::Path, by: &str, more: &[&str]| {
        let mut args = vec![
            "consistency",
            path.to_str().unwrap(),
            "--by",
            by,
            "--metric",
            "f1",
            "--replicates",
            "200",
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(more);
        args.extend(["--format", "json"]);
        let mut v = json(&args);
        v.as_object_mut().unwrap().remove("run");
        v
    };
    let cols = "dataset=task,question=qid,trajectory=traj";
    let v = run(
        &mapped,
        "temp",
        &["--columns", cols, "--weights", w.to_str().unwrap()],
    );
    // Both reads score alike, so the one-read SE is the weighted SE of the scores:
    // sqrt(0.25²·0.25/3 + 0.75²·0.08/2) = 0.1664582029619848 (as `variance --weights`).
    for g in v["precision"].as_array().unwrap() {
        close(f(&g["one_read_se"]), 0.1664582029619848, 1e-12);
    }
    // One cell of five disagrees in each group.
    assert_eq!(v["disagreement"][0]["disagreeing"], 1, "{v}");
    assert_eq!(v["disagreement"][0]["cells"], 5, "{v}");
    // The mapped file reads as the file with the roles' own names (apart from the grouping
    // column's name).
    let mut want = run(&plain, "temperature", &["--weights", w.to_str().unwrap()]);
    want["by"] = "temp".into();
    assert_eq!(v, want);
    // Equal weights: sqrt(0.25/3 + 0.08/2)/2.
    let v = run(&mapped, "temp", &["--columns", cols]);
    close(
        f(&v["precision"][0]["one_read_se"]),
        (0.25 / 3.0 + 0.04f64).sqrt() / 2.0,
        1e-12,
    );
    // The grouping column cannot also play a role.
    stats()
        .args([
            "consistency",
            mapped.to_str().unwrap(),
            "--by",
            "temp",
            "--columns",
            "arm=temp",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--by: temp: the column map gives that column the role arm",
        ));
}

#[test]
fn a_weights_file_lacking_a_stratum_is_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", TWO_STRATA);
    let only_a = write(&dir, "w.csv", "dataset,weight\nA,1\n");
    let (p, only_a) = (p.to_str().unwrap(), only_a.to_str().unwrap());
    let says = "no weight for stratum 'B'; every dataset of the panel needs one";
    let commands: [&[&str]; 6] = [
        &["forecast", "--audit", p, "--design", "10:1:1"],
        &[
            "plan",
            "--audit",
            p,
            "--unit-costs",
            "1,1",
            "--target-se",
            "0.1",
        ],
        &["bootstrap", p, "--components", "--design", "10:1:1"],
        &["coverage", p, "--panels", "10", "--replicates", "100"],
        &["subsets", p, "--audit", p],
        &["variance", p],
    ];
    for args in commands {
        stats()
            .args(args)
            .args(["--weights", only_a])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    let demo_w = write(&dir, "demo-w.csv", "dataset,weight\nhotpotqa,1\n");
    for cmd in ["allocate", "efficiency"] {
        let mut args = vec![
            cmd,
            "data/demo/panel.csv",
            "--contrast",
            "adaptive-open",
            "--ledger",
            "data/demo/ledger.jsonl",
            "--prices",
            "data/demo/prices.toml",
            "--weights",
            demo_w.to_str().unwrap(),
        ];
        if cmd == "allocate" {
            args.extend(["--allocation", "A=100:1:1", "--allocation", "B=50:1:1"]);
        }
        stats()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("no weight for stratum 'musique'"));
    }
    // `slice` combines no strata and says so.
    stats()
        .args([
            "slice",
            p,
            "--design",
            "2:1:1",
            "--out",
            dir.path().join("s.csv").to_str().unwrap(),
            "--weights",
            "size",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--weights: slice copies a sub-panel's rows to a file and combines no strata",
        ));
}

#[test]
fn coverage_simulates_the_weighted_analyses() {
    let dir = tempfile::tempdir().unwrap();
    let w = write(&dir, "w.csv", "dataset,weight\nhotpotqa,1\nmusique,3\n");
    let v = json(&[
        "coverage",
        "data/demo/panel.csv",
        "--contrast",
        "adaptive-open",
        "--weights",
        w.to_str().unwrap(),
        "--analysis",
        "variance",
        "--generator",
        "gaussian",
        "--panels",
        "10",
        "--replicates",
        "100",
        "--format",
        "json",
    ]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("strata weighted (hotpotqa 0.250000, musique 0.750000)"),
        "{notes}"
    );
    assert!(v["rows"].as_array().unwrap().iter().all(|r| r["n"] != 0));
}
