//! The stratified question bootstrap of a panel, as an analysis: what to resample
//! ([`plan`]: the equal-weight estimate, and with `--components` the refitted variance
//! components and forecasts), the replicates file a sharded run writes and merges
//! ([`replicates`]), and the intervals reported from it ([`report`]). The draws themselves
//! run on the engine in [`crate::resample`].

pub mod plan;
pub mod replicates;
pub mod report;
