//! Synthetic evaluation panels with known structure.
//!
//! Two models:
//!
//! **Bounded paired model** ([`simulate_panel`]), for realistic F1/EM panels. For stratum d,
//! question q, trajectory t, read r and arm a (arm 0 is the baseline, e.g. `open`):
//!
//! ```text
//! z_a,qtr = μ_d + α_q + β_qt + ε_qtr                      (shared by all arms)
//!         + 1[a ≥ 1] · (δ + γ_a,q + η_a,qt + ξ_a,qtr)     (arm a's own contrast effects)
//! f1 = min(1, max(0, z))          em = 1[z ≥ 1]  (i.e. f1 = 1)
//! ```
//!
//! with independent α ~ N(0, σ_q²), β ~ N(0, σ_t²), ε ~ N(0, σ_r²), γ ~ N(0, τ_q²),
//! η ~ N(0, τ_t²), ξ ~ N(0, τ_r²). Arms are paired on (q, t, r): the shared terms are what
//! the two policies have in common (question difficulty, the shared first query and its
//! search result, the reader's behaviour on the question), so on the latent scale the
//! contrast z_a − z_0 = δ + γ + η + ξ has variance components exactly (τ_q², τ_t², τ_r²).
//! The observed f1 is the latent score censored to [0, 1] (a two-limit Tobit model): it has
//! point masses at 0 (wrong answer) and 1 (exactly right), like real answer F1, and
//! em = 1 exactly when f1 = 1, so EM ≤ F1 always holds as it does for the real metrics.
//! Censoring shrinks variances and makes the observed contrast's components functions of
//! all parameters, so they are not τ²; use [`simulate_normal_panel`] when exact true
//! components are needed.
//!
//! **Gaussian nested model** ([`simulate_normal_panel`]): y_qtr = μ + a_q + b_qt + e_qtr with
//! no censoring; its true components are exactly σ_q², σ_t², σ_r².
//!
//! Every effect is drawn from its own keyed stream (see [`crate::rng::keyed`]), so results depend
//! only on the seed and the indices: a smaller design is an exact subset of a larger one
//! with the same seed, and the output is identical on every platform.

use crate::rng::domain::sim as tag;
use crate::rng::KeyedStream;
use crate::{Error, Result};

/// Standard deviations of the three nested levels (latent scale).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Sds {
    /// Question level.
    pub q: f64,
    /// Trajectory within question.
    pub t: f64,
    /// Read within trajectory.
    pub r: f64,
}

/// Specification of a bounded paired panel (see the module documentation for the model).
#[derive(Debug, Clone, PartialEq)]
pub struct SimSpec {
    /// Strata (datasets) and their numbers of questions, in output order.
    pub strata: Vec<(String, usize)>,
    /// Trajectories per question and arm (T).
    pub trajectories: usize,
    /// Reads per trajectory (R).
    pub reads: usize,
    /// Arm names; the first is the baseline, every later arm gets its own contrast effects.
    pub arms: Vec<String>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Latent mean μ_d of the baseline arm: one value for all strata, or one per stratum.
    pub means: Vec<f64>,
    /// Latent mean contrast δ of each later arm against the baseline.
    pub effect: f64,
    /// SDs (σ_q, σ_t, σ_r) of the effects shared by all arms.
    pub shared: Sds,
    /// SDs (τ_q, τ_t, τ_r) of each later arm's own contrast effects.
    pub contrast: Sds,
}

/// The most rows a simulated panel or ledger may have (about 2 GB in memory): the size
/// is checked against it before anything is allocated.
pub const MAX_ROWS: u128 = 20_000_000;

/// Refuses a simulated file of `rows` rows above [`MAX_ROWS`], saying how many it would be.
///
/// # Errors
/// [`Error::Usage`] naming the file kind and its size.
pub fn check_rows(what: &str, rows: u128) -> Result<()> {
    if rows > MAX_ROWS {
        return Err(Error::Usage(format!(
            "the simulated {what} would have {rows} rows; at most {MAX_ROWS} are allowed (use fewer questions, trajectories, reads, arms or calls)"
        )));
    }
    Ok(())
}

