//! `stats run` replaying the real replies of gemma3-270m (llama.cpp) recorded in
//! tests/fixtures/real/ (README.md there: versions, the command, what the replies show).
//!
//! The recorded run is the README's command with `--questions 6` (12 questions). Every
//! planner reply but one echoes its prompt, 75 of the 105 with the template's
//! `{"query": "..."}` in it; 44 of the 48 reader replies hold `{"answer": "..."}`. At the
//! commit they were recorded from, `...` was searched (and found nothing), every pool was
//! empty and `run-audit` said `valid 6/24` without a warning.
//!
//! The scripted server answers each planner (reader) request with the next recorded planner
//! (reader) reply of the same question, in recording order (the test checks none runs out).
//! Bodies cannot be matched one to one: a refused `...` changes the next step's history, so
//! the requests are not those recorded.
//!
//! Counts by hand (with a short script over the fixture, per question: how many replies, how
//! many holding the placeholder, which ones the run is served), checked here reply by reply:
//!
//! * planner: 12 questions × 2 trajectories × (1 + 3 steps × 2 arms) = 168 steps, every one
//!   a failure (no reply holds another query). As no step gives a query, Open's and
//!   Adaptive's step s have the same messages and sample: one request (a cache hit the second
//!   time), so 12 × 2 × 4 = 96 requests, each question's first 8 recorded replies. Counting
//!   step 0 once and steps 1–3 twice, the copies per question are 4, 14, 14, 14, 8, 8, 12, 8,
//!   7, 5, 12, 12: **118 refused steps** (70 of the 96 replies); 48 "no JSON object" (or
//!   broken-JSON) failures; and 2 (one reply, both arms) `{"query": "?"}`, refused as a
//!   query with no letter or digit. No query, so nothing is searched;
//! * reader: every packet is empty, so the reads of a (question, trajectory, read) share
//!   one request (4 arm × selector reads each): 48 requests, the 48 recorded replies; 44
//!   hold `{"answer": "..."}`: **176 of the 192 reads refused**; the other 4 replies (16
//!   reads) hold no JSON object and their first line (the fallback) is an invented question
//!   in the prompt's layout, such as `Question: What is the official sport of Canada?`: it
//!   starts with the reader template's label `Question:`, so **16 reads are refused as echoes
//!   of the prompt** (they were scored as answers before);
//! * every one of the 48 pools and 96 packets is empty: the warning fires;
//! * cut at `--max-tokens` 256 (`finish_reason` `length`): 83 of the 105 recorded planner
//!   replies, 77 of the 96 served; counting step 0 once and steps 1–3 twice, **137 of the 168
//!   steps** (77 of each arm's 96); 44 of the 48 reader replies (the 4 echoes among them),
//!   **176 of the 192 reads** (44 of each arm × selector's 48). The warning says 137 + 176 =
//!   313 of the 360 replies. Counted with
//!
//!   ```sh
//!   python3 -c "import json,collections as c;d=c.defaultdict(list);[d[r['request']['messages'][-1]['content'].split(chr(10))[0]].append(r['response']['choices'][0]['finish_reason']=='length') for r in map(json.loads,open('tests/fixtures/real/planner.jsonl'))];print(sum(sum(v[:8]) for v in d.values()),sum(v[i]*(1+(i%4>0)) for v in d.values() for i in range(8)))"
//!   # 77 137: served cut replies (each question's first 8), cut steps
//!   python3 -c "import json;r=[json.loads(l)['response']['choices'][0] for l in open('tests/fixtures/real/reader.jsonl')];print(sum(c['finish_reason']=='length' for c in r),sum('{\"answer\": \"...\"}' not in c['message']['content'] for c in r))"
//!   # 44 4: cut reader replies, replies without the placeholder
//!   ```

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::cli::{json_of, jsonl, stats};
use support::llm_server::{Reply, Server};

const COPIED_QUERY: &str = "copied placeholder \"...\" from builtin planner_user.txt: the query is the prompt's format example, not filled in";
const COPIED_ANSWER: &str = "copied placeholder \"...\" from builtin reader_user.txt: the answer is the prompt's format example, not filled in";

type Recorded = HashMap<(bool, String), Vec<(u16, Value)>>;

/// The question line of a request (the first line of its last message).
fn question_line(body: &Value) -> String {
    let msgs = body["messages"].as_array().unwrap();
    let user = msgs.last().unwrap()["content"].as_str().unwrap();
    user.lines().next().unwrap().to_string()
}

fn is_planner(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("You plan web searches")
}

/// The recorded (status, response) of each (planner?, question line), in recording order.
fn recorded() -> Recorded {
    let mut by: Recorded = HashMap::new();
    for f in ["planner", "reader"] {
        for r in jsonl(Path::new(&format!("tests/fixtures/real/{f}.jsonl"))) {
            let key = (f == "planner", question_line(&r["request"]));
            assert_eq!(is_planner(&r["request"]), f == "planner");
            by.entry(key)
                .or_default()
                .push((r["status"].as_u64().unwrap() as u16, r["response"].clone()));
        }
    }
    by
}

