//! `stats variance` / `stats forecast` from the command line, and one test per class of bad input.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;

/// Two arms, two strata, Q=2 each, T=2, R=1; adaptive − open = 0.1 everywhere except one cell.
fn paired_panel() -> String {
    let mut s = String::from("dataset,question,trajectory,read,arm,f1,em\n");
    for d in ["hotpotqa", "musique"] {
        for q in 0..2 {
            for t in 0..2 {
                let base = 0.2 * q as f64 + 0.05 * t as f64;
                let delta = if d == "musique" && q == 1 && t == 1 {
                    0.3
                } else {
                    0.1
                };
                s.push_str(&format!("{d},{d}-{q},{t},0,open,{base},0\n"));
                s.push_str(&format!("{d},{d}-{q},{t},0,adaptive,{},1\n", base + delta));
            }
        }
    }
    s
}

#[test]
fn variance_json_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", &paired_panel());
    let v = json(&[
        "variance",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    // hotpotqa contrast is 0.1 everywhere; musique question means 0.1 and 0.2 -> 0.15.
    assert!((v["strata"][0]["mean"].as_f64().unwrap() - 0.1).abs() < 1e-12);
    assert!((v["strata"][1]["mean"].as_f64().unwrap() - 0.15).abs() < 1e-12);
    assert!((v["estimate"].as_f64().unwrap() - 0.125).abs() < 1e-12);
    // musique: question means 0.1, 0.2 -> s² = 0.005, SE = sqrt(0.005/2) = 0.05; hotpotqa SE 0.
    assert!((v["se"].as_f64().unwrap() - 0.025).abs() < 1e-12);
    for key in [
        "name",
        "questions",
        "trajectories",
        "reads",
        "mean",
        "se",
        "ms",
        "df",
        "components",
        "truncated",
    ] {
        assert!(v["strata"][0].get(key).is_some(), "missing {key}");
    }
    assert!(
        v["strata"][0]["components"]["read"].is_null(),
        "R=1: read not estimable"
    );
    assert!(v["pooled"]["ms"]["question"].is_number());
    assert!(v["pooled"]["components"]["question"].is_number());
}

#[test]
fn variance_table_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", &paired_panel());
    stats()
        .args([
            "variance",
            p.to_str().unwrap(),
            "--contrast",
            "adaptive-open",
            "--metric",
            "em",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("estimate 1.000000  SE 0.000000"))
        .stdout(predicate::str::contains("not estimable"));
    stats()
        .args([
            "variance",
            p.to_str().unwrap(),
            "--arm",
            "open",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "scope,questions,trajectories,reads,mean,se,level",
        ))
        .stdout(predicate::str::contains("combined,4,"));
}

#[test]
fn forecast_from_audit_and_components_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", &paired_panel());
    let comp = json(&[
        "variance",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--format",
        "json",
    ]);
    let c = write(&dir, "c.json", &comp.to_string());
    let run = |src: &[&str]| {
        let mut args = vec!["forecast"];
        args.extend_from_slice(src);
        args.extend([
            "--design",
            "4:2:1",
            "--design",
            "hotpotqa=1,musique=3:1:1",
            "--format",
            "json",
        ]);
        json(&args)
    };
    let a = run(&[
        "--audit",
        p.to_str().unwrap(),
        "--contrast",
        "adaptive-open",
        "--measured",
        p.to_str().unwrap(),
    ]);
    let b = run(&["--components", c.to_str().unwrap()]);
    let d = &a["designs"];
    // At the audit's own design the Q-only forecast is the measured SE.
    assert!((d[0]["se_q_only"].as_f64().unwrap() - 0.025).abs() < 1e-12);
    assert!((d[0]["se_measured"].as_f64().unwrap() - 0.025).abs() < 1e-12);
    // Q-only with musique at 3 questions: sqrt(0.05² · 2/3)/2.
    let want = (0.0025f64 * 2.0 / 3.0).sqrt() / 2.0;
    assert!((d[1]["se_q_only"].as_f64().unwrap() - want).abs() < 1e-12);
    assert_eq!(a["designs"][1]["se_nested"], b["designs"][1]["se_nested"]);
    assert_eq!(d[1]["questions"], 4);
}

/// Runs `stats variance` on `text` and checks it fails with exit code 2 and `needle` in stderr.
fn bad(name: &str, text: &str, extra: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, name, text);
    let mut args = vec!["variance", p.to_str().unwrap()];
    args.extend_from_slice(extra);
    stats()
        .args(&args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(needle))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn missing_column() {
    bad(
        "p.csv",
        "dataset,trajectory,read,f1\nd,0,0,1\n",
        &[],
        "missing column 'question'",
    );
    bad(
        "p.csv",
        "question,f1\nq,1\n",
        &["--metric", "em"],
        "missing score column 'em'",
    );
    // Blank lines before the header: errors about it, and rows, name their own lines
    // (CRLF line ends, as a spreadsheet on Windows writes them).
    bad(
        "p.csv",
        "\r\n\r\ndataset,f1\r\nd,1\r\n",
        &[],
        "p.csv:3: missing column 'question'",
    );
    bad(
        "p.csv",
        "\r\nquestion,f1\r\nq,1\r\n",
        &["--metric", "em"],
        "p.csv:2: missing score column 'em'",
    );
    bad(
        "p.csv",
        "\r\nquestion,f1\r\nq1,0.5\r\n\r\nq2,abc\r\n",
        &[],
        "p.csv:5: score 'f1' is 'abc'; expected a number",
    );
}

