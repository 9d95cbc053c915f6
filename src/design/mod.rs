//! Closed-form design analyses: nested variance components and D-study forecasts.

pub mod efficiency;
pub mod forecast;
pub mod variance;
