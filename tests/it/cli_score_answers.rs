//! CLI tests for `stats score-answers`. Expected numbers are the official scripts' values
//! (see tests/it/qa_metrics.rs), averaged by hand.

use crate::common;

use common::stats;

use predicates::prelude::*;
use std::io::Write;

fn file(content: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new()
        .suffix(".jsonl")
        .tempfile()
        .unwrap();
    f.write_all(content.as_bytes()).unwrap();
    f
}

const ITEMS: &str = r#"{"id": "q1", "prediction": "the cat sat", "answers": ["cat sat on mat"]}
{"id": "q2", "prediction": "yes", "answers": ["yes it is"]}

{"id": 3, "prediction": "", "answer": "", "answer_aliases": []}
{"id": "q4", "prediction": "NYC", "answer": "New York City", "answer_aliases": ["nyc"]}
"#;

#[test]
fn json_means_per_style() {
    let f = file(ITEMS);
    // EM: q3 and q4 match -> 2/4. F1 per item (hotpotqa): 2/3, 0, 0, 1.
    // squad: 2/3, 0.5, 0, 1. musique: 2/3, 0.5, 1, 1.
    for (style, f1) in [
        ("hotpotqa", (2.0 / 3.0 + 0.0 + 0.0 + 1.0) / 4.0),
        ("squad", (2.0 / 3.0 + 0.5 + 0.0 + 1.0) / 4.0),
        ("musique", (2.0 / 3.0 + 0.5 + 1.0 + 1.0) / 4.0),
    ] {
        let out = stats()
            .args(["score-answers", "--format", "json", "--style", style])
            .arg(f.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["style"], style);
        assert_eq!(v["n"], 4);
        assert_eq!(v["em"].as_f64().unwrap(), 0.5);
        assert!(
            (v["f1"].as_f64().unwrap() - f1).abs() < 1e-15,
            "{style}: {v}"
        );
        assert!(v.get("items").is_none());
    }
}

#[test]
fn per_item_csv_and_table() {
    let f = file(ITEMS);
    stats()
        .args(["score-answers", "--style", "musique", "--per-item", "--format", "csv"])
        .arg(f.path())
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "id,style,n,em,f1\nq1,musique,1,0,0.6666666666666666\nq2,musique,1,0,0.5\n3,musique,1,1,1\nq4,musique,1,1,1\n(mean),musique,4,0.5,",
        ));
    stats()
        .args(["score-answers", "--per-item"])
        .arg(f.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("q1  0.0000  0.6667"))
        .stdout(predicate::str::contains(
            "hotpotqa        4  0.5000  0.4167",
        ));
}

#[test]
fn bad_lines_name_file_and_line() {
    let cases = [
        ("{\"id\": \"a\", \"prediction\": \"x\", \"answers\": [\"y\"]}\n{not json\n", ":2: not valid JSON"),
        ("{\"id\": \"a\", \"answers\": [\"y\"]}\n", ":1: item a: missing \"prediction\""),
        ("{\"id\": \"a\", \"prediction\": \"x\", \"answers\": []}\n", ":1: item a: the gold answer list is empty"),
        ("{\"id\": \"a\", \"prediction\": \"x\", \"answers\": [1]}\n", "\"answers\" must be a list of strings"),
        ("{\"id\": \"a\", \"prediction\": \"x\", \"answers\": [\"y\"], \"answer\": \"y\"}\n", "not both"),
        ("{\"id\": \"a\", \"prediction\": \"x\", \"answers\": [\"y\"]}\n{\"id\": \"a\", \"prediction\": \"x\", \"answers\": [\"y\"]}\n", ":2: duplicate id \"a\" (first on line 1)"),
        ("[1, 2]\n", ":1: expected a JSON object"),
    ];
    for (content, msg) in cases {
        let f = file(content);
        let name = f.path().display().to_string();
        stats()
            .arg("score-answers")
            .arg(f.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("error: {name}:")))
            .stderr(predicate::str::contains(msg));
    }
}

#[test]
fn missing_file_and_bad_style_exit_2() {
    stats()
        .args(["score-answers", "/nonexistent/preds.jsonl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/preds.jsonl"));
    let f = file(ITEMS);
    stats()
        .args(["score-answers", "--style", "trivia"])
        .arg(f.path())
        .assert()
        .code(2);
}
