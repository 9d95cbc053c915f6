//! `stats llm check|batch`: call an OpenAI-compatible chat-completions endpoint.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use ragstats::llm::batch::{run_batch, BatchOptions, BatchProgress, BatchSummary, StopReason};
use ragstats::llm::requests::{expand, read_requests};
use ragstats::llm::{
    CallRecord, Cancel, ChatRequest, Client, ClientConfig, Message, RetryPolicy, SamplingParams,
};
use serde_json::{Map, Value};

use super::common::Format;
use super::UsageError;

/// Flags of `stats llm`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Sub,
}

/// `stats llm` subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Send one request and show latency and the usage fields the server returns.
    #[command(
        after_help = "Example:\n  stats llm check --model qwen3-8b --extra '{\"enable_thinking\": false}'"
    )]
    Check(Box<CheckArgs>),
    /// Run requests.jsonl; results are appended as they finish, and a re-run resumes.
    #[command(
        after_help = "Example:\n  stats llm batch requests.jsonl --model qwen3-8b --out responses.jsonl --concurrency 32 --ledger calls.jsonl\n\nCtrl-C stops dispatching, keeps what finished and exits 130; run the same command again to continue."
    )]
    Batch(Box<BatchArgs>),
}

/// Endpoint, model and policy flags shared by both subcommands.
#[derive(Debug, clap::Args)]
pub struct Endpoint {
    /// Base URL including the API version (requests go to {base}/chat/completions).
    #[arg(long, env = "OPENAI_BASE_URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key [default: OPENAI_API_KEY].
    /// The key is never printed.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Model name sent in the request.
    #[arg(long)]
    pub model: String,
    /// Sampling temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[arg(long)]
    pub top_p: Option<f64>,
    /// Maximum completion tokens (`max_tokens`).
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// Seed; sample s of a request is sent seed + s.
    #[arg(long)]
    pub seed: Option<u64>,
    /// JSON object merged into the request body, e.g. '{"enable_thinking": false}'.
    #[arg(long, value_name = "JSON")]
    pub extra: Option<String>,
    /// Per-request timeout in seconds (sending to last byte of the answer).
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pub timeout: f64,
    /// Retries after the first attempt for 408, 409, 429, 5xx, timeouts, dropped connections.
    #[arg(long, default_value_t = 6)]
    pub max_retries: u32,
    /// Backoff base in seconds (wait before retry k is uniform in [0, min(cap, base·2^k))).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub backoff_base: f64,
    /// Backoff cap in seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub backoff_cap: f64,
}

/// Flags of `stats llm check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// The user message to send.
    #[arg(long, default_value = "Reply with the single word: pong")]
    pub prompt: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Flags of `stats llm batch`.
#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// Requests JSONL: {"id", "messages": [...], "sample"?: n, "meta"?: {...}} per line.
    pub requests: PathBuf,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// Output JSONL; appended to, and read first to skip calls already answered.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub policy: BatchPolicy,
    /// `kind` of the ledger rows.
    #[arg(long, default_value = "reader", value_parser = ["planner", "reader", "search"])]
    pub ledger_kind: String,
}

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
}

/// Runs `stats llm`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match args.cmd {
        Sub::Check(a) => rt.block_on(check(*a)),
        Sub::Batch(a) => rt.block_on(batch(*a)),
    }
}

