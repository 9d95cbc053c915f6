//! `stats correlate`: Pearson, Spearman, point-biserial or Kendall correlations of every
//! x × y column pair, with p-values, Fisher-z and bootstrap intervals and permutation tests
//! (the analysis: [`ragstats_core::analyses::correlate`]).

mod args;

use crate::cmd::render::Emit as _;

use ragstats_core::analyses::{correlate, CorrelateSettings, Draw};
use ragstats_core::correlate::all_pairs::CorrelateReport;
use ragstats_core::panel::Source;

pub use args::{Args, MethodArg, MissingArg};

use super::render::Finished;
use super::resample::with_bars;

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> CorrelateSettings {
    CorrelateSettings {
        x: args.x.clone(),
        y: args.y.clone(),
        method: args.method.into(),
        cluster: args.cluster.clone(),
        aggregate_by: args.aggregate_by.clone(),
        missing: args.missing.into(),
        permutations: args.permutations,
        resample: args.resample.settings(),
    }
}

/// What `stats correlate` prints for `args` (and the figure `--plot` asks for): the
/// library's [`correlate`] of FILE.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let table = Source::file(&args.file);
    let s = settings(args);
    let draw = |r: &CorrelateReport| figure(&table, &s, r);
    let draw: Draw<'_, CorrelateReport> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let done = with_bars(|progress| correlate(&table, &s, &ragstats_gpu::Engines, progress, draw));
    Ok(done?)
}

/// The figure of `stats correlate --plot`: the correlation matrix with its intervals.
pub fn figure(
    table: &Source,
    s: &CorrelateSettings,
    r: &CorrelateReport,
) -> ragstats_core::Result<String> {
    let caption = ragstats_plot::Caption::for_correlate(&table.name().display().to_string(), s);
    ragstats_plot::correlate(&r.pairs, &r.matrix.x, &r.matrix.y, r.method, &caption)
}
