//! Issue #16, error-guided generation against a scripted HTTP model: the prompts carry the
//! taxonomy and the context, good replies become items with full provenance, and each
//! malformed reply is rejected with its reason; a second run resumes from the responses
//! file (only the failed call is asked again).

use crate::support;

use std::path::Path;

use ragstats_agent::mcqgen::guided::{GROUNDED_TEMPLATE, PLANNING_TEMPLATE};
use ragstats_agent::mcqgen::short_hash;
use serde_json::{json, Value};
use support::cli::{jsonl, mcq_demo, stats};
use support::llm_server::{ok_reply, Reply, Server};

const LELAND: &str = "5a8718c25542991e771816c7";
const BUBYE: &str = "2hop__205146_62031";

/// The line after `heading` in a prompt.
fn after<'a>(prompt: &'a str, heading: &str) -> Option<&'a str> {
    let i = prompt.find(heading)?;
    prompt[i + heading.len()..].lines().next()
}

fn planning_reply(next: &str) -> Reply {
    let wrong = |t: &str, e: &str| json!({"text": t, "error_type": e});
    let v = match next {
        "Leland North Carolina film 1986" => json!({
            "reformulation": "films shot in Leland, North Carolina in 1986",
            "wrong_options": [
                wrong("Search \"Leland North Carolina population 2010 census\".", "ignored_constraint"),
                wrong("Answer \"Terry Sanford\" now.", "premature_conclusion"),
                wrong("Search \"Maximum Overdrive 1986 cast Emilio Estevez\".", "over_narrow_search"),
            ]
        }),
        // missing options: two wrong options where three were asked for
        "Maximum Overdrive director" => json!({
            "reformulation": "who directed Maximum Overdrive",
            "wrong_options": [
                wrong("Search \"Leland North Carolina film 1986\".", "redundant_search"),
                wrong("Answer \"Emilio Estevez\" now.", "premature_conclusion"),
            ]
        }),
        // duplicate options
        "Grace Krilanovich first novel publisher" => json!({
            "reformulation": "publisher of The Orange Eats Creeps",
            "wrong_options": [
                wrong("Search \"Grace Krilanovich biography\".", "ignored_constraint"),
                wrong("search \"grace krilanovich biography\".", "over_narrow_search"),
                wrong("Answer \"Portland, Oregon\" now.", "premature_conclusion"),
            ]
        }),
        // a "wrong" option identical to the actual next query
        "Two Dollar Radio publishing house based" => json!({
            "reformulation": "Two Dollar Radio headquarters city",
            "wrong_options": [
                wrong("Search \"Two Dollar Radio publishing house based\".", "redundant_search"),
                wrong("Search \"independent publishers founded 2005\".", "ignored_constraint"),
                wrong("Answer \"Portland, Oregon\" now.", "premature_conclusion"),
            ]
        }),
        // an error type outside the taxonomy
        "Two Dollar Radio founded 2005 Columbus Ohio" => json!({
            "reformulation": "Two Dollar Radio founding year and location",
            "wrong_options": [
                wrong("Search \"Grace Krilanovich first novel publisher\".", "redundant_search"),
                wrong("Search \"Columbus Ohio\".", "hallucination"),
                wrong("Answer \"Columbus, Ohio\" now.", "premature_conclusion"),
            ]
        }),
        "Bubye River country" => {
            return ok_reply("I would suggest searching for the river's location first.")
        }
        "waterfall in Zimbabwe" => {
            let v = json!({
                "reformulation": "Zimbabwe waterfalls",
                "wrong_options": [
                    wrong("Search \"Bubye River country\".", "redundant_search"),
                    wrong("Answer \"Kalandula Falls\" now.", "premature_conclusion"),
                    wrong("Search \"waterfalls in Africa\".", "ignored_constraint"),
                ]
            });
            return ok_reply(&format!("Here is the question:\n```json\n{v}\n```"));
        }
        other => panic!("unexpected planning prompt for {other:?}"),
    };
    ok_reply(&v.to_string())
}

