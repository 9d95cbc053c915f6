//! Issue #14 replayed: the responses a weak real model gave (tests/fixtures/mcq/real/),
//! served by a scripted HTTP server to `stats mcq run`, then scored, costed and checked to
//! the item: no echoed example, `or` list, closing question or cut-off label earns credit.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::cli::{item_of, json_of, jsonl, mcq_run, mcq_score_json, run_ok, stats};
use support::llm_server::{Reply, Server};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcq/real")
        .join(name)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Item index (r1 → 0) and id from the prompt's `QUERY-<id>`.
fn item_index(prompt: &str) -> (usize, String) {
    let id = item_of(prompt);
    (id[1..].parse::<usize>().unwrap() - 1, id)
}

/// A chat completion with `text`, `finish_reason`, and usage prompt 100 + 10·item,
/// completion 5 + run.
fn reply(text: &str, finish: &str, item: usize, run: u64) -> Reply {
    let (p, c) = (100 + 10 * item as u64, 5 + run);
    let body = json!({
        "id": "chatcmpl-real", "object": "chat.completion", "created": 1, "model": "gemma-3-270m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    });
    Reply::status(200, &body.to_string())
}

fn row<'a>(rows: &'a [Value], key: &str, name: &str) -> &'a Value {
    rows.iter()
        .find(|r| r[key] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn real_responses_score_to_the_item() {
    let fx: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("responses.json")).unwrap()).unwrap();
    let responses = fx["responses"].as_array().unwrap().clone();
    assert_eq!(responses.len(), 12);
    let script = responses.clone();
    let server = Server::start(move |req, _| {
        let (idx, id) = item_index(&req.prompt);
        let run = req.body["seed"].as_u64().unwrap() - 100;
        let r = script
            .iter()
            .find(|r| r["item"] == id.as_str() && r["run"] == run)
            .unwrap();
        reply(
            r["text"].as_str().unwrap(),
            r["finish_reason"].as_str().unwrap(),
            idx,
            run,
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gemma.jsonl");
    let ledger = dir.path().join("gemma.ledger.jsonl");
    run_ok(
        mcq_run(&fixture("items.jsonl"), "gemma-3-270m", &out, &server.base)
            .arg("--ledger")
            .arg(&ledger),
    );
    assert_eq!(server.count(), 12);

    // Every line's outcome and finish_reason, as the fixture says.
    let results = jsonl(&out);
    assert_eq!(results.len(), 12);
    for want in &responses {
        let got = results
            .iter()
            .find(|r| r["id"] == want["item"] && r["run"] == want["run"])
            .unwrap();
        assert_eq!(got["outcome"], want["want"], "{}: {got}", want["why"]);
        assert_eq!(got["finish_reason"], want["finish_reason"]);
    }
    let answer = |id: &str, run: u64| {
        results
            .iter()
            .find(|r| r["id"] == id && r["run"] == run)
            .unwrap()["answer"]
            .clone()
    };
    assert_eq!(answer("r3", 1), json!(["B"]));
    assert_eq!(answer("r5", 0), json!(["B"]));
    assert_eq!(answer("r5", 1), json!(["B", "D"]));
    assert_eq!(answer("r6", 0), json!(["B", "D"]));
    assert_eq!(answer("r6", 1), json!(["C"]));

    // Scores by hand (failures score 0). Per item (run 0; run 1) as (EM, F1):
    // r1 (0,0; 1,1), r6 (1,1; 0,0): planning 0.5, 0.5. r2 (0,0; 1,1): evidence 0.5, 0.5.
    // r3 (0,0; 1,1): grounded 0.5, 0.5. r4 (0,0; 0,0) abstain 0, 0; r5 (0,2/3; 1,1)
    // reliability 0.5, 5/6: noise 0.25, 5/12. Overall EM 1.75/4, F1 (1.5 + 5/12)/4.
    let v: Value = mcq_score_json(&out, 100, &[]);
    let scores = v["scores"].as_array().unwrap();
    for (name, em, f1) in [
        ("planning", 0.5, 0.5),
        ("evidence_extraction", 0.5, 0.5),
        ("grounded_reasoning", 0.5, 0.5),
        ("noise_robustness", 0.25, 5.0 / 12.0),
        ("overall", 1.75 / 4.0, (1.5 + 5.0 / 12.0) / 4.0),
    ] {
        let r = row(scores, "name", name);
        assert!(
            close(r["em"]["estimate"].as_f64().unwrap(), em),
            "{name}: {r}"
        );
        assert!(
            close(r["f1"]["estimate"].as_f64().unwrap(), f1),
            "{name}: {r}"
        );
    }
    let rates = v["rates"].as_array().unwrap();
    let counts = |g: &str| {
        let r = row(rates, "group", g);
        [
            &r["records"],
            &r["parse_failed"],
            &r["truncated"],
            &r["errors"],
        ]
        .map(|x| x.as_u64().unwrap())
    };
    assert_eq!(counts("overall"), [12, 3, 2, 0]);
    assert_eq!(counts("noise-abstain"), [2, 0, 2, 0]);
    assert_eq!(counts("evidence_extraction"), [2, 1, 0, 0]);
    // The table says it too.
    let table = run_ok(stats().args(["mcq", "score"]).arg(&out).args([
        "--backend",
        "cpu",
        "--replicates",
        "100",
    ]));
    assert!(table.contains("truncated"), "{table}");

    // Ledger rows say which item, group, run and prompt they paid for.
    let rows = jsonl(&ledger);
    assert_eq!(rows.len(), 12);
    let r = rows.iter().find(|r| r["id"] == "r4#run1").unwrap();
    assert!(rows.iter().all(|r| r["kind"] == "mcq"));
    assert_eq!(
        (
            &r["item"],
            &r["group"],
            &r["run"],
            &r["prompt"],
            &r["input_tokens"],
            &r["output_tokens"]
        ),
        (
            &json!("r4"),
            &json!("noise-abstain"),
            &json!(1),
            &json!("bare"),
            &json!(130),
            &json!(6)
        )
    );

    // `stats mcq cost`: input 100 + 10·i per call, output 5 + run.
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[models.\"gemma-3-270m\"]\ninput = 1.0\noutput = 2.0\n",
    )
    .unwrap();
    let c: Value = json_of(
        stats()
            .args(["mcq", "cost"])
            .arg(&ledger)
            .arg("--prices")
            .arg(&prices)
            .args(["--format", "json"]),
    );
    let rows = c["rows"].as_array().unwrap();
    let find = |level: &str, name: &str| {
        rows.iter()
            .find(|r| r["level"] == level && r["name"] == name)
            .unwrap_or_else(|| panic!("no {level} {name} in {c}"))
    };
    let r1 = find("item", "r1");
    assert_eq!(
        (
            r1["calls"].as_u64(),
            r1["input_tokens"].as_u64(),
            r1["output_tokens"].as_u64()
        ),
        (Some(2), Some(200), Some(11))
    );
    // Planning = r1 + r6: input 200 + 300, output 11 + 11.
    let p = find("task", "planning");
    assert_eq!(
        (p["input_tokens"].as_u64(), p["output_tokens"].as_u64()),
        (Some(500), Some(22))
    );
    let run1 = find("run", "1");
    assert_eq!(
        (
            run1["calls"].as_u64(),
            run1["input_tokens"].as_u64(),
            run1["output_tokens"].as_u64()
        ),
        (Some(6), Some(750), Some(36))
    );
    let all = find("overall", "all");
    assert_eq!(
        (all["input_tokens"].as_u64(), all["output_tokens"].as_u64()),
        (Some(1500), Some(66))
    );
    assert!(close(
        all["usd"].as_f64().unwrap(),
        (1500.0 + 2.0 * 66.0) / 1e6
    ));
    assert!(close(
        all["tokens_per_call"].as_f64().unwrap(),
        1566.0 / 12.0
    ));

    // `stats cost` on the same ledger explains instead of printing NaN or a lumped c_R.
    let t = run_ok(stats().arg("cost").arg(&ledger));
    assert!(!t.contains("NaN"), "{t}");
    assert!(
        t.contains("c_T: not computed: no planner or search rows"),
        "{t}"
    );
    assert!(
        // `mcq run` bills its calls as kind `mcq`: none is a read (docs/ledger.md).
        t.contains("c_R: not computed: no reader rows, so there is no read cost (12 generator, judge or mcq row(s)")
            && t.contains("stats mcq cost"),
        "{t}"
    );
    let j: Value = json_of(stats().arg("cost").arg(&ledger).args(["--format", "json"]));
    assert!(j["unit_costs"]["read_note"]
        .as_str()
        .unwrap()
        .contains("mcq run"));
}

/// Issue #14 item 7: `mcq run` with a bad key names the key variable, like `llm batch`.
#[test]
fn a_bad_key_names_the_variable() {
    let server = Server::start(|_, _| {
        Reply::status(
            401,
            "{\"error\":{\"message\":\"Incorrect API key provided\"}}",
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let o = stats()
        .args(["mcq", "run"])
        .arg(fixture("items.jsonl"))
        .args(["--model", "m", "--max-retries", "0", "--no-cache", "--out"])
        .arg(dir.path().join("o.jsonl"))
        .env("OPENAI_BASE_URL", &server.base)
        .env("OPENAI_API_KEY", "sk-bad")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("check the key in $OPENAI_API_KEY"),
        "{stderr}"
    );
}
