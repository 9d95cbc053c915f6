//! `stats llm check|batch`: call an OpenAI-compatible chat-completions endpoint.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use ragstats::llm::batch::BatchSummary;
use ragstats::llm::requests::{expand, read_requests};
use ragstats::llm::{CallRecord, ChatRequest, Message};

use super::batch::{block_on, exit_code, BatchPolicy};
use super::common::{write_csv, Format};
use super::endpoint::{client, Configured, Endpoint};

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

/// Runs `stats llm`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Check(a) => block_on(check(*a)),
        Sub::Batch(a) => block_on(batch(*a)),
    }
}

async fn check(a: CheckArgs) -> anyhow::Result<u8> {
    // No cache: a check exists to make a request.
    let Configured {
        config,
        params,
        extra,
    } = a.endpoint.configure(None, None, None)?;
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
        Format::Json => outln!("{}", serde_json::to_string_pretty(&rec)?),
        Format::Table => {
            for (k, v) in check_rows(&url, &rec) {
                outln!("{k:<22} {v}");
            }
        }
        Format::Csv => write_csv(
            &["field", "value"],
            &check_rows(&url, &rec)
                .into_iter()
                .map(|(k, v)| vec![k.to_string(), v])
                .collect::<Vec<_>>(),
        )?,
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
    let Configured {
        config,
        params,
        extra,
    } = a.policy.configure(&a.endpoint)?;
    let lines = read_requests(&a.requests)?;
    let calls = expand(&lines, &a.endpoint.model, &params, &extra);
    let client = client(config)?;
    let summary = a
        .policy
        .run(&client, calls, &a.out, a.ledger_kind.parse()?)
        .await?;
    print_summary(&summary, &a.out, a.policy.ledger.as_deref());
    exit_code(&summary, a.endpoint.key_env())
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
