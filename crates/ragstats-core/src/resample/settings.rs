//! What a resampling run is: its seed, its replicate count and the confidence level of the
//! intervals made from it ([`Resampling`]).

use serde::Serialize;

/// The settings every bootstrap analysis shares: the Philox seed, the number of replicates
/// (replicates `0..replicates` are drawn) and the confidence level of the intervals
/// summarising them.
///
/// The engine (`&dyn ResampleBackend`) and the progress callback are not fields: they are
/// the run's collaborators, not its description, so an analysis takes
/// `(…, &Resampling, backend, progress)` and its settings struct stays plain data (`Copy`,
/// comparable, echoed in its report). Runs that compute one shard of the replicates
/// (`bootstrap`'s `--replicates A..B`, a subset study's range) keep a `Range` of their own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Resampling {
    /// Seed of the Philox streams: the same seed draws the same questions on every engine.
    pub seed: u64,
    /// Bootstrap replicates.
    pub replicates: u32,
    /// Confidence level of the percentile intervals, in (0, 1).
    pub confidence: f64,
}
