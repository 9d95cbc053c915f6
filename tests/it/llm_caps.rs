//! Issue #30 items 3, 4 and 7: every command that calls a model sends a `max_tokens` cap by
//! default (its documented default; an explicit `--max-tokens` wins), `--fold-system` sends
//! no `system` role (the system text, a blank line, then the user text) and has its own
//! cache entries, `stats llm check` detects a chat template that drops the system message,
//! replies cut at the cap are counted and reported, and end summaries go to stdout.
//! Request bodies are those the scripted 127.0.0.1 server captured.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};
use support::cli::{jsonl, mcq_demo, stats};
use support::llm_server::{Reply, Seen, Server};

/// A chat completion answering `text` with the given finish reason and prompt token count.
fn chat(text: &str, finish: &str, prompt_tokens: u64) -> Reply {
    let body = json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 3,
                  "total_tokens": prompt_tokens + 3}
    });
    Reply::status(200, &body.to_string())
}

/// Every message of a captured request, as (role, content) pairs.
fn messages(s: &Seen) -> Vec<(String, String)> {
    s.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// One script for every command: a planner gets a query, a reader an answer, an MCQ item an
/// answer line, a judge a score, a generator an (unusable) reply.
fn any_command(s: &Seen, _n: usize) -> Reply {
    let all = s.body["messages"].to_string();
    let text = if all.contains("You plan web searches") {
        r#"{"query": "Leland North Carolina film"}"#
    } else if all.contains("Documents:") {
        r#"{"answer": "Stephen King"}"#
    } else {
        "Score: 5\nAnswer: A"
    };
    chat(text, "stop", 10)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A requests file with a system message, for `stats llm batch`.
fn system_requests(dir: &Path) -> PathBuf {
    write(
        dir,
        "requests.jsonl",
        &(json!({"id": "q1", "messages": [
            {"role": "system", "content": "SYS: reply in French."},
            {"role": "user", "content": "Name a colour."}]})
        .to_string()
            + "\n"),
    )
}

fn index(dir: &Path) -> String {
    let idx = dir.join("idx");
    common::stats()
        .args(["index", "build", "data/qa/corpus.jsonl", "--out"])
        .arg(&idx)
        .assert()
        .success();
    format!("local:{}", idx.display())
}

/// The command lines of every LLM-calling command against `base` in `dir` (a fresh output
/// per call of this function, tagged `tag`), each with its documented default cap.
fn commands(
    dir: &Path,
    search: &str,
    base: &str,
    tag: &str,
) -> Vec<(&'static str, Vec<String>, u64)> {
    let p = |name: &str| dir.join(format!("{tag}-{name}")).display().to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let traj = mcq_demo("trajectories.jsonl").display().to_string();
    let req = system_requests(dir).display().to_string();
    let common = ["--model", "m", "--base-url", base, "--max-retries", "0"];
    let with = |mut v: Vec<String>, no_cache: bool| {
        v.extend(s(&common));
        if no_cache {
            v.push("--no-cache".into());
        }
        v
    };
    vec![
        ("llm check", with(s(&["llm", "check"]), false), 16),
        (
            "llm batch",
            with(s(&["llm", "batch", &req, "--out", &p("batch.jsonl")]), true),
            1024,
        ),
        (
            "mcq run",
            with(
                s(&[
                    "mcq",
                    "run",
                    "data/mcq/sample.jsonl",
                    "--out",
                    &p("mcq.jsonl"),
                ]),
                true,
            ),
            512,
        ),
        (
            "judge",
            with(s(&["judge", &traj, "--out", &p("judged.jsonl")]), true),
            512,
        ),
        (
            "mcq generate",
            with(
                s(&[
                    "mcq",
                    "generate",
                    &traj,
                    "--tasks",
                    "planning",
                    "--out",
                    &p("items.jsonl"),
                ]),
                true,
            ),
            1024,
        ),
        (
            "run",
            with(
                s(&[
                    "run",
                    "data/qa/questions.jsonl",
                    "--search",
                    search,
                    "--planner",
                    "open",
                    "--selector",
                    "rrf",
                    "--trajectories",
                    "1",
                    "--reads",
                    "1",
                    "--questions",
                    "1",
                    "--steps",
                    "1",
                    "--out",
                    &p("run"),
                ]),
                false,
            ),
            256,
        ),
    ]
}

/// Runs `args` against a fresh scripted server; returns what it captured and the output.
fn capture(args: &[String]) -> (Vec<Seen>, Output) {
    let server = Server::start(any_command);
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a == "BASE" {
                server.base.clone()
            } else {
                a.clone()
            }
        })
        .collect();
    let o = stats().args(&args).output().unwrap();
    (server.requests(), o)
}

