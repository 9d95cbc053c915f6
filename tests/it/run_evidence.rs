//! `stats run` when the model copies its prompt's format examples or the searches find
//! nothing: copied placeholders are refused with their reason in the log, the run's summary
//! and `run-audit` count the empty evidence and warn when most pools are empty; progress
//! lines in a log; the dry run's estimate from the index's document lengths.
//!
//! A two-document corpus and two questions (one per dataset), so every count is worked out
//! by hand; the model is the scripted 127.0.0.1 server.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use support::cli::{jsonl, run_ok, stats};
use support::llm_server::{cut_reply, ok_reply, Seen, Server};

const CORPUS: &str = r#"{"id":"d1","url":"https://w/d1","title":"Eiffel Tower","text":"The Eiffel Tower is in Paris, France."}
{"id":"d2","url":"https://w/d2","title":"Louvre","text":"The Louvre museum is in Paris."}
"#;

const QUESTIONS: &str = r#"{"id":"h1","dataset":"hotpotqa","question":"Where is the Eiffel Tower?","answers":["Paris"],"supporting":["d1"]}
{"id":"m1","dataset":"musique","question":"Who painted the Mona Lisa?","answers":["Leonardo da Vinci"],"supporting":[]}
"#;

/// The corpus's index and the question file in `dir`.
fn setup(dir: &Path) -> (String, PathBuf) {
    std::fs::write(dir.join("corpus.jsonl"), CORPUS).unwrap();
    let q = dir.join("questions.jsonl");
    std::fs::write(&q, QUESTIONS).unwrap();
    let idx = dir.join("idx");
    run_ok(
        stats()
            .args(["index", "build"])
            .arg(dir.join("corpus.jsonl"))
            .arg("--out")
            .arg(&idx),
    );
    (format!("local:{}", idx.display()), q)
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> &'a str {
    let i = s.find(a).unwrap() + a.len();
    let j = s[i..].find(b).unwrap() + i;
    &s[i..j]
}

/// What the planner (`Some(history length, adaptive)`) or the reader (`None`) is asked, and
/// the user message.
fn role(seen: &Seen) -> (Option<(usize, bool)>, String) {
    let msgs = seen.body["messages"].as_array().unwrap();
    let system = msgs[0]["content"].as_str().unwrap();
    let user = msgs[1]["content"].as_str().unwrap().to_string();
    if !system.starts_with("You plan web searches") {
        (None, user)
    } else if !user.contains("Query history:\n") {
        // A --prompt-dir template: the script reads it itself.
        (Some((0, false)), user)
    } else {
        let history = between(&user, "Query history:\n", "\n\nObservations:");
        let h = if history == "(none)" {
            0
        } else {
            history.lines().count()
        };
        let adaptive = !user.contains("Observations:\n(none)");
        (Some((h, adaptive)), user)
    }
}

fn run_cmd(search: &str, questions: &Path, base: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "run",
        questions.to_str().unwrap(),
        "--search",
        search,
        "--base-url",
        base,
        "--model",
        "m",
        "--trajectories",
        "1",
        "--reads",
        "1",
        "--steps",
        "2",
        "--selector",
        "rr",
        "--concurrency",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

struct Ran {
    stdout: String,
    stderr: String,
    logs: Vec<Value>,
    ledger: Vec<Value>,
}

fn run(search: &str, questions: &Path, server: &Server, out: &Path, extra: &[&str]) -> Ran {
    let o = stats()
        .args(run_cmd(search, questions, &server.base, out, extra))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    );
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    Ran {
        stdout,
        stderr,
        logs: jsonl(&out.join("trajectories.jsonl")),
        ledger: jsonl(&out.join("ledger.jsonl")),
    }
}

fn audit(out: &Path) -> (Value, String, String) {
    let json = support::cli::json_of(stats().arg("run-audit").arg(out).arg("--json"));
    let o = stats().arg("run-audit").arg(out).output().unwrap();
    assert!(o.status.success());
    (
        json,
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

fn step<'a>(logs: &'a [Value], q: &str, arm: &str, s: usize) -> &'a Value {
    let t = logs
        .iter()
        .find(|t| t["question_id"] == q && t["arm"] == arm)
        .unwrap();
    &t["steps"][s]
}