/// Σ_d Q_d as u128 (no overflow for any `usize` counts).
pub(crate) fn total_questions(strata: &[(String, usize)]) -> u128 {
    strata.iter().map(|(_, q)| *q as u128).sum()
}

impl SimSpec {
    /// Checks the specification: at least one stratum with at least one question, T ≥ 1,
    /// R ≥ 1, one or more distinct arm names, means of length 1 or one per stratum,
    /// finite means and effect, finite non-negative SDs, and at most [`MAX_ROWS`] panel rows
    /// (Σ Q_d · T · R · arms).
    ///
    /// # Errors
    /// [`Error::Usage`] naming the offending field.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Usage(m));
        if self.strata.is_empty() {
            return bad("at least one dataset is needed".into());
        }
        for (name, q) in &self.strata {
            if *q == 0 {
                return bad(format!("dataset {name} has 0 questions"));
            }
        }
        if self.trajectories == 0 || self.reads == 0 {
            return bad("trajectories and reads must be at least 1".into());
        }
        if self.arms.is_empty() {
            return bad("at least one arm is needed".into());
        }
        for (i, a) in self.arms.iter().enumerate() {
            if a.is_empty() || self.arms[..i].contains(a) {
                return bad(format!(
                    "arm names must be distinct and non-empty (got {a:?})"
                ));
            }
        }
        if self.means.len() != 1 && self.means.len() != self.strata.len() {
            return bad(format!(
                "give one mean or one per dataset ({} datasets, {} means)",
                self.strata.len(),
                self.means.len()
            ));
        }
        if !self
            .means
            .iter()
            .chain([&self.effect])
            .all(|m| m.is_finite())
        {
            return bad("means and effect must be finite".into());
        }
        for (what, s) in [("shared", self.shared), ("contrast", self.contrast)] {
            if ![s.q, s.t, s.r].iter().all(|v| v.is_finite() && *v >= 0.0) {
                return bad(format!("{what} SDs must be finite and non-negative"));
            }
        }
        check_rows(
            "panel",
            total_questions(&self.strata)
                * self.trajectories as u128
                * self.reads as u128
                * self.arms.len() as u128,
        )
    }

    /// The latent mean of the baseline arm in stratum `d`.
    pub fn mean(&self, d: usize) -> f64 {
        if self.means.len() == 1 {
            self.means[0]
        } else {
            self.means[d]
        }
    }
}

/// One simulated read: the panel's long format.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SimRow {
    pub dataset: String,
    pub question: String,
    pub trajectory: u32,
    pub read: u32,
    pub arm: String,
    pub f1: f64,
    pub em: f64,
}

/// Question id `<dataset>-<index>`, 1-based, zero-padded to at least 4 digits
/// (`hotpotqa-0001`).
pub fn question_id(dataset: &str, index: usize, count: usize) -> String {
    let width = count.to_string().len().max(4);
    format!("{dataset}-{:0width$}", index + 1)
}

fn draw(seed: u64, tags: &[u64]) -> f64 {
    KeyedStream::new(seed, tags).normal()
}

