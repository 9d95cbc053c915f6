//! The batch runner: many calls, bounded concurrency, every finished record appended at once.
//!
//! Resume semantics: calls whose (id, sample) already has a successful record in the output
//! file are skipped; calls whose latest record is an error are asked again (the new record is
//! appended after the old one; readers take the latest, see [`super::append_log::load_records`]).
//! Calls that fail with 401/403 or an exhausted quota stop the batch and are not written.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::task::JoinSet;

use super::append_log::{scan_output, Appender};
use super::cancel::Cancel;
use super::client::Client;
use super::ledger_rows::ledger_row;
use ragstats_core::chat::{CallError, CallRecord, ChatRequest, ErrorKind};
use ragstats_core::error::{Error, Result};
use ragstats_core::ledger::CallKind;

/// Where results go and how hard to push.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Output JSONL (appended to; read first to resume).
    pub out: PathBuf,
    /// Cost ledger JSONL to append rows to, if any.
    pub ledger: Option<PathBuf>,
    /// `kind` of the ledger rows (`reader` by default).
    pub ledger_kind: CallKind,
    /// Calls in flight at once (≥ 1).
    pub concurrency: usize,
    /// Stop (no new calls) / abort (drop calls in flight) signal, e.g. wired to Ctrl-C.
    pub cancel: Cancel,
}

impl BatchOptions {
    /// Options with a `reader` ledger kind, no ledger, concurrency 8 and a fresh signal.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        BatchOptions {
            out: out.into(),
            ledger: None,
            ledger_kind: CallKind::Reader,
            concurrency: 8,
            cancel: Cancel::new(),
        }
    }
}

/// Counters reported while a batch runs and at its end.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BatchProgress {
    /// Calls in the batch (requests × samples).
    pub total: u64,
    /// Calls skipped because the output already answered them.
    pub skipped: u64,
    /// Records written in this run.
    pub done: u64,
    /// Of those, answers.
    pub ok: u64,
    /// Of those, errors.
    pub failed: u64,
    /// Of the answers, cache hits (no request made, not billed).
    pub cached: u64,
    /// Of the answers, those cut at `max_tokens` (finish_reason `length`), cache hits
    /// included.
    pub truncated: u64,
    /// Calls running now.
    pub in_flight: u64,
    /// HTTP requests sent in this run.
    pub requests: u64,
    /// Retries in this run.
    pub retries: u64,
    /// Prompt tokens of answers fetched in this run (cache hits excluded).
    pub prompt_tokens: u64,
    /// Cached prompt tokens of those answers.
    pub cached_prompt_tokens: u64,
    /// Completion tokens of those answers.
    pub completion_tokens: u64,
    /// Reasoning tokens of those answers.
    pub reasoning_tokens: u64,
    /// Seconds since the batch started.
    pub elapsed_s: f64,
}

impl BatchProgress {
    /// Calls this run has to do: the batch's calls less those already answered.
    pub fn to_run(&self) -> u64 {
        self.total - self.skipped
    }

    /// Seconds left at the rate so far: (to run − done) · elapsed / done; `None` before
    /// the first call finished.
    pub fn eta_s(&self) -> Option<f64> {
        (self.done > 0).then(|| {
            let left = self.to_run().saturating_sub(self.done) as f64;
            left * self.elapsed_s / self.done as f64
        })
    }
}

/// Checks a batch policy: `concurrency` ≥ 1, and `rpm` and `tpm` (requests and tokens per
/// minute), when given, ≥ 1.
///
/// # Errors
/// [`Error::Setting`] naming the setting (`concurrency`, `rpm` or `tpm`).
pub fn check_policy(concurrency: usize, rpm: Option<u64>, tpm: Option<u64>) -> Result<()> {
    if concurrency == 0 {
        return Err(Error::setting("concurrency", "must be at least 1"));
    }
    for (setting, limit) in [("rpm", rpm), ("tpm", tpm)] {
        if limit == Some(0) {
            return Err(Error::setting(setting, "a rate limit must be at least 1"));
        }
    }
    Ok(())
}

/// Why a batch ended before every call ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// The caller's [`Cancel`] fired (Ctrl-C).
    Interrupted,
    /// A call failed in a way every call would (bad key, exhausted quota).
    Fatal {
        /// The error of the first such call.
        error: CallError,
    },
    /// The first `calls` calls of the run (as many as run at once) all failed to connect
    /// (after their retries): nothing is listening at the endpoint, so the batch stopped
    /// rather than fail every call the same way.
    Unreachable {
        /// The error of the last of them.
        error: CallError,
        /// How many calls failed that way.
        calls: u64,
    },
}

