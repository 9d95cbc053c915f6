//! LLM-judge scores made honest by a few human labels (docs/judges.md): the
//! prediction-powered (PPI++) estimate of the human-scale mean from a judged panel and the
//! human labels of a uniformly random subset of its questions ([`ppi`], [`labels`]), the
//! random labelling sheet ([`sample`]), and judge–human agreement ([`agreement`]).

pub mod agreement;
pub mod boot;
pub mod compare;
pub mod estimate;
pub mod labels;
pub mod plan;
pub mod ppi;
pub mod sample;
pub mod simultaneous;
