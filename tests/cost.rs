//! Cost accounting on a ledger small enough to bill by hand.

mod common;

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
    // Per arm: the shared planner call and search are billed to the first arm (open).
    let groups = v["groups"].as_array().unwrap();
    let open = groups.iter().find(|g| g["arm"] == "open").unwrap();
    assert_eq!(open["search_requests"], 1);
    assert_eq!(open["model_calls"], 2);
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
