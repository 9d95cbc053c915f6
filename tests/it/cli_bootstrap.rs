//! `stats bootstrap` and `stats merge` from the command line.

use crate::common;

use common::{gpu_ran, json, stats, write, XorShift};
use predicates::prelude::*;

/// Two strata (30 and 17 questions), T=2, R=2, two arms, deterministic irregular scores.
fn panel(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let mut s = String::from("dataset,question,trajectory,read,arm,f1\n");
    let mut x = XorShift(88172645463325252);
    for (d, q) in [("hotpotqa", 30), ("musique", 17)] {
        for qi in 0..q {
            for t in 0..2 {
                for r in 0..2 {
                    for arm in ["open", "adaptive"] {
                        let v = (x.grid(1000) + (qi % 5) as f64 / 5.0) / 2.0;
                        s.push_str(&format!("{d},{d}-{qi},{t},{r},{arm},{v:.3}\n"));
                    }
                }
            }
        }
    }
    write(dir, "panel.csv", &s)
}

#[test]
fn json_report_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let p = panel(&dir);
    let v = json(&[
        "bootstrap",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--replicates",
        "500",
        "--backend",
        "cpu",
        "--components",
        "--design",
        "100:2:1",
        "--format",
        "json",
    ]);
    for k in ["estimate", "se", "ci", "method", "strata", "components"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    // The engine and the settings are in the envelope, and only there.
    for k in ["backend", "adapter", "replicates", "seed", "confidence"] {
        assert!(v["run"].get(k).is_some_and(|x| !x.is_null()), "run.{k}");
        assert!(v.get(k).is_none(), "{k} in the body");
    }
    assert_eq!(v["run"]["backend"], "cpu");
    assert_eq!(v["run"]["replicates"], 500);
    assert_eq!(v["method"], "percentile");
    let var = json(&[
        "variance",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    assert!((v["estimate"].as_f64().unwrap() - var["estimate"].as_f64().unwrap()).abs() < 1e-12);
    let se_ratio = v["se"].as_f64().unwrap() / var["se"].as_f64().unwrap();
    assert!(
        (0.85..1.1).contains(&se_ratio),
        "bootstrap/analytic SE ratio {se_ratio}"
    );
    let ci = v["ci"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() < v["estimate"].as_f64().unwrap());
    assert!(v["components"]["designs"][0]["se_nested"]["ci"].is_array());
    assert!(v["components"]["pooled"]["read"]["estimate"].is_number());
}

#[test]
fn sharded_runs_merge_into_the_single_run_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = panel(&dir);
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let base = [
        "bootstrap",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--backend",
        "cpu",
        "--components",
        "--method",
        "bca",
    ];
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        args.extend(["--format", "json"]);
        json(&args)
    };
    let (all, a, b, c, merged) = (
        path("all.bin"),
        path("a.bin"),
        path("b.bin"),
        path("c.bin"),
        path("m.bin"),
    );
    let single = run(&["--replicates", "1000", "--replicates-out", &all]);
    run(&["--replicates-range", "0..333", "--replicates-out", &a]);
    run(&["--replicates-range", "333..334", "--replicates-out", &b]);
    run(&["--replicates-range", "334..1000", "--replicates-out", &c]);
    let m = json(&["merge", &c, &a, &b, "--out", &merged, "--format", "json"]);
    let (x, y) = (
        std::fs::read(&all).unwrap(),
        std::fs::read(&merged).unwrap(),
    );
    assert!(
        x == y,
        "merged file differs from the single run ({} vs {} bytes)",
        x.len(),
        y.len()
    );
    for k in [
        "estimate",
        "se",
        "ci",
        "strata",
        "components",
        "replicates",
        "seed",
    ] {
        assert_eq!(single[k], m[k], "{k}");
    }
    // A gap or a different seed is refused.
    stats()
        .args(["merge", &a, &c])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("gap"));
    // A missing first or last shard leaves no gap: `--replicates B` requires all of 0..B.
    let m = json(&[
        "merge",
        &c,
        &a,
        &b,
        "--replicates",
        "1000",
        "--format",
        "json",
    ]);
    assert_eq!(m["estimate"], single["estimate"]);
    stats()
        .args(["merge", &b, &c, "--replicates", "1000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the files hold replicates 333..1000, but the run has 0..1000 (missing 0..333)",
        ));
    stats()
        .args([
            "merge",
            &a,
            &b,
            "--replicates",
            "1000",
            "--out",
            &path("never.bin"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("(missing 334..1000)"));
    assert!(!dir.path().join("never.bin").exists());
    let other = path("other.bin");
    let mut args: Vec<&str> = base.to_vec();
    args.extend([
        "--seed",
        "2",
        "--replicates-range",
        "333..334",
        "--replicates-out",
        &other,
    ]);
    stats().args(&args).assert().success();
    stats()
        .args(["merge", &a, &other])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("different seeds"));
    std::fs::write(&other, b"garbage bytes here").unwrap();
    stats()
        .args(["merge", &other])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a replicates file"));
}

