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

use serde::Serialize;

use super::{Bound, Sequence};
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
    let per_panel: Vec<Result<(bool, bool, u64)>> = (0..d.panels)
        .into_par_iter()
        .map(|p| {
            let mut rng = KeyedStream::new(d.seed, &[0x5e9, u64::from(p)]);
            let mut seq = Sequence::new(
                &[("all".into(), 1.0)],
                Bound::Range { lo: -1.0, hi: 1.0 },
                d.level,
            )?;
            let (mut sum, mut sum_sq) = (0.0, 0.0);
            let (mut seq_stop, mut wald_hit) = (None, false);
            for n in 1..=d.questions {
                let p_a = rng.uniform();
                let p_b = (p_a + d.effect).min(1.0);
                let mut diff = 0.0;
                for _ in 0..d.reads {
                    diff += f64::from(u8::from(rng.uniform() < p_b))
                        - f64::from(u8::from(rng.uniform() < p_a));
                }
                let x = diff / f64::from(d.reads);
                seq.observe(0, x)?;
                sum += x;
                sum_sq += x * x;
                if n.is_multiple_of(d.look_every) || n == d.questions {
                    if seq_stop.is_none() && seq.interval().excludes(0.0) {
                        seq_stop = Some(n);
                    }
                    let nf = n as f64;
                    let mean = sum / nf;
                    if n > 1 {
                        let var = ((sum_sq - nf * mean * mean) / (nf - 1.0)).max(0.0);
                        let half = z * (var / nf).sqrt();
                        wald_hit |= half > 0.0 && mean.abs() > half;
                    }
                }
            }
            Ok((
                seq_stop.is_some(),
                wald_hit,
                seq_stop.unwrap_or(d.questions),
            ))
        })
        .collect();
    let (mut seq_hits, mut wald_hits, mut stops) = (0u32, 0u32, 0u64);
    for r in per_panel {
        let (s, w, stop) = r?;
        seq_hits += u32::from(s);
        wald_hits += u32::from(w);
        stops += stop;
    }
    let panels = f64::from(d.panels.max(1));
    let alpha = 1.0 - d.level;
    Ok(MonitoringError {
        panels: d.panels,
        sequence_resolved: f64::from(seq_hits) / panels,
        wald_resolved: f64::from(wald_hits) / panels,
        monte_carlo_se: (alpha * (1.0 - alpha) / panels).sqrt(),
        sequence_mean_stop: stops as f64 / panels,
    })
}
