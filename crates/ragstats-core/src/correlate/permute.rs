//! Permutation tests: Philox-driven Fisher–Yates shuffles of the y rows, the stream layout
//! they use, 16-bit integer quantisation of the columns, and the CPU backend (the mirror of
//! `crates/ragstats-gpu/shaders/permute.wgsl`).
//!
//! # Stream layout
//!
//! ```text
//! key     = [seed as u32, (seed >> 32) as u32]            (as the bootstrap)
//! counter = [permutation, PERMUTE_STREAM, d / 4, retry]    PERMUTE_STREAM = 0xFFFF_FFFE
//! ```
//!
//! Permutation `p` of `n` rows starts from the identity π = (0, 1, …, n−1) and performs
//! Durstenfeld's Fisher–Yates shuffle: step d = 0, 1, …, n−2 sets i = n − 1 − d, draws
//! j uniform on [0, i] from draw d (word d % 4 of the block above, Lemire's method with the
//! same rejection/retry rule as the bootstrap, bound q = i + 1) and swaps π\[i\] and π\[j\].
//! Every permutation of the n rows is exactly equally likely. Bootstrap streams use counter
//! word 1 = the stratum index, which is far below 0xFFFF_FFFE, so the two kinds of streams
//! never share a Philox block even under the same seed.
//!
//! # Exact integer statistic
//!
//! Every column is centred and scaled to integers in [−32767, 32767] (see [`quantise`]);
//! products then fit in i32 and the sum over rows fits in i64 for n < 2^32, so the permuted
//! cross sums Σ_i x_i y_π(i) are exact integers: the CPU and the GPU (which emulates 64-bit
//! adds with two u32 words) agree bit for bit whatever the order of additions. Only the
//! cross sum changes under a permutation of y, so |r*| ≥ |r| is decided exactly as
//! |n Σx y_π − Σx Σy| ≥ |n Σx y − Σx Σy| in 128-bit integers.

use std::ops::Range;

use rayon::prelude::*;

use crate::rng::philox::philox4x32_10;
use crate::rng::stream::{lemire_accept, lemire_threshold, redraw, seed_key};
use crate::Result;

/// Counter word 1 of every permutation stream.
pub const PERMUTE_STREAM: u32 = 0xFFFF_FFFE;
/// Largest magnitude of a quantised value.
pub const QMAX: f64 = 32767.0;

/// Writes permutation `p` of `0..n` under `seed` into `out` (Fisher–Yates, layout above).
pub fn permutation(seed: u64, p: u32, n: usize, out: &mut Vec<u32>) {
    let key = seed_key(seed);
    out.clear();
    out.extend(0..n as u32);
    if n < 2 {
        return;
    }
    let mut block = [0u32; 4];
    for d in 0..(n - 1) as u32 {
        let i = n as u32 - 1 - d;
        let q = i + 1;
        let (jb, w) = (d / 4, (d % 4) as usize);
        if w == 0 {
            block = philox4x32_10([p, PERMUTE_STREAM, jb, 0], key);
        }
        let t = lemire_threshold(q);
        let j = match lemire_accept(block[w], q, t) {
            Some(v) => v,
            None => redraw(key, [p, PERMUTE_STREAM, jb], w, q, t),
        };
        out.swap(i as usize, j as usize);
    }
}

/// Centres `x` on its mean and scales it to round((x − x̄) · 32767 / max|x − x̄|), an integer
/// in [−32767, 32767]. A constant column becomes all zeros. The permutation test on these
/// values is an exact test of the quantised data (a fixed transform applied before
/// permuting), whose r differs from the unquantised r by about 1e-4 at most.
pub fn quantise(x: &[f64]) -> Vec<i32> {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let amax = x.iter().map(|v| (v - m).abs()).fold(0.0, f64::max);
    if amax == 0.0 {
        return vec![0; x.len()];
    }
    let s = QMAX / amax;
    x.iter().map(|v| ((v - m) * s).round() as i32).collect()
}

/// One permutation job: quantised columns, the (x, y) pairs to sum, and a range of
/// permutations.
#[derive(Debug, Clone)]
pub struct PermuteJob<'a> {
    pub xq: &'a [Vec<i32>],
    pub yq: &'a [Vec<i32>],
    /// (x column, y column) per pair.
    pub pairs: Vec<(u32, u32)>,
    pub seed: u64,
    pub permutations: Range<u32>,
}

impl PermuteJob<'_> {
    /// Rows.
    pub fn n(&self) -> usize {
        self.xq.first().map_or(0, Vec::len)
    }
}

