//! Planning an evaluation: the least-cost integer allocation (Q, T, R) for a target SE (or a
//! minimum detectable difference), the least-SE allocation for a budget, and the SE, MDE and
//! power of a given design, from an audit's components and unit costs.
//!
//! Per stratum d with truncated components σ²_q,d, σ²_t,d, σ²_r,d and unit costs c_T,d (a
//! trajectory without its reads) and c_R,d (one read), a design with Q_d questions in
//! stratum d and common T, R has the nested D-study variance of the combined estimate
//! Σ_d ω_d ȳ_d (ω_d the audit's stratum weights, [`Planner::weights`]; 1/D by default)
//!
//! SE² = Σ_d ω_d² v_d/Q_d,  v_d = σ²_q,d + σ²_t,d/T + σ²_r,d/(T R)
//!
//! (with equal weights (1/D²) Σ_d v_d/Q_d; the bounds below are written for that case and
//! hold with ω_d² in place of 1/D²)
//!
//! and costs C = Σ_d Q_d k_d with k_d = T (c_T,d + R c_R,d). The Q-only forecast has the
//! same form with v_d = SE²_audit,d · Q_audit,d (T and R do not enter). A total Q is split
//! over strata by largest remainder in proportion to weights w_d (the audit's question
//! counts, or given shares), π_d = w_d/Σ w: each part is ⌊π_d Q⌋ or ⌊π_d Q⌋ + 1.
//!
//! The search is exact within its bounds. For each (T, R) with 1 ≤ T ≤ T_max,
//! 1 ≤ R ≤ R_max:
//!
//! * target s: since Q_d ≤ π_d Q + 1, SE²(Q) ≥ L(Q) = (1/D²) Σ_d v_d/(π_d Q + 1), which
//!   decreases in Q, so no Q below Q_lo = min{Q : L(Q) ≤ s²} reaches s (the continuous closed
//!   form Q* = Σ_d (v_d/π_d)/(D² s²) lies just above Q_lo). Every integer Q from Q_lo up is
//!   checked with its exact split until the cost's lower bound
//!   C(Q) ≥ Σ_d k_d (π_d Q − 1)⁺ exceeds the cheapest feasible cost found, so the result is
//!   the least cost over every Q ≤ Q_max (with D = 1 simply the least Q with SE ≤ s);
//! * budget B: Q_hi = max{Q : Σ_d k_d (π_d Q − 1)⁺ ≤ B} bounds the affordable Q; Q is
//!   checked downwards from Q_hi until L(Q) exceeds the least SE² found.
//!
//! The best allocation over all (T, R) is the cheapest (target) or the most precise
//! (budget); ties go to the smaller SE (or cost), then the smaller T, then R.
//!
//! Two-sided test at level α with power p under the normal approximation:
//! MDE = (z_{1−α/2} + z_p) · SE, and the power against a true difference δ is
//! Φ(|δ|/SE − z_{1−α/2}) + Φ(−|δ|/SE − z_{1−α/2}).

use serde::Serialize;

use super::efficiency::UnitCosts;
use crate::bootstrap::stratified::{Bootstrap, BootstrapSpec};
use crate::components::forecast::{combined_se2, nested_se2, split_questions};
use crate::components::variance::{fit, AnovaSums, PerLevel};
use crate::costs::panel_costs::{QuestionCost, TrajectoryCost};
use crate::panel::{Panel, Stratum, StratumStats};
use crate::resample::columns::CenteredColumns;
use crate::resample::engine::ResampleBackend;
use crate::resample::summary::{normal_cdf, normal_quantile};
use crate::resample::Resampling;
use crate::{Error, Result};

/// One stratum as the planner sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanStratum {
    pub name: String,
    /// Raw components (truncated at 0 where used).
    pub components: PerLevel,
    /// Unit costs; `None` when no costs are known (only a given design can then be planned).
    pub costs: Option<UnitCosts>,
    /// Split weight w_d of the total Q (the audit's question count, or a given share).
    pub weight: usize,
    /// The audit's questions, trajectories and reads, and its measured SE (for the Q-only
    /// forecast and its cost at the audit's design).
    pub audit_questions: usize,
    pub audit_trajectories: usize,
    pub audit_reads: usize,
    pub audit_se: f64,
}

/// The bounds of the search (all inclusive, from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bounds {
    pub max_questions: usize,
    pub max_trajectories: usize,
    pub max_reads: usize,
}

