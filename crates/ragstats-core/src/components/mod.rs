//! Nested variance components (cluster > question > trajectory > read, the cluster level
//! with `--cluster`) and the D-study and Q-only forecasts made from them.

pub mod cluster;
pub mod consistency;
mod consistency_view;
pub mod forecast;
mod forecast_view;
pub mod levels;
pub mod reml;
pub mod variance;
pub mod variance_view;