/// Builds the client config and the call template from the shared flags.
pub(super) fn endpoint_config(
    e: &Endpoint,
    cache_dir: Option<PathBuf>,
    rpm: Option<u64>,
    tpm: Option<u64>,
) -> anyhow::Result<(ClientConfig, SamplingParams, Map<String, Value>)> {
    let base = e.base_url.clone().unwrap_or_default();
    if base.trim().is_empty() {
        return Err(UsageError(
            "no base URL: pass --base-url or set OPENAI_BASE_URL (e.g. http://127.0.0.1:8000/v1)"
                .into(),
        )
        .into());
    }
    let key_env = e.api_key_env.as_deref().unwrap_or("OPENAI_API_KEY");
    let api_key = match std::env::var(key_env) {
        Ok(k) if !k.is_empty() => Some(k),
        _ if e.api_key_env.is_some() => {
            return Err(UsageError(format!(
                "--api-key-env {key_env}: that environment variable is not set"
            ))
            .into())
        }
        // Local servers (vLLM, llama-server, Ollama) need no key.
        _ => None,
    };
    let secs = |name: &str, v: f64| -> anyhow::Result<Duration> {
        if v.is_finite() && v >= 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(UsageError(format!(
                "{name} must be a non-negative number of seconds, got {v}"
            ))
            .into())
        }
    };
    let timeout = secs("--timeout", e.timeout)?;
    if timeout.is_zero() {
        return Err(UsageError("--timeout must be positive".into()).into());
    }
    let extra = match &e.extra {
        None => Map::new(),
        Some(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(UsageError(format!(
                    "--extra must be a JSON object, e.g. '{{\"enable_thinking\": false}}', got {s}"
                ))
                .into())
            }
        },
    };
    let config = ClientConfig {
        base_url: base,
        api_key,
        timeout,
        retry: RetryPolicy {
            max_retries: e.max_retries,
            base: secs("--backoff-base", e.backoff_base)?,
            cap: secs("--backoff-cap", e.backoff_cap)?,
            ..RetryPolicy::default()
        },
        rpm,
        tpm,
        cache_dir,
    };
    let params = SamplingParams {
        temperature: e.temperature,
        top_p: e.top_p,
        max_tokens: e.max_tokens,
        seed: e.seed,
    };
    Ok((config, params, extra))
}

pub(super) fn client(config: ClientConfig) -> anyhow::Result<Client> {
    Client::new(config).map_err(|e| match e {
        ragstats::Error::Usage(m) => UsageError(m).into(),
        other => anyhow::Error::new(other),
    })
}

async fn check(a: CheckArgs) -> anyhow::Result<u8> {
    // No cache: a check exists to make a request.
    let (config, params, extra) = endpoint_config(&a.endpoint, None, None, None)?;
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    let client = client(config)?;
    let mut req = ChatRequest::new(
        "check",
        a.endpoint.model.clone(),
        vec![Message::user(a.prompt.clone()).to_value()],
    );
    req.params = params;
    req.extra = extra;
    let rec = client.complete(&req).await;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rec)?),
        Format::Table => {
            for (k, v) in check_rows(&url, &rec) {
                println!("{k:<22} {v}");
            }
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
            w.write_record(["field", "value"])?;
            for (k, v) in check_rows(&url, &rec) {
                w.write_record([k, v.as_str()])?;
            }
            w.flush()?;
        }
    }
    Ok(if rec.is_ok() { 0 } else { 1 })
}

/// (field, value) rows describing a check's record.
fn check_rows(url: &str, rec: &CallRecord) -> Vec<(&'static str, String)> {
    let opt =
        |v: Option<u64>| v.map_or_else(|| "null (not reported)".to_string(), |x| x.to_string());
    let mut rows = vec![("endpoint", url.to_string()), ("model", rec.model.clone())];
    match &rec.error {
        Some(e) => rows.push((
            "result",
            format!("error ({}): {}", e.kind.as_str(), e.message),
        )),
        None => rows.push((
            "result",
            format!(
                "ok (finish_reason {})",
                rec.finish_reason.as_deref().unwrap_or("null")
            ),
        )),
    }
    rows.push((
        "latency",
        format!(
            "{:.1} ms last attempt, {:.1} ms total, {} attempt(s)",
            rec.latency_ms, rec.elapsed_ms, rec.attempts
        ),
    ));
    let u = rec.usage.as_ref();
    rows.push(("prompt_tokens", opt(u.and_then(|u| u.prompt_tokens))));
    rows.push((
        "cached_prompt_tokens",
        opt(u.and_then(|u| u.cached_prompt_tokens)),
    ));
    rows.push((
        "completion_tokens",
        opt(u.and_then(|u| u.completion_tokens)),
    ));
    rows.push(("reasoning_tokens", opt(u.and_then(|u| u.reasoning_tokens))));
    rows.push(("total_tokens", opt(u.and_then(|u| u.total_tokens))));
    rows.push((
        "raw usage",
        u.map_or_else(|| "null (no usage object)".into(), |u| u.raw.to_string()),
    ));
    if let Some(t) = &rec.timings {
        rows.push(("timings", t.to_string()));
    }
    rows.push((
        "reasoning",
        rec.reasoning
            .as_ref()
            .map_or_else(|| "none".into(), |r| format!("{} chars", r.chars().count())),
    ));
    if let Some(t) = &rec.text {
        rows.push(("text", ragstats::llm::response::snippet(t, 200)));
    }
    rows
}

