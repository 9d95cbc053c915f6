//! Issue #30: gemma3-270m's real generator replies (tests/fixtures/real/generate.jsonl,
//! README there) replayed to `stats mcq generate` as recorded. Two of them copy the
//! planning template's reply format — record 48 verbatim, record 11 nearly (`"<answer>
//! now?"`) — and were rejected only for having one wrong option; now the skipped file says
//! they copy the template's placeholder.

use crate::support;

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use support::cli::{jsonl, mcq_demo, stats};
use support::llm_server::{Reply, Server};

/// Records `range` of generate.jsonl, served by request body (every generation prompt of a
/// seed differs), 500 for a body never recorded.
fn replay(range: std::ops::Range<usize>) -> Server {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real/generate.jsonl");
    let by_body: HashMap<String, String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect::<Vec<_>>()[range]
        .iter()
        .map(|r| (r["request"].to_string(), r["response"].to_string()))
        .collect();
    assert_eq!(by_body.len(), 10);
    Server::start(move |seen, _| match by_body.get(&seen.body.to_string()) {
        Some(body) => Reply::status(200, body),
        None => Reply::status(500, "{\"error\": \"not recorded\"}"),
    })
}

const CUT: &str = " (the reply was cut at max_tokens: finish_reason length)";

#[test]
fn real_replies_that_copy_the_reply_format_are_rejected_as_placeholders() {
    // (seed, its records, the copying unit: question, step, subtask).
    for (seed, range, question, step, subtask) in [
        (2, 10..20, "5a8718c25542991e771816c7", 0, "divergent"),
        (5, 40..50, "2hop__205146_62031", 1, "convergent"),
    ] {
        let server = replay(range);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("items.jsonl");
        let o = stats()
            .args(["mcq", "generate"])
            .arg(mcq_demo("trajectories.jsonl"))
            .args(["--tasks", "all", "--credibility"])
            .arg(mcq_demo("credibility.csv"))
            .args(["--model", "gemma3-270m", "--max-tokens", "512"])
            .args([
                "--seed",
                &seed.to_string(),
                "--no-cache",
                "--max-retries",
                "0",
            ])
            .args(["--base-url", &server.base, "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(server.count(), 10, "seed {seed}");
        let skipped = jsonl(&dir.path().join("items.skipped.jsonl"));
        let rejected: Vec<&Value> = skipped
            .iter()
            .filter(|s| s["reason"].as_str().unwrap().starts_with("rejected: "))
            .collect();
        assert_eq!(rejected.len(), 10, "seed {seed}: {skipped:?}");
        let copies: Vec<&&Value> = rejected
            .iter()
            .filter(|s| s["reason"].as_str().unwrap().contains("placeholder"))
            .collect();
        assert_eq!(copies.len(), 1, "seed {seed}: {rejected:?}");
        let c = copies[0];
        assert_eq!(
            c["reason"],
            format!(
                "rejected: the reply copies the template's placeholder \"<search query>\" in \
                 reformulation{CUT}"
            )
        );
        assert_eq!(
            (
                &c["task"],
                &c["subtask"],
                &c["source"]["question_id"],
                &c["source"]["step"]
            ),
            (
                &Value::from("planning"),
                &Value::from(subtask),
                &Value::from(question),
                &Value::from(step)
            ),
            "seed {seed}"
        );
        // The other nine have no JSON object (one of seed 2's stopped before the cap).
        let no_json = rejected
            .iter()
            .filter(|s| {
                let r = s["reason"].as_str().unwrap();
                r.starts_with("rejected: the reply is not the JSON object asked for")
            })
            .count();
        assert_eq!(no_json, 9, "seed {seed}: {rejected:?}");
        assert!(!rejected
            .iter()
            .any(|s| s["reason"].as_str().unwrap().contains("missing options")));
    }
}
