//! Budget allocation analyses built on components and costs: comparing allocations Q:T:R
//! ([`allocate`]) and cutting their sub-panels ([`slice`](mod@slice)), the one-read efficiency loss at
//! fixed T and at fixed Q ([`fixed_t`], [`efficiency`], [`one_read`]; priced from a ledger
//! in [`one_read_ledger`]), answer consistency
//! across reads (`crate::components::consistency`), and every trajectory × read subset of a depth panel
//! ([`subsets`]), and planning the cheapest allocation for a target precision or the most
//! precise one for a budget ([`planner`]).

pub mod allocate;
mod allocate_view;
pub mod cluster_plan;
pub mod efficiency;
pub mod fixed_t;
pub mod one_read;
pub mod one_read_ledger;
mod one_read_view;
pub mod planner;
pub mod planner_report;
mod planner_view;
pub mod slice;
pub mod slice_report;
pub mod slice_rows;
mod slice_view;
pub mod subsets;
pub mod walk;

use crate::document::Engine;
use crate::resample::engine::ResampleBackend;
use crate::resample::Resampling;

/// The engine of a question bootstrap run on `backend` with `resampling`, as a document's
/// `run` envelope names it: the backend (`cpu`, `gpu`), its adapter, the replicates, the
/// seed and the confidence of the intervals.
pub fn bootstrap_engine(backend: &dyn ResampleBackend, resampling: &Resampling) -> Engine {
    Engine::resampled(
        backend.name(),
        backend.description(),
        u64::from(resampling.replicates),
        resampling.seed,
        resampling.confidence,
    )
}
