//! `stats subsets`: the measured SE of every trajectory × read subset of a depth panel,
//! configuration means beside the audit's nested and Q-only forecasts, the forecasts' MAEs
//! and a bootstrap interval for the MAE advantage (the analysis:
//! [`ragstats_core::allocation::subsets::analyse_subsets`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::allocation::subsets::SubsetAnalysis;
use ragstats_core::analyses::{subsets, Draw, SubsetsSettings};
use ragstats_core::panel::Source;

use super::common::{Format, PanelOptions};
use super::render::Finished;
use super::resample::{with_bars, ResampleArgs};

/// Flags of `stats subsets`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Depth panel (CSV or JSONL, one row per read): every trajectory and read subset is evaluated.
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    /// Audit the forecasts come from: a panel (read with the same --metric/--contrast/--arm)
    /// or a components file written by `stats variance --format json`.
    #[arg(long, value_name = "FILE")]
    pub audit: PathBuf,
    /// Configurations with fewer trajectories t′ are shown but left out of the MAEs.
    #[arg(long, default_value_t = 1)]
    pub min_trajectories: usize,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// List every subset's measured SE (table and CSV: instead of the configurations; JSON: in addition).
    #[arg(long)]
    pub per_subset: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the configurations' SE against t′ as SVG: measured with intervals, nested
    /// and Q-only forecasts.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> SubsetsSettings {
    SubsetsSettings {
        panel: args.opts.settings(),
        resample: args.resample.settings(),
        min_trajectories: args.min_trajectories,
        per_subset: args.per_subset,
    }
}

/// What `stats subsets` prints for `args` (and the figure `--plot` asks for): the library's
/// [`subsets`] of PANEL (and the logs read with it) against `--audit`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let draw = |analysis: &SubsetAnalysis| {
        let r = &analysis.report;
        let caption = super::figure::panel_caption(
            &args.panel,
            &analysis.outcome,
            Some((r.seed, u64::from(r.range[1] - r.range[0]))),
        );
        ragstats_plot::subsets(r, &caption)
    };
    let draw: Draw<'_, SubsetAnalysis> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let done = with_bars(|progress| {
        subsets(
            &Source::files(&args.panel, &args.more),
            &Source::file(&args.audit),
            &settings(args),
            &ragstats_gpu::Engines,
            progress,
            draw,
        )
    });
    Ok(done?)
}
