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
    pub ci: &'static str,
    pub p: &'static str,
    pub adjusted: &'static str,
    pub simultaneous: &'static str,
    pub ranks: &'static str,
    pub best_share: &'static str,
}

/// The critical values of the family on its degrees of freedom: the marginal t, the
/// multivariate-t quantile of the maximum |t| under the bootstrap's correlations, the same for
/// independent equal-variance systems (Tukey's studentized range / √2, or Dunnett's), the
/// simultaneous value the intervals use (the larger of those two, kept between the marginal t
/// and Bonferroni's), and Bonferroni's t (which is also Holm's first step).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalValues {
    /// The smallest Satterthwaite df of the family's pairs; `null` (normal reference) when
    /// every pair's SE is 0.
    pub df: Option<f64>,
    pub marginal: f64,
    /// `null` when no pair of the family varies.
    pub max_t: Option<f64>,
    pub independent: f64,
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
    /// Mean of the stratum means (equal weights unless `--weights`), as `stats variance
    /// --arm NAME`.
    pub estimate: f64,
    pub se: f64,
    /// Welch–Satterthwaite df of the SE; `null` when the SE is 0.
    pub df: Option<f64>,
    /// estimate ± t·SE, or Wilson's score interval for a binary outcome (`methods.ci`).
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
    /// Welch–Satterthwaite df of the SE; `null` when the SE is 0.
    pub df: Option<f64>,
    /// estimate ± t·SE, or Newcombe's paired score interval for a binary outcome
    /// (`methods.ci`).
    pub ci: Interval,
    /// The same at the family's simultaneous critical value c.
    pub ci_simultaneous: Interval,
    /// estimate / SE; `null` when SE is 0.
    pub t: Option<f64>,
    /// Two-sided p: the Wald t test on `df`, or the exact McNemar test (`methods.p`).
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

/// The test a next study is planned for: what resolves a pair, in words, and its critical
/// value c (the pair is resolved when |estimate| / SE exceeds it).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTest {
    pub name: String,
    pub critical_value: f64,
}

impl PlannedTest {
    /// Holm's step-down test at level `alpha` over a family of `m` pairs (what `resolved`
    /// means), planned at its first step: Bonferroni at level α/m, critical value `bonferroni`
    /// (z_{1−α/(2m)} for the Wald z test). Holm resolves a pair whenever Bonferroni does
    /// (p ≤ α/m makes every Holm step up to it pass: (m − i + 1)·p_(i) ≤ m·p ≤ α), so the
    /// power planned at this c is a lower bound on Holm's. The family's max-t critical value
    /// is smaller (2.713 against Bonferroni's 2.807 for 10 pairs at α = 0.05): planning at it
    /// gives Bonferroni only Φ(2.713 + z_0.8 − 2.807) = 0.773 of the 0.80 asked for.
    pub fn holm_first_step(m: usize, alpha: f64, bonferroni: f64) -> Self {
        // α to 6 decimals, as a person writes it (0.05, not 0.050000000000000044).
        let alpha = (alpha * 1e6).round() / 1e6;
        let name = if m <= 1 {
            format!("the pair's two-sided Wald test at level {alpha} (a family of one pair)")
        } else {
            format!("Holm over the family's {m} pairs at its first step (Bonferroni, level {alpha}/{m})")
        };
        PlannedTest {
            name,
            critical_value: bonferroni,
        }
    }
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
    /// Questions for `power` at the planned test's critical value c, the strata in today's
    /// proportions and the same trajectories and reads per question:
    /// ⌈Q · ((c + z_power) / |z|)²⌉.
    pub questions_needed: u64,
    /// The power asked for (`--power`), at the difference as estimated.
    pub power: f64,
    /// The test the next study is planned for, in words ([`PlannedTest`]): Holm over the
    /// family, at its first step (Bonferroni).
    pub test: String,
    /// The planned test's critical value c: Bonferroni's z_{1−α/(2m)} on the normal
    /// reference, as `stats plan` plans (the next study's questions, not today's, set its
    /// degrees of freedom); the marginal z for a family of one pair.
    pub critical_value: f64,
    /// The SE that resolves the pair with `power` if the difference is really `estimate`:
    /// s₁ = |estimate| / (critical_value + z_power). `stats plan --target-se` of this SE is
    /// the allocation below.
    pub target_se: f64,
    /// The power at s₁ if the difference is exactly `estimate`:
    /// Φ(|d̂|/s₁ − c) + Φ(−|d̂|/s₁ − c) (`power` plus the far tail).
    pub power_at_estimate: f64,
    /// The same averaged over today's uncertainty in the difference (flat prior, a new
    /// study independent of today's): with s₀ = `se`,
    /// Φ((|d̂| − c s₁)/√(s₀² + s₁²)) + Φ((−|d̂| − c s₁)/√(s₀² + s₁²))
    /// ([`crate::allocation::planner::predictive_power`]).
    pub predictive_power: f64,
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
    /// The strata's weights (in `strata`'s order, Σ = 1) when `--weights` gave them; absent
    /// for equal weights. Every system's and pair's estimate, SE, df and bootstrap replicate
    /// combines the strata with them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
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
    /// Whether the text tables list every pair however many systems (a display choice, not
    /// in the JSON; the JSON and CSV always hold every pair).
    #[serde(skip)]
    pub all_pairs: bool,
}

