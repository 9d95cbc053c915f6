//! `stats subsets` from the command line: outputs, agreement with `stats variance` and
//! `stats forecast`, both audit kinds, backends, and bad inputs.

use crate::common;

use common::stats;

use std::io::Write;
use std::path::PathBuf;

use predicates::prelude::*;

/// A two-arm panel with strata `strata` (name, Q), T trajectories and R reads.
fn panel(
    dir: &tempfile::TempDir,
    file: &str,
    strata: &[(&str, usize)],
    t: usize,
    r: usize,
) -> PathBuf {
    let mut s = String::from("dataset,question,trajectory,read,arm,f1\n");
    let mut x: u64 = 88172645463325252 ^ (t * 31 + r) as u64;
    for (d, q) in strata {
        for qi in 0..*q {
            for ti in 0..t {
                for ri in 0..r {
                    for arm in ["open", "adaptive"] {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let v = ((x % 1000) as f64 / 1000.0 + (qi % 5) as f64 / 5.0) / 2.0;
                        s.push_str(&format!("{d},{d}-{qi},{ti},{ri},{arm},{v:.3}\n"));
                    }
                }
            }
        }
    }
    let p = dir.path().join(file);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(s.as_bytes())
        .unwrap();
    p
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = stats().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn json_report_is_consistent_with_variance_and_forecast() {
    let dir = tempfile::tempdir().unwrap();
    let depth = panel(&dir, "depth.csv", &[("musique", 12)], 3, 2);
    let audit = panel(
        &dir,
        "audit.csv",
        &[("hotpotqa", 20), ("musique", 15)],
        2,
        2,
    );
    let v = json(&[
        "subsets",
        s(&depth),
        "--contrast",
        "adaptive-open",
        "--audit",
        s(&audit),
        "--min-trajectories",
        "2",
        "--replicates",
        "300",
        "--backend",
        "cpu",
        "--format",
        "json",
        "--per-subset",
    ]);
    assert_eq!(v["run"]["backend"], "cpu");
    assert_eq!(v["run"]["replicates"], 300);
    let cfg = v["configurations"].as_array().unwrap();
    assert_eq!(cfg.len(), 6);
    let sizes: Vec<u64> = cfg.iter().map(|c| c["subsets"].as_u64().unwrap()).collect();
    assert_eq!(sizes, vec![6, 3, 6, 3, 2, 1]);
    let subsets = v["subsets"].as_array().unwrap();
    assert_eq!(subsets.len(), 21);
    // The full subset (all trajectories and reads) is the panel itself: its SE is the
    // measured SE `stats variance` reports.
    let var = json(&[
        "variance",
        s(&depth),
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    let full = subsets.last().unwrap();
    assert_eq!(full["trajectories"], serde_json::json!([0, 1, 2]));
    assert_eq!(full["reads"], serde_json::json!([0, 1]));
    let (a, b) = (full["se"].as_f64().unwrap(), var["se"].as_f64().unwrap());
    assert!((a - b).abs() < 1e-12 * b, "{a} vs {b}");
    assert_eq!(cfg[5]["se_measured"]["estimate"].as_f64().unwrap(), a);
    // Forecasts are `stats forecast` at (Q of the depth panel, t', r'); a one-stratum
    // audit so that `stats forecast` splits no questions.
    let one = panel(&dir, "one.csv", &[("musique", 15)], 2, 2);
    let g = json(&[
        "subsets",
        s(&depth),
        "--contrast",
        "adaptive-open",
        "--audit",
        s(&one),
        "--replicates",
        "50",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    let f = json(&[
        "forecast",
        "--audit",
        s(&one),
        "--contrast",
        "adaptive-open",
        "--design",
        "12:2:1",
        "--format",
        "json",
    ]);
    let row = &g["configurations"][2]; // t' = 2, r' = 1
    assert_eq!(
        (row["trajectories"].as_u64(), row["reads"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(row["se_nested"], f["designs"][0]["se_nested"]);
    assert_eq!(row["se_q_only"], f["designs"][0]["se_q_only"]);
    // MAE over t' >= 2 from the rows.
    let mut sn = 0.0;
    for c in cfg.iter().filter(|c| c["in_mae"] == true) {
        sn += (c["se_nested"].as_f64().unwrap() - c["se_measured"]["estimate"].as_f64().unwrap())
            .abs();
    }
    let mae = v["mae_nested"]["estimate"].as_f64().unwrap();
    assert!((mae - sn / 4.0).abs() < 1e-15, "{mae} vs {}", sn / 4.0);
    assert_eq!(cfg.iter().filter(|c| c["in_mae"] == true).count(), 4);
}

#[test]
fn components_file_audit_gives_the_same_forecasts_as_the_panel() {
    let dir = tempfile::tempdir().unwrap();
    let depth = panel(&dir, "depth.csv", &[("musique", 10)], 3, 2);
    let audit = panel(
        &dir,
        "audit.csv",
        &[("hotpotqa", 20), ("musique", 15)],
        2,
        2,
    );
    let out = stats()
        .args([
            "variance",
            s(&audit),
            "--contrast",
            "adaptive-open",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let comp = dir.path().join("components.json");
    std::fs::write(&comp, &out.stdout).unwrap();
    let common = [
        "--contrast",
        "adaptive-open",
        "--replicates",
        "20",
        "--backend",
        "cpu",
        "--format",
        "csv",
    ];
    let a = stats()
        .arg("subsets")
        .arg(&depth)
        .arg("--audit")
        .arg(&audit)
        .args(common)
        .output()
        .unwrap();
    let b = stats()
        .arg("subsets")
        .arg(&depth)
        .arg("--audit")
        .arg(&comp)
        .args(common)
        .output()
        .unwrap();
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    let text = String::from_utf8(a.stdout).unwrap();
    assert!(text.starts_with(
        "t,r,subsets,se_measured,se_measured_se,ci_low,ci_high,se_nested,se_q_only,in_mae\n"
    ));
    assert_eq!(text.lines().count(), 7);
}

#[test]
fn table_output_and_per_subset_csv() {
    let dir = tempfile::tempdir().unwrap();
    let depth = panel(&dir, "depth.csv", &[("musique", 10)], 2, 2);
    stats()
        .args([
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&depth),
            "--replicates",
            "20",
            "--backend",
            "cpu",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("T=2, R=2; 9 subset pairs"))
        .stdout(predicate::str::contains("advantage (Q-only - nested)"));
    let out = stats()
        .args([
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&depth),
            "--replicates",
            "20",
            "--backend",
            "cpu",
            "--format",
            "csv",
            "--per-subset",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "t,r,trajectories,reads,se_measured");
    assert_eq!(lines.len(), 10);
    assert!(lines[9].starts_with("2,2,0+1,0+1,"), "{}", lines[9]);
}

#[test]
fn gpu_and_cpu_reports_are_identical() {
    let gpu = ragstats_gpu::GpuBackend::new(ragstats_gpu::AdapterPolicy::Any);
    if common::gpu_or_skip(gpu).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let depth = panel(&dir, "depth.csv", &[("hotpotqa", 9), ("musique", 14)], 3, 3);
    let run = |b: &str| {
        let mut v = json(&[
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&depth),
            "--replicates",
            "64",
            "--backend",
            b,
            "--format",
            "json",
            "--seed",
            "5",
        ]);
        assert_eq!(v["run"]["backend"], b);
        v["run"]["backend"] = serde_json::Value::Null;
        v["run"]["adapter"] = serde_json::Value::Null;
        v
    };
    assert_eq!(run("cpu"), run("gpu"));
}

#[test]
fn bad_inputs_fail_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let depth = panel(&dir, "depth.csv", &[("musique", 10)], 3, 2);
    let other = panel(&dir, "other.csv", &[("hotpotqa", 10)], 2, 1);
    stats()
        .args(["subsets", s(&depth), "--contrast", "adaptive-open", "--audit", s(&other), "--backend", "cpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("depth stratum 'musique' has no audit stratum of the same name (audit strata: hotpotqa)"));
    stats()
        .args([
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&depth),
            "--min-trajectories",
            "4",
            "--backend",
            "cpu",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: --min-trajectories: expected 1 to T = 3 (the depth panel's trajectories), not 4",
        ));
    stats()
        .args([
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&depth),
            "--min-trajectories",
            "0",
            "--backend",
            "cpu",
        ])
        .assert()
        .code(2);
    let tiny = panel(&dir, "tiny.csv", &[("musique", 1)], 2, 2);
    stats()
        .args([
            "subsets",
            s(&tiny),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&depth),
            "--backend",
            "cpu",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "stratum 'musique' has 1 question(s)",
        ));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"strata\": 3}").unwrap();
    stats()
        .args([
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            s(&bad),
            "--backend",
            "cpu",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.json"))
        .stderr(predicate::str::contains("not a components file"));
    stats()
        .args([
            "subsets",
            s(&depth),
            "--contrast",
            "adaptive-open",
            "--audit",
            "/nonexistent/a.csv",
            "--backend",
            "cpu",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/a.csv"));
}
