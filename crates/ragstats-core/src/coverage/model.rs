//! The model the parametric generators draw from: per stratum and arm a mean m and nested
//! components (σ²_q, σ²_t, σ²_r), the correlation of the arms' question effects, the scale
//! of the scores (unbounded, bounded in [0, 1], binary), and each arm's cell layout (the
//! design: strata, questions, trajectories and reads, missing cells included).
//!
//! Fitted from a panel ([`Model::fit`]): m_{a,s} and the components are `stats variance
//! --arm a`'s (truncated at 0; REML for an unbalanced stratum); the question effects of arms
//! a and b have covariance C_ab, the sample covariance over the stratum's questions of the
//! two arms' question means ȳ_{q,a}, ȳ_{q,b}. With the within-question effects drawn
//! independently per arm, the simulated pair's question means then have the panel's
//! variance V_a + V_b − 2C_ab in expectation, so a simulated contrast has the observed
//! contrast's SE. The k × k matrix (σ²_{q,a} on the diagonal) is made positive
//! semi-definite by clipping negative eigenvalues of its correlation matrix at 0.

use nalgebra::DMatrix;
use serde::Serialize;

use crate::components::variance::{analyse_panel, question_mean};
use crate::panel::Panel;
use crate::{Error, Result};

/// What values a score takes, which decides the bounded generator's distributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Any real value: the bounded generator does not apply.
    Unbounded,
    /// Values in [0, 1] (F1, a judge's score): Beta at every level.
    Bounded,
    /// Values 0 or 1 (EM, accuracy): Beta above the read, Bernoulli reads.
    Binary,
}

/// The nested variance components of one arm in one stratum (truncated at 0; a level not
/// estimable is 0, its variance in the level above, which is equivalent at the same design).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Components {
    pub question: f64,
    pub trajectory: f64,
    pub read: f64,
}

/// One stratum of the model.
#[derive(Debug, Clone, Serialize)]
pub struct StratumModel {
    pub name: String,
    /// Per arm: the mean m_{a,s}.
    pub means: Vec<f64>,
    /// Per arm: the components.
    pub components: Vec<Components>,
    /// Correlation of the arms' question effects (k × k, row-major, positive semi-definite).
    pub correlation: Vec<f64>,
}

/// The model of a study: its arms, strata, scale, and each arm's panel as the template
/// of the cells to simulate.
#[derive(Debug, Clone)]
pub struct Model {
    pub arms: Vec<String>,
    pub scale: Scale,
    pub strata: Vec<StratumModel>,
    /// Per arm, the panel whose cells the generators fill (its `y` values are replaced).
    pub templates: Vec<Panel>,
}

impl Model {
    /// Arms (k).
    pub fn k(&self) -> usize {
        self.arms.len()
    }

    /// The true combined mean of arm `a`: Σ_s w_s m_{a,s} with the panel's stratum weights
    /// (`--weights`, carried by the templates and so by every simulated panel), or with
    /// equal weights (1/D) Σ_s m_{a,s}.
    pub fn truth(&self, a: usize) -> f64 {
        let means = self.strata.iter().map(|s| s.means[a]);
        crate::panel::combine_strata(means, self.weights())
    }

    /// The strata's weights every simulated panel carries (empty: equal).
    pub fn weights(&self) -> &[f64] {
        self.templates.first().map_or(&[], |p| p.weights.as_slice())
    }

    /// The same model with every arm's mean in each stratum set to the arms' average there:
    /// the null hypothesis of every test (no difference between arms).
    pub fn null(&self) -> Model {
        let mut m = self.clone();
        for s in &mut m.strata {
            let avg = s.means.iter().sum::<f64>() / s.means.len() as f64;
            s.means.iter_mut().for_each(|x| *x = avg);
        }
        m
    }

    /// Fits the model to the panels of the arms `arms` (one panel per arm, each from `stats
    /// variance --arm`): see the module documentation.
    ///
    /// # Errors
    /// [`Error::Input`] naming the panel when the arms' strata differ, and the errors of
    /// the variance analysis (a stratum with fewer than two questions).
    pub fn fit(arms: Vec<String>, panels: Vec<Panel>) -> Result<Model> {
        let first = panels
            .first()
            .ok_or_else(|| Error::Data("coverage needs at least one arm's panel".into()))?;
        let values = panels.iter().flat_map(|p| {
            p.strata.iter().flat_map(|s| match &s.nested {
                Some(n) => n.y.iter(),
                None => s.y.iter(),
            })
        });
        let scale = scale_of(values);
        let reports = panels
            .iter()
            .map(analyse_panel)
            .collect::<Result<Vec<_>>>()?;
        let mut strata = Vec::with_capacity(first.strata.len());
        for s0 in &first.strata {
            let mut means = Vec::new();
            let mut components = Vec::new();
            let mut qmeans: Vec<std::collections::HashMap<&str, f64>> = Vec::new();
            for (p, r) in panels.iter().zip(&reports) {
                let s = p
                    .strata
                    .iter()
                    .position(|x| x.name == s0.name)
                    .filter(|_| p.strata.len() == first.strata.len())
                    .ok_or_else(|| {
                        Error::input(
                            &p.source,
                            None,
                            format!(
                                "coverage needs every arm in every dataset; '{}' lacks dataset '{}' or has another",
                                p.outcome, s0.name
                            ),
                        )
                    })?;
                let st = &r.strata[s];
                let c = st.fit.truncated();
                components.push(Components {
                    question: c.question,
                    trajectory: c.trajectory.unwrap_or(0.0),
                    read: c.read.unwrap_or(0.0),
                });
                means.push(st.mean);
                let stratum = &p.strata[s];
                qmeans.push(
                    (0..stratum.q())
                        .map(|q| (stratum.questions[q].as_str(), question_mean(stratum, q)))
                        .collect(),
                );
            }
            let k = panels.len();
            let mut cov = vec![0.0; k * k];
            for a in 0..k {
                cov[a * k + a] = components[a].question;
                for b in a + 1..k {
                    let common: Vec<(f64, f64)> = qmeans[a]
                        .iter()
                        .filter_map(|(q, x)| qmeans[b].get(q).map(|y| (*x, *y)))
                        .collect();
                    let c = sample_cov(&common);
                    cov[a * k + b] = c;
                    cov[b * k + a] = c;
                }
            }
            strata.push(StratumModel {
                name: s0.name.clone(),
                means,
                components,
                correlation: correlation_psd(&cov, k),
            });
        }
        Ok(Model {
            arms,
            scale,
            strata,
            templates: panels,
        })
    }
}

