//! Bootstrap summaries of one statistic: SE and percentile, basic or BCa intervals.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// How the confidence interval is formed from the replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// [q(α/2), q(1−α/2)] of the replicates (linear, type-7 quantiles).
    #[default]
    Percentile,
    /// [2θ̂ − q(1−α/2), 2θ̂ − q(α/2)].
    Basic,
    /// Bias-corrected and accelerated (Efron 1987), acceleration from the stratified jackknife.
    Bca,
}

/// A confidence interval [lower, upper] of one statistic. Serialises as the two-element
/// array `[lower, upper]`; `interval[0]` and `interval[1]` index its ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Interval(pub [f64; 2]);

impl Interval {
    /// The interval of a statistic that could not be resampled: both ends NaN.
    pub const NAN: Interval = Interval([f64::NAN; 2]);

    /// The interval [lower, upper].
    pub fn new(lower: f64, upper: f64) -> Interval {
        Interval([lower, upper])
    }

    /// The lower end.
    pub fn lower(self) -> f64 {
        self.0[0]
    }

    /// The upper end.
    pub fn upper(self) -> f64 {
        self.0[1]
    }

    /// Whether both ends are finite.
    pub fn is_finite(self) -> bool {
        self.0.iter().all(|v| v.is_finite())
    }

    /// Whether the interval excludes `v`: not lower ≤ v ≤ upper (so an interval with a NaN
    /// end excludes every value).
    pub fn excludes(self, v: f64) -> bool {
        !(self.0[0] <= v && v <= self.0[1])
    }
}

impl From<[f64; 2]> for Interval {
    fn from(ends: [f64; 2]) -> Interval {
        Interval(ends)
    }
}

impl std::ops::Index<usize> for Interval {
    type Output = f64;
    /// End `i`: 0 the lower, 1 the upper.
    fn index(&self, i: usize) -> &f64 {
        &self.0[i]
    }
}

/// The note of a resampling report whose resamples cannot differ: the outcome does not vary
/// between questions (a constant panel, e.g. every answer refused and scored 0), so every
/// replicate of questions drawn with replacement equals the point estimate. A bootstrap SE
/// of 0 and an interval of zero width are then what the arithmetic gives, not a measured
/// precision.
pub const NO_SPREAD_NOTE: &str = "the outcome does not vary between questions (e.g. every value is the same), so every bootstrap replicate equals the estimate: an SE of 0 and a zero-width interval say nothing about precision";

/// A report's notes on spread: [`NO_SPREAD_NOTE`] when its outcome is `constant`, none
/// otherwise.
pub fn no_spread_notes(constant: bool) -> Vec<String> {
    if constant {
        vec![NO_SPREAD_NOTE.to_string()]
    } else {
        Vec::new()
    }
}

/// Point estimate, bootstrap SE and interval of one statistic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub estimate: f64,
    pub se: f64,
    pub ci: Interval,
}

impl Summary {
    /// The summary of a statistic that is not defined: every field NaN.
    pub const NAN: Summary = Summary {
        estimate: f64::NAN,
        se: f64::NAN,
        ci: Interval::NAN,
    };
}

/// Sample variance with ddof 1 (two-pass, in f64): Σ (x − x̄)² / (n − 1). NaN for fewer
/// than 2 values.
pub fn variance(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if x.len() < 2 {
        return f64::NAN;
    }
    let m = x.iter().sum::<f64>() / n;
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)
}

/// The delete-one (jackknife) variance of an estimate from its leave-one-out values
/// θ₍₁₎ … θ₍ₙ₎: (n − 1)/n · Σ (θ₍ᵢ₎ − θ̄)² (Efron & Tibshirani 1993, eq. 11.5). NaN for
/// fewer than 2 values.
pub fn jackknife_variance(loo: &[f64]) -> f64 {
    let n = loo.len() as f64;
    if loo.len() < 2 {
        return f64::NAN;
    }
    let m = loo.iter().sum::<f64>() / n;
    (n - 1.0) / n * loo.iter().map(|v| (v - m) * (v - m)).sum::<f64>()
}

