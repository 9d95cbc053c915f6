//! The flags of `stats llm check` and `stats llm batch`.

use std::path::PathBuf;

use clap::Subcommand;

use crate::cmd::batch::BatchPolicy;
use crate::cmd::common::Format;
use crate::cmd::endpoint::Endpoint;

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
#[command(mut_arg("max_tokens", |a| a.default_value(crate::cmd::endpoint::CHECK_MAX_TOKENS)))]
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
#[command(mut_arg("max_tokens", |a| a.default_value(crate::cmd::endpoint::BATCH_MAX_TOKENS)))]
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
