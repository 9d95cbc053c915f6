//! Retry policy: which failures are retried, and how long to wait before the next attempt.
//!
//! Wait before retry `k` (0-based) = the server's hint (`retry-after-ms`, else `Retry-After`
//! in seconds or as an HTTP date) when it sent one, else "full jitter" backoff:
//! uniform in `[0, min(cap, base · 2^k))`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ragstats_core::chat::ErrorKind;
use ragstats_core::rng::domain;
use ragstats_core::rng::philox4x32_10;
use ragstats_core::rng::stream::seed_key;

/// How many times and how long to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so at most `max_retries + 1` requests).
    pub max_retries: u32,
    /// Backoff base (1 s by default; tests use milliseconds).
    pub base: Duration,
    /// Backoff cap (60 s by default).
    pub cap: Duration,
    /// Longest server-requested wait that is honoured; longer hints are clamped to it, so a
    /// misconfigured server cannot park a batch for hours.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 6,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// Full-jitter backoff before retry `k` (0-based): `u · min(cap, base · 2^k)` with
    /// `u` uniform in [0, 1) drawn from `jitter`.
    pub fn backoff(&self, k: u32, jitter: &Jitter) -> Duration {
        let exp = self.base.saturating_mul(1u32 << k.min(30));
        exp.min(self.cap).mul_f64(jitter.next_unit())
    }
}

/// What to do with an HTTP status that is not 2xx.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusClass {
    /// Try again after a wait.
    Retry,
    /// Give up on this call with the given error kind.
    Fail(ErrorKind),
}

/// Classifies a non-2xx status. `body` is the error body, read to tell a quota-exhausted
/// 429 (not retried: waiting does not refill a quota) from a rate-limit 429 (retried).
pub fn classify_status(status: u16, body: &str) -> StatusClass {
    match status {
        401 | 403 => StatusClass::Fail(ErrorKind::Auth),
        402 => StatusClass::Fail(ErrorKind::Quota),
        429 if quota_exhausted(body) => StatusClass::Fail(ErrorKind::Quota),
        408 | 409 | 429 | 500..=599 => StatusClass::Retry,
        _ => StatusClass::Fail(ErrorKind::Rejected),
    }
}

/// True when an error body says the account's quota or balance is used up (OpenAI
/// `insufficient_quota`, "exceeded your current quota", DeepSeek "Insufficient Balance").
pub fn quota_exhausted(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    [
        "insufficient_quota",
        "exceeded your current quota",
        "insufficient balance",
        "billing_hard_limit",
    ]
    .iter()
    .any(|p| b.contains(p))
}