/// The end state of a batch.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BatchSummary {
    /// Final counters.
    #[serde(flatten)]
    pub progress: BatchProgress,
    /// Calls asked again because their latest record in the output was an error.
    pub retried_failures: u64,
    /// Calls not finished because the batch stopped (not written; a re-run does them).
    pub not_run: u64,
    /// Lines of the existing output that were not JSON (torn by a crash) and were skipped.
    pub bad_lines: Vec<u64>,
    /// True when the output ended in a torn line and a newline was added before appending.
    pub repaired_tail: bool,
    /// Cache writes that failed.
    pub cache_write_errors: u64,
    /// Why the batch stopped early, if it did.
    pub stopped: Option<StopReason>,
}

/// Runs `calls` through `client`, appending each record to `opts.out` (and a ledger row to
/// `opts.ledger`) as soon as it finishes, skipping calls already answered in `opts.out`.
/// `progress` is called after every finished call and every 250 ms.
///
/// # Errors
/// [`Error::Usage`] for concurrency 0 or a repeated (id, sample) in `calls`;
/// [`Error::Io`] / [`Error::Input`] when the output or ledger cannot be read or written.
/// A stop (Ctrl-C, bad key) is not an error: see [`BatchSummary::stopped`].
pub async fn run_batch(
    client: &Client,
    calls: Vec<ChatRequest>,
    opts: &BatchOptions,
    progress: &mut (dyn FnMut(&BatchProgress) + Send),
) -> Result<BatchSummary> {
    if opts.concurrency == 0 {
        return Err(Error::setting("concurrency", "must be at least 1"));
    }
    let mut seen = HashSet::new();
    for c in &calls {
        if !seen.insert((c.id.as_str(), c.sample)) {
            return Err(Error::Usage(format!(
                "call id {:?} sample {} appears twice in the batch",
                c.id, c.sample
            )));
        }
    }
    drop(seen);
    let started = Instant::now();
    let state = scan_output(&opts.out)?;
    let (mut out, repaired_tail) = Appender::open(&opts.out)?;
    let mut ledger = match &opts.ledger {
        Some(p) => Some(Appender::open(p)?.0),
        None => None,
    };

    let mut summary = BatchSummary {
        bad_lines: state.bad_lines.clone(),
        repaired_tail,
        ..BatchSummary::default()
    };
    let mut p = BatchProgress {
        total: calls.len() as u64,
        ..BatchProgress::default()
    };
    let mut pending: VecDeque<ChatRequest> = VecDeque::new();
    for c in calls {
        let k = (c.id.clone(), c.sample);
        if state.answered.contains(&k) {
            p.skipped += 1;
        } else {
            if state.failed.contains(&k) {
                summary.retried_failures += 1;
            }
            pending.push_back(c);
        }
    }

    // The batch stops its own calls on a fatal error without firing the caller's signal,
    // so it watches the caller's signal and forwards it to an internal one.
    let inner = Cancel::new();
    let forward = {
        let (user, inner) = (opts.cancel.clone(), inner.clone());
        tokio::spawn(async move {
            user.stopped().await;
            inner.stop();
            user.aborted().await;
            inner.abort();
        })
    };
    let base = client.stats();
    let mut set: JoinSet<Option<CallRecord>> = JoinSet::new();
    let mut interrupted = 0u64;
    let mut fatal: Option<CallError> = None;
    // Calls that failed to connect before any call of this run got through; at
    // `concurrency` of them the endpoint is taken as down (`None` once one got through).
    let mut refused: Option<u64> = Some(0);
    let mut unreachable: Option<(CallError, u64)> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);

    let result: Result<()> = async {
        loop {
            while set.len() < opts.concurrency && !inner.is_stopped() {
                let Some(req) = pending.pop_front() else {
                    break;
                };
                let (c, cancel) = (client.clone(), inner.clone());
                set.spawn(async move { c.complete_with(&req, &cancel).await });
            }
            if set.is_empty() {
                break;
            }
            tokio::select! {
                joined = set.join_next() => match joined {
                    None => break,
                    Some(Err(e)) => {
                        return Err(Error::Runtime(format!("a call task failed: {e}")));
                    }
                    Some(Ok(None)) => interrupted += 1,
                    Some(Ok(Some(rec))) => {
                        if let Some(err) = rec.error.as_ref().filter(|e| e.kind.is_fatal()) {
                            // Not written: it says nothing about the request, and a re-run
                            // with a good key must ask it.
                            interrupted += 1;
                            fatal.get_or_insert_with(|| err.clone());
                            inner.stop();
                        } else {
                            // Ledger first: if we die between the two writes, the call is
                            // billed and asked again, which is what the provider will charge.
                            if let (Some(l), Some(row)) =
                                (ledger.as_mut(), ledger_row(&rec, opts.ledger_kind))
                            {
                                l.append(&row)?;
                            }
                            out.append(&rec)?;
                            count(&mut p, &rec);
                            let down = rec
                                .error
                                .as_ref()
                                .filter(|e| e.kind == ErrorKind::Connection);
                            refused = match (refused, down) {
                                (Some(n), Some(_)) => Some(n + 1),
                                _ => None,
                            };
                            if let (Some(n), Some(err)) = (refused, down) {
                                if n >= opts.concurrency as u64 && unreachable.is_none() {
                                    unreachable = Some((err.clone(), n));
                                    inner.stop();
                                }
                            }
                        }
                    }
                },
                _ = tick.tick() => {}
            }
            let s = client.stats();
            p.in_flight = set.len() as u64;
            p.requests = s.requests - base.requests;
            p.retries = s.retries - base.retries;
            p.elapsed_s = started.elapsed().as_secs_f64();
            progress(&p);
        }
        Ok(())
    }
    .await;
    forward.abort();
    if result.is_err() {
        inner.abort();
        set.abort_all();
    }
    result?;

    let s = client.stats();
    p.in_flight = 0;
    p.requests = s.requests - base.requests;
    p.retries = s.retries - base.retries;
    p.elapsed_s = started.elapsed().as_secs_f64();
    summary.cache_write_errors = s.cache_write_errors - base.cache_write_errors;
    summary.not_run = pending.len() as u64 + interrupted;
    summary.stopped = match (fatal, unreachable) {
        (Some(error), _) => Some(StopReason::Fatal { error }),
        (None, Some((error, calls))) => Some(StopReason::Unreachable { error, calls }),
        (None, None) if opts.cancel.is_stopped() => Some(StopReason::Interrupted),
        (None, None) => None,
    };
    summary.progress = p;
    Ok(summary)
}

