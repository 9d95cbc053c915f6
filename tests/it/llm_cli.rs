//! `stats llm` as a child process against the scripted server running in the test process:
//! resume after SIGKILL, Ctrl-C, cache, bad key, bad input, torn output lines, `check`.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::cli::stats;
use support::llm_server::{answer_for, Reply, Server};

fn write_requests(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("requests.jsonl");
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{{\"id\":\"q{i}\",\"messages\":[{{\"role\":\"user\",\"content\":\"prompt {i}\"}}]}}\n"
            )
        })
        .collect();
    std::fs::write(&p, text).unwrap();
    p
}

/// Parsed records of an output file, and the number of lines that were not JSON.
fn records(path: &Path) -> (Vec<Value>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut bad = 0;
    let recs = text
        .lines()
        .filter(|l| !l.is_empty())
        .filter_map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) => Some(v),
            Err(_) => {
                bad += 1;
                None
            }
        })
        .collect();
    (recs, bad)
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.matches('\n').count())
        .unwrap_or(0)
}

fn wait_for_lines(path: &Path, n: usize) {
    let t0 = Instant::now();
    while line_count(path) < n {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "output never reached {n} lines"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn batch_cmd(server: &Server, req: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = stats();
    c.args(["llm", "batch"])
        .arg(req)
        .args(["--model", "test-model", "--out"])
        .arg(out)
        .env("OPENAI_BASE_URL", &server.base)
        .args(extra);
    c
}

#[test]
fn resume_after_sigkill_answers_every_id_once_and_repeats_no_written_request() {
    let server = Server::echo(Duration::from_millis(15));
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 200);
    let out = dir.path().join("responses.jsonl");
    // --no-cache: the resume must come from the output file, not from cache hits.
    let args = ["--concurrency", "4", "--no-cache", "--max-retries", "0"];
    let mut child = batch_cmd(&server, &req, &out, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lines(&out, 50);
    child.kill().unwrap(); // SIGKILL on Unix: no chance to clean up.
    child.wait().unwrap();
    let (first, _) = records(&out);
    assert!(
        first.len() >= 50 && first.len() < 200,
        "{} written before kill",
        first.len()
    );
    let written: HashSet<String> = first
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let sent_before = server.count();

    let done = batch_cmd(&server, &req, &out, &args).output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // The end summary is on stdout (progress, warnings and hints on stderr).
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        stdout.contains(&format!("{} already answered", written.len())),
        "{stdout}"
    );

    let (all, bad) = records(&out);
    assert!(bad <= 1, "at most the line torn by the kill is unreadable");
    let mut per_id: HashMap<String, usize> = HashMap::new();
    for r in &all {
        let id = r["id"].as_str().unwrap();
        *per_id.entry(id.to_string()).or_default() += 1;
        let i: usize = id[1..].parse().unwrap();
        assert_eq!(r["text"], answer_for(&format!("prompt {i}")));
    }
    assert_eq!(per_id.len(), 200);
    assert!(per_id.values().all(|&c| c == 1), "some id answered twice");
    // The second run asked nothing that the first had written.
    for seen in &server.requests()[sent_before..] {
        let id = format!("q{}", seen.prompt.trim_start_matches("prompt "));
        assert!(
            !written.contains(&id),
            "{id} was written and requested again"
        );
    }
    // At most the 4 requests in flight at the kill were paid twice.
    assert!(server.count() <= 204, "{} requests", server.count());
}

#[test]
fn ctrl_c_keeps_finished_work_exits_130_and_rerun_pays_nothing_twice() {
    let server = Server::echo(Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 40);
    let out = dir.path().join("responses.jsonl");
    let args = ["--concurrency", "4", "--no-cache"];
    let child = batch_cmd(&server, &req, &out, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&out, 4);
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let res = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted:"), "{stderr}");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(
        stdout.contains("llm batch: 40 call(s)"),
        "summary printed: {stdout}"
    );
    let (first, bad) = records(&out);
    assert_eq!(bad, 0);
    assert!(first.len() < 40);
    // Requests in flight at Ctrl-C were allowed to finish and were written.
    assert_eq!(server.count(), first.len());

    let done = batch_cmd(&server, &req, &out, &args).output().unwrap();
    assert!(done.status.success());
    let (all, _) = records(&out);
    assert_eq!(all.len(), 40);
    assert_eq!(server.count(), 40, "no request was made twice");
}