/// An integer allocation with its nested SE and its cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Allocation {
    /// Total questions, and per stratum (strata order).
    pub questions: usize,
    pub per_stratum: Vec<usize>,
    pub trajectories: usize,
    pub reads: usize,
    /// SE of the equal-weight estimate.
    pub se: f64,
    /// Total cost (`None` without unit costs).
    pub cost: Option<f64>,
}

/// Per-question variance v_d = σ²_q + σ²_t/T + σ²_r/(TR) (truncated components; a level that
/// was not estimable in the audit contributes nothing: its variance sits in the level above).
pub fn variance_per_question(c: &PerLevel, t: usize, r: usize) -> f64 {
    nested_se2(c, 1.0, t as f64, r as f64)
}

/// z_{1−α/2} + z_power: the MDE in SE units of a two-sided level-α test with that power.
pub fn mde_multiplier(alpha: f64, power: f64) -> f64 {
    normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power)
}

/// Power of the two-sided level-α z-test against a true difference δ at standard error
/// `se`: Φ(|δ|/SE − z_{1−α/2}) + Φ(−|δ|/SE − z_{1−α/2}) ([`power_at`] with c = z_{1−α/2}).
pub fn power(delta: f64, se: f64, alpha: f64) -> f64 {
    power_at(delta, se, normal_quantile(1.0 - alpha / 2.0))
}

/// Power of the two-sided test that rejects when |estimate| > c·SE, against a true
/// difference δ, the estimate normal with that SE: Φ(|δ|/SE − c) + Φ(−|δ|/SE − c).
pub fn power_at(delta: f64, se: f64, c: f64) -> f64 {
    let d = delta.abs() / se;
    normal_cdf(d - c) + normal_cdf(-d - c)
}

/// Predictive power of a new study with SE s₁ = `se_planned`, tested two-sided at critical
/// value c, given today's estimate d̂ = `estimate` with SE s₀ = `se_now`: the power averaged
/// over what today's estimate leaves uncertain about the true difference δ.
///
/// With a flat prior δ | today ~ N(d̂, s₀²), and the new study's estimate d̂₁ | δ ~ N(δ, s₁²)
/// independent of today's, so d̂₁ | today ~ N(d̂, s₀² + s₁²) and
///
/// PP = P(|d̂₁| > c s₁) = Φ((|d̂| − c s₁)/√(s₀² + s₁²)) + Φ((−|d̂| − c s₁)/√(s₀² + s₁²)),
///
/// the expectation of [`power_at`]`(δ, s₁, c)` over δ. The second term is a rejection with
/// the sign opposite today's. As s₀ → 0 it is the power at d̂; the first term, a resolution
/// with today's sign, stays below Φ(|d̂|/s₀) however large the new study.
pub fn predictive_power(estimate: f64, se_now: f64, se_planned: f64, c: f64) -> f64 {
    let spread = se_now.hypot(se_planned);
    let d = estimate.abs();
    normal_cdf((d - c * se_planned) / spread) + normal_cdf((-d - c * se_planned) / spread)
}

/// A least-cost or least-SE search at one (T, R): split weights, stratum weights ω_d
/// (empty: equal), per-question variances v_d and per-question costs k_d of every stratum.
struct Cell<'a> {
    weights: &'a [usize],
    stratum_weights: &'a [f64],
    v: &'a [f64],
    k: &'a [f64],
    max_q: usize,
}

