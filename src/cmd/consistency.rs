//! `stats consistency`: answer disagreement across repeated reads by group, and the ratio
//! of one-read SEs between two groups (the analysis:
//! [`ragstats_core::analyses::consistency`]).

use crate::cmd::render::Emit as _;
use std::path::{Path, PathBuf};

use ragstats_core::analyses::{consistency, ConsistencySettings, Draw};
use ragstats_core::components::consistency::ConsistencyReport;
use ragstats_core::import::PanelSettings;
use ragstats_core::panel::Source;

use super::common::{Format, PanelOptions};
use super::render::Finished;
use super::resample::{with_bars, ResampleArgs};

/// Flags of `stats consistency`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Reads with fixed packets (CSV or JSONL): dataset, question, trajectory, read, answer,
    /// the grouping column, and optionally arm and a score column.
    pub reads: PathBuf,
    /// Grouping column (e.g. temperature).
    #[arg(long, value_name = "COLUMN")]
    pub by: String,
    /// Column holding the answer text.
    #[arg(long, value_name = "COLUMN", default_value = "answer")]
    pub answer_column: String,
    /// The two groups whose one-read SEs to compare, as A,B (default: the first two in file order).
    #[arg(long, value_name = "A,B")]
    pub compare: Option<String>,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the disagreement rate and one-read SE by group and the SE ratio with its
    /// interval as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> ConsistencySettings {
    ConsistencySettings {
        by: args.by.clone(),
        answer_column: args.answer_column.clone(),
        compare: args.compare.clone(),
        panel: args.opts.settings(),
        resample: args.resample.settings(),
    }
}

/// What `stats consistency` prints for `args` (and the figure `--plot` asks for): the
/// library's [`consistency`] of READS.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let settings = settings(args);
    let draw = |r: &ConsistencyReport| figure(&args.reads, &settings.panel, r);
    let draw: Draw<'_, ConsistencyReport> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let done = with_bars(|progress| {
        consistency(
            &Source::file(&args.reads),
            &settings,
            &ragstats_gpu::Engines,
            progress,
            draw,
        )
    });
    Ok(done?)
}

/// The figure `--plot` draws (and `stats report` shows) of the reads file `reads` read with
/// `panel`: disagreement and one-read SE per group, and the SE ratio.
pub fn figure(
    reads: &Path,
    panel: &PanelSettings,
    r: &ConsistencyReport,
) -> ragstats_core::Result<String> {
    let caption = ragstats_plot::Caption::for_panel(
        &reads.display().to_string(),
        panel,
        Some((r.seed, u64::from(r.replicates))),
    );
    ragstats_plot::consistency(&r.disagreement, &r.precision, r.se_ratio.as_ref(), &caption)
}
