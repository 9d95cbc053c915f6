//! `stats mcq validate|run|score|cost|compare|filter|agree|generate`: RAGCap-Bench-style multiple-choice
//! evaluation (docs/mcq.md). One module per subcommand; `boot` holds what `score` and
//! `compare` share.

use std::path::{Path, PathBuf};

use clap::Subcommand;

use super::batch::block_on;

mod agree;
pub mod boot;
pub mod compare;
mod cost;
mod filter;
mod generate;
mod run;
pub mod score;
mod validate;

/// Flags of `stats mcq`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Sub,
}

/// `stats mcq` subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Check an items file against every format rule; report all violations (exit 2 if any).
    #[command(after_help = "Example:\n  stats mcq validate data/mcq/sample.jsonl")]
    Validate(validate::Args),
    /// Ask a model every item (N runs, optionally with shuffled options); resumable.
    #[command(
        after_help = "Examples:\n  stats mcq run data/mcq/sample.jsonl --model qwen3-8b --prompt informative --runs 3 --out runs/qwen3-8b.jsonl\n  stats mcq run data/mcq/sample.jsonl --model qwen3-8b --prompt informative --shuffle-seed 11 --out runs/qwen3-8b-shuffled.jsonl\n\nRaw responses go to <out>.responses.jsonl (the resume state); the results file is rebuilt from it.\nCtrl-C stops dispatching and keeps what finished; run the same command again to continue."
    )]
    Run(Box<run::Args>),
    /// EM and F1 per group, task and overall, with run SDs and stratified-bootstrap intervals.
    #[command(
        after_help = "Examples:\n  stats mcq score runs/qwen3-8b.jsonl\n  stats mcq score runs/qwen3-8b.jsonl --positions --shuffled runs/qwen3-8b-shuffled.jsonl"
    )]
    Score(score::Args),
    /// Tokens and fees of an `mcq run --ledger` ledger per item, group, task and run.
    #[command(
        after_help = "Example:\n  stats mcq cost runs/qwen3-8b.ledger.jsonl --prices prices.toml"
    )]
    Cost(cost::Args),
    /// Paired comparison of two result files: deltas (B − A) with intervals, a t test of each ΔEM.
    #[command(
        after_help = "Example:\n  stats mcq compare runs/qwen3-8b.jsonl runs/qwen3-32b.jsonl"
    )]
    Compare(compare::Args),
    /// Difficulty filter (drop items every model answers alike) plus the format rules.
    #[command(
        after_help = "Example:\n  stats mcq filter data/mcq/generated.jsonl --predictions runs/*.jsonl --out data/mcq/kept.jsonl"
    )]
    Filter(filter::Args),
    /// Annotator agreement (pairwise Jaccard) and majority-vote gold.
    #[command(
        after_help = "Example:\n  stats mcq agree data/mcq/annotations.jsonl --items data/mcq/sample.jsonl --gold-out gold.jsonl"
    )]
    Agree(agree::Args),
    /// Build items from a trajectory log: vanilla (evidence extraction, noise robustness) and error-guided (planning, grounded reasoning).
    #[command(
        after_help = "Examples:\n  stats mcq generate runs/demo/trajectories.jsonl --tasks evidence_extraction,noise_robustness --model none --out items.jsonl\n  stats mcq generate runs/demo/trajectories.jsonl --tasks all --model qwen3-8b --credibility credibility.csv --out items.jsonl\n\nGeneration replies go to <out stem>.responses.jsonl (the resume state); whatever did not become an item\nis listed with its reason in <out stem>.skipped.jsonl. See docs/mcqgen.md."
    )]
    Generate(Box<generate::Args>),
}

/// Runs `stats mcq`.
pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.cmd {
        Sub::Validate(a) => validate::run(a),
        Sub::Run(a) => block_on(run::run(*a)),
        Sub::Score(a) => score::run(a),
        Sub::Cost(a) => cost::run(a),
        Sub::Compare(a) => compare::run(a),
        Sub::Filter(a) => filter::run(a),
        Sub::Agree(a) => agree::run(a),
        Sub::Generate(a) => block_on(generate::run(*a)),
    }
}

/// `<out stem>.<suffix>.jsonl` next to `out` (the default path of a side file).
pub(crate) fn default_sidecar(out: &Path, suffix: &str) -> PathBuf {
    ragstats_core::io::output::sidecar(out, suffix)
}
