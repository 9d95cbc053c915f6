//! Cost accounting on a ledger small enough to bill by hand.

use crate::common;

use common::{json, stats, write};
use predicates::prelude::*;

const LEDGER: &str = r#"{"kind":"planner","dataset":"h","question":"q1","arm":"open","trajectory":0,"model":"m","input_tokens":1000,"cached_input_tokens":600,"output_tokens":50,"key":"plan0:q1:0"}
{"kind":"planner","dataset":"h","question":"q1","arm":"adaptive","trajectory":0,"model":"m","input_tokens":1000,"cached_input_tokens":600,"output_tokens":50,"key":"plan0:q1:0"}
{"kind":"planner","dataset":"h","question":"q1","arm":"adaptive","trajectory":0,"model":"m","input_tokens":2000,"cached_input_tokens":0,"output_tokens":100}
{"kind":"search","dataset":"h","question":"q1","arm":"open","trajectory":0,"key":"s0:q1:0"}
{"kind":"search","dataset":"h","question":"q1","arm":"adaptive","trajectory":0,"key":"s0:q1:0"}
{"kind":"search","dataset":"h","question":"q1","arm":"adaptive","trajectory":0}
{"kind":"reader","dataset":"h","question":"q1","arm":"open","trajectory":0,"read":0,"model":"m","input_tokens":4000,"cached_input_tokens":4000,"output_tokens":10}
{"kind":"reader","dataset":"h","question":"q1","arm":"adaptive","trajectory":0,"read":0,"model":"m","input_tokens":5000,"output_tokens":20}
"#;

const PRICES: &str = "[models.m]\ninput = 1.0\ncached_input = 0.25\noutput = 4.0\n\n[search]\nusd_per_1000 = 2.0\nsweep_usd_per_1000 = [0.0, 2.0]\n";

fn setup() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let l = write(&dir, "ledger.jsonl", LEDGER);
    let p = write(&dir, "prices.toml", PRICES);
    let (l, p) = (
        l.to_str().unwrap().to_string(),
        p.to_str().unwrap().to_string(),
    );
    (dir, l, p)
}

