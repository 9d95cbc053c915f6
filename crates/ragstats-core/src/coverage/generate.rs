//! The three generators of simulated panels, each filling the cells of the model's arm
//! templates (the user's design: strata, questions, trajectories, reads, missing cells).
//!
//! * **Gaussian**: y_{a,qtr} = m_{a,s} + u_{q,a} + b_{qt,a} + e_{qtr,a}, with
//!   u_q = diag(σ_{q,a}) L z (L the Cholesky factor of the arms' question-effect
//!   correlation, z ~ N(0, I_k)), b ~ N(0, σ²_{t,a}), e ~ N(0, σ²_{r,a}), independent.
//! * **Bounded** (scores in [0, 1]): question probability p_{q,a} = F⁻¹_{Beta(m, ρ_q)}(Φ(w_a)),
//!   w = L z (a Gaussian copula carries the arms' correlation); trajectory probability
//!   π_{qt} ~ Beta(p, ρ_t); reads y ~ Bernoulli(π) for a binary score, y ~ Beta(π, ρ_r)
//!   otherwise. Beta(μ, ρ) is the Beta law with mean μ and variance ρ μ(1 − μ), i.e.
//!   α = μ(1/ρ − 1), β = (1 − μ)(1/ρ − 1). Matching the components level by level:
//!   ρ_q = σ²_q / (m(1−m)), ρ_t = σ²_t / (m(1−m) − σ²_q), ρ_r = σ²_r / (m(1−m) − σ²_q − σ²_t),
//!   each clamped to [0, 0.999] (a component larger than a bounded score allows is capped).
//!   Every level keeps the mean, so E(y) = m exactly.
//! * **Resample** (nonparametric): Q_s questions drawn with replacement in every stratum; a
//!   question keeps all its arms' cells. The truth is the panel's own estimate. Under the
//!   null every arm's values in stratum s are shifted by −(m_{a,s} − m̄_s).
//!
//! Each panel's draws come from keyed streams ([`crate::rng::KeyedStream`]) tagged
//! `[COVERAGE, generator, null, panel, stratum, question, arm]`, so panel i is the same
//! whatever order or thread computes it.

use serde::Serialize;
use statrs::distribution::{Beta, ContinuousCDF};

use super::model::{cholesky_psd, Components, Model, Scale};
use crate::panel::{Nested, Panel, Stratum};
use crate::resample::summary::normal_cdf;
use crate::rng::KeyedStream;

/// Tag of the coverage study's keyed streams (the simulators' tags are below 100).
pub const COVERAGE: u64 = 0xC0_7E4A;

/// How simulated panels are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    /// Gaussian nested model with the fitted components.
    Gaussian,
    /// Beta / Bernoulli model for scores in [0, 1].
    Bounded,
    /// Questions resampled within strata (nonparametric).
    Resample,
}

impl Generator {
    /// Every generator, in report order.
    pub const ALL: [Generator; 3] = [Generator::Gaussian, Generator::Bounded, Generator::Resample];

    /// The name as printed.
    pub fn name(self) -> &'static str {
        match self {
            Generator::Gaussian => "gaussian",
            Generator::Bounded => "bounded",
            Generator::Resample => "resample",
        }
    }

    fn tag(self) -> u64 {
        self as u64 + 1
    }
}

/// The panels of every arm of simulated panel `index` (arm order of `model`).
pub fn simulate(
    model: &Model,
    generator: Generator,
    null: bool,
    seed: u64,
    index: u64,
) -> Vec<Panel> {
    let key = [COVERAGE, generator.tag(), u64::from(null), index];
    match generator {
        Generator::Resample => resample(model, null, seed, &key),
        _ => parametric(model, generator, null, seed, &key),
    }
}

/// A template's stratum with new outcomes `y` in its own layout, and nothing of the file's.
fn refill(s: &Stratum, y: Vec<f64>) -> Stratum {
    let (y, nested) = match &s.nested {
        Some(n) => (
            Vec::new(),
            Some(Nested {
                traj_start: n.traj_start.clone(),
                read_start: n.read_start.clone(),
                y,
            }),
        ),
        None => (y, None),
    };
    Stratum {
        name: s.name.clone(),
        questions: s.questions.clone(),
        trajectories: s.trajectories.clone(),
        reads: s.reads.clone(),
        y,
        nested,
        ..Default::default()
    }
}

