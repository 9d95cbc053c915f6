//! `stats coverage`: the coverage study on the demo panel, through the command line.

use crate::common;

use common::{json, stats};
use predicates::prelude::*;

const DEMO: &str = "data/demo/panel.csv";

/// The demo panel's contrast, every analysis and generator at a small size: the JSON
/// document has a row per interval and test, with rates, MC SEs and verdicts; the text
/// names the target; the CSV has the rows.
#[test]
fn coverage_of_the_demo_panel() {
    let small = [
        "--panels",
        "20",
        "--replicates",
        "100",
        "--backend",
        "cpu",
        "--seed",
        "3",
    ];
    let mut args = vec![
        "coverage",
        DEMO,
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ];
    args.extend(small);
    let d = json(&args);
    assert_eq!(d["run"]["command"], "coverage");
    assert_eq!(d["run"]["seed"], 3);
    assert_eq!(d["outcome"], "f1: adaptive-open");
    assert_eq!(d["scale"], "bounded");
    assert_eq!(d["target"]["interval"][0], 0.935);
    let rows = d["rows"].as_array().unwrap();
    for g in ["gaussian", "bounded", "resample"] {
        for a in ["variance", "bootstrap", "compare"] {
            assert!(
                rows.iter()
                    .any(|r| r["generator"] == g && r["analysis"] == a),
                "{g} {a}"
            );
        }
    }
    for r in rows {
        let p = r["rate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{r}");
        let n = r["n"].as_f64().unwrap();
        assert!((r["mc_se"].as_f64().unwrap() - (p * (1.0 - p) / n).sqrt()).abs() < 1e-12);
        assert!(r["verdict"].is_string());
    }
    // Tests are measured on 20 null panels (Holm: one family per panel), intervals on 20.
    let holm = rows
        .iter()
        .find(|r| r["statistic"].as_str().unwrap().starts_with("family: Holm"))
        .unwrap();
    assert_eq!(holm["n"], 20);
    assert_eq!(holm["kind"], "test");

    let mut text = vec![
        "coverage",
        DEMO,
        "--contrast",
        "adaptive-open",
        "--analysis",
        "bootstrap",
        "--generator",
        "resample",
    ];
    text.extend(small);
    stats()
        .args(&text)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "target: 95% intervals cover 0.935–0.970",
        ))
        .stdout(predicate::str::contains("estimate: BCa interval"));
    let mut csv = text.clone();
    csv.extend(["--format", "csv"]);
    stats()
        .args(&csv)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "generator,analysis,interval or test,nominal,rate,MC SE,n,errors,verdict",
        ));
}

/// Bad input is a one-line error with exit code 2, never a panic.
#[test]
fn coverage_refuses_bad_flags_and_arms() {
    stats()
        .args([
            "coverage",
            DEMO,
            "--arm",
            "nope",
            "--panels",
            "20",
            "--replicates",
            "100",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown arm 'nope'"));
    stats()
        .args([
            "coverage",
            DEMO,
            "--contrast",
            "adaptive-open",
            "--panels",
            "3",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: --panels: 3 simulated panels are too few for a coverage estimate; \
             at least 10 are needed",
        ));
    stats().args(["coverage"]).assert().code(2);
}
