//! `stats mcq score`: EM and F1 per group, task and overall with run SDs and
//! stratified-bootstrap intervals, failure rates, positional bias. The analysis is
//! [`ragstats_core::mcq::score::score_results`]; its view is the library's
//! (`ragstats_core::mcq::view`).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{mcq_score, Draw, McqScoreSettings};
use ragstats_core::mcq::score::ScoreReport;
use ragstats_core::panel::Source;

use super::boot::BootArgs;
use crate::cmd::common::Format;
use crate::cmd::render::Finished;
use crate::cmd::resample::with_bars;

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

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.print(a.plot.as_deref(), a.format)
}

/// The library's settings for `a`.
pub fn settings(a: &Args) -> McqScoreSettings {
    McqScoreSettings {
        boot: a.boot.settings_of(),
        positions: a.positions,
    }
}

/// The items and shuffled results `a` names.
fn inputs(a: &Args) -> (Option<Source>, Option<Source>) {
    (
        a.boot.items.as_ref().map(Source::file),
        a.shuffled.as_ref().map(Source::file),
    )
}

/// What `stats mcq score` prints for `a` (and the figure `--plot` asks for): the library's
/// [`mcq_score`].
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let draw = |r: &ScoreReport| figure(a, r);
    let draw: Draw<'_, ScoreReport> = match a.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let (items, shuffled) = inputs(a);
    Ok(with_bars(|progress| {
        mcq_score(
            &Source::file(&a.results),
            items.as_ref(),
            shuffled.as_ref(),
            &settings(a),
            &ragstats_gpu::Engines,
            progress,
            draw,
        )
    })?)
}

/// The figure `--plot` draws (and `stats report` shows): EM and F1 per level with their
/// intervals, and the option positions when scored.
pub fn figure(a: &Args, r: &ScoreReport) -> ragstats_core::Result<String> {
    ragstats_plot::mcq_score(
        &r.scores,
        r.positions.as_deref(),
        &ragstats_plot::Caption::for_mcq(
            a.results.display().to_string(),
            format!("{}, {}", r.model, r.prompt),
            &a.boot.settings_of(),
        ),
    )
}
