//! Retry policy: which failures are retried, and how long to wait before the next attempt.
//!
//! Wait before retry `k` (0-based) = the server's hint (`retry-after-ms`, else `Retry-After`
//! in seconds or as an HTTP date) when it sent one, else "full jitter" backoff:
//! uniform in `[0, min(cap, base · 2^k))`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::types::ErrorKind;

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
/// `Retry-After` as delta-seconds or an HTTP date (IMF-fixdate), measured from `now`.
/// A date in the past gives zero. Unparseable values give `None`.
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
    let at = parse_http_date(v)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7).
/// The obsolete RFC 850 and asctime forms are not accepted.
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [_weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u32 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u32
        + 1;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<u32> = time
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *sec > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(*h) * 3600 + i64::from(*m) * 60 + i64::from(*sec);
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Randomness for backoff jitter: a xorshift64* generator behind an atomic, seeded from the
/// clock and process id. Jitter only has to de-synchronise clients, so a statistical-quality
/// generator (and no `rand` crate) is enough; it is never used for resampling.
#[derive(Debug)]
pub struct Jitter {
    state: AtomicU64,
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

    /// A generator with a fixed seed (0 is replaced by a constant: xorshift must not be 0).
    pub fn with_seed(seed: u64) -> Self {
        Jitter {
            state: AtomicU64::new(if seed == 0 {
                0x9E37_79B9_7F4A_7C15
            } else {
                seed
            }),
        }
    }

    /// A uniform draw in [0, 1) with 53 random bits.
    pub fn next_unit(&self) -> f64 {
        let step = |mut x: u64| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x
        };
        let prev = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(step(x)))
            .unwrap_or(1);
        let out = step(prev).wrapping_mul(0x2545_F491_4F6C_DD1D);
        (out >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn http_date_known_values() {
        // RFC 9110's example; 784111777 from `date -d '1994-11-06 08:49:37Z' +%s`.
        let t = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(t.duration_since(UNIX_EPOCH).unwrap().as_secs(), 784_111_777);
        // Leap day: 2024-02-29 00:00:00 = 1709164800.
        let t = parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT").unwrap();
        assert_eq!(
            t.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            1_709_164_800
        );
        assert!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT").is_none());
        assert!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT").is_none());
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
}