#[test]
fn hand_computed_costs_with_shared_keys_and_cached_tokens() {
    let (_d, l, p) = setup();
    let v = json(&["cost", &l, "--prices", &p, "--format", "json"]);
    let t = &v["total"];
    // Billed model calls: the shared planner call once, the second planner call, two readers.
    assert_eq!(t["model_calls"], 4);
    // Input 1000 + 2000 + 4000 + 5000; cached 600 + 4000; output 50 + 100 + 10 + 20.
    assert_eq!(t["input_tokens"], 12000);
    assert_eq!(t["cached_input_tokens"], 4600);
    assert_eq!(t["output_tokens"], 180);
    assert_eq!(t["model_tokens"], 12180);
    // Fees (USD per 1M): shared planner (400·1 + 600·0.25 + 50·4) = 750; planner 2 (2000 + 400) = 2400;
    // reader open (0 + 4000·0.25 + 40) = 1040; reader adaptive (5000 + 80) = 5080. Sum 9270 → $0.00927.
    assert!((t["model_usd"].as_f64().unwrap() - 0.00927).abs() < 1e-12);
    // Two unique searches; at $2/1k they cost $0.004.
    assert_eq!(t["search_requests"], 2);
    let total: Vec<f64> = t["total_usd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!((total[0] - 0.00927).abs() < 1e-12 && (total[1] - 0.01327).abs() < 1e-12);
    // One trajectory cell, one read cell (both arms together).
    let u = &v["unit_costs"];
    assert_eq!(u["trajectories"], 1);
    assert_eq!(u["reads"], 1);
    // c_T tokens = 1050 + 2100 = 3150; c_R = 4010 + 5020 = 9030.
    assert_eq!(u["tokens"]["trajectory"], 3150.0);
    assert_eq!(u["tokens"]["read"], 9030.0);
    // c_T dollars = (750 + 2400)/1e6 + 2 searches · $0.002 = 0.00715; c_R = 0.00612.
    assert!((u["usd"]["trajectory"].as_f64().unwrap() - 0.00715).abs() < 1e-12);
    assert!((u["usd"]["read"].as_f64().unwrap() - 0.00612).abs() < 1e-12);
    // Per arm: the planner call and search shared by both arms are reported under the arm
    // `shared`, whatever the line order; each arm keeps only its own calls.
    let groups = v["groups"].as_array().unwrap();
    let arm = |a: &str| groups.iter().find(|g| g["arm"] == a).unwrap().clone();
    let (open, adaptive, shared) = (arm("open"), arm("adaptive"), arm("shared"));
    assert_eq!(shared["dataset"], "h");
    assert_eq!(shared["search_requests"], 1);
    assert_eq!(shared["model_calls"], 1);
    assert_eq!(shared["model_tokens"], 1050);
    assert_eq!(open["search_requests"], 0);
    assert_eq!(open["model_calls"], 1);
    assert_eq!(open["model_tokens"], 4010);
    assert_eq!(adaptive["search_requests"], 1);
    assert_eq!(adaptive["model_calls"], 2);
    assert_eq!(adaptive["model_tokens"], 2100 + 5020);
}

/// Issue #13 item 6: the attribution of shared calls does not depend on line order, and two
/// rows with one key but different token counts are refused naming both lines.
#[test]
fn shared_calls_are_attributed_independently_of_line_order() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<&str> = LEDGER.lines().collect();
    let run = |ledger: &str| {
        let l = write(&dir, "l.jsonl", ledger);
        let out = stats()
            .args(["cost", l.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["groups"].clone()
    };
    let forward = run(&(lines.join("\n") + "\n"));
    let mut rev = lines.clone();
    rev.reverse();
    assert_eq!(run(&(rev.join("\n") + "\n")), forward);
    // A key shared by two arms and two questions: one call under `shared`.
    let two = "{\"kind\":\"planner\",\"dataset\":\"h\",\"question\":\"q1\",\"arm\":\"a\",\"trajectory\":0,\"model\":\"m\",\"input_tokens\":900,\"output_tokens\":100,\"key\":\"k\"}\n{\"kind\":\"planner\",\"dataset\":\"h\",\"question\":\"q2\",\"arm\":\"b\",\"trajectory\":0,\"model\":\"m\",\"input_tokens\":900,\"output_tokens\":100,\"key\":\"k\"}\n";
    let g = run(two);
    assert_eq!(g.as_array().unwrap().len(), 1, "{g}");
    assert_eq!(g[0]["arm"], "shared");
    assert_eq!(g[0]["model_tokens"], 1000);
    // Same key, different token counts: exit 2 naming both lines.
    let bad = two.replacen(
        "\"output_tokens\":100,\"key\"",
        "\"output_tokens\":101,\"key\"",
        1,
    );
    let l = write(&dir, "bad.jsonl", &bad);
    let out = stats()
        .args(["cost", l.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.jsonl:2: key 'k' is shared with line 1, but the rows differ: line 1 has planner call, model m, input_tokens 900, cached_input_tokens unknown, output_tokens 101; line 2 has planner call, model m, input_tokens 900, cached_input_tokens unknown, output_tokens 100"),
        "{err}"
    );
}

#[test]
fn sweep_flag_and_errors() {
    let (dir, l, p) = setup();
    stats()
        .args([
            "cost",
            &l,
            "--prices",
            &p,
            "--search-price",
            "0:1:0.25",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("total_usd_at_search_0.75"));
    let no_price = write(&dir, "p2.toml", "[models.other]\ninput = 1\noutput = 1\n");
    stats()
        .args(["cost", &l, "--prices", no_price.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "ledger.jsonl:1: model 'm' has no price",
        ));
    let bad = write(&dir, "bad.jsonl", "{\"kind\":\"planner\",\"model\":\"m\",\"input_tokens\":5,\"cached_input_tokens\":9}\n{\"kind\":\"x\"}\n");
    stats()
        .args(["cost", bad.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "bad.jsonl:1: cached_input_tokens (9) exceed input_tokens (5)",
        ));
    stats()
        .args(["cost", &l, "--search-price", "1:0:0.5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected START:STOP:STEP"));
}
