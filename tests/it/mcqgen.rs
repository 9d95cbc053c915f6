//! Issue #16, vanilla generation: items read off the shipped fixture log
//! (data/mcq/generated/trajectories.jsonl, hand-assembled from real HotpotQA and MuSiQue
//! questions and paragraphs; see its README) give exactly the expected items, golds and
//! skip reasons. No model is involved.

use ragstats_agent::mcqgen::vanilla::{
    abstain, evidence_extraction, reliability, CredibilityMap, ANSWER_OPTION, INSUFFICIENT_OPTION,
};
use ragstats_agent::mcqgen::{read_trajectories, Generated, Logged};
use ragstats_core::mcq::Polarity;

use crate::support::cli::mcq_demo as demo;

fn log() -> Vec<Logged> {
    read_trajectories(&demo("trajectories.jsonl")).unwrap()
}

const LELAND: &str = "5a8718c25542991e771816c7";
const GRACE: &str = "5ab3c131554299233954ff9c";
const BUBYE: &str = "2hop__205146_62031";

/// (id, option doc ids in order, gold labels) of every item.
fn shape(g: &Generated) -> Vec<(String, Vec<String>, Vec<String>)> {
    g.items
        .iter()
        .map(|it| {
            let m = it.meta.as_ref().unwrap();
            let docs = m["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    o["doc_id"]
                        .as_str()
                        .unwrap_or(o["origin"].as_str().unwrap())
                        .to_string()
                })
                .collect();
            (it.id.clone(), docs, it.answer.clone())
        })
        .collect()
}

