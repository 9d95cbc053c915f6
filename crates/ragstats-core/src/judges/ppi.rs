//! The prediction-powered (PPI++) estimate of a mean (Angelopoulos, Duchi & Zrnic 2023),
//! with the conventions of `ppi_py` 0.2.3's `ppi_mean_pointestimate` and `ppi_mean_ci`
//! exactly: `y` the human labels, `yhat` the judge on the same (labelled) units,
//! `yhat_unlabelled` the judge on the other units only.
//!
//! With n labelled and N unlabelled units and a weight λ on the judge:
//!
//! θ̂_λ = λ·mean(Ŷᵘ) + mean(Y − λŶ),
//! SE² = λ²·var₀(Ŷᵘ)/N + var₀(Y − λŶ)/n (variances with denominator N and n),
//!
//! and the interval θ̂ ± z_{1−α/2}·SE. The power-tuned λ (`ppi_py`'s `_calc_lam_glm` for a
//! mean, clipped to [0, 1]) is
//!
//! λ̂ = cov₀(Y, Ŷ) / ((1 + n/N)·var₁(Ŷ ∪ Ŷᵘ)),
//!
//! cov₀ with denominator n over the labelled units, var₁ with denominator n + N − 1 over
//! the judge's scores on all units. λ = 1 is plain PPI, λ = 0 the labels alone.

use serde::Serialize;

use crate::resample::summary::normal_quantile;
use crate::{Error, Result};

/// The PPI estimate of one mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PpiMean {
    /// θ̂_λ.
    pub estimate: f64,
    /// Its standard error.
    pub se: f64,
    /// The judge's weight λ used.
    pub lambda: f64,
    /// Whether λ was power-tuned (else given).
    pub tuned: bool,
    /// Labelled units n.
    pub labelled: usize,
    /// Unlabelled units N.
    pub unlabelled: usize,
    /// λ·sd₀(Ŷᵘ)/√N, the judge term's SE.
    pub imputed_se: f64,
    /// sd₀(Y − λŶ)/√n, the rectifier's SE.
    pub rectifier_se: f64,
}

impl PpiMean {
    /// The two-sided normal interval θ̂ ± z_{(1+level)/2}·SE (`ppi_py`'s `_zconfint_generic`
    /// with α = 1 − level).
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let z = normal_quantile(0.5 + level / 2.0);
        (self.estimate - z * self.se, self.estimate + z * self.se)
    }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Σ(x − x̄)² / len: numpy's `std(0)²` (ddof 0).
fn var0(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / x.len() as f64
}

/// The power-tuned λ̂ of the module's formula, clipped to [0, 1]. Where `ppi_py` would divide
/// by zero (no unlabelled units, or a judge constant on every unit) it is 0: then the judge
/// can remove no variance, and the labels alone are the estimate.
pub fn power_lambda(y: &[f64], yhat: &[f64], yhat_unlabelled: &[f64]) -> f64 {
    let (n, big_n) = (y.len(), yhat_unlabelled.len());
    if n == 0 || big_n == 0 {
        return 0.0;
    }
    let (my, mh) = (mean(y), mean(yhat));
    let cov = y
        .iter()
        .zip(yhat)
        .map(|(a, b)| (a - my) * (b - mh))
        .sum::<f64>()
        / n as f64;
    let all: Vec<f64> = yhat.iter().chain(yhat_unlabelled).copied().collect();
    let ma = mean(&all);
    let var = all.iter().map(|v| (v - ma) * (v - ma)).sum::<f64>() / (all.len() - 1) as f64;
    let denom = (1.0 + n as f64 / big_n as f64) * var;
    // NaN (a NaN score cannot reach here) or 0: no spread to borrow.
    if denom.is_nan() || denom <= 0.0 {
        return 0.0;
    }
    (cov / denom).clamp(0.0, 1.0)
}

