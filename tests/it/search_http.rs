//! The `http:` and `drg:` search backends against a scripted HTTP server on 127.0.0.1
//! (the LLM client's test server, keyed by the request's `query`).

use crate::support;

use std::time::Duration;

use base64::Engine as _;
use ragstats_agent::llm::RetryPolicy;
use ragstats_agent::search::http::HttpConfig;
use ragstats_agent::search::{mask, Search, SearchOptions, SearchResponse};
use serde_json::json;
use support::llm_server::{Reply, Server};

/// Fast retries (10 ms base, 40 ms cap), a key, no cache, no mask.
fn opts(retries: u32) -> SearchOptions {
    SearchOptions {
        http: HttpConfig {
            api_key: Some("search-key-123".into()),
            retry: RetryPolicy {
                max_retries: retries,
                base: Duration::from_millis(10),
                cap: Duration::from_millis(40),
                max_retry_after: Duration::from_secs(5),
            },
            rpm: None,
            timeout: Duration::from_secs(5),
        },
        ..SearchOptions::default()
    }
}

fn results_for(query: &str) -> Reply {
    let body = json!({"results": [
        {"id": format!("{query}-1"), "url": "https://en.wikipedia.org/wiki/A", "title": "A", "text": "alpha", "score": 3.5},
        {"id": format!("{query}-2"), "url": "https://hotpotqa.github.io/explorer.html", "title": "HotpotQA", "text": "the answer is yes", "score": 2.0},
        {"id": format!("{query}-3"), "url": "https://en.wikipedia.org/wiki/C", "title": "C", "text": "gamma"}
    ]});
    Reply::status(200, &body.to_string())
}

fn search(s: &Search, q: &str, k: usize) -> ragstats_core::Result<SearchResponse> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(s.search(q, k))
}

#[test]
fn post_protocol_request_and_records() {
    let server = Server::start(|r, _| results_for(&r.prompt));
    let s = Search::open(&format!("http:{}", server.base), opts(0)).unwrap();
    assert_eq!(s.name(), format!("http:{}", server.base));
    let r = search(&s, "Ed Wood nationality", 3).unwrap();
    assert!(!r.cached);
    assert_eq!(r.masked, 0);
    let ids: Vec<_> = r.records.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "Ed Wood nationality-1",
            "Ed Wood nationality-2",
            "Ed Wood nationality-3"
        ]
    );
    assert_eq!(r.records[0].score, Some(3.5));
    assert_eq!(r.records[2].score, None);
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/v1");
    assert_eq!(
        seen[0].body,
        json!({"query": "Ed Wood nationality", "k": 3})
    );
    assert_eq!(seen[0].headers["authorization"], "Bearer search-key-123");
}

#[test]
fn retries_429_and_503_then_succeeds() {
    let server = Server::start(|r, n| match n {
        0 => Reply::status(429, r#"{"error":"slow down"}"#),
        1 => Reply::status(503, "busy"),
        _ => results_for(&r.prompt),
    });
    let s = Search::open(&format!("http:{}", server.base), opts(3)).unwrap();
    let r = search(&s, "q", 10).unwrap();
    assert_eq!(r.records.len(), 3);
    assert_eq!(server.count(), 3);
}

#[test]
fn retry_after_is_honoured() {
    // 503 with Retry-After: 1 (second); the backoff alone would wait under 40 ms.
    let server = Server::start(|r, n| {
        if n == 0 {
            Reply::status(503, "busy").header("Retry-After", "1")
        } else {
            results_for(&r.prompt)
        }
    });
    let s = Search::open(&format!("http:{}", server.base), opts(2)).unwrap();
    search(&s, "q", 10).unwrap();
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    let gap = seen[1].at.duration_since(seen[0].at);
    assert!(gap >= Duration::from_millis(950), "waited only {gap:?}");
}

#[test]
fn gives_up_after_the_retries_and_does_not_retry_auth() {
    let server = Server::start(|_, _| Reply::status(503, "down"));
    let s = Search::open(&format!("http:{}", server.base), opts(2)).unwrap();
    let err = search(&s, "q", 10).unwrap_err().to_string();
    assert!(
        err.contains("HTTP 503: down (gave up after 3 attempts)"),
        "{err}"
    );
    assert_eq!(server.count(), 3);

    let server = Server::start(|_, _| Reply::status(401, "bad key"));
    let s = Search::open(&format!("http:{}", server.base), opts(5)).unwrap();
    let err = search(&s, "q", 10).unwrap_err().to_string();
    assert!(
        err.contains("HTTP 401: bad key (auth, not retried)"),
        "{err}"
    );
    assert_eq!(server.count(), 1);
}

#[test]
fn cache_hit_makes_no_request() {
    let server = Server::start(|r, _| results_for(&r.prompt));
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        Search::open(
            &format!("http:{}", server.base),
            SearchOptions {
                cache_dir: Some(dir.path().to_path_buf()),
                ..opts(0)
            },
        )
        .unwrap()
    };
    let first = search(&open(), "q1", 10).unwrap();
    assert!(!first.cached);
    assert_eq!(server.count(), 1);
    // A re-run (a fresh Search over the same cache) asks nothing.
    let again = search(&open(), "q1", 10).unwrap();
    assert!(again.cached);
    assert_eq!(again.records, first.records);
    assert_eq!(server.count(), 1);
    // Another query, or another k, is a new request.
    search(&open(), "q2", 10).unwrap();
    search(&open(), "q1", 5).unwrap();
    assert_eq!(server.count(), 3);
    // A failed search stores nothing.
    let failing = Server::start(|_, _| Reply::status(400, "no"));
    let s = Search::open(
        &format!("http:{}", failing.base),
        SearchOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            ..opts(0)
        },
    )
    .unwrap();
    assert!(search(&s, "q3", 10).is_err());
    assert!(search(&s, "q3", 10).is_err());
    assert_eq!(failing.count(), 2);
}

