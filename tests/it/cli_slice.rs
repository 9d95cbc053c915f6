//! `stats slice`: the sub-panel of a design, as a file every command reads.

use crate::common;

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
    slice(&["60:3:2", "--seed", "5", "--first"], &b);
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
    // A uses the first questions, B the seeded order with the first trajectories and reads:
    // the slices are the sub-panels allocate measures.
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

/// (question, trajectory, read) of every row of a sliced CSV (one entry per arm row).
fn cells(p: &std::path::Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(p).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[2].to_string(), f[3].to_string())
        })
        .collect()
}

#[test]
fn a_seed_chooses_trajectories_and_reads_and_first_keeps_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let (s1, s2, f) = (
        dir.path().join("s1.csv"),
        dir.path().join("s2.csv"),
        dir.path().join("f.csv"),
    );
    slice(&["60:2:2", "--seed", "5"], &s1);
    slice(&["60:2:2", "--seed", "5"], &s2);
    slice(&["60:2:2", "--seed", "5", "--first"], &f);
    let (seeded, first) = (cells(&s1), cells(&f));
    assert_eq!(std::fs::read(&s1).unwrap(), std::fs::read(&s2).unwrap());
    // 60 questions x 2 trajectories x 2 reads x 2 arms either way, the same questions.
    assert_eq!(seeded.len(), 60 * 2 * 2 * 2);
    assert_eq!(first.len(), seeded.len());
    let questions = |c: &[(String, String, String)]| {
        c.iter()
            .map(|x| x.0.clone())
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(questions(&seeded), questions(&first));
    assert_eq!(questions(&first).len(), 60);
    // --first: trajectories 0, 1 and reads 0, 1 only (the demo has T = 3, R = 5).
    assert!(first
        .iter()
        .all(|(_, t, r)| ["0", "1"].contains(&t.as_str()) && ["0", "1"].contains(&r.as_str())));
    // Seeded: other trajectories and reads are taken too, each question keeping 2 x 2 cells.
    assert!(seeded.iter().any(|(_, t, _)| t == "2"));
    assert!(seeded
        .iter()
        .any(|(_, _, r)| r.parse::<u32>().unwrap() >= 2));
    let v = variance(&s1);
    assert_eq!(v["strata"][0]["trajectories"], 2);
    assert_eq!(v["strata"][0]["reads"], 2);
    assert_eq!(v["strata"][0]["questions"], 30);
    stats()
        .args([
            "slice",
            DEMO,
            "--contrast",
            "adaptive-open",
            "--design",
            "4:1:1",
        ])
        .args(["--seed", "1", "--out", s2.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "(seeded questions, trajectories and reads)",
        ));
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
    assert!(!out.exists());
}

/// The (dataset, question, trajectory, read) cells of each arm of a sliced CSV panel
/// (columns as the demo's: dataset, question, trajectory, read, arm, …).
fn cells_by_arm(
    text: &str,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<[String; 4]>> {
    let mut out: std::collections::BTreeMap<_, std::collections::BTreeSet<_>> = Default::default();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        out.entry(f[4].to_string())
            .or_default()
            .insert([f[0], f[1], f[2], f[3]].map(String::from));
    }
    out
}