fn read<'a>(logs: &'a [Value], q: &str, arm: &str) -> &'a Value {
    let t = logs
        .iter()
        .find(|t| t["question_id"] == q && t["arm"] == arm)
        .unwrap();
    &t["reads"][0]
}

const COPIED_QUERY: &str = "copied placeholder \"...\" from builtin planner_user.txt: the query is the prompt's format example, not filled in";
const COPIED_ANSWER: &str = "copied placeholder \"...\" from builtin reader_user.txt: the answer is the prompt's format example, not filled in";

/// h1's first query finds d1, m1's ("xqzvw") finds nothing; Open's second step copies
/// `{"query": "..."}`, Adaptive's repeats "xqzvw". The reader copies `{"answer": "..."}`
/// when it is shown no documents and answers Paris otherwise.
#[test]
fn copied_placeholders_are_refused_and_empty_evidence_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let server = Server::start(|seen, _| {
        let text = match role(seen) {
            (Some((0, _)), user) if user.contains("Eiffel") => r#"{"query": "Eiffel Tower"}"#,
            (Some((0, _)), _) => r#"{"query": "xqzvw"}"#,
            (Some((_, false)), _) => r#"{"query": "..."}"#,
            (Some((_, true)), _) => r#"{"query": "xqzvw"}"#,
            (None, user) if user.contains("Documents:\n(none)") => r#"{"answer": "..."}"#,
            (None, _) => r#"{"answer": "Paris"}"#,
        };
        ok_reply(text)
    });
    let out = tmp.path().join("mixed");
    let r = run(&search, &questions, &server, &out, &[]);
    // The whole summary (docs/run.md shows it), on stdout.
    assert_eq!(
        r.stdout,
        format!(
            "10 model call(s) (2 from cache, 8 request(s) sent), 4 search(es) (2 from cache)
queries: 4 of 6 planner step(s) gave a query; 2 distinct, 1 of them found no results
planning failures: 2 step(s), 2 of them copied placeholders (refused, not searched)
empty candidate pools: 2 of 4; empty packets: 2 of 4
reads: 4, 2 of them copied placeholders, 0 echoed the prompt (refused, scored 0)
cut at max_tokens (finish_reason length): 0 of 6 planner step(s), 0 of 4 read(s) (a complete JSON object in a cut reply is still used)
2 question(s), 4 trajectory record(s), 4 panel row(s), 18 ledger row(s) -> {}/{{panel.csv,trajectories.jsonl,ledger.jsonl}}
",
            out.display()
        )
    );

    // The copy is refused with its reason and not searched; the other steps are as asked.
    let s = step(&r.logs, "h1", "open", 1);
    assert_eq!(s["planner_text"], r#"{"query": "..."}"#);
    assert!(s["query"].is_null());
    assert_eq!(s["failure"], COPIED_QUERY);
    assert_eq!(s["results"].as_array().unwrap().len(), 0);
    assert_eq!(step(&r.logs, "h1", "open", 0)["results"][0]["id"], "d1");
    assert_eq!(step(&r.logs, "m1", "adaptive", 1)["query"], "xqzvw");
    // Searches in the ledger: one per parsed query of each arm (step 0 in both), none for
    // the refused steps.
    let searches: Vec<&Value> = r.ledger.iter().filter(|x| x["kind"] == "search").collect();
    assert_eq!(searches.len(), 6);
    assert!(!searches
        .iter()
        .any(|x| x["arm"] == "open" && x["step"] == 1));
    // m1's packets are empty: the reader copied its placeholder, refused and scored 0, with
    // an empty answer in the panel; h1's answer is read and scored as usual.
    for arm in ["open", "adaptive"] {
        let m = read(&r.logs, "m1", arm);
        assert_eq!(m["reader_text"], r#"{"answer": "..."}"#);
        assert_eq!(
            (m["answer"].as_str(), m["em"].as_f64()),
            (Some(""), Some(0.0))
        );
        assert_eq!(m["failure"], COPIED_ANSWER);
        let h = read(&r.logs, "h1", arm);
        assert_eq!(
            (h["answer"].as_str(), h["em"].as_f64()),
            (Some("Paris"), Some(1.0))
        );
        assert!(h.get("failure").is_none(), "{h}");
    }
    let panel = std::fs::read_to_string(out.join("panel.csv")).unwrap();
    assert!(panel.contains("\nmusique,m1,0,0,open,rr,0,0,\n"), "{panel}");

    // Hand counts: 4 trajectories; 6 planner steps (step 0 once per question); 4 queries,
    // 2 distinct ("Eiffel Tower", "xqzvw"), 1 of them empty; the 2 Open copies; m1's two
    // pools and packets empty; 2 of 4 reads refused. Half the pools is not most: no warning.
    let lines = [
        "queries: 4 of 6 planner step(s) gave a query; 2 distinct, 1 of them found no results",
        "planning failures: 2 step(s), 2 of them copied placeholders (refused, not searched)",
        "empty candidate pools: 2 of 4; empty packets: 2 of 4",
        "reads: 4, 2 of them copied placeholders, 0 echoed the prompt (refused, scored 0)",
    ];
    for l in lines {
        assert!(r.stdout.contains(&format!("{l}\n")), "{l}\n{}", r.stdout);
    }
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    // The end-of-command summary is on stdout, not stderr.
    assert!(
        r.stdout.contains(
            "10 model call(s) (2 from cache, 8 request(s) sent), 4 search(es) (2 from cache)"
        ),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("model call(s)"), "{}", r.stderr);

    let (json, text, err) = audit(&out);
    let t = &json["totals"];
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
    ]
    .iter()
    .map(|k| t[k].as_u64().unwrap())
    .collect();
    assert_eq!(got, [4, 6, 4, 2, 1, 2, 2, 2, 4, 2, 4, 2]);
    assert_eq!(json["warnings"].as_array().unwrap().len(), 0);
    let rows = json["rows"].as_array().unwrap();
    let row = |arm: &str| rows.iter().find(|r| r["arm"] == arm).unwrap();
    let fields = |r: &Value| {
        [
            "valid_pools",
            "failed_steps",
            "refused_queries",
            "empty_result_steps",
            "empty_pools",
            "empty_packets",
            "refused_answers",
        ]
        .map(|k| r[k].as_u64().unwrap())
    };
    // Open: both pools valid (step 0 parsed), 2 refused steps, m1's step 0 empty.
    assert_eq!(fields(row("open")), [2, 2, 2, 1, 1, 1, 1]);
    // Adaptive: no failure; m1's two steps and h1's second found nothing.
    assert_eq!(fields(row("adaptive")), [2, 0, 0, 3, 1, 1, 1]);
    for l in lines {
        assert!(text.contains(&format!("{l}\n")), "{l}\n{text}");
    }
    assert!(!err.contains("warning"), "{err}");
}

