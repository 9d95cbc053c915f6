//! The hosted search backend: a JSON-over-HTTP search API (protocol in `docs/search.md`).
//!
//! Two dialects:
//! * [`Dialect::Post`] (`http:URL`, our protocol): `POST URL` with body
//!   `{"query": "...", "k": 10}`, key (when set) as `Authorization: Bearer KEY`.
//! * [`Dialect::DeepResearchGym`] (`drg:URL`, e.g. `drg:https://clueweb22.us/fineweb/search`):
//!   `GET URL?query=...&k=10`, key (when set) as `X-API-Key: KEY`.
//!
//! Response, both dialects: `{"results": [R, ...]}` in rank order, where each `R` is a JSON
//! object or a base64 string of one (DeepResearchGym sends base64). Fields read from an
//! object: `id` (else `doc_id`, `docid`, else the url), `url` (else `link`), `title`
//! (default empty), `text` (else `contents`, `content`, `snippet`; default empty), `score`
//! (else `distance`). An object with neither id nor url is an error. When the top level
//! also has an array `distances` (or `scores`) as long as `results`, it gives the scores.
//!
//! Policies, shared with the LLM client ([`crate::llm::retry`], [`crate::llm::ratelimit`]):
//! 408/409/429/5xx and transport errors are retried with full-jitter backoff or the server's
//! `Retry-After`; 401/403/402/quota-429/other 4xx fail at once; an optional
//! requests-per-minute ceiling.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde_json::{Map, Value};

use super::SearchRecord;
use crate::llm::ratelimit::WindowLimiter;
use crate::llm::retry::{classify_status, retry_after, Jitter, RetryPolicy, StatusClass};
use ragstats_core::{Error, Result};

/// The environment variable holding the search API key.
pub const KEY_ENV: &str = "STATS_SEARCH_KEY";

/// How requests are formed (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `POST` JSON body, Bearer key.
    Post,
    /// `GET` with query parameters, `X-API-Key` key.
    DeepResearchGym,
}

/// Settings of the HTTP backend.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The API key (`None`: no key header). [`HttpConfig::default`] reads [`KEY_ENV`].
    pub api_key: Option<String>,
    pub retry: RetryPolicy,
    /// Requests-per-minute ceiling (every attempt counts).
    pub rpm: Option<u64>,
    /// Per-request timeout.
    pub timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            api_key: std::env::var(KEY_ENV).ok().filter(|k| !k.is_empty()),
            retry: RetryPolicy::default(),
            rpm: None,
            timeout: Duration::from_secs(60),
        }
    }
}

/// A hosted search API.
#[derive(Debug)]
pub struct HttpSearch {
    url: String,
    dialect: Dialect,
    http: reqwest::Client,
    api_key: Option<String>,
    retry: RetryPolicy,
    jitter: Jitter,
    rpm: Option<WindowLimiter>,
    requests: AtomicU64,
}

