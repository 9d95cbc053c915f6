//! Benchmark workloads and the raw generator rate: what `stats bench` and
//! `benches/resample.rs` measure.

use rayon::prelude::*;

/// A benchmark workload (`stats bench --workload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// The audit panel's shape: 2 strata of 223 questions (446 in all).
    #[default]
    Paper,
    /// 2 strata of N/2 questions (N = 1,000,000 by default).
    Large,
}

impl Workload {
    /// Total questions N when `--questions` is not given.
    pub fn default_questions(self) -> u64 {
        match self {
            Workload::Paper => 446,
            Workload::Large => 1_000_000,
        }
    }

    /// Rows per stratum: N split over 2 strata (the first gets the odd one).
    pub fn strata_rows(self, questions: Option<u64>) -> Vec<usize> {
        let n = questions.unwrap_or(self.default_questions()) as usize;
        vec![n.div_ceil(2), n / 2]
    }
}

use super::cpu::walk_draws;
use crate::rng::domain;
use crate::rng::philox::philox4x32_10;
use crate::rng::stream::seed_key;

/// Rows of `k` uniform values in `[-0.5, 0.5)` from Philox (the synthetic-rows domain:
/// counter [`domain::synthetic_rows`]`(row, col / 4)` = `[row, col/4, 0xBE4C, 0]` under the
/// key of `seed ^ 0x5EED_DA7A`), each column then centred on its mean (computed in f64) as
/// callers of the engine do.
pub fn synthetic_rows(seed: u64, q: usize, k: usize) -> Vec<f32> {
    let key = seed_key(seed ^ domain::SYNTHETIC_ROWS_KEY);
    let mut out = Vec::with_capacity(q * k);
    for row in 0..q {
        for c in 0..k {
            let w = philox4x32_10(domain::synthetic_rows(row as u32, (c / 4) as u32), key)[c % 4];
            out.push((w as f64 / 4_294_967_296.0 - 0.5) as f32);
        }
    }
    for c in 0..k {
        let mean = (0..q).map(|r| out[r * k + c] as f64).sum::<f64>() / q as f64;
        for r in 0..q {
            out[r * k + c] = (out[r * k + c] as f64 - mean) as f32;
        }
    }
    out
}

/// The CPU limit: every draw of replicates `replicates` over strata of sizes `rows` is
/// generated (one Philox block per 4 draws, Lemire with rejection) by the very loop the CPU
/// engine uses, in parallel over (replicate, stratum) pairs, and the indices are summed so the
/// work cannot be optimised away. Returns the wrapping sum of all indices.
pub fn raw_draw_checksum(seed: u64, rows: &[u32], replicates: std::ops::Range<u32>) -> u64 {
    let key = seed_key(seed);
    let n_strata = rows.len() as u64;
    let n_pairs = ((replicates.end - replicates.start) as u64 * n_strata) as usize;
    let per_rep: u64 = rows.iter().map(|&q| q as u64).sum::<u64>().max(1);
    let min_len = ((1u64 << 15) * n_strata / per_rep).max(1) as usize;
    (0..n_pairs)
        .into_par_iter()
        .with_min_len(min_len)
        .map(|p| {
            let r = replicates.start + (p as u64 / n_strata) as u32;
            let s = (p as u64 % n_strata) as u32;
            let mut acc = 0u64;
            walk_draws(key, r, s, rows[s as usize], |_, row| {
                acc = acc.wrapping_add(row as u64)
            });
            acc
        })
        .reduce(|| 0, u64::wrapping_add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::draw_index;

    #[test]
    fn synthetic_rows_are_centred_and_bounded() {
        let d = synthetic_rows(3, 1000, 3);
        assert_eq!(d.len(), 3000);
        for c in 0..3 {
            let mean: f64 = (0..1000).map(|r| d[r * 3 + c] as f64).sum::<f64>() / 1000.0;
            assert!(mean.abs() < 1e-6, "column {c} mean {mean}");
        }
        assert!(d.iter().all(|v| v.abs() < 1.0));
    }

    #[test]
    fn raw_checksum_equals_sum_of_draw_index() {
        let rows = [5u32, 223, 0x8000_0001];
        let mut want = 0u64;
        for r in 2..5u32 {
            for (s, &q) in rows.iter().enumerate().take(2) {
                for i in 0..q as u64 {
                    want = want.wrapping_add(draw_index(11, r, s as u32, i, q) as u64);
                }
            }
        }
        assert_eq!(raw_draw_checksum(11, &rows[..2], 2..5), want);
    }
}