/// Cut replies and echoes, by hand (2 questions, 1 trajectory, 2 steps, both arms, rr, 1 read:
/// 3 planner calls and 2 reads per question). h1's step 0 is cut after a complete
/// `{"query": "Eiffel Tower"}` (used), its step 1 asks "Louvre" in both arms; every m1
/// planner reply is cut inside its object (a planning failure that says so; Adaptive's step
/// 1 is Open's request again). The reader's reply on h1's packet (the same in both arms) is
/// cut after a complete answer, used; on m1's empty packet it writes an invented question in
/// the prompt's layout, refused as an echo. Cut: 1 + 3 of 6 steps, 2 of 4 reads.
#[test]
fn cut_replies_are_counted_and_prompt_echoes_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let server = Server::start(|seen, _| match role(seen) {
        (Some((0, _)), user) if user.contains("Eiffel") => {
            cut_reply(r#"{"query": "Eiffel Tower"} because the tower"#)
        }
        (Some(_), user) if user.contains("Eiffel") => ok_reply(r#"{"query": "Louvre"}"#),
        (Some(_), _) => cut_reply(r#"{"query": "Mona Lisa pai"#),
        (None, user) if user.contains("Documents:\n(none)") => {
            ok_reply("Question: What is the capital of France?\n\nDocuments:\n(none)")
        }
        (None, _) => cut_reply("{\"answer\": \"Paris\"}\nThe Eiffel Tower is in"),
    });
    let out = tmp.path().join("cut");
    let r = run(&search, &questions, &server, &out, &["--max-tokens", "64"]);
    assert_eq!(server.count(), 3 + 2 + 2);

    let h0 = step(&r.logs, "h1", "open", 0);
    assert_eq!(
        (h0["query"].as_str(), h0["truncated"].as_bool()),
        (Some("Eiffel Tower"), Some(true))
    );
    // Written only when true.
    assert!(step(&r.logs, "h1", "open", 1).get("truncated").is_none());
    for arm in ["open", "adaptive"] {
        for s in 0..2 {
            let m = step(&r.logs, "m1", arm, s);
            assert_eq!(m["truncated"], true);
            assert_eq!(
                m["failure"],
                "no JSON object in the planner reply (the reply was cut at max_tokens: finish_reason length)"
            );
        }
        let h = read(&r.logs, "h1", arm);
        assert_eq!(
            (h["answer"].as_str(), h["em"].as_f64()),
            (Some("Paris"), Some(1.0))
        );
        assert_eq!(h["truncated"], true);
        assert!(h.get("failure").is_none());
        let m = read(&r.logs, "m1", arm);
        assert_eq!(
            (m["answer"].as_str(), m["em"].as_f64()),
            (Some(""), Some(0.0))
        );
        assert!(m.get("truncated").is_none());
        assert_eq!(
            m["failure"],
            "copied prompt: the answer line \"Question: What is the capital of France?\" starts with the section label \"Question:\" of builtin reader_user.txt; the reply lays out the prompt again instead of answering"
        );
    }

    let lines = [
        "reads: 4, 0 of them copied placeholders, 2 echoed the prompt (refused, scored 0)",
        "cut at max_tokens (finish_reason length): 4 of 6 planner step(s), 2 of 4 read(s) (a complete JSON object in a cut reply is still used)",
    ];
    for l in lines {
        assert!(r.stdout.contains(&format!("{l}\n")), "{l}\n{}", r.stdout);
    }
    let warning = "warning: 6 of 10 reply(ies) were cut at --max-tokens 64 (finish_reason \"length\"); their text is incomplete. Pass a larger --max-tokens if the replies need more room\n";
    assert!(r.stderr.contains(warning), "{}", r.stderr);
    // Two of four pools (m1's) are empty: not most.
    assert!(!r.stderr.contains("candidate pools"), "{}", r.stderr);

    let (json, text, _) = audit(&out);
    let t = &json["totals"];
    let got = [
        "steps",
        "truncated_steps",
        "reads",
        "truncated_reads",
        "echoed_answers",
        "refused_answers",
    ]
    .map(|k| t[k].as_u64().unwrap());
    assert_eq!(got, [6, 4, 4, 2, 2, 0]);
    for row in json["rows"].as_array().unwrap() {
        // Each arm: h1's step 0 and m1's two steps of 4; h1's read; m1's read echoed.
        let got = [
            "steps",
            "truncated_steps",
            "reads",
            "truncated_reads",
            "echoed_answers",
        ]
        .map(|k| row[k].as_u64().unwrap());
        assert_eq!(got, [4, 3, 2, 1, 1], "{row}");
    }
    for l in lines {
        assert!(text.contains(&format!("{l}\n")), "{l}\n{text}");
    }
    // The table's columns: echo_a, cut_q, cut_a.
    let row = text.lines().find(|l| l.starts_with("open")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[12..15], ["1/2", "3/4", "1/2"], "{row}");
}

/// The issue's real failure: the model copies `{"query": "..."}` and `{"answer": "..."}`
/// every time. Nothing is searched, every pool is empty, and both commands warn.
#[test]
fn a_run_of_copies_warns_that_the_pools_are_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let server = Server::start(|seen, _| {
        ok_reply(match role(seen) {
            (Some(_), _) => r#"{"query": "..."}"#,
            (None, _) => r#"{"answer": "..."}"#,
        })
    });
    let out = tmp.path().join("copies");
    let r = run(&search, &questions, &server, &out, &[]);
    assert!(r.ledger.iter().all(|x| x["kind"] != "search"));
    for t in &r.logs {
        for s in t["steps"].as_array().unwrap() {
            assert_eq!(s["failure"], COPIED_QUERY);
        }
        assert_eq!(t["reads"][0]["failure"], COPIED_ANSWER);
    }
    let warning = "warning: 4 of 4 candidate pools (100.0%) are empty: the searches found nothing to read, so these answers had no evidence (0 of 0 distinct queries returned no results, 6 planner step(s) gave no query, 6 of them copied placeholders); see the queries in trajectories.jsonl\n";
    assert!(r.stderr.contains(warning), "{}", r.stderr);
    assert!(r
        .stdout
        .contains("empty candidate pools: 4 of 4; empty packets: 4 of 4\n"));
    assert!(r.stdout.contains("reads: 4, 4 of them copied placeholders"));
    let (json, text, err) = audit(&out);
    assert_eq!(json["totals"]["refused_queries"], 6);
    assert_eq!(json["warnings"].as_array().unwrap().len(), 1);
    // No valid pool any more (it said `valid 16/16` before), and the warning.
    for row in json["rows"].as_array().unwrap() {
        assert_eq!(
            (row["valid_pools"].as_u64(), row["trajectories"].as_u64()),
            (Some(0), Some(2))
        );
    }
    assert!(text.contains("planning failures: 6 step(s), 6 of them copied placeholders"));
    assert!(err.contains(warning), "{err}");
    assert!(!text.contains("warning"));
}

/// The issue's model with a token cap it runs into (issue #51): every reply copies the
/// prompt's format example and is cut at the cap. Each is refused as a copy, so the warning
/// says the cut replies are echoes, which more tokens do not help, instead of advising a
/// larger --max-tokens. (Genuinely cut replies keep that advice:
/// `cut_replies_are_counted_and_prompt_echoes_refused`.)
#[test]
fn cut_replies_that_copy_the_prompt_are_called_echoes() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let server = Server::start(|seen, _| {
        cut_reply(match role(seen) {
            (Some(_), _) => r#"{"query": "..."} {"query": "..."} {"query"#,
            (None, _) => r#"{"answer": "..."} {"answer": "..."} {"answer"#,
        })
    });
    let out = tmp.path().join("cut-copies");
    let r = run(&search, &questions, &server, &out, &["--max-tokens", "64"]);
    for t in &r.logs {
        for s in t["steps"].as_array().unwrap() {
            assert_eq!(s["truncated"], true);
            assert!(
                s["failure"].as_str().unwrap().starts_with(COPIED_QUERY),
                "{s}"
            );
        }
        assert_eq!(t["reads"][0]["truncated"], true);
        assert!(t["reads"][0]["failure"]
            .as_str()
            .unwrap()
            .starts_with(COPIED_ANSWER));
    }
    assert!(
        r.stdout.contains(
            "cut at max_tokens (finish_reason length): 6 of 6 planner step(s), 4 of 4 read(s)"
        ),
        "{}",
        r.stdout
    );
    let warning = "warning: 10 of 10 reply(ies) were cut at --max-tokens 64 (finish_reason \"length\"), and every one echoes the prompt (repeats its lines or placeholders) instead of answering: the model copies its prompt, so a larger --max-tokens would only make the run slower; try a model that follows the prompt, or another prompt\n";
    assert!(r.stderr.contains(warning), "{}", r.stderr);
    assert!(
        !r.stderr.contains("Pass a larger --max-tokens"),
        "{}",
        r.stderr
    );
}