impl HttpSearch {
    /// A backend for `url` (must start with `http://` or `https://`).
    ///
    /// # Errors
    /// [`Error::Usage`] for a URL without an HTTP scheme; [`Error::Runtime`] when the HTTP
    /// client cannot be built.
    pub fn new(url: &str, dialect: Dialect, config: HttpConfig) -> Result<HttpSearch> {
        let url = url.trim().to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::Usage(format!(
                "search URL {url:?} must start with http:// or https://"
            )));
        }
        let http = crate::http::client_builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| Error::Runtime(format!("cannot build HTTP client: {e}")))?;
        Ok(HttpSearch {
            url,
            dialect,
            http,
            api_key: config.api_key.filter(|k| !k.is_empty()),
            retry: config.retry,
            jitter: Jitter::from_time(),
            rpm: config.rpm.map(WindowLimiter::per_minute),
            requests: AtomicU64::new(0),
        })
    }

    /// The backend name for cache keys and ledgers: the spec it was opened with
    /// (`http:URL` or `drg:URL`).
    pub fn name(&self) -> String {
        match self.dialect {
            Dialect::Post => format!("http:{}", self.url),
            Dialect::DeepResearchGym => format!("drg:{}", self.url),
        }
    }

    /// HTTP requests sent so far (every attempt).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Searches with retries (module docs) and returns the ranked records, unmasked.
    ///
    /// # Errors
    /// [`Error::Runtime`] naming the URL and status when the server refuses, retries run
    /// out, or the body is not a search response (saying what is wrong).
    pub async fn search(&self, query: &str, k: usize) -> Result<Vec<SearchRecord>> {
        let mut attempt = 0u32;
        loop {
            if let Some(l) = &self.rpm {
                l.acquire(1).await;
            }
            attempt += 1;
            self.requests.fetch_add(1, Ordering::Relaxed);
            let rb = match self.dialect {
                Dialect::Post => {
                    let rb = self
                        .http
                        .post(&self.url)
                        .json(&serde_json::json!({"query": query, "k": k}));
                    match &self.api_key {
                        Some(key) => rb.bearer_auth(key),
                        None => rb,
                    }
                }
                Dialect::DeepResearchGym => {
                    let k = k.to_string();
                    let url =
                        reqwest::Url::parse_with_params(&self.url, [("query", query), ("k", &k)])
                            .map_err(|e| Error::Usage(format!("search URL {:?}: {e}", self.url)))?;
                    let rb = self.http.get(url);
                    match &self.api_key {
                        Some(key) => rb.header("x-api-key", key),
                        None => rb,
                    }
                }
            };
            let (why, hint) = match rb.send().await {
                Err(e) => (format!("request failed: {e}"), None),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let hint = retry_after(resp.headers(), SystemTime::now());
                    match resp.text().await {
                        Err(e) => (format!("HTTP {status}: reading the body failed: {e}"), hint),
                        Ok(body) if (200..300).contains(&status) => {
                            return parse_response(&body).map_err(|m| {
                                Error::Runtime(format!(
                                    "search {}: query {:?}: {m}",
                                    self.url,
                                    ragstats_core::io::clip(query)
                                ))
                            });
                        }
                        Ok(body) => {
                            let why =
                                format!("HTTP {status}: {}", ragstats_core::io::clip(body.trim()));
                            if let StatusClass::Fail(kind) = classify_status(status, &body) {
                                return Err(Error::Runtime(format!(
                                    "search {}: {why} ({}, not retried)",
                                    self.url,
                                    kind.as_str()
                                )));
                            }
                            (why, hint)
                        }
                    }
                }
            };
            if attempt > self.retry.max_retries {
                return Err(Error::Runtime(format!(
                    "search {}: {why} (gave up after {attempt} attempts)",
                    self.url
                )));
            }
            let wait = match hint {
                Some(h) => h.min(self.retry.max_retry_after),
                None => self.retry.backoff(attempt - 1, &self.jitter),
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// Parses a search response body (module docs) into records in rank order.
///
/// # Errors
/// A message saying what is wrong and where (`results[3]: …`).
pub fn parse_response(body: &str) -> std::result::Result<Vec<SearchRecord>, String> {
    let v =
        ragstats_core::io::jsonl::parse_value(body).map_err(|e| format!("response body: {e}"))?;
    let Value::Object(top) = v else {
        return Err(format!(
            "response body: expected an object with \"results\", found {}",
            ragstats_core::io::jsonl::kind(&v)
        ));
    };
    let Some(Value::Array(results)) = top.get("results") else {
        return Err("response body: no \"results\" array".into());
    };
    let scores: Option<Vec<Option<f64>>> =
        ["distances", "scores"]
            .iter()
            .find_map(|name| match top.get(*name) {
                Some(Value::Array(a)) if a.len() == results.len() => {
                    Some(a.iter().map(Value::as_f64).collect())
                }
                _ => None,
            });
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let obj = match r {
                Value::Object(m) => m.clone(),
                Value::String(s) => {
                    decode_base64_object(s).map_err(|m| format!("results[{i}]: {m}"))?
                }
                other => {
                    return Err(format!(
                        "results[{i}]: expected an object or a base64 string, found {}",
                        ragstats_core::io::jsonl::kind(other)
                    ))
                }
            };
            let mut rec = record(&obj).map_err(|m| format!("results[{i}]: {m}"))?;
            if rec.score.is_none() {
                rec.score = scores.as_ref().and_then(|s| s[i]);
            }
            Ok(rec)
        })
        .collect()
}

fn decode_base64_object(s: &str) -> std::result::Result<Map<String, Value>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "base64 content is not UTF-8".to_string())?;
    match ragstats_core::io::jsonl::parse_value(&text)
        .map_err(|e| format!("base64 content: {e}"))?
    {
        Value::Object(m) => Ok(m),
        other => Err(format!(
            "base64 content: expected an object, found {}",
            ragstats_core::io::jsonl::kind(&other)
        )),
    }
}

