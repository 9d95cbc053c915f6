//! The client: one call = cache lookup, rate limits, attempts with retries, cache store.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::cache::{cache_key, CachedResponse, DiskCache};
use super::cancel::Cancel;
use super::ratelimit::{estimate_tokens, WindowLimiter};
use super::response::{error_message, parse_chat_response, snippet, ParsedResponse};
use super::retry::{classify_status, retry_after, Jitter, RetryPolicy, StatusClass};
use ragstats_core::chat::{CallError, CallRecord, ChatRequest, ErrorKind};
use ragstats_core::error::{Error, Result};

/// Everything a [`Client`] needs; independent of the command line.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Base URL up to and including the API version, e.g. `http://127.0.0.1:8000/v1`;
    /// requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Bearer token; `None` sends no `Authorization` header (local servers).
    pub api_key: Option<String>,
    /// Per-attempt limit from sending the request to reading the whole body.
    pub timeout: Duration,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// Requests-per-minute ceiling (every attempt counts).
    pub rpm: Option<u64>,
    /// Tokens-per-minute ceiling.
    pub tpm: Option<u64>,
    /// Response cache directory; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
}

impl ClientConfig {
    /// A configuration with default policies: 600 s timeout, 6 retries with 1 s base and
    /// 60 s cap, no rate limits, no cache.
    pub fn new(base_url: impl Into<String>) -> Self {
        ClientConfig {
            base_url: base_url.into(),
            api_key: None,
            timeout: Duration::from_secs(600),
            retry: RetryPolicy::default(),
            rpm: None,
            tpm: None,
            cache_dir: None,
        }
    }
}

/// Counters over all calls a client made, readable while calls run (for progress display).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ClientStats {
    /// HTTP requests sent.
    pub requests: u64,
    /// Retries (requests after a call's first).
    pub retries: u64,
    /// Cache writes that failed (the answer is still returned and written).
    pub cache_write_errors: u64,
}

/// An OpenAI-compatible chat-completions client with retry, rate-limit and cache policies.
/// Cloning is cheap and clones share connections, limits and counters.
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    base_url: String,
    url: String,
    api_key: Option<String>,
    timeout: Duration,
    retry: RetryPolicy,
    jitter: Jitter,
    rpm: Option<WindowLimiter>,
    tpm: Option<WindowLimiter>,
    cache: Option<DiskCache>,
    requests: AtomicU64,
    retries: AtomicU64,
    cache_write_errors: AtomicU64,
}

/// The result of one HTTP attempt.
enum Attempt {
    Ok(ParsedResponse),
    Retry(CallError, Option<Duration>),
    Fail(CallError),
}