/// Placeholders come from the templates in use: a --prompt-dir planner template's example
/// is refused (named by its file), and the built-in system template's
/// `<your next search query>`, replaced by one without an example, is a query again.
#[test]
fn prompt_dir_placeholders_replace_the_builtin_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    std::fs::write(
        prompts.join("planner_system.txt"),
        "You plan web searches. Reply with one JSON object.\n",
    )
    .unwrap();
    let user = prompts.join("planner_user.txt");
    std::fs::write(
        &user,
        "Question: {question}\nHistory: {history}\nSeen: {observations}\nReply {\"query\": \"QUERY GOES HERE\"}.\n",
    )
    .unwrap();
    let server = Server::start(|seen, _| {
        ok_reply(match role(seen) {
            (None, _) => r#"{"answer": "UNKNOWN"}"#,
            (Some(_), user) if user.contains("History: (none)") => {
                r#"{"query": "  Query goes   here "}"#
            }
            (Some(_), _) => r#"{"query": "..."}"#,
        })
    });
    let out = tmp.path().join("dir");
    let r = run(
        &search,
        &questions,
        &server,
        &out,
        &[
            "--planner",
            "open",
            "--prompt-dir",
            prompts.to_str().unwrap(),
        ],
    );
    for q in ["h1", "m1"] {
        let s0 = step(&r.logs, q, "open", 0);
        assert!(s0["query"].is_null());
        assert_eq!(
            s0["failure"],
            format!(
                "copied placeholder \"QUERY GOES HERE\" from {}: the query is the prompt's format example, not filled in",
                user.display()
            )
        );
        // Step 1 asks again with the same (empty) history and gets the copy again.
        assert!(step(&r.logs, q, "open", 1)["query"].is_null());
    }
    // A second run: step 1's `<your next search query>` is no placeholder of these templates,
    // so it is searched as any query would be (and finds nothing).
    let server2 = Server::start(|seen, _| {
        ok_reply(match role(seen) {
            (None, _) => r#"{"answer": "UNKNOWN"}"#,
            (Some(_), user) if user.contains("History: (none)") => r#"{"query": "Louvre"}"#,
            (Some(_), _) => r#"{"query": "<your next search query>"}"#,
        })
    });
    let out2 = tmp.path().join("dir2");
    let r2 = run(
        &search,
        &questions,
        &server2,
        &out2,
        &[
            "--planner",
            "open",
            "--prompt-dir",
            prompts.to_str().unwrap(),
        ],
    );
    let s1 = step(&r2.logs, "h1", "open", 1);
    assert_eq!(s1["query"], "<your next search query>");
    assert!(s1["failure"].is_null());
    assert!(s1["results"].as_array().unwrap().is_empty());
    assert!(r2.stdout.contains("queries: 4 of 4 planner step(s) gave a query; 2 distinct, 1 of them found no results\n"), "{}", r2.stdout);
}