/// The PPI estimate of the mean with the judge's weight `lambda` (`None`: power-tuned by
/// [`power_lambda`]); see the module for the formulas.
///
/// # Errors
/// [`Error::Data`] for fewer than 2 labelled units, `y` and `yhat` of different lengths, or
/// a λ outside [0, 1] or not finite.
pub fn ppi_mean(
    y: &[f64],
    yhat: &[f64],
    yhat_unlabelled: &[f64],
    lambda: Option<f64>,
) -> Result<PpiMean> {
    if y.len() != yhat.len() {
        return Err(Error::Data(format!(
            "{} labels but {} judge scores of the labelled units",
            y.len(),
            yhat.len()
        )));
    }
    if y.len() < 2 {
        return Err(Error::Data(format!(
            "{} labelled unit(s): the PPI estimate needs at least 2 to estimate the \
             rectifier's variance",
            y.len()
        )));
    }
    if let Some(l) = lambda {
        if !(0.0..=1.0).contains(&l) {
            return Err(Error::setting(
                "ppi_lambda",
                format!("{l} must be between 0 and 1 (1: plain PPI, 0: labels only)"),
            ));
        }
    }
    let (n, big_n) = (y.len(), yhat_unlabelled.len());
    let tuned = lambda.is_none();
    // Without unlabelled units the judge term does not exist: the labels are the estimate.
    let lam = if big_n == 0 {
        0.0
    } else {
        lambda.unwrap_or_else(|| power_lambda(y, yhat, yhat_unlabelled))
    };
    let rect: Vec<f64> = y.iter().zip(yhat).map(|(a, b)| a - lam * b).collect();
    let (imputed_mean, imputed_se) = if big_n == 0 {
        (0.0, 0.0)
    } else {
        let scaled: Vec<f64> = yhat_unlabelled.iter().map(|v| lam * v).collect();
        (mean(&scaled), (var0(&scaled) / big_n as f64).sqrt())
    };
    let rectifier_se = (var0(&rect) / n as f64).sqrt();
    Ok(PpiMean {
        estimate: imputed_mean + mean(&rect),
        se: (imputed_se * imputed_se + rectifier_se * rectifier_se).sqrt(),
        lambda: lam,
        tuned,
        labelled: n,
        unlabelled: big_n,
        imputed_se,
        rectifier_se,
    })
}

