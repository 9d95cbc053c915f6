//! What a batch prints on stderr: `progress:` lines, the end-of-batch exit status and its
//! message, and the warning for replies cut at the token cap.

use ragstats_agent::llm::batch::{BatchProgress, BatchSummary, StopReason};

/// When the next `progress:` line is due: every `--progress-every` seconds.
pub struct ProgressLines {
    every: std::time::Duration,
    last: std::time::Instant,
}

impl ProgressLines {
    /// Lines every `secs` seconds, the first `secs` from now.
    pub fn new(secs: f64) -> Self {
        ProgressLines {
            every: std::time::Duration::from_secs_f64(secs),
            last: std::time::Instant::now(),
        }
    }

    /// True (and the clock restarts) when `secs` have passed since the last line.
    pub fn due(&mut self) -> bool {
        let due = self.last.elapsed() >= self.every;
        if due {
            self.last = std::time::Instant::now();
        }
        due
    }
}

/// The `progress:` line of a batch of calls, printed on stderr when it is not a terminal
/// (`llm batch`, `mcq run`, `judge`, `mcq generate`, `run`): calls done of those to run, and
/// of them how many were answered now, answered from the cache and failed (the three add up
/// to the calls done), then the calls in flight, the requests and retries sent, the seconds
/// so far, and the remaining time at the rate so far (`-` before the first call).
pub fn progress_line(p: &BatchProgress) -> String {
    let total = p.to_run();
    let eta = p
        .eta_s()
        .map_or_else(|| "-".to_string(), |s| format!("{s:.0} s"));
    // The parts add up to the calls done: answers fetched now, answers from the cache
    // (the cache holds answers only), failures.
    format!(
        "progress: {}/{} call(s) done: {} answered now, {} from cache, {} failed; {} in flight, {} request(s), {} retries, {:.0} s, eta {eta}",
        p.done,
        total,
        p.ok.saturating_sub(p.cached),
        p.cached,
        p.failed,
        p.in_flight,
        p.requests,
        p.retries,
        p.elapsed_s
    )
}

/// The calls of a finished batch as its end-of-run summary counts them, in the words of
/// the `progress:` line: `S already answered, D run now: A answered now, C from cache, F
/// failed` (A + C + F = D; the already answered were in the responses file before the run).
pub fn run_counts(p: &BatchProgress) -> String {
    format!(
        "{} already answered, {} run now: {} answered now, {} from cache, {} failed",
        p.skipped,
        p.done,
        p.ok.saturating_sub(p.cached),
        p.cached,
        p.failed
    )
}

/// The exit code of a finished batch: 0 when every call ran and succeeded; 1 when it ran
/// to the end but some calls failed (recorded with an `error`; a re-run asks them again);
/// 130 after Ctrl-C; or the error that stopped it (exit 1: a bad key, an exhausted quota,
/// or an endpoint that refused the first `--concurrency` calls). Finished calls are kept
/// either way.
pub fn exit_code(summary: &BatchSummary, key_env: &str) -> anyhow::Result<u8> {
    match &summary.stopped {
        None if summary.progress.failed > 0 => {
            eprintln!(
                "error: {} call(s) failed; exit status 1 so that scripts notice (run the same command again to retry them)",
                summary.progress.failed
            );
            Ok(1)
        }
        None => Ok(0),
        Some(StopReason::Unreachable { error, calls }) => Err(anyhow::anyhow!(
            "{}: the first {calls} call(s) all failed to connect, so nothing seems to be listening at the base URL (check --base-url and that the server is running); the batch stopped, {} call(s) not run",
            error.message,
            summary.not_run
        )),
        Some(StopReason::Interrupted) => {
            eprintln!(
                "interrupted: {} call(s) not run; run the same command again to continue",
                summary.not_run
            );
            Ok(130)
        }
        Some(StopReason::Fatal { error }) => {
            let hint = match error.kind {
                ragstats_agent::llm::ErrorKind::Auth => format!(
                    "check the key in ${key_env} (and --base-url); the batch stopped so no more calls were spent"
                ),
                _ => "the account's quota or balance is exhausted; the batch stopped".to_string(),
            };
            Err(anyhow::anyhow!(
                "{}: {hint}; finished calls are kept",
                error.message
            ))
        }
    }
}

/// On stderr, when `cut` of `answers` replies stopped at the token cap: what that means and
/// the flag that lifts it. The count itself belongs in the command's summary.
pub fn warn_truncated(cut: u64, answers: u64, max_tokens: Option<u64>) {
    if cut == 0 {
        return;
    }
    let cap = cap_phrase(max_tokens);
    eprintln!(
        "warning: {cut} of {answers} reply(ies) were cut at {cap} (finish_reason \"length\"); \
         their text is incomplete. Pass a larger --max-tokens if the replies need more room"
    );
}

/// On stderr, when `cut` of `answers` replies stopped at the token cap and `echoes` of
/// those echo the prompt (they repeat its lines or placeholders instead of answering): what
/// that means and what helps. A larger `--max-tokens` only lets an echo copy more, so it is
/// advised only for the cut replies that are not echoes.
pub fn warn_cut(cut: u64, echoes: u64, answers: u64, max_tokens: Option<u64>) {
    if cut == 0 {
        return;
    }
    if echoes == 0 {
        return warn_truncated(cut, answers, max_tokens);
    }
    let cap = cap_phrase(max_tokens);
    let head = format!(
        "warning: {cut} of {answers} reply(ies) were cut at {cap} (finish_reason \"length\")"
    );
    if echoes >= cut {
        eprintln!(
            "{head}, and every one echoes the prompt (repeats its lines or placeholders) instead of answering: \
             the model copies its prompt, so a larger --max-tokens would only make the run slower; \
             try a model that follows the prompt, or another prompt"
        );
    } else {
        eprintln!(
            "{head}; {echoes} of them echo the prompt (repeat its lines or placeholders) instead of answering, \
             which more tokens do not help; the other {} may need more room: pass a larger --max-tokens",
            cut - echoes
        );
    }
}

/// The cap a cut reply hit, as the messages name it: `--max-tokens N`, or the server's
/// limit when none was sent (`--max-tokens 0`).
pub fn cap_phrase(max_tokens: Option<u64>) -> String {
    max_tokens.map_or_else(
        || "the server's limit".to_string(),
        |m| format!("--max-tokens {m}"),
    )
}