fn ok(name: &str, o: &Output) {
    assert!(
        o.status.success(),
        "{name}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn every_command_caps_replies_by_default_and_an_explicit_cap_wins() {
    let dir = tempfile::tempdir().unwrap();
    let search = index(dir.path());
    for (tag, explicit) in [("default", None), ("explicit", Some("7"))] {
        for (name, mut args, default) in commands(dir.path(), &search, "BASE", tag) {
            if let Some(m) = explicit {
                args.extend(["--max-tokens".to_string(), m.to_string()]);
            }
            let (seen, o) = capture(&args);
            ok(name, &o);
            assert!(!seen.is_empty(), "{name}: no request");
            let want = explicit.map_or(default, |m| m.parse().unwrap());
            for s in &seen {
                assert_eq!(s.body["max_tokens"], want, "{name}: {}", s.body);
            }
        }
    }
    // --max-tokens 0 sends no cap (an API that refuses max_tokens); stats run refuses it.
    for (name, mut args, _) in commands(dir.path(), &search, "BASE", "zero") {
        args.extend(["--max-tokens".to_string(), "0".to_string()]);
        let (seen, o) = capture(&args);
        if name == "run" {
            assert_eq!(o.status.code(), Some(2), "{name}");
            assert!(String::from_utf8_lossy(&o.stderr)
                .contains("error: --max-tokens: must be at least 1 for a run"));
            assert!(seen.is_empty());
            continue;
        }
        ok(name, &o);
        assert!(!seen.is_empty(), "{name}: no request");
        for s in &seen {
            assert!(s.body.get("max_tokens").is_none(), "{name}: {}", s.body);
        }
    }
    // The default is in each command's --help.
    for (cmd, default) in [
        (vec!["llm", "check"], "16"),
        (vec!["llm", "batch"], "1024"),
        (vec!["mcq", "run"], "512"),
        (vec!["judge"], "512"),
        (vec!["mcq", "generate"], "1024"),
        (vec!["run"], "256"),
    ] {
        let o = stats().args(&cmd).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
        let at = help.find("--max-tokens <N>").unwrap();
        let rest = &help[at..];
        let end = rest[1..].find("  --").map_or(rest.len(), |i| i + 1);
        assert!(
            rest[..end].contains(&format!("[default: {default}]")),
            "{cmd:?}: {}",
            &rest[..end]
        );
    }
}

#[test]
fn fold_system_sends_no_system_role_from_any_command() {
    let dir = tempfile::tempdir().unwrap();
    let search = index(dir.path());
    let planner_system = std::fs::read_to_string("data/prompts/run/planner_system.txt").unwrap();
    for (name, args, _) in commands(dir.path(), &search, "BASE", "plain") {
        let (plain, o) = capture(&args);
        ok(name, &o);
        let mut folded_args = args.clone();
        folded_args.push("--fold-system".into());
        // A fresh output so that nothing is resumed.
        let folded_args: Vec<String> = folded_args
            .iter()
            .map(|a| a.replace("plain-", "folded-"))
            .collect();
        let (folded, o) = capture(&folded_args);
        ok(name, &o);
        assert!(!folded.is_empty(), "{name}: no request");
        for s in &folded {
            assert!(
                messages(s).iter().all(|(role, _)| role != "system"),
                "{name}: a system role was sent: {}",
                s.body
            );
        }
        let had_system = plain
            .iter()
            .any(|s| messages(s).iter().any(|(r, _)| r == "system"));
        match name {
            // These send system messages: each is folded into its request's user message.
            "llm batch" | "llm check" | "run" => {
                assert!(had_system, "{name}: no system message to fold");
                for p in plain.iter().filter(|s| messages(s)[0].0 == "system") {
                    let m = messages(p);
                    let want = format!("{}\n\n{}", m[0].1, m[1].1);
                    let twin = folded
                        .iter()
                        .find(|f| messages(f)[0].1 == want)
                        .unwrap_or_else(|| panic!("{name}: no folded twin of {}", p.body));
                    assert_eq!(messages(twin)[0].0, "user");
                    assert_eq!(messages(twin).len(), m.len() - 1);
                }
            }
            // These send one user message and no system message: folding changes nothing.
            _ => {
                assert!(!had_system, "{name}");
                let bodies = |v: &[Seen]| {
                    let mut b: Vec<String> = v.iter().map(|s| s.body.to_string()).collect();
                    b.sort();
                    b
                };
                assert_eq!(bodies(&plain), bodies(&folded), "{name}");
            }
        }
        if name == "run" {
            let first = messages(&folded[0]);
            assert!(
                first[0]
                    .1
                    .starts_with(&format!("{}\n\n", planner_system.trim_end()))
                    || first[0].1.starts_with(&format!("{planner_system}\n\n")),
                "{}",
                first[0].1
            );
        }
    }
}

#[test]
fn a_folded_request_has_its_own_cache_entry() {
    let dir = tempfile::tempdir().unwrap();
    let req = system_requests(dir.path());
    let server = Server::start(any_command);
    let cache = dir.path().join("cache");
    let batch = |out: &str, fold: bool| {
        let mut c = stats();
        c.args(["llm", "batch"])
            .arg(&req)
            .args(["--model", "m", "--base-url", &server.base, "--cache-dir"])
            .arg(&cache)
            .arg("--out")
            .arg(dir.path().join(out));
        if fold {
            c.arg("--fold-system");
        }
        let o = c.output().unwrap();
        ok(out, &o);
        server.count()
    };
    assert_eq!(batch("a.jsonl", false), 1);
    assert_eq!(batch("b.jsonl", false), 1, "unfolded: a cache hit");
    assert_eq!(batch("c.jsonl", true), 2, "folded: not the unfolded entry");
    assert_eq!(batch("d.jsonl", true), 2, "folded again: its own cache hit");
    assert_eq!(jsonl(&dir.path().join("d.jsonl"))[0]["cached"], true);
    let reqs = server.requests();
    assert_eq!(messages(&reqs[0])[0].0, "system");
    assert_eq!(
        messages(&reqs[1]),
        [(
            "user".to_string(),
            "SYS: reply in French.\n\nName a colour.".to_string()
        )]
    );
}

/// A server whose prompt token count is the number of characters of the messages it keeps,
/// over 4: with `drops` it keeps no system message, as a template without a system role.
fn counting_server(drops: bool) -> Server {
    Server::start(move |s, _| {
        let kept: usize = messages(s)
            .iter()
            .filter(|(r, _)| !(drops && r == "system"))
            .map(|(_, c)| c.len())
            .sum();
        chat("pong", "stop", (kept / 4) as u64 + 5)
    })
}

fn check(server: &Server, extra: &[&str]) -> (String, String) {
    let o = stats()
        .args(["llm", "check", "--model", "m", "--base-url", &server.base])
        .args(extra)
        .output()
        .unwrap();
    ok("llm check", &o);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn system_row(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("system role"))
        .unwrap_or_else(|| panic!("no system role row in {stdout}"))
        .trim()
        .to_string()
}

#[test]
fn check_detects_a_template_that_drops_the_system_message_and_suggests_folding() {
    let dropping = counting_server(true);
    let (out, err) = check(&dropping, &[]);
    let row = system_row(&out);
    assert!(row.starts_with("DROPPED by the chat template"), "{row}");
    assert!(err.contains("Pass --fold-system"), "{err}");
    // Three calls: the check, and the probe with and without a system message.
    assert_eq!(dropping.count(), 3);
    for s in dropping.requests() {
        assert_eq!(s.body["max_tokens"], 16);
    }

    let (out, err) = check(&dropping, &["--fold-system"]);
    let row = system_row(&out);
    assert!(
        row.starts_with("delivered (folded into the user message by --fold-system)"),
        "{row}"
    );
    assert!(!err.contains("--fold-system"), "{err}");

    let obeying = counting_server(false);
    let (out, err) = check(&obeying, &[]);
    let row = system_row(&out);
    assert!(row.starts_with("delivered: prompt_tokens"), "{row}");
    assert!(!err.contains("--fold-system"), "{err}");

    let (out, _) = check(&obeying, &["--no-system-probe"]);
    assert!(!out.contains("system role"), "{out}");
    let o = stats()
        .args([
            "llm",
            "check",
            "--model",
            "m",
            "--format",
            "json",
            "--base-url",
        ])
        .arg(&dropping.base)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["system_probe"]["verdict"], "dropped");
    assert_eq!(
        v["system_probe"]["prompt_tokens_with_system"],
        v["system_probe"]["prompt_tokens_without_system"]
    );
}

