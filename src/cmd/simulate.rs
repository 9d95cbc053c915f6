//! `stats simulate`: write a synthetic panel (and optionally its cost ledger) with known
//! structure. The model is documented in `ragstats_core::sim::model` and docs/simulate.md;
//! the analysis is [`ragstats_core::analyses::simulate`].

use std::path::PathBuf;

use ragstats_core::analyses::{simulate, Means, SimulateSettings, Strata};

use super::common::Format;
use super::render::{Emit as _, Finished};

/// Flags of this command.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file to write: JSONL when the name ends in .jsonl or .ndjson, CSV otherwise.
    #[arg(long)]
    pub out: PathBuf,
    /// Datasets (strata) and questions per dataset, `name=Q,...`, or one number for a single
    /// stratum named `all`.
    #[arg(long, default_value = "hotpotqa=223,musique=223")]
    pub datasets: Strata,
    /// Trajectories per question and arm (T).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub trajectories: u32,
    /// Reads per trajectory (R).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub reads: u32,
    /// Arm names, baseline first; every later arm differs from the baseline by the contrast.
    #[arg(long, value_delimiter = ',', default_value = "open,adaptive")]
    pub arms: Vec<String>,
    /// Model parameters (means and SDs).
    #[command(flatten)]
    pub model_params: Box<ModelArgs>,
    /// Seed of every random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Name of the bounded score column.
    #[arg(long, default_value = "f1")]
    pub metric_name: String,
    /// Also write the matching cost ledger (JSONL) here.
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Model name on the ledger's planner and reader rows.
    #[arg(long, default_value = "deepseek-v4.1-flash")]
    pub model: String,
    /// Planner calls (and search requests) per trajectory and arm in the ledger.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub planner_calls: u32,
    /// Write the Gaussian nested panel y = μ + a_q + b_qt + e_qtr instead (one arm named
    /// `single`, no clamping; true components are exactly sigma_q², sigma_t², sigma_r²).
    /// Uses --mean (one number), --sigma-q/-t/-r; no ledger.
    #[arg(long)]
    pub gaussian: bool,
}

/// The model's means and standard deviations (boxed: they are many and the enum of
/// commands stays small).
#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// Latent mean of the baseline arm: one number, or `name=value,...` per dataset.
    #[arg(long, default_value = "0.45")]
    pub mean: Means,
    /// Latent mean contrast (later arm − baseline).
    #[arg(long, default_value_t = 0.02, allow_negative_numbers = true)]
    pub effect: f64,
    /// SD of the question effect shared by the arms (latent scale).
    #[arg(long, default_value_t = 0.55, allow_negative_numbers = true)]
    pub sigma_q: f64,
    /// SD of the trajectory effect shared by the arms.
    #[arg(long, default_value_t = 0.15, allow_negative_numbers = true)]
    pub sigma_t: f64,
    /// SD of the read effect shared by the arms.
    #[arg(long, default_value_t = 0.15, allow_negative_numbers = true)]
    pub sigma_r: f64,
    /// SD of the contrast's own question effect.
    #[arg(long, default_value_t = 0.30, allow_negative_numbers = true)]
    pub contrast_sigma_q: f64,
    /// SD of the contrast's own trajectory effect.
    #[arg(long, default_value_t = 0.15, allow_negative_numbers = true)]
    pub contrast_sigma_t: f64,
    /// SD of the contrast's own read effect.
    #[arg(long, default_value_t = 0.18, allow_negative_numbers = true)]
    pub contrast_sigma_r: f64,
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> SimulateSettings {
    let m = &*args.model_params;
    SimulateSettings {
        out: args.out.clone(),
        datasets: args.datasets.clone(),
        trajectories: args.trajectories,
        reads: args.reads,
        arms: args.arms.clone(),
        mean: m.mean.clone(),
        effect: m.effect,
        sigma_q: m.sigma_q,
        sigma_t: m.sigma_t,
        sigma_r: m.sigma_r,
        contrast_sigma_q: m.contrast_sigma_q,
        contrast_sigma_t: m.contrast_sigma_t,
        contrast_sigma_r: m.contrast_sigma_r,
        seed: args.seed,
        metric_name: args.metric_name.clone(),
        ledger: args.ledger.clone(),
        model: args.model.clone(),
        planner_calls: args.planner_calls,
        gaussian: args.gaussian,
    }
}

/// Runs the command: the library's [`simulate`] writes the ledger, then the panel, and the
/// command says what it wrote (a panel that then fails to write is an error after the
/// ledger's line).
pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(Format::Table)
}

/// What `stats simulate` wrote, as a value.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    Ok(simulate(&settings(args))?)
}
