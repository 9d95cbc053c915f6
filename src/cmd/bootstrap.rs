//! `stats bootstrap`: the stratified question bootstrap of the equal-weight estimate, on
//! the CPU or GPU resample engine, with optional component refits and forecast intervals.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::bootstrap::analysis::{prepare, BootstrapJob, BootstrapRun};
use ragstats_core::bootstrap::stratified::BootstrapSpec;
use ragstats_core::resample::summary::Method;

use super::common::{By, Format, PanelOptions};
use super::render::sections_by_selector;
use super::render::Finished;
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

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
    /// Also refit per-stratum and pooled variance components in every replicate.
    #[arg(long)]
    pub components: bool,
    /// With --components: the forecast nested SE of this design (Q:T:R) in every replicate. Repeatable.
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
}

/// `--replicates-range A..B`: replicates A to B−1 of the run (0 ≤ A < B).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicateRange(std::ops::Range<u32>);

impl std::str::FromStr for ReplicateRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || "expected A..B with integers 0 <= A < B".to_string();
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let (a, b): (u32, u32) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a >= b {
            return Err(bad());
        }
        let max = super::resample::MAX_REPLICATES;
        if b - a > max {
            return Err(format!(
                "{} replicates in one run; at most {max} are allowed (split the range)",
                b - a
            ));
        }
        Ok(ReplicateRange(a..b))
    }
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

/// What `stats bootstrap` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    if args.by == Some(By::Selector) {
        let sections = sections_by_selector(&args.panel, &args.opts, |opts| {
            Ok(Box::new(compute(&Args {
                opts,
                by: None,
                ..args.clone()
            })?))
        })?;
        return Ok(crate::cmd::render::finished(
            "bootstrap",
            inputs(args),
            sections,
        ));
    }
    let out = compute(args)?;
    let notes = out.report.notes.clone();
    Ok(crate::cmd::render::finished("bootstrap", inputs(args), out)
        .with_notes_for_csv(args.format == crate::cmd::common::Format::Csv, &notes))
}

/// The envelope's inputs of `stats bootstrap`.
fn inputs(args: &Args) -> ragstats_core::document::Inputs {
    super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    )
}

/// Checks the flags, loads the panel, runs the bootstrap on the engine the flags choose
/// (and writes `--replicates-out`).
pub fn compute(args: &Args) -> anyhow::Result<BootstrapRun> {
    if !args.designs.is_empty() && !args.components {
        return Err(UsageError(
            "--design needs --components (forecasts are refitted from the components)".into(),
        )
        .into());
    }
    let replicates = match &args.replicates_range {
        Some(r) => r.0.clone(),
        None => 0..args.resample.replicates()?,
    };
    if let Some(out) = &args.replicates_out {
        ragstats_core::io::refuse_overwriting_inputs(
            &[("--replicates-out", out)],
            &[("panel", &args.panel)],
        )?;
    }
    let settings = BootstrapJob {
        spec: BootstrapSpec {
            components: args.components,
            designs: args.designs.clone(),
            pooled_forecast: args.pooled,
        },
        seed: args.resample.seed,
        replicates,
        method: Method::from(args.method),
        confidence: args.resample.confidence.get(),
    };
    // Unbalanced strata are kept nested: the components of every replicate are refitted by
    // REML on its drawn questions.
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    // Prepared first: the designs are checked before an engine is started, and `auto`
    // weighs the job's size.
    let boot = prepare(&panel, &settings)?;
    let engine = args.resample.engine(boot.draws())?;
    let progress = Progress::new(settings.replicates.len() as u64, "bootstrap");
    let run = boot.run(engine.as_ref(), &|d| progress.set(d))?;
    progress.finish();
    if let Some(path) = &args.replicates_out {
        run.replicates.write(path)?;
    }
    Ok(run)
}