impl Client {
    /// Builds a client.
    ///
    /// # Errors
    /// [`Error::Setting`] (`base_url`) for an empty base URL; [`Error::Runtime`] when the HTTP client cannot
    /// be built (TLS back end failure).
    pub fn new(config: ClientConfig) -> Result<Self> {
        let base_url = config.base_url.trim().trim_end_matches('/').to_string();
        if base_url.is_empty() {
            return Err(Error::setting(
                "base_url",
                "none given, and OPENAI_BASE_URL is not set (e.g. http://127.0.0.1:8000/v1)",
            ));
        }
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(Error::Usage(format!(
                "base URL {base_url:?} must start with http:// or https://"
            )));
        }
        let http = crate::http::client_builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| Error::Runtime(format!("cannot build HTTP client: {e}")))?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                url: format!("{base_url}/chat/completions"),
                base_url,
                api_key: config.api_key.filter(|k| !k.is_empty()),
                timeout: config.timeout,
                retry: config.retry,
                jitter: Jitter::from_time(),
                rpm: config.rpm.map(WindowLimiter::per_minute),
                tpm: config.tpm.map(WindowLimiter::per_minute),
                cache: config.cache_dir.map(DiskCache::new),
                requests: AtomicU64::new(0),
                retries: AtomicU64::new(0),
                cache_write_errors: AtomicU64::new(0),
            }),
        })
    }

    /// The normalised base URL (no trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// Counters so far.
    pub fn stats(&self) -> ClientStats {
        ClientStats {
            requests: self.inner.requests.load(Ordering::Relaxed),
            retries: self.inner.retries.load(Ordering::Relaxed),
            cache_write_errors: self.inner.cache_write_errors.load(Ordering::Relaxed),
        }
    }

    /// Makes one call with the client's policies and returns its record: an answer, or an
    /// `error` after retries ran out or a non-retryable status. Never fails otherwise.
    pub async fn complete(&self, req: &ChatRequest) -> CallRecord {
        // A signal nobody fires: the call always runs to its outcome.
        self.complete_with(req, &Cancel::new())
            .await
            .expect("a call without cancellation always has an outcome")
    }

    /// Like [`Client::complete`], but gives up and returns `None` (nothing to record) when
    /// `cancel` stops before a retry or rate-limit wait ends, or aborts during a request.
    pub async fn complete_with(&self, req: &ChatRequest, cancel: &Cancel) -> Option<CallRecord> {
        let inner = &*self.inner;
        let key = inner
            .cache
            .as_ref()
            .map(|_| cache_key(&inner.base_url, req));
        if let (Some(cache), Some(key)) = (&inner.cache, &key) {
            if let Some(hit) = cache.get(key) {
                return Some(CallRecord {
                    id: req.id.clone(),
                    sample: req.sample,
                    model: req.model.clone(),
                    text: Some(hit.text),
                    reasoning: hit.reasoning,
                    finish_reason: hit.finish_reason,
                    usage: hit.usage,
                    timings: hit.timings,
                    latency_ms: hit.latency_ms,
                    elapsed_ms: 0.0,
                    attempts: 0,
                    cached: true,
                    error: None,
                    meta: req.meta.clone(),
                });
            }
        }
        if cancel.is_stopped() {
            return None;
        }
        let body = req.body();
        let est_tokens = estimate_tokens(&req.messages, req.params.max_tokens);
        let start = Instant::now();
        let mut attempts = 0u32;
        loop {
            let rpm_ticket = match &inner.rpm {
                Some(l) => Some(wait_or_stop(l.acquire(1), cancel).await?),
                None => None,
            };
            let tpm_ticket = match &inner.tpm {
                Some(l) => Some(wait_or_stop(l.acquire(est_tokens), cancel).await?),
                None => None,
            };
            let _ = rpm_ticket; // Every attempt costs one request, whatever its outcome.
            attempts += 1;
            inner.requests.fetch_add(1, Ordering::Relaxed);
            let t0 = Instant::now();
            let outcome = tokio::select! {
                o = self.attempt(&body) => o,
                _ = cancel.aborted() => return None,
            };
            let latency_ms = t0.elapsed().as_secs_f64() * 1e3;
            let mut record = CallRecord {
                id: req.id.clone(),
                sample: req.sample,
                model: req.model.clone(),
                text: None,
                reasoning: None,
                finish_reason: None,
                usage: None,
                timings: None,
                latency_ms,
                elapsed_ms: 0.0,
                attempts,
                cached: false,
                error: None,
                meta: req.meta.clone(),
            };
            let err = match outcome {
                Attempt::Ok(p) => {
                    if let (Some(l), Some(t)) = (&inner.tpm, tpm_ticket) {
                        if let Some(total) = p.usage.as_ref().and_then(|u| u.total_tokens) {
                            l.settle(t, total);
                        }
                    }
                    if let (Some(cache), Some(key)) = (&inner.cache, &key) {
                        let entry = CachedResponse {
                            key: key.clone(),
                            text: p.text.clone(),
                            reasoning: p.reasoning.clone(),
                            finish_reason: p.finish_reason.clone(),
                            usage: p.usage.clone(),
                            timings: p.timings.clone(),
                            latency_ms,
                        };
                        if cache.put(&entry).is_err() {
                            inner.cache_write_errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    record.text = Some(p.text);
                    record.reasoning = p.reasoning;
                    record.finish_reason = p.finish_reason;
                    record.usage = p.usage;
                    record.timings = p.timings;
                    record.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
                    return Some(record);
                }
                Attempt::Fail(err) => err,
                Attempt::Retry(err, hint) => {
                    if attempts <= inner.retry.max_retries {
                        // A request the server refused with a status was not processed:
                        // it used no tokens.
                        if let (Some(l), Some(t), Some(_)) = (&inner.tpm, tpm_ticket, err.status) {
                            l.settle(t, 0);
                        }
                        let wait = match hint {
                            Some(h) => h.min(inner.retry.max_retry_after),
                            None => inner.retry.backoff(attempts - 1, &inner.jitter),
                        };
                        inner.retries.fetch_add(1, Ordering::Relaxed);
                        wait_or_stop(tokio::time::sleep(wait), cancel).await?;
                        continue;
                    }
                    err
                }
            };
            record.error = Some(err);
            record.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
            return Some(record);
        }
    }

    /// One HTTP request and its classification.
    async fn attempt(&self, body: &serde_json::Value) -> Attempt {
        let inner = &*self.inner;
        let mut rb = inner.http.post(&inner.url).json(body);
        if let Some(k) = &inner.api_key {
            rb = rb.bearer_auth(k);
        }
        let resp = match rb.send().await {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(self.transport_error(&e, None), None),
        };
        let status = resp.status().as_u16();
        let hint = retry_after(resp.headers(), SystemTime::now());
        let text = match resp.text().await {
            Ok(t) => t,
            Err(e) => return Attempt::Retry(self.transport_error(&e, Some(status)), None),
        };
        if (200..300).contains(&status) {
            return match parse_chat_response(&text) {
                Ok(p) => Attempt::Ok(p),
                // A torn or garbled 2xx body is usually a proxy or connection hiccup: retry.
                Err(msg) => Attempt::Retry(
                    CallError {
                        kind: ErrorKind::Malformed,
                        status: Some(status),
                        message: self.redact(&msg),
                    },
                    None,
                ),
            };
        }
        let (msg, code) = error_message(&text);
        let message = match code {
            Some(c) if !msg.contains(&c) => format!("HTTP {status} ({c}): {msg}"),
            _ => format!("HTTP {status}: {msg}"),
        };
        let err = |kind| CallError {
            kind,
            status: Some(status),
            message: self.redact(&message),
        };
        match classify_status(status, &text) {
            StatusClass::Retry => Attempt::Retry(err(ErrorKind::Status), hint),
            StatusClass::Fail(kind) => Attempt::Fail(err(kind)),
        }
    }

    fn transport_error(&self, e: &reqwest::Error, status: Option<u16>) -> CallError {
        if e.is_timeout() {
            return CallError {
                kind: ErrorKind::Timeout,
                status,
                message: format!(
                    "no complete response within {:.1} s",
                    self.inner.timeout.as_secs_f64()
                ),
            };
        }
        // reqwest's top-level message is generic; the innermost cause says what happened.
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            msg = format!("{msg}: {s}");
            src = s.source();
        }
        CallError {
            kind: ErrorKind::Connection,
            status,
            message: self.redact(&snippet(&msg, 300)),
        }
    }

    /// Removes the API key from text that may echo it (some servers quote the bad key).
    fn redact(&self, s: &str) -> String {
        match &self.inner.api_key {
            Some(k) if k.len() >= 4 && s.contains(k.as_str()) => s.replace(k.as_str(), "[key]"),
            _ => s.to_string(),
        }
    }
}

/// Runs `fut` unless `cancel` stops first (then `None`).
async fn wait_or_stop<T>(fut: impl std::future::Future<Output = T>, cancel: &Cancel) -> Option<T> {
    tokio::select! {
        v = fut => Some(v),
        _ = cancel.stopped() => None,
    }
}
