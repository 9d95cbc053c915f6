//! The stratified question bootstrap of a panel, as an analysis: what to resample
//! ([`stratified`]: the equal-weight estimate, and with `--components` the refitted variance
//! components and forecasts), the replicates file a sharded run writes and merges
//! ([`replicates`]), and the intervals reported from it ([`report`]); [`analysis`] is the
//! one call that runs it on a loaded panel (and merges shards). The draws themselves run on
//! the engine in [`crate::resample`].

pub mod analysis;
pub mod replicates;
pub mod report;
pub mod stratified;
mod view;
