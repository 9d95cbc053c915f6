//! `ragstats`: a statistics engine for evaluating agentic retrieval-augmented generation.
//!
//! Data flows one way: files are loaded and validated ([`panel`]), reduced to per-question
//! sufficient statistics, analysed in closed form ([`design`]) or by resampling
//! ([`resample`], with the GPU backend in [`gpu`]), and summarised. The library never
//! prints; the `stats` binary owns all output.

pub mod correlate;
pub mod design;
pub mod error;
pub mod gpu;
pub mod llm;
pub mod mcq;
pub mod metrics;
pub mod panel;
pub mod resample;
pub mod sim;
pub mod special;

pub use error::{Error, Result};
