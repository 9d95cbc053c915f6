//! `stats efficiency --currency tokens,usd`: the fixed-T loss (and every other figure) in
//! tokens and in fees from one run, each section the same as its own run.

use crate::common;

use common::{json, stats};

const BASE: [&str; 12] = [
    "efficiency",
    "data/demo/panel.csv",
    "--contrast",
    "adaptive-open",
    "--ledger",
    "data/demo/ledger.jsonl",
    "--prices",
    "data/demo/prices.toml",
    "--replicates",
    "200",
    "--backend",
    "cpu",
];

#[test]
fn tokens_and_fees_in_one_run_match_two_runs() {
    let run = |currency: &str, format: &str| -> Vec<u8> {
        let out = stats()
            .args(BASE)
            .args(["--currency", currency, "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let both = json(&[&BASE[..], &["--currency", "tokens,usd", "--format", "json"]].concat());
    assert_eq!(both["by"], "currency");
    let results = both["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for (r, (name, currency)) in results.iter().zip([("tokens", "tokens"), ("USD", "usd")]) {
        assert_eq!(r["currency"], name);
        let alone: serde_json::Value = serde_json::from_slice(&run(currency, "json")).unwrap();
        assert_eq!(both["run"], alone["run"], "{currency}");
        assert_eq!(r["result"], common::body(alone), "{currency}");
        assert_eq!(r["result"]["currency"], name);
    }
    // The sections are not copies: unit costs and R*_T differ between tokens and fees.
    let at = |i: usize, k: &str| results[i]["result"]["strata"][0][k].clone();
    assert_ne!(at(0, "unit_costs"), at(1, "unit_costs"));
    assert_ne!(at(0, "fixed_t"), at(1, "fixed_t"));
    // Tables one after the other; CSV rows with a leading currency column.
    let table = String::from_utf8(run("tokens,usd", "table")).unwrap();
    let tokens = String::from_utf8(run("tokens", "table")).unwrap();
    let usd = String::from_utf8(run("usd", "table")).unwrap();
    assert_eq!(
        table,
        format!("currency: tokens\n{tokens}\ncurrency: USD\n{usd}")
    );
    let csv = String::from_utf8(run("tokens,usd", "csv")).unwrap();
    let alone = String::from_utf8(run("usd", "csv")).unwrap();
    let mut alone = alone.lines();
    assert_eq!(
        csv.lines().next().unwrap(),
        format!("currency,{}", alone.next().unwrap())
    );
    for l in alone {
        assert!(csv.contains(&format!("\nUSD,{l}\n")), "{l}");
    }
    // Repeated flags work as the list does.
    stats()
        .args(BASE)
        .args([
            "--currency",
            "tokens",
            "--currency",
            "usd",
            "--format",
            "json",
        ])
        .assert()
        .success();
}
