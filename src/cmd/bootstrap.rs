//! `stats bootstrap`: the stratified question bootstrap of the equal-weight estimate, on
//! the CPU or GPU resample engine, with optional component refits and forecast intervals
//! (the analysis: [`ragstats_core::analyses::bootstrap`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{bootstrap, BootstrapSettings, ReplicateRange};
use ragstats_core::panel::Source;
use ragstats_core::resample::summary::Method;

use super::common::{By, Format, PanelOptions};
use super::render::Finished;
use super::resample::{with_bars, ResampleArgs};

/// Flags of `stats bootstrap`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Report each selector of the panel's `selector` column, then their average.
    #[arg(long, value_enum, value_name = "selector")]
    pub by: Option<By>,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Compute only replicates A..B of the run (for sharding; merge the shards with `stats merge`).
    #[arg(long, value_name = "A..B")]
    pub replicates_range: Option<ReplicateRange>,
    /// Interval method.
    #[arg(long, value_enum, default_value_t = MethodArg::Percentile)]
    pub method: MethodArg,
    /// Also refit per-stratum and pooled variance components in every replicate (with --cluster, balanced panels: the four levels, cluster > question > trajectory > read, on the drawn clusters).
    #[arg(long)]
    pub components: bool,
    /// With --components: the forecast nested SE of this design (Q:T:R; with --cluster also GxM:T:R, G clusters of M questions) in every replicate. Repeatable.
    #[arg(long = "design", value_name = "Q:T:R")]
    pub designs: Vec<String>,
    /// Forecast designs from the pooled components instead of each stratum's.
    #[arg(long)]
    pub pooled: bool,
    /// Write every replicate's statistics to FILE (merge shards with `stats merge`).
    #[arg(long, value_name = "FILE", conflicts_with = "by")]
    pub replicates_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub labels: super::common::LabelOptions,
}

flag_enum! {
    /// `--method`.
    pub enum MethodArg => Method {
        /// [q(α/2), q(1−α/2)] of the replicates (linear, type-7 quantiles).
        Percentile,
        /// [2θ̂ − q(1−α/2), 2θ̂ − q(α/2)].
        Basic,
        /// Bias-corrected and accelerated (Efron 1987), acceleration from the stratified jackknife.
        Bca,
    }
}

/// Runs `stats bootstrap` (once per selector with `--by selector`) and prints the result.
pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> BootstrapSettings {
    BootstrapSettings {
        panel: args.opts.settings(),
        by: args
            .by
            .map(|By::Selector| ragstats_core::import::By::Selector),
        resample: args.resample.settings(),
        replicates_range: args.replicates_range.clone(),
        method: args.method.into(),
        components: args.components,
        design: args.designs.clone(),
        pooled: args.pooled,
        replicates_out: args.replicates_out.clone(),
        judged: args.labels.settings(),
    }
}

/// What `stats bootstrap` prints for `args`: the library's [`bootstrap`] of PANEL (and the
/// logs read with it).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let labels = args.labels.labels.as_ref().map(Source::file);
    let done = with_bars(|progress| {
        bootstrap(
            &Source::files(&args.panel, &args.more),
            labels.as_ref(),
            &settings(args),
            &ragstats_gpu::Engines,
            progress,
        )
    });
    Ok(done?)
}