/// The template panel `p` with new strata.
fn with_strata(p: &Panel, strata: Vec<Stratum>) -> Panel {
    Panel {
        notes: Vec::new(),
        weights: p.weights.clone(),
        source: p.source.clone(),
        metric: p.metric.clone(),
        outcome: p.outcome.clone(),
        selectors: p.selectors.clone(),
        selector: p.selector.clone(),
        strata,
    }
}

/// Per-level ρ of the bounded generator for mean `m` and components `c` (module docs).
fn rhos(m: f64, c: &Components) -> [f64; 3] {
    let v = m * (1.0 - m);
    let ratio = |num: f64, den: f64| {
        if den > 0.0 {
            (num / den).clamp(0.0, 0.999)
        } else {
            0.0
        }
    };
    [
        ratio(c.question, v),
        ratio(c.trajectory, v - c.question),
        ratio(c.read, v - c.question - c.trajectory),
    ]
}

fn parametric(
    model: &Model,
    generator: Generator,
    null: bool,
    seed: u64,
    key: &[u64; 4],
) -> Vec<Panel> {
    let model_null;
    let m = if null {
        model_null = model.null();
        &model_null
    } else {
        model
    };
    let k = m.k();
    let mut out: Vec<Vec<Stratum>> = vec![Vec::new(); k];
    for (si, sm) in m.strata.iter().enumerate() {
        let l = cholesky_psd(&sm.correlation, k);
        // Each arm's template stratum of this name.
        let templ: Vec<&Stratum> = m
            .templates
            .iter()
            .map(|p| p.strata.iter().find(|s| s.name == sm.name).expect("fitted"))
            .collect();
        let mut ys: Vec<Vec<f64>> = templ
            .iter()
            .map(|s| Vec::with_capacity(s.nested.as_ref().map_or(s.y.len(), |n| n.y.len())))
            .collect();
        let rho: Vec<[f64; 3]> = (0..k)
            .map(|a| rhos(sm.means[a].clamp(0.0, 1.0), &sm.components[a]))
            .collect();
        let betas: Vec<Option<Beta>> = (0..k)
            .map(|a| {
                let mu = sm.means[a];
                let r = rho[a][0];
                (generator == Generator::Bounded && r > 0.0 && mu > 0.0 && mu < 1.0)
                    .then(|| Beta::new(mu * (1.0 / r - 1.0), (1.0 - mu) * (1.0 / r - 1.0)).ok())
                    .flatten()
            })
            .collect();
        let q_max = templ.iter().map(|s| s.q()).max().unwrap_or(0);
        for q in 0..q_max {
            let mut shared =
                KeyedStream::new(seed, &[key[0], key[1], key[2], key[3], si as u64, q as u64]);
            let z: Vec<f64> = (0..k).map(|_| shared.normal()).collect();
            let w: Vec<f64> = (0..k)
                .map(|a| (0..=a).map(|j| l[a * k + j] * z[j]).sum())
                .collect();
            for a in 0..k {
                if q >= templ[a].q() {
                    continue;
                }
                let mut s = KeyedStream::new(
                    seed,
                    &[
                        key[0],
                        key[1],
                        key[2],
                        key[3],
                        si as u64,
                        q as u64,
                        a as u64 + 1,
                    ],
                );
                let c = &sm.components[a];
                let mu = sm.means[a];
                let trajs = templ[a].trajectories_of(q);
                match generator {
                    Generator::Gaussian => {
                        let u = mu + c.question.sqrt() * w[a];
                        for reads in trajs {
                            let b = u + c.trajectory.sqrt() * s.normal();
                            for _ in 0..reads.len() {
                                ys[a].push(b + c.read.sqrt() * s.normal());
                            }
                        }
                    }
                    _ => {
                        let p = match &betas[a] {
                            Some(beta) => beta
                                .inverse_cdf(normal_cdf(w[a]).clamp(1e-12, 1.0 - 1e-12))
                                .clamp(0.0, 1.0),
                            None => mu.clamp(0.0, 1.0),
                        };
                        for reads in trajs {
                            let pi = beta_draw(&mut s, p, rho[a][1]);
                            for _ in 0..reads.len() {
                                ys[a].push(if m.scale == Scale::Binary {
                                    f64::from(u8::from(s.uniform() < pi))
                                } else {
                                    beta_draw(&mut s, pi, rho[a][2])
                                });
                            }
                        }
                    }
                }
            }
        }
        for (a, y) in ys.into_iter().enumerate() {
            out[a].push(refill(templ[a], y));
        }
    }
    out.into_iter()
        .zip(&m.templates)
        .map(|(strata, p)| with_strata(p, strata))
        .collect()
}