/// A run whose stderr is a pipe (not a terminal) prints `progress:` lines counting its
/// model calls: 2 questions × (1 + 1 planner calls + 1 read) = 6.
#[test]
fn run_writes_progress_lines_into_a_log() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let server = Server::start(|seen, _| {
        ok_reply(match role(seen) {
            (Some((0, _)), _) => r#"{"query": "Eiffel"}"#,
            (Some(_), _) => r#"{"query": "Louvre"}"#,
            (None, _) => r#"{"answer": "Paris"}"#,
        })
        .delayed(Duration::from_millis(250))
    });
    let out = tmp.path().join("progress");
    let r = run(
        &search,
        &questions,
        &server,
        &out,
        &["--planner", "open", "--progress-every", "0.2"],
    );
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    // 6 calls of 250 ms each: about 1.5 s, so several lines, 0.2 s apart.
    assert!(lines.len() >= 3, "{}", r.stderr);
    let mut last = 0;
    for l in &lines {
        let done: u64 = between(l, "progress: ", "/").parse().unwrap();
        // The parts of the calls done add up to them (issue #51: cache hits were counted
        // inside "ok" and again as "cached").
        let parts: Vec<u64> = [
            (&format!("{done}/6 call(s) done: ")[..], " answered now, "),
            (" answered now, ", " from cache, "),
            (" from cache, ", " failed; "),
        ]
        .iter()
        .map(|(a, b)| between(l, a, b).parse().unwrap())
        .collect();
        assert_eq!(parts.iter().sum::<u64>(), done, "{l}");
        assert_eq!(
            (parts[1], parts[2]),
            (0, 0),
            "nothing cached or failed: {l}"
        );
        assert!(l.contains(" in flight, ") && l.contains(", eta "), "{l}");
        assert!(done >= last && done <= 6, "{l}");
        last = done;
    }
    assert!(!r.stdout.contains("progress:"));
    // The same run again is answered from the cache at once: its lines, if any, say so.
    let again = run(&search, &questions, &server, &out, &["--planner", "open"]);
    assert!(
        again
            .stdout
            .contains("6 model call(s) (6 from cache, 0 request(s) sent)"),
        "{}",
        again.stdout
    );
}