impl Cell<'_> {
    /// Σ_d ω_d² x_d (equal weights: Σ_d x_d / D²).
    fn combine(&self, x: &[f64]) -> f64 {
        combined_se2(x, self.stratum_weights)
    }

    fn pi(&self, d: usize) -> f64 {
        self.weights[d] as f64 / self.weights.iter().sum::<usize>() as f64
    }

    /// Exact SE² and cost at total `q` (∞ SE² when a stratum gets no question).
    fn exact(&self, q: usize) -> (Vec<usize>, f64, f64) {
        let parts = split_questions(q, self.weights);
        let se2 = if parts.contains(&0) {
            f64::INFINITY
        } else {
            let x: Vec<f64> = parts
                .iter()
                .zip(self.v)
                .map(|(&n, v)| v / n as f64)
                .collect();
            self.combine(&x)
        };
        let cost = parts.iter().zip(self.k).map(|(&n, k)| n as f64 * k).sum();
        (parts, se2, cost)
    }

    /// L(Q) = Σ_d ω_d² v_d/(π_d Q + 1) ≤ SE²(Q).
    fn se2_lower(&self, q: usize) -> f64 {
        let x: Vec<f64> = (0..self.v.len())
            .map(|d| self.v[d] / (self.pi(d) * q as f64 + 1.0))
            .collect();
        self.combine(&x)
    }

    /// Σ_d k_d (π_d Q − 1)⁺ ≤ C(Q).
    fn cost_lower(&self, q: usize) -> f64 {
        (0..self.k.len())
            .map(|d| self.k[d] * (self.pi(d) * q as f64 - 1.0).max(0.0))
            .sum()
    }

    /// The smallest q in 1..=max_q with `ok(q)`, for `ok` monotone (false, then true).
    fn first(&self, ok: impl Fn(usize) -> bool) -> Option<usize> {
        if !ok(self.max_q) {
            return None;
        }
        let (mut lo, mut hi) = (1, self.max_q);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo)
    }

    /// The least-cost Q with SE² ≤ `target2` (ties: smaller SE, then smaller Q).
    fn least_cost(&self, target2: f64) -> Option<(Vec<usize>, f64, f64)> {
        let start = self.first(|q| self.se2_lower(q) <= target2)?;
        let mut best: Option<(Vec<usize>, f64, f64)> = None;
        for q in start..=self.max_q {
            if let Some(b) = &best {
                if self.cost_lower(q) > b.2 {
                    break;
                }
            }
            let (parts, se2, cost) = self.exact(q);
            if se2 <= target2 {
                let better = match &best {
                    None => true,
                    Some(b) => cost < b.2 || (cost == b.2 && se2 < b.1),
                };
                if better {
                    best = Some((parts, se2, cost));
                }
            }
        }
        best
    }

    /// The least-SE Q with cost ≤ `budget` (ties: smaller cost, then larger Q).
    fn least_se(&self, budget: f64) -> Option<(Vec<usize>, f64, f64)> {
        // The largest Q whose cost lower bound fits: the first Q that does not fit, minus 1.
        let hi = match self.first(|q| self.cost_lower(q) > budget) {
            Some(over) => over - 1,
            None => self.max_q,
        };
        let mut best: Option<(Vec<usize>, f64, f64)> = None;
        for q in (1..=hi).rev() {
            if let Some(b) = &best {
                if self.se2_lower(q) > b.1 {
                    break;
                }
            }
            let (parts, se2, cost) = self.exact(q);
            if cost <= budget && se2.is_finite() {
                let better = match &best {
                    None => true,
                    Some(b) => se2 < b.1 || (se2 == b.1 && cost < b.2),
                };
                if better {
                    best = Some((parts, se2, cost));
                }
            }
        }
        best
    }
}

/// What to plan for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// The least-cost allocation with SE ≤ the target.
    TargetSe(f64),
    /// The least-SE allocation costing at most the budget.
    Budget(f64),
}

/// The planner: strata, split weights, stratum weights and bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Planner {
    pub strata: Vec<PlanStratum>,
    pub bounds: Bounds,
    /// The strata's weights ω_d in the combined estimate (Σ = 1, strata order), which every
    /// SE² = Σ_d ω_d² v_d/Q_d follows; empty for equal weights (1/D²).
    pub weights: Vec<f64>,
}

impl Planner {
    fn split_weights(&self) -> Vec<usize> {
        self.strata.iter().map(|s| s.weight).collect()
    }

    /// Questions per stratum for `goal` given each stratum's variance per question `v` and
    /// cost per question `k`: the least cost reaching SE² ≤ target², or the least SE² within
    /// the budget, as (questions per stratum, SE², cost).
    fn solve(&self, goal: Goal, v: &[f64], k: &[f64]) -> Option<(Vec<usize>, f64, f64)> {
        let w = self.split_weights();
        let cell = Cell {
            weights: &w,
            stratum_weights: &self.weights,
            v,
            k,
            max_q: self.bounds.max_questions,
        };
        match goal {
            Goal::TargetSe(s) => cell.least_cost(s * s),
            Goal::Budget(b) => cell.least_se(b),
        }
    }

    /// Per-question costs k_d = T (c_T,d + c_R1,d + (R − 1) c_R+,d) + c_Q (0 without
    /// costs).
    fn per_question_costs(&self, t: usize, r: usize) -> Vec<f64> {
        self.strata
            .iter()
            .map(|s| s.costs.map_or(0.0, |c| c.per_question(t as f64, r as f64)))
            .collect()
    }

    fn has_costs(&self) -> bool {
        self.strata.iter().all(|s| s.costs.is_some())
    }

    /// The split of a total Q in the planner's weights.
    pub fn split(&self, q: usize) -> Vec<usize> {
        split_questions(q, &self.split_weights())
    }

