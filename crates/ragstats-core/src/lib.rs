//! `ragstats-core`: the statistics of evaluating agentic retrieval-augmented generation —
//! inputs, sufficient statistics, the CPU resampling engine and every analysis — with no
//! GPU, network, search index, plotting or command-line code in it.
//!
//! The workspace (see the README's "Layout"): `ragstats-core` (this crate) is below
//! `ragstats-gpu` (the wgpu twins of the engines), `ragstats-agent` (the LLM client, search
//! backends, the runner, the judge, MCQ generation) and `ragstats-plot` (SVG figures); the
//! `stats` command (`ragstats-cli`) is on top. Cargo enforces those arrows.
//!
//! # Layers
//!
//! Inside this crate data flows one way too, and a module imports only from its own layer or
//! a lower one (`tests/it/layers.rs` enforces this, and that no two files import each other
//! in a circle):
//!
//! | layer | modules | holds |
//! |---|---|---|
//! | 0 foundation | [`error`], [`io`], [`rng`], [`table`], [`document`] | error type; the CSV and JSONL readers and atomic writes; random streams (Philox, named domains, keyed xoshiro); the one output table model (typed cells rendered as text, CSV and HTML); the JSON document of a report (its fields plus the `run` envelope) |
//! | 1 input | [`panel`], [`ledger`], [`questions`], [`trajlog`], [`chat`] | panels: loading, validation, per-question sufficient statistics; the cost-ledger row type, its reader and prices; QA questions and corpora; the runner's trajectory log (records, search records, reader); the records of LLM calls (requests, replies, usage) |
//! | 2 inference | [`inference`] | reference distributions: Student t with Satterthwaite df, max-|t| critical values, Wilson, Clopper–Pearson, Newcombe and exact McNemar for binary outcomes |
//! | 2 engine | [`resample`] | resample-and-sum on the CPU, the contract the GPU twin in `ragstats-gpu` implements, interval summaries |
//! | 2 import | [`import`] | other tools' logs (inspect_ai, lm-eval) and Parquet files as panels and ledger rows, told apart by content |
//! | 3 analyses | [`components`], [`costs`], [`allocation`], [`bootstrap`], [`correlate`], [`mcq`], [`qa_scoring`], [`sim`] | everything a command reports |
//! | 4 studies of analyses, the front door | [`coverage`], [`analyses`] | the coverage study: panels simulated at a design, every analysis run on each, its intervals' coverage and tests' error rates |
//!
//! The library never prints and does not depend on clap.
//!
//! # Calling an analysis
//!
//! Every analysis is a function of its loaded inputs and settings that returns a report
//! (`Serialize`); the `stats` commands only parse flags, load, call and render. The nested
//! variance components of the demo panel's paired contrast:
//!
//! ```
//! use ragstats_core::components::variance::analyse_panel;
//! use ragstats_core::panel::{load_panel, LoadOptions};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/panel.csv");
//! let opts = LoadOptions {
//!     contrast: Some("adaptive-open".into()),
//!     allow_unbalanced: true,
//!     ..LoadOptions::default()
//! };
//! let panel = load_panel(path.as_ref(), &opts)?;
//! let report = analyse_panel(&panel)?;
//! assert_eq!(report.outcome, "f1: adaptive-open");
//! // The equal-weight mean over the two strata of the question means of adaptive − open;
//! // Python's float sums over the CSV give 0.010275721225710013.
//! assert!((report.estimate - 0.010275721225710013).abs() < 1e-15);
//! assert_eq!(report.strata.len(), 2);
//! # Ok::<(), ragstats_core::Error>(())
//! ```

// A library never prints: progress and notes reach the front end through return values
// and callbacks. (Tests may say why they skip.)
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod allocation;
pub mod analyses;
pub mod bootstrap;
pub mod chat;
pub mod compare;
pub mod components;
pub mod correlate;
pub mod costs;
pub mod coverage;
pub mod document;
pub mod error;
pub mod import;
pub mod inference;
pub mod io;
pub mod judges;
pub mod ledger;
pub mod mcq;
pub mod panel;
pub mod qa_scoring;
pub mod questions;
pub mod resample;
pub mod rng;
pub mod sequential;
pub mod sim;
pub mod table;
pub mod trajlog;

pub use error::{Error, Result};
