//! What `compare` reports: every system with its interval, rank interval and best share, every
//! pair of the family with raw, Holm and Benjamini–Hochberg p-values and a simultaneous
//! interval, the same per stratum, and what the next study needs to resolve the closest
//! unresolved pair.

use serde::Serialize;

use crate::document::{Engine, Report};
use crate::resample::summary::Interval;

/// Which pairs form the family the adjustments and the simultaneous intervals cover.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Family {
    /// `all-pairs` (every b − a, a before b in the panel's arm order) or `vs-reference`
    /// (every arm − the reference, Dunnett's family).
    pub kind: &'static str,
    /// The reference arm of a `vs-reference` family.
    pub reference: Option<String>,
    /// Pairs in the family (m).
    pub size: usize,
}

/// The methods behind the numbers, named for the reader of a document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Methods {
    pub se: &'static str,
    pub p: &'static str,
    pub adjusted: &'static str,
    pub simultaneous: &'static str,
    pub ranks: &'static str,
    pub best_share: &'static str,
}

/// The critical values of the intervals: z of a marginal interval, the bootstrap quantile of
/// the maximum studentized difference over the family, that quantile kept between z and
/// Bonferroni's z (what the simultaneous intervals use), and Bonferroni's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalValues {
    pub marginal: f64,
    pub max_t_bootstrap: f64,
    pub simultaneous: f64,
    pub bonferroni: f64,
    /// The simultaneous critical value of the all-pairs family, which the rank intervals use
    /// (the same as `simultaneous` when the family is all pairs).
    pub ranks_simultaneous: f64,
}

/// One system (arm) over all strata.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct System {
    pub name: String,
    /// Equal-weight mean of the stratum means, as `stats variance --arm NAME`.
    pub estimate: f64,
    pub se: f64,
    /// estimate ± z·SE.
    pub ci: Interval,
    /// Simultaneous rank interval, 1 = best (highest score).
    pub rank_ci: [usize; 2],
    /// Share of bootstrap replicates in which this system has the highest estimate (ties
    /// split). Not the probability that it is best: systems with equal true means give the
    /// observed leader a share well above 1/k.
    pub best_share: f64,
    /// Whether no system is certainly better (the rank interval starts at 1).
    pub top_group: bool,
    pub questions: usize,
}

/// One pair b − a.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairResult {
    pub a: String,
    pub b: String,
    /// score(b) − score(a) on the cells both have, as `stats variance --contrast b-a`.
    pub estimate: f64,
    pub se: f64,
    /// estimate ± z·SE.
    pub ci: Interval,
    /// estimate ± c·SE, c the family's simultaneous critical value.
    pub ci_simultaneous: Interval,
    /// estimate / SE; `null` when SE is 0.
    pub z: Option<f64>,
    /// Two-sided p of the Wald z test.
    pub p: f64,
    pub p_holm: f64,
    pub q_bh: f64,
    /// Whether Holm's adjusted p is at most 1 − confidence.
    pub resolved: bool,
    /// Cells of either arm without a partner in the other: left out of the difference, or
    /// scored with the failure score.
    pub unpaired_cells: usize,
}

/// One system within one stratum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StratumSystem {
    pub name: String,
    pub mean: f64,
    pub se: f64,
}

/// One pair within one stratum (Holm within the stratum's family).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StratumPair {
    pub a: String,
    pub b: String,
    pub estimate: f64,
    pub se: f64,
    pub p: f64,
    pub p_holm: f64,
}

/// One stratum's systems and pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StratumComparison {
    pub name: String,
    pub questions: usize,
    pub systems: Vec<StratumSystem>,
    pub pairs: Vec<StratumPair>,
}

/// What the next study needs to resolve the closest unresolved pair of the family.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NextStep {
    pub a: String,
    pub b: String,
    pub estimate: f64,
    pub se: f64,
    /// Questions in the panel now (all strata).
    pub questions: usize,
    /// Questions for `power` at the family's simultaneous critical value, the strata in
    /// today's proportions and the same trajectories and reads per question:
    /// ⌈Q · ((c + z_power) / |z|)²⌉.
    pub questions_needed: u64,
    pub power: f64,
    /// The critical value the target uses: the family's simultaneous one (resolving the
    /// pair within the family is what Holm and the simultaneous intervals judge), c in
    /// `critical_values.simultaneous`.
    pub critical_value: f64,
    /// The SE that resolves the pair with `power` if the difference is really `estimate`:
    /// |estimate| / (critical_value + z_power). `stats plan --target-se` of this SE is the
    /// allocation below.
    pub target_se: f64,
    /// With a ledger: the cheapest (Q, T, R) whose nested SE is at most `target_se`
    /// (`stats plan`'s search); `null` without a ledger or when none within the bounds
    /// does it (`allocation_undefined` says why).
    pub allocation: Option<NextAllocation>,
    pub allocation_undefined: Option<String>,
    /// The advice in one paragraph.
    pub text: String,
}

/// The cheapest allocation that resolves the next step's pair, priced from the ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NextAllocation {
    /// Total questions, and per stratum (beside `strata`, split in today's proportions).
    pub questions: usize,
    pub per_stratum: Vec<usize>,
    pub strata: Vec<String>,
    pub trajectories: usize,
    pub reads: usize,
    /// The nested D-study SE of the pair at this allocation (≤ `target_se`).
    pub se: f64,
    /// Its cost in `currency` (`tokens` or `USD`).
    pub cost: f64,
    pub currency: String,
}

/// The report of `compare`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    pub metric: String,
    pub family: Family,
    pub methods: Methods,
    pub critical_values: CriticalValues,
    /// Systems in the panel's arm order.
    pub systems: Vec<System>,
    /// The family's pairs.
    pub pairs: Vec<PairResult>,
    pub strata: Vec<StratumComparison>,
    /// The systems that cannot be told apart from the best (rank interval starting at 1).
    pub top_group: Vec<String>,
    /// `null` when every pair of the family is resolved (see `next_undefined`).
    pub next: Option<NextStep>,
    pub next_undefined: Option<String>,
    /// What a reader should know before the numbers:
    /// [`crate::resample::summary::NO_SPREAD_NOTE`] when every system's outcome is constant.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub engine: Engine,
}

impl Report for CompareReport {
    fn engine(&self) -> Engine {
        self.engine.clone()
    }
}
