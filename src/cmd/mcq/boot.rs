//! What `stats mcq score` and `stats mcq compare` share: the bootstrap flags and the
//! library settings they give ([`ragstats_core::analyses::McqBootSettings`]).

use std::path::PathBuf;

use ragstats_core::mcq::cluster::ClusterBy;
use ragstats_core::mcq::score::FailurePolicy;

use crate::cmd::resample::ResampleArgs;

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
