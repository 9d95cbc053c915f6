//! `stats sequential` and `stats gate`: the sequence's looks and stop, the order of arrival,
//! and the gate's verdicts and exit codes (0 pass, 3 fail, 4 inconclusive).

use crate::common;

use common::{json, stats, write};

/// A panel of `n` questions in one stratum, one binary read per arm: arm `base` is right on
/// a question with probability `p_base`, `cand` with `p_cand` (a fixed irregular sequence,
/// so the panel is the same every run); a column `t` numbers the questions backwards.
fn panel(n: usize, p_base: f64, p_cand: f64) -> String {
    let mut rng = common::XorShift(50);
    let mut out = String::from("dataset,question,trajectory,read,arm,em,t\n");
    for q in 0..n {
        for (arm, p) in [("base", p_base), ("cand", p_cand)] {
            let right = u8::from(rng.grid(1000) < p);
            out.push_str(&format!("d,q{q},0,0,{arm},{right},{}\n", n - q));
        }
    }
    out
}

fn gate(panel: &std::path::Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec![
        "gate",
        panel.to_str().unwrap(),
        "--contrast",
        "cand-base",
        "--margin",
        "0.02",
    ];
    args.extend_from_slice(extra);
    let out = stats().args(&args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A clear improvement passes (0), a clear regression fails (3), a tiny panel is
/// inconclusive (4) and says how many questions would decide; the same with --sequential.
#[test]
fn the_gates_exit_codes_are_its_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let better = write(&dir, "better.csv", &panel(300, 0.5, 0.9));
    let worse = write(&dir, "worse.csv", &panel(300, 0.9, 0.5));
    let tiny = write(&dir, "tiny.csv", &panel(8, 0.3, 0.7));
    for extra in [&[][..], &["--sequential"][..]] {
        assert_eq!(gate(&better, extra).0, 0, "{extra:?}");
        assert_eq!(gate(&worse, extra).0, 3, "{extra:?}");
        let (code, text) = gate(&tiny, extra);
        assert_eq!(code, 4, "{extra:?}: {text}");
        assert!(
            text.contains("inconclusive: the 95% interval for cand - base contains"),
            "{text}"
        );
    }
    let (code, md) = gate(&better, &["--format", "markdown"]);
    assert_eq!(code, 0);
    assert!(md.starts_with("### ✅ ragstats gate: **pass**\n"), "{md}");
    assert!(md.contains("| contrast | `cand - base` (em) |"), "{md}");
    let out = stats()
        .args([
            "gate",
            tiny.to_str().unwrap(),
            "--contrast",
            "cand-base",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdict"], "inconclusive");
    assert_eq!(doc["questions"], 8);
    assert!(doc["questions_needed"].as_u64().unwrap() > 8, "{doc}");
    // Bad usage keeps exit 2.
    stats()
        .args(["gate", tiny.to_str().unwrap(), "--margin", "0.02"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--contrast: the gate needs the contrast CAND-BASE",
        ));
}

/// The fixed-n gate's interval is `stats compare --reference`'s for the pair.
#[test]
fn the_fixed_n_gate_is_compares_interval() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", &panel(120, 0.6, 0.7));
    // Inconclusive (exit 4) at this size: the document is read whatever the verdict.
    let out = stats()
        .args([
            "gate",
            p.to_str().unwrap(),
            "--contrast",
            "cand-base",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let g: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = json(&[
        "compare",
        p.to_str().unwrap(),
        "--reference",
        "base",
        "--replicates",
        "200",
        "--format",
        "json",
    ]);
    assert_eq!(g["estimate"], c["pairs"][0]["estimate"]);
    assert_eq!(g["interval"], c["pairs"][0]["ci"]);
    assert_eq!(g["method"], c["methods"]["ci"]);
}

/// The sequence's looks every K questions and at the last, its stop, and the questions
/// saved; --order-by takes the questions in the column's order (here the file's reversed).
#[test]
fn sequential_reports_its_looks_and_stop() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", &panel(310, 0.5, 0.9));
    let doc = json(&[
        "sequential",
        p.to_str().unwrap(),
        "--contrast",
        "cand-base",
        "--look-every",
        "50",
        "--format",
        "json",
    ]);
    let looks = doc["looks"].as_array().unwrap();
    let at: Vec<u64> = looks
        .iter()
        .map(|l| l["questions"].as_u64().unwrap())
        .collect();
    assert_eq!(at, [50, 100, 150, 200, 250, 300, 310]);
    assert_eq!(doc["decision"], "resolved");
    let stop = doc["stopped_at"].as_u64().unwrap();
    assert!(stop < 310);
    assert_eq!(doc["saved"].as_u64().unwrap(), 310 - stop);
    // The last look holds every question: its estimate is the panel's mean contrast.
    let text = std::fs::read_to_string(&p).unwrap();
    let (mut sum, mut n) = (0.0, 0.0);
    for pair in text.lines().skip(1).collect::<Vec<_>>().chunks(2) {
        let score = |l: &str| l.split(',').nth(5).unwrap().parse::<f64>().unwrap();
        sum += score(pair[1]) - score(pair[0]);
        n += 1.0;
    }
    let last = looks.last().unwrap();
    assert!((last["estimate"].as_f64().unwrap() - sum / n).abs() < 1e-12);
    // The first look by t (numbering the questions backwards) holds the file's last 50.
    let by_t = json(&[
        "sequential",
        p.to_str().unwrap(),
        "--contrast",
        "cand-base",
        "--look-every",
        "50",
        "--order-by",
        "t",
        "--format",
        "json",
    ]);
    assert_eq!(by_t["order"], "t");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let tail: f64 = lines[lines.len() - 100..]
        .chunks(2)
        .map(|pair| {
            let score = |l: &str| l.split(',').nth(5).unwrap().parse::<f64>().unwrap();
            score(pair[1]) - score(pair[0])
        })
        .sum::<f64>()
        / 50.0;
    assert!((by_t["looks"][0]["estimate"].as_f64().unwrap() - tail).abs() < 1e-12);
    // A width target stops by it instead.
    let se = json(&[
        "sequential",
        p.to_str().unwrap(),
        "--contrast",
        "cand-base",
        "--until-se",
        "0.05",
        "--format",
        "json",
    ]);
    assert_eq!(se["rule"], "se");
    assert_eq!(se["stopped_at"], se["se_reached_at"]);
}

/// The demo panel's two strata of 223 questions: by default they are combined in 223 rounds
/// of one question each (one sequence at the full level), narrower than the union bound
/// (`--strata union`), which is what it was before rounds: half-widths 0.070846 and
/// 0.087465 at 446 questions, against the fixed-n t interval's 0.019747 (3.6 and 4.4 times).
/// The estimate at the last look is the same, the fixed-n estimate.
#[test]
fn the_demo_strata_are_combined_in_rounds_unless_union_is_asked_for() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/data/demo/panel.csv");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "sequential",
            demo,
            "--contrast",
            "adaptive-open",
            "--metric",
            "f1",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        common::body(json(&args))
    };
    let rounds = run(&[]);
    let union = run(&["--strata", "union"]);
    assert_eq!(run(&["--strata", "rounds"]), rounds);
    assert_eq!(rounds["strata_rule"], "rounds");
    assert_eq!(rounds["rounds"], 223);
    for s in rounds["strata"].as_array().unwrap() {
        assert_eq!(
            (s["round_size"].as_u64(), s["left_out"].as_u64()),
            (Some(1), Some(0))
        );
    }
    assert_eq!(union["strata_rule"], "union");
    assert_eq!(union["rounds"], serde_json::Value::Null);
    assert_eq!(union["strata"][0]["round_size"], serde_json::Value::Null);
    let half = |d: &serde_json::Value| d["last"]["half_width"].as_f64().unwrap();
    assert!((half(&rounds) - 0.070846).abs() < 5e-7, "{}", half(&rounds));
    assert!((half(&union) - 0.087465).abs() < 5e-7, "{}", half(&union));
    assert_eq!(rounds["last"]["estimate"], union["last"]["estimate"]);
    assert_eq!(rounds["last"]["rounds"], 223);
    // File order: every hotpotqa question, then every musique one; the first round is
    // complete with the first musique question, the 224th.
    let looks = rounds["looks"].as_array().unwrap();
    assert_eq!(looks[8]["questions"], 225);
    assert_eq!(looks[8]["rounds"], 2);
    assert_eq!(looks[7]["rounds"], 0);
    // The gate takes the setting too (inconclusive: exit 4) and its interval is the sequence's.
    let out = stats()
        .args([
            "gate",
            demo,
            "--contrast",
            "adaptive-open",
            "--metric",
            "f1",
            "--sequential",
            "--strata",
            "union",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let gate: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(gate["interval"], union["last"]["interval"]);
}
