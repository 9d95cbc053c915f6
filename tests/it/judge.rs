//! Issue #16, `stats judge`: step scores from a scripted judge over the fixture log
//! (data/mcq/generated/trajectories.jsonl), robust parsing of real-looking replies (a
//! missing or out-of-range score is a recorded failure, never a default), per-trajectory
//! means, and the point-biserial pipeline through `stats correlate` end to end.

use crate::support;

use serde_json::Value;
use support::cli::{jsonl, mcq_demo, run_ok, stats};
use support::llm_server::{ok_reply, Reply, Seen, Server};

/// The text between `a` and `b` in `s`.
fn between<'a>(s: &'a str, a: &str, b: &str) -> &'a str {
    let i = s.find(a).unwrap() + a.len();
    let j = s[i..].find(b).unwrap() + i;
    &s[i..j]
}

/// The scripted judge: (dimension, substring of the graded text, reply); the first match wins.
const SCRIPT: &[(&str, &str, &str)] = &[
    // Leland, adaptive, correct
    (
        "R",
        "I need the film shot in or around Leland",
        "The query targets the film directly.\nScore: 8",
    ),
    (
        "R",
        "The Leland page says Maximum Overdrive",
        "**Score:** 9/10",
    ),
    (
        "E",
        "The Leland page says Maximum Overdrive",
        "It used the Leland page.\n\nFinal score = 8 out of 10.",
    ),
    ("E", "Answer: Stephen King", "Score: 9"),
    // Leland, open, incorrect
    (
        "R",
        "Let me look for film directors",
        "The search ignores the 1986 film.\nScore: 3",
    ),
    (
        "E",
        "I think I have enough to answer.",
        "Nothing relevant was retrieved, yet it stops.\nI'd give it a score of 2.",
    ),
    ("E", "Answer: Chloë Leland", "Score: 12"),
    // Grace, t0, correct
    ("R", "First find who published Grace", "Score: 7"),
    (
        "R",
        "The novel was published by Two Dollar Radio",
        // A bare number counts right after a score marker line (issue #30 item 5).
        "Reasonable.\nScore:\n6",
    ),
    ("R", "Confirm it was founded in 2005", "Score: 8"),
    (
        "E",
        "The novel was published by Two Dollar Radio",
        "Score: 7",
    ),
    ("E", "Confirm it was founded in 2005", "Score: 6."),
    ("E", "[1] [en.wikipedia.org] Grace Krilanovich", "Score: 8"),
    // Grace, t1, incorrect (its read sees a packet led by the forum page)
    ("R", "Find the publisher founded in 2005", "Score: 5"),
    (
        "E",
        "[1] [bookchatter.example]",
        "Looks reasonable overall.",
    ),
    // Bubye, correct
    ("R", "First find the country of the Bubye River", "Score: 9"),
    ("R", "The Bubye River is in Zimbabwe. Which", "Score: 10"),
    ("E", "The Bubye River is in Zimbabwe. Which", "Score: 9"),
    ("E", "Answer: Victoria Falls", "score: 10"),
];

fn script(req: &Seen, _n: usize) -> Reply {
    let p = &req.prompt;
    let (dim, graded) = if p.contains("# The system's thought at this step\n") {
        (
            "R",
            between(
                p,
                "# The system's thought at this step\n",
                "\n\n# The action",
            ),
        )
    } else {
        // the observation's first line tells the two Grace reads apart
        (
            "E",
            between(p, "# What the system observed\n", "\n\nScore the step"),
        )
    };
    let hit = SCRIPT
        .iter()
        .filter(|(d, key, _)| *d == dim && graded.contains(key))
        .map(|(_, _, r)| *r)
        .next();
    ok_reply(hit.unwrap_or_else(|| panic!("no scripted reply for {dim}: {graded}")))
}

/// trajectory, reasoning, extraction, judge score, correct, failures.
type Row = (String, Option<f64>, Option<f64>, Option<f64>, Value, u64);