#[test]
fn second_run_is_served_from_cache_with_the_same_answers_and_no_new_ledger_rows() {
    let server = Server::echo(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 20);
    let cache = dir.path().join("cache");
    let ledger = dir.path().join("calls.jsonl");
    let run = |out: &Path| {
        let o = batch_cmd(&server, &req, out, &["--concurrency", "8", "--cache-dir"])
            .arg(&cache)
            .arg("--ledger")
            .arg(&ledger)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let out1 = dir.path().join("r1.jsonl");
    let out2 = dir.path().join("r2.jsonl");
    run(&out1);
    assert_eq!(server.count(), 20);
    assert_eq!(line_count(&ledger), 20);
    run(&out2);
    assert_eq!(server.count(), 20, "the second run made requests");
    assert_eq!(line_count(&ledger), 20, "cache hits are not billed");
    let key = |r: &Value| {
        (
            r["id"].as_str().unwrap().to_string(),
            r["text"].clone(),
            r["usage"].clone(),
            r["reasoning"].clone(),
        )
    };
    let mut a: Vec<_> = records(&out1).0.iter().map(key).collect();
    let mut b: Vec<_> = records(&out2).0.iter().map(key).collect();
    a.sort_by(|x, y| x.0.cmp(&y.0));
    b.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(a, b);
    for r in records(&out2).0 {
        assert_eq!(r["cached"], true);
        assert_eq!(r["attempts"], 0);
    }
    for r in records(&out1).0 {
        assert_eq!(r["cached"], false);
    }
}

#[test]
fn bad_key_stops_at_once_with_a_clear_message_and_never_prints_the_key() {
    let server = Server::start(|r, _| {
        let key = r.headers["authorization"]
            .trim_start_matches("Bearer ")
            .to_string();
        Reply::status(
            401,
            &format!(r#"{{"error":{{"message":"Incorrect API key provided: {key}"}}}}"#),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 100);
    let out = dir.path().join("responses.jsonl");
    let o = batch_cmd(&server, &req, &out, &["--concurrency", "2", "--no-cache"])
        .env("OPENAI_API_KEY", "sk-cli-secret-xyz")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: HTTP 401"), "{stderr}");
    assert!(stderr.contains("$OPENAI_API_KEY"), "{stderr}");
    assert!(!stderr.contains("sk-cli-secret-xyz"), "{stderr}");
    assert!(server.count() <= 2);
    assert_eq!(line_count(&out), 0);
}

#[test]
fn bad_request_line_is_a_usage_error_naming_file_and_line() {
    let server = Server::echo(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let req = dir.path().join("requests.jsonl");
    std::fs::write(
        &req,
        "{\"id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n{\"id\":\"b\",\"messages\":\"hi\"}\n",
    )
    .unwrap();
    let o = batch_cmd(&server, &req, &dir.path().join("o.jsonl"), &[])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("requests.jsonl:2: request \"b\": \"messages\" must be an array"),
        "{stderr}"
    );
    assert_eq!(server.count(), 0);
}

#[test]
fn missing_base_url_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = stats()
        .args(["llm", "check", "--model", "m"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no base URL"));
}

#[test]
fn torn_last_line_is_reported_skipped_and_the_next_record_starts_a_new_line() {
    let server = Server::echo(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 3);
    let out = dir.path().join("responses.jsonl");
    std::fs::write(
        &out,
        "{\"id\":\"q0\",\"sample\":0,\"model\":\"test-model\",\"text\":\"old\",\"latency_ms\":1.0,\"elapsed_ms\":1.0,\"attempts\":1,\"cached\":false}\n{\"id\":\"q1\",\"sam",
    )
    .unwrap();
    let o = batch_cmd(&server, &req, &out, &["--no-cache"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("1 line(s) are not JSON"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
    let prompts: Vec<String> = server.requests().iter().map(|r| r.prompt.clone()).collect();
    assert_eq!(prompts.len(), 2);
    assert!(!prompts.contains(&"prompt 0".to_string()));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], "{\"id\":\"q1\",\"sam");
    for l in [lines[2], lines[3]] {
        let v: Value = serde_json::from_str(l).unwrap();
        assert!(v["text"].as_str().unwrap().starts_with("answer to prompt"));
    }
    // A third run finds everything answered (the torn line is skipped again).
    let o = batch_cmd(&server, &req, &out, &["--no-cache"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(server.count(), 2);
}

#[test]
fn check_shows_latency_and_the_usage_fields_returned() {
    let body = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/llm/deepseek_chat_cache_hit.json"),
    )
    .unwrap();
    let server = Server::start(move |_, _| Reply::status(200, &body));
    let o = stats()
        .args([
            "llm",
            "check",
            "--model",
            "deepseek-chat",
            "--base-url",
            &server.base,
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("/v1/chat/completions"), "{stdout}");
    assert!(stdout.contains("1 attempt(s)"), "{stdout}");
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .map(|l| l[name.len()..].trim().to_string())
            .unwrap_or_else(|| panic!("no {name} row in {stdout}"))
    };
    assert_eq!(row("prompt_tokens"), "1536");
    assert_eq!(row("cached_prompt_tokens"), "1472");
    assert_eq!(row("completion_tokens"), "3");
    assert_eq!(row("reasoning_tokens"), "null (not reported)");
    assert_eq!(row("text"), "Paris.");
    assert_eq!(server.requests()[0].body["model"], "deepseek-chat");

    let o = stats()
        .args([
            "llm",
            "check",
            "--model",
            "m",
            "--format",
            "json",
            "--base-url",
            &server.base,
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["usage"]["cached_prompt_tokens"], 1472);
    assert_eq!(v["attempts"], 1);
}

/// Issue #13 item 14: nothing listening at the base URL. The first `--concurrency` calls all
/// fail to connect, so the batch stops early with a clear message and exit 1 instead of
/// failing all 12 calls; progress lines reach stderr although it is not a terminal.
#[test]
fn nothing_listening_stops_after_the_first_concurrency_calls_with_exit_1() {
    // A port with nothing listening: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 12);
    let out = dir.path().join("responses.jsonl");
    let t0 = Instant::now();
    let o = stats()
        .args(["llm", "batch"])
        .arg(&req)
        .args(["--model", "m", "--out"])
        .arg(&out)
        .args(["--concurrency", "3", "--no-cache", "--max-retries", "2"])
        .args(["--backoff-base", "0.05", "--progress-every", "0.01"])
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the first 3 call(s) all failed to connect, so nothing seems to be listening at the base URL"),
        "{stderr}"
    );
    assert!(stderr.contains("progress: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The failed calls are recorded (a re-run asks them again): the first three, and the
    // ones already in flight when the third failed (at most 2 more); the rest never ran.
    let (recs, bad) = records(&out);
    assert!((3..=5).contains(&recs.len()) && bad == 0, "{recs:?}");
    let not_run = 12 - recs.len();
    assert!(
        stderr.contains(&format!("the batch stopped, {not_run} call(s) not run")),
        "{stderr}"
    );
    assert!(
        recs.iter().all(|r| r["error"]["kind"] == "connection"),
        "{recs:?}"
    );
    assert!(t0.elapsed() < Duration::from_secs(30));
}

/// Issue #13 item 14: a batch that runs to the end with failed calls (a server that answers
/// 500 to some prompts) exits 1 and says how many failed; one with none exits 0.
#[test]
fn a_batch_with_failed_calls_exits_1() {
    let server = Server::start(|r, _| {
        if r.prompt == "prompt 1" || r.prompt == "prompt 3" {
            Reply::status(500, r#"{"error":{"message":"boom"}}"#)
        } else {
            support::llm_server::ok_reply(&answer_for(&r.prompt))
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let req = write_requests(dir.path(), 6);
    let out = dir.path().join("responses.jsonl");
    let flags = [
        "--concurrency",
        "2",
        "--no-cache",
        "--max-retries",
        "1",
        "--backoff-base",
        "0.01",
    ];
    let o = batch_cmd(&server, &req, &out, &flags).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("(4 ok, 2 failed"), "{stdout}");
    assert!(
        stderr.contains("error: 2 call(s) failed; exit status 1"),
        "{stderr}"
    );
    // The two failures are recorded; every call ran (a server that answers is not "down").
    let (recs, _) = records(&out);
    assert_eq!(recs.len(), 6);
    // All answered: exit 0.
    let ok = Server::start(|r, _| support::llm_server::ok_reply(&answer_for(&r.prompt)));
    let out2 = dir.path().join("ok.jsonl");
    let o = batch_cmd(&ok, &req, &out2, &flags).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
