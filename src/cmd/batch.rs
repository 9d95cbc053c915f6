//! The batch runner behind `stats llm batch` and `stats mcq run`: the policy flags they
//! share, the progress bar, Ctrl-C handling, and the exit code of a stopped batch.

use std::collections::HashMap;
use std::future::Future;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ragstats_agent::llm::append_log::load_records;
use ragstats_agent::llm::batch::{
    run_batch, BatchOptions, BatchProgress, BatchSummary, StopReason,
};
use ragstats_agent::llm::{CallRecord, Cancel, ChatRequest, Client, ClientConfig};

use super::endpoint::{client, Configured, Endpoint};
use super::UsageError;

/// What [`BatchPolicy::ask`] returns: the batch's summary, and every record of the responses
/// file by (request id, sample index), the last one of each call.
pub type Asked = (BatchSummary, HashMap<(String, u32), CallRecord>);

/// Batch policy flags shared by `stats llm batch` and `stats mcq run`.
#[derive(Debug, clap::Args)]
pub struct BatchPolicy {
    /// Requests in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Requests-per-minute ceiling (every attempt counts).
    #[arg(long)]
    pub rpm: Option<u64>,
    /// Tokens-per-minute ceiling (estimated before sending, corrected by reported usage).
    #[arg(long)]
    pub tpm: Option<u64>,
    /// Cost ledger JSONL to append one row per billed call to.
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Do not read or write the response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Response cache directory.
    #[arg(long, default_value = ".stats-cache/llm")]
    pub cache_dir: PathBuf,
    /// Seconds between progress lines on stderr when it is not a terminal (a log file); a
    /// terminal gets a progress bar instead.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = progress_secs)]
    pub progress_every: f64,
}

/// `--progress-every`: a positive number of seconds.
pub fn progress_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!("'{s}': expected seconds between 0 and 86400")),
    }
}

impl BatchPolicy {
    /// Checks the policy and configures `endpoint` under it (rate ceilings, response cache).
    pub fn configure(&self, endpoint: &Endpoint) -> anyhow::Result<Configured> {
        if self.concurrency == 0 {
            return Err(UsageError("--concurrency must be at least 1".into()).into());
        }
        if self.rpm == Some(0) || self.tpm == Some(0) {
            return Err(UsageError("--rpm and --tpm must be at least 1".into()).into());
        }
        let cache_dir = (!self.no_cache).then(|| self.cache_dir.clone());
        endpoint.configure(cache_dir, self.rpm, self.tpm)
    }

    /// Runs `calls` through `client`, appending every finished record to `out` (and, with
    /// `--ledger`, one row of kind `ledger_kind` per billed call). A progress bar shows on a
    /// terminal; the first Ctrl-C stops dispatching, the second abandons calls in flight.
    pub async fn run(
        &self,
        client: &Client,
        calls: Vec<ChatRequest>,
        out: &Path,
        ledger_kind: ragstats_core::ledger::CallKind,
    ) -> anyhow::Result<BatchSummary> {
        let cancel = Cancel::new();
        let bar = std::io::stderr().is_terminal().then(|| {
            let pb = ProgressBar::new(0);
            pb.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} eta {eta} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb
        });
        spawn_signal_watch(cancel.clone(), bar.clone());
        let opts = BatchOptions {
            out: out.to_path_buf(),
            ledger: self.ledger.clone(),
            ledger_kind,
            concurrency: self.concurrency,
            cancel,
        };
        // Without a terminal (a log, CI), a plain line every --progress-every seconds.
        let mut lines = ProgressLines::new(self.progress_every);
        let mut on_progress = |p: &BatchProgress| {
            if bar.is_none() && lines.due() {
                eprintln!("{}", progress_line(p));
            }
            if let Some(pb) = &bar {
                pb.set_length(p.total - p.skipped);
                pb.set_position(p.done);
                pb.set_message(format!(
                    "| {:.1}/s | in flight {} retries {} errors {} tokens {}+{}",
                    p.done as f64 / p.elapsed_s.max(1e-3),
                    p.in_flight,
                    p.retries,
                    p.failed,
                    p.prompt_tokens,
                    p.completion_tokens
                ));
            }
        };
        let summary = run_batch(client, calls, &opts, &mut on_progress).await?;
        if let Some(pb) = &bar {
            pb.finish_and_clear();
        }
        Ok(summary)
    }

    /// The batch block of `mcq generate`, `mcq run` and `judge`: builds the client from
    /// `config`, runs `calls` as [`Self::run`] does (appending to the responses file `out`,
    /// ledger rows of kind `ledger_kind`), then reads `out` back whole, so the records
    /// include the calls an earlier invocation finished (the file is the resume state).
    pub async fn ask(
        &self,
        config: ClientConfig,
        calls: Vec<ChatRequest>,
        out: &Path,
        ledger_kind: ragstats_core::ledger::CallKind,
    ) -> anyhow::Result<Asked> {
        let client = client(config)?;
        let summary = self.run(&client, calls, out, ledger_kind).await?;
        let records = load_records(out)?;
        Ok((summary, records))
    }
}

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
/// (`llm batch`, `mcq run`, `judge`, `mcq generate`, `run`): calls done of those to run, how
/// many were answered, from the cache, failed, in flight, the requests and retries sent, the
/// seconds so far, and the remaining time at the rate so far (`-` before the first call).
pub fn progress_line(p: &BatchProgress) -> String {
    let total = p.total - p.skipped;
    let eta = if p.done == 0 {
        "-".to_string()
    } else {
        let left = total.saturating_sub(p.done) as f64;
        format!("{:.0} s", left * p.elapsed_s / p.done as f64)
    };
    format!(
        "progress: {}/{} call(s) done ({} ok, {} cached, {} failed), {} in flight, {} request(s), {} retries, {:.0} s, eta {eta}",
        p.done, total, p.ok, p.cached, p.failed, p.in_flight, p.requests, p.retries, p.elapsed_s
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

/// The cap a cut reply hit, as the messages name it: `--max-tokens N`, or the server's
/// limit when none was sent (`--max-tokens 0`).
pub fn cap_phrase(max_tokens: Option<u64>) -> String {
    max_tokens.map_or_else(
        || "the server's limit".to_string(),
        |m| format!("--max-tokens {m}"),
    )
}

/// Runs an async command to completion on a multi-threaded runtime.
pub fn block_on(command: impl Future<Output = anyhow::Result<u8>>) -> anyhow::Result<u8> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(command)
}

/// First Ctrl-C (or SIGTERM): stop dispatching and retrying, let requests in flight finish.
/// Second: abandon them.
pub fn spawn_signal_watch(cancel: Cancel, bar: Option<ProgressBar>) {
    tokio::spawn(async move {
        let say = |m: &str| match &bar {
            Some(pb) => pb.println(m),
            None => eprintln!("{m}"),
        };
        if wait_signal().await {
            cancel.stop();
            say("interrupt: no new requests; waiting for those in flight (Ctrl-C again to abandon them)");
        }
        if wait_signal().await {
            cancel.abort();
            say("interrupt: abandoning requests in flight");
        }
    });
}

/// Waits for Ctrl-C or (on Unix) SIGTERM; false if no handler could be installed.
async fn wait_signal() -> bool {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                _ = term.recv() => true,
            },
            Err(_) => tokio::signal::ctrl_c().await.is_ok(),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await.is_ok()
    }
}