#[test]
fn judge_scores_failures_and_pointbiserial_end_to_end() {
    let server = Server::start(script);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("judged.jsonl");
    run_ok(
        stats()
            .arg("judge")
            .arg(mcq_demo("trajectories.jsonl"))
            .args([
                "--model",
                "judge-model",
                "--base-url",
                &server.base,
                "--no-cache",
            ])
            .arg("--out")
            .arg(&out),
    );
    // 9 reasoning units (one step has no action) + 10 extraction units.
    assert_eq!(server.count(), 19);
    let reqs = server.requests();
    let r = reqs
        .iter()
        .find(|r| {
            r.prompt
                .contains("# The action it took\nsearch \"Maximum Overdrive director\"\n")
        })
        .unwrap();
    assert!(r.prompt.contains(
        "# Searches before this step\nStep 1 — search: \"Leland North Carolina film 1986\"\n"
    ));
    assert!(r.prompt.contains("# The system's thought at this step\nThought: The Leland page says Maximum Overdrive was filmed there in 1986."));
    let e = reqs
        .iter()
        .find(|r| r.prompt.contains("Answer: Victoria Falls"))
        .unwrap();
    assert!(e
        .prompt
        .contains("# What the system observed\n[1] [en.wikipedia.org] Victoria Falls: "));

    let judged = jsonl(&out);
    let f = |v: &Value| v.as_f64();
    let got: Vec<Row> = judged
        .iter()
        .map(|j| {
            (
                j["trajectory"].as_str().unwrap().to_string(),
                f(&j["reasoning_score"]),
                f(&j["extraction_score"]),
                f(&j["judge_score"]),
                j["correct"].clone(),
                j["failures"].as_u64().unwrap(),
            )
        })
        .collect();
    let t = |k: &str| k.to_string();
    assert_eq!(
        got,
        [
            (
                t("5a8718c25542991e771816c7/adaptive/0"),
                Some(8.5),
                Some(8.5),
                Some(8.5),
                Value::Bool(true),
                0
            ),
            (
                t("5a8718c25542991e771816c7/open/0"),
                Some(3.0),
                Some(2.0),
                Some(2.5),
                Value::Bool(false),
                2
            ),
            (
                t("5ab3c131554299233954ff9c/adaptive/0"),
                Some(7.0),
                Some(7.0),
                Some(7.0),
                Value::Bool(true),
                0
            ),
            (
                t("5ab3c131554299233954ff9c/adaptive/1"),
                Some(5.0),
                None,
                Some(5.0),
                Value::Bool(false),
                1
            ),
            (
                t("2hop__205146_62031/adaptive/0"),
                Some(9.5),
                Some(9.5),
                Some(9.5),
                Value::Bool(true),
                0
            ),
        ]
    );
    // The failures are recorded with their reasons; no score was defaulted.
    let steps = judged[1]["steps"].as_array().unwrap();
    let fails: Vec<(u64, &str, &str)> = steps
        .iter()
        .filter(|s| s["score"].is_null())
        .map(|s| {
            (
                s["step"].as_u64().unwrap(),
                s["dimension"].as_str().unwrap(),
                s["failure"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fails,
        [
            (
                1,
                "grounded_reasoning",
                "not judged: the step has no parsed action"
            ),
            (2, "evidence_extraction", "score 12 is outside 1–10"),
        ]
    );
    assert_eq!(
        judged[3]["steps"][1]["failure"],
        "no score found in the reply"
    );

    let csv = std::fs::read_to_string(dir.path().join("judged.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "trajectory,question_id,arm,index,reasoning_score,extraction_score,judge_score,correct,scored,failures");
    assert_eq!(
        rows[4],
        "5ab3c131554299233954ff9c/adaptive/1,5ab3c131554299233954ff9c,adaptive,1,5,,5,0,1,1"
    );

    // Point-biserial of judge_score against correctness over the 5 trajectories:
    // x = [8.5, 2.5, 7, 5, 9.5], y = [1, 0, 1, 0, 1]; Pearson r = 0.8945750668694888
    // (python3: sxy / sqrt(sxx * syy) with the means 6.5 and 0.6).
    let rep = run_ok(
        stats()
            .arg("correlate")
            .arg(dir.path().join("judged.csv"))
            .args([
                "--x",
                "judge_score,reasoning_score",
                "--y",
                "correct",
                "--method",
                "pointbiserial",
            ])
            .args(["--aggregate-by", "trajectory", "--format", "json"]),
    );
    let v: Value = serde_json::from_str(&rep).unwrap();
    let pairs = v["pairs"].as_array().unwrap_or_else(|| panic!("{v}"));
    let r_of = |x: &str| {
        pairs.iter().find(|p| p["x"] == x).unwrap()["r"]
            .as_f64()
            .unwrap()
    };
    assert!(
        (r_of("judge_score") - 0.8945750668694888).abs() < 1e-12,
        "{v}"
    );
    // reasoning_score: x = [8.5, 3, 7, 5, 9.5] gives r = 0.9019300070767482 (same formula).
    assert!(
        (r_of("reasoning_score") - 0.9019300070767482).abs() < 1e-12,
        "{v}"
    );
}
