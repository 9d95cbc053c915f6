//! Issue #30 item 5, on real replies: tests/fixtures/real/judge.jsonl holds the 142 judge
//! calls `stats judge` made to gemma3-270m on llama.cpp (README there: records 0–8 from a
//! real run's log, 9–141 from data/mcq/generated/trajectories.jsonl with `--seed` 1…7, 19
//! calls each). Main at 5ebf4fa read 3 scores from them, all false (68 and 84 echo the
//! rubric's scale, 126 is a numbered list cut off at `8`). Checked by hand: no reply holds
//! a score of the model's own, so every one is a failure with its reason, here and in
//! `judged.jsonl` when `stats judge` is replayed against them.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use ragstats_agent::judge::{parse_reply, rubric_lines, EXTRACTION_TEMPLATE, REASONING_TEMPLATE};
use serde_json::Value;

use crate::support::cli::{jsonl, mcq_demo, run_ok, stats};
use crate::support::llm_server::{Reply, Server};

fn records() -> Vec<Value> {
    std::fs::read_to_string("tests/fixtures/real/judge.jsonl")
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn prompt(r: &Value) -> &str {
    r["request"]["messages"][0]["content"].as_str().unwrap()
}

fn reply(r: &Value) -> &str {
    r["response"]["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
}

/// What the judge makes of record `r`: the rubric comes from the prompt it was sent.
fn read(r: &Value) -> Result<f64, String> {
    let p = prompt(r);
    let template = if p.contains("# The system's thought at this step\n") {
        REASONING_TEMPLATE
    } else {
        EXTRACTION_TEMPLATE
    };
    let rubric = rubric_lines(template, p);
    // Every prompt holds its template's fixed lines: 8 of reasoning, 7 of extraction.
    assert_eq!(
        rubric.len(),
        if template == REASONING_TEMPLATE { 8 } else { 7 }
    );
    parse_reply(reply(r), &rubric)
}

const NO_SCORE: &str = "no score found in the reply";

/// The reasons of the replies that are not a plain `no score found`, by record.
fn expected_reasons() -> HashMap<usize, String> {
    let echo = |line: &str| format!("{NO_SCORE}: its last line copies the prompt's {line:?}");
    let format_line = echo("Score: <integer from 1 to 10>");
    let copy = |run: &str| {
        format!(
            "the score line copies the judge prompt's rubric ({run:?}), it does not score the step"
        )
    };
    let list = |l: &str| format!("the last line {l:?} is a list item, not a score");
    HashMap::from([
        // `Score: 5 when the action contradicts the thought, or the thought is not supported
        // by what was found; <integer>` (and above it `Score: 10 when the action follows
        // directly …`): the scale "1 when the action contradicts the thought, or the
        // thought rests on …" with other numbers put in. Main read 5.
        (
            68,
            copy("5 when the action contradicts the thought or the thought"),
        ),
        // `Score 10 when every piece of information used by the system is ignored or
        // irrelevant.`: "10 when every piece of the observation …". Main read 10.
        (84, copy("10 when every piece of")),
        // A numbered list of invented options cut off by the token limit after `7. …` at
        // `8`. Main read 8.
        (126, list("8")),
        // Ends `# 9. If you chose to go with a grounded reason…`.
        (134, list("9. if you chose to go with a grounded re…")),
        // Ends by repeating the scale line, or the format line, or a heading.
        (
            24,
            echo("Score the step from 1 to 10: 10 when the action follows dire…"),
        ),
        (26, format_line.clone()),
        (31, format_line.clone()),
        (89, format_line.clone()),
        (96, format_line.clone()),
        (136, format_line),
        (9, echo("# The action it took")),
        (22, echo("# The action it took")),
    ])
}

#[test]
fn no_real_reply_is_read_as_a_score_and_each_says_why() {
    let recs = records();
    assert_eq!(recs.len(), 142);
    let special = expected_reasons();
    for (i, r) in recs.iter().enumerate() {
        let want = special.get(&i).cloned().unwrap_or_else(|| NO_SCORE.into());
        assert_eq!(read(r), Err(want), "record {i}: {:?}", reply(r));
    }
}

/// `stats judge` of the demo log with `--seed S`, answered with the recorded replies of
/// that seed (records 9–141). Calls with the same prompt and seed are answered in
/// recording order (which of two such units gets which reply is not fixed: compared as
/// multisets).
#[test]
fn replayed_judge_runs_record_every_refusal_in_judged_jsonl() {
    let recs = records();
    let mut queues: HashMap<(String, u64), VecDeque<String>> = HashMap::new();
    let mut want: Vec<String> = Vec::new();
    for r in &recs[9..] {
        let seed = r["request"]["seed"].as_u64().unwrap();
        queues
            .entry((prompt(r).to_string(), seed))
            .or_default()
            .push_back(r["response"].to_string());
        // `stats judge` adds to a failure that the reply was cut, when it was.
        let cut = r["response"]["choices"][0]["finish_reason"] == "length";
        let why = read(r).unwrap_err();
        want.push(if cut {
            format!("{why} (the reply was cut at max_tokens: finish_reason length)")
        } else {
            why
        });
    }
    let queues = Mutex::new(queues);
    let server = Server::start(move |req, _| {
        let key = (req.prompt.clone(), req.body["seed"].as_u64().unwrap());
        match queues
            .lock()
            .unwrap()
            .get_mut(&key)
            .and_then(VecDeque::pop_front)
        {
            Some(body) => Reply::status(200, &body),
            None => Reply::status(500, "{\"error\": \"no recorded reply for this call\"}"),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let mut got: Vec<String> = Vec::new();
    for seed in 1..=7 {
        let out = dir.path().join(format!("judged-{seed}.jsonl"));
        run_ok(
            stats()
                .arg("judge")
                .arg(mcq_demo("trajectories.jsonl"))
                .args([
                    "--model",
                    "gemma3-270m",
                    "--max-tokens",
                    "256",
                    "--seed",
                    &seed.to_string(),
                    "--base-url",
                    &server.base,
                    "--no-cache",
                    "--max-retries",
                    "0",
                ])
                .arg("--out")
                .arg(&out),
        );
        for j in jsonl(&out) {
            assert!(j["judge_score"].is_null(), "{j}");
            for s in j["steps"].as_array().unwrap() {
                assert!(s["score"].is_null(), "{s}");
                let f = s["failure"].as_str().unwrap();
                // The unit with no parsed action is not a call.
                if !f.starts_with("not judged") {
                    got.push(f.to_string());
                }
            }
        }
    }
    assert_eq!(server.count(), 133);
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(
        got.iter()
            .filter(|f| f.starts_with("the score line copies"))
            .count(),
        2
    );
}
