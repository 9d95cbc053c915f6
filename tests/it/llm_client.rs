//! The LLM client and batch runner against a scripted HTTP server on 127.0.0.1.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use ragstats_agent::llm::append_log::load_records;
use ragstats_agent::llm::batch::{run_batch, BatchOptions, StopReason};
use ragstats_agent::llm::{
    CallRecord, Cancel, ChatRequest, Client, ClientConfig, ErrorKind, Message, RetryPolicy,
};
use serde_json::Value;
use support::llm_server::{answer_for, ok_reply, Reply, Server};

/// Fast retries: base 10 ms, cap 40 ms.
fn fast(server: &Server, cache: Option<&Path>) -> ClientConfig {
    ClientConfig {
        api_key: Some("sk-test-secret-123".into()),
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(10),
            cap: Duration::from_millis(40),
            ..RetryPolicy::default()
        },
        cache_dir: cache.map(Path::to_path_buf),
        ..ClientConfig::new(server.base.clone())
    }
}

fn req(id: &str, prompt: &str) -> ChatRequest {
    ChatRequest::new(id, "test-model", vec![Message::user(prompt).to_value()])
}

fn cache_files(dir: &Path) -> usize {
    if !dir.exists() {
        return 0;
    }
    std::fs::read_dir(dir)
        .unwrap()
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .sum()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn retry_after_one_second_is_honoured_on_429() {
    let server = Server::start(|r, n| {
        if n == 0 {
            Reply::status(
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
            )
            .header("Retry-After", "1")
        } else {
            ok_reply(&answer_for(&r.prompt))
        }
    });
    let client = Client::new(fast(&server, None)).unwrap();
    let rec = client.complete(&req("a", "p")).await;
    assert_eq!(rec.attempts, 2);
    assert_eq!(rec.text.as_deref(), Some("answer to p"));
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    let gap = seen[1].at.duration_since(seen[0].at);
    // The backoff alone would be under 40 ms; the server asked for 1 s.
    assert!(gap >= Duration::from_millis(950), "gap {gap:?}");
    assert!(gap < Duration::from_millis(2500), "gap {gap:?}");
    assert!(rec.elapsed_ms >= 950.0, "{}", rec.elapsed_ms);
}

#[tokio::test]
async fn retry_after_ms_takes_precedence() {
    let server = Server::start(|r, n| {
        if n == 0 {
            Reply::status(429, "{}")
                .header("retry-after-ms", "300")
                .header("Retry-After", "5")
        } else {
            ok_reply(&answer_for(&r.prompt))
        }
    });
    let client = Client::new(fast(&server, None)).unwrap();
    let t0 = Instant::now();
    let rec = client.complete(&req("a", "p")).await;
    let el = t0.elapsed();
    assert_eq!(rec.attempts, 2);
    assert!(rec.is_ok());
    assert!(
        el >= Duration::from_millis(290) && el < Duration::from_secs(3),
        "{el:?}"
    );
}

#[tokio::test]
async fn two_503_then_success_is_three_attempts_and_cached_after() {
    let server = Server::start(|r, n| {
        if n < 2 {
            Reply::status(503, "upstream busy")
        } else {
            ok_reply(&answer_for(&r.prompt))
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(fast(&server, Some(dir.path()))).unwrap();
    let t0 = Instant::now();
    let rec = client.complete(&req("a", "p")).await;
    assert_eq!(rec.attempts, 3);
    assert_eq!(rec.text.as_deref(), Some("answer to p"));
    assert!(!rec.cached);
    let u = rec.usage.as_ref().unwrap();
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens, u.cached_prompt_tokens),
        (Some(10), Some(3), None)
    );
    // Two backoff waits, each under min(cap 40 ms, base·2^k): the call takes well under 1 s.
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    assert_eq!(client.stats().retries, 2);
    assert_eq!(cache_files(dir.path()), 1);
    // The same call again is a cache hit: no request, marked cached, zero attempts.
    let again = client.complete(&req("other-id", "p")).await;
    assert_eq!(server.count(), 3);
    assert!(again.cached);
    assert_eq!(again.attempts, 0);
    assert_eq!(again.id, "other-id");
    assert_eq!(again.text, rec.text);
    assert_eq!(again.usage, rec.usage);
}

#[tokio::test]
async fn persistent_503_fails_after_max_retries_and_is_not_cached() {
    let server = Server::start(|_, _| Reply::status(503, r#"{"error":{"message":"overloaded"}}"#));
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(fast(&server, Some(dir.path()))).unwrap();
    let rec = client.complete(&req("a", "p")).await;
    assert_eq!(rec.attempts, 4); // 1 + max_retries 3
    let e = rec.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Status);
    assert_eq!(e.status, Some(503));
    assert!(e.message.contains("overloaded"), "{}", e.message);
    assert!(rec.text.is_none());
    assert_eq!(cache_files(dir.path()), 0);
    client.complete(&req("a", "p")).await;
    assert_eq!(
        server.count(),
        8,
        "a failure is never served from the cache"
    );
}

#[tokio::test]
async fn slower_than_timeout_is_retried_then_recorded_as_timeout() {
    let server =
        Server::start(|r, _| ok_reply(&answer_for(&r.prompt)).delayed(Duration::from_millis(1500)));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = fast(&server, Some(dir.path()));
    cfg.timeout = Duration::from_millis(200);
    cfg.retry.max_retries = 1;
    let client = Client::new(cfg).unwrap();
    let t0 = Instant::now();
    let rec = client.complete(&req("a", "p")).await;
    let el = t0.elapsed();
    assert_eq!(rec.attempts, 2);
    assert_eq!(rec.error.as_ref().unwrap().kind, ErrorKind::Timeout);
    // Two attempts of 200 ms plus one short backoff; not the server's 1.5 s.
    assert!(
        el >= Duration::from_millis(400) && el < Duration::from_millis(1400),
        "{el:?}"
    );
    assert_eq!(cache_files(dir.path()), 0);
}

#[tokio::test]
async fn slow_once_then_fast_succeeds_on_second_attempt() {
    let server = Server::start(|r, n| {
        let d = if n == 0 { 1500 } else { 0 };
        ok_reply(&answer_for(&r.prompt)).delayed(Duration::from_millis(d))
    });
    let mut cfg = fast(&server, None);
    cfg.timeout = Duration::from_millis(300);
    let client = Client::new(cfg).unwrap();
    let rec = client.complete(&req("a", "p")).await;
    assert_eq!(rec.attempts, 2);
    assert!(rec.is_ok());
    assert!(
        rec.latency_ms < 300.0,
        "last attempt latency {}",
        rec.latency_ms
    );
    assert!(rec.elapsed_ms >= 300.0, "total {}", rec.elapsed_ms);
}

#[tokio::test]
async fn malformed_json_is_retried_and_never_cached() {
    let server = Server::start(|r, n| match (r.prompt.as_str(), n) {
        ("once", 0) => Reply::status(200, r#"{"choices": [{"message": {"content": "trunc"#),
        ("once", _) => ok_reply("fine"),
        _ => Reply::status(200, "<html>gateway</html>"),
    });
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = fast(&server, Some(dir.path()));
    cfg.retry.max_retries = 2;
    let client = Client::new(cfg).unwrap();
    let bad = client.complete(&req("a", "always")).await;
    assert_eq!(bad.attempts, 3);
    let e = bad.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Malformed);
    assert_eq!(e.status, Some(200));
    assert!(e.message.contains("not JSON"), "{}", e.message);
    assert_eq!(cache_files(dir.path()), 0);
    let good = client.complete(&req("b", "once")).await;
    assert_eq!(good.attempts, 2);
    assert_eq!(good.text.as_deref(), Some("fine"));
    assert_eq!(cache_files(dir.path()), 1);
}

#[tokio::test]
async fn dropped_connection_is_retried() {
    let server = Server::start(|r, n| match (r.prompt.as_str(), n) {
        ("once", 0) => Reply::Drop,
        ("once", _) => ok_reply("back"),
        _ => Reply::Drop,
    });
    let client = Client::new(fast(&server, None)).unwrap();
    let rec = client.complete(&req("a", "once")).await;
    assert_eq!(rec.attempts, 2);
    assert_eq!(rec.text.as_deref(), Some("back"));
    let rec = client.complete(&req("b", "always")).await;
    assert_eq!(rec.attempts, 4);
    assert_eq!(rec.error.unwrap().kind, ErrorKind::Connection);
    assert_eq!(
        server.count(),
        6,
        "each attempt is one request the server saw"
    );
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_the_key_is_not_repeated() {
    let server = Server::start(|r, _| {
        let auth = r.headers.get("authorization").cloned().unwrap_or_default();
        let key = auth.trim_start_matches("Bearer ");
        Reply::status(
            401,
            &format!(
                r#"{{"error":{{"message":"Incorrect API key provided: {key}","code":"invalid_api_key"}}}}"#
            ),
        )
    });
    let client = Client::new(fast(&server, None)).unwrap();
    let rec = client.complete(&req("a", "p")).await;
    assert_eq!(rec.attempts, 1);
    let e = rec.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Auth);
    assert_eq!(e.status, Some(401));
    assert!(!e.message.contains("sk-test-secret-123"), "{}", e.message);
    assert!(
        e.message.contains("Incorrect API key provided: [key]"),
        "{}",
        e.message
    );
    assert_eq!(
        server.requests()[0].headers["authorization"],
        "Bearer sk-test-secret-123"
    );
}

#[tokio::test]
async fn quota_429_400_and_404_are_not_retried() {
    let server = Server::start(|r, _| {
        match r.prompt.as_str() {
        "quota" => Reply::status(
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        )
        .header("Retry-After", "1"),
        "bad" => Reply::status(400, r#"{"error":{"message":"max_tokens too large"}}"#),
        _ => Reply::status(404, r#"{"error":"model not found"}"#),
    }
    });
    let client = Client::new(fast(&server, None)).unwrap();
    let t0 = Instant::now();
    for (p, kind, status) in [
        ("quota", ErrorKind::Quota, 429),
        ("bad", ErrorKind::Rejected, 400),
        ("missing", ErrorKind::Rejected, 404),
    ] {
        let rec = client.complete(&req(p, p)).await;
        assert_eq!(rec.attempts, 1, "{p}");
        let e = rec.error.unwrap();
        assert_eq!((e.kind, e.status), (kind, Some(status)), "{p}");
    }
    assert!(
        t0.elapsed() < Duration::from_millis(900),
        "Retry-After ignored for quota"
    );
    assert_eq!(server.count(), 3);
}

#[tokio::test]
async fn request_body_carries_params_extra_and_seed_per_sample() {
    let server = Server::echo(Duration::ZERO);
    let client = Client::new(fast(&server, None)).unwrap();
    let mut r = req("a", "p");
    r.sample = 2;
    r.params.temperature = Some(0.7);
    r.params.top_p = Some(0.9);
    r.params.max_tokens = Some(64);
    r.params.seed = Some(100);
    r.extra.insert("enable_thinking".into(), Value::Bool(false));
    client.complete(&r).await;
    let seen = &server.requests()[0];
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/v1/chat/completions");
    let b = &seen.body;
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["messages"][0]["content"], "p");
    assert_eq!(b["temperature"], 0.7);
    assert_eq!(b["top_p"], 0.9);
    assert_eq!(b["max_tokens"], 64);
    assert_eq!(b["seed"], 102);
    assert_eq!(b["enable_thinking"], false);
}

fn calls(n: usize) -> Vec<ChatRequest> {
    (0..n)
        .map(|i| req(&format!("q{i}"), &format!("prompt {i}")))
        .collect()
}

#[tokio::test]
async fn concurrency_limit_is_respected() {
    let server = Server::echo(Duration::from_millis(60));
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(fast(&server, None)).unwrap();
    let mut opts = BatchOptions::new(dir.path().join("out.jsonl"));
    opts.concurrency = 5;
    let mut ticks = 0;
    let s = run_batch(&client, calls(40), &opts, &mut |_| ticks += 1)
        .await
        .unwrap();
    assert_eq!(server.max_concurrent(), 5);
    assert_eq!(s.progress.done, 40);
    assert_eq!(s.progress.ok, 40);
    assert!(ticks >= 40);
    let out = lines(&opts.out);
    assert_eq!(out.len(), 40);
    for v in &out {
        let id = v["id"].as_str().unwrap();
        assert_eq!(v["text"], format!("answer to prompt {}", &id[1..]));
        assert_eq!(v["attempts"], 1);
    }
}

#[tokio::test]
async fn bad_key_stops_the_batch_after_the_requests_in_flight() {
    let server = Server::start(|_, _| Reply::status(401, r#"{"error":{"message":"bad key"}}"#));
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(fast(&server, None)).unwrap();
    let mut opts = BatchOptions::new(dir.path().join("out.jsonl"));
    opts.concurrency = 2;
    let s = run_batch(&client, calls(50), &opts, &mut |_| {})
        .await
        .unwrap();
    match s.stopped {
        Some(StopReason::Fatal { error }) => assert_eq!(error.kind, ErrorKind::Auth),
        other => panic!("expected a fatal stop, got {other:?}"),
    }
    assert!(
        server.count() <= 2,
        "{} requests spent on a bad key",
        server.count()
    );
    assert_eq!(s.progress.done, 0);
    assert_eq!(s.not_run, 50);
    assert_eq!(std::fs::read_to_string(&opts.out).unwrap(), "");
}

#[tokio::test]
async fn failed_calls_are_asked_again_on_rerun_and_billed_once_each() {
    let server = Server::start(|r, n| {
        if r.prompt == "prompt 1" && n == 0 {
            Reply::status(500, "boom")
        } else {
            ok_reply(&answer_for(&r.prompt))
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = fast(&server, Some(&dir.path().join("cache")));
    cfg.retry.max_retries = 0;
    let client = Client::new(cfg).unwrap();
    let mut opts = BatchOptions::new(dir.path().join("out.jsonl"));
    opts.ledger = Some(dir.path().join("ledger.jsonl"));
    let s1 = run_batch(&client, calls(3), &opts, &mut |_| {})
        .await
        .unwrap();
    assert_eq!((s1.progress.ok, s1.progress.failed), (2, 1));
    let s2 = run_batch(&client, calls(3), &opts, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(s2.progress.skipped, 2);
    assert_eq!(s2.retried_failures, 1);
    assert_eq!((s2.progress.ok, s2.progress.failed), (1, 0));
    assert_eq!(server.count(), 4);
    // The output keeps the error, then the answer; the latest record wins.
    let out = lines(&opts.out);
    assert_eq!(out.len(), 4);
    assert_eq!(out[out.len() - 1]["id"], "q1");
    let recs = load_records(&opts.out).unwrap();
    assert_eq!(recs.len(), 3);
    assert!(recs.values().all(CallRecord::is_ok));
    // One ledger row per answered call; the failure made none.
    let ledger = lines(opts.ledger.as_ref().unwrap());
    assert_eq!(ledger.len(), 3);
    for row in &ledger {
        assert_eq!(row["kind"], "reader");
        assert_eq!(row["model"], "test-model");
        assert_eq!(row["input_tokens"], 10);
        assert_eq!(row["output_tokens"], 3);
        assert_eq!(row["cached_input_tokens"], Value::Null);
        assert_eq!(row["sample"], 0);
    }
    // A third run over a fresh output file is served from the cache: no requests, no rows.
    let mut opts3 = opts.clone();
    opts3.out = dir.path().join("out3.jsonl");
    let s3 = run_batch(&client, calls(3), &opts3, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(s3.progress.cached, 3);
    assert_eq!(server.count(), 4);
    assert_eq!(lines(opts.ledger.as_ref().unwrap()).len(), 3);
}

#[tokio::test]
async fn stop_lets_requests_in_flight_finish_and_dispatches_no_more() {
    let server = Server::echo(Duration::from_millis(100));
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(fast(&server, None)).unwrap();
    let mut opts = BatchOptions::new(dir.path().join("out.jsonl"));
    opts.concurrency = 3;
    let cancel = Cancel::new();
    opts.cancel = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(250)).await;
        cancel.stop();
    });
    let s = run_batch(&client, calls(30), &opts, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(s.stopped, Some(StopReason::Interrupted));
    assert!((3..=12).contains(&s.progress.done), "{}", s.progress.done);
    assert_eq!(s.progress.done + s.not_run, 30);
    // Every request the server received was answered and written: nothing paid for is lost.
    assert_eq!(server.count() as u64, s.progress.done);
    assert_eq!(lines(&opts.out).len() as u64, s.progress.done);
}

#[tokio::test]
async fn rpm_ceiling_spaces_requests() {
    // 600 rpm allows 600 starts per minute; with 3 calls nothing waits. With rpm 2, the
    // third request must wait for the first to leave the 60 s window, so stop the batch
    // after 1 s and check only two were sent.
    let server = Server::echo(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = fast(&server, None);
    cfg.rpm = Some(2);
    let client = Client::new(cfg).unwrap();
    let mut opts = BatchOptions::new(dir.path().join("out.jsonl"));
    let cancel = Cancel::new();
    opts.cancel = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        cancel.stop();
    });
    let s = run_batch(&client, calls(3), &opts, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(server.count(), 2);
    assert_eq!(s.progress.done, 2);
    assert_eq!(s.not_run, 1);
}

#[tokio::test]
async fn tpm_ceiling_uses_reported_usage_once_known() {
    // Each answer reports total_tokens 13. The estimate before sending is larger (prompt
    // chars / 4 + max_tokens 20). With a ceiling of 13 + estimate + 2, a second call fits
    // only once the first call's estimate has been replaced by its reported 13 tokens, and
    // a third does not fit within the minute.
    let server = Server::echo(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let mut batch = calls(3);
    for c in &mut batch {
        c.params.max_tokens = Some(20);
    }
    let est = ragstats_agent::llm::ratelimit::estimate_tokens(&batch[0].messages, Some(20));
    assert!(est > 15, "the test needs est + est > ceiling");
    let mut cfg = fast(&server, None);
    cfg.tpm = Some(13 + est + 2);
    let client = Client::new(cfg).unwrap();
    let mut opts = BatchOptions::new(dir.path().join("out.jsonl"));
    opts.concurrency = 1;
    let cancel = Cancel::new();
    opts.cancel = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        cancel.stop();
    });
    let s = run_batch(&client, batch, &opts, &mut |_| {}).await.unwrap();
    assert_eq!(server.count(), 2);
    assert_eq!(s.progress.done, 2);
}
