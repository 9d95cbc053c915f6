//! Issue #30 item 7: `mcq score` counts every outcome — parsed, parse failed, truncated,
//! error — with its rate as a fraction of all result lines, in the table, CSV and JSON.
//! Before, `parse_failure_rate` left truncations out and no parsed count was shown, so a run
//! where 1 line of 75 parsed looked like one where 40 % did.

use crate::support;

use serde_json::{json, Value};
use support::cli::{json_of, run_ok, stats};

/// A result line of `group` with `outcome` (gold {A}; `ok` lines answered A).
fn line(id: &str, group: &str, outcome: &str) -> String {
    let (task, subtask) = match group {
        "planning-convergent" => ("planning", "convergent"),
        "noise-abstain" => ("noise_robustness", "abstain"),
        g => panic!("no group {g}"),
    };
    let ok = outcome == "ok";
    let answer = ok.then(|| json!(["A"]));
    json!({"id": id, "run": 0, "model": "m", "prompt": "informative", "shuffle_seed": null,
           "task": task, "subtask": subtask, "group": group,
           "labels": ["A", "B", "C", "D"], "permutation": ["A", "B", "C", "D"],
           "gold": ["A"], "allow_empty": false, "outcome": outcome,
           "answer": answer, "answer_shown": answer, "parse_note": null,
           "text": if outcome == "error" { Value::Null } else { json!("x") },
           "finish_reason": if outcome == "truncated" { json!("length") } else { json!("stop") },
           "error": null, "usage": null, "cached": false})
    .to_string()
}

fn write(dir: &tempfile::TempDir, lines: &[String]) -> std::path::PathBuf {
    let p = dir.path().join("results.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn score(p: &std::path::Path, format: &str) -> std::process::Command {
    let mut c = stats();
    c.args(["mcq", "score"]).arg(p).args([
        "--backend",
        "cpu",
        "--replicates",
        "20",
        "--format",
        format,
    ]);
    c
}

/// The `rates` row of `group` in the JSON output.
fn rates<'a>(v: &'a Value, group: &str) -> &'a Value {
    v["rates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == group)
        .unwrap()
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-15
}

/// planning-convergent: ok, ok, parse_failed, truncated; noise-abstain: ok, truncated,
/// error. By hand: overall 3 / 1 / 2 / 1 of 7; convergent 2 / 1 / 1 / 0 of 4; abstain
/// 1 / 0 / 1 / 1 of 3.
#[test]
fn every_outcome_is_counted_with_its_rate_of_all_lines() {
    let dir = tempfile::tempdir().unwrap();
    let pc = "planning-convergent";
    let na = "noise-abstain";
    let p = write(
        &dir,
        &[
            line("p1", pc, "ok"),
            line("p2", pc, "ok"),
            line("p3", pc, "parse_failed"),
            line("p4", pc, "truncated"),
            line("n1", na, "ok"),
            line("n2", na, "truncated"),
            line("n3", na, "error"),
        ],
    );
    let v = json_of(&mut score(&p, "json"));
    for (group, n, counts) in [
        ("overall", 7.0, [3, 1, 2, 1]),
        (pc, 4.0, [2, 1, 1, 0]),
        (na, 3.0, [1, 0, 1, 1]),
    ] {
        let r = rates(&v, group);
        assert_eq!(r["records"], n as u64, "{r}");
        let names = ["parsed", "parse_failed", "truncated", "errors"];
        let rate_names = [
            "parsed_rate",
            "parse_failure_rate",
            "truncated_rate",
            "error_rate",
        ];
        for ((name, rate), k) in names.iter().zip(rate_names).zip(counts) {
            assert_eq!(r[*name], k, "{group} {name}: {r}");
            assert!(close(&r[rate], f64::from(k) / n), "{group} {rate}: {r}");
        }
    }

    // CSV: the rate columns end every row that has a rates row.
    let csv = run_ok(&mut score(&p, "csv"));
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(
        &header[header.len() - 9..],
        [
            "records",
            "parsed",
            "parse_failed",
            "truncated",
            "errors",
            "parsed_rate",
            "parse_failure_rate",
            "truncated_rate",
            "error_rate"
        ]
    );
    let overall: Vec<&str> = rows
        .find(|r| r.starts_with("overall,"))
        .unwrap()
        .split(',')
        .collect();
    let third = (1.0f64 / 7.0).to_string();
    let two = (2.0f64 / 7.0).to_string();
    let three = (3.0f64 / 7.0).to_string();
    assert_eq!(
        &overall[overall.len() - 9..],
        ["7", "3", "1", "2", "1", &three, &third, &two, &third]
    );
}