/// Sample standard deviation with ddof 1: √[`variance`]. NaN for fewer than 2 values.
pub fn sd(x: &[f64]) -> f64 {
    variance(x).sqrt()
}

/// Linear-interpolation quantile of sorted data (Hyndman & Fan type 7, numpy's default):
/// h = (n−1)p, x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]).
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Standard normal quantile Φ⁻¹(p) = −√2 erfc⁻¹(2p) (statrs; within 4e-16 relative of a
/// 60-digit reference on p = 0.001…0.999). NaN outside [0, 1].
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN; // statrs panics outside [0, 1]
    }
    Normal::standard().inverse_cdf(p)
}

/// Standard normal CDF Φ(x) = erfc(−x/√2)/2.
///
/// erfc is libm's (the FreeBSD/musl routine, within 3e-16 relative of a 60-digit reference
/// on [0, 26]), not statrs': statrs 0.19.1 stores its erfc interval constants to 10 digits
/// only, which costs about 1e-10 relative (its Φ(−0.71) is 1.0e-10 too high) and would
/// move printed BCa interval ends.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// The tail probability α/2 of a two-sided interval at `confidence` (α = 1 − confidence),
/// rounded to 15 significant digits. Every interval of the tool takes its tails from here.
///
/// A confidence is a decimal the user typed, and 1 − 0.95 in binary is 0.050000000000000044:
/// without the rounding a 95% interval would take the 0.025000000000000022 quantile rather
/// than the 0.025 one. (Until issue #36 the bootstrap summaries used the unrounded tail and
/// the allocation analyses the rounded one, so the same replicates could give ends that
/// differed in the 13th digit.)
pub fn tail_probability(confidence: f64) -> f64 {
    let raw = (1.0 - confidence) / 2.0;
    format!("{raw:.14e}").parse().unwrap_or(raw)
}

/// The percentile interval [q(α/2), q(1−α/2)], α/2 = [`tail_probability`] of `confidence`,
/// of sorted replicates (type-7 quantiles).
pub fn percentile_interval(sorted: &[f64], confidence: f64) -> Interval {
    let tail = tail_probability(confidence);
    Interval([
        quantile_sorted(sorted, tail),
        quantile_sorted(sorted, 1.0 - tail),
    ])
}

/// Summarises replicates `reps` of a statistic with point estimate `theta` at `confidence`.
/// `accel` is the BCa acceleration (ignored by the other methods). α/2 is
/// [`tail_probability`], as in [`percentile_interval`].
///
/// BCa: z₀ = Φ⁻¹(#{θ* < θ̂}/B + #{θ* = θ̂}/(2B)); the interval ends are the type-7 quantiles
/// at α_i = Φ(z₀ + (z₀ + z_i)/(1 − a(z₀ + z_i))) for z_i = Φ⁻¹(α/2), Φ⁻¹(1 − α/2).
pub fn summarize(theta: f64, reps: &[f64], method: Method, confidence: f64, accel: f64) -> Summary {
    let mut sorted: Vec<f64> = reps.to_vec();
    sorted.sort_by(f64::total_cmp);
    let tail = tail_probability(confidence);
    let (pl, pu) = (tail, 1.0 - tail);
    let ci = match method {
        Method::Percentile => [quantile_sorted(&sorted, pl), quantile_sorted(&sorted, pu)],
        Method::Basic => [
            2.0 * theta - quantile_sorted(&sorted, pu),
            2.0 * theta - quantile_sorted(&sorted, pl),
        ],
        Method::Bca => {
            let b = sorted.len() as f64;
            let below = sorted.iter().filter(|&&v| v < theta).count() as f64;
            let ties = sorted.iter().filter(|&&v| v == theta).count() as f64;
            let z0 = normal_quantile((below + ties / 2.0) / b);
            if !z0.is_finite() || !accel.is_finite() {
                // Every replicate on one side of θ̂ (or a degenerate statistic): no bias
                // correction is possible; fall back to the percentile interval's ends.
                [sorted[0], sorted[sorted.len() - 1]]
            } else {
                let adj = |z: f64| normal_cdf(z0 + (z0 + z) / (1.0 - accel * (z0 + z)));
                [
                    quantile_sorted(&sorted, adj(normal_quantile(pl))),
                    quantile_sorted(&sorted, adj(normal_quantile(pu))),
                ]
            }
        }
    };
    Summary {
        estimate: theta,
        se: sd(reps),
        ci: Interval(ci),
    }
}