/// The scale of a set of scores: binary when every value is 0 or 1, bounded when every
/// value is in [0, 1], else unbounded.
pub fn scale_of<'a>(values: impl Iterator<Item = &'a f64>) -> Scale {
    let mut scale = Scale::Binary;
    for &v in values {
        if v == 0.0 || v == 1.0 {
            continue;
        }
        if (0.0..=1.0).contains(&v) {
            scale = Scale::Bounded;
        } else {
            return Scale::Unbounded;
        }
    }
    scale
}

/// Sample covariance (n − 1 divisor) of pairs; 0 for fewer than two.
fn sample_cov(xy: &[(f64, f64)]) -> f64 {
    let n = xy.len() as f64;
    if xy.len() < 2 {
        return 0.0;
    }
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / n,
        xy.iter().map(|p| p.1).sum::<f64>() / n,
    );
    xy.iter().map(|(x, y)| (x - mx) * (y - my)).sum::<f64>() / (n - 1.0)
}

/// The correlation matrix of covariance `cov` (k × k, row-major), with negative eigenvalues
/// clipped at 0 and the diagonal rescaled to 1. A variable with variance 0 is uncorrelated.
pub fn correlation_psd(cov: &[f64], k: usize) -> Vec<f64> {
    let sd: Vec<f64> = (0..k).map(|a| cov[a * k + a].max(0.0).sqrt()).collect();
    let r = DMatrix::from_fn(k, k, |a, b| {
        if a == b {
            1.0
        } else if sd[a] > 0.0 && sd[b] > 0.0 {
            (cov[a * k + b] / (sd[a] * sd[b])).clamp(-1.0, 1.0)
        } else {
            0.0
        }
    });
    let eig = r.clone().symmetric_eigen();
    if eig.eigenvalues.iter().all(|&l| l >= 0.0) {
        return r.as_slice().to_vec();
    }
    let clipped = DMatrix::from_diagonal(&eig.eigenvalues.map(|l| l.max(0.0)));
    let m = &eig.eigenvectors * clipped * eig.eigenvectors.transpose();
    let d: Vec<f64> = (0..k).map(|a| m[(a, a)].max(1e-300).sqrt()).collect();
    DMatrix::from_fn(k, k, |a, b| {
        if a == b {
            1.0
        } else {
            (m[(a, b)] / (d[a] * d[b])).clamp(-1.0, 1.0)
        }
    })
    .as_slice()
    .to_vec()
}

/// The lower Cholesky factor L (row-major) of a positive semi-definite k × k matrix, with
/// zero pivots left zero (so L Lᵀ reproduces it up to rounding).
pub fn cholesky_psd(m: &[f64], k: usize) -> Vec<f64> {
    let mut l = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..=i {
            let s: f64 = (0..j).map(|p| l[i * k + p] * l[j * k + p]).sum();
            if i == j {
                l[i * k + i] = (m[i * k + i] - s).max(0.0).sqrt();
            } else if l[j * k + j] > 1e-12 {
                l[i * k + j] = (m[i * k + j] - s) / l[j * k + j];
            }
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_and_psd_correlations() {
        assert_eq!(scale_of([0.0, 1.0, 1.0].iter()), Scale::Binary);
        assert_eq!(scale_of([0.0, 0.5].iter()), Scale::Bounded);
        assert_eq!(scale_of([0.0, 1.5].iter()), Scale::Unbounded);
        // An impossible correlation pattern (a ≈ b, a ≈ c, b ≈ −c) is made PSD.
        let cov = [1.0, 0.9, 0.9, 0.9, 1.0, -0.9, 0.9, -0.9, 1.0];
        let r = correlation_psd(&cov, 3);
        let m = DMatrix::from_row_slice(3, 3, &r);
        assert!(m.symmetric_eigen().eigenvalues.iter().all(|&l| l > -1e-9));
        assert!((0..3).all(|a| (r[a * 3 + a] - 1.0).abs() < 1e-12));
        let l = cholesky_psd(&r, 3);
        for i in 0..3 {
            for j in 0..3 {
                let v: f64 = (0..3).map(|p| l[i * 3 + p] * l[j * 3 + p]).sum();
                assert!((v - r[i * 3 + j]).abs() < 1e-9, "{i} {j}");
            }
        }
    }
}