impl Report for CompareReport {
    fn engine(&self) -> Engine {
        self.engine.clone()
    }
}

impl CompareReport {
    /// Indices into `systems` from the highest estimate to the lowest; equal estimates keep
    /// the panel's arm order.
    pub fn by_estimate(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.systems.len()).collect();
        // total_cmp: estimates are finite here, and a stable sort keeps ties in arm order.
        order.sort_by(|&i, &j| {
            self.systems[j]
                .estimate
                .total_cmp(&self.systems[i].estimate)
        });
        order
    }

    /// Indices into `pairs` of the pairs a reader of a large family looks at first: the
    /// leader (highest estimate) against every other system of the top group, and each
    /// system against the next one by estimate. At most (|top group| − 1) + (k − 1) pairs,
    /// in the family's order. A family against a reference has k − 1 pairs and keeps them
    /// all.
    pub fn headline_pairs(&self) -> Vec<usize> {
        if self.family.reference.is_some() {
            return (0..self.pairs.len()).collect();
        }
        let order = self.by_estimate();
        let name = |i: usize| self.systems[i].name.as_str();
        let mut wanted: Vec<(&str, &str)> =
            order.windows(2).map(|w| (name(w[0]), name(w[1]))).collect();
        if let Some(&leader) = order.first() {
            wanted.extend(
                self.top_group
                    .iter()
                    .filter(|t| t.as_str() != name(leader))
                    .map(|t| (name(leader), t.as_str())),
            );
        }
        (0..self.pairs.len())
            .filter(|&i| {
                let (a, b) = (self.pairs[i].a.as_str(), self.pairs[i].b.as_str());
                wanted
                    .iter()
                    .any(|&(x, y)| (x == a && y == b) || (x == b && y == a))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocation::planner::power_at;
    use crate::resample::summary::normal_quantile;

    /// Ten pairs at α = 0.05: Bonferroni's c = Φ⁻¹(1 − 0.025/10) = 2.807033768343811
    /// (scipy.stats.norm.ppf). A study planned at the max-t value 2.713 for 80% power has
    /// Φ(2.713 + z_0.8 − 2.807) + Φ(−2.713 − z_0.8 − 2.807) = 0.7726454862371039 at Holm's
    /// first step (`x = 2.713 + norm.ppf(0.8); b = norm.ppf(1 - 0.025/10);
    /// norm.cdf(x - b) + norm.cdf(-x - b)`); planned at Bonferroni's it has the 0.80 asked
    /// for (plus the far tail).
    #[test]
    fn planning_at_holms_first_step_keeps_the_power_asked_for() {
        let bonf = normal_quantile(1.0 - 0.025 / 10.0);
        assert!((bonf - 2.807033768343811).abs() < 1e-12);
        let planned = PlannedTest::holm_first_step(10, 0.050000000000000044, bonf);
        assert_eq!(
            planned.name,
            "Holm over the family's 10 pairs at its first step (Bonferroni, level 0.05/10)"
        );
        let (d, z80) = (0.03, normal_quantile(0.8));
        let at_max_t = d / (2.713 + z80);
        assert!((power_at(d, at_max_t, bonf) - 0.7726454862371039).abs() < 1e-12);
        let at_bonf = d / (planned.critical_value + z80);
        let p = power_at(d, at_bonf, bonf);
        assert!(p >= 0.8 && p - 0.8 < 1e-6, "{p}");
        assert_eq!(
            PlannedTest::holm_first_step(1, 0.05, 1.96).name,
            "the pair's two-sided Wald test at level 0.05 (a family of one pair)"
        );
    }
}
