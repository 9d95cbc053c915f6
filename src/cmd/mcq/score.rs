//! `stats mcq score`: EM and F1 per group, task and overall with run SDs and
//! stratified-bootstrap intervals, failure rates, positional bias. The analysis is
//! [`ragstats_core::mcq::score::score_results`]; its view is the library's
//! (`ragstats_core::mcq::view`).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::mcq::score::{score_results_clustered, scored_items, ScoreReport};

use super::boot::{load_results, BootArgs};
use crate::cmd::common::Format;
use crate::cmd::render::{Figure, Finished};
use crate::cmd::UsageError;

/// Flags of `stats mcq score`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results JSONL written by `mcq run`.
    pub results: PathBuf,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Also show the positional-bias table (with --format csv: show only that table).
    #[arg(long)]
    pub positions: bool,
    /// With --positions: a shuffled run of the same model, for answer agreement.
    #[arg(long, value_name = "RESULTS")]
    pub shuffled: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw EM and F1 per task with intervals (and, with --positions, the chosen rate
    /// by option position) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Loads the results (and `--items`, `--shuffled`) and scores them.
pub fn compute(a: &Args) -> anyhow::Result<ScoreReport> {
    let settings = a.boot.settings()?;
    if a.shuffled.is_some() && !a.positions {
        return Err(UsageError("--shuffled needs --positions".into()).into());
    }
    let (items, clusters) = a.boot.load_items()?;
    let results = load_results(&a.results, items.as_ref())?;
    let rows = scored_items(
        &results,
        settings.failures,
        &a.results.display().to_string(),
    )?;
    let report = a.boot.with_engine(rows, |engine, progress| {
        let shuffled = match &a.shuffled {
            Some(p) => Some(load_results(p, items.as_ref())?),
            None => None,
        };
        Ok(score_results_clustered(
            &results,
            a.positions,
            shuffled.as_deref(),
            &settings,
            clusters.as_ref(),
            engine,
            progress,
        )?)
    })?;
    Ok(ScoreReport {
        source: a.results.display().to_string(),
        ..report
    })
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.print(a.plot.as_deref(), a.format)
}

/// What `stats mcq score` prints for `a` (and the figure `--plot` asks for).
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let figure = match &a.plot {
        Some(_) => Some(Figure::new(figure(a, &out)?, &[&a.results])),
        None => None,
    };
    let inputs = ragstats_core::document::Inputs::new()
        .with("results", a.results.display())
        .with_opt("shuffled", a.shuffled.as_ref().map(|p| p.display()));
    Ok(crate::cmd::render::finished("mcq score", inputs, out).with_figure(figure))
}

/// The figure `--plot` draws (and `stats report` shows): EM and F1 per level with their
/// intervals, and the option positions when scored.
pub fn figure(a: &Args, r: &ScoreReport) -> anyhow::Result<String> {
    Ok(ragstats_plot::mcq_score(
        &r.scores,
        r.positions.as_deref(),
        &mcq_caption(&a.results, &r.model, &r.prompt, &a.boot),
    )?)
}

/// The caption of an MCQ figure: the results file, its model and prompt, and the bootstrap.
pub(super) fn mcq_caption(
    file: &std::path::Path,
    model: &str,
    prompt: &str,
    boot: &BootArgs,
) -> ragstats_plot::Caption {
    ragstats_plot::Caption {
        panel: file.display().to_string(),
        outcome: format!("{model}, {prompt}"),
        bootstrap: Some((boot.resample.seed, u64::from(boot.resample.replicates))),
    }
}