/// The PPI estimate of a weighted sum of strata's means, Σ w_d θ̂_d with SE² = Σ w_d² SE_d²
/// (each stratum corrected with its own λ).
pub fn combine(parts: &[(f64, PpiMean)]) -> (f64, f64) {
    let est = parts.iter().map(|(w, p)| w * p.estimate).sum();
    let var: f64 = parts.iter().map(|(w, p)| w * w * p.se * p.se).sum();
    (est, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::keyed::KeyedStream;

    /// Ten labelled units (human y, judge yhat) and twelve unlabelled (judge only).
    fn fixture() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let y = vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        let yhat = vec![0.9, 0.2, 0.7, 0.8, 0.4, 0.6, 0.1, 0.9, 0.5, 0.3];
        let u = vec![
            0.8, 0.3, 0.6, 0.9, 0.2, 0.7, 0.5, 0.4, 0.95, 0.15, 0.65, 0.35,
        ];
        (y, yhat, u)
    }

    #[test]
    fn matches_ppi_py_on_a_small_hand_case() {
        // python3 -c "import numpy as np; from ppi_py import *; y=np.array([1,0,1,1,0,1,0,1,1,0.]);
        //   h=np.array([.9,.2,.7,.8,.4,.6,.1,.9,.5,.3]); u=np.array([.8,.3,.6,.9,.2,.7,.5,.4,.95,.15,.65,.35]);
        //   print(repr(ppi_mean_pointestimate(y,h,u)), ppi_mean_ci(y,h,u,alpha=0.05),
        //   ppi_mean_ci(y,h,u,alpha=0.05,lam=1), ppi_mean_ci(y,h,u,alpha=0.05,lam=0))"
        // (ppi-python 0.2.3, numpy 2.4.6)
        let (y, h, u) = fixture();
        let tuned = ppi_mean(&y, &h, &u, None).unwrap();
        let (lo, hi) = tuned.interval(0.95);
        assert!(
            (tuned.estimate - PPI_EST).abs() < 1e-12,
            "{}",
            tuned.estimate
        );
        assert!((lo - PPI_LO).abs() < 1e-9 && (hi - PPI_HI).abs() < 1e-9);
        let plain = ppi_mean(&y, &h, &u, Some(1.0)).unwrap();
        let (lo, hi) = plain.interval(0.95);
        assert!((lo - PPI1_LO).abs() < 1e-9 && (hi - PPI1_HI).abs() < 1e-9);
        let labels = ppi_mean(&y, &h, &u, Some(0.0)).unwrap();
        assert_eq!(labels.estimate, 0.6);
        // Labels only: 0.6 ± z·sqrt(0.24/10).
        let half = normal_quantile(0.975) * (0.24f64 / 10.0).sqrt();
        let (lo, hi) = labels.interval(0.95);
        assert!((lo - (0.6 - half)).abs() < 1e-12 && (hi - (0.6 + half)).abs() < 1e-12);
    }

    // ppi_py's numbers from the command above.
    const PPI_EST: f64 = 0.6014444115031128;
    const PPI_LO: f64 = 0.3728925396739131;
    const PPI_HI: f64 = 0.8299962833323125;
    const PPI1_LO: f64 = 0.37208866263070983;
    const PPI1_HI: f64 = 0.8312446707026235;

    /// One simulated study: 1,500 questions, 150 of them labelled (a uniformly random
    /// subset), a biased judge. Latent ease x ~ U(0, 1); the human score Y = 1{u < x}
    /// (so θ = E Y = 1/2); the judge 0.5x + 0.2Y + 0.3 + N(0, 0.1²), whose mean is 0.65.
    fn study(seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut s = KeyedStream::new(seed, &[49]);
        let (mut y, mut h, mut u) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..1500 {
            let x = s.uniform();
            let human = f64::from(u8::from(s.uniform() < x));
            let judge = 0.5 * x + 0.2 * human + 0.3 + 0.1 * s.normal();
            // The first 150 of an exchangeable sequence: a uniformly random subset.
            if i < 150 {
                y.push(human);
                h.push(judge);
            } else {
                u.push(judge);
            }
        }
        (y, h, u)
    }

    /// The coverage of the 95% PPI++ interval of the biased judge's study (docs/COVERAGE.md,
    /// "PPI"): at least 0.935 over 2,000 studies (a binomial SE of 0.005 at 0.95), where the
    /// judge alone never covers θ = 1/2.
    #[test]
    fn ppi_intervals_cover_with_a_biased_judge() {
        let (mut tuned, mut plain, mut labels) = (0, 0, 0);
        let studies = 2000;
        for seed in 0..studies {
            let (y, h, u) = study(seed);
            for (lam, hits) in [
                (None, &mut tuned),
                (Some(1.0), &mut plain),
                (Some(0.0), &mut labels),
            ] {
                let p = ppi_mean(&y, &h, &u, lam).unwrap();
                let (lo, hi) = p.interval(0.95);
                *hits += usize::from(lo <= 0.5 && 0.5 <= hi);
            }
        }
        let rate = |k: usize| k as f64 / studies as f64;
        // docs/COVERAGE.md's row: `cargo test -p ragstats-core --lib judges::ppi -- --nocapture`.
        eprintln!(
            "PPI coverage, 150 labels of 1,500, biased judge, {studies} studies: PPI++ {}, \
             PPI {}, labels only {}",
            rate(tuned),
            rate(plain),
            rate(labels)
        );
        assert!(rate(tuned) >= 0.935, "PPI++ coverage {}", rate(tuned));
        assert!(rate(plain) >= 0.935, "PPI coverage {}", rate(plain));
        assert!(
            rate(labels) >= 0.935,
            "labels-only coverage {}",
            rate(labels)
        );
        // PPI++ is shorter than the labels alone: the judge carries information.
        let (y, h, u) = study(0);
        let (a, b) = (
            ppi_mean(&y, &h, &u, None).unwrap(),
            ppi_mean(&y, &h, &u, Some(0.0)).unwrap(),
        );
        assert!(a.se < b.se);
    }

    #[test]
    fn refuses_too_few_labels_and_a_lambda_out_of_range() {
        assert!(ppi_mean(&[1.0], &[1.0], &[0.5], None).is_err());
        assert!(ppi_mean(&[1.0, 0.0], &[1.0, 0.0], &[0.5], Some(1.5)).is_err());
        // No unlabelled units: the labels alone.
        let p = ppi_mean(&[1.0, 0.0, 1.0], &[0.2, 0.2, 0.9], &[], None).unwrap();
        assert_eq!(p.lambda, 0.0);
        assert!((p.estimate - 2.0 / 3.0).abs() < 1e-15);
    }
}
