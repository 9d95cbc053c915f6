//! What `stats mcq score` and `stats mcq compare` share: the bootstrap flags, reading
//! result files, the stratified item bootstrap, and interval cells.

use std::path::{Path, PathBuf};

use ragstats_core::mcq::results::{apply_items, read_results, RunResult};
use ragstats_core::mcq::score::{
    bootstrap_group_means, FailurePolicy, GroupMeans, MeanRange, Stat,
};
use ragstats_core::mcq::validate::load_items;
use ragstats_core::mcq::{Group, Item};
use ragstats_core::resample::ResampleBackend;

use crate::cmd::common::num;
use crate::cmd::resample::{Progress, ResampleArgs};
use crate::cmd::UsageError;

/// Bootstrap flags of `score` and `compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct BootArgs {
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// How parse failures and API errors score: 0 (default) or left out.
    #[arg(long, value_enum, default_value_t = FailuresArg::Zero)]
    pub failures: FailuresArg,
    /// Items JSONL whose gold answers and groups replace those in the results.
    #[arg(long)]
    pub items: Option<PathBuf>,
}

impl BootArgs {
    /// The failure policy as the library names it.
    pub fn failures(&self) -> FailurePolicy {
        self.failures.into()
    }
}

flag_enum! {
    /// `--failures`.
    pub enum FailuresArg => FailurePolicy {
        /// EM = F1 = 0.
        Zero,
        /// Left out of the averages (an item with no scored run is left out).
        Exclude,
    }
}

/// The stratified item bootstrap of per-group means (items resampled within groups) of rows
/// in `range`, and the engine that ran it.
pub fn group_bootstrap(
    rows: &[(Group, [f64; 2])],
    range: MeanRange,
    boot: &BootArgs,
) -> anyhow::Result<(Box<dyn ResampleBackend>, Vec<GroupMeans>)> {
    let r = &boot.resample;
    let replicates = r.replicates()?;
    let engine = r.engine(u64::from(replicates) * rows.len() as u64)?;
    let progress = Progress::new(u64::from(replicates), "bootstrap");
    let reps = bootstrap_group_means(rows, range, engine.as_ref(), r.seed, replicates, &|d| {
        progress.set(d)
    })?;
    progress.finish();
    Ok((engine, reps))
}

/// Reads a results file, requiring one (model, prompt, shuffle seed), applying --items.
pub fn load_results(
    path: &Path,
    items: Option<&(PathBuf, Vec<Item>)>,
) -> anyhow::Result<Vec<RunResult>> {
    let mut rs = read_results(path)?;
    let first = &rs[0];
    if let Some(r) = rs.iter().find(|r| {
        r.model != first.model || r.prompt != first.prompt || r.shuffle_seed != first.shuffle_seed
    }) {
        return Err(UsageError(format!(
            "{}: mixes runs of different configurations ({} / {} / seed {:?} and {} / {} / seed {:?}); score one model and prompt per file",
            path.display(),
            first.model,
            first.prompt,
            first.shuffle_seed,
            r.model,
            r.prompt,
            r.shuffle_seed
        ))
        .into());
    }
    if let Some((p, its)) = items {
        apply_items(&mut rs, its, p)?;
    }
    Ok(rs)
}

/// The items of `--items`, with their path, if given.
pub fn load_items_opt(p: &Option<PathBuf>) -> anyhow::Result<Option<(PathBuf, Vec<Item>)>> {
    Ok(match p {
        Some(p) => Some((p.clone(), load_items(p)?)),
        None => None,
    })
}

/// An interval cell: `[lo, hi]`.
pub fn ci(s: &Stat) -> String {
    format!("[{}, {}]", num(s.ci[0]), num(s.ci[1]))
}

/// A run mean ± SD cell (the mean alone when there is one run).
pub fn pm(s: &Stat) -> String {
    if s.run_sd.is_nan() {
        num(s.run_mean)
    } else {
        format!("{} ± {}", num(s.run_mean), num(s.run_sd))
    }
}
