//! The resampling engine: the resample-and-sum contract ([`engine`]), its CPU ([`cpu`], with
//! `fused_avx2`, its AVX2 walk of drawing and adding fused) and GPU (`ragstats_gpu::resample`)
//! backends (the backend choice is `ragstats_gpu::select`), centred column helpers ([`columns`]),
//! per-replicate question draw counts ([`counts`]), the cluster draw ([`clusters`]: whole
//! clusters of units within strata, on the same engine), interval summaries of replicate
//! statistics ([`summary`]), what a resampling run is ([`settings`]: seed, replicates,
//! confidence), table buffers advised for huge pages ([`table`]) and the benchmark
//! workloads ([`workload`]). Random draws come from [`crate::rng`].
//!
//! The engine returns, for every replicate and stratum, the column sums of `q_s` rows drawn
//! with replacement; every bootstrap statistic is host-side arithmetic on those sums. No
//! file here knows what a panel, a variance component or a forecast is.

pub mod bench;
pub mod clusters;
pub mod columns;
pub mod counts;
pub mod cpu;
pub mod engine;
#[cfg(target_arch = "x86_64")]
mod fused_avx2;
pub mod settings;
pub mod summary;
pub mod table;
pub mod workload;

pub use cpu::CpuBackend;
pub use engine::{ResampleBackend, ResampleJob, CHUNK_ROWS, LANES, MAX_K};
pub use settings::{Backend, ResampleSettings, Resampling, MAX_REPLICATES};
