//! Correlation analyses: Pearson, Spearman, point-biserial and Kendall τ-b for every
//! x × y pair, with t / normal p-values, Fisher-z intervals, bootstrap intervals on the
//! resample engine (rows or whole clusters) and exact-integer permutation tests on the CPU
//! or GPU.
//!
//! * [`table`] loads the columns (missing values, clusters, per-unit aggregation);
//! * [`rank`], [`kendall`] and [`estimate`] compute the point estimates and tests;
//! * [`cluster`] makes the p-values and Fisher intervals cluster-aware (`--cluster`);
//! * [`boot`] expresses each replicate's Pearson / point-biserial r through resampled moment
//!   sums, and [`rank_boot`] re-ranks every resample for Spearman and Kendall;
//! * [`permute`] (CPU, and the stream layout) and `ragstats_gpu::permute` run the permutations;
//! * [`analysis`] ties them together, and [`all_pairs`] is the `stats correlate` analysis as
//!   one call.

pub mod all_pairs;
pub mod analysis;
pub mod boot;
pub mod cluster;
pub mod estimate;
pub mod kendall;
pub mod permute;
pub mod rank;
pub mod rank_boot;
pub mod table;
pub mod view;

pub use analysis::{prepare, Options, PairResult, Prepared};
pub use estimate::{Estimate, Method};
pub use table::{load, load_source, Dataset, LoadSpec, Missing};
