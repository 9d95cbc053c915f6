//! The shipped demo `data/mcq/generated/` is what `stats mcq generate` makes from the shipped
//! fixture log with the scripted model of `replies.jsonl` (served by a local HTTP server).
//! `STATS_BLESS=1 cargo test --test it mcqgen_demo::` rewrites items.jsonl and items.skipped.jsonl.

use crate::support;

use serde_json::Value;
use support::cli::{mcq_demo as demo, run_ok, stats};
use support::llm_server::{ok_reply, Server};

#[test]
fn demo_items_are_what_generate_makes() {
    let replies: Vec<(String, String)> = std::fs::read_to_string(demo("replies.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["match"].as_str().unwrap().to_string(),
                v["reply"].to_string(),
            )
        })
        .collect();
    let server = Server::start(move |req, _| {
        let (_, text) = replies
            .iter()
            .find(|(m, _)| req.prompt.contains(m.as_str()))
            .unwrap_or_else(|| panic!("no scripted reply for prompt:\n{}", req.prompt));
        ok_reply(text)
    });
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        stats()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "mcq",
                "generate",
                "data/mcq/generated/trajectories.jsonl",
                "--tasks",
                "all",
            ])
            .args(["--credibility", "data/mcq/generated/credibility.csv"])
            .args([
                "--model",
                "scripted-generator",
                "--base-url",
                &server.base,
                "--no-cache",
            ])
            .arg("--out")
            .arg(dir.path().join("items.jsonl")),
    );
    assert_eq!(server.count(), 10);
    for name in ["items.jsonl", "items.skipped.jsonl"] {
        let got = std::fs::read_to_string(dir.path().join(name)).unwrap();
        if std::env::var_os("STATS_BLESS").is_some() {
            std::fs::write(demo(name), &got).unwrap();
        }
        let want = std::fs::read_to_string(demo(name)).unwrap();
        assert!(
            got == want,
            "{name} differs from the shipped demo (STATS_BLESS=1 to rewrite)"
        );
    }
    let table = run_ok(stats().args(["mcq", "validate"]).arg(demo("items.jsonl")));
    assert!(
        table.contains("items.jsonl: 21 item(s), no violations"),
        "{table}"
    );
    for (group, n) in [
        ("planning-convergent", 4),
        ("planning-divergent", 3),
        ("evidence_extraction", 5),
        ("grounded_reasoning", 3),
        ("noise-abstain", 5),
        ("noise-reliability", 1),
    ] {
        assert!(
            table
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [group, &n.to_string()]),
            "{group} {n}\n{table}"
        );
    }
}
