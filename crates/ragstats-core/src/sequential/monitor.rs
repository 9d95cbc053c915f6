//! The error of continuous monitoring, measured by simulation: how often a null comparison
//! (two arms of equal accuracy) is declared resolved when it is looked at every K questions
//! up to N, by the confidence sequence and by a fixed-n (Wald) interval checked at every
//! look; and, with an effect, how early the sequence stops.
//!
//! The simulated panel: each question q has an accuracy p_q ~ Uniform(0, 1) (questions
//! differ a lot, as in real panels), each arm answers it with T·R binary reads, arm A with
//! probability p_q and arm B with min(1, p_q + effect); the observation is the question's
//! contrast, mean(B's reads) − mean(A's reads) ∈ [−1, 1]. With effect 0 the contrast has
//! mean exactly 0.
//!
//! With D strata the N questions are split equally, or (unequal) in proportion to 1, 2, …,
//! D; every stratum is simulated alike and weighted 1/D; the questions arrive in a random
//! interleaving of the strata (as a file ordered by time interleaves them). The sequence
//! combines the strata in rounds (the plan of the strata's sizes) or by the union bound, and
//! the Wald interval is the stratified one, estimate ± z·√(Σ_d w_d² s_d²/n_d).

use serde::Serialize;

use super::{Bound, RoundPlan, Sequence, StrataRule};
use crate::resample::summary::{normal_quantile, tail_probability};
use crate::rng::KeyedStream;
use crate::Result;

/// A monitoring design: the questions, the look spacing, the reads per arm and question,
/// the level, the effect (0: null), the simulated panels and the seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MonitoringDesign {
    /// Questions at the last look, N.
    pub questions: u64,
    /// A look every K questions (and at N).
    pub look_every: u64,
    /// Binary reads per arm and question (T·R).
    pub reads: u32,
    /// The confidence level of both intervals.
    pub level: f64,
    /// B's accuracy minus A's on every question (capped at 1); 0 for the null.
    pub effect: f64,
    /// Simulated panels.
    pub panels: u32,
    /// The simulation's seed.
    pub seed: u64,
    /// Strata, D ≥ 1.
    pub strata: u32,
    /// Strata sizes in proportion to 1, 2, …, D instead of equal.
    pub unequal: bool,
    /// How the sequence combines the strata.
    pub rule: StrataRule,
}

impl MonitoringDesign {
    /// The strata's sizes: N split equally, or in proportion to 1, 2, …, D (the remainder
    /// to the last stratum).
    pub fn sizes(&self) -> Vec<u64> {
        let d = u64::from(self.strata.max(1));
        let parts: Vec<u64> = (1..=d).map(|i| if self.unequal { i } else { 1 }).collect();
        let total: u64 = parts.iter().sum();
        let mut sizes: Vec<u64> = parts.iter().map(|p| self.questions * p / total).collect();
        let given: u64 = sizes.iter().sum();
        if let Some(last) = sizes.last_mut() {
            *last += self.questions - given;
        }
        sizes
    }
}

/// What monitoring the simulated panels found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MonitoringError {
    /// Simulated panels.
    pub panels: u32,
    /// Share of panels the confidence sequence declared resolved at some look.
    pub sequence_resolved: f64,
    /// Share of panels the Wald interval, checked at every look, declared resolved.
    pub wald_resolved: f64,
    /// The Monte Carlo standard error of a share of the nominal error 1 − level,
    /// √(α(1 − α)/panels).
    pub monte_carlo_se: f64,
    /// The mean number of questions at the sequence's stop (N for a panel never resolved).
    pub sequence_mean_stop: f64,
    /// The mean ratio of the sequence's width to the Wald interval's at the last look.
    pub width_ratio: f64,
}