/// Simulates the bounded paired panel of `spec` (module docs give the model).
///
/// Rows come ordered by stratum, question, trajectory, read, arm; there are
/// Σ_d Q_d · T · R · (number of arms) of them. `f1` is rounded to 6 decimals.
///
/// # Errors
/// [`Error::Usage`] when [`SimSpec::validate`] fails.
pub fn simulate_panel(spec: &SimSpec) -> Result<Vec<SimRow>> {
    spec.validate()?;
    let (t_n, r_n) = (spec.trajectories, spec.reads);
    let total: usize = spec.strata.iter().map(|s| s.1).sum::<usize>() * t_n * r_n * spec.arms.len();
    let mut rows = Vec::with_capacity(total);
    let seed = spec.seed;
    for (d, (name, q_n)) in spec.strata.iter().enumerate() {
        let mu = spec.mean(d);
        let d = d as u64;
        for q in 0..*q_n {
            let qid = question_id(name, q, *q_n);
            let qi = q as u64;
            let alpha = spec.shared.q * draw(seed, &[tag::SHARED_Q, d, qi]);
            let gammas: Vec<f64> = (1..spec.arms.len() as u64)
                .map(|a| spec.contrast.q * draw(seed, &[tag::CONTRAST_Q, d, qi, a]))
                .collect();
            for t in 0..t_n as u64 {
                let beta = spec.shared.t * draw(seed, &[tag::SHARED_T, d, qi, t]);
                let etas: Vec<f64> = (1..spec.arms.len() as u64)
                    .map(|a| spec.contrast.t * draw(seed, &[tag::CONTRAST_T, d, qi, t, a]))
                    .collect();
                for r in 0..r_n as u64 {
                    let eps = spec.shared.r * draw(seed, &[tag::SHARED_R, d, qi, t, r]);
                    for (a, arm) in spec.arms.iter().enumerate() {
                        let mut z = mu + alpha + beta + eps;
                        if a >= 1 {
                            let xi = spec.contrast.r
                                * draw(seed, &[tag::CONTRAST_R, d, qi, t, r, a as u64]);
                            z += spec.effect + gammas[a - 1] + etas[a - 1] + xi;
                        }
                        let f1 = (z.clamp(0.0, 1.0) * 1e6).round() / 1e6;
                        rows.push(SimRow {
                            dataset: name.clone(),
                            question: qid.clone(),
                            trajectory: t as u32,
                            read: r as u32,
                            arm: arm.clone(),
                            f1,
                            em: if z >= 1.0 { 1.0 } else { 0.0 },
                        });
                    }
                }
            }
        }
    }
    Ok(rows)
}

/// Simulates the Gaussian nested panel y_qtr = μ + a_q + b_qt + e_qtr with a_q ~ N(0, sq²),
/// b_qt ~ N(0, st²), e_qtr ~ N(0, sr²), all independent: its true variance components are
/// exactly (sq², st², sr²) in every stratum, and every stratum has mean μ.
///
/// One arm, named `single`. Column `f1` holds y (unrounded, unbounded); column `em` holds
/// 1[y ≥ μ], a 0/1 column for exercising binary metrics (its components are not the σ²s).
/// Rows are ordered by stratum, question, trajectory, read: Σ Q_d · t · r rows. The sign of
/// an SD does not matter (sd·Z has variance sd²).
#[allow(clippy::too_many_arguments)]
pub fn simulate_normal_panel(
    strata: &[(String, usize)],
    t: usize,
    r: usize,
    mu: f64,
    sq: f64,
    st: f64,
    sr: f64,
    seed: u64,
) -> Vec<SimRow> {
    let mut rows = Vec::with_capacity(strata.iter().map(|s| s.1).sum::<usize>() * t * r);
    for (d, (name, q_n)) in strata.iter().enumerate() {
        let d = d as u64;
        for q in 0..*q_n {
            let qid = question_id(name, q, *q_n);
            let qi = q as u64;
            let a = sq * draw(seed, &[tag::NORMAL_Q, d, qi]);
            for ti in 0..t as u64 {
                let b = st * draw(seed, &[tag::NORMAL_T, d, qi, ti]);
                for ri in 0..r as u64 {
                    let e = sr * draw(seed, &[tag::NORMAL_R, d, qi, ti, ri]);
                    let y = mu + a + b + e;
                    rows.push(SimRow {
                        dataset: name.clone(),
                        question: qid.clone(),
                        trajectory: ti as u32,
                        read: ri as u32,
                        arm: "single".to_string(),
                        f1: y,
                        em: if y >= mu { 1.0 } else { 0.0 },
                    });
                }
            }
        }
    }
    rows
}