/// The dry run's estimate from the index's document lengths, by hand. Templates of known
/// size (planner 1 + 33 = 34 characters, reader 1 + 21 = 22); the two documents' blocks are
/// 96 and 83 characters, + 2 each for the blank line: D = (98 + 85) / 2 = 91.5. Both
/// questions have L = 26 characters; Open and Adaptive, rrf and rr, T = 1, R = 2, 2 steps,
/// k = 3 (3 documents observed per list, packets of 5). Per question:
///
/// * step 0: 34 + 26 + 12 = 72
/// * step 1, Open: 34 + 26 + (26 + 4) + 6 = 96
/// * step 1, Adaptive: 34 + 26 + 30 + (26 + 12 + 3 × 91.5) = 402.5
/// * 2 × 2 × 2 = 8 reads of 22 + 26 + 5 × 91.5 = 505.5 each: 4044
///
/// 2 × 4614.5 = 9229 characters / 4 = 2307.25 tokens, + 32 for each of the 22 calls:
/// 3011.25, so 3011.
#[test]
fn dry_run_estimates_input_tokens_from_the_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, questions) = setup(tmp.path());
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    for (f, text) in [
        ("planner_system.txt", "P"),
        ("planner_user.txt", "{question}{history}{observations}"),
        ("reader_system.txt", "R"),
        ("reader_user.txt", "{question}{documents}"),
    ] {
        std::fs::write(prompts.join(f), text).unwrap();
    }
    let args = |search: &str, json: bool| {
        let mut c = stats();
        c.args(["run", questions.to_str().unwrap(), "--search", search])
            .args(["--model", "m", "--trajectories", "1", "--reads", "2"])
            .args(["--steps", "2", "--k", "3", "--prompt-dir"])
            .arg(&prompts)
            .args(["--out", "/nonexistent/out", "--dry-run"]);
        if json {
            c.arg("--json");
        }
        c
    };
    let d = support::cli::json_of(&mut args(&search, true));
    assert_eq!(d["planner_calls"], 6);
    assert_eq!(d["reader_calls"], 16);
    assert_eq!(d["input_tokens_estimate"], 3011);
    assert_eq!(
        d["estimate_basis"],
        "92 characters per shown document (mean of all 2 documents of the index), 4 characters a token, full result lists and packets"
    );
    // The bound is far above it (every document at its cap).
    assert!(d["input_tokens_max"].as_u64().unwrap() > 100 * 3011);
    let text = run_ok(&mut args(&search, false));
    assert!(
        text.contains(
            "input tokens  ~           3011  (estimate: 92 characters per shown document"
        ),
        "{text}"
    );
    // No index to read: no estimate, and the reason.
    let d = support::cli::json_of(&mut args("local:/nonexistent", true));
    assert!(d["input_tokens_estimate"].is_null());
    assert_eq!(
        d["estimate_basis"],
        "no estimate: /nonexistent is not a search index (stats index build)"
    );
    let d = support::cli::json_of(&mut args("http:http://127.0.0.1:9/search", true));
    assert!(d["input_tokens_estimate"].is_null());
    assert!(d["estimate_basis"]
        .as_str()
        .unwrap()
        .starts_with("no estimate: the corpus of an http:/drg: search"));
}
