//! Anytime-valid confidence sequences for a panel's outcome (an arm's mean or a contrast
//! B − A) as questions arrive: a [`Sequence`] is updated with one question-level
//! observation at a time (the question's mean over its trajectories and reads, in its
//! stratum) and asked for the interval at the current number of questions. The interval
//! holds at every look at once: P(∃ t: θ ∉ C_t) ≤ α, so a user (or the runner, `stats run
//! --until`) may look after every question and stop whenever it likes.
//!
//! The state is small (a dozen numbers per stratum) and serializable, so a runner can save it
//! with its progress and resume.
//!
//! # The sequences (docs/METHODS.md, "Sequential monitoring")
//!
//! Two ways to combine D strata into a sequence for θ = Σ_d w_d μ_d:
//!
//! * rounds ([`rounds`], [`Sequence::in_rounds`]): one sequence at level α on the rounds'
//!   weighted means Y_k = Σ_d w_d · (mean of the k-th block of m_d questions of d); a look
//!   that falls mid-round gets the sequence at the last complete round.
//! * union ([`Sequence::new`]): each stratum d keeps its own two-sided sequence at level
//!   α/D, and θ gets C_t = [Σ_d w_d L_d, Σ_d w_d U_d]: by the union bound every stratum's
//!   sequence holds at every time with probability ≥ 1 − α, and then θ lies in C_t. A
//!   stratum without observations contributes its whole range (or, without a range, makes
//!   the interval unbounded).
//!
//! * Bounded observations ([`Bound::Range`], X ∈ [a, b]): the predictable plug-in
//!   empirical-Bernstein sequence (PrPl-EB) of Waudby-Smith & Ramdas (2023, JRSS-B,
//!   Theorem 2 and eqs. (13)–(15)). On the unit scale Z = (X − a)/(b − a):
//!   μ̂_t = (1/2 + Σ_{i≤t} Z_i)/(t + 1), σ̂²_t = (1/4 + Σ_{i≤t} (Z_i − μ̂_i)²)/(t + 1),
//!   λ_t = min(√(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), 1/2),
//!   v_t = 4 (Z_t − μ̂_{t−1})², ψ_E(λ) = (−log(1 − λ) − λ)/4, and
//!   C_t = (Σ λ_i Z_i ± (log(2/α) + Σ v_i ψ_E(λ_i))) / Σ λ_i, mapped back to [a, b] and
//!   intersected with it.
//! * Unbounded observations with a stated sub-Gaussian scale σ ([`Bound::SubGaussian`]):
//!   the two-sided normal-mixture sequence of Howard, Ramdas, McAuliffe & Sekhon (2021,
//!   Ann. Statist., eq. (14)): X̄_t ± √((tσ² + ρ) log((tσ² + ρ)/(ρ α²)))/t, with ρ chosen
//!   to make the boundary tightest at `horizon` observations,
//!   ρ = σ² · horizon / (2 log(1/α) + log(1 + 2 log(1/α))).
//!
//! Assumptions: within a stratum the questions arrive independently from one distribution
//! (the arrival order carries no information about the scores), and the observation is the
//! question's mean, so trajectories and reads enter only through it.

pub mod gate;
pub mod monitor;
pub mod report;
pub mod rounds;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

pub use monitor::{monitoring_error, MonitoringDesign, MonitoringError};
pub use rounds::{RoundPlan, StrataRule, MIN_ROUNDS};

/// The largest PrPl-EB bet λ (Waudby-Smith & Ramdas's truncation c = 1/2).
pub(crate) const MAX_BET: f64 = 0.5;

/// What is known about the observations before they arrive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Bound {
    /// Every observation lies in [lo, hi] (a score in [0, 1]; a contrast of two such scores
    /// in [−1, 1]): the empirical-Bernstein betting sequence.
    Range {
        /// The smallest value an observation can take.
        lo: f64,
        /// The largest value an observation can take.
        hi: f64,
    },
    /// Observations are σ-sub-Gaussian about their mean (a variance bound σ² for roughly
    /// normal scores): the normal-mixture sequence, tightest near `horizon` observations of
    /// a stratum.
    SubGaussian {
        /// The sub-Gaussian scale σ.
        sigma: f64,
        /// The number of a stratum's observations the boundary is tuned for (the plan's
        /// maximum, fixed before any data is seen).
        horizon: u64,
    },
}