#[test]
fn concurrent_identical_searches_make_one_request() {
    let server = Server::start(|r, _| results_for(&r.prompt).delayed(Duration::from_millis(200)));
    let dir = tempfile::tempdir().unwrap();
    let s = std::sync::Arc::new(
        Search::open(
            &format!("http:{}", server.base),
            SearchOptions {
                cache_dir: Some(dir.path().to_path_buf()),
                ..opts(0)
            },
        )
        .unwrap(),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let cached: Vec<bool> = rt.block_on(async {
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                tokio::spawn(async move { s.search("same", 10).await.unwrap().cached })
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    assert_eq!(server.count(), 1);
    assert_eq!(cached.iter().filter(|c| !**c).count(), 1);
}

#[test]
fn shipped_mask_blanks_benchmark_pages_and_counts_them() {
    let server = Server::start(|r, _| results_for(&r.prompt));
    let dir = tempfile::tempdir().unwrap();
    let mask_file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/search/mask.txt");
    let o = SearchOptions {
        cache_dir: Some(dir.path().to_path_buf()),
        mask: mask::read_patterns(&mask_file).unwrap(),
        ..opts(0)
    };
    let s = Search::open(&format!("http:{}", server.base), o).unwrap();
    for cached in [false, true] {
        let r = search(&s, "q", 10).unwrap();
        assert_eq!(r.cached, cached);
        assert_eq!(r.masked, 1);
        assert_eq!(r.records.len(), 3);
        let m = &r.records[1];
        assert_eq!(m.id, "q-2");
        assert_eq!(m.url, "https://hotpotqa.github.io/explorer.html");
        assert!(m.masked && m.title.is_empty() && m.text.is_empty());
        assert_eq!(m.score, Some(2.0));
        assert!(!r.records[0].masked && r.records[0].text == "alpha");
    }
    assert_eq!(server.count(), 1);
}

#[test]
fn bad_json_is_a_clear_error() {
    let server = Server::start(|_, n| match n {
        0 => Reply::status(200, "<html>oops</html>"),
        1 => Reply::status(200, r#"{"hits": []}"#),
        _ => Reply::status(200, r#"{"results": [{"title": "no id"}]}"#),
    });
    let s = Search::open(&format!("http:{}", server.base), opts(3)).unwrap();
    let e1 = search(&s, "q", 10).unwrap_err().to_string();
    assert!(
        e1.starts_with(&format!(
            "search {}: query \"q\": response body: not valid JSON",
            server.base
        )),
        "{e1}"
    );
    let e2 = search(&s, "q", 10).unwrap_err().to_string();
    assert!(e2.ends_with("response body: no \"results\" array"), "{e2}");
    let e3 = search(&s, "q", 10).unwrap_err().to_string();
    assert!(
        e3.ends_with("results[0]: a result has neither \"id\" nor \"url\""),
        "{e3}"
    );
    // A malformed 200 is not retried.
    assert_eq!(server.count(), 3);
}

#[test]
fn deepresearchgym_dialect() {
    let doc =
        json!({"id": "<urn:uuid:9>", "url": "https://x.org/p", "text": "hello", "dump": "CC-MAIN"});
    let b64 = base64::engine::general_purpose::STANDARD.encode(doc.to_string());
    let body = json!({"results": [b64]}).to_string();
    let server = Server::start(move |_, _| Reply::status(200, &body));
    let s = Search::open(&format!("drg:{}", server.base), opts(0)).unwrap();
    assert_eq!(s.name(), format!("drg:{}", server.base));
    let r = search(&s, "a b&c", 10).unwrap();
    assert_eq!(r.records[0].id, "<urn:uuid:9>");
    assert_eq!(r.records[0].text, "hello");
    let seen = server.requests();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].path, "/v1?query=a+b%26c&k=10");
    assert_eq!(seen[0].headers["x-api-key"], "search-key-123");
    assert!(!seen[0].headers.contains_key("authorization"));
}