fn owned(v: &[(&str, &[&str], &[&str])]) -> Vec<(String, Vec<String>, Vec<String>)> {
    v.iter()
        .map(|(id, d, a)| {
            (
                id.to_string(),
                d.iter().map(|s| s.to_string()).collect(),
                a.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect()
}

/// (question, arm, trajectory, step or selector, reason) of every skip.
fn skips(g: &Generated) -> Vec<(String, String, u32, String, String)> {
    g.skipped
        .iter()
        .map(|s| {
            let at = match (&s.source.step, &s.source.selector) {
                (Some(k), _) => format!("s{k}"),
                (None, Some(sel)) => sel.clone(),
                _ => String::new(),
            };
            (
                s.source.question_id.clone(),
                s.source.arm.clone(),
                s.source.trajectory,
                at,
                s.reason.clone(),
            )
        })
        .collect()
}

fn sk(q: &str, arm: &str, t: u32, at: &str, reason: &str) -> (String, String, u32, String, String) {
    (q.into(), arm.into(), t, at.into(), reason.into())
}

#[test]
fn evidence_extraction_items_and_golds() {
    let g = evidence_extraction(&log());
    let lel = &format!("ee-{LELAND}-adaptive-t0");
    let bub = &format!("ee-{BUBYE}-adaptive-t0");
    assert_eq!(
        shape(&g),
        owned(&[
            (
                &format!("{lel}-s0"),
                &[
                    "Leland, North Carolina",
                    "1986 North Carolina Tar Heels football team",
                    "Maximum Overdrive",
                    "Chloë Leland",
                    "Terry Sanford"
                ],
                &["A", "C"],
            ),
            (
                &format!("{lel}-s1"),
                &[
                    "Maximum Overdrive",
                    "Chloë Leland",
                    "Bill Myers (musician)",
                    "Myrtle Beach metropolitan area"
                ],
                &["A"],
            ),
            // The masked record (rank 2) is left out: it shows no content.
            (
                &format!("ee-{GRACE}-adaptive-t0-s2"),
                &[
                    "Two Dollar Radio",
                    "Concordia Publishing House",
                    "Gyldendal",
                    "Silesian National Publishing House"
                ],
                &["A"],
            ),
            (
                &format!("{bub}-s0"),
                &[
                    "Bubye River",
                    "Kizir River",
                    "Cheakamus River",
                    "Tinnelva",
                    "Río de la Miel"
                ],
                &["A"],
            ),
            (
                &format!("{bub}-s1"),
                &[
                    "Victoria Falls",
                    "Kalandula Falls",
                    "Tenaru Falls",
                    "Devon Falls",
                    "Tully Falls",
                    "Itiquira Falls"
                ],
                &["A"],
            ),
        ])
    );
    assert_eq!(
        skips(&g),
        vec![
            sk(
                LELAND,
                "open",
                0,
                "s0",
                "no supporting record among the 5 shown"
            ),
            sk(
                LELAND,
                "open",
                0,
                "s1",
                "the step has no query (no query line in the planner output)"
            ),
            sk(
                GRACE,
                "adaptive",
                0,
                "s0",
                "no non-supporting record: all 2 shown are supporting"
            ),
            sk(
                GRACE,
                "adaptive",
                0,
                "s1",
                "3 visible record(s); an item needs at least 4"
            ),
            sk(
                GRACE,
                "adaptive",
                1,
                "s0",
                &format!("same query and results as item ee-{GRACE}-adaptive-t0-s2")
            ),
        ]
    );
    let it = &g.items[2];
    assert_eq!(it.query, "Grace Krilanovich's first novel was published by an independent mom-and-pop publishing house that was founded in 2005, and is based where?");
    assert_eq!(
        it.context,
        "Search query issued: \"Two Dollar Radio founded 2005 Columbus Ohio\""
    );
    assert_eq!(it.polarity, Polarity::Correct);
    assert!(it.options[0].text.starts_with(
        "[en.wikipedia.org] Two Dollar Radio: Two Dollar Radio is an independent mom-and-pop publishing house based in Columbus, Ohio."
    ), "{}", it.options[0].text);
    let m = it.meta.as_ref().unwrap();
    assert_eq!(m["provenance"]["strategy"], "vanilla");
    assert_eq!(m["provenance"]["source"]["line"], 3);
    assert_eq!(m["provenance"]["source"]["step"], 2);
    assert!(m["provenance"]["model"].is_null());
    let ranks: Vec<u64> = m["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [1, 3, 4, 5]);
}

#[test]
fn abstain_items_controls_and_skips() {
    let g = abstain(&log());
    let ids_golds: Vec<(String, Vec<String>)> = g
        .items
        .iter()
        .map(|i| (i.id.clone(), i.answer.clone()))
        .collect();
    let want = |id: String, a: &str| (id, vec![a.to_string()]);
    assert_eq!(
        ids_golds,
        vec![
            // every supporting paragraph in the packet: a control, gold "answer"
            want(format!("na-{LELAND}-adaptive-t0-rr"), "A"),
            // no supporting paragraph: gold "insufficient"
            want(format!("na-{LELAND}-open-t0-rr"), "B"),
            want(format!("na-{LELAND}-open-t0-rrf"), "B"),
            want(format!("na-{GRACE}-adaptive-t0-rrf"), "A"),
            want(format!("na-{BUBYE}-adaptive-t0-rrf"), "A"),
        ]
    );
    assert_eq!(
        skips(&g),
        vec![
            sk(LELAND, "adaptive", 0, "rrf", &format!("same packet as item na-{LELAND}-adaptive-t0-rr")),
            sk(GRACE, "adaptive", 1, "rrf", &format!("same packet as item na-{GRACE}-adaptive-t0-rrf")),
            sk(BUBYE, "adaptive", 0, "rr", "the packet holds 1 of the 2 supporting paragraphs (an item needs none, or all as a control)"),
        ]
    );
    let it = &g.items[1];
    assert_eq!(it.options.len(), 2);
    assert_eq!(it.options[0].text, ANSWER_OPTION);
    assert_eq!(it.options[1].text, INSUFFICIENT_OPTION);
    assert_eq!(it.subtask.as_deref(), Some("abstain"));
    let lines: Vec<&str> = it.context.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "Search results:");
    assert!(lines[1].starts_with("  [1] [en.wikipedia.org] Chloë Leland: "));
    assert!(lines[2].starts_with("  [2] [en.wikipedia.org] Bill Myers (musician): "));
    let p = &it.meta.as_ref().unwrap()["packet"];
    assert_eq!(p["supporting_found"], 0);
    assert_eq!(p["control"], false);
}

#[test]
fn reliability_items_only_from_a_credibility_file() {
    let cred = CredibilityMap::read(&demo("credibility.csv")).unwrap();
    let g = reliability(&log(), &cred);
    assert_eq!(
        shape(&g),
        owned(&[(
            &format!("nr-{GRACE}-adaptive-t0-rrf"),
            &[
                "Grace Krilanovich",
                "Two Dollar Radio",
                "Concordia Publishing House",
                "bookchatter-77"
            ],
            &["D"],
        )])
    );
    let it = &g.items[0];
    assert_eq!(it.polarity, Polarity::Incorrect);
    assert!(it.options[3]
        .text
        .starts_with("[bookchatter.example] Two Dollar Radio rumours (forum thread): "));
    assert_eq!(
        it.context,
        "Search queries issued: \"Grace Krilanovich first novel publisher\", \"Two Dollar Radio publishing house based\", \"Two Dollar Radio founded 2005 Columbus Ohio\""
    );
    // Every other packet is all Wikipedia (credible only) or repeats this one.
    assert_eq!(g.skipped.len(), 7);
    assert_eq!(
        g.skipped.iter().filter(|s| s.reason == "the packet has 3 rated record(s), 0 less credible; an item needs both kinds (0 unrated)").count(),
        6
    );
    // An empty map rates nothing, so no item.
    let none = reliability(&log(), &CredibilityMap::new(vec![]));
    assert!(none.items.is_empty());
}

#[test]
fn bad_logs_and_credibility_files_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let good = std::fs::read_to_string(demo("trajectories.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    std::fs::write(&p, format!("{first}\n{first}\n")).unwrap();
    let e = read_trajectories(&p).unwrap_err().to_string();
    assert!(
        e.ends_with(&format!(
            ":2: trajectory {LELAND}/adaptive/0 already given on line 1"
        )),
        "{e}"
    );
    std::fs::write(&p, "{\"question_id\": \"q\"}\n").unwrap();
    let e = read_trajectories(&p).unwrap_err().to_string();
    assert!(
        e.contains("t.jsonl:1: not a trajectory record") && e.contains("missing field"),
        "{e}"
    );
    let c = dir.path().join("c.csv");
    std::fs::write(&c, "pattern,label\nexample.com,dubious\n").unwrap();
    let e = CredibilityMap::read(&c).unwrap_err().to_string();
    assert!(
        e.contains("c.csv:2: label \"dubious\": expected credible or less_credible"),
        "{e}"
    );
}
