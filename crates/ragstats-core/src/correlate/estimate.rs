//! Point estimates, p-values and Fisher-z intervals of one (x, y) pair.

use serde::Serialize;

use super::kendall::{kendall_scores, tau_b, tie_sums, var_s};
use crate::inference::t::two_sided_p;
use crate::resample::summary::{normal_cdf, normal_quantile, Interval};

/// Which correlation coefficient to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Pearson's product-moment r.
    #[default]
    Pearson,
    /// Spearman's ρ: Pearson's r of the average ranks.
    Spearman,
    /// Point-biserial r: Pearson's r with a two-valued y coded 0/1.
    #[serde(rename = "pointbiserial")]
    PointBiserial,
    /// Kendall's τ-b (tie-corrected).
    Kendall,
}

impl Method {
    /// The Fisher-z standard error constants (c, d): SE(z) = √(c / (n − d)).
    /// Pearson and point-biserial: (1, 3); Spearman (1.06, 3) and Kendall (0.437, 4), the
    /// values of Fieller, Hartley and Pearson (1957, Biometrika 44, 470–481).
    pub fn fisher_constants(self) -> (f64, f64) {
        match self {
            Method::Pearson | Method::PointBiserial => (1.0, 3.0),
            Method::Spearman => (1.06, 3.0),
            Method::Kendall => (0.437, 4.0),
        }
    }

    /// Name as printed.
    pub fn name(self) -> &'static str {
        match self {
            Method::Pearson => "pearson",
            Method::Spearman => "spearman",
            Method::PointBiserial => "pointbiserial",
            Method::Kendall => "kendall",
        }
    }
}

/// The reference distribution of the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum PValueKind {
    /// t = r √((n − 2)/(1 − r²)) against Student's t with `df` = n − 2.
    T { df: f64 },
    /// z = S / √Var(S) against the standard normal (Kendall, tie-corrected variance).
    Normal,
    /// With clusters: t = atanh(r) / SE against Student's t with `df` = G − 2, SE the
    /// delete-one-cluster jackknife's ([`super::cluster`]).
    #[serde(rename = "cluster-jackknife")]
    ClusterJackknife { df: f64 },
}

/// The estimate of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub r: f64,
    pub n: usize,
    /// The test statistic (t or z).
    pub statistic: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub p_kind: PValueKind,
    /// tanh(atanh r ± z_{1−α/2} SE), when n exceeds the method's d (see
    /// [`Method::fisher_constants`]).
    pub fisher: Option<Interval>,
}

/// Pearson's r = Σ(x−x̄)(y−ȳ) / √(Σ(x−x̄)² Σ(y−ȳ)²), two-pass in f64, clamped to [−1, 1].
/// NaN when either column is constant.
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return f64::NAN;
    }
    (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0)
}

/// Fisher-z interval tanh(atanh r ± z √(c/(n − d))) at `confidence`; None when n ≤ d.
pub fn fisher_interval(r: f64, n: usize, method: Method, confidence: f64) -> Option<Interval> {
    let (c, d) = method.fisher_constants();
    if (n as f64) <= d {
        return None;
    }
    let z = r.clamp(-1.0, 1.0).atanh();
    let half = normal_quantile(0.5 + confidence / 2.0) * (c / (n as f64 - d)).sqrt();
    Some(Interval([(z - half).tanh(), (z + half).tanh()]))
}

/// The t test of a product-moment type r (Pearson, Spearman, point-biserial):
/// t = r √((n − 2)/(1 − r²)), two-sided p from t(n − 2); |r| = 1 gives p = 0.
pub fn t_test(r: f64, n: usize) -> (f64, f64, PValueKind) {
    let df = n as f64 - 2.0;
    let t = if r.abs() >= 1.0 {
        r.signum() * f64::INFINITY
    } else {
        r * (df / (1.0 - r * r)).sqrt()
    };
    (t, two_sided_p(t, df), PValueKind::T { df })
}

/// Estimate for Pearson-type methods on prepared columns (values, ranks or 0/1 codes).
pub fn product_moment(x: &[f64], y: &[f64], method: Method, confidence: f64) -> Estimate {
    let r = pearson(x, y);
    let n = x.len();
    let (statistic, p, p_kind) = t_test(r, n);
    Estimate {
        r,
        n,
        statistic,
        p,
        p_kind,
        fisher: fisher_interval(r, n, method, confidence),
    }
}

/// Kendall's τ-b with the normal approximation z = S/√Var(S) (tie-corrected variance,
/// [`super::kendall::var_s`]); p = 2Φ(−|z|) = erfc(|z|/√2).
pub fn kendall(x: &[f64], y: &[f64], confidence: f64) -> Estimate {
    let n = x.len();
    let k = kendall_scores(x, y);
    let r = tau_b(&k, n).clamp(-1.0, 1.0);
    let z = k.s as f64 / var_s(n, &tie_sums(x), &tie_sums(y)).sqrt();
    Estimate {
        r,
        n,
        statistic: z,
        p: 2.0 * normal_cdf(-z.abs()),
        p_kind: PValueKind::Normal,
        fisher: fisher_interval(r, n, Method::Kendall, confidence),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_test_of_perfect_and_zero_correlation() {
        let (t, p, kind) = t_test(1.0, 10);
        assert_eq!(
            (t, p, kind),
            (f64::INFINITY, 0.0, PValueKind::T { df: 8.0 })
        );
        let (t, p, _) = t_test(0.0, 10);
        assert_eq!((t, p), (0.0, 1.0));
    }
}
