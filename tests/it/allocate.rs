//! Allocation comparisons: measured SEs of nested sub-panels, and intervals that resolve a
//! real SE difference on a large panel but not on a tiny one.

use crate::common;

use common::{json, stats, write, XorShift};

/// Writes a single-stratum panel (Q questions, T=2, R=2, no arms) and a ledger where every
/// trajectory costs 100 tokens and every read 50, with one search per trajectory.
fn write_panel(dir: &tempfile::TempDir, q: usize, seed: u64) -> (String, String, String) {
    let mut x = XorShift(seed);
    let mut next = || x.grid(100_000);
    let mut panel = String::from("dataset,question,trajectory,read,f1\n");
    let mut ledger = String::new();
    for qi in 0..q {
        let a = next();
        for t in 0..2 {
            let b = 0.2 * next();
            ledger.push_str(&format!("{{\"kind\":\"planner\",\"dataset\":\"d\",\"question\":\"q{qi}\",\"trajectory\":{t},\"model\":\"m\",\"input_tokens\":90,\"output_tokens\":10}}\n"));
            ledger.push_str(&format!("{{\"kind\":\"search\",\"dataset\":\"d\",\"question\":\"q{qi}\",\"trajectory\":{t}}}\n"));
            for r in 0..2 {
                let y = a + b + 0.1 * next();
                panel.push_str(&format!("d,q{qi},{t},{r},{y:.6}\n"));
                ledger.push_str(&format!("{{\"kind\":\"reader\",\"dataset\":\"d\",\"question\":\"q{qi}\",\"trajectory\":{t},\"read\":{r},\"model\":\"m\",\"input_tokens\":45,\"output_tokens\":5}}\n"));
            }
        }
    }
    let w = |name: &str, text: &str| write(dir, name, text).to_str().unwrap().to_string();
    (
        w("panel.csv", &panel),
        w("ledger.jsonl", &ledger),
        w(
            "prices.toml",
            "[models.m]\ninput = 1\noutput = 2\n[search]\nusd_per_1000 = 1\n",
        ),
    )
}

fn allocate(p: &(String, String, String), allocs: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "allocate",
        &p.0,
        "--ledger",
        &p.1,
        "--prices",
        &p.2,
        "--backend",
        "cpu",
        "--replicates",
        "2000",
        "--format",
        "json",
    ];
    for a in allocs {
        args.push("--allocation");
        args.push(a);
    }
    json(&args)
}

#[test]
fn measured_se_and_costs_of_nested_allocations() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_panel(&dir, 30, 5);
    let v = allocate(&p, &["A=30:1:1", "B=12:2:2"]);
    let a = &v["allocations"][0];
    let b = &v["allocations"][1];
    // Costs: A = 30 questions × (100 + 50) tokens; B = 12 × (2·100 + 4·50).
    assert_eq!(a["model_tokens"], 4500.0);
    assert_eq!(b["model_tokens"], 4800.0);
    // Fees at $1/1k searches: tokens at $1/M in, $2/M out; A: 30·(90+45)·1 + 30·(10+5)·2 = 4950 µ$ + 30 searches.
    assert!((a["fees_usd"][0].as_f64().unwrap() - (4950e-6 + 0.030)).abs() < 1e-12);
    // The SE of A by hand: question means are the (t0, r0) cells of the first 30 questions.
    let text = std::fs::read_to_string(&p.0).unwrap();
    let cells: Vec<f64> = text
        .lines()
        .skip(1)
        .filter(|l| l.contains(",0,0,"))
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    let n = cells.len() as f64;
    let m = cells.iter().sum::<f64>() / n;
    let se = (cells.iter().map(|c| (c - m).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
    assert!((a["se"].as_f64().unwrap() - se).abs() < 1e-12);
    let pair = &v["pairs"][0];
    let red = pair["se_reduction"]["value"].as_f64().unwrap();
    assert!((red - (1.0 - a["se"].as_f64().unwrap() / b["se"].as_f64().unwrap())).abs() < 1e-12);
}

#[test]
fn intervals_resolve_large_panels_and_not_tiny_ones() {
    // B has a quarter of A's questions at the same T and R: its SE is about twice A's.
    let dir = tempfile::tempdir().unwrap();
    let big = write_panel(&dir, 1200, 11);
    let v = allocate(&big, &["A=1200:1:1", "B=300:1:1"]);
    let c = &v["pairs"][0]["se_reduction"];
    assert_eq!(c["resolved"], true, "{c}");
    assert!(c["ci"][0].as_f64().unwrap() > 0.0);
    let dir2 = tempfile::tempdir().unwrap();
    let tiny = write_panel(&dir2, 8, 11);
    let v = allocate(&tiny, &["A=8:1:1", "B=6:1:1"]);
    let c = &v["pairs"][0]["se_reduction"];
    assert_eq!(c["resolved"], false, "{c}");
    assert!(c["ci"][0].as_f64().unwrap() < 0.0 && c["ci"][1].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_allocations_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_panel(&dir, 10, 3);
    for (alloc, needle) in [
        ("A=11:1:1", "asks for 11 questions"),
        ("A=10:3:1", "3 trajectories"),
        ("A=10:1", "expected NAME=Q:T:R"),
    ] {
        stats()
            .args([
                "allocate",
                &p.0,
                "--ledger",
                &p.1,
                "--prices",
                &p.2,
                "--allocation",
                alloc,
                "--allocation",
                "B=5:1:1",
            ])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(needle));
    }
}
