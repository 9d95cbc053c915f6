//! `stats mcq run`: every item asked of a model through the shared batch runner; the
//! results file is rebuilt from the raw responses, which are the resume state.

use std::path::PathBuf;

use ragstats_agent::llm::append_log::load_records;
use ragstats_core::mcq::prompt::{PromptKind, Templates};
use ragstats_core::mcq::results::{
    build_results, check_resume, plan_calls, write_results, CutReplies, OutcomeCounts, RunConfig,
};
use ragstats_core::mcq::validate::read_items;
use ragstats_core::mcq::Item;

use super::default_sidecar;
use super::validate::print_violations;
use crate::cmd::batch::{exit_code, warn_cut, BatchPolicy};
use crate::cmd::endpoint::{Configured, Endpoint};
use crate::cmd::UsageError;

/// Flags of `stats mcq run`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("max_tokens", |a| a.default_value(crate::cmd::endpoint::MCQ_MAX_TOKENS)))]
pub struct Args {
    /// Items JSONL.
    pub items: PathBuf,
    #[command(flatten)]
    pub endpoint: Endpoint,
    /// Prompt template kind.
    #[arg(long, value_enum, default_value_t = PromptArg::Informative)]
    pub prompt: PromptArg,
    /// Directory with <kind>/<task>.txt templates replacing the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub prompt_dir: Option<PathBuf>,
    /// Runs per item (request ids <id>#run<k>, sample index k).
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Ask only the first N items of the file (a trial run; the same command without it
    /// later asks the rest, the first N from the responses file).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Shuffle each item's options with this seed (relabelled A, B, C, ...).
    #[arg(long, value_name = "SEED")]
    pub shuffle_seed: Option<u64>,
    /// Results JSONL (rewritten from the responses file at the end of every invocation).
    #[arg(long)]
    pub out: PathBuf,
    /// Raw responses JSONL, the resume state [default: <out stem>.responses.jsonl].
    #[arg(long)]
    pub responses: Option<PathBuf>,
    #[command(flatten)]
    pub policy: BatchPolicy,
}

flag_enum! {
    /// `--prompt`.
    pub enum PromptArg => PromptKind {
        /// Task description and output format only.
        Bare,
        /// Adds few-shot examples of each capability's common mistakes.
        Informative,
    }
}

/// Runs `stats mcq run`.
pub async fn run(a: Args) -> anyhow::Result<u8> {
    if a.runs == 0 {
        return Err(UsageError("--runs must be at least 1".into()).into());
    }
    let f = read_items(&a.items)?;
    if !f.violations.is_empty() {
        print_violations(&a.items, &f);
        return Err(UsageError(format!(
            "{}: {} violation(s); fix them (see `stats mcq validate`) before running",
            a.items.display(),
            f.violations.len()
        ))
        .into());
    }
    if f.items.is_empty() {
        return Err(UsageError(format!("{}: no items", a.items.display())).into());
    }
    let items: Vec<Item> = f.items.into_iter().map(|l| l.item).collect();
    let templates = match &a.prompt_dir {
        Some(d) => Templates::with_dir(d)?,
        None => Templates::builtin(),
    };
    let responses = a
        .responses
        .clone()
        .unwrap_or_else(|| default_sidecar(&a.out, "responses"));
    if responses == a.out {
        return Err(UsageError("--responses must differ from --out".into()).into());
    }
    let Configured {
        config,
        params,
        extra,
    } = a.policy.configure(&a.endpoint)?;
    let params_max_tokens = params.max_tokens;
    let cfg = RunConfig {
        model: a.endpoint.model.clone(),
        prompt: a.prompt.into(),
        runs: a.runs,
        shuffle_seed: a.shuffle_seed,
        params,
        extra,
        limit: a.limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    };
    let plan = plan_calls(&items, &templates, &cfg);
    let asked = plan.len() / a.runs as usize;
    if responses.exists() {
        let old = load_records(&responses)?;
        check_resume(&responses, &old, &plan)?;
    }
    let calls = plan.iter().map(|p| p.request.clone()).collect();
    let (summary, records) = a
        .policy
        .ask(
            config,
            calls,
            &responses,
            ragstats_core::ledger::CallKind::Mcq,
        )
        .await?;
    let (results, missing) = build_results(&items, &plan, &records, &cfg);
    write_results(&a.out, &results)?;
    let n = OutcomeCounts::of(&results);
    let p = &summary.progress;
    let of_file = if asked < items.len() {
        format!(" (the first {asked} of {}: --limit)", items.len())
    } else {
        String::new()
    };
    outln!(
        "mcq run: {asked} item(s){of_file} × {} run(s) = {} call(s): {}",
        a.runs,
        plan.len(),
        crate::cmd::batch::run_counts(p)
    );
    outln!(
        "results: {} line(s): {} parsed, {} parse failure(s), {} truncated, {} API error(s); {} not run yet -> {}",
        n.lines,
        n.ok,
        n.parse_failed,
        n.truncated,
        n.errors,
        missing,
        a.out.display()
    );
    // Every cut reply is `truncated` (the parser never reads one), so no "still parsed" count.
    outln!(
        "cut at max_tokens (finish_reason length): {} of {} repl(ies), all counted as truncated (a cut reply has no final answer line)",
        n.cut,
        n.answered
    );
    outln!("raw responses: {}", responses.display());
    let cut = CutReplies::of(&plan, &records);
    warn_cut(
        cut.cut as u64,
        cut.echoes as u64,
        n.answered as u64,
        params_max_tokens,
    );
    if n.errors > 0 {
        eprintln!("API errors are recorded as errors (not wrong answers); run the same command again to retry them");
    }
    exit_code(&summary, a.endpoint.key_env())
}