    /// The nested SE and cost of a design (Q_d per stratum, common T and R).
    pub fn evaluate(&self, per_stratum: &[usize], t: usize, r: usize) -> Allocation {
        let x: Vec<f64> = self
            .strata
            .iter()
            .zip(per_stratum)
            .map(|(s, &q)| variance_per_question(&s.components, t, r) / q as f64)
            .collect();
        let se2 = combined_se2(&x, &self.weights);
        let k = self.per_question_costs(t, r);
        Allocation {
            questions: per_stratum.iter().sum(),
            per_stratum: per_stratum.to_vec(),
            trajectories: t,
            reads: r,
            se: se2.sqrt(),
            cost: self
                .has_costs()
                .then(|| per_stratum.iter().zip(&k).map(|(&q, k)| q as f64 * k).sum()),
        }
    }

    /// The Q-only forecast's SE of `per_stratum` questions: sqrt(Σ_d ω_d² SE²_audit,d
    /// Q_audit,d/Q_d) (ω_d = 1/D by default).
    pub fn q_only_se(&self, per_stratum: &[usize]) -> f64 {
        let x: Vec<f64> = self
            .strata
            .iter()
            .zip(per_stratum)
            .map(|(s, &q)| s.audit_se * s.audit_se * s.audit_questions as f64 / q as f64)
            .collect();
        combined_se2(&x, &self.weights).sqrt()
    }

    /// Each stratum's variance per question at (T, R): v_d = σ²_q + σ²_t/T + σ²_r/(T·R)
    /// ([`variance_per_question`]).
    fn variances_per_question(&self, t: usize, r: usize) -> Vec<f64> {
        self.strata
            .iter()
            .map(|s| variance_per_question(&s.components, t, r))
            .collect()
    }

    /// The best allocation at one (T, R) for the goal (`None` when none within the bounds
    /// meets it).
    pub fn best_at(&self, goal: Goal, t: usize, r: usize) -> Option<Allocation> {
        let v = self.variances_per_question(t, r);
        let k = self.per_question_costs(t, r);
        let found = self.solve(goal, &v, &k)?;
        Some(Allocation {
            questions: found.0.iter().sum(),
            per_stratum: found.0,
            trajectories: t,
            reads: r,
            se: found.1.sqrt(),
            cost: self.has_costs().then_some(found.2),
        })
    }

