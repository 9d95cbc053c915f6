//! CLI tests for `stats simulate`.

use crate::common;

use common::stats;

use predicates::prelude::*;

fn run(dir: &std::path::Path, name: &str, extra: &[&str]) -> Vec<u8> {
    let out = dir.join(name);
    stats()
        .args([
            "simulate",
            "--datasets",
            "hotpotqa=5,musique=4",
            "--trajectories",
            "2",
            "--reads",
            "3",
        ])
        .arg("--out")
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    std::fs::read(out).unwrap()
}

#[test]
fn csv_shape_and_determinism() {
    let dir = tempfile::tempdir().unwrap();
    let a = run(dir.path(), "a.csv", &["--seed", "7"]);
    let b = run(dir.path(), "b.csv", &["--seed", "7"]);
    let c = run(dir.path(), "c.csv", &["--seed", "8"]);
    assert_eq!(a, b);
    assert_ne!(a, c);
    let text = String::from_utf8(a).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "dataset,question,trajectory,read,arm,f1,em");
    assert_eq!(lines.len(), 1 + (5 + 4) * 2 * 3 * 2);
    assert!(lines[1].starts_with("hotpotqa,hotpotqa-0001,0,0,open,"));
    for l in &lines[1..] {
        let f1: f64 = l.split(',').nth(5).unwrap().parse().unwrap();
        assert!((0.0..=1.0).contains(&f1));
    }
}

#[test]
fn jsonl_by_extension_with_metric_name_and_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.jsonl");
    let text = run(
        dir.path(),
        "p.jsonl",
        &[
            "--metric-name",
            "score",
            "--arms",
            "a,b,c",
            "--ledger",
            ledger.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text.lines().count(), 9 * 2 * 3 * 3);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["arm"], "a");
    assert!(v["score"].is_f64() && v.get("f1").is_none());
    // 4 planner + 4 search per (question, trajectory, arm) and one reader per read.
    let ledger = std::fs::read_to_string(ledger).unwrap();
    assert_eq!(ledger.lines().count(), 9 * 2 * 3 * (4 + 4 + 3));
}

#[test]
fn gaussian_single_stratum() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.csv");
    stats()
        .args([
            "simulate",
            "--gaussian",
            "--datasets",
            "12",
            "--trajectories",
            "2",
            "--reads",
            "2",
            "--mean",
            "5",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote 48 panel rows"));
    let text = std::fs::read_to_string(out).unwrap();
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("all,all-0001,0,0,single,"));
}

#[test]
fn bad_flags_exit_2_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.csv");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--datasets", "hotpotqa=abc"],
            "dataset hotpotqa: expected a whole number of questions, got \"abc\"",
        ),
        (&["--datasets", "hotpotqa"], "expected name=QUESTIONS"),
        (&["--datasets", "a=1,a=2"], "listed twice"),
        (&["--datasets", "a=0"], "at least 1"),
        (&["--trajectories", "0"], "--trajectories"),
        (&["--mean", "nq=0.3"], "--mean: names dataset \"nq\""),
        (
            &["--mean", "hotpotqa=0.3"],
            "--mean: gives no value for dataset musique",
        ),
        (&["--mean", "x"], "expected a number or name=VALUE"),
        (
            &["--sigma-q", "-1"],
            "shared SDs must be finite and non-negative",
        ),
        (
            &["--gaussian", "--sigma-r", "-0.5"],
            "error: --sigma-r: -0.5 is not a standard deviation (finite and non-negative)",
        ),
        (&["--arms", "open,open"], "distinct"),
        (&["--gaussian", "--ledger", "l.jsonl"], "no ledger"),
        (&["--metric-name", "em"], "--metric-name"),
    ];
    for (flags, msg) in cases {
        stats()
            .arg("simulate")
            .arg("--out")
            .arg(&out)
            .args(*flags)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*msg));
    }
    assert!(!out.exists(), "nothing is written on a usage error");
}
