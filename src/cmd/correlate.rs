//! `stats correlate`: Pearson, Spearman, point-biserial or Kendall correlations of every
//! x × y column pair, with p-values, Fisher-z and bootstrap intervals and permutation tests
//! (the analysis: [`ragstats_core::correlate::all_pairs::correlate`]).

mod args;

use crate::cmd::render::Emit as _;
use std::sync::atomic::{AtomicBool, Ordering};

use ragstats_core::correlate::all_pairs::{
    correlate, CorrelateReport, CorrelateSettings, CorrelateStage,
};
use ragstats_core::correlate::analysis::{bootstrap_calls, is_rank};
use ragstats_core::correlate::permute::PermuteBackend;
use ragstats_core::correlate::{load, prepare, LoadSpec, Method};

pub use args::{Args, MethodArg, MissingArg};

use super::render::{Figure, Finished};
use super::resample::{BackendArg, Progress};
use super::UsageError;

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// What `stats correlate` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let out = compute(args)?;
    let figure = match &args.plot {
        Some(_) => Some(Figure::new(figure(args, &out)?, &[&args.file])),
        None => None,
    };
    let inputs = ragstats_core::document::Inputs::new().with("table", args.file.display());
    Ok(crate::cmd::render::finished("correlate", inputs, out).with_figure(figure))
}

/// The figure `--plot` draws (and `stats report` shows): the heatmap of r with p-values.
pub fn figure(args: &Args, r: &CorrelateReport) -> anyhow::Result<String> {
    let caption = ragstats_plot::Caption {
        panel: args.file.display().to_string(),
        outcome: String::new(),
        bootstrap: (args.resample.replicates > 0)
            .then(|| (args.resample.seed, u64::from(args.resample.replicates))),
    };
    Ok(ragstats_plot::correlate(
        &r.pairs,
        &r.matrix.x,
        &r.matrix.y,
        r.method,
        &caption,
    )?)
}

/// Loads the columns, chooses the bootstrap engine and the permutation backend, and
/// correlates every pair.
pub fn compute(args: &Args) -> anyhow::Result<CorrelateReport> {
    let method = Method::from(args.method);
    if args.resample.replicates == 1 {
        return Err(
            UsageError("--replicates must be 0 (no bootstrap) or at least 2".into()).into(),
        );
    }
    if args.permutations > 0 && args.cluster.is_some() {
        return Err(UsageError(
            "--permutations with --cluster: rows of one cluster are not exchangeable; \
             use --aggregate-by to correlate cluster means instead"
                .into(),
        )
        .into());
    }
    let data = load(
        &args.file,
        &LoadSpec {
            x: args.x.clone(),
            y: args.y.clone(),
            cluster: args.cluster.clone(),
            aggregate_by: args.aggregate_by.clone(),
            missing: args.missing.into(),
        },
    )?;
    if data.dropped > 0 {
        eprintln!(
            "note: dropped {} of {} rows with missing values",
            data.dropped, data.rows_read
        );
    }
    let prep = prepare(&data, method)?;
    let clusters = data.clusters.as_ref().map(|(_, names)| names.len());
    let reps = u64::from(args.resample.replicates);
    let calls = bootstrap_calls(&prep, clusters.is_some()) as u64;
    // No engine is started for a cluster bootstrap the core refuses (fewer than 2 clusters),
    // nor for the rank methods, whose bootstrap re-ranks every resample on the CPU.
    let engine = (reps > 0 && clusters.is_none_or(|c| c >= 2) && !is_rank(method))
        .then(|| {
            let units = clusters.map_or(data.n() as u64, |c| c as u64);
            args.resample.engine(calls * reps * units)
        })
        .transpose()?;
    // Kendall's S is not a sum: its permutations run on the CPU, so no GPU is started.
    let gpu = if args.permutations > 0 && method != Method::Kendall {
        ragstats_gpu::select_permute(args.resample.backend.into())?
    } else {
        None
    };
    let settings = CorrelateSettings {
        // 0 replicates is allowed here (no bootstrap), so the count is not checked.
        resampling: args.resample.resampling_of(args.resample.replicates),
        permutations: args.permutations,
        gpu_requested: args.resample.backend == BackendArg::Gpu,
    };
    let boot = Progress::new(calls * reps, "bootstrap");
    let perm = Progress::new(u64::from(args.permutations), "permutations");
    let boot_done = AtomicBool::new(false);
    let progress = |stage: CorrelateStage, d: u64| match stage {
        CorrelateStage::Bootstrap => boot.set(d),
        CorrelateStage::Permutations => {
            // One bar at a time: the bootstrap's goes when the permutations start.
            if !boot_done.swap(true, Ordering::Relaxed) {
                boot.finish();
            }
            perm.set(d);
        }
    };
    let report = correlate(
        &data,
        &prep,
        &settings,
        engine.as_deref(),
        gpu.as_ref().map(|g| g as &dyn PermuteBackend),
        &progress,
    )?;
    boot.finish();
    perm.finish();
    Ok(report)
}
