//! Requests-per-minute and tokens-per-minute ceilings as sliding 60-second windows.
//!
//! A window holds the (start time, cost) of every admitted request in the last minute; a new
//! request is admitted when the window's total plus its cost stays within the limit (a single
//! request costlier than the whole limit is admitted into an empty window, so it cannot block
//! forever). For tokens the cost is an estimate made before sending (prompt characters / 4 +
//! `max_tokens`), replaced by the reported `total_tokens` once the answer arrives.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

const RECHECK: Duration = Duration::from_millis(100);

/// A sliding-window limiter with a total-cost ceiling per window.
#[derive(Debug)]
pub struct WindowLimiter {
    limit: u64,
    window: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    /// (admitted at, ticket id, cost), oldest first.
    entries: VecDeque<(Instant, u64, u64)>,
}

/// An admitted request's entry, used to correct its cost afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

impl WindowLimiter {
    /// At most `limit` cost units per minute.
    pub fn per_minute(limit: u64) -> Self {
        WindowLimiter::new(limit, Duration::from_secs(60))
    }

    /// At most `limit` cost units in any window of length `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        WindowLimiter {
            limit: limit.max(1),
            window,
            state: Mutex::new(State::default()),
        }
    }

    /// Admits `cost` now if it fits, else returns how long to wait before asking again.
    pub fn try_acquire(&self, cost: u64) -> Result<Ticket, Duration> {
        let now = Instant::now();
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(&(t, _, _)) = st.entries.front() {
            if now.duration_since(t) >= self.window {
                st.entries.pop_front();
            } else {
                break;
            }
        }
        let used: u64 = st.entries.iter().map(|e| e.2).sum();
        if st.entries.is_empty() || used.saturating_add(cost) <= self.limit {
            let id = st.next_id;
            st.next_id += 1;
            st.entries.push_back((now, id, cost));
            return Ok(Ticket(id));
        }
        // Wait until enough of the oldest entries expire to make room.
        let mut freed = 0u64;
        let need = used.saturating_add(cost) - self.limit;
        for &(t, _, c) in &st.entries {
            freed += c;
            if freed >= need {
                return Err((t + self.window).saturating_duration_since(now));
            }
        }
        // Unreachable in practice (freeing everything always suffices); wait a full window.
        Err(self.window)
    }

    /// Waits until `cost` fits, then admits it.
    pub async fn acquire(&self, cost: u64) -> Ticket {
        loop {
            match self.try_acquire(cost) {
                Ok(t) => return t,
                // Re-check at least every 100 ms: a settled cost may free room sooner than
                // the oldest entry expires. One millisecond of slack so an expiring entry has
                // surely left the window.
                Err(wait) => {
                    tokio::time::sleep((wait + Duration::from_millis(1)).min(RECHECK)).await
                }
            }
        }
    }

    /// Replaces the cost recorded for `ticket` (if still in the window).
    pub fn settle(&self, ticket: Ticket, actual: u64) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = st.entries.iter_mut().find(|e| e.1 == ticket.0) {
            e.2 = actual;
        }
    }
}

/// Token estimate for the TPM limiter before the answer is known: characters of the
/// messages' JSON / 4 (a common rule of thumb for English BPE tokenisers) plus `max_tokens`
/// (or 256 when unset).
pub fn estimate_tokens(messages: &[serde_json::Value], max_tokens: Option<u64>) -> u64 {
    let chars: usize = messages.iter().map(|m| m.to_string().len()).sum();
    (chars as u64).div_ceil(4) + max_tokens.unwrap_or(256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_admits_up_to_limit_then_waits_for_oldest() {
        let l = WindowLimiter::new(3, Duration::from_secs(60));
        let a = l.try_acquire(1).unwrap();
        l.try_acquire(1).unwrap();
        l.try_acquire(1).unwrap();
        let wait = l.try_acquire(1).unwrap_err();
        assert!(wait > Duration::from_secs(59) && wait <= Duration::from_secs(60));
        // Settling the first request to zero cost frees its room.
        l.settle(a, 0);
        assert!(l.try_acquire(1).is_ok());
    }

    #[test]
    fn oversized_request_is_admitted_into_empty_window() {
        let l = WindowLimiter::new(10, Duration::from_secs(60));
        assert!(l.try_acquire(50).is_ok());
        assert!(l.try_acquire(1).is_err());
    }

    #[tokio::test]
    async fn requests_per_window_are_spread_in_time() {
        // 4 per 200 ms: the 9th request cannot start before 400 ms.
        let l = WindowLimiter::new(4, Duration::from_millis(200));
        let t0 = Instant::now();
        for _ in 0..9 {
            l.acquire(1).await;
        }
        let el = t0.elapsed();
        assert!(el >= Duration::from_millis(400), "{el:?}");
        assert!(el < Duration::from_millis(1500), "{el:?}");
    }
}
