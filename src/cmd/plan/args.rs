//! The flags of `stats plan` (the settings they stand for, and their checks, are
//! [`ragstats_core::analyses::PlanSettings`]).

use std::path::PathBuf;

use ragstats_core::analyses::SearchBounds;

use super::super::common::{Format, PanelOptions};
use super::super::efficiency::CurrencyArg;
use super::super::resample::ResampleArgs;

/// Flags of `stats plan`.
#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("goal")
        .required(true)
        .args(["target_se", "mde", "budget_tokens", "budget_usd", "questions"])
))]
pub struct Args {
    /// Audit panel the components (and, with --ledger, the unit costs) are estimated from.
    /// Several evaluation logs are read as one audit (`--audit logs/*.eval`).
    #[arg(
        long,
        value_name = "PANEL",
        required_unless_present = "components",
        conflicts_with = "components",
        num_args = 1..
    )]
    pub audit: Vec<PathBuf>,
    /// Components file written by `stats variance --format json`, instead of --audit (no
    /// bootstrap; unit costs from --unit-costs).
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Cost ledger of the audit panel (JSONL): unit costs c_T and c_R per stratum as
    /// `stats efficiency` computes them.
    #[arg(long, value_name = "FILE", conflicts_with = "unit_costs")]
    pub ledger: Option<PathBuf>,
    /// Unit costs C_T,C_R (one trajectory without its reads, one read) for every stratum,
    /// or C_T,C_R1,C_R+ (a trajectory's first read, each later read), instead of --ledger.
    #[arg(long, value_name = "C_T,C_R")]
    pub unit_costs: Option<String>,
    /// Cost per question in the plan's currency (judging, annotation, set-up), added to
    /// every question whatever its T and R.
    #[arg(long, value_name = "COST", default_value_t = 0.0, value_parser = super::super::cost::price_flag)]
    pub question_cost: f64,
    /// With an audit read with --cluster: the cost of one cluster itself in the plan's
    /// currency (retrieving and reading its passage), paid once however many of its
    /// questions are asked; the plan is then the cheapest G×M:T:R design.
    #[arg(long, value_name = "COST", value_parser = super::super::cost::price_flag)]
    pub cluster_cost: Option<f64>,
    /// Human labels of some of the judged audit's questions (with --label-metric and
    /// --ppi-lambda as `variance --labels` takes them): with --label-cost the plan is the
    /// cheapest labels n and Q:T:R for the PPI++ estimate's target SE or MDE.
    #[command(flatten)]
    pub labels: super::super::common::LabelOptions,
    /// With --labels: the cost of one label (one labelled question's human score) in the
    /// plan's currency.
    #[arg(long, value_name = "COST", requires = "labels", value_parser = super::super::cost::price_flag)]
    pub label_cost: Option<f64>,
    /// With --labels: the fewest labels the plan gives a stratum (at least 2; below 40 the
    /// PPI++ interval's coverage falls short, docs/COVERAGE.md).
    #[arg(long, value_name = "N", default_value_t = 40, requires = "labels")]
    pub min_labels: usize,
    /// With --cluster: the most questions per cluster the search tries.
    #[arg(long, value_name = "M", default_value_t = 20)]
    pub max_per_cluster: usize,
    /// Prices (TOML); needed for dollars with --ledger.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// What costs are counted in (--budget-usd implies usd, --budget-tokens tokens).
    #[arg(long, value_enum)]
    pub currency: Option<CurrencyArg>,
    /// Search price in USD per 1,000 requests for dollars (default: the prices file's).
    #[arg(long, value_name = "USD", value_parser = super::super::cost::price_flag)]
    pub search_price: Option<f64>,
    /// Goal: the cheapest allocation whose SE is at most this.
    #[arg(long, value_name = "SE")]
    pub target_se: Option<f64>,
    /// Goal: the cheapest allocation whose minimum detectable difference
    /// (z_{1-α/2} + z_power)·SE is at most this.
    #[arg(long, value_name = "D")]
    pub mde: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many model tokens.
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many dollars.
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Given design: total questions (split as --shares), with --trajectories and --reads.
    #[arg(long, value_name = "Q", requires_all = ["trajectories", "reads"], value_parser = clap::value_parser!(u64).range(1..))]
    pub questions: Option<u64>,
    /// Given design: trajectories per question.
    #[arg(long, value_name = "T", requires = "questions", value_parser = clap::value_parser!(u64).range(1..))]
    pub trajectories: Option<u64>,
    /// Given design: reads per trajectory.
    #[arg(long, value_name = "R", requires = "questions", value_parser = clap::value_parser!(u64).range(1..))]
    pub reads: Option<u64>,
    /// A true difference to compute each allocation's power against.
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub difference: Option<f64>,
    /// Two-sided significance level.
    #[arg(
        long,
        default_value = "0.05",
        value_name = "ALPHA",
        allow_negative_numbers = true
    )]
    pub alpha: f64,
    /// Power the MDE is defined at.
    #[arg(
        long,
        default_value = "0.8",
        value_name = "P",
        allow_negative_numbers = true
    )]
    pub power: f64,
    /// Question shares name=W,name=W (integer weights; default: the audit's question counts).
    #[arg(long, value_name = "NAME=W,...")]
    pub shares: Option<String>,
    #[command(flatten)]
    pub bounds: BoundsArgs,
    /// Runner-up allocations shown after the best.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub runners_up: usize,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The bounds of the least-cost search over Q:T:R (`stats plan`, and `stats compare
/// --ledger`'s next step).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct BoundsArgs {
    /// Largest total Q searched.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_questions: u64,
    /// Largest T searched.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_trajectories: u64,
    /// Largest R searched.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_reads: u64,
}

impl Default for BoundsArgs {
    fn default() -> Self {
        BoundsArgs {
            max_questions: 100_000,
            max_trajectories: 10,
            max_reads: 10,
        }
    }
}

impl BoundsArgs {
    /// The library's bounds for these flags.
    pub fn settings(&self) -> SearchBounds {
        SearchBounds {
            max_questions: self.max_questions,
            max_trajectories: self.max_trajectories,
            max_reads: self.max_reads,
        }
    }

    /// The search's bounds.
    ///
    /// # Errors
    /// A bound that does not fit this machine's `usize`.
    pub fn bounds(&self) -> ragstats_core::Result<ragstats_core::allocation::planner::Bounds> {
        self.settings().bounds()
    }
}
