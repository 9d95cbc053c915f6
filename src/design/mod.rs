//! Closed-form design analyses: nested variance components and D-study forecasts.

pub mod allocate;
pub mod consistency;
pub mod cost;
pub mod efficiency;
pub mod forecast;
pub mod ledger;
pub mod one_read;
pub mod panel_costs;
pub mod subsets;
pub mod variance;