/// Monitors `design.panels` simulated panels (see the module) and counts how often each
/// interval excludes 0 at some look.
///
/// # Errors
/// Those of [`Sequence::new`] for a bad level.
pub fn monitoring_error(design: &MonitoringDesign) -> Result<MonitoringError> {
    use rayon::prelude::*;
    let d = *design;
    let z = normal_quantile(1.0 - tail_probability(d.level));
    let sizes = d.sizes();
    let w = 1.0 / sizes.len() as f64;
    let strata: Vec<(String, f64)> = (0..sizes.len()).map(|i| (format!("s{i}"), w)).collect();
    let bound = Bound::Range { lo: -1.0, hi: 1.0 };
    let plan = match d.rule {
        StrataRule::Rounds => RoundPlan::of_sizes(&sizes),
        StrataRule::Union => None,
    };
    let per_panel: Vec<Result<(bool, bool, u64, f64)>> = (0..d.panels)
        .into_par_iter()
        .map(|p| {
            let mut rng = KeyedStream::new(d.seed, &[0x5e9, u64::from(p)]);
            let mut seq = match &plan {
                Some(plan) => {
                    Sequence::in_rounds(&strata, bound, d.level, &plan.sizes, plan.rounds)?
                }
                None => Sequence::new(&strata, bound, d.level)?,
            };
            // A random interleaving of the strata (Fisher–Yates on the strata's labels);
            // one stratum keeps the stream of the one-stratum design.
            let mut labels: Vec<usize> = sizes
                .iter()
                .enumerate()
                .flat_map(|(i, &n)| std::iter::repeat_n(i, n as usize))
                .collect();
            if sizes.len() > 1 {
                let mut order = KeyedStream::new(d.seed, &[0x5ea, u64::from(p)]);
                for i in (1..labels.len()).rev() {
                    let j = ((order.uniform() * (i + 1) as f64) as usize).min(i);
                    labels.swap(i, j);
                }
            }
            let mut sums = vec![(0.0f64, 0.0f64, 0u64); sizes.len()];
            let (mut seq_stop, mut wald_hit, mut ratio) = (None, false, f64::NAN);
            for (i, &s) in labels.iter().enumerate() {
                let n = i as u64 + 1;
                let p_a = rng.uniform();
                let p_b = (p_a + d.effect).min(1.0);
                let mut diff = 0.0;
                for _ in 0..d.reads {
                    diff += f64::from(u8::from(rng.uniform() < p_b))
                        - f64::from(u8::from(rng.uniform() < p_a));
                }
                let x = diff / f64::from(d.reads);
                seq.observe(s, x)?;
                let t = &mut sums[s];
                t.0 += x;
                t.1 += x * x;
                t.2 += 1;
                if n.is_multiple_of(d.look_every) || n == d.questions {
                    let interval = seq.interval();
                    if seq_stop.is_none() && interval.excludes(0.0) {
                        seq_stop = Some(n);
                    }
                    if sums.iter().all(|t| t.2 > 1) {
                        let (mut est, mut var) = (0.0, 0.0);
                        for t in &sums {
                            let nf = t.2 as f64;
                            let mean = t.0 / nf;
                            est += w * mean;
                            var += w * w * ((t.1 - nf * mean * mean) / (nf - 1.0)).max(0.0) / nf;
                        }
                        let half = z * var.sqrt();
                        wald_hit |= half > 0.0 && est.abs() > half;
                        if n == d.questions {
                            ratio = interval.half_width().map_or(f64::INFINITY, |h| h / half);
                        }
                    }
                }
            }
            Ok((
                seq_stop.is_some(),
                wald_hit,
                seq_stop.unwrap_or(d.questions),
                ratio,
            ))
        })
        .collect();
    let (mut seq_hits, mut wald_hits, mut stops) = (0u32, 0u32, 0u64);
    let (mut ratios, mut ratio_n) = (0.0, 0u32);
    for r in per_panel {
        let (s, w, stop, ratio) = r?;
        seq_hits += u32::from(s);
        wald_hits += u32::from(w);
        stops += stop;
        if ratio.is_finite() {
            ratios += ratio;
            ratio_n += 1;
        }
    }
    let panels = f64::from(d.panels.max(1));
    let alpha = 1.0 - d.level;
    Ok(MonitoringError {
        panels: d.panels,
        sequence_resolved: f64::from(seq_hits) / panels,
        wald_resolved: f64::from(wald_hits) / panels,
        monte_carlo_se: (alpha * (1.0 - alpha) / panels).sqrt(),
        sequence_mean_stop: stops as f64 / panels,
        width_ratio: ratios / f64::from(ratio_n.max(1)),
    })
}
