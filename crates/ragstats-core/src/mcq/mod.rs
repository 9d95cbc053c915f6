//! RAGCap-Bench-style multiple-choice evaluation (docs/mcq.md).
//!
//! - [`item`], [`validate`]: the item schema and every format rule, with file:line:id reports.
//! - [`prompt`]: bare and informative templates per task type.
//! - [`shuffle`]: deterministic Philox option permutations.
//! - [`parse`]: reading chosen labels out of what models write.
//! - [`results`]: the calls of `mcq run` and the result lines made from their records.
//! - [`metrics`], [`score`]: EM, instance F1, the group → task → overall average, intervals
//!   from the stratified item bootstrap on the resample engine.
//! - [`compare`]: paired deltas, the tests of each level's ΔEM and (when asked for) the
//!   McNemar table on (id, run) pairs taken as independent.
//! - [`delta_test`]: the test of the printed ΔEM (same weights, runs of an item or items of a
//!   source together): stratified t, delete-one-cluster jackknife t, or the sign test.
//! - [`paired_tests`]: McNemar's exact test and mid-p, and the cluster-adjusted (Obuchowski)
//!   test.
//! - [`cluster`]: items from one source question or trajectory as a cluster (`--items`).
//! - [`positions`]: positional bias and shuffle agreement.
//! - [`filter`]: difficulty and format filters.
//! - items built from trajectory logs (vanilla and error-guided) are in `ragstats_agent::mcqgen`.
//! - [`agree`]: annotator agreement and majority gold.
//! - [`ledger_costs`]: tokens and fees of an `mcq run` ledger per item, group, task and run.

pub mod agree;
pub mod cluster;
pub mod compare;
pub mod delta_test;
pub mod filter;
pub mod item;
pub mod leaderboard;
pub mod ledger_costs;
pub mod metrics;
pub mod paired_tests;
pub mod parse;
pub mod positions;
pub mod prompt;
pub mod results;
pub mod score;
pub mod shuffle;
pub mod validate;
pub mod view;

pub use item::{Group, Item, McqOption, Polarity, Task};