/// A backend computing permuted cross sums.
pub trait PermuteBackend: Send + Sync {
    /// `"cpu"` or `"gpu"`.
    fn name(&self) -> &'static str;
    /// Human description.
    fn description(&self) -> String;
    /// `out[(p − start) * pairs + k]` = `Σ_i xq[x_k][i] · yq[y_k][π_p(i)]`, exact.
    ///
    /// # Errors
    /// [`crate::Error::Gpu`] on device failures or data too large for the device.
    fn cross_sums(&self, job: &PermuteJob, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<i64>>;
}

/// The rayon CPU backend.
#[derive(Debug, Clone, Default)]
pub struct CpuPermute;

impl PermuteBackend for CpuPermute {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        format!("rayon, {} threads", rayon::current_num_threads())
    }

    fn cross_sums(&self, job: &PermuteJob, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<i64>> {
        let n = job.n();
        let np = job.pairs.len();
        let total = (job.permutations.end - job.permutations.start) as usize;
        let mut out = vec![0i64; total * np];
        // Batches keep progress monotone and memory bounded.
        let per_batch = ((1usize << 22) / n.max(1)).clamp(1, 4096);
        let mut done = 0usize;
        for batch in out.chunks_mut(per_batch * np.max(1)) {
            let first = job.permutations.start + done as u32;
            batch.par_chunks_mut(np.max(1)).enumerate().for_each_init(
                Vec::new,
                |perm, (i, sums)| {
                    permutation(job.seed, first + i as u32, n, perm);
                    for (s, &(x, y)) in sums.iter_mut().zip(&job.pairs) {
                        let (xs, ys) = (&job.xq[x as usize], &job.yq[y as usize]);
                        *s = xs
                            .iter()
                            .zip(perm.iter())
                            .map(|(&a, &j)| (a * ys[j as usize]) as i64)
                            .sum();
                    }
                },
            );
            done += batch.len() / np.max(1);
            progress(done as u64);
        }
        Ok(out)
    }
}

/// n Σxy − Σx Σy of quantised columns with cross sum `sxy`, in i128 (exact).
pub fn centred_cross(n: usize, sx: i64, sy: i64, sxy: i64) -> i128 {
    n as i128 * sxy as i128 - sx as i128 * sy as i128
}

/// Permutation p-value with the +1 correction, (1 + #{|r*| ≥ |r|}) / (N + 1).
pub fn p_value(exceed: u64, permutations: u64) -> f64 {
    (1 + exceed) as f64 / (permutations + 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_permutations_and_depend_only_on_their_index() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for p in 0..50 {
            permutation(7, p, 37, &mut a);
            let mut s = a.clone();
            s.sort();
            assert_eq!(s, (0..37).collect::<Vec<u32>>());
            permutation(7, p, 37, &mut b);
            assert_eq!(a, b);
        }
        permutation(7, 0, 37, &mut a);
        permutation(8, 0, 37, &mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn fisher_yates_follows_the_documented_stream() {
        // Independent restatement for n = 5: q = 5, 4, 3, 2 from words 0..3 of one block;
        // a power-of-two q never rejects, and for these words 5 and 3 happen not to either
        // (checked by asserting acceptance).
        let seed = 0xdead_beef_u64;
        let block = philox4x32_10([3, 0xFFFF_FFFE, 0, 0], [0xdead_beef, 0]);
        let mut want: Vec<u32> = (0..5).collect();
        for (d, q) in [5u32, 4, 3, 2].iter().enumerate() {
            let m = block[d] as u64 * *q as u64;
            assert!(
                (m as u32) >= ((1u64 << 32) % *q as u64) as u32,
                "word {d} rejected"
            );
            let j = (m >> 32) as usize;
            want.swap(*q as usize - 1, j);
        }
        let mut got = Vec::new();
        permutation(seed, 3, 5, &mut got);
        assert_eq!(got, want);
    }

    #[test]
    fn every_permutation_of_three_is_about_equally_likely() {
        let mut counts = std::collections::HashMap::new();
        let mut p = Vec::new();
        for i in 0..60_000 {
            permutation(1, i, 3, &mut p);
            *counts.entry(p.clone()).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 6);
        for (perm, c) in counts {
            // Expected 10,000 each; sd ≈ 91.
            assert!((c as i64 - 10_000).abs() < 500, "{perm:?}: {c}");
        }
    }

    #[test]
    fn quantise_centres_and_scales() {
        assert_eq!(quantise(&[1.0, 2.0, 3.0]), vec![-32767, 0, 32767]);
        assert_eq!(
            quantise(&[0.0, 0.0, 1.0, 1.0]),
            vec![-32767, -32767, 32767, 32767]
        );
        assert_eq!(quantise(&[4.0, 4.0]), vec![0, 0]);
    }

    #[test]
    fn p_value_has_the_plus_one_correction() {
        assert_eq!(p_value(0, 999), 0.001);
        assert_eq!(p_value(999, 999), 1.0);
    }
}