async fn batch(a: BatchArgs) -> anyhow::Result<u8> {
    let cache_dir = (!a.policy.no_cache).then(|| a.policy.cache_dir.clone());
    let (config, params, extra) =
        endpoint_config(&a.endpoint, cache_dir, a.policy.rpm, a.policy.tpm)?;
    if a.policy.concurrency == 0 {
        return Err(UsageError("--concurrency must be at least 1".into()).into());
    }
    if a.policy.rpm == Some(0) || a.policy.tpm == Some(0) {
        return Err(UsageError("--rpm and --tpm must be at least 1".into()).into());
    }
    let key_env = a
        .endpoint
        .api_key_env
        .clone()
        .unwrap_or_else(|| "OPENAI_API_KEY".into());
    let lines = read_requests(&a.requests)?;
    let calls = expand(&lines, &a.endpoint.model, &params, &extra);
    let client = client(config)?;

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
        out: a.out.clone(),
        ledger: a.policy.ledger.clone(),
        ledger_kind: a.ledger_kind.parse()?,
        concurrency: a.policy.concurrency,
        cancel: cancel.clone(),
    };
    let mut on_progress = |p: &BatchProgress| {
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
    let summary = run_batch(&client, calls, &opts, &mut on_progress).await?;
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    print_summary(&summary, &a.out, a.policy.ledger.as_deref());
    match &summary.stopped {
        None => Ok(0),
        Some(StopReason::Interrupted) => {
            eprintln!(
                "interrupted: {} call(s) not run; run the same command again to continue",
                summary.not_run
            );
            Ok(130)
        }
        Some(StopReason::Fatal { error }) => {
            let hint = match error.kind {
                ragstats::llm::ErrorKind::Auth => format!(
                    "check the key in ${key_env} (and --base-url); the batch stopped so no more calls were spent"
                ),
                _ => "the account's quota or balance is exhausted; the batch stopped".to_string(),
            };
            Err(anyhow::anyhow!("{}: {hint}", error.message))
        }
    }
}

/// First Ctrl-C (or SIGTERM): stop dispatching and retrying, let requests in flight finish.
/// Second: abandon them.
pub(super) fn spawn_signal_watch(cancel: Cancel, bar: Option<ProgressBar>) {
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

fn print_summary(s: &BatchSummary, out: &Path, ledger: Option<&Path>) {
    let p = &s.progress;
    eprintln!(
        "llm batch: {} call(s): {} already answered, {} written now ({} ok, {} failed, {} from cache), {} not run",
        p.total, p.skipped, p.done, p.ok, p.failed, p.cached, s.not_run
    );
    eprintln!(
        "requests {} (retries {}); tokens: prompt {} (cached {}), completion {} (reasoning {}); {:.1} s",
        p.requests,
        p.retries,
        p.prompt_tokens,
        p.cached_prompt_tokens,
        p.completion_tokens,
        p.reasoning_tokens,
        p.elapsed_s
    );
    if s.retried_failures > 0 {
        eprintln!(
            "{} call(s) that had failed in an earlier run were asked again",
            s.retried_failures
        );
    }
    eprintln!(
        "output: {}{}",
        out.display(),
        ledger
            .map(|l| format!("; ledger: {}", l.display()))
            .unwrap_or_default()
    );
    if !s.bad_lines.is_empty() {
        let shown: Vec<String> = s.bad_lines.iter().take(10).map(|n| n.to_string()).collect();
        eprintln!(
            "warning: {}: {} line(s) are not JSON (torn by an earlier crash) and were ignored: line {}{}",
            out.display(),
            s.bad_lines.len(),
            shown.join(", "),
            if s.bad_lines.len() > 10 { ", …" } else { "" }
        );
    }
    if s.repaired_tail {
        eprintln!(
            "warning: {}: the last line was incomplete; new records start on the next line",
            out.display()
        );
    }
    if s.cache_write_errors > 0 {
        eprintln!(
            "warning: {} response(s) could not be written to the cache",
            s.cache_write_errors
        );
    }
    if p.failed > 0 {
        eprintln!(
            "{} call(s) failed for good and are recorded with an \"error\" field; a re-run asks them again",
            p.failed
        );
    }
}
