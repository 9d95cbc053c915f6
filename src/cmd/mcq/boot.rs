//! What `stats mcq score` and `stats mcq compare` share: the bootstrap flags and the
//! settings they give, reading result files, the engine and progress bar of the stratified
//! item bootstrap, and interval cells.

use std::path::{Path, PathBuf};

use ragstats_core::mcq::cluster::{item_clusters, ClusterBy, Clusters};
use ragstats_core::mcq::results::{read_one_configuration, RunResult};
use ragstats_core::mcq::score::{BootSettings, FailurePolicy};
use ragstats_core::mcq::validate::load_items_lines;
use ragstats_core::mcq::Item;
use ragstats_core::resample::ResampleBackend;

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
    /// Items JSONL whose gold answers and groups replace those in the results; its
    /// `meta.provenance` makes items of one source a cluster (--cluster-by).
    #[arg(long)]
    pub items: Option<PathBuf>,
    /// With --items: the items resampled (and tested) together. auto: by source question
    /// when any item carries provenance; question: same `question_id`; trajectory: same
    /// run, question, arm and trajectory; none: item by item. Items without provenance are
    /// their own cluster.
    #[arg(long, value_enum, default_value_t = ClusterByArg::Auto)]
    pub cluster_by: ClusterByArg,
}

impl BootArgs {
    /// The failure policy as the library names it.
    pub fn failures(&self) -> FailurePolicy {
        self.failures.into()
    }

    /// The library's settings of these flags (refusing a bad `--replicates`).
    /// The library's bootstrap settings for these flags (checked by the analysis).
    pub fn settings_of(&self) -> ragstats_core::analyses::McqBootSettings {
        ragstats_core::analyses::McqBootSettings {
            resample: self.resample.settings(),
            failures: self.failures(),
            cluster_by: self.cluster_by.into(),
        }
    }

    pub fn settings(&self) -> anyhow::Result<BootSettings> {
        Ok(BootSettings {
            failures: self.failures(),
            resampling: self.resample.resampling()?,
        })
    }

    /// The items of `--items` (with their path) and their clusters under `--cluster-by`:
    /// no clusters without `--items` (an explicit `question` or `trajectory` then is a usage
    /// error: the results files carry no provenance), with `none`, or with `auto` when no
    /// item carries provenance.
    pub fn load_items(&self) -> anyhow::Result<ItemsAndClusters> {
        let Some(p) = &self.items else {
            if matches!(
                self.cluster_by,
                ClusterByArg::Question | ClusterByArg::Trajectory
            ) {
                return Err(UsageError(
                    "--cluster-by needs --items: the results files carry no provenance; the items file's meta.provenance does"
                        .into(),
                )
                .into());
            }
            return Ok((None, None));
        };
        let loaded = load_items_lines(p)?;
        let clusters = item_clusters(p, &loaded, self.cluster_by.into())?;
        Ok((
            Some((p.clone(), loaded.into_iter().map(|l| l.item).collect())),
            clusters,
        ))
    }

    /// Runs `analysis` on the engine for a bootstrap of `rows` items, with a progress bar.
    pub fn with_engine<T>(
        &self,
        rows: usize,
        analysis: impl FnOnce(&dyn ResampleBackend, &(dyn Fn(u64) + Sync)) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let r = &self.resample;
        let replicates = r.replicates()?;
        let engine = r.engine(u64::from(replicates) * rows as u64)?;
        let progress = Progress::new(u64::from(replicates), "bootstrap");
        let out = analysis(engine.as_ref(), &|d| progress.set(d))?;
        progress.finish();
        Ok(out)
    }
}

flag_enum! {
    /// `--cluster-by`.
    pub enum ClusterByArg => ClusterBy {
        /// By question when any item carries provenance, else item by item.
        Auto,
        /// Items of one source question.
        Question,
        /// Items of one trajectory.
        Trajectory,
        /// Item by item.
        None,
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

/// Reads a results file, requiring one (model, prompt, shuffle seed), applying --items.
pub fn load_results(
    path: &Path,
    items: Option<&(PathBuf, Vec<Item>)>,
) -> anyhow::Result<Vec<RunResult>> {
    Ok(read_one_configuration(
        path,
        items.map(|(p, its)| (p.as_path(), its.as_slice())),
    )?)
}

/// The items of `--items` with their path, and their clusters ([`BootArgs::load_items`]).
pub type ItemsAndClusters = (Option<(PathBuf, Vec<Item>)>, Option<Clusters>);
