//! `ragstats`: a statistics engine for evaluating agentic retrieval-augmented generation.
//!
//! # Layers
//!
//! Data flows one way, and a module imports only from its own layer or a lower one
//! (`tests/it/layers.rs` enforces this, and that no two files import each other in a circle):
//!
//! | layer | modules | holds |
//! |---|---|---|
//! | 0 foundation | [`error`], [`io`], [`rng`] | error type; the CSV and JSONL readers; random streams (Philox, named domains, keyed xoshiro) |
//! | 1 input | [`panel`], [`ledger`], [`questions`], [`trajlog`] | loading, validation, per-question sufficient statistics; the cost-ledger row type, its reader and prices; QA questions and corpora; the runner's trajectory log (records, search records, reader) |
//! | 2 engine | [`gpu`], [`resample`] | wgpu plumbing; resample-and-sum on CPU or GPU |
//! | 3 analyses | [`components`], [`costs`], [`allocation`], [`bootstrap`], [`correlate`], [`mcq`], [`qa_scoring`], [`sim`], [`llm`], [`search`], [`judge`] | everything a command reports; search backends; LLM-as-judge step scores |
//! | 4 pipelines and presentation | [`run`], [`plot`] | the agentic RAG runner built on the analyses (planner, search, selectors, reader, audit); the analyses' results drawn as SVG figures |
//!
//! Commands (the `stats` binary, `src/cmd/`) sit above all of them. The library never
//! prints and does not depend on clap.

pub mod allocation;
pub mod bootstrap;
pub mod components;
pub mod correlate;
pub mod costs;
pub mod error;
pub mod gpu;
pub mod io;
pub mod judge;
pub mod ledger;
pub mod llm;
pub mod mcq;
pub mod panel;
pub mod plot;
pub mod qa_scoring;
pub mod questions;
pub mod resample;
pub mod rng;
pub mod run;
pub mod search;
pub mod sim;
pub mod trajlog;

pub use error::{Error, Result};
