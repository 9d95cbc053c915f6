//! The resample-and-sum engine: for every replicate `r` and stratum `s`, the `k` column sums
//! of `q_s` rows drawn with replacement from stratum `s` (draws per [`super::stream`]).
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

/// Which backend to run on (`--backend auto|cpu|gpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum BackendChoice {
    /// A hardware GPU adapter if wgpu finds one (a software one only with
    /// `STATS_ALLOW_SOFTWARE_GPU=1`), else the CPU.
    #[default]
    Auto,
    /// The rayon CPU backend.
    Cpu,
    /// Any GPU adapter, including software ones; an error if there is none.
    Gpu,
}

/// Builds the backend for `choice`.
///
/// `Auto` prefers a discrete GPU, then an integrated one, then (only with the environment
/// variable `STATS_ALLOW_SOFTWARE_GPU=1`) a software adapter such as lavapipe, and falls
/// back to the CPU otherwise; the CPU backend's description then says why. `Gpu` takes
/// any adapter and never falls back.
///
/// # Errors
/// [`Error::Gpu`] when `Gpu` is chosen and no adapter or device can be obtained.
/// Below this many draws (B × Σ q_s), `auto` runs on the CPU without probing for a GPU:
/// starting a GPU device and uploading costs tens of milliseconds, more than the CPU needs
/// for the whole job (e.g. the paper's 2 × 223 questions × 10,000 replicates = 4.5 M draws
/// take about 12 ms on two cores). Results are bit-identical either way.
pub const AUTO_GPU_MIN_DRAWS: u64 = 1 << 26;

/// [`select_backend`] for a job of `draws` draws: `auto` keeps small jobs on the CPU.
///
/// # Errors
/// As [`select_backend`].
pub fn select_backend_for(choice: BackendChoice, draws: u64) -> Result<Box<dyn ResampleBackend>> {
    if matches!(choice, BackendChoice::Auto) && draws < AUTO_GPU_MIN_DRAWS {
        return Ok(Box::new(super::cpu::CpuBackend::with_note(format!(
            "auto: {draws} draws is a small job, faster on the CPU than starting a GPU; --backend gpu forces the GPU"
        ))));
    }
    select_backend(choice)
}

pub fn select_backend(choice: BackendChoice) -> Result<Box<dyn ResampleBackend>> {
    use super::cpu::CpuBackend;
    use super::gpu_backend::GpuBackend;
    use crate::gpu::AdapterPolicy;
    match choice {
        BackendChoice::Cpu => Ok(Box::new(CpuBackend::new())),
        BackendChoice::Gpu => Ok(Box::new(GpuBackend::new(AdapterPolicy::Any)?)),
        BackendChoice::Auto => {
            let allow_software = std::env::var("STATS_ALLOW_SOFTWARE_GPU").as_deref() == Ok("1");
            match GpuBackend::new(AdapterPolicy::Hardware { allow_software }) {
                Ok(g) => Ok(Box::new(g)),
                Err(e) => Ok(Box::new(CpuBackend::with_note(format!("no GPU used: {e}")))),
            }
        }
    }
}
