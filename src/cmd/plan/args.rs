//! The flags of `stats plan` and their value parsers.

use std::path::PathBuf;
use std::str::FromStr;

use ragstats_core::allocation::efficiency::UnitCosts;
use ragstats_core::allocation::planner::mde_multiplier;
use ragstats_core::allocation::planner_report::PlanGoal;

use super::super::common::{Format, PanelOptions};
use super::super::efficiency::CurrencyArg;
use super::super::resample::ResampleArgs;
use super::super::UsageError;

/// A probability strictly between 0 and 1, refused when the flag is parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probability(f64);

impl Probability {
    /// The probability as a number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl FromStr for Probability {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p < 1.0 => Ok(Probability(p)),
            _ => Err("must be between 0 and 1 (exclusive), e.g. 0.05".into()),
        }
    }
}

/// A positive finite number (`30e6` is accepted).
fn positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("must be a positive number, e.g. 0.01 or 30e6".into()),
    }
}

/// A finite number.
fn finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err("must be a finite number, e.g. 0.02".into()),
    }
}

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
    #[arg(long, value_name = "C_T,C_R", value_parser = unit_costs_flag)]
    pub unit_costs: Option<UnitCosts>,
    /// Cost per question in the plan's currency (judging, annotation, set-up), added to
    /// every question whatever its T and R.
    #[arg(long, value_name = "COST", default_value_t = 0.0, value_parser = super::super::cost::price_flag)]
    pub question_cost: f64,
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
    #[arg(long, value_name = "SE", value_parser = positive)]
    pub target_se: Option<f64>,
    /// Goal: the cheapest allocation whose minimum detectable difference
    /// (z_{1-α/2} + z_power)·SE is at most this.
    #[arg(long, value_name = "D", value_parser = positive)]
    pub mde: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many model tokens.
    #[arg(long, value_name = "TOKENS", value_parser = positive)]
    pub budget_tokens: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many dollars.
    #[arg(long, value_name = "USD", value_parser = positive)]
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
    #[arg(long, value_name = "D", value_parser = finite, allow_negative_numbers = true)]
    pub difference: Option<f64>,
    /// Two-sided significance level.
    #[arg(
        long,
        default_value = "0.05",
        value_name = "ALPHA",
        allow_negative_numbers = true
    )]
    pub alpha: Probability,
    /// Power the MDE is defined at.
    #[arg(
        long,
        default_value = "0.8",
        value_name = "P",
        allow_negative_numbers = true
    )]
    pub power: Probability,
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

impl Args {
    /// The goal the flags ask for (the clap group makes one of them present).
    pub(super) fn goal(&self) -> anyhow::Result<PlanGoal> {
        Ok(if let Some(se) = self.target_se {
            PlanGoal::TargetSe { se, from_mde: None }
        } else if let Some(m) = self.mde {
            PlanGoal::TargetSe {
                se: m / mde_multiplier(self.alpha.get(), self.power.get()),
                from_mde: Some(m),
            }
        } else if let Some(b) = self.budget_tokens.or(self.budget_usd) {
            PlanGoal::Budget(b)
        } else {
            PlanGoal::Design {
                questions: usize::try_from(self.questions.unwrap_or(1))?,
                trajectories: usize::try_from(self.trajectories.unwrap_or(1))?,
                reads: usize::try_from(self.reads.unwrap_or(1))?,
            }
        })
    }

    /// The currency costs are counted in: a budget's own, else `--currency`, else tokens.
    pub(super) fn cost_currency(&self) -> Result<CurrencyArg, UsageError> {
        match (self.budget_tokens, self.budget_usd, self.currency) {
            (Some(_), _, Some(CurrencyArg::Usd)) => Err(UsageError(
                "--budget-tokens counts tokens, not --currency usd".into(),
            )),
            (_, Some(_), Some(CurrencyArg::Tokens)) => Err(UsageError(
                "--budget-usd counts dollars, not --currency tokens".into(),
            )),
            (Some(_), _, _) => Ok(CurrencyArg::Tokens),
            (_, Some(_), _) => Ok(CurrencyArg::Usd),
            (_, _, c) => Ok(c.unwrap_or(CurrencyArg::Tokens)),
        }
    }
}

/// `--unit-costs C_T,C_R` (two non-negative finite numbers with a positive sum), or
/// `C_T,C_R1,C_R+` (first and later reads priced apart).
fn unit_costs_flag(s: &str) -> Result<UnitCosts, String> {
    let bad = || {
        format!(
            "'{s}': expected C_T,C_R (or C_T,C_R1,C_R+), non-negative numbers with a positive sum"
        )
    };
    let v = s
        .split(',')
        .map(|x| x.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<Vec<f64>, String>>()?;
    let c = match v[..] {
        [t, r] => UnitCosts::flat(t, r),
        [t, r1, r] => UnitCosts {
            first_read: r1,
            ..UnitCosts::flat(t, r)
        },
        _ => return Err(bad()),
    };
    if !(v.iter().all(|x| x.is_finite() && *x >= 0.0) && c.trajectory + c.first_read > 0.0) {
        return Err(bad());
    }
    Ok(c)
}

/// `--shares name=W,...`: the (name, positive integer weight) pairs as given (the core
/// matches them to the audit's strata).
pub(super) fn parse_shares(text: &str) -> Result<Vec<(String, usize)>, UsageError> {
    let mut given = Vec::new();
    for item in text.split(',') {
        let (name, w) = item.split_once('=').ok_or_else(|| {
            UsageError(format!(
                "--shares: '{item}' is not name=W (e.g. hotpotqa=1,musique=1)"
            ))
        })?;
        let w: usize = match w.trim().parse() {
            Ok(w) if w >= 1 => w,
            _ => {
                return Err(UsageError(format!(
                    "--shares: the weight of '{name}' must be a positive integer, got '{w}'"
                )))
            }
        };
        given.push((name.trim().to_string(), w));
    }
    Ok(given)
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
    /// The search's bounds.
    ///
    /// # Errors
    /// A bound that does not fit this machine's `usize`.
    pub fn bounds(&self) -> anyhow::Result<ragstats_core::allocation::planner::Bounds> {
        Ok(ragstats_core::allocation::planner::Bounds {
            max_questions: usize::try_from(self.max_questions)?,
            max_trajectories: usize::try_from(self.max_trajectories)?,
            max_reads: usize::try_from(self.max_reads)?,
        })
    }
}
