//! `stats run`: the agentic RAG pipeline from a question file to a panel, a trajectory log
//! and a cost ledger (crates/ragstats-agent/src/run, docs/run.md). The checks, the dry run
//! and the end counts are [`ragstats_agent::run::setup`]; flags are in `run/args.rs`, what
//! it prints in `run/render.rs`.

mod args;
mod render;

use std::sync::Arc;

use ragstats_agent::llm::{Cancel, RetryPolicy};
use ragstats_agent::run::audit::{cut_echoes, totals};
use ragstats_agent::run::log::write_outputs;
use ragstats_agent::run::pipeline::{run as run_pipeline, INTERRUPTED};
use ragstats_agent::run::prompt::Templates;
use ragstats_agent::run::setup::{
    dry_run_report, output_cap, run_cells, CallCounts, OutputCounts, RunShape,
};
use ragstats_agent::run::shard::{self, RunConfig, ShardManifest};
use ragstats_agent::run::until::{run_until, wave_order};
use ragstats_agent::run::{Progress, RunSpec};
use ragstats_agent::search::{http, mask, Search, SearchOptions};
use ragstats_core::ledger::Prices;
use ragstats_core::questions::read::read_questions;

pub use args::{Args, Cli, MergeArgs};
use render::{calls_line, dry_run_text, merge_lines, outputs_line, shard_line, until_line, Bar};

use super::batch::{block_on, warn_cut};
use super::common::print_json;
use super::endpoint::{client, Configured};
use super::run_audit::warn;
use super::UsageError;
use ragstats_agent::run::audit_view::totals_lines;

/// Runs `stats run` or `stats run merge`.
pub fn dispatch(c: Cli) -> anyhow::Result<u8> {
    match c {
        Cli::Run(a) => run(*a),
        Cli::Merge(m) => merge(&m),
    }
}

/// Runs `stats run`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    block_on(run_async(a))
}

/// Runs `stats run merge`: the checks and the merge are [`shard::merge`].
pub fn merge(m: &MergeArgs) -> anyhow::Result<u8> {
    let report = shard::merge(&m.dirs, &m.out, &shard::run_name(&m.out))?;
    for l in merge_lines(&report, &m.out) {
        outln!("{l}");
    }
    Ok(0)
}