/// The case of the issue: 75 lines, 1 parsed, 45 parse failures, 29 truncated. The table
/// shows 1.3 % parsed beside the 60 % parse-failure rate.
#[test]
fn one_parsed_line_of_75_reads_as_such_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let pc = "planning-convergent";
    let lines: Vec<String> = (0..75)
        .map(|i| {
            let outcome = match i {
                0 => "ok",
                1..=45 => "parse_failed",
                _ => "truncated",
            };
            line(&format!("q{i}"), pc, outcome)
        })
        .collect();
    let p = write(&dir, &lines);
    let t = run_ok(&mut score(&p, "table"));
    assert!(
        t.contains("outcomes of all result lines (the four rates sum to 1):"),
        "{t}"
    );
    let head = t
        .lines()
        .find(|l| l.trim_start().starts_with("group") && l.contains("records"))
        .unwrap();
    assert_eq!(
        head.split_whitespace().collect::<Vec<_>>(),
        [
            "group",
            "records",
            "parsed",
            "parse_failed",
            "truncated",
            "errors",
            "parsed_rate",
            "parse_failure_rate",
            "truncated_rate",
            "error_rate"
        ]
    );
    let overall = t
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("overall"))
        .unwrap();
    // 1/75 = 0.013333, 45/75 = 0.6, 29/75 = 0.386667.
    assert_eq!(
        overall.split_whitespace().collect::<Vec<_>>(),
        ["overall", "75", "1", "45", "29", "0", "0.013333", "0.600000", "0.386667", "0.000000"]
    );
}

/// The real replies of gemma3-270m to `stats mcq run data/mcq/sample.jsonl --prompt
/// informative --max-tokens 8` (tests/fixtures/real/mcq_truncated.jsonl, 25 calls, every
/// one cut off by the token limit), replayed: none parsed, all 25 truncated, rates of all
/// 25 lines.
#[test]
fn real_replies_cut_off_by_the_token_limit_count_as_truncated_not_parsed() {
    use std::collections::HashMap;
    use support::llm_server::{Reply, Server};
    let recorded: HashMap<String, String> =
        std::fs::read_to_string("tests/fixtures/real/mcq_truncated.jsonl")
            .unwrap()
            .lines()
            .map(|l| {
                let r: Value = serde_json::from_str(l).unwrap();
                let prompt = r["request"]["messages"][0]["content"].as_str().unwrap();
                (prompt.to_string(), r["response"].to_string())
            })
            .collect();
    assert_eq!(recorded.len(), 25);
    let server = Server::start(move |req, _| match recorded.get(&req.prompt) {
        Some(body) => Reply::status(200, body),
        None => Reply::status(500, "{\"error\": \"no recorded reply\"}"),
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("truncated.jsonl");
    run_ok(
        stats()
            .args(["mcq", "run", "data/mcq/sample.jsonl"])
            .args(["--model", "gemma3-270m", "--prompt", "informative"])
            .args(["--max-tokens", "8", "--max-retries", "0", "--no-cache"])
            .args(["--base-url", &server.base])
            .arg("--out")
            .arg(&out),
    );
    assert_eq!(server.count(), 25);
    let v = json_of(&mut score(&out, "json"));
    let r = rates(&v, "overall");
    assert_eq!(
        [
            &r["records"],
            &r["parsed"],
            &r["parse_failed"],
            &r["truncated"],
            &r["errors"]
        ],
        [&json!(25), &json!(0), &json!(0), &json!(25), &json!(0)],
        "{r}"
    );
    assert_eq!(r["truncated_rate"], 1.0);
    assert_eq!(r["parsed_rate"], 0.0);
    assert_eq!(r["parse_failure_rate"], 0.0);
}