#[test]
fn llm_batch_counts_cut_replies_in_its_summary_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..5)
        .map(|i| {
            json!({"id": format!("q{i}"), "messages": [{"role": "user", "content": format!("p{i}")}]})
                .to_string()
                + "\n"
        })
        .collect();
    let req = write(dir.path(), "requests.jsonl", &text);
    // p1 and p3 stop at the cap.
    let server = Server::start(|s, _| {
        let cut = s.prompt == "p1" || s.prompt == "p3";
        chat("partial", if cut { "length" } else { "stop" }, 4)
    });
    let out = dir.path().join("out.jsonl");
    let o = stats()
        .args(["llm", "batch"])
        .arg(&req)
        .args([
            "--model",
            "m",
            "--no-cache",
            "--base-url",
            &server.base,
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    ok("llm batch", &o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stdout.contains("llm batch: 5 call(s): 0 already answered, 5 written now (5 ok, 0 failed, 0 from cache, 2 cut at max_tokens), 0 not run"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("output: {}", out.display())),
        "{stdout}"
    );
    assert!(!stderr.contains("llm batch:"), "{stderr}");
    assert!(
        stderr.contains("warning: 2 of 5 reply(ies) were cut at --max-tokens 1024"),
        "{stderr}"
    );
    let cut: Vec<String> = jsonl(&out)
        .iter()
        .filter(|r| r["finish_reason"] == "length")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(cut.len(), 2);
}

#[test]
fn judge_records_cut_replies_and_its_correlate_hint_runs_as_printed() {
    let dir = tempfile::tempdir().unwrap();
    // Scores vary with the prompt; every unit of the Bubye trajectory fails (no score), so
    // its row has empty cells; one Leland extraction reply is cut at the cap.
    let server = Server::start(|s, _| {
        let p = &s.prompt;
        if p.contains("Bubye") {
            chat("I cannot judge this.", "stop", 10)
        } else if p.contains("Answer: Chloë Leland") {
            chat("The step is", "length", 10)
        } else {
            chat(&format!("Score: {}", p.len() % 10 + 1), "stop", 10)
        }
    });
    let out = dir.path().join("judged.jsonl");
    let o = stats()
        .arg("judge")
        .arg(mcq_demo("trajectories.jsonl"))
        .args([
            "--model",
            "m",
            "--no-cache",
            "--base-url",
            &server.base,
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    ok("judge", &o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stdout.contains("judge: 5 trajectory(ies)"), "{stdout}");
    assert!(stdout.contains("1 repl(ies) cut at max_tokens"), "{stdout}");
    assert!(
        stderr.contains("warning: 1 of 19 reply(ies) were cut at --max-tokens 512"),
        "{stderr}"
    );
    let judged = jsonl(&out);
    let cut: Vec<&Value> = judged
        .iter()
        .flat_map(|j| j["steps"].as_array().unwrap())
        .filter(|s| s["truncated"] == true)
        .collect();
    assert_eq!(cut.len(), 1);
    assert!(
        cut[0]["failure"]
            .as_str()
            .unwrap()
            .ends_with("(the reply was cut at max_tokens: finish_reason length)"),
        "{}",
        cut[0]
    );
    // The hint, run as printed (with `stats` found on PATH).
    let hint = stderr
        .lines()
        .find_map(|l| l.strip_prefix("try: "))
        .unwrap_or_else(|| panic!("no hint in {stderr}"));
    assert!(hint.contains("--missing drop"), "{hint}");
    let bin = crate::support::cli::stats_path().parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = crate::support::cli::strip_secrets(
        std::process::Command::new("sh")
            .args(["-c", hint])
            .env("PATH", path),
    )
    .output()
    .unwrap();
    ok(hint, &o);
    let report = String::from_utf8_lossy(&o.stdout);
    let note = String::from_utf8_lossy(&o.stderr);
    assert!(report.contains("judge_score"), "{report}");
    assert!(
        note.contains("dropped 1 of 5 rows with missing values"),
        "{note}"
    );
}

#[test]
fn mcq_generate_says_why_it_wrote_no_items_and_counts_cut_replies() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(|_, _| chat("{\"reformulation\": \"x\", \"wrong", "length", 10));
    let out = dir.path().join("items.jsonl");
    let o = stats()
        .args(["mcq", "generate"])
        .arg(mcq_demo("trajectories.jsonl"))
        .args(["--tasks", "planning", "--model", "m", "--no-cache"])
        .args(["--base-url", &server.base, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    ok("mcq generate", &o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let n = server.count();
    assert!(n > 0);
    assert!(
        stdout.contains(&format!(
            "{n} run now: {n} answered now, 0 from cache, 0 failed; {n} cut at max_tokens"
        )),
        "{stdout}"
    );
    let skipped = dir.path().join("items.skipped.jsonl");
    assert!(
        stdout.contains(&format!(
            "items: none written (every candidate was skipped or rejected; the reasons are in {}); {} is empty",
            skipped.display(),
            out.display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("()"), "{stdout}");
    assert!(
        stderr.contains(&format!("warning: {n} of {n} reply(ies) were cut")),
        "{stderr}"
    );
    // Every reply was rejected, and says it was cut; the other skips made no call.
    let skips = jsonl(&skipped);
    let rejected: Vec<&str> = skips
        .iter()
        .filter_map(|s| s["reason"].as_str())
        .filter(|r| r.starts_with("rejected: "))
        .collect();
    assert_eq!(rejected.len(), n, "{skips:?}");
    for r in rejected {
        assert!(
            r.ends_with("(the reply was cut at max_tokens: finish_reason length)"),
            "{r}"
        );
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "");
}

#[test]
fn mcq_run_counts_cut_replies_and_reads_none_of_them() {
    let dir = tempfile::tempdir().unwrap();
    // pc-001 is cut before its answer line, pc-002 after an `Answer:` line, which is not its
    // final line and so is not read (issue #30); the rest stop normally.
    let server = Server::start(|s, _| {
        let p = &s.prompt;
        if p.contains("2014 FIFA World Cup") {
            chat(
                "Let me weigh the options one by one. Option A",
                "length",
                10,
            )
        } else if p.contains(&item_query(2)) {
            chat("Answer: A\nBecause the", "length", 10)
        } else {
            chat("Answer: A", "stop", 10)
        }
    });
    let out = dir.path().join("results.jsonl");
    let o = stats()
        .args([
            "mcq",
            "run",
            "data/mcq/sample.jsonl",
            "--model",
            "m",
            "--no-cache",
        ])
        .args(["--max-retries", "0", "--base-url", &server.base, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    ok("mcq run", &o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stdout.contains(
            "cut at max_tokens (finish_reason length): 2 of 25 repl(ies), all counted as truncated (a cut reply has no final answer line)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("2 truncated"), "{stdout}");
    assert!(
        stdout.contains("mcq run: 25 item(s) × 1 run(s) = 25 call(s)"),
        "{stdout}"
    );
    assert!(!stderr.contains("mcq run:"), "{stderr}");
    assert!(
        stderr.contains("warning: 2 of 25 reply(ies) were cut at --max-tokens 512"),
        "{stderr}"
    );
    let results = jsonl(&out);
    let by_id = |id: &str| results.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(by_id("pc-001")["outcome"], "truncated");
    assert_eq!(by_id("pc-001")["finish_reason"], "length");
    let second = results[1].clone();
    assert_eq!(second["outcome"], "truncated", "{second}");
    assert_eq!(second["finish_reason"], "length");
    assert_eq!(
        second["parse_note"],
        "cut off (finish_reason length) before its final answer line; the answer marker \
         before the cut is not read"
    );
}

/// The query of the n-th (1-based) item of data/mcq/sample.jsonl.
fn item_query(n: usize) -> String {
    let text = std::fs::read_to_string("data/mcq/sample.jsonl").unwrap();
    let v: Value = serde_json::from_str(text.lines().nth(n - 1).unwrap()).unwrap();
    v["query"].as_str().unwrap().to_string()
}
