//! The resample-and-sum engine: for every replicate `r` and stratum `s`, the `k` column sums
//! of `q_s` rows drawn with replacement from stratum `s` (draws per [`crate::rng::stream`]).
//!
//! # Accumulation contract (identical on both backends)
//!
//! f32 addition is not associative, so the order of every add is fixed here; the CPU
//! backend emulates the GPU's order exactly and the two produce bit-identical sums.
//!
//! For each (replicate `r`, stratum `s`) independently:
//!
//! 1. The `q_s` draws are grouped in blocks of 4: block `j` holds draws `4j..4j+3`, the
//!    Philox block for counter `[r, s, j, 0]` (words 0..3; draws `>= q_s` are skipped).
//! 2. The stratum's rows are split into chunks of [`CHUNK_ROWS`] rows
//!    (chunk `c` = rows `c*CHUNK_ROWS .. (c+1)*CHUNK_ROWS`).
//! 3. For each chunk `c` in order: each of [`LANES`] lanes `l` starts with `k` f32
//!    accumulators at `0.0` and walks blocks `j = l, l + LANES, l + 2*LANES, ...`; for each
//!    draw of the block, in word order 0..3, whose row index falls in chunk `c`, it adds
//!    the row's `k` values into its own accumulators (column `c'` into accumulator `c'`).
//! 4. Tree reduction over lanes: for `stride` in `[32, 16, 8, 4, 2, 1]`:
//!    `acc[l] += acc[l + stride]` for `l < stride`.
//! 5. The chunk's total `acc[0]` is added to the output sum (which starts at `0.0`), in
//!    chunk order.
//!
//! All adds are plain IEEE f32 adds (there are no multiplies, so no FMA contraction).
//! Results never depend on thread count, batch size, how a replicate range is split
//! across calls, or device limits: nothing in the order above refers to any of them.
//! (A GPU that flushes subnormal floats to zero could differ on subnormal inputs; centred
//! evaluation scores are never subnormal.)

use std::ops::Range;

use crate::{Error, Result};

/// Largest number of columns per row.
pub const MAX_K: usize = 16;
/// Fixed accumulation width (lanes per (replicate, stratum)): part of the contract.
pub const LANES: usize = 64;
/// Rows per data chunk: part of the contract.
pub const CHUNK_ROWS: usize = 1 << 20;

/// One resampling job: rows of `k` statistics grouped in strata, and a range of replicates.
#[derive(Debug, Clone)]
pub struct ResampleJob<'a> {
    /// Per stratum, `q_s` rows times `k` columns, row-major, already centred by the caller
    /// (centring keeps f32 sums from cancelling).
    pub strata: Vec<&'a [f32]>,
    /// Columns per row, `1..=MAX_K`.
    pub k: usize,
    /// The user's seed: the Philox key.
    pub seed: u64,
    /// Replicates to compute; replicate `r` is the same whichever range it is computed in.
    pub replicates: Range<u32>,
}

impl ResampleJob<'_> {
    /// Checks the job's shape: `k` in `1..=MAX_K`, at least one stratum, every stratum
    /// non-empty with a length that is a multiple of `k`, and `q_s < 2^32`.
    ///
    /// # Errors
    /// [`Error::Usage`] for a bad `k` or replicate range, [`Error::Data`] for a bad stratum.
    pub fn validate(&self) -> Result<()> {
        if self.k == 0 || self.k > MAX_K {
            return Err(Error::Usage(format!(
                "resample: k = {} columns per row; expected 1 to {MAX_K}",
                self.k
            )));
        }
        if self.replicates.start > self.replicates.end {
            return Err(Error::Usage(format!(
                "resample: replicate range {}..{} is reversed",
                self.replicates.start, self.replicates.end
            )));
        }
        if self.strata.is_empty() {
            return Err(Error::Data(
                "resample: no strata given; expected at least one".into(),
            ));
        }
        if self.strata.len() > u32::MAX as usize {
            return Err(Error::Data(format!(
                "resample: {} strata; at most 2^32 - 1 are supported",
                self.strata.len()
            )));
        }
        for (s, rows) in self.strata.iter().enumerate() {
            if rows.is_empty() {
                return Err(Error::Data(format!(
                    "resample: stratum {s} has no rows; every stratum needs at least one"
                )));
            }
            if rows.len() % self.k != 0 {
                return Err(Error::Data(format!(
                    "resample: stratum {s} has {} values, not a multiple of k = {}",
                    rows.len(),
                    self.k
                )));
            }
            let q = rows.len() / self.k;
            if q > u32::MAX as usize {
                return Err(Error::Data(format!(
                    "resample: stratum {s} has {q} rows; at most 2^32 - 1 are supported"
                )));
            }
        }
        Ok(())
    }

    /// Rows `q_s` of each stratum (call after [`Self::validate`]).
    pub fn rows(&self) -> Vec<u32> {
        self.strata
            .iter()
            .map(|d| (d.len() / self.k) as u32)
            .collect()
    }

    /// Number of replicates in the range.
    pub fn n_replicates(&self) -> usize {
        (self.replicates.end - self.replicates.start) as usize
    }

    /// Length of the output of [`ResampleBackend::resample_sums`]: `B * S * k`.
    pub fn output_len(&self) -> usize {
        self.n_replicates() * self.strata.len() * self.k
    }

    /// Draws per replicate, `Σ q_s`.
    pub fn draws_per_replicate(&self) -> u64 {
        self.rows().iter().map(|&q| q as u64).sum()
    }
}

/// A backend that computes resampled sums per the accumulation contract above.
pub trait ResampleBackend: Send + Sync {
    /// `"cpu"` or `"gpu"`.
    fn name(&self) -> &'static str;
    /// Human description, e.g. `"rayon, 2 threads"` or adapter name, driver and type.
    fn description(&self) -> String;
    /// `sums[((r - start) * S + s) * k + c]` = sum over the `q_s` draws of replicate `r`,
    /// stratum `s`, of column `c`. `progress` is called with the number of replicates
    /// completed so far (monotone; may be called from any thread).
    ///
    /// # Errors
    /// Shape errors from [`ResampleJob::validate`]; [`Error::Gpu`] for device failures.
    fn resample_sums(&self, job: &ResampleJob, progress: &(dyn Fn(u64) + Sync))
        -> Result<Vec<f32>>;
}
