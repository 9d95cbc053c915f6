//! `stats correlate` end to end: the demo commands, output formats, and one test per class
//! of bad input (exit code 2 and a message naming what is wrong).

use crate::common;

use common::{gpu_ran, stats};
use predicates::prelude::*;

fn demo(name: &str) -> String {
    format!("{}/data/demo/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn capability_matrix_json_has_every_pair_and_matches_scipy() {
    let out = stats()
        .args([
            "correlate",
            &demo("capability.csv"),
            "--x",
            "planning,evidence,reasoning,noise",
            "--y",
            "browsecomp,xbench",
            "--replicates",
            "500",
            "--permutations",
            "199",
            "--backend",
            "cpu",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pairs"].as_array().unwrap().len(), 8);
    assert_eq!(v["matrix"]["r"].as_array().unwrap().len(), 4);
    // scipy.stats.pearsonr(planning, browsecomp) on the demo file.
    let p0 = &v["pairs"][0];
    assert_eq!(p0["x"], "planning");
    assert_eq!(p0["y"], "browsecomp");
    assert!((p0["r"].as_f64().unwrap() - 0.9245405558306515).abs() < 1e-12);
    assert!((p0["p"].as_f64().unwrap() - 1.695902594740403e-05).abs() < 1e-14);
    let b = &p0["bootstrap"];
    assert!(b["ci"][0].as_f64().unwrap() < 0.9245 && b["ci"][1].as_f64().unwrap() > 0.9245);
    let perm = p0["permutation"]["p"].as_f64().unwrap();
    assert!((perm - 1.0 / 200.0).abs() < 1e-15, "{perm}");
}

#[test]
fn judged_point_biserial_with_clusters_in_table_and_csv() {
    let base = [
        "correlate",
        &demo("judged.csv"),
        "--x",
        "judge_score",
        "--y",
        "correct",
        "--method",
        "pointbiserial",
        "--cluster",
        "question",
        "--replicates",
        "300",
        "--backend",
        "cpu",
    ];
    stats()
        .args(base)
        .assert()
        .success()
        .stdout(predicate::str::contains("whole clusters resampled"))
        .stdout(predicate::str::contains("60 clusters"))
        .stdout(predicate::str::contains("0.691655"));
    let mut csv = base.to_vec();
    csv.extend(["--format", "csv"]);
    stats()
        .args(csv)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "x,y,method,n,r,statistic,p,p_method",
        ))
        .stdout(predicate::str::contains(
            "judge_score,correct,pointbiserial,240,",
        ));
}

#[test]
fn aggregate_by_averages_rows_per_unit() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        &dir,
        "a.csv",
        "model,a,b\nm1,1,2\nm1,3,2\nm2,5,7\nm3,2,1\nm3,2,5\nm4,9,9\n",
    );
    // Unit means: m1 (2,2), m2 (5,7), m3 (2,3), m4 (9,9); around the means (4.5, 5.25):
    // Sxy = 31.5, Sxx = 33, Syy = 32.75 (by hand).
    let out = stats()
        .args([
            "correlate",
            &f,
            "--x",
            "a",
            "--y",
            "b",
            "--aggregate-by",
            "model",
        ])
        .args(["--replicates", "0", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["n"], 4);
    assert_eq!(v["aggregated_from"], 6);
    let want = 31.5 / (33.0f64 * 32.75).sqrt();
    assert!((v["pairs"][0]["r"].as_f64().unwrap() - want).abs() < 1e-12);
    assert!(v["pairs"][0]["fisher"].is_array());
}

#[test]
fn missing_values_error_names_the_row_or_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "m.csv", "a,b\n1,2\n2,NA\n3,5\n4,4\n5,6\n");
    stats()
        .args(["correlate", &f, "--x", "a", "--y", "b", "--replicates", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("m.csv:3"))
        .stderr(predicate::str::contains("column 'b' is missing"));
    stats()
        .args(["correlate", &f, "--x", "a", "--y", "b", "--replicates", "0"])
        .args(["--missing", "drop", "--format", "json"])
        .assert()
        .success()
        .stderr(predicate::str::contains("dropped 1 of 5 rows"))
        .stdout(predicate::str::contains("\"n\": 4"));
}