fn resample(model: &Model, null: bool, seed: u64, key: &[u64; 4]) -> Vec<Panel> {
    let k = model.k();
    let mut out: Vec<Vec<Stratum>> = vec![Vec::new(); k];
    for (si, sm) in model.strata.iter().enumerate() {
        let templ: Vec<&Stratum> = model
            .templates
            .iter()
            .map(|p| p.strata.iter().find(|s| s.name == sm.name).expect("fitted"))
            .collect();
        let q = templ[0].q();
        let mut s = KeyedStream::new(seed, &[key[0], key[1], key[2], key[3], si as u64]);
        let draws: Vec<usize> = (0..q)
            .map(|_| ((u128::from(s.next_u64()) * q as u128) >> 64) as usize)
            .collect();
        let avg = sm.means.iter().sum::<f64>() / k as f64;
        for a in 0..k {
            let shift = if null { avg - sm.means[a] } else { 0.0 };
            let t = templ[a];
            // Questions are matched across arms by id: arm a's question of the drawn id.
            let index: std::collections::HashMap<&str, usize> = t
                .questions
                .iter()
                .enumerate()
                .map(|(i, id)| (id.as_str(), i))
                .collect();
            let mut y = Vec::new();
            let mut traj_start = vec![0];
            let mut read_start = vec![0];
            let mut questions = Vec::with_capacity(q);
            for (j, &d) in draws.iter().enumerate() {
                let Some(&qa) = index.get(templ[0].questions[d].as_str()) else {
                    continue;
                };
                questions.push(format!("q{j}"));
                for reads in t.trajectories_of(qa) {
                    y.extend(reads.iter().map(|v| v + shift));
                    read_start.push(y.len());
                }
                traj_start.push(read_start.len() - 1);
            }
            let stratum = if t.is_balanced() {
                Stratum {
                    name: t.name.clone(),
                    questions,
                    trajectories: t.trajectories.clone(),
                    reads: t.reads.clone(),
                    y,
                    ..Default::default()
                }
            } else {
                Stratum {
                    name: t.name.clone(),
                    questions,
                    nested: Some(Nested {
                        traj_start,
                        read_start,
                        y,
                    }),
                    ..Default::default()
                }
            };
            out[a].push(stratum);
        }
    }
    out.into_iter()
        .zip(&model.templates)
        .map(|(strata, p)| with_strata(p, strata))
        .collect()
}

/// A Beta(μ, ρ) draw (mean μ, variance ρμ(1−μ)) as X/(X+Y), X ~ Γ(α), Y ~ Γ(β); μ itself
/// when ρ is 0 or μ is 0 or 1.
pub fn beta_draw(s: &mut KeyedStream, mu: f64, rho: f64) -> f64 {
    if rho <= 0.0 || mu <= 0.0 || mu >= 1.0 {
        return mu.clamp(0.0, 1.0);
    }
    let n = 1.0 / rho - 1.0;
    let x = gamma_draw(s, mu * n);
    let y = gamma_draw(s, (1.0 - mu) * n);
    if x + y > 0.0 {
        x / (x + y)
    } else {
        mu
    }
}

/// A Γ(shape, 1) draw by Marsaglia & Tsang (2000); for shape < 1, Γ(shape + 1)·U^{1/shape}.
pub fn gamma_draw(s: &mut KeyedStream, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = s.uniform();
        return gamma_draw(s, shape + 1.0) * libm::exp(libm::log(u) / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = s.normal();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = s.uniform();
        if u < 1.0 - 0.0331 * x * x * x * x
            || libm::log(u) < 0.5 * x * x + d * (1.0 - v + libm::log(v))
        {
            return d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beta_draws_have_the_asked_mean_and_variance() {
        let mut s = KeyedStream::new(3, &[1]);
        for (mu, rho) in [(0.5, 0.2), (0.9, 0.05), (0.1, 0.6)] {
            let n = 40_000;
            let x: Vec<f64> = (0..n).map(|_| beta_draw(&mut s, mu, rho)).collect();
            let m = x.iter().sum::<f64>() / n as f64;
            let v = x.iter().map(|y| (y - m).powi(2)).sum::<f64>() / (n - 1) as f64;
            let want = rho * mu * (1.0 - mu);
            // SE of the mean sqrt(want/n) ≤ 0.0025; of the variance a few percent.
            assert!((m - mu).abs() < 0.01, "{mu} {rho}: mean {m}");
            assert!(
                (v / want - 1.0).abs() < 0.06,
                "{mu} {rho}: var {v} want {want}"
            );
            assert!(x.iter().all(|y| (0.0..=1.0).contains(y)));
        }
    }
}