    /// The best allocation of every (T, R) within the bounds that meets the goal (T = 1 only
    /// when no stratum has a trajectory component, R = 1 only when none has a read
    /// component), best first: by cost for a target (then SE, T, R), by SE for a budget (then cost, T, R).
    ///
    /// # Errors
    /// [`Error::Usage`] when the strata have no unit costs.
    pub fn search(&self, goal: Goal) -> Result<Vec<Allocation>> {
        if !self.has_costs() {
            return Err(Error::Usage(
                "planning for a target or a budget needs unit costs (from a ledger, or given)"
                    .into(),
            ));
        }
        // A level the audit could not separate (T = 1 or R = 1 in every stratum) is credited
        // with no variance, so more of it only costs: search it at 1 alone.
        let t_max = if self
            .strata
            .iter()
            .all(|s| s.components.trajectory.is_none())
        {
            1
        } else {
            self.bounds.max_trajectories
        };
        let r_max = if self.strata.iter().all(|s| s.components.read.is_none()) {
            1
        } else {
            self.bounds.max_reads
        };
        let mut all = Vec::new();
        for t in 1..=t_max {
            for r in 1..=r_max {
                all.extend(self.best_at(goal, t, r));
            }
        }
        let key = |a: &Allocation| match goal {
            Goal::TargetSe(_) => (a.cost.unwrap_or(0.0), a.se),
            Goal::Budget(_) => (a.se, a.cost.unwrap_or(0.0)),
        };
        all.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0)
                .then(ka.1.total_cmp(&kb.1))
                .then(a.trajectories.cmp(&b.trajectories))
                .then(a.reads.cmp(&b.reads))
        });
        Ok(all)
    }

    /// With unequal stratum weights ω_d and unit costs: the split of questions that
    /// minimises SE² × cost at `a`'s T and R, Q_d ∝ ω_d √(v_d/k_d) (docs/METHODS.md,
    /// "Stratum weights"), as integer shares (the largest 1000), and the fraction by which
    /// it lowers SE² × cost against `a`'s own split π_d:
    /// 1 − (Σ_d ω_d √(v_d k_d))² / ((Σ_d ω_d² v_d/π_d)(Σ_d π_d k_d)).
    /// `None` with equal weights, without costs, when a stratum would get no share, or when
    /// `a`'s split is already within 0.1% of the optimum.
    pub fn weighted_split(&self, a: &Allocation) -> Option<(Vec<usize>, f64)> {
        if self.weights.is_empty() || !self.has_costs() {
            return None;
        }
        let (t, r) = (a.trajectories, a.reads);
        let v = self.variances_per_question(t, r);
        let k = self.per_question_costs(t, r);
        let ideal: Vec<f64> = (0..v.len())
            .map(|d| self.weights[d] * (v[d] / k[d]).sqrt())
            .collect();
        let top = ideal.iter().copied().fold(0.0, f64::max);
        if !(top.is_finite() && top > 0.0) {
            return None;
        }
        let shares: Vec<usize> = ideal
            .iter()
            .map(|x| (1000.0 * x / top).round() as usize)
            .collect();
        if shares.contains(&0) {
            return None;
        }
        let q = a.questions as f64;
        let pi: Vec<f64> = a.per_stratum.iter().map(|&n| n as f64 / q).collect();
        let now = (0..v.len())
            .map(|d| self.weights[d].powi(2) * v[d] / pi[d])
            .sum::<f64>()
            * (0..v.len()).map(|d| pi[d] * k[d]).sum::<f64>();
        let best = (0..v.len())
            .map(|d| self.weights[d] * (v[d] * k[d]).sqrt())
            .sum::<f64>()
            .powi(2);
        let gain = 1.0 - best / now;
        (gain.is_finite() && gain > 1e-3).then_some((shares, gain))
    }

    /// The least SE any allocation within the bounds reaches (Q_max, T_max, R_max), and the
    /// floor the question variance alone sets at Q_max (T, R → ∞).
    pub fn floors(&self) -> (f64, f64) {
        let parts = self.split(self.bounds.max_questions);
        let best = self
            .evaluate(&parts, self.bounds.max_trajectories, self.bounds.max_reads)
            .se;
        let x: Vec<f64> = self
            .strata
            .iter()
            .zip(&parts)
            .map(|(s, &q)| s.components.truncated().question / q as f64)
            .collect();
        let q_floor = combined_se2(&x, &self.weights).sqrt();
        (best, q_floor)
    }

    /// The Q-only forecast's answer: the design at the audit's T and R (per stratum) with
    /// the least cost reaching SE ≤ `target` by the Q-only forecast, or the least Q-only SE
    /// for the budget; its cost is at each stratum's audit T and R.
    pub fn q_only(&self, goal: Goal) -> Option<(Vec<usize>, f64, Option<f64>)> {
        let v: Vec<f64> = self
            .strata
            .iter()
            .map(|s| s.audit_se * s.audit_se * s.audit_questions as f64)
            .collect();
        let k: Vec<f64> = self
            .strata
            .iter()
            .map(|s| {
                s.costs.map_or(0.0, |c| {
                    c.per_question(s.audit_trajectories as f64, s.audit_reads as f64)
                })
            })
            .collect();
        let found = self.solve(goal, &v, &k)?;
        Some((found.0, found.1.sqrt(), self.has_costs().then_some(found.2)))
    }
}

/// Unit costs of a stratum from its per-question costs at the full design (as `efficiency`
/// computes them): c_T = Σ_q trajectory costs/(Q T), c_R1 = Σ_q first-read costs/(Q T),
/// c_R+ = Σ_q later-read costs/(Q T (R − 1)) (c_R1 when R = 1: no later read to measure).
pub fn unit_costs(costs: &[QuestionCost], t: usize, r: usize) -> UnitCosts {
    let sum = |f: fn(&QuestionCost) -> f64| costs.iter().map(f).sum::<f64>();
    let qt = (costs.len() * t) as f64;
    two_part(
        sum(|c| c.trajectories),
        sum(|c| c.first_reads),
        sum(|c| c.reads),
        qt,
        qt * r as f64,
    )
}

/// c_T = `tc`/`traj`, c_R1 = `rc1`/`traj`, c_R+ = (`rc` − `rc1`)/(`reads` − `traj`) (c_R1
/// when there is no later read), from the costs of a panel's trajectories (`tc`), first
/// reads (`rc1`) and all reads (`rc`), its trajectories and its reads.
pub fn two_part(tc: f64, rc1: f64, rc: f64, traj: f64, reads: f64) -> UnitCosts {
    let first_read = rc1 / traj;
    UnitCosts {
        trajectory: tc / traj,
        first_read,
        read: if reads > traj {
            (rc - rc1) / (reads - traj)
        } else {
            first_read
        },
        question: 0.0,
    }
}

/// Components and unit costs of every stratum refitted in one bootstrap replicate.
#[derive(Debug, Clone, PartialEq)]
pub struct Refit {
    pub components: Vec<PerLevel>,
    /// `None` when no question costs were given.
    pub costs: Option<Vec<UnitCosts>>,
}

