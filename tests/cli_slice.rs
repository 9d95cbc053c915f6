//! `stats slice`: the sub-panel of a design, as a file every command reads.

mod common;

use common::{json, stats, write};
use predicates::prelude::*;

const DEMO: &str = "data/demo/panel.csv";

fn slice(design: &[&str], out: &std::path::Path) {
    let mut args = vec!["slice", DEMO, "--contrast", "adaptive-open", "--design"];
    args.extend_from_slice(design);
    args.extend(["--out", out.to_str().unwrap()]);
    stats().args(&args).assert().success();
}

fn variance(p: &std::path::Path) -> serde_json::Value {
    json(&[
        "variance",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ])
}

#[test]
fn slices_measure_what_allocate_measures() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    slice(&["446:2:1"], &a);
    slice(&["60:3:2", "--seed", "5"], &b);
    // 446 questions × 2 trajectories × 1 read × 2 arms, plus the header.
    let text = std::fs::read_to_string(&a).unwrap();
    assert_eq!(text.lines().count(), 1 + 446 * 2 * 2);
    assert_eq!(
        text.lines().next().unwrap(),
        "dataset,question,trajectory,read,arm,f1,em"
    );
    let alloc = json(&[
        "allocate",
        DEMO,
        "--contrast",
        "adaptive-open",
        "--ledger",
        "data/demo/ledger.jsonl",
        "--prices",
        "data/demo/prices.toml",
        "--allocation",
        "A=446:2:1",
        "--allocation",
        "B=60:3:2",
        "--order-seed",
        "5",
        "--replicates",
        "10",
        "--backend",
        "cpu",
        "--format",
        "json",
    ]);
    // A uses the first questions, B the seeded order: the slices are the same sub-panels.
    let va = variance(&a);
    let se_a = alloc["allocations"][0]["se"].as_f64().unwrap();
    assert!((va["se"].as_f64().unwrap() - se_a).abs() < 1e-12);
    // The demo README's measured SE at 446/2/1.
    assert!((se_a - 0.0107).abs() < 5e-5);
    let vb = variance(&b);
    assert!(
        (vb["se"].as_f64().unwrap() - alloc["allocations"][1]["se"].as_f64().unwrap()).abs()
            < 1e-12
    );
    assert_eq!(vb["strata"][0]["questions"], 30);
    assert_eq!(vb["strata"][1]["questions"], 30);
    // Without --seed the first 30 questions of each stratum are taken: another sub-panel.
    let c = dir.path().join("c.csv");
    slice(&["60:3:2"], &c);
    assert!(std::fs::read_to_string(&c)
        .unwrap()
        .contains("hotpotqa-0001,"));
    assert_ne!(variance(&c)["se"], vb["se"]);
}

#[test]
fn per_stratum_counts_and_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.csv");
    slice(&["5:2:2", "--per-stratum"], &p);
    let v = variance(&p);
    for s in 0..2 {
        assert_eq!(v["strata"][s]["questions"], 5);
    }
    let q = dir.path().join("q.csv");
    slice(&["musique=4,hotpotqa=3:1:2"], &q);
    let v = variance(&q);
    assert_eq!(v["strata"][0]["name"], "hotpotqa");
    assert_eq!(v["strata"][0]["questions"], 3);
    assert_eq!(v["strata"][1]["questions"], 4);
    // JSONL in, JSONL out: lines copied as they are; no dataset column means stratum `all`.
    let j = write(
        &dir,
        "p.jsonl",
        "{\"question\":\"a\",\"trajectory\":0,\"read\":0,\"f1\":1}\n\
         {\"question\":\"a\",\"trajectory\":0,\"read\":1,\"f1\":0.5}\n\
         {\"question\":\"b\",\"trajectory\":0,\"read\":0,\"f1\":0}\n\
         {\"question\":\"b\",\"trajectory\":0,\"read\":1,\"f1\":0.25}\n\
         {\"question\":\"c\",\"trajectory\":0,\"read\":0,\"f1\":0}\n\
         {\"question\":\"c\",\"trajectory\":0,\"read\":1,\"f1\":1}\n",
    );
    let out = dir.path().join("o.jsonl");
    stats()
        .args([
            "slice",
            j.to_str().unwrap(),
            "--design",
            "2:1:1",
            "--out",
            out.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote 2 rows of design all=2:1:1"));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"question\":\"a\",\"trajectory\":0,\"read\":0,\"f1\":1}\n\
         {\"question\":\"b\",\"trajectory\":0,\"read\":0,\"f1\":0}\n"
    );
}

#[test]
fn impossible_slices_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.csv");
    let run = |extra: &[&str], needle: &str| {
        let mut args = vec!["slice", DEMO, "--contrast", "adaptive-open"];
        args.extend_from_slice(extra);
        stats()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    };
    let o = out.to_str().unwrap();
    run(
        &["--design", "24:5:2", "--per-stratum", "--out", o],
        "stratum 'hotpotqa' has 3 trajectories, fewer than the 5 asked for",
    );
    run(
        &["--design", "500:1:1", "--per-stratum", "--out", o],
        "has 223 questions, fewer than the 500",
    );
    run(
        &["--design", "hotpotqa=3:1:1", "--out", o],
        "the design gives no count for stratum 'musique'",
    );
    run(
        &["--design", "4:1:1", "--out", "x.jsonl"],
        "give a name ending in .csv",
    );
    run(
        &["--design", "4:1:1", "--seed", "1", "--first", "--out", o],
        "cannot be used with",
    );
    assert!(!out.exists());
}