/// Whether a recorded reply was cut at the token cap.
fn reply_cut(response: &Value) -> bool {
    response["choices"][0]["finish_reason"] == "length"
}

fn reply_text(response: &Value) -> String {
    response["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn real_replies_copying_the_format_example_are_refused_and_the_empty_pools_warned() {
    let rec = Arc::new(recorded());
    assert_eq!(rec.len(), 24, "12 questions, planner and reader");
    let next: Arc<Mutex<HashMap<(bool, String), usize>>> = Arc::default();
    let (r2, n2) = (rec.clone(), next.clone());
    let server = Server::start(move |seen, _| {
        let key = (is_planner(&seen.body), question_line(&seen.body));
        let replies = &r2[&key];
        let mut n = n2.lock().unwrap();
        let i = n.entry(key).or_default();
        let (status, body) = &replies[(*i).min(replies.len() - 1)];
        assert!(*i < replies.len(), "the recorded replies ran out");
        *i += 1;
        Reply::status(*status, &body.to_string())
    });

    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    support::cli::run_ok(
        stats()
            .args(["index", "build", "data/qa/corpus.jsonl", "--out"])
            .arg(&idx),
    );
    let out = tmp.path().join("run-real6");
    let o = stats()
        .args(["run", "data/qa/questions.jsonl", "--search"])
        .arg(format!("local:{}", idx.display()))
        .args(["--base-url", &server.base, "--model", "gemma3-270m"])
        .args(["--planner", "open,adaptive", "--selector", "rrf,rr"])
        .args(["--trajectories", "2", "--reads", "2", "--questions", "6"])
        .args(["--mask", "data/search/mask.txt", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    );
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let sent = server.requests();
    assert_eq!(
        sent.iter().filter(|s| is_planner(&s.body)).count(),
        96,
        "planner requests"
    );
    assert_eq!(sent.len(), 96 + 48);

    // Reply by reply: a step is refused as a copy exactly when its reply holds the
    // template's `{"query": "..."}`; no step gave a query.
    let logs = jsonl(&out.join("trajectories.jsonl"));
    assert_eq!(logs.len(), 48);
    let (mut copies, mut steps, mut cut_steps, mut cut_reads) = (0, 0, 0, 0);
    // Cut steps whose reply copies the format example (refused as a copied placeholder).
    let mut cut_copies = 0;
    for t in &logs {
        let q = format!("Question: {}", t["question"].as_str().unwrap());
        let planner_replies: Vec<(String, bool)> = rec[&(true, q.clone())]
            .iter()
            .map(|(_, r)| (reply_text(r), reply_cut(r)))
            .collect();
        let reader_replies: Vec<(String, bool)> = rec[&(false, q.clone())]
            .iter()
            .map(|(_, r)| (reply_text(r), reply_cut(r)))
            .collect();
        for s in t["steps"].as_array().unwrap() {
            let text = s["planner_text"].as_str().unwrap();
            let &(_, cut) = planner_replies
                .iter()
                .find(|(r, _)| r == text)
                .unwrap_or_else(|| panic!("{q}: {text}"));
            // `truncated` is written exactly for the replies cut at the cap.
            assert_eq!(s.get("truncated").is_some(), cut, "{s}");
            if cut {
                assert_eq!(s["truncated"], true);
            }
            assert!(s["query"].is_null(), "{s}");
            assert!(s["results"].as_array().unwrap().is_empty());
            let failure = s["failure"].as_str().unwrap();
            if text.contains(r#"{"query": "..."}"#) {
                assert_eq!(failure, COPIED_QUERY, "{text}");
            } else if text.contains(r#"{"query": "?"}"#) {
                assert_eq!(failure, "query \"?\" has no letter or digit");
            } else {
                assert!(
                    !failure.starts_with("copied placeholder"),
                    "{failure}: {text}"
                );
                // A reply cut before any object closed says so.
                if failure.starts_with("no JSON object") {
                    assert_eq!(
                        failure
                            .ends_with(" (the reply was cut at max_tokens: finish_reason length)"),
                        cut,
                        "{failure}"
                    );
                }
            }
            // Step 0 is in both arms' records: count it once.
            if t["arm"] == "open" || s["step"] != 0 {
                steps += 1;
                copies += usize::from(text.contains(r#"{"query": "..."}"#));
                cut_steps += usize::from(cut);
                cut_copies += usize::from(cut && text.contains(r#"{"query": "..."}"#));
            }
        }
        for r in t["reads"].as_array().unwrap() {
            let text = r["reader_text"].as_str().unwrap();
            let &(_, cut) = reader_replies
                .iter()
                .find(|(x, _)| x == text)
                .unwrap_or_else(|| panic!("{q}: {text}"));
            assert_eq!(r.get("truncated").is_some(), cut, "{r}");
            cut_reads += usize::from(cut);
            assert_eq!(
                (r["answer"].as_str(), r["em"].as_f64()),
                (Some(""), Some(0.0))
            );
            if text.contains(r#"{"answer": "..."}"#) {
                assert_eq!(r["failure"], COPIED_ANSWER, "{text}");
            } else {
                // The invented question the fallback read before, refused as an echo.
                let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap();
                assert!(first.starts_with("Question: "), "{first}");
                assert_eq!(
                    r["failure"],
                    format!(
                        "copied prompt: the answer line {:?} starts with the section label \"Question:\" of builtin reader_user.txt; the reply lays out the prompt again instead of answering",
                        ragstats_core::io::clip(first)
                    )
                );
            }
        }
    }
    assert_eq!((steps, copies), (168, 118));
    assert_eq!((cut_steps, cut_reads), (137, 176));
    // Every read is refused (a copied placeholder or an echo of the prompt), so each cut
    // read is an echo; of the cut steps, the 101 copies of `{"query": "..."}` are.
    assert_eq!(cut_copies, 101);

    // Nothing was searched.
    let ledger = jsonl(&out.join("ledger.jsonl"));
    assert_eq!(ledger.len(), 192 + 192);
    assert!(ledger.iter().all(|r| r["kind"] != "search"));

    // The summary (stdout) and the warning (stderr).
    let lines = [
        "360 model call(s) (216 from cache, 144 request(s) sent), 0 search(es) (0 from cache)",
        "queries: 0 of 168 planner step(s) gave a query; 0 distinct, 0 of them found no results",
        "planning failures: 168 step(s), 118 of them copied placeholders (refused, not searched)",
        "empty candidate pools: 48 of 48; empty packets: 96 of 96",
        "reads: 192, 176 of them copied placeholders, 16 echoed the prompt (refused, scored 0)",
        "cut at max_tokens (finish_reason length): 137 of 168 planner step(s), 176 of 192 read(s) (a complete JSON object in a cut reply is still used)",
    ];
    for l in lines {
        assert!(stdout.contains(&format!("{l}\n")), "{l}\n{stdout}");
    }
    let warning = "warning: 48 of 48 candidate pools (100.0%) are empty: the searches found nothing to read, so these answers had no evidence (0 of 0 distinct queries returned no results, 168 planner step(s) gave no query, 118 of them copied placeholders); see the queries in trajectories.jsonl\n";
    assert!(stderr.contains(warning), "{stderr}");
    // Issue #51: 101 + 176 = 277 of the 313 cut replies echo the prompt, which more tokens
    // would only let copy more; the other 36 (planner replies cut before any object closed)
    // may need the room.
    let cut = "warning: 313 of 360 reply(ies) were cut at --max-tokens 256 (finish_reason \"length\"); 277 of them echo the prompt (repeat its lines or placeholders) instead of answering, which more tokens do not help; the other 36 may need more room: pass a larger --max-tokens\n";
    assert!(stderr.contains(cut), "{stderr}");
    assert!(!stdout.contains("warning"));

    // run-audit: no valid pool (it said `valid 6/24`), the same counts and warning.
    let audit = json_of(stats().arg("run-audit").arg(&out).arg("--json"));
    let t = &audit["totals"];
    let got: Vec<u64> = [
        "trajectories",
        "steps",
        "queries",
        "distinct_queries",
        "empty_searches",
        "planning_failures",
        "refused_queries",
        "empty_pools",
        "packets",
        "empty_packets",
        "reads",
        "refused_answers",
        "echoed_answers",
        "truncated_steps",
        "truncated_reads",
    ]
    .iter()
    .map(|k| t[k].as_u64().unwrap())
    .collect();
    assert_eq!(
        got,
        [48, 168, 0, 0, 0, 168, 118, 48, 96, 96, 192, 176, 16, 137, 176]
    );
    for row in audit["rows"].as_array().unwrap() {
        assert_eq!(row["trajectories"], 24);
        let got = [
            "steps",
            "truncated_steps",
            "reads",
            "truncated_reads",
            "echoed_answers",
        ]
        .map(|k| row[k].as_u64().unwrap());
        assert_eq!(got, [96, 77, 48, 44, 4], "{row}");
        assert_eq!(row["valid_pools"], 0);
        assert_eq!(row["planning_failures"], 24);
        assert_eq!(row["empty_pools"], 24);
        assert_eq!(row["empty_packets"], 24);
    }
    let o = stats().arg("run-audit").arg(&out).output().unwrap();
    let (text, err) = (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    );
    assert!(err.contains(warning), "{err}");
    for l in &lines[1..] {
        assert!(text.contains(&format!("{l}\n")), "{l}\n{text}");
    }
}