#[test]
fn bad_inputs_exit_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        &dir,
        "g.csv",
        "a,b,c,k\n1,0,5,x\n2,1,5,y\n3,0,5,x\n4,1,5,y\n",
    );
    let nonnum = write(&dir, "n.csv", "a,b\n1,2\n2,3\n3,abc\n4,1\n");
    let nonbin = write(&dir, "nb.csv", "a,b\n1,0\n2,1\n3,2\n4,1\n");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![&good, "--x", "zz", "--y", "b"],
            "x column 'zz' not found",
        ),
        (
            vec![&nonnum, "--x", "a", "--y", "b"],
            "n.csv:4: column 'b': 'abc' is not a finite number",
        ),
        (
            vec![&nonnum, "--x", "a", "--y", "b", "--missing", "drop"],
            "'abc' is not a finite number",
        ),
        (
            vec![&nonbin, "--x", "a", "--y", "b", "--method", "pointbiserial"],
            "column 'b' must take exactly two values",
        ),
        (
            vec![&good, "--x", "a", "--y", "c"],
            "column 'c' is constant",
        ),
        (
            vec![
                &good,
                "--x",
                "a",
                "--y",
                "b",
                "--cluster",
                "k",
                "--permutations",
                "10",
            ],
            "not exchangeable",
        ),
        (
            vec![&good, "--x", "a", "--y", "b", "--confidence", "1.5"],
            "--confidence",
        ),
        (
            vec![&good, "--x", "a", "--y", "b", "--replicates", "1"],
            "--replicates",
        ),
    ];
    for (args, needle) in cases {
        let mut a = vec!["correlate"];
        a.extend(args);
        if !a.contains(&"--replicates") {
            a.extend(["--replicates", "0"]);
        }
        a.extend(["--backend", "cpu"]);
        stats()
            .args(&a)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
}

/// A GPU adapter is required when STATS_REQUIRE_GPU=1; elsewhere the test skips with a
/// reason when none exists. Pearson's bootstrap runs on the GPU engine; Spearman's re-ranks
/// every resample on the CPU under either backend (from the draws the GPU engine makes), so
/// its run says `cpu` with a note; the permutations run on the GPU for both. Every pair's
/// numbers are the CPU run's.
#[test]
fn gpu_and_cpu_reports_are_identical() {
    let args = |method: &str, backend: &str| {
        vec![
            "correlate".to_string(),
            demo("capability.csv"),
            "--x".into(),
            "planning,evidence,reasoning,noise".into(),
            "--y".into(),
            "browsecomp,xbench".into(),
            "--method".into(),
            method.into(),
            "--replicates".into(),
            "700".into(),
            "--permutations".into(),
            "333".into(),
            "--backend".into(),
            backend.into(),
            "--format".into(),
            "json".into(),
        ]
    };
    for (method, boot_backend) in [("spearman", "cpu"), ("pearson", "gpu")] {
        let gpu = stats().args(args(method, "gpu")).output().unwrap();
        if !gpu_ran(&gpu) {
            return;
        }
        let cpu = stats().args(args(method, "cpu")).output().unwrap();
        let g: serde_json::Value = serde_json::from_slice(&gpu.stdout).unwrap();
        let c: serde_json::Value = serde_json::from_slice(&cpu.stdout).unwrap();
        assert_eq!(g["run"]["backend"], boot_backend, "{method}");
        assert_eq!(c["run"]["backend"], "cpu");
        assert_eq!(g["permutation_backend"], "gpu");
        assert_eq!(g["pairs"], c["pairs"], "{method}");
        let noted = g["notes"].as_array().unwrap().iter().any(|n| {
            n.as_str()
                .unwrap()
                .contains("bootstrap re-ranks every resample on the CPU")
        });
        assert_eq!(noted, method == "spearman", "{method}");
    }
}