fn grounded_reply(question: &str) -> Reply {
    let st = |t: &str, e: Value| json!({"text": t, "error_type": e});
    if question.starts_with("Who directed the film") {
        ok_reply(&json!({"statements": [
            st("Maximum Overdrive is a 1986 film written and directed by Stephen King.", Value::Null),
            st("Leland is a town in Brunswick County, North Carolina.", Value::Null),
            st("Maximum Overdrive was Stephen King's most successful film as a director.", json!("unsupported_claim")),
            st("Maximum Overdrive was released in 1968.", json!("misread_evidence")),
            st("Because Chloë Leland is a film director, she directed the film shot in Leland.", json!("logical_leap")),
        ]}).to_string())
    } else if question.starts_with("Grace Krilanovich") {
        ok_reply(&json!({"statements": [
            st("Two Dollar Radio is based in Columbus, Ohio.", Value::Null),
            st("Two Dollar Radio was founded in 2005.", Value::Null),
            st("Two Dollar Radio is the largest publisher in Ohio.", json!("unsupported_claim")),
            st("two dollar radio is based in Columbus, Ohio.", json!("misread_evidence")),
            st("Grace Krilanovich founded Two Dollar Radio.", json!("logical_leap")),
        ]}).to_string())
    } else {
        Reply::status(400, r#"{"error": {"message": "context length exceeded"}}"#)
    }
}

fn script(req: &support::llm_server::Seen, _n: usize) -> Reply {
    let p = &req.prompt;
    if let Some(next) = after(p, "# The system's actual next search\n") {
        planning_reply(next)
    } else if p.contains("# Answer reached\n") {
        grounded_reply(after(p, "# Question\n").unwrap())
    } else {
        panic!("unexpected prompt {p}")
    }
}

fn run(server: &Server, dir: &Path) -> std::process::Output {
    stats()
        .arg("mcq")
        .arg("generate")
        .arg(mcq_demo("trajectories.jsonl"))
        .args([
            "--tasks",
            "planning,grounded_reasoning",
            "--model",
            "gen-model",
            "--base-url",
            &server.base,
        ])
        .args(["--max-retries", "0", "--no-cache"])
        .arg("--ledger")
        .arg(dir.join("ledger.jsonl"))
        .arg("--out")
        .arg(dir.join("items.jsonl"))
        .output()
        .unwrap()
}

#[test]
fn error_guided_items_prompts_rejections_and_resume() {
    let server = Server::start(script);
    let dir = tempfile::tempdir().unwrap();
    let out = run(&server, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // One scripted call fails (a 400), so the run exits 1 as every batch with a failed call
    // does (docs/llm.md), after writing everything else.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 call(s) failed"), "{stderr}");
    // 7 planning steps of the 3 trajectories correct under rrf + 3 grounded packets.
    assert_eq!(server.count(), 10, "{stderr}");

    // Prompts: the taxonomy and the context.
    let reqs = server.requests();
    let first = reqs
        .iter()
        .find(|r| {
            r.prompt
                .contains("# The system's actual next search\nLeland North Carolina film 1986\n")
        })
        .unwrap();
    for e in [
        "over_narrow_search",
        "redundant_search",
        "premature_conclusion",
        "ignored_constraint",
    ] {
        assert!(first.prompt.contains(&format!("- {e}: ")), "{e}");
    }
    assert!(first.prompt.contains("# Question\nWho directed the film that was shot in or around Leland, North Carolina in 1986\n"));
    assert!(first
        .prompt
        .contains("# Searches so far\nNo searches yet.\n"));
    assert!(first
        .prompt
        .contains("This step is a divergent planning step."));
    assert!(first.prompt.contains("exactly 3 wrong next steps"));
    assert_eq!(first.body["model"], "gen-model");
    let second = reqs
        .iter()
        .find(|r| {
            r.prompt
                .contains("# The system's actual next search\nMaximum Overdrive director\n")
        })
        .unwrap();
    assert!(second
        .prompt
        .contains("This step is a convergent planning step."));
    assert!(second.prompt.contains(
        "# Searches so far\nStep 1 — search: \"Leland North Carolina film 1986\"\n  [en.wikipedia.org] Leland, North Carolina: Leland is a town in Brunswick County"
    ));
    let gr = reqs
        .iter()
        .find(|r| r.prompt.contains("# Answer reached\nStephen King\n"))
        .unwrap();
    for e in ["unsupported_claim", "misread_evidence", "logical_leap"] {
        assert!(gr.prompt.contains(&format!("- {e}: ")), "{e}");
    }
    assert!(gr.prompt.contains("# Evidence\n  [1] [en.wikipedia.org] Maximum Overdrive: Maximum Overdrive is a 1986 American science fiction horror comedy film written and directed by Stephen King."));
    assert!(
        gr.prompt.contains("Write exactly 5 statements")
            && gr.prompt.contains("2 must be fully supported")
    );

    // Items.
    let items = jsonl(&dir.path().join("items.jsonl"));
    let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            format!("pd-{LELAND}-adaptive-t0-s0"),
            format!("pc-{BUBYE}-adaptive-t0-s1"),
            format!("gr-{LELAND}-adaptive-t0-rrf"),
        ]
    );
    let p = &items[0];
    assert_eq!(p["task"], "planning");
    assert_eq!(p["subtask"], "divergent");
    assert_eq!(p["polarity"], "correct");
    assert_eq!(p["context"], "No searches yet.");
    let opts = p["options"].as_array().unwrap();
    let om = p["meta"]["options"].as_array().unwrap();
    assert_eq!(opts.len(), 5);
    let text_of = |origin: &str| -> Vec<String> {
        om.iter()
            .zip(opts)
            .filter(|(m, _)| m["origin"] == origin)
            .map(|(_, o)| o["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        text_of("trajectory"),
        ["Search \"Leland North Carolina film 1986\"."]
    );
    assert_eq!(
        text_of("reformulation"),
        ["Search \"films shot in Leland, North Carolina in 1986\"."]
    );
    let mut errs: Vec<(String, String)> = om
        .iter()
        .zip(opts)
        .filter(|(m, _)| m["origin"] == "generated_wrong")
        .map(|(m, o)| {
            (
                m["error_type"].as_str().unwrap().into(),
                o["text"].as_str().unwrap().into(),
            )
        })
        .collect();
    errs.sort();
    assert_eq!(
        errs,
        [
            (
                "ignored_constraint".to_string(),
                "Search \"Leland North Carolina population 2010 census\".".to_string()
            ),
            (
                "over_narrow_search".into(),
                "Search \"Maximum Overdrive 1986 cast Emilio Estevez\".".into()
            ),
            (
                "premature_conclusion".into(),
                "Answer \"Terry Sanford\" now.".into()
            ),
        ]
    );
    let gold: Vec<&str> = om
        .iter()
        .filter(|m| m["error_type"].is_null())
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        p["answer"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect::<Vec<_>>(),
        gold
    );
    assert_ne!(
        gold,
        ["A", "B"],
        "the deterministic order moves the gold off the first places here"
    );
    let prov = &p["meta"]["provenance"];
    assert_eq!(prov["strategy"], "error_guided");
    assert_eq!(prov["model"], "gen-model");
    assert_eq!(prov["prompt_sha256"], short_hash(PLANNING_TEMPLATE));
    assert_eq!(
        prov["request_id"],
        format!("gen:pd-{LELAND}-adaptive-t0-s0")
    );
    assert_eq!(prov["source"]["step"], 0);
    assert_eq!(prov["source"]["line"], 1);
    assert!(prov["subtask_rule"]
        .as_str()
        .unwrap()
        .starts_with("convergent when the searches before this step"));

    let c = &items[1];
    assert_eq!(c["subtask"], "convergent");
    assert!(c["context"].as_str().unwrap().starts_with(
        "Step 1 — search: \"Bubye River country\"\n  [en.wikipedia.org] Bubye River: "
    ));

    let g = &items[2];
    assert_eq!(g["polarity"], "incorrect");
    assert_eq!(
        g["instruction"],
        "Which of the following statements are NOT supported by the evidence?"
    );
    assert_eq!(
        g["meta"]["provenance"]["prompt_sha256"],
        short_hash(GROUNDED_TEMPLATE)
    );
    let gm = g["meta"]["options"].as_array().unwrap();
    let wrong: Vec<&str> = gm
        .iter()
        .filter(|m| !m["error_type"].is_null())
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(wrong.len(), 3);
    assert_eq!(
        g["answer"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect::<Vec<_>>(),
        wrong
    );
    assert!(g["context"]
        .as_str()
        .unwrap()
        .contains("\nAnswer reached: Stephen King\n"));

    // Rejections and skips, with reasons.
    let skipped = jsonl(&dir.path().join("items.skipped.jsonl"));
    let reasons: Vec<(String, String)> = skipped
        .iter()
        .map(|s| {
            let src = &s["source"];
            let at = src["step"].as_u64().map_or_else(
                || src["selector"].as_str().unwrap_or("").to_string(),
                |k| format!("s{k}"),
            );
            (
                format!(
                    "{} {} {} {at}",
                    s["task"].as_str().unwrap(),
                    &src["question_id"].as_str().unwrap()[..8],
                    src["trajectory"]
                ),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let r = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        reasons,
        [
            r("planning 5a8718c2 0 ", "the trajectory is not correct under selector \"rrf\" (mean em < 1)"),
            r("grounded_reasoning 5a8718c2 0 rrf", "the trajectory is not correct under selector \"rrf\" (mean em < 1)"),
            r("planning 5ab3c131 1 ", "the trajectory is not correct under selector \"rrf\" (mean em < 1)"),
            r("grounded_reasoning 5ab3c131 1 rrf", "the trajectory is not correct under selector \"rrf\" (mean em < 1)"),
            r("planning 5a8718c2 0 s1", "rejected: missing options: 2 wrong option(s), expected 3"),
            r("planning 5ab3c131 0 s0", "rejected: duplicate options: option 4 repeats option 3"),
            r("planning 5ab3c131 0 s1", "rejected: wrong option 1 (redundant_search) is identical to a correct option"),
            r("planning 5ab3c131 0 s2", "rejected: wrong option 2: error type \"hallucination\" is not in the planning taxonomy"),
            r("planning 2hop__20 0 s0", "rejected: the reply is not the JSON object asked for"),
            r("grounded_reasoning 5ab3c131 0 rrf", "rejected: statement 4 (erroneous) is identical to a supported one"),
            r("grounded_reasoning 2hop__20 0 rrf", "generation call failed (rejected): HTTP 400: context length exceeded"),
        ]
    );

    // The output passes `stats mcq validate`.
    let v = stats()
        .args(["mcq", "validate"])
        .arg(dir.path().join("items.jsonl"))
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));

    // Ledger: one row per answered call (the 400 is not billed).
    let ledger = std::fs::read_to_string(dir.path().join("ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 9);
    // Item generation is billed as kind `generator`, not as reading.
    assert!(ledger
        .lines()
        .all(|l| l.starts_with("{\"kind\":\"generator\"")));

    // Resume: only the failed call is asked again.
    let again = run(&server, dir.path());
    // The server refuses that request again, so the rerun exits 1 too.
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(server.count(), 11);
    assert_eq!(jsonl(&dir.path().join("items.jsonl")), items);
}
