//! Binary outcomes at small n: Wilson's score interval and Clopper–Pearson's exact interval
//! for a proportion, Newcombe's hybrid score interval for a paired difference of
//! proportions, and the exact McNemar test.
//!
//! A z or t interval for a proportion collapses to a point at 0/n and n/n and leaves [0, 1]
//! near them; these stay inside and keep their level at tens of questions
//! (docs/COVERAGE.md).

use statrs::distribution::{Beta, Binomial, ContinuousCDF, Discrete};

use crate::resample::summary::Interval;

/// Wilson's score interval for a proportion p̂ out of n trials at normal quantile z:
/// (p̂ + z²/2n ± z √(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n).
///
/// `n` may be an effective sample size (p̂(1 − p̂)/SE² of a stratified estimate, Kish's
/// design-effect adjustment): the formula does not need it to be an integer.
pub fn wilson(p: f64, n: f64, z: f64) -> Interval {
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    Interval::new((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Clopper–Pearson's exact interval for a proportion p̂ out of n trials at `confidence`
/// 1 − α, with x = n·p̂ successes: lower = B⁻¹(α/2; x, n − x + 1) (0 when x = 0),
/// upper = B⁻¹(1 − α/2; x + 1, n − x) (1 when x = n), B⁻¹ the Beta quantile. It inverts
/// the two one-sided binomial tests, so it covers at least 1 − α for every true p:
/// conservative, and wider than Wilson's.
///
/// `n` may be an effective sample size (Kish's, as for [`wilson`]); x = n·p̂ then need not
/// be an integer and the Beta quantiles take it as it is (Korn and Graubard 1998's
/// Clopper–Pearson interval for survey data). An x within 1e-9 of an integer is that
/// integer (7/20 · 20 is 7.000000000000001 in binary).
pub fn clopper_pearson(p: f64, n: f64, confidence: f64) -> Interval {
    let tail = (1.0 - confidence) / 2.0;
    let x = {
        let x = (p * n).clamp(0.0, n);
        if (x - x.round()).abs() < 1e-9 {
            x.round()
        } else {
            x
        }
    };
    let quantile = |q: f64, a: f64, b: f64| {
        Beta::new(a, b)
            .expect("both shapes are positive: x > 0 and n − x > 0 are checked")
            .inverse_cdf(q)
    };
    let lower = if x <= 0.0 {
        0.0
    } else {
        quantile(tail, x, n - x + 1.0)
    };
    let upper = if x >= n {
        1.0
    } else {
        quantile(1.0 - tail, x + 1.0, n - x)
    };
    Interval::new(lower, upper)
}

/// The counts of a paired binary comparison of A and B on the same n questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairedCounts {
    /// Both right.
    pub both: u64,
    /// Only A right.
    pub only_a: u64,
    /// Only B right.
    pub only_b: u64,
    /// Both wrong.
    pub neither: u64,
}

impl PairedCounts {
    /// The questions: both + only_a + only_b + neither.
    pub fn n(&self) -> u64 {
        self.both + self.only_a + self.only_b + self.neither
    }

    /// Newcombe's (1998) hybrid score interval, his method 10, for p_B − p_A = (only_b −
    /// only_a)/n: with Wilson intervals (l_A, u_A), (l_B, u_B) and the phi coefficient
    /// φ = (both·neither − only_a·only_b) / √((both+only_a)(only_b+neither)(both+only_b)(only_a+neither))
    /// (0 when a margin is empty), the ends are θ̂ − √((p_B − l_B)² − 2φ(p_B − l_B)(u_A − p_A) + (u_A − p_A)²)
    /// and θ̂ + √((u_B − p_B)² − 2φ(u_B − p_B)(p_A − l_A) + (p_A − l_A)²).
    pub fn newcombe(&self, z: f64) -> Interval {
        let n = self.n() as f64;
        let (a, b, c, d) = (
            self.both as f64,
            self.only_a as f64,
            self.only_b as f64,
            self.neither as f64,
        );
        let (pa, pb) = ((a + b) / n, (a + c) / n);
        let (la, ua) = {
            let w = wilson(pa, n, z);
            (w.lower(), w.upper())
        };
        let (lb, ub) = {
            let w = wilson(pb, n, z);
            (w.lower(), w.upper())
        };
        let margins = (a + b) * (c + d) * (a + c) * (b + d);
        let phi = if margins > 0.0 {
            (a * d - b * c) / margins.sqrt()
        } else {
            0.0
        };
        let theta = pb - pa;
        let down = ((pb - lb).powi(2) - 2.0 * phi * (pb - lb) * (ua - pa) + (ua - pa).powi(2))
            .max(0.0)
            .sqrt();
        let up = ((ub - pb).powi(2) - 2.0 * phi * (ub - pb) * (pa - la) + (pa - la).powi(2))
            .max(0.0)
            .sqrt();
        Interval::new((theta - down).max(-1.0), (theta + up).min(1.0))
    }

    /// The exact two-sided McNemar p of these counts ([`mcnemar_exact`]).
    pub fn mcnemar_exact(&self) -> f64 {
        mcnemar_exact(self.only_a, self.only_b)
    }

    /// The mid-p McNemar of these counts ([`mcnemar_mid_p`]).
    pub fn mcnemar_mid_p(&self) -> f64 {
        mcnemar_mid_p(self.only_a, self.only_b)
    }
}

/// McNemar's exact test: with n = b + c discordant pairs and k = min(b, c),
/// p = min(1, 2 · Σ_{i=0}^{k} C(n, i) / 2^n) (the Binomial(n, ½) lower tail at k, doubled);
/// p = 1 when n = 0.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    (2.0 * half_binomial_cdf(n, b.min(c))).min(1.0)
}

/// McNemar's mid-p: the exact p less the probability of the observed table,
/// p_mid = min(1, 2 · Σ_{i=0}^{k−1} C(n, i)/2^n + C(n, k)/2^n) with k = min(b, c) and
/// n = b + c (1 when n = 0, and 1 when b = c). Less conservative than the exact p, whose
/// size at 0.05 is well below 0.05 for small n; it is not an exact test.
pub fn mcnemar_mid_p(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    (2.0 * half_binomial_cdf(n, k) - half_binomial_pmf(n, k)).min(1.0)
}

/// Up to this many trials the Bin(m, ½) probabilities are summed term by term from 2⁻ᵐ
/// (exact in binary for small m; 2⁻¹⁰⁰⁰ is still a normal double); beyond it statrs' pmf
/// terms (each exp of a log, so large m does not underflow) are summed rather than taken
/// from its cdf, whose incomplete beta is less exact (for b = 1, c = 6 the cdf gives
/// 0.12499999999999654 for the exact 0.125).
const EXACT_TRIALS: u64 = 1000;

/// P(Bin(m, ½) ≤ x).
fn half_binomial_cdf(m: u64, x: u64) -> f64 {
    if m > EXACT_TRIALS {
        let dist = Binomial::new(0.5, m).expect("p = 1/2 is a valid binomial probability");
        return (0..=x).map(|i| dist.pmf(i)).sum();
    }
    let mut term = 0.5f64.powi(m as i32);
    let mut sum = term;
    for i in 1..=x {
        term *= (m - i + 1) as f64 / i as f64;
        sum += term;
    }
    sum
}

/// P(Bin(m, ½) = x).
fn half_binomial_pmf(m: u64, x: u64) -> f64 {
    if m > EXACT_TRIALS {
        return Binomial::new(0.5, m)
            .expect("p = 1/2 is a valid binomial probability")
            .pmf(x);
    }
    (1..=x).fold(0.5f64.powi(m as i32), |t, i| {
        t * (m - i + 1) as f64 / i as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: f64 = 1.959963984540054;

    /// Reference: statsmodels 0.15.0, `python3 -c "from statsmodels.stats.proportion import
    /// proportion_confint as c; print(c(0, 20, method='wilson'), c(20, 20, method='wilson'),
    /// c(1, 20, method='wilson'), c(18, 20, method='wilson'))"` (tests/reference/inference.py).
    #[test]
    fn wilson_equals_statsmodels() {
        for (x, want) in WILSON {
            let w = wilson(x / 20.0, 20.0, Z);
            assert!((w.lower() - want.0).abs() < 1e-12, "{x}: {:?}", w);
            assert!((w.upper() - want.1).abs() < 1e-12, "{x}: {:?}", w);
        }
    }

    const WILSON: [(f64, (f64, f64)); 4] = [
        (0.0, (0.0, 0.1611251580528194)),
        (20.0, (0.8388748419471804, 0.9999999999999999)),
        (1.0, (0.008881448800795402, 0.2361311934467421)),
        (18.0, (0.6989663547715127, 0.9721335187862318)),
    ];

    /// Reference: scipy 1.17.1, `python3 tests/reference/inference.py` (its "clopper-pearson"
    /// lines: `binomtest(k, n).proportion_ci(method='exact')` at 95% and 90%, and
    /// `beta.ppf(0.025, 7.3, 13.3)`, `beta.ppf(0.975, 8.3, 12.3)` for x = 7.3 of an effective
    /// n = 19.6, the Beta quantiles at non-integer shapes).
    #[test]
    fn clopper_pearson_equals_scipy() {
        for (k, n, want) in CLOPPER_PEARSON {
            let i = clopper_pearson(k / n, n, 0.95);
            assert!(
                (i.lower() - want.0).abs() < 1e-10 && (i.upper() - want.1).abs() < 1e-10,
                "{k}/{n}: {i:?}, scipy {want:?}"
            );
        }
        // 0/n and n/n keep their exact ends (0 and 1), the other end is (α/2)^(1/n).
        let i = clopper_pearson(0.0, 20.0, 0.95);
        assert_eq!(i.lower(), 0.0);
        assert!((i.upper() - (1.0 - 0.025f64.powf(1.0 / 20.0))).abs() < 1e-12);
        assert_eq!(clopper_pearson(1.0, 20.0, 0.95).upper(), 1.0);
        let i = clopper_pearson(7.0 / 20.0, 20.0, 0.90);
        assert!((i.lower() - 0.17731091757446915).abs() < 1e-10, "{i:?}");
        assert!((i.upper() - 0.5580345113154889).abs() < 1e-10, "{i:?}");
        let i = clopper_pearson(7.3 / 19.6, 19.6, 0.95);
        assert!((i.lower() - 0.1685944563034027).abs() < 1e-10, "{i:?}");
        assert!((i.upper() - 0.616228990461323).abs() < 1e-10, "{i:?}");
        // Wider than Wilson's on both sides (conservative), at every count of 20.
        for k in 1..20 {
            let (c, w) = (
                clopper_pearson(k as f64 / 20.0, 20.0, 0.95),
                wilson(k as f64 / 20.0, 20.0, Z),
            );
            assert!(
                c.lower() < w.lower() && c.upper() > w.upper(),
                "{k}: {c:?} {w:?}"
            );
        }
    }

    const CLOPPER_PEARSON: [(f64, f64, (f64, f64)); 9] = [
        (0.0, 20.0, (0.0, 0.16843347098308548)),
        (20.0, 20.0, (0.8315665290169145, 1.0)),
        (1.0, 20.0, (0.0012650894979560339, 0.24873276277202772)),
        (18.0, 20.0, (0.6830172859809209, 0.9876514728297041)),
        (7.0, 20.0, (0.1539092047845412, 0.5921885345328283)),
        (0.0, 5.0, (0.0, 0.5218237501049814)),
        (5.0, 5.0, (0.47817624989501856, 1.0)),
        (3.0, 10.0, (0.06673951117773447, 0.652452850060008)),
        (45.0, 100.0, (0.35032022923967204, 0.5527198112260501)),
    ];

    /// Newcombe (1998), "Improved confidence intervals for the difference between binomial
    /// proportions based on paired data", Stat. Med. 17:2635, Table II, example (a):
    /// e = 36, f = 12, g = 2, h = 0 (n = 50), method 10: 0.0569 to 0.3404.
    #[test]
    fn newcombe_equals_the_published_example() {
        // f = 12 are right on the first test only: the first is B here (θ = p_B − p_A).
        let c = PairedCounts {
            both: 36,
            only_a: 2,
            only_b: 12,
            neither: 0,
        };
        let i = c.newcombe(Z);
        assert!(
            (i.lower() - 0.0569).abs() < 5e-5 && (i.upper() - 0.3404).abs() < 5e-5,
            "{i:?}"
        );
    }

    /// Reference: statsmodels 0.15.0, `python3 -c "from statsmodels.stats.contingency_tables
    /// import mcnemar; print(mcnemar([[12, 8], [0, 0]], exact=True).pvalue,
    /// mcnemar([[5, 3], [9, 3]], exact=True).pvalue)"` and scipy's binom for the mid-p
    /// (tests/reference/inference.py).
    #[test]
    fn mcnemar_equals_statsmodels() {
        // claude-2.1 vs mixtral on bayes_evals: 8 discordant questions, all one way.
        let one_way = PairedCounts {
            both: 12,
            only_a: 8,
            only_b: 0,
            neither: 0,
        };
        assert_eq!(one_way.mcnemar_exact(), 0.0078125);
        assert!((one_way.mcnemar_mid_p() - 0.00390625).abs() < 1e-15);
        let mixed = PairedCounts {
            both: 5,
            only_a: 3,
            only_b: 9,
            neither: 3,
        };
        assert!((mixed.mcnemar_exact() - MIXED.0).abs() < 1e-12);
        assert!((mixed.mcnemar_mid_p() - MIXED.1).abs() < 1e-12);
        let none = PairedCounts {
            both: 3,
            only_a: 0,
            only_b: 0,
            neither: 2,
        };
        assert_eq!(none.mcnemar_exact(), 1.0);
        // Past the exact range statrs takes over: 600 vs 700 of 1300 discordant questions,
        // scipy 1.17.1 `2 * binom.cdf(600, 1300, 0.5)` = 0.0060157938610449395.
        let big = PairedCounts {
            both: 0,
            only_a: 700,
            only_b: 600,
            neither: 0,
        };
        assert!(
            (big.mcnemar_exact() - BIG).abs() < 1e-9 * BIG,
            "{}",
            big.mcnemar_exact()
        );
        // No discordant pair: the interval still has width (it does not collapse).
        let i = none.newcombe(Z);
        assert!(i.lower() < 0.0 && i.upper() > 0.0, "{i:?}");
    }

    const BIG: f64 = 0.0060157938610449395;

    const MIXED: (f64, f64) = (0.14599609375, 0.09228515624999999);
}