/// Refits the ANOVA components and the unit costs of every (balanced) stratum in each
/// stratified question bootstrap replicate (`0..resampling.replicates`, drawn from
/// `resampling.seed`): per question the columns ȳ_q − ȳ_d, its square,
/// SS_t,q, SS_r,q (and its trajectory and read costs) go to the engine, and each replicate's
/// column sums give SS*_q = TR (S₂ − S₁²/Q), SS*_t, SS*_r (components as in `variance`) and
/// c*_T = Σ trajectory costs/(Q T), c*_R = Σ read costs/(Q T R) (as in `efficiency`).
///
/// # Errors
/// [`Error::Data`] for an unbalanced stratum, a stratum with fewer than 2 questions, or
/// costs that do not match the strata; backend errors.
pub fn refit_replicates(
    strata: &[Stratum],
    costs: Option<&[Vec<QuestionCost>]>,
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Refit>> {
    let Resampling {
        seed, replicates, ..
    } = *resampling;
    let mut rows = Vec::with_capacity(strata.len());
    let mut shapes = Vec::with_capacity(strata.len());
    for (d, s) in strata.iter().enumerate() {
        if !s.is_balanced() {
            return Err(Error::Data(format!(
                "stratum '{}' is unbalanced: the plan's bootstrap refits balanced ANOVA components",
                s.name
            )));
        }
        let st = StratumStats::from_stratum(s);
        if st.q() < 2 {
            return Err(Error::Data(format!(
                "stratum '{}' needs at least 2 questions",
                s.name
            )));
        }
        let c = match costs {
            Some(c) => {
                let c = c.get(d).filter(|c| c.len() == st.q()).ok_or_else(|| {
                    Error::Data(format!(
                        "stratum '{}': question costs do not match its questions",
                        s.name
                    ))
                })?;
                Some(c)
            }
            None => None,
        };
        let mean = st.mean();
        rows.push(
            st.questions
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    let dev = q.mean - mean;
                    let mut row = vec![dev, dev * dev, q.ss_trajectory, q.ss_read];
                    if let Some(c) = c {
                        row.extend([c[i].trajectories, c[i].reads, c[i].first_reads]);
                    }
                    row
                })
                .collect::<Vec<_>>(),
        );
        shapes.push(st);
    }
    let cols = CenteredColumns::new(&rows)?;
    let reps = cols.resample(backend, seed, 0..replicates, progress)?;
    Ok(reps
        .iter()
        .map(|rep| {
            let mut components = Vec::with_capacity(shapes.len());
            let mut unit = Vec::with_capacity(shapes.len());
            for (st, s) in shapes.iter().zip(rep) {
                let (q, t, r) = (st.q() as f64, st.t, st.r);
                let sums = AnovaSums {
                    questions: st.q(),
                    t,
                    r,
                    ss_question: (t * r) as f64 * (s[1] - s[0] * s[0] / q),
                    ss_trajectory: s[2],
                    ss_read: s[3],
                    df_question: q - 1.0,
                    df_trajectory: q * (t as f64 - 1.0),
                    df_read: q * t as f64 * (r as f64 - 1.0),
                };
                // Q ≥ 2, so the fit cannot fail.
                components.push(fit(&sums).map_or(PerLevel::NONE, |f| f.components));
                if costs.is_some() {
                    let qt = q * t as f64;
                    unit.push(two_part(s[4], s[6], s[5], qt, qt * r as f64));
                }
            }
            Refit {
                components,
                costs: costs.is_some().then_some(unit),
            }
        })
        .collect())
}

/// Unit costs of a stratum from the cost of every trajectory and read as they are (as
/// `efficiency` computes them for an unbalanced panel): c_T = Σ trajectory costs / number
/// of trajectories, c_R = Σ read costs / number of reads. For a balanced stratum this is
/// [`unit_costs`] up to rounding.
pub fn nested_unit_costs(costs: &[Vec<TrajectoryCost>]) -> UnitCosts {
    let (mut tc, mut rc1, mut rc, mut t, mut r) = (0.0, 0.0, 0.0, 0usize, 0usize);
    for q in costs {
        for c in q {
            tc += c.trajectory;
            rc1 += c.reads.first().copied().unwrap_or(0.0);
            rc += c.reads.iter().sum::<f64>() + c.extra_reads;
            t += 1;
            r += c.reads.len();
        }
    }
    two_part(tc, rc1, rc, t as f64, r as f64)
}

