//! The batch runner behind `stats llm batch` and `stats mcq run`: the policy flags they
//! share (`batch/args.rs`), the progress bar, Ctrl-C handling, and what a stopped batch
//! prints and exits with (`batch/render.rs`). The policy check and the progress arithmetic
//! are [`ragstats_agent::llm::batch`].

mod args;
mod render;

use std::collections::HashMap;
use std::future::Future;
use std::io::IsTerminal;
use std::path::Path;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use ragstats_agent::llm::append_log::load_records;
use ragstats_agent::llm::batch::{
    check_policy, run_batch, BatchOptions, BatchProgress, BatchSummary,
};
use ragstats_agent::llm::{CallRecord, Cancel, ChatRequest, Client, ClientConfig};

pub use args::{progress_secs, BatchPolicy};
pub use render::{
    cap_phrase, exit_code, progress_line, run_counts, warn_cut, warn_truncated, ProgressLines,
};

use super::endpoint::{client, Configured, Endpoint};

/// What [`BatchPolicy::ask`] returns: the batch's summary, and every record of the responses
/// file by (request id, sample index), the last one of each call.
pub type Asked = (BatchSummary, HashMap<(String, u32), CallRecord>);

impl BatchPolicy {
    /// Checks the policy and configures `endpoint` under it (rate ceilings, response cache).
    pub fn configure(&self, endpoint: &Endpoint) -> anyhow::Result<Configured> {
        check_policy(self.concurrency, self.rpm, self.tpm)?;
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