/// The server's requested wait: `retry-after-ms` (milliseconds, may be fractional), else
/// `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §5.6.7: IMF-fixdate, or the
/// obsolete RFC 850 and asctime forms, which recipients must accept; parsed by `httpdate`),
/// measured from `now`. A date in the past gives zero. Unparseable values give `None`.
pub fn retry_after(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let v = get("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Randomness for backoff jitter: the Philox jitter stream ([`domain::jitter`]) under a key
/// seeded from the clock and the process id, draw `n` taken from an atomic counter so that
/// concurrent calls share one generator without a lock. Jitter only has to de-synchronise
/// clients; it is never used for resampling.
#[derive(Debug)]
pub struct Jitter {
    key: [u32; 2],
    next: AtomicU64,
}

impl Jitter {
    /// A generator seeded from the system clock and the process id.
    pub fn from_time() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Jitter::with_seed(nanos ^ (u64::from(std::process::id()) << 32))
    }

    /// A generator with a fixed seed.
    pub fn with_seed(seed: u64) -> Self {
        Jitter {
            key: seed_key(seed),
            next: AtomicU64::new(0),
        }
    }

    /// A uniform draw in [0, 1) with 53 random bits: the top 53 bits of words 0 (high) and
    /// 1 (low) of the next block.
    pub fn next_unit(&self) -> f64 {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let b = philox4x32_10(domain::jitter(n), self.key);
        let bits = (u64::from(b[0]) << 32 | u64::from(b[1])) >> 11;
        bits as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    /// The wait until an HTTP-date `Retry-After`, seen at `now`.
    fn wait_until(date: &'static str, now: SystemTime) -> Option<Duration> {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static(date));
        retry_after(&h, now)
    }

    #[test]
    fn http_date_known_values() {
        // RFC 9110's example; 784111777 from `date -d '1994-11-06 08:49:37Z' +%s`.
        let epoch = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        let rfc = epoch(784_111_777);
        assert_eq!(
            wait_until("Sun, 06 Nov 1994 08:49:37 GMT", epoch(0)),
            Some(Duration::from_secs(784_111_777))
        );
        // Leap day: 2024-02-29 00:00:00 = 1709164800.
        assert_eq!(
            wait_until("Thu, 29 Feb 2024 00:00:00 GMT", epoch(1_709_164_790)),
            Some(Duration::from_secs(10))
        );
        // The obsolete forms of the same instant, which RFC 9110 requires recipients to
        // accept: RFC 850 and asctime.
        let before = epoch(784_111_777 - 5);
        assert_eq!(
            wait_until("Sunday, 06-Nov-94 08:49:37 GMT", before),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            wait_until("Sun Nov  6 08:49:37 1994", before),
            Some(Duration::from_secs(5))
        );
        assert_eq!(wait_until("Sun, 06 Foo 1994 08:49:37 GMT", rfc), None);
        assert_eq!(wait_until("Sun, 06 Nov 1994 25:49:37 GMT", rfc), None);
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(2)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:47 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(10)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:00 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
        h.clear();
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
    }

    #[test]
    fn status_classes() {
        assert_eq!(classify_status(503, ""), StatusClass::Retry);
        assert_eq!(classify_status(408, ""), StatusClass::Retry);
        assert_eq!(classify_status(409, ""), StatusClass::Retry);
        assert_eq!(
            classify_status(429, r#"{"error":{"message":"Rate limit reached"}}"#),
            StatusClass::Retry
        );
        assert_eq!(
            classify_status(429, r#"{"error":{"code":"insufficient_quota"}}"#),
            StatusClass::Fail(ErrorKind::Quota)
        );
        assert_eq!(
            classify_status(400, ""),
            StatusClass::Fail(ErrorKind::Rejected)
        );
        assert_eq!(
            classify_status(404, ""),
            StatusClass::Fail(ErrorKind::Rejected)
        );
        assert_eq!(classify_status(401, ""), StatusClass::Fail(ErrorKind::Auth));
        assert_eq!(classify_status(403, ""), StatusClass::Fail(ErrorKind::Auth));
    }

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let p = RetryPolicy {
            base: Duration::from_millis(100),
            cap: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        let j = Jitter::with_seed(42);
        let mut draws = Vec::new();
        for k in 0..6 {
            let bound = [100, 200, 350, 350, 350, 350][k as usize];
            for _ in 0..200 {
                let d = p.backoff(k, &j);
                assert!(d < Duration::from_millis(bound), "k={k} d={d:?}");
                draws.push(d);
            }
        }
        // Full jitter spreads draws over the interval: some below a quarter of the bound.
        assert!(draws.iter().any(|d| *d < Duration::from_millis(25)));
        let mean = draws[..200].iter().map(|d| d.as_secs_f64()).sum::<f64>() / 200.0;
        assert!(
            (mean - 0.05).abs() < 0.01,
            "mean of U[0,0.1) draws = {mean}"
        );
    }

    #[test]
    fn jitter_follows_the_documented_stream() {
        // Independent restatement: draw n is block [n, 0, 0xB0FF, 0] under key [seed, 0],
        // words 0 and 1 as the high and low halves, top 53 bits.
        let j = Jitter::with_seed(42);
        for n in 0..3u32 {
            let b = philox4x32_10([n, 0, 0xB0FF, 0], [42, 0]);
            let want = ((b[0] as u64) << 21 | (b[1] as u64) >> 11) as f64 / 2f64.powi(53);
            assert_eq!(j.next_unit(), want);
        }
    }
}