/// [`refit_replicates`] for a panel with an unbalanced stratum: the components are refitted
/// in every replicate by the question bootstrap of [`crate::bootstrap::stratified`] (REML for an
/// unbalanced stratum, warm-started from the full-sample fit; ANOVA for a balanced one, as
/// `stats variance` fits them), and the unit costs from the same draws,
/// c*_T = Σ_q k_q TC_q / Σ_q k_q T_q and c*_R = Σ_q k_q RC_q / Σ_q k_q N_q (k_q the
/// question's draw count, T_q its trajectories, N_q its reads, TC_q and RC_q their costs).
/// A replicate whose fit fails has no components ([`PerLevel::NONE`]).
///
/// # Errors
/// [`Error::Data`] for a stratum with fewer than 2 questions or costs that do not match
/// the strata; REML and backend errors.
pub fn refit_replicates_unbalanced(
    panel: &Panel,
    costs: Option<&[Vec<Vec<TrajectoryCost>>]>,
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Refit>> {
    let Resampling {
        seed, replicates, ..
    } = *resampling;
    let boot = Bootstrap::from_panel(
        panel,
        BootstrapSpec {
            components: true,
            ..BootstrapSpec::default()
        },
    )?;
    let rows: Option<Vec<Vec<Vec<f64>>>> = costs
        .map(|c| {
            if c.len() != panel.strata.len()
                || c.iter().zip(&panel.strata).any(|(c, s)| c.len() != s.q())
            {
                return Err(Error::Data(
                    "the question costs do not match the strata".into(),
                ));
            }
            Ok(c.iter()
                .map(|s| {
                    s.iter()
                        .map(|q| {
                            let mut row = vec![0.0; 5];
                            for t in q {
                                row[0] += t.trajectory;
                                row[1] += t.reads.iter().sum::<f64>() + t.extra_reads;
                                row[2] += 1.0;
                                row[3] += t.reads.len() as f64;
                                row[4] += t.reads.first().copied().unwrap_or(0.0);
                            }
                            row
                        })
                        .collect()
                })
                .collect())
        })
        .transpose()?;
    let stats = boot.run(backend, seed, 0..replicates, progress)?;
    let sums = rows
        .as_ref()
        .map(|r| boot.weighted_sums(seed, 0..replicates, r))
        .transpose()?;
    let n = boot.plan.statistics.len();
    Ok(stats
        .chunks_exact(n)
        .enumerate()
        .map(|(i, st)| {
            let (comps, _) = boot.components_of(st);
            Refit {
                components: comps
                    .into_iter()
                    .map(|c| c.unwrap_or(PerLevel::NONE))
                    .collect(),
                costs: sums.as_ref().map(|s| {
                    s[i].iter()
                        .map(|s| two_part(s[0], s[4], s[1], s[2], s[3]))
                        .collect()
                }),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(q: f64, t: f64, r: f64, ct: f64, cr: f64, max_q: usize) -> Planner {
        Planner {
            strata: vec![PlanStratum {
                name: "all".into(),
                components: PerLevel {
                    question: q,
                    trajectory: Some(t),
                    read: Some(r),
                },
                costs: Some(UnitCosts::flat(ct, cr)),
                weight: 100,
                audit_questions: 100,
                audit_trajectories: 2,
                audit_reads: 2,
                audit_se: 0.02,
            }],
            bounds: Bounds {
                max_questions: max_q,
                max_trajectories: 10,
                max_reads: 10,
            },
            weights: Vec::new(),
        }
    }

    #[test]
    fn one_stratum_least_q_by_hand() {
        // v(T=1, R=1) = 0.04 + 0.01 + 0.02 = 0.07; SE ≤ 0.01 needs Q ≥ 0.07/1e-4 = 700
        // exactly, so Q = 700 (SE = 0.01) at cost 700·(3 + 1) = 2800.
        let p = one(0.04, 0.01, 0.02, 3.0, 1.0, 100_000);
        let a = p.best_at(Goal::TargetSe(0.01), 1, 1).unwrap();
        assert_eq!(a.questions, 700);
        assert!((a.cost.unwrap() - 2800.0).abs() < 1e-9);
        // Budget 2800 at (1, 1) buys exactly those 700 questions.
        let b = p.best_at(Goal::Budget(2800.0), 1, 1).unwrap();
        assert_eq!(b.questions, 700);
        // Budget 2799 buys 699.
        assert_eq!(
            p.best_at(Goal::Budget(2799.0), 1, 1).unwrap().questions,
            699
        );
    }

    #[test]
    fn unreachable_target_is_none() {
        // σ²_q/Q_max = 0.04/100 = 4e-4 > 0.01² = 1e-4: no (T, R) reaches SE 0.01.
        let p = one(0.04, 0.01, 0.02, 3.0, 1.0, 100);
        assert!(p.search(Goal::TargetSe(0.01)).unwrap().is_empty());
        let (best, floor) = p.floors();
        assert!((floor - 0.02).abs() < 1e-12);
        let v = 0.04 + 0.01 / 10.0 + 0.02 / 100.0;
        assert!((best - (v / 100.0f64).sqrt()).abs() < 1e-12);
    }

    /// The demo's pair (d̂/s₀ = 1.02) planned at c = 1.96 with 80% power: s₁ = d̂/(c + z_0.8).
    /// scipy: `d, c = 1.02, 1.959963984540054; s1 = d / (c + norm.ppf(0.8));
    /// v = np.hypot(1, s1); norm.cdf((d - c*s1)/v) + norm.cdf((-d - c*s1)/v)` =
    /// 0.6649578502601958 (0.6133 + 0.0517 of the opposite sign), and
    /// `norm.cdf(d/s1 - c) + norm.cdf(-d/s1 - c)` = 0.8000009605622266: the power at d̂.
    #[test]
    fn predictive_power_by_hand() {
        let (d, c) = (1.02, 1.959963984540054);
        let s1 = d / (c + normal_quantile(0.8));
        let pp = predictive_power(d, 1.0, s1, c);
        assert!((pp - 0.6649578502601958).abs() < 1e-12, "{pp}");
        assert!((predictive_power(-d, 1.0, s1, c) - pp).abs() < 1e-15);
        assert!((power_at(d, s1, c) - 0.8000009605622266).abs() < 1e-12);
        // Scale-free: the same in any unit.
        assert!((predictive_power(0.01 * d, 0.01, 0.01 * s1, c) - pp).abs() < 1e-12);
        // No uncertainty today: the power at d̂.
        assert!((predictive_power(d, 0.0, s1, c) - power_at(d, s1, c)).abs() < 1e-15);
    }

    #[test]
    fn power_and_mde_by_hand() {
        // Reference: Python 3's statistics.NormalDist(): inv_cdf(0.975) = 1.9599639845400536,
        // inv_cdf(0.8) = 0.8416212335729144, their sum 2.801585218112968, and the far tail
        // cdf(−2.801585218112968 − 1.9599639845400536) = 9.60562226537398e-07.
        assert!((mde_multiplier(0.05, 0.8) - 2.801585218112968).abs() < 1e-12);
        // At δ = MDE the power is 0.8 plus that far tail.
        let p = power(2.801585218112968 * 0.01, 0.01, 0.05);
        assert!((p - (0.8 + 9.60562226537398e-07)).abs() < 1e-12, "{p}");
    }

    #[test]
    fn a_question_cost_moves_t_star() {
        // σ²_q = 0.01, σ²_t = 0.04, σ²_r = 0, c_T = 1, c_R = 0, target SE 0.001 (s² = 1e-6).
        // A question at T costs k = T + c_Q and needs Q = ⌈(0.01 + 0.04/T)/1e-6⌉.
        // c_Q = 0: T = 1 costs 50,000·1 = 50,000, T = 2 costs 30,000·2 = 60,000: T* = 1.
        // c_Q = 4: v·k = (0.01 + 0.04/T)(T + 4) is least at T = 2 sqrt(c_Q) = 4:
        // T = 3: 23,334·7 = 163,338; T = 4: 20,000·8 = 160,000; T = 5: 18,000·9 = 162,000.
        let mut p = one(0.01, 0.04, 0.0, 1.0, 0.0, 1_000_000);
        let best = &p.search(Goal::TargetSe(0.001)).unwrap()[0];
        assert_eq!(
            (best.trajectories, best.reads, best.questions),
            (1, 1, 50_000)
        );
        assert!((best.cost.unwrap() - 50_000.0).abs() < 1e-6);
        p.strata[0].costs.as_mut().unwrap().question = 4.0;
        let all = p.search(Goal::TargetSe(0.001)).unwrap();
        assert_eq!(
            (all[0].trajectories, all[0].reads, all[0].questions),
            (4, 1, 20_000)
        );
        assert!((all[0].cost.unwrap() - 160_000.0).abs() < 1e-6);
        // (The neighbours up to one question of rounding: 0.018/1e-6 is not exact in f64.)
        let at = |t: usize| p.best_at(Goal::TargetSe(0.001), t, 1).unwrap();
        assert!((at(3).cost.unwrap() - 163_338.0).abs() <= 7.0);
        assert!((at(5).cost.unwrap() - 162_000.0).abs() <= 9.0);
    }
}
