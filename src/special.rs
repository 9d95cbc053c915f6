//! Special functions the summaries need: the standard normal CDF and quantile.

/// Standard normal CDF Φ(x) = erfc(−x/√2)/2.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function, relative error below 1.2e-7 everywhere
/// (Numerical Recipes' Chebyshev fit, `erfcc`), refined by one Newton-free series switch:
/// for |x| < 0.5 the Maclaurin series of erf is used (error < 1e-15).
pub fn erfc(x: f64) -> f64 {
    if x.abs() < 0.5 {
        // erf(x) = 2/√π Σ (−1)^n x^(2n+1) / (n! (2n+1))
        let mut term = x;
        let mut sum = x;
        let x2 = x * x;
        for n in 1..30 {
            term *= -x2 / n as f64;
            sum += term / (2 * n + 1) as f64;
        }
        return 1.0 - sum * std::f64::consts::FRAC_2_SQRT_PI;
    }
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398
                                + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Standard normal quantile Φ⁻¹(p) for p in (0, 1): Wichura's AS 241 (PPND16),
/// relative accuracy about 1e-16. Returns ±∞ at 0 and 1, NaN outside [0, 1].
#[allow(clippy::excessive_precision)] // the published AS 241 coefficients, as printed
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || p.is_nan() {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q
            * (((((((2509.0809287301227 * r + 33430.575583588128) * r + 67265.7709270087) * r
                + 45921.95393154987)
                * r
                + 13731.693765509461)
                * r
                + 1971.5909503065513)
                * r
                + 133.14166789178438)
                * r
                + 3.3871328727963665)
            / (((((((5226.495278852545 * r + 28729.085735721943) * r + 39307.89580009271) * r
                + 21213.794301586597)
                * r
                + 5394.196021424751)
                * r
                + 687.1870074920579)
                * r
                + 42.31333070160091)
                * r
                + 1.0);
    }
    let mut r = if q < 0.0 { p } else { 1.0 - p };
    r = (-r.ln()).sqrt();
    let val = if r <= 5.0 {
        let r = r - 1.6;
        (((((((7.745450142783414e-4 * r + 0.022723844989269184) * r + 0.2417807251774506) * r
            + 1.2704582524523684)
            * r
            + 3.6478483247632045)
            * r
            + 5.769497221460691)
            * r
            + 4.630337846156546)
            * r
            + 1.4234371107496835)
            / (((((((1.0507500716444169e-9 * r + 5.475938084995345e-4) * r
                + 0.015198666563616457)
                * r
                + 0.14810397642748008)
                * r
                + 0.6897673349851)
                * r
                + 1.6763848301838038)
                * r
                + 2.053191626637759)
                * r
                + 1.0)
    } else {
        let r = r - 5.0;
        (((((((2.0103343992922881e-7 * r + 2.7115555687434876e-5) * r + 0.0012426609473880784)
            * r
            + 0.026532189526576124)
            * r
            + 0.2965605718285049)
            * r
            + 1.7848265399172913)
            * r
            + 5.463784911164114)
            * r
            + 6.657904643501103)
            / (((((((2.0442631033899397e-15 * r + 1.421511758316446e-7) * r
                + 1.8463183175100548e-5)
                * r
                + 7.868691311456133e-4)
                * r
                + 0.014875361290850615)
                * r
                + 0.1369298809227358)
                * r
                + 0.599832206555888)
                * r
                + 1.0)
    };
    if q < 0.0 {
        -val
    } else {
        val
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_quantiles_match_published_values() {
        // Values from standard normal tables (e.g. Abramowitz & Stegun 26.2).
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-13);
        assert!((normal_quantile(0.5)).abs() < 1e-15);
        assert!((normal_quantile(0.05) + 1.6448536269514722).abs() < 1e-13);
        assert!((normal_quantile(1e-10) + 6.361340902404056).abs() < 1e-10);
        assert!(normal_quantile(1.5).is_nan());
    }

    #[test]
    fn normal_cdf_matches_published_values() {
        assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-15);
        assert!((normal_cdf(-1.0) - 0.15865525393145705).abs() < 2e-8);
        assert!((normal_cdf(0.3) - 0.6179114221889527).abs() < 1e-14);
    }
}
