//! `stats llm check|batch`: call an OpenAI-compatible chat-completions endpoint.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use ragstats_agent::llm::batch::BatchSummary;
use ragstats_agent::llm::requests::{expand, read_requests};
use ragstats_agent::llm::{CallRecord, Message, ModelConfig};

use super::batch::{block_on, cap_phrase, exit_code, warn_truncated, BatchPolicy};
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
#[command(mut_arg("max_tokens", |a| a.default_value(super::endpoint::CHECK_MAX_TOKENS)))]
pub struct CheckArgs {
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// The user message to send.
    #[arg(long, default_value = "Reply with the single word: pong")]
    pub prompt: String,
    /// Skip the two extra calls that test whether the server's chat template keeps a
    /// system message (row `system role`).
    #[arg(long)]
    pub no_system_probe: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Flags of `stats llm batch`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(super::endpoint::BATCH_MAX_TOKENS)))]
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
    let template = ModelConfig {
        model: a.endpoint.model.clone(),
        params,
        extra,
    };
    let req = template.user_request("check", a.prompt.clone());
    let rec = client.complete(&req).await;
    let probe = if rec.is_ok() && !a.no_system_probe {
        Some(system_probe(&client, &template).await)
    } else {
        None
    };
    let mut rows = check_rows(&url, &rec);
    if let Some(p) = &probe {
        rows.push(("system role", p.describe(template.params.fold_system)));
    }
    match a.format {
        Format::Json => {
            let mut v = serde_json::to_value(&rec)?;
            if let Some(p) = &probe {
                v["system_probe"] = serde_json::to_value(p)?;
            }
            outln!("{}", serde_json::to_string_pretty(&v)?)
        }
        Format::Table => {
            for (k, v) in rows {
                outln!("{k:<22} {v}");
            }
        }
        Format::Csv => write_csv(
            &["field", "value"],
            &rows
                .into_iter()
                .map(|(k, v)| vec![k.to_string(), v])
                .collect::<Vec<_>>(),
        )?,
    }
    if rec.is_truncated() {
        eprintln!(
            "note: the reply was cut at {} (finish_reason \"length\"): the model did not stop after its answer; the cap keeps the check short",
            cap_phrase(template.params.max_tokens)
        );
    }
    if probe
        .as_ref()
        .is_some_and(|p| p.verdict == Verdict::Dropped)
        && !template.params.fold_system
    {
        eprintln!(
            "hint: this server drops system messages (its chat template has no system role, as Gemma's); \
             every reply-format instruction of `stats run`, and any system message of `stats llm batch`, would be lost. \
             Pass --fold-system to every command that calls this model"
        );
    }
    Ok(if rec.is_ok() { 0 } else { 1 })
}

/// The system instruction of the probe: a reply that obeys it is one known word. (The
/// probe's texts are those recorded against a real Gemma server in
/// tests/fixtures/real/system_probe.jsonl, which the tests replay.)
const PROBE_SYSTEM: &str = "Answer with only the word BANANA.";
/// The user message of both probe requests.
const PROBE_USER: &str = "What colour is the sky?";
/// The word an obeying reply contains (compared in lower case).
const PROBE_WORD: &str = "banana";

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    /// The request with a system message was counted longer than the one without.
    Delivered,
    /// Both requests were counted the same: the system text never reached the model.
    Dropped,
    /// No token counts to compare, and the reply did not show the instruction was seen.
    Unknown,
}

/// What the two probe calls showed (`system_probe` of `llm check --format json`).
#[derive(serde::Serialize)]
struct SystemProbe {
    verdict: Verdict,
    /// usage.prompt_tokens with and without the system message.
    #[serde(rename = "prompt_tokens_with_system")]
    with_system: Option<u64>,
    #[serde(rename = "prompt_tokens_without_system")]
    without_system: Option<u64>,
    /// The reply to the request with the system message contains [`PROBE_WORD`].
    obeyed: Option<bool>,
    /// Why the probe could not run (a call failed).
    error: Option<String>,
}