#[test]
fn non_numeric_and_nan_scores() {
    bad(
        "p.csv",
        "question,f1\nq1,0.5\nq2,abc\n",
        &[],
        "p.csv:3: score 'f1' is 'abc'; expected a number",
    );
    bad(
        "p.csv",
        "question,f1\nq1,NaN\n",
        &[],
        "p.csv:2: score 'f1' is NaN; expected a finite number",
    );
    bad("p.csv", "question,f1\nq1,\n", &[], "p.csv:2: missing score");
    bad(
        "p.jsonl",
        "{\"question\":\"a\",\"f1\":1}\n{\"question\":\"b\",\"f1\":\"x\"}\n",
        &[],
        "p.jsonl:2: score 'f1' is 'x'",
    );
    bad(
        "p.jsonl",
        "{\"question\":\"a\",\"f1\":1}\nnot json\n",
        &[],
        "p.jsonl:2: not valid JSON",
    );
    bad(
        "p.jsonl",
        "{\"question\":\"a\",\"f1\":1}\n[1]\n",
        &[],
        "p.jsonl:2: expected a JSON object, found an array",
    );
}

#[test]
fn duplicate_cell() {
    bad(
        "p.csv",
        "question,trajectory,read,f1\nq1,0,0,1\nq1,0,1,1\nq1,0,0,0.5\n",
        &[],
        // Every duplicate is counted in one pass (#46), each example with both its lines.
        "p.csv: duplicates: 1 row repeats a cell already given (1 cell); line 4 repeats line 2 \
         (question=q1, trajectory=0, read=0); duplicates 'mean' averages a cell's rows, \
         'first' keeps the first",
    );
}

#[test]
fn unpaired_arm_cell_and_unknown_arm() {
    let text = "question,arm,f1\nq1,open,0.1\nq1,adaptive,0.2\nq2,open,0.3\n";
    // The unpaired cell is dropped and listed (issue #31 item 5); q2 has no cell left, so
    // one question remains and the fit refuses.
    bad("p.csv", text, &["--contrast", "adaptive-open"], "p.csv:4: unpaired cell (question=q2, trajectory=0, read=0, arm=open): no row for arm 'adaptive'; dropped the cell");
    bad(
        "p.csv",
        text,
        &["--contrast", "adaptive-open"],
        "need at least 2 questions per stratum",
    );
    bad(
        "p.csv",
        text,
        &["--contrast", "adaptive-closed"],
        "error: --contrast: unknown arm 'closed' in the contrast adaptive-closed; the panel's arms are: open, adaptive",
    );
    bad(
        "p.csv",
        text,
        &[],
        "the panel has several arms (open, adaptive); choose a contrast B-A or one arm",
    );
}

#[test]
fn unbalanced_question_names_missing_cells() {
    let text = "dataset,question,trajectory,read,f1\nd,q1,0,0,1\nd,q1,0,1,1\nd,q1,1,0,1\nd,q1,1,1,0\nd,q2,0,0,1\nd,q2,1,1,0\nd,q3,0,0,1\nd,q3,0,1,1\nd,q3,1,0,1\nd,q3,1,1,0\n";
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", text);
    // A command that needs balance refuses, naming the missing cells.
    stats()
        .args(["subsets", p.to_str().unwrap(), "--audit", p.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "p.csv:6: unbalanced design: question 'q2' in stratum 'd' is missing 2 of 4 cells: (trajectory 0, read 1), (trajectory 1, read 0)",
        ));
    // variance fits it by REML, naming the same cells in a note.
    stats()
        .args(["variance", p.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "p.csv:6: question 'q2' in stratum 'd' is missing 2 of 4 cells: (trajectory 0, read 1), (trajectory 1, read 0)",
        ))
        .stdout(predicate::str::contains("REML"));
    stats()
        .args(["variance", p.to_str().unwrap(), "--drop-incomplete"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "dropped incomplete questions: 1 in d",
        ))
        .stdout(predicate::str::contains("d        2  2  2"));
}

#[test]
fn too_few_questions_and_bad_designs() {
    bad(
        "p.csv",
        "question,f1\nq1,0.5\n",
        &[],
        "need at least 2 questions",
    );
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "p.csv", &paired_panel());
    for (design, needle) in [
        (
            "10:0:1",
            "bad design '10:0:1': T must be a positive integer",
        ),
        ("nq=3:1:1", "no question count for stratum 'hotpotqa'"),
    ] {
        stats()
            .args([
                "forecast",
                "--audit",
                p.to_str().unwrap(),
                "--contrast",
                "adaptive-open",
                "--design",
                design,
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
    // The OS error is said once: the message names it, so no "caused by" repeats it.
    stats()
        .args(["variance", "/nonexistent/panel.csv"])
        .assert()
        .code(2)
        .stderr("error: /nonexistent/panel.csv: No such file or directory (os error 2)\n");
}