fn count(p: &mut BatchProgress, rec: &CallRecord) {
    p.done += 1;
    if !rec.is_ok() {
        p.failed += 1;
        return;
    }
    p.ok += 1;
    if rec.is_truncated() {
        p.truncated += 1;
    }
    if rec.cached {
        p.cached += 1;
        return;
    }
    if let Some(u) = &rec.usage {
        p.prompt_tokens += u.prompt_tokens.unwrap_or(0);
        p.cached_prompt_tokens += u.cached_prompt_tokens.unwrap_or(0);
        p.completion_tokens += u.completion_tokens.unwrap_or(0);
        p.reasoning_tokens += u.reasoning_tokens.unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 calls, 2 already answered, 4 of the 8 done in 6 s: (8 − 4) · 6 / 4 = 6 s left.
    #[test]
    fn eta_at_the_rate_so_far() {
        let mut p = BatchProgress {
            total: 10,
            skipped: 2,
            done: 0,
            elapsed_s: 6.0,
            ..BatchProgress::default()
        };
        assert_eq!(p.to_run(), 8);
        assert_eq!(p.eta_s(), None);
        p.done = 4;
        assert_eq!(p.eta_s(), Some(6.0));
        p.done = 8;
        assert_eq!(p.eta_s(), Some(0.0));
    }

    #[test]
    fn policy_checks() {
        let msg = |r: Result<()>| match r {
            Err(e @ Error::Setting { .. }) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            msg(check_policy(0, None, None)),
            "concurrency: must be at least 1"
        );
        assert_eq!(
            msg(check_policy(8, Some(0), None)),
            "rpm: a rate limit must be at least 1"
        );
        assert_eq!(
            msg(check_policy(8, None, Some(0))),
            "tpm: a rate limit must be at least 1"
        );
        assert!(check_policy(1, Some(1), Some(1)).is_ok());
    }
}