async fn run_async(a: Args) -> anyhow::Result<u8> {
    let shape = RunShape::check(&a.shape())?;
    let loaded = read_questions(&a.questions)?;
    let all_cells = run_cells(&loaded.questions, &a.cells())?;
    let cells = match a.shard {
        Some(s) => shard::shard_cells(&all_cells, s),
        None => all_cells.clone(),
    };
    // An --until run asks at most its planned questions, in wave order: the dry run and the
    // progress bar count those.
    let counted = match a.until().and_then(|u| u.max_questions) {
        Some(max) => {
            let mut c = wave_order(cells.clone());
            c.truncate(max);
            c
        }
        None => cells.clone(),
    };
    let templates = match &a.prompt_dir {
        Some(d) => Templates::with_dir(d)?,
        None => Templates::builtin(),
    };
    // The paper's serving settings (§3.1) unless the flags say otherwise: clap fills
    // --max-tokens with RUN_MAX_TOKENS (256), so it is never None here.
    let max_tokens = output_cap(a.endpoint.max_tokens.unwrap_or_default())?;
    let temperature = a.endpoint.temperature.unwrap_or(0.7);
    if a.dry_run {
        let d = dry_run_report(&counted, &shape, &templates, max_tokens, &a.search)?;
        if a.json {
            print_json(&d)?;
        } else {
            dry_run_text(&d, &shape, max_tokens)?;
        }
        return Ok(0);
    }
    let until = a.until();
    if let Some(u) = &until {
        let arms: Vec<&str> = shape.arms.iter().map(|x| x.as_str()).collect();
        u.check(&arms, a.prices.is_some())?;
    }
    let cache = a.cache();
    if a.rpm == Some(0) || a.tpm == Some(0) {
        return Err(UsageError("--rpm and --tpm must be at least 1".into()).into());
    }
    let mut endpoint_cfg: Configured =
        a.endpoint
            .configure(Some(cache.join("llm")), a.rpm, a.tpm)?;
    endpoint_cfg.params.max_tokens = Some(max_tokens);
    endpoint_cfg.params.temperature = Some(temperature);
    let mut reader_params = endpoint_cfg.params.clone();
    if let Some(t) = a.reader_temperature {
        reader_params.temperature = Some(t);
    }
    let prices = a.prices.as_deref().map(Prices::read).transpose()?;
    let prices_for_until = prices.clone();
    let mut patterns = Vec::new();
    for f in &a.mask {
        patterns.extend(mask::read_patterns(f)?);
    }
    let search = Search::open(
        &a.search,
        SearchOptions {
            cache_dir: Some(cache.join("search")),
            mask: patterns.clone(),
            http: http::HttpConfig {
                rpm: a.search_rpm,
                retry: RetryPolicy::default(),
                ..http::HttpConfig::default()
            },
        },
    )?;
    let search_name = search.name();
    let client = client(endpoint_cfg.config)?;
    // Every call the pipeline makes, cache hits included, is counted: exactly the dry
    // run's planner and reader calls.
    let calls = shape.model_calls(&counted);
    let spec = RunSpec {
        run: a.run_name(),
        model: a.endpoint.model.clone(),
        arms: shape.arms,
        selectors: shape.selectors,
        steps: shape.steps,
        k: shape.k,
        planner_params: endpoint_cfg.params,
        reader_params,
        extra: endpoint_cfg.extra,
        templates,
        concurrency: shape.concurrency,
    };
    let manifest = match a.shard {
        Some(s) => Some(ShardManifest::new(
            RunConfig::new(
                &spec,
                &search_name,
                &patterns,
                &loaded.questions,
                &a.cells(),
            )?,
            &all_cells,
            s,
        )),
        None => None,
    };
    let progress = Arc::new(Progress::default());
    let cancel = Cancel::new();
    let bar = Bar::start(
        calls,
        counted.len() as u64,
        progress.clone(),
        prices,
        a.endpoint.model.clone(),
        client.clone(),
        a.progress_every,
    );
    super::batch::spawn_signal_watch(cancel.clone(), bar.pb.clone());
    let mut n_cells = cells.len();
    let mut stopped = None;
    let result = match &until {
        Some(u) => run_until(
            &client,
            Arc::new(search),
            Arc::new(spec),
            cells,
            progress.clone(),
            &cancel,
            u,
            prices_for_until.as_ref(),
            &a.out,
        )
        .await
        .map(|(out, record)| {
            n_cells = record.questions;
            stopped = Some(record);
            out
        }),
        None => {
            run_pipeline(
                &client,
                Arc::new(search),
                Arc::new(spec),
                cells,
                progress.clone(),
                &cancel,
            )
            .await
        }
    };
    bar.finish();
    let summary = calls_line(&CallCounts::of(&progress, client.stats().requests));
    let out = match result {
        Ok(o) => o,
        Err(ragstats_core::Error::Runtime(m)) if m == INTERRUPTED => {
            eprintln!("interrupted after {summary}; run the same command again to continue (finished calls are cached)");
            return Ok(130);
        }
        Err(e) => {
            eprintln!("{summary}");
            return Err(anyhow::anyhow!(
                "{e}; finished calls are cached: run the same command again to continue"
            ));
        }
    };
    // An --until run wrote its outputs after every wave, the last one included.
    if stopped.is_none() {
        write_outputs(&a.out, &out)?;
    }
    // Last, so that a shard directory with a manifest is a finished shard.
    if let Some(m) = &manifest {
        m.write(&a.out)?;
    }
    // The end-of-command summary goes to stdout, warnings to stderr (docs/run.md).
    outln!("{summary}");
    let tot = totals(&out.trajectories);
    for l in totals_lines(&tot) {
        outln!("{l}");
    }
    outln!("{}", outputs_line(&OutputCounts::of(n_cells, &out), &a.out));
    if let Some(m) = &manifest {
        outln!("{}", shard_line(m, &a.out));
    }
    if let Some(r) = &stopped {
        outln!("{}", until_line(r, &a.out));
    }
    warn(&tot.warnings());
    // Counted over the run's calls (cache hits included), as the summary's model calls; a
    // cut reply refused as a copy of the prompt is an echo, which more tokens do not help.
    warn_cut(
        tot.truncated_steps + tot.truncated_reads,
        cut_echoes(&out.trajectories),
        tot.steps + tot.reads,
        Some(max_tokens),
    );
    Ok(0)
}
