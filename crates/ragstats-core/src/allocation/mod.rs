//! Budget allocation analyses built on components and costs: comparing allocations Q:T:R
//! ([`allocate`]) and cutting their sub-panels ([`slice`](mod@slice)), the one-read efficiency loss at
//! fixed T and at fixed Q ([`fixed_t`], [`efficiency`], [`one_read`]; priced from a ledger
//! in [`one_read_ledger`]), answer consistency
//! across reads (`crate::components::consistency`), and every trajectory × read subset of a depth panel
//! ([`subsets`]), and planning the cheapest allocation for a target precision or the most
//! precise one for a budget ([`planner`]).

pub mod allocate;
pub mod efficiency;
pub mod fixed_t;
pub mod one_read;
pub mod one_read_ledger;
pub mod planner;
pub mod planner_report;
pub mod slice;
pub mod subsets;