impl SystemProbe {
    fn describe(&self, folded: bool) -> String {
        let counts = match (self.with_system, self.without_system) {
            (Some(w), Some(wo)) => format!("prompt_tokens {w} with a system message, {wo} without"),
            _ => "prompt_tokens not reported".into(),
        };
        let obeyed = match self.obeyed {
            Some(true) => "; the reply followed the system instruction",
            Some(false) => "; the reply did not follow the system instruction",
            None => "",
        };
        let how = if folded {
            " (folded into the user message by --fold-system)"
        } else {
            ""
        };
        match (self.verdict, &self.error) {
            (_, Some(e)) => format!("not checked: a probe call failed: {e}"),
            (Verdict::Delivered, _) => format!("delivered{how}: {counts}{obeyed}"),
            (Verdict::Dropped, _) if folded => format!("DROPPED even folded: {counts}{obeyed}"),
            (Verdict::Dropped, _) => {
                format!("DROPPED by the chat template: {counts}{obeyed}; pass --fold-system")
            }
            (Verdict::Unknown, _) => format!("unknown: {counts}{obeyed}"),
        }
    }
}

/// Sends the same user message with and without a system instruction (under the command's
/// sampling, `--fold-system` included). A template that drops the system message sends the
/// model the same tokens both times, so equal `prompt_tokens` mean it was dropped; more with
/// it mean it arrived. Without token counts, a reply that obeys the instruction shows it
/// arrived (one that does not proves nothing: a small model may ignore it).
async fn system_probe(client: &ragstats_agent::llm::Client, t: &ModelConfig) -> SystemProbe {
    let mut with = t.user_request("check:system", PROBE_USER);
    with.messages
        .insert(0, Message::system(PROBE_SYSTEM).to_value());
    let without = t.user_request("check:no-system", PROBE_USER);
    let (a, b) = tokio::join!(client.complete(&with), client.complete(&without));
    let failed = [&a, &b]
        .iter()
        .find_map(|r| r.error.as_ref().map(|e| e.message.clone()));
    let tokens = |r: &CallRecord| r.usage.as_ref().and_then(|u| u.prompt_tokens);
    let (w, wo) = (tokens(&a), tokens(&b));
    let obeyed = a
        .text
        .as_ref()
        // An echo of the instruction (small models echo prompts) is not obeying it.
        .map(|t| {
            t.to_lowercase()
                .replace(&PROBE_SYSTEM.to_lowercase(), "")
                .contains(PROBE_WORD)
        });
    let verdict = match (w, wo) {
        (Some(w), Some(wo)) if w > wo => Verdict::Delivered,
        (Some(w), Some(wo)) if w == wo => Verdict::Dropped,
        _ if obeyed == Some(true) => Verdict::Delivered,
        _ => Verdict::Unknown,
    };
    SystemProbe {
        verdict,
        with_system: w,
        without_system: wo,
        obeyed,
        error: failed,
    }
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
        rows.push(("text", ragstats_agent::llm::response::snippet(t, 200)));
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
    print_summary(
        &summary,
        &a.out,
        a.policy.ledger.as_deref(),
        params.max_tokens,
    )?;
    exit_code(&summary, a.endpoint.key_env())
}

/// The end summary on stdout (what was done, where it went); warnings on stderr.
fn print_summary(
    s: &BatchSummary,
    out: &Path,
    ledger: Option<&Path>,
    max_tokens: Option<u64>,
) -> anyhow::Result<()> {
    let p = &s.progress;
    outln!(
        "llm batch: {} call(s): {} already answered, {} written now ({} ok, {} failed, {} from cache, {} cut at max_tokens), {} not run",
        p.total, p.skipped, p.done, p.ok, p.failed, p.cached, p.truncated, s.not_run
    );
    outln!(
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
        outln!(
            "{} call(s) that had failed in an earlier run were asked again",
            s.retried_failures
        );
    }
    outln!(
        "output: {}{}",
        out.display(),
        ledger
            .map(|l| format!("; ledger: {}", l.display()))
            .unwrap_or_default()
    );
    warn_truncated(p.truncated, p.ok, max_tokens);
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
    Ok(())
}