/// BCa acceleration from empirical influence values U_i (one per left-out unit):
/// a = Σ U³ / (6 (Σ U²)^{3/2}); 0 when all U are 0.
pub fn acceleration(influence: &[f64]) -> f64 {
    let s2: f64 = influence.iter().map(|u| u * u).sum();
    let s3: f64 = influence.iter().map(|u| u * u * u).sum();
    if s2 > 0.0 {
        s3 / (6.0 * s2.powf(1.5))
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interval serialises as the bare `[lower, upper]` array the reports always wrote
    /// (NaN ends as `null`), and one with a NaN end excludes every value (allocate's
    /// `resolved` for a comparison whose replicates are all undefined).
    /// The jackknife variance of a mean is s²/n exactly: for 1, 2, 4, 8 the leave-one-out
    /// means are 14/3, 13/3, 11/3, 7/3 and s² = 28.75/3, so both are 28.75/12.
    #[test]
    fn the_jackknife_variance_of_a_mean_is_its_squared_standard_error() {
        let x = [1.0, 2.0, 4.0, 8.0];
        let loo: Vec<f64> = (0..4).map(|i| (15.0 - x[i]) / 3.0).collect();
        assert!((jackknife_variance(&loo) - 28.75 / 12.0).abs() < 1e-14);
        assert!((variance(&x) / 4.0 - 28.75 / 12.0).abs() < 1e-14);
        assert!(jackknife_variance(&[1.0]).is_nan());
    }

    #[test]
    fn an_interval_is_its_two_ends() {
        let ci = Interval::new(-0.5, 1.25);
        assert_eq!(
            (ci.lower(), ci.upper(), ci[0], ci[1]),
            (-0.5, 1.25, -0.5, 1.25)
        );
        assert_eq!(serde_json::to_string(&ci).unwrap(), "[-0.5,1.25]");
        assert_eq!(
            serde_json::to_string(&Interval::NAN).unwrap(),
            "[null,null]"
        );
        assert!(!ci.excludes(0.0) && !ci.excludes(1.25) && ci.excludes(1.5) && ci.excludes(-1.0));
        assert!(Interval::NAN.excludes(0.0) && !Interval::NAN.is_finite() && ci.is_finite());
        let s = summarize(1.0, &[0.0, 1.0, 2.0], Method::Percentile, 0.5, 0.0);
        // Type-7 quartiles of 0, 1, 2; SD (ddof 1) 1.
        assert_eq!((s.estimate, s.se, s.ci), (1.0, 1.0, Interval([0.5, 1.5])));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"estimate":1.0,"se":1.0,"ci":[0.5,1.5]}"#
        );
    }

    #[test]
    fn type7_quantiles_match_numpy() {
        // numpy.quantile([1, 2, 4, 8, 16], [0.1, 0.5, 0.975]) = [1.4, 4.0, 15.2]
        let x = [1.0, 2.0, 4.0, 8.0, 16.0];
        assert!((quantile_sorted(&x, 0.1) - 1.4).abs() < 1e-12);
        assert_eq!(quantile_sorted(&x, 0.5), 4.0);
        assert!((quantile_sorted(&x, 0.975) - 15.2).abs() < 1e-12);
        assert_eq!(quantile_sorted(&x, 1.0), 16.0);
    }

    #[test]
    fn intervals_by_method() {
        let reps: Vec<f64> = (0..101).map(|i| i as f64).collect(); // quantiles at 2.5 and 97.5
        let close = |a: [f64; 2], b: [f64; 2]| {
            assert!(
                (a[0] - b[0]).abs() < 1e-9 && (a[1] - b[1]).abs() < 1e-9,
                "{a:?} vs {b:?}"
            )
        };
        let p = summarize(40.0, &reps, Method::Percentile, 0.95, 0.0);
        close(p.ci.0, [2.5, 97.5]);
        let b = summarize(40.0, &reps, Method::Basic, 0.95, 0.0);
        close(b.ci.0, [80.0 - 97.5, 80.0 - 2.5]);
        // θ̂ at the median and a = 0: BCa reduces to the percentile interval.
        let c = summarize(50.0, &reps, Method::Bca, 0.95, 0.0);
        assert!(
            (c.ci[0] - 2.5).abs() < 1e-9 && (c.ci[1] - 97.5).abs() < 1e-9,
            "{:?}",
            c.ci
        );
        // sd of 0..=100 with ddof 1: sqrt(101·102/12 ... ) = sqrt(858.5)
        assert!((p.se - 858.5f64.sqrt()).abs() < 1e-12);
    }

    /// Relative difference.
    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn normal_quantiles_match_published_values() {
        // Values from standard normal tables (e.g. Abramowitz & Stegun 26.2).
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-13);
        assert!((normal_quantile(0.5)).abs() < 1e-15);
        assert!((normal_quantile(0.05) + 1.6448536269514722).abs() < 1e-13);
        assert!((normal_quantile(1e-10) + 6.361340902404056).abs() < 1e-10);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(1.5).is_nan());
        assert!(normal_quantile(f64::NAN).is_nan());
    }

    #[test]
    fn normal_cdf_matches_published_values_to_1e15() {
        assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 1e-15);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-15);
        assert!(rel(normal_cdf(-1.0), 0.15865525393145705) < 1e-14);
        assert!((normal_cdf(0.3) - 0.6179114221889527).abs() < 1e-14);
        // Φ(−8) = 6.22096057427178e-16 (DLMF 7 / scipy.stats.norm.cdf).
        assert!(rel(normal_cdf(-8.0), 6.220960574271785e-16) < 1e-13);
        // mpmath 1.3.0 at 50 digits: float(mpmath.ncdf(x)). Φ(−0.71) is where statrs 0.19.1's
        // erfc is 1.0e-10 off.
        let cases = [
            (-0.71, 0.23885206808998674),
            (0.5, 0.6914624612740131),
            (2.5, 0.9937903346742238),
            (-3.0, 0.0013498980316300946),
            (-5.0, 2.866515718791939e-07),
        ];
        for (x, want) in cases {
            assert!(
                rel(normal_cdf(x), want) < 1e-14,
                "Φ({x}) = {}",
                normal_cdf(x)
            );
        }
        // Deep in the tail the rounding of x/√2 alone costs about x²·1e-16.
        assert!(rel(normal_cdf(-12.0), 1.776482112077679e-33) < 1e-13);
        assert_eq!(normal_cdf(-40.0), 0.0);
        assert_eq!(normal_cdf(40.0), 1.0);
        assert!(normal_cdf(f64::NAN).is_nan());
    }

    #[test]
    fn bca_shifts_with_bias_and_acceleration() {
        let reps: Vec<f64> = (0..1001).map(|i| i as f64 / 10.0).collect();
        // θ̂ below the median: z0 < 0 pulls both ends down relative to percentile.
        let c = summarize(40.0, &reps, Method::Bca, 0.90, 0.0);
        let p = summarize(40.0, &reps, Method::Percentile, 0.90, 0.0);
        assert!(c.ci[0] < p.ci[0] && c.ci[1] < p.ci[1]);
        // Hand check of the lower end: z0 = Φ⁻¹(400.5/1001)
        let z0 = normal_quantile(400.5 / 1001.0);
        let a_l = normal_cdf(2.0 * z0 + normal_quantile(0.05));
        assert!((c.ci[0] - quantile_sorted(&reps, a_l)).abs() < 1e-12);
        // Σu³ = 1 − 1 + 8 = 8, Σu² = 6: a = 8 / (6 · 6^1.5).
        assert!((acceleration(&[1.0, -1.0, 2.0]) - 8.0 / (6.0 * 6f64.powf(1.5))).abs() < 1e-15);
    }
}
