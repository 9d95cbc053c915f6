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

/// Where resampling runs (the `backend` setting; `ragstats-gpu` makes the engines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A hardware GPU adapter if wgpu finds one (a software one only with
    /// `STATS_ALLOW_SOFTWARE_GPU=1`), else the CPU.
    #[default]
    Auto,
    /// The rayon CPU backend.
    Cpu,
    /// Any GPU adapter, including software ones; an error if there is none.
    Gpu,
}

/// The most bootstrap replicates one run may ask for: every replicate's statistics are kept
/// in memory (8 bytes each), so the bound is checked before anything is allocated.
pub const MAX_REPLICATES: u32 = 10_000_000;

/// The resampling settings every bootstrap analysis takes from its user: how many
/// replicates, the seed, where they run, and the confidence level of the intervals.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ResampleSettings {
    /// Bootstrap replicates (2 to [`MAX_REPLICATES`]).
    pub replicates: u32,
    /// Seed of the Philox streams (the same seed gives the same replicates on every backend).
    pub seed: u64,
    /// Where the resampling runs.
    pub backend: Backend,
    /// Confidence level of the intervals, strictly between 0 and 1.
    pub confidence: f64,
}

impl Default for ResampleSettings {
    fn default() -> Self {
        ResampleSettings {
            replicates: 10_000,
            seed: 1,
            backend: Backend::Auto,
            confidence: 0.95,
        }
    }
}

impl ResampleSettings {
    /// Checks the confidence level.
    ///
    /// # Errors
    /// [`Error::Setting`](crate::Error::Setting) for a level outside (0, 1).
    pub fn check_confidence(&self) -> crate::Result<()> {
        if self.confidence > 0.0 && self.confidence < 1.0 {
            Ok(())
        } else {
            Err(crate::Error::setting(
                "confidence",
                format!(
                    "{} must be between 0 and 1 (exclusive), e.g. 0.95",
                    self.confidence
                ),
            ))
        }
    }

    /// The run these settings ask for, checked: 2 to [`MAX_REPLICATES`] replicates (an SE
    /// and an interval need two), and the confidence level.
    ///
    /// # Errors
    /// [`Error::Setting`](crate::Error::Setting) naming `replicates` or `confidence`.
    pub fn resampling(&self) -> crate::Result<Resampling> {
        self.check_confidence()?;
        if self.replicates < 2 {
            return Err(crate::Error::setting("replicates", "must be at least 2"));
        }
        if self.replicates > MAX_REPLICATES {
            return Err(crate::Error::setting(
                "replicates",
                format!(
                    "{}: at most {MAX_REPLICATES} are allowed in one run; split it into \
                     ranges of replicates and merge them",
                    self.replicates
                ),
            ));
        }
        Ok(Resampling {
            seed: self.seed,
            replicates: self.replicates,
            confidence: self.confidence,
        })
    }
}