/// Issue #51 item 3: `slice` cuts questions, trajectories and reads, not arms, so the demo
/// panel (arms open and adaptive) is sliced without `--contrast`: both arms kept, with the
/// same cells each, 2 arms × 446 × 2 × 1 rows, and the file is the one `--contrast` writes
/// (the contrast's cells are those of every arm here, the demo being fully paired).
#[test]
fn a_multi_arm_panel_is_cut_alike_for_every_arm() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    stats()
        .args(["slice", DEMO, "--design", "446:2:1", "--out"])
        .arg(&a)
        .assert()
        .success();
    let text = std::fs::read_to_string(&a).unwrap();
    // 2 arms × 446 questions × 2 trajectories × 1 read, plus the header.
    assert_eq!(text.lines().count(), 1 + 2 * 446 * 2);
    let by_arm = cells_by_arm(&text);
    assert_eq!(
        by_arm.keys().map(String::as_str).collect::<Vec<_>>(),
        ["adaptive", "open"]
    );
    assert_eq!(by_arm["open"], by_arm["adaptive"]);
    assert_eq!(by_arm["open"].len(), 446 * 2);
    let questions = |arm: &str| {
        by_arm[arm]
            .iter()
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(questions("open").len(), 446);
    assert_eq!(questions("open"), questions("adaptive"));
    let b = dir.path().join("b.csv");
    slice(&["446:2:1"], &b);
    assert_eq!(text, std::fs::read_to_string(&b).unwrap());
    // Seeded too: the same cells for both arms, and the same file as with --contrast.
    let (c, d) = (dir.path().join("c.csv"), dir.path().join("d.csv"));
    stats()
        .args(["slice", DEMO, "--design", "60:3:2", "--seed", "5", "--out"])
        .arg(&c)
        .assert()
        .success();
    slice(&["60:3:2", "--seed", "5"], &d);
    let seeded = std::fs::read_to_string(&c).unwrap();
    assert_eq!(seeded, std::fs::read_to_string(&d).unwrap());
    let by_arm = cells_by_arm(&seeded);
    assert_eq!(by_arm["open"], by_arm["adaptive"]);
    assert_eq!(by_arm["open"].len(), 60 * 3 * 2);
}

/// Arms that do not share their cells are refused, naming where they differ and the flags
/// that choose the cells.
#[test]
fn arms_with_different_cells_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        &dir,
        "p.csv",
        "dataset,question,trajectory,read,arm,f1\n\
         d,q1,0,0,a,1\nd,q1,0,0,b,0\nd,q2,0,0,a,1\nd,q2,0,0,b,1\nd,q3,0,0,a,0\n",
    );
    stats()
        .args(["slice", p.to_str().unwrap(), "--design", "2:1:1", "--out"])
        .arg(dir.path().join("o.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the arms have different cells (3 and 2 questions in stratum 'd' in arm 'a' and arm 'b'); a slice keeps the same questions, trajectories and reads for every arm: choose them with a contrast B-A (the cells both arms have) or one arm",
        ));
}

#[test]
fn a_parquet_panel_is_sliced_to_csv_like_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (from_csv, from_parquet) = (dir.path().join("c.csv"), dir.path().join("p.csv"));
    for (input, out) in [
        (DEMO, &from_csv),
        (
            "tests/fixtures/import/parquet/panel-pyarrow.parquet",
            &from_parquet,
        ),
    ] {
        stats()
            .args([
                "slice",
                input,
                "--contrast",
                "adaptive-open",
                "--design",
                "24:2:1",
            ])
            .args([
                "--per-stratum",
                "--seed",
                "1",
                "--out",
                out.to_str().unwrap(),
            ])
            .assert()
            .success()
            .stderr(predicate::str::contains("wrote 192 rows"));
    }
    // The same cells (the Parquet file holds the demo panel), so the same analysis.
    assert_eq!(cells(&from_csv), cells(&from_parquet));
    let (a, b) = (variance(&from_csv), variance(&from_parquet));
    assert_eq!(a["estimate"], b["estimate"]);
    assert_eq!(a["se"], b["se"]);
}

#[test]
fn logs_and_the_panel_itself_are_refused_as_what_a_slice_copies_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    stats()
        .args([
            "slice",
            "tests/fixtures/import/logs/eval/arith-model-a.eval",
            "--design",
            "2:1:1",
        ])
        .args(["--out", dir.path().join("o.csv").to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "evaluation logs hold no panel rows for a slice to copy",
        ));
    let p = write(
        &dir,
        "p.csv",
        "dataset,question,trajectory,read,f1\nd,q1,0,0,1\nd,q2,0,0,0\nd,q3,0,0,1\n",
    );
    let before = std::fs::read(&p).unwrap();
    stats()
        .args(["slice", p.to_str().unwrap(), "--design", "2:1:1", "--out"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: --out: "));
    assert_eq!(std::fs::read(&p).unwrap(), before);
}