impl Bound {
    /// Checks the bound's domain.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `range` (finite, lo < hi) or `sigma` (finite and positive,
    /// a horizon of at least 1).
    pub fn check(&self) -> Result<()> {
        match *self {
            Bound::Range { lo, hi } => {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    return Err(Error::setting(
                        "range",
                        format!("{lo},{hi}: expected LO,HI with finite LO < HI, e.g. -1,1"),
                    ));
                }
            }
            Bound::SubGaussian { sigma, horizon } => {
                if !(sigma.is_finite() && sigma > 0.0) {
                    return Err(Error::setting(
                        "sigma",
                        format!("{sigma}: expected a positive sub-Gaussian scale, e.g. 0.5"),
                    ));
                }
                if horizon == 0 {
                    return Err(Error::setting(
                        "sigma",
                        "the horizon the boundary is tuned for must be at least 1 question",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One stratum's running sums. Everything the sequence needs, so it can be saved and
/// restored between waves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StratumSums {
    /// The stratum's name.
    pub name: String,
    /// Its weight w_d in the combined estimand (Σ w_d = 1).
    pub weight: f64,
    /// Observations so far, t.
    pub n: u64,
    /// Σ X_i (original scale): the sample mean is sum / n.
    pub sum: f64,
    /// Σ Z_i (unit scale), for μ̂_t.
    pub sum_z: f64,
    /// Σ (Z_i − μ̂_i)², for σ̂²_t.
    pub sum_sq_dev: f64,
    /// Σ λ_i.
    pub sum_lambda: f64,
    /// Σ λ_i Z_i.
    pub sum_lambda_z: f64,
    /// Σ v_i ψ_E(λ_i).
    pub sum_penalty: f64,
}

/// An interval of the sequence: the estimate (the weighted mean of the strata's sample
/// means, as the fixed-n analysis computes it; `None` while a stratum has no observation)
/// and the ends (`None`: unbounded, a stratum without observations and no range).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Questions observed so far, over all strata.
    pub questions: u64,
    /// Σ_d w_d X̄_d; `None` while a stratum has none.
    pub estimate: Option<f64>,
    /// The lower end Σ_d w_d L_d; `None`: unbounded.
    pub lower: Option<f64>,
    /// The upper end Σ_d w_d U_d; `None`: unbounded.
    pub upper: Option<f64>,
    /// In rounds, the complete rounds the interval is of (its estimate is their mean);
    /// `None` for the union bound.
    pub rounds: Option<u64>,
}

impl Interval {
    /// Half the width, `None` when unbounded.
    pub fn half_width(&self) -> Option<f64> {
        Some((self.upper? - self.lower?) / 2.0)
    }

    /// Whether the interval lies wholly above `margin` or wholly below `−margin` (margin
    /// ≥ 0; with 0, whether it excludes 0): a difference larger than the margin is shown.
    pub fn excludes(&self, margin: f64) -> bool {
        self.lower.is_some_and(|l| l > margin) || self.upper.is_some_and(|u| u < -margin)
    }
}

/// An anytime-valid confidence sequence for Σ_d w_d μ_d, updated one question at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    /// What bounds the observations.
    pub bound: Bound,
    /// The confidence level 1 − α, simultaneous over every look.
    pub level: f64,
    /// Each stratum's sums, in the order given.
    pub strata: Vec<StratumSums>,
    /// In rounds: the rounds' state (the union bound: `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<Rounds>,
}

/// The state of a sequence in rounds: each stratum's questions of the rounds not yet
/// complete, and the one sequence on the complete rounds' weighted means Y_k.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    /// m_d, the questions of stratum d in a round.
    pub sizes: Vec<u64>,
    /// What bounds a round mean Y_k: the scores' range, or the sub-Gaussian scale
    /// σ·√(Σ_d w_d²/m_d) tuned to the planned rounds.
    pub bound: Bound,
    /// `pending[d][j]`: the sum of stratum d's questions in round `complete + j`.
    pub pending: Vec<Vec<f64>>,
    /// Rounds complete, k.
    pub complete: u64,
    /// The sum of each stratum's questions in the complete rounds, for the estimate
    /// Σ_d w_d · counted_d / (k m_d) (the fixed-n estimate of the questions counted).
    pub counted: Vec<f64>,
    /// The sequence's sums over Y_1 … Y_k (name `rounds`, weight 1).
    pub means: StratumSums,
}

impl Sequence {
    /// A sequence at `level` over the strata `strata` (name, weight w_d; the weights must
    /// sum to 1), before any observation.
    ///
    /// # Errors
    /// [`Error::Setting`] for a level outside (0, 1) (`confidence`), a bad bound, no strata or
    /// weights that are not positive or do not sum to 1 (`weights`).
    pub fn new(strata: &[(String, f64)], bound: Bound, level: f64) -> Result<Sequence> {
        if !(level > 0.0 && level < 1.0) {
            return Err(Error::setting(
                "confidence",
                format!("{level} must be between 0 and 1 (exclusive), e.g. 0.95"),
            ));
        }
        bound.check()?;
        let total: f64 = strata.iter().map(|s| s.1).sum();
        if strata.is_empty()
            || strata.iter().any(|s| !(s.1.is_finite() && s.1 > 0.0))
            || (total - 1.0).abs() > 1e-9
        {
            return Err(Error::setting(
                "weights",
                "the strata's weights must be positive and sum to 1",
            ));
        }
        Ok(Sequence {
            bound,
            level,
            strata: strata
                .iter()
                .map(|(name, weight)| StratumSums::empty(name, *weight))
                .collect(),
            rounds: None,
        })
    }

    /// A sequence in rounds of `sizes` (m_d) questions of each stratum (see [`rounds`]),
    /// at `level` with no union bound. With a sub-Gaussian bound, σ is the scale of one
    /// question mean in every stratum, so a round mean is σ·√(Σ_d w_d²/m_d)-sub-Gaussian;
    /// its boundary is tuned to `planned` rounds (the plan's K).
    ///
    /// # Errors
    /// Those of [`Sequence::new`], and [`Error::Setting`] (`strata`) for round sizes that
    /// are not one positive number per stratum.
    pub fn in_rounds(
        strata: &[(String, f64)],
        bound: Bound,
        level: f64,
        sizes: &[u64],
        planned: u64,
    ) -> Result<Sequence> {
        let mut seq = Sequence::new(strata, bound, level)?;
        if sizes.len() != strata.len() || sizes.contains(&0) {
            return Err(Error::setting(
                "strata",
                format!(
                    "rounds of {sizes:?} questions do not fit {} strata: expected one positive \
                     number per stratum",
                    strata.len()
                ),
            ));
        }
        let round_bound = match bound {
            Bound::Range { .. } => bound,
            Bound::SubGaussian { sigma, .. } => Bound::SubGaussian {
                sigma: sigma
                    * strata
                        .iter()
                        .zip(sizes)
                        .map(|((_, w), &m)| w * w / m as f64)
                        .sum::<f64>()
                        .sqrt(),
                horizon: planned.max(1),
            },
        };
        seq.rounds = Some(Rounds {
            sizes: sizes.to_vec(),
            bound: round_bound,
            pending: vec![Vec::new(); strata.len()],
            complete: 0,
            counted: vec![0.0; strata.len()],
            means: StratumSums::empty("rounds", 1.0),
        });
        Ok(seq)
    }

    /// The error level of one stratum's two-sided sequence, α/D (in rounds, the one
    /// sequence's α).
    fn stratum_alpha(&self) -> f64 {
        let d = if self.rounds.is_some() {
            1
        } else {
            self.strata.len()
        };
        (1.0 - self.level) / d as f64
    }

    /// Observations so far, over all strata.
    pub fn questions(&self) -> u64 {
        self.strata.iter().map(|s| s.n).sum()
    }

    /// Adds the observation `x` (a question's mean) of stratum `stratum` (its index in the
    /// order given to [`Sequence::new`]).
    ///
    /// # Errors
    /// [`Error::Data`] for an unknown stratum, a value that is not finite, or one outside
    /// the range (the sequence would not be valid).
    pub fn observe(&mut self, stratum: usize, x: f64) -> Result<()> {
        let alpha = self.stratum_alpha();
        let bound = self.bound;
        let Some(s) = self.strata.get_mut(stratum) else {
            return Err(Error::Data(format!(
                "stratum {stratum} is not one of the sequence's {} strata",
                self.strata.len()
            )));
        };
        if !x.is_finite() {
            return Err(Error::Data(format!(
                "{}: an observation of {x} is not a score",
                s.name
            )));
        }
        if let Bound::Range { lo, hi } = bound {
            if !(lo..=hi).contains(&x) {
                return Err(Error::Data(format!(
                    "{}: a question's mean of {x} lies outside the range [{lo}, {hi}] the \
                     sequence assumes; give the scores' range",
                    s.name
                )));
            }
        }
        let Some(r) = self.rounds.as_mut() else {
            s.update(bound, alpha, x);
            return Ok(());
        };
        // In rounds the stratum keeps only its count and sum; its question joins its round.
        let m = r.sizes[stratum];
        let round = s.n / m;
        s.n += 1;
        s.sum += x;
        let pending = &mut r.pending[stratum];
        let j = (round - r.complete) as usize;
        if pending.len() <= j {
            pending.resize(j + 1, 0.0);
        }
        pending[j] += x;
        // Rounds complete in order: round k once every stratum has (k + 1)·m_d questions.
        while self
            .strata
            .iter()
            .zip(&r.sizes)
            .all(|(s, &m)| s.n >= (r.complete + 1) * m)
        {
            let mut y = 0.0;
            for (d, (s, p)) in self.strata.iter().zip(&mut r.pending).enumerate() {
                y += s.weight * (p[0] / r.sizes[d] as f64);
                r.counted[d] += p.remove(0);
            }
            r.means.update(r.bound, alpha, y);
            r.complete += 1;
        }
        Ok(())
    }

    /// Stratum `d`'s interval (L_d, U_d) at its current n and level α/D; `None` for an
    /// unbounded end.
    pub fn stratum_interval(&self, d: usize) -> (Option<f64>, Option<f64>) {
        let alpha = (1.0 - self.level) / self.strata.len() as f64;
        self.strata[d].ends(self.bound, alpha)
    }

    /// The sequence's interval for Σ_d w_d μ_d now: in rounds, at the last complete round.
    pub fn interval(&self) -> Interval {
        if let Some(r) = &self.rounds {
            let k = r.complete;
            let (lower, upper) = r.means.ends(r.bound, self.stratum_alpha());
            return Interval {
                questions: self.questions(),
                estimate: (k > 0).then(|| {
                    self.strata
                        .iter()
                        .zip(&r.counted)
                        .zip(&r.sizes)
                        .fold(0.0, |a, ((s, c), &m)| a + s.weight * (c / (k * m) as f64))
                }),
                lower,
                upper,
                rounds: Some(k),
            };
        }
        let mut lower = Some(0.0);
        let mut upper = Some(0.0);
        let mut estimate = Some(0.0);
        for (d, s) in self.strata.iter().enumerate() {
            let (l, u) = self.stratum_interval(d);
            lower = lower.zip(l).map(|(a, l)| a + s.weight * l);
            upper = upper.zip(u).map(|(a, u)| a + s.weight * u);
            estimate = estimate
                .zip((s.n > 0).then(|| s.sum / s.n as f64))
                .map(|(a, m)| a + s.weight * m);
        }
        Interval {
            questions: self.questions(),
            estimate,
            lower,
            upper,
            rounds: None,
        }
    }
}

impl StratumSums {
    /// The sums before any observation.
    fn empty(name: &str, weight: f64) -> StratumSums {
        StratumSums {
            name: name.to_string(),
            weight,
            n: 0,
            sum: 0.0,
            sum_z: 0.0,
            sum_sq_dev: 0.0,
            sum_lambda: 0.0,
            sum_lambda_z: 0.0,
            sum_penalty: 0.0,
        }
    }

    /// Adds the observation `x` (checked to lie in a range bound) to a sequence at level
    /// α = `alpha`.
    fn update(&mut self, bound: Bound, alpha: f64, x: f64) {
        let s = self;
        if let Bound::Range { lo, hi } = bound {
            let z = (x - lo) / (hi - lo);
            let t = (s.n + 1) as f64;
            // μ̂_{t−1} and σ̂²_{t−1}: predictable, from the observations before this one.
            let mean_before = (0.5 + s.sum_z) / t;
            let var_before = (0.25 + s.sum_sq_dev) / t;
            let lambda = bet(alpha, var_before, t);
            let v = 4.0 * (z - mean_before).powi(2);
            s.sum_lambda += lambda;
            s.sum_lambda_z += lambda * z;
            s.sum_penalty += v * psi_e(lambda);
            s.sum_z += z;
            // μ̂_t includes Z_t (the paper's σ̂² sums (Z_i − μ̂_i)²).
            let mean_now = (0.5 + s.sum_z) / (t + 1.0);
            s.sum_sq_dev += (z - mean_now).powi(2);
        }
        s.n += 1;
        s.sum += x;
    }

    /// The two-sided sequence's ends (L, U) at level α = `alpha` after the observations so
    /// far; `None` for an unbounded end.
    fn ends(&self, bound: Bound, alpha: f64) -> (Option<f64>, Option<f64>) {
        let s = self;
        match bound {
            Bound::Range { lo, hi } => {
                if s.n == 0 {
                    return (Some(lo), Some(hi));
                }
                let centre = s.sum_lambda_z / s.sum_lambda;
                let radius = ((2.0 / alpha).ln() + s.sum_penalty) / s.sum_lambda;
                let scale = |z: f64| lo + (hi - lo) * z.clamp(0.0, 1.0);
                (Some(scale(centre - radius)), Some(scale(centre + radius)))
            }
            Bound::SubGaussian { sigma, horizon } => {
                if s.n == 0 {
                    return (None, None);
                }
                let t = s.n as f64;
                let r = normal_mixture_radius(t, sigma, horizon as f64, alpha);
                let mean = s.sum / t;
                (Some(mean - r), Some(mean + r))
            }
        }
    }
}

/// The PrPl-EB bet λ_t = min(√(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), 1/2) at the t-th
/// observation.
fn bet(alpha: f64, var_before: f64, t: f64) -> f64 {
    (2.0 * (2.0 / alpha).ln() / (var_before * t * (1.0 + t).ln()))
        .sqrt()
        .min(MAX_BET)
}

/// ψ_E(λ) = (−log(1 − λ) − λ)/4, the empirical-Bernstein penalty of a bet λ ∈ [0, 1).
pub(crate) fn psi_e(lambda: f64) -> f64 {
    (-(-lambda).ln_1p() - lambda) / 4.0
}

/// The two-sided normal-mixture radius of the mean after `t` σ-sub-Gaussian observations,
/// √((tσ² + ρ) log((tσ² + ρ)/(ρ α²)))/t, with ρ tuned to `horizon` observations
/// (Howard et al. 2021, eq. (14) and their Proposition 3's tuning).
pub fn normal_mixture_radius(t: f64, sigma: f64, horizon: f64, alpha: f64) -> f64 {
    let l = (1.0 / alpha).ln();
    let rho = sigma * sigma * horizon / (2.0 * l + (1.0 + 2.0 * l).ln());
    let v = t * sigma * sigma + rho;
    (v * (v / (rho * alpha * alpha)).ln()).sqrt() / t
}

#[cfg(test)]
mod tests;
