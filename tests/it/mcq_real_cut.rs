//! Issue #30: the 150 real MCQ replies of gemma3-270m (tests/fixtures/real/mcq.jsonl, README
//! there), replayed to `stats mcq run` as they were recorded. 135 were cut at
//! `--max-tokens 256`; a cut reply has no final `Answer:` line, so every one of them is
//! `truncated` — among them the four the old rule read as answers (records 44, 66, 134,
//! 148: an echoed option text that happened to be the gold, an invented option list, an
//! `Answer: D` inside invented Q&A, a letter under `# Answers:`) — and the scores give no
//! credit.

use crate::support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::cli::{jsonl, mcq_score_json, stats};
use support::llm_server::{Reply, Server};

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real")
        .join(name)
}

/// One recorded call: which (item, run, prompt kind) it answered, its request body, its
/// response body and the reply text.
struct Rec {
    id: String,
    run: u64,
    prompt: String,
    body: String,
    response: String,
    text: String,
    finish: String,
}

fn records() -> Vec<Rec> {
    let outcomes: Value =
        serde_json::from_str(&std::fs::read_to_string(real("outcomes_main_5ebf4fa.json")).unwrap())
            .unwrap();
    let outcomes = outcomes["mcq.jsonl"].as_array().unwrap().clone();
    let lines = std::fs::read_to_string(real("mcq.jsonl")).unwrap();
    let recs: Vec<Rec> = lines
        .lines()
        .zip(&outcomes)
        .map(|(l, o)| {
            let r: Value = serde_json::from_str(l).unwrap();
            let choice = &r["response"]["choices"][0];
            Rec {
                id: o["id"].as_str().unwrap().to_string(),
                run: o["run"].as_u64().unwrap(),
                prompt: o["prompt"].as_str().unwrap().to_string(),
                body: r["request"].to_string(),
                response: r["response"].to_string(),
                text: choice["message"]["content"].as_str().unwrap().to_string(),
                finish: choice["finish_reason"].as_str().unwrap().to_string(),
            }
        })
        .collect();
    assert_eq!(recs.len(), 150);
    assert_eq!(outcomes.len(), 150);
    recs
}

/// A server that answers the k-th request with a given body by the recording of run k of
/// that body (runs of an item have identical bodies; `--concurrency 1` sends them in plan
/// order, run 0 first), and 500 for anything else.
fn replay(recs: &[Rec]) -> Server {
    let mut by_body: HashMap<String, Vec<(u64, String)>> = HashMap::new();
    for r in recs {
        by_body
            .entry(r.body.clone())
            .or_default()
            .push((r.run, r.response.clone()));
    }
    for v in by_body.values_mut() {
        v.sort();
    }
    let used: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    Server::start(move |seen, _| {
        let key = seen.body.to_string();
        let mut u = used.lock().unwrap();
        let k = u.entry(key.clone()).or_insert(0);
        match by_body.get(&key).and_then(|v| v.get(*k)) {
            Some((_, body)) => {
                *k += 1;
                Reply::status(200, body)
            }
            None => Reply::status(500, "{\"error\": \"not recorded\"}"),
        }
    })
}

fn mcq_run(server: &Server, prompt: &str, runs: &str, out: &Path) -> String {
    let o = stats()
        .args([
            "mcq",
            "run",
            "data/mcq/sample.jsonl",
            "--model",
            "gemma3-270m",
        ])
        .args(["--prompt", prompt, "--max-tokens", "256", "--runs", runs])
        .args(["--no-cache", "--concurrency", "1", "--max-retries", "0"])
        .args(["--base-url", &server.base, "--out"])
        .arg(out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

#[test]
fn real_cut_mcq_replies_are_all_truncated_and_earn_nothing() {
    let recs = records();
    // Hand count from the recording (tests/fixtures/real/README.md, catalogue): 135 of 150
    // replies end with finish_reason length — bare 63 of 75 (all but records 17, 19, 20, 22,
    // 51, 67, 71, 78, 87, 89, 92, 97), informative 72 of 75 (all but 116, 128, 133). The 15
    // that stopped hold no answer: prompt echoes, placeholder answers (`Answer: <answer>`,
    // `<letter>, <letter>, <letter>.`), copies of the format line, an empty `# answer:`.
    let cut = |p: &str| {
        recs.iter()
            .filter(|r| r.prompt == p && r.finish == "length")
            .count()
    };
    assert_eq!((cut("bare"), cut("informative")), (63, 72));
    let server = replay(&recs);
    let dir = tempfile::tempdir().unwrap();
    let mut all = Vec::new();
    // As recorded: run 0, then the same command with --runs 3 (asks runs 1 and 2).
    for (prompt, n_cut, n_failed) in [("bare", 63, 12), ("informative", 72, 3)] {
        let out = dir.path().join(format!("{prompt}.jsonl"));
        mcq_run(&server, prompt, "1", &out);
        let stdout = mcq_run(&server, prompt, "3", &out);
        assert!(
            stdout.contains(&format!(
                "results: 75 line(s): 0 parsed, {n_failed} parse failure(s), {n_cut} truncated, 0 API error(s)"
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "cut at max_tokens (finish_reason length): {n_cut} of 75 repl(ies), all counted as truncated"
            )),
            "{stdout}"
        );
        let results = jsonl(&out);
        assert_eq!(results.len(), 75);
        // Every (item, run) got the reply recorded for it.
        for r in &results {
            let rec = recs
                .iter()
                .find(|x| x.prompt == prompt && x.id == r["id"] && x.run == r["run"])
                .unwrap();
            assert_eq!(r["text"], rec.text.as_str(), "{}#run{}", rec.id, rec.run);
            assert_eq!(r["finish_reason"], rec.finish.as_str());
        }
        for r in &results {
            let want = if r["finish_reason"] == "length" {
                "truncated"
            } else {
                "parse_failed"
            };
            assert_eq!(r["outcome"], want, "{r}");
            assert!(r["answer"].is_null(), "{r}");
        }

        // No credit anywhere: overall and every group EM 0 and F1 0.
        let v = mcq_score_json(&out, 100, &[]);
        for s in v["scores"].as_array().unwrap() {
            assert_eq!(s["em"]["estimate"].as_f64(), Some(0.0), "{s}");
            assert_eq!(s["f1"]["estimate"].as_f64(), Some(0.0), "{s}");
        }
        let overall = v["rates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["group"] == "overall")
            .unwrap();
        assert_eq!(
            [
                &overall["records"],
                &overall["parse_failed"],
                &overall["truncated"],
                &overall["errors"]
            ]
            .map(|x| x.as_u64().unwrap()),
            [75, n_failed, n_cut, 0],
            "{overall}"
        );
        all.extend(results);
    }
    assert_eq!(server.count(), 150);

    // The four replies the old rule read (44: A = gold by option text; 66: B; 134: D; 148:
    // A), each refused as cut before its final answer line.
    for (i, id, run) in [
        (44, "na-003", 0),
        (66, "ee-001", 1),
        (134, "na-001", 1),
        (148, "nr-004", 1),
    ] {
        let rec = &recs[i];
        assert_eq!((rec.id.as_str(), rec.run), (id, run));
        let r = all
            .iter()
            .find(|r| r["id"] == id && r["run"] == run && r["prompt"] == rec.prompt.as_str())
            .unwrap();
        assert_eq!(r["text"], rec.text.as_str());
        assert_eq!(r["outcome"], "truncated", "record {i}: {r}");
        assert_eq!(
            r["parse_note"],
            "cut off (finish_reason length) before its final answer line; the answer marker \
             before the cut is not read",
            "record {i}"
        );
    }
}