fn record(obj: &Map<String, Value>) -> std::result::Result<SearchRecord, String> {
    let first = |names: &[&str]| -> std::result::Result<Option<String>, String> {
        for n in names {
            match obj.get(*n) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => return Ok(Some(s.clone())),
                Some(Value::Number(x)) if *n == "id" || *n == "doc_id" || *n == "docid" => {
                    return Ok(Some(x.to_string()))
                }
                Some(other) => {
                    return Err(format!(
                        "field \"{n}\" should be a string, found {}",
                        ragstats_core::io::jsonl::kind(other)
                    ))
                }
            }
        }
        Ok(None)
    };
    let url = first(&["url", "link"])?.unwrap_or_default();
    let id = match first(&["id", "doc_id", "docid"])? {
        Some(id) => id,
        None if !url.is_empty() => url.clone(),
        None => return Err("a result has neither \"id\" nor \"url\"".into()),
    };
    let score = match obj.get("score").or_else(|| obj.get("distance")) {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_f64().ok_or_else(|| {
            format!(
                "\"score\"/\"distance\" should be a number, found {}",
                ragstats_core::io::jsonl::kind(v)
            )
        })?),
    };
    Ok(SearchRecord {
        id,
        url,
        title: first(&["title"])?.unwrap_or_default(),
        text: first(&["text", "contents", "content", "snippet"])?.unwrap_or_default(),
        score,
        masked: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_protocol_and_aliases() {
        let body = r#"{"results": [
            {"id": "d1", "url": "https://a/1", "title": "A", "text": "alpha", "score": 2.5},
            {"doc_id": 7, "link": "https://a/2", "content": "beta", "distance": 0.25},
            {"url": "https://a/3"}
        ]}"#;
        let r = parse_response(body).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            (
                r[0].id.as_str(),
                r[0].title.as_str(),
                r[0].text.as_str(),
                r[0].score
            ),
            ("d1", "A", "alpha", Some(2.5))
        );
        assert_eq!(
            (
                r[1].id.as_str(),
                r[1].url.as_str(),
                r[1].text.as_str(),
                r[1].score
            ),
            ("7", "https://a/2", "beta", Some(0.25))
        );
        assert_eq!(
            (r[2].id.as_str(), r[2].title.as_str(), r[2].score),
            ("https://a/3", "", None)
        );
    }

    #[test]
    fn deepresearchgym_base64_results_and_distances() {
        // base64 of {"id":"<urn:uuid:1>","url":"https://x.org/p","text":"hello"}
        // (printf '%s' '{"id":"<urn:uuid:1>","url":"https://x.org/p","text":"hello"}' | base64 -w0)
        let b = "eyJpZCI6Ijx1cm46dXVpZDoxPiIsInVybCI6Imh0dHBzOi8veC5vcmcvcCIsInRleHQiOiJoZWxsbyJ9";
        let body = format!(r#"{{"results": ["{b}"], "distances": [0.75]}}"#);
        let r = parse_response(&body).unwrap();
        assert_eq!(r[0].id, "<urn:uuid:1>");
        assert_eq!(r[0].url, "https://x.org/p");
        assert_eq!(r[0].text, "hello");
        assert_eq!(r[0].score, Some(0.75));
    }

    #[test]
    fn bad_bodies_say_what_is_wrong() {
        assert!(parse_response("<html>")
            .unwrap_err()
            .starts_with("response body: not valid JSON"));
        assert_eq!(
            parse_response("[]").unwrap_err(),
            "response body: expected an object with \"results\", found an array"
        );
        assert_eq!(
            parse_response("{}").unwrap_err(),
            "response body: no \"results\" array"
        );
        assert_eq!(
            parse_response(r#"{"results": [{"title": "x"}]}"#).unwrap_err(),
            "results[0]: a result has neither \"id\" nor \"url\""
        );
        assert!(parse_response(r#"{"results": ["%%%"]}"#)
            .unwrap_err()
            .starts_with("results[0]: not base64"));
        assert_eq!(
            parse_response(r#"{"results": [{"id": "a", "text": 3}]}"#).unwrap_err(),
            "results[0]: field \"text\" should be a string, found a number"
        );
    }
}