#[test]
fn table_output_and_bad_flags() {
    let dir = tempfile::tempdir().unwrap();
    let p = panel(&dir);
    let ps = p.to_str().unwrap();
    stats()
        .args([
            "bootstrap",
            ps,
            "--contrast",
            "adaptive-open",
            "--replicates",
            "200",
            "--backend",
            "cpu",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("backend: cpu"))
        .stdout(predicate::str::contains("95% CI"));
    for (args, needle) in [
        (vec!["--replicates-range", "5..5"], "expected A..B"),
        (vec!["--confidence", "1.5"], "must be between 0 and 1"),
        (vec!["--design", "10:1:1"], "--design: needs components"),
        (
            vec!["--components", "--design", "x=3:1:1"],
            "no question count for stratum 'hotpotqa'",
        ),
    ] {
        let mut a = vec![
            "bootstrap",
            ps,
            "--contrast",
            "adaptive-open",
            "--backend",
            "cpu",
        ];
        a.extend(args);
        stats()
            .args(&a)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
}

/// A GPU adapter is required when STATS_REQUIRE_GPU=1 (CI, with lavapipe); elsewhere the
/// test skips with a reason when none exists.
#[test]
fn gpu_and_cpu_reports_are_identical() {
    let dir = tempfile::tempdir().unwrap();
    let p = panel(&dir);
    // Weighted strata too (#46): each replicate's stratum means are weighted on the host
    // from either backend's sums, so the reports stay identical.
    let w = write(&dir, "w.csv", "dataset,weight\nhotpotqa,0.3\nmusique,0.7\n");
    let weightings: [&[&str]; 3] = [
        &[],
        &["--weights", "size"],
        &["--weights", w.to_str().unwrap()],
    ];
    for weights in weightings {
        let args = |backend: &'static str| {
            let mut a: Vec<String> = [
                "bootstrap",
                p.to_str().unwrap(),
                "--contrast",
                "adaptive-open",
                "--replicates",
                "777",
                "--components",
                "--backend",
                backend,
                "--format",
                "json",
            ]
            .map(String::from)
            .to_vec();
            a.extend(weights.iter().map(|s| s.to_string()));
            a
        };
        let gpu = stats().args(args("gpu")).output().unwrap();
        if !gpu_ran(&gpu) {
            return;
        }
        let cpu = stats().args(args("cpu")).output().unwrap();
        let mut g: serde_json::Value = serde_json::from_slice(&gpu.stdout).unwrap();
        let mut c: serde_json::Value = serde_json::from_slice(&cpu.stdout).unwrap();
        assert_eq!(g["run"]["backend"], "gpu");
        assert_eq!(c["run"]["backend"], "cpu");
        for v in [&mut g, &mut c] {
            v["run"].as_object_mut().unwrap().remove("backend");
            v["run"].as_object_mut().unwrap().remove("adapter");
        }
        assert_eq!(g, c, "{weights:?}");
        if weights.len() == 2 && weights[1] == "size" {
            // 30 and 17 questions.
            assert_eq!(c["weights"], serde_json::json!([30.0 / 47.0, 17.0 / 47.0]));
        }
    }
}

/// A bootstrap that fails after loading prints the loading notes first, as a success would:
/// the dropped question is said before the design it then refuses.
#[test]
fn a_failure_after_loading_comes_after_the_loading_notes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.csv");
    std::fs::write(
        &p,
        "dataset,question,trajectory,read,f1\nd,q1,0,0,1\nd,q1,1,0,0\nd,q2,0,0,1\nd,q3,0,0,0\nd,q3,1,0,1\n",
    )
    .unwrap();
    let out = stats()
        .args([
            "bootstrap",
            p.to_str().unwrap(),
            "--drop-incomplete",
            "--replicates",
            "100",
        ])
        .args(["--components", "--design", "x=5:1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let note = err.find("note: dropped from d: q2").expect(&err);
    let error = err
        .find("error: --design: x=5:1:1: design gives no question count for stratum 'd'")
        .expect(&err);
    assert!(note < error, "{err}");
}
