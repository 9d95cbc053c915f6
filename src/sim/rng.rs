//! A small deterministic random-number generator for the simulators.
//!
//! * Streams are keyed, not sequential: [`Stream::new`]`(seed, &[tags...])` hashes the seed
//!   and a tuple of integers (what is being drawn, stratum, question, trajectory, read, ...)
//!   with the SplitMix64 finaliser into the state of a xoshiro256** generator. Every random
//!   effect therefore depends only on the seed and its own indices: a panel simulated with
//!   T = 2, R = 1 is exactly the corresponding subset of one simulated with T = 3, R = 5 and
//!   the same seed.
//! * Normals use Marsaglia's polar method with [`ln`] written here from `+ − × ÷` and `sqrt`
//!   only (all correctly rounded in IEEE 754), and log-normals use [`exp`] likewise, so the
//!   output is bit-identical on every platform — unlike `f64::ln`/`exp`, which call the
//!   platform's libm.

/// SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xoshiro256** stream (Blackman & Vigna 2018) keyed by a seed and a tuple of tags.
#[derive(Debug, Clone)]
pub struct Stream {
    s: [u64; 4],
}

impl Stream {
    /// The stream for `seed` and `tags`: the key is folded as h ← splitmix64(h ⊕ tag) over the
    /// tags, then the four state words are splitmix64(key + i·γ), i = 1..4 (never all zero in
    /// practice; a zero state is replaced by a fixed nonzero one).
    pub fn new(seed: u64, tags: &[u64]) -> Self {
        let mut h = splitmix64(seed);
        for &t in tags {
            h = splitmix64(h ^ t);
        }
        let mut s = [0u64; 4];
        for (i, w) in s.iter_mut().enumerate() {
            *w = splitmix64(h.wrapping_add((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Stream { s }
    }

    /// The next 64 random bits (xoshiro256**).
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal by Marsaglia's polar method: draw (u, v) uniform on the square
    /// (−1, 1)², keep it when 0 < s = u² + v² < 1, return u·sqrt(−2 ln s / s).
    pub fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * ln(s) / s).sqrt();
            }
        }
    }

    /// Log-normal with the given median and log-scale SD: median · exp(σ Z).
    pub fn lognormal(&mut self, median: f64, sdlog: f64) -> f64 {
        median * exp(sdlog * self.normal())
    }
}

// fdlibm's split of ln 2: LN2_HI has its low 32 bits zero, so k·LN2_HI is exact.
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

/// Natural logarithm from basic arithmetic only (platform-independent bits).
///
/// x = 2^k · m with m in [√½, √2); ln m = 2 atanh(s) = 2(s + s³/3 + s⁵/5 + …) with
/// s = (m − 1)/(m + 1), |s| ≤ 0.172, summed to 12 terms (truncation < 1e-19 relative);
/// ln x = k·ln2 + ln m with ln 2 split in two parts. Non-positive or non-finite x give NaN
/// (or +∞ for +∞).
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut x, mut k) = (x, 0i64);
    if x < f64::MIN_POSITIVE {
        // Subnormal: scale into the normal range first.
        x *= (1u64 << 54) as f64;
        k -= 54;
    }
    let bits = x.to_bits();
    k += ((bits >> 52) & 0x7FF) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        k += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // Horner form of 1 + s²/3 + s⁴/5 + … + s²²/23.
    let mut poly = 0.0;
    for j in (0..12).rev() {
        poly = poly * s2 + 1.0 / (2 * j + 1) as f64;
    }
    let kf = k as f64;
    kf * LN2_HI + (kf * LN2_LO + 2.0 * s * poly)
}

/// Exponential from basic arithmetic only (platform-independent bits).
///
/// x = k·ln2 + r with k = round(x/ln2), |r| ≤ ln2/2; e^r by its Taylor series to 20 terms
/// (truncation < 1e-20 relative); e^x = 2^k e^r by exponent arithmetic. Overflow gives +∞,
/// underflow 0.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.78 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let k = (x / std::f64::consts::LN_2).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut term = 1.0;
    let mut sum = 1.0;
    for n in 1..=20 {
        term = term * r / n as f64;
        sum += term;
    }
    // Scale by 2^k in two steps so that k near the ends of the range stays representable.
    let k = k as i64;
    let half = k / 2;
    sum * pow2(half) * pow2(k - half)
}

/// 2^k for |k| ≤ 1022 as an exact power of two.
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_known_answers() {
        // Reference values of the SplitMix64 generator seeded with 0 (Vigna's splitmix64.c):
        // each output is the finaliser applied to state += golden gamma.
        let mut state = 0u64;
        let mut next = || {
            let out = splitmix64(state);
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            out
        };
        assert_eq!(next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(next(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(next(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn ln_and_exp_agree_with_libm() {
        let mut s = Stream::new(1, &[2]);
        for _ in 0..20_000 {
            let x = s.uniform();
            let y = 1e-300 + x * 1e6;
            for v in [x.max(1e-320), y, 1.0 + x] {
                let (a, b) = (ln(v), v.ln());
                assert!(
                    (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                    "ln {v}: {a} vs {b}"
                );
            }
            let z = (x - 0.5) * 1400.0;
            let (a, b) = (exp(z), z.exp());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b,
                "exp {z}: {a} vs {b}"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert!(ln(-1.0).is_nan());
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn normal_moments() {
        let mut s = Stream::new(42, &[]);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| s.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        // SE of the mean 0.0022, of the variance 0.0032: 5-SE bands.
        assert!(mean.abs() < 0.011, "mean {mean}");
        assert!((var - 1.0).abs() < 0.016, "var {var}");
        let tail = xs.iter().filter(|&&x| x > 1.959_964).count() as f64 / n as f64;
        assert!((tail - 0.025).abs() < 0.0018, "upper 2.5% tail {tail}");
    }

    /// Expected values from an independent Python transcription of the same construction
    /// (SplitMix64 key folding, xoshiro256**, polar method with CPython's `math.log`).
    #[test]
    fn stream_matches_python_reference() {
        let mut a = Stream::new(7, &[1, 2, 3]);
        assert_eq!(a.next_u64(), 0x2f07_14a5_9749_c67f);
        assert_eq!(a.next_u64(), 0x497f_9a65_cbec_c05b);
        assert_eq!(a.next_u64(), 0x4d1c_3780_bfb0_b407);
        let mut b = Stream::new(42, &[]);
        for want in [-1.166_057_642_945_265, -1.082_499_686_438_268] {
            let got = b.normal();
            assert!((got - want).abs() <= 4.0 * f64::EPSILON, "{got} vs {want}");
        }
    }

    #[test]
    fn streams_depend_on_every_tag() {
        let a = Stream::new(7, &[1, 2, 3]).next_u64();
        assert_eq!(a, Stream::new(7, &[1, 2, 3]).next_u64());
        assert_ne!(a, Stream::new(7, &[1, 2, 4]).next_u64());
        assert_ne!(a, Stream::new(8, &[1, 2, 3]).next_u64());
        assert_ne!(a, Stream::new(7, &[1, 2]).next_u64());
    }
}
