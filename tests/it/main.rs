//! The integration tests, linked into one binary.
//!
//! One binary rather than one per file: every test binary links the whole library (wgpu,
//! tantivy, ...), and fifty of them filled the CI machine's disk and took most of its time
//! linking. Each file is still its own module, so `cargo test --test it plan::` runs one file.

mod common;
mod support;

mod allocate;
mod bootstrap;
mod cli_bootstrap;
mod cli_correlate;
mod cli_flags;
mod cli_panel;
mod cli_score_answers;
mod cli_simulate;
mod cli_slice;
mod cli_subsets;
mod consistency;
mod constant_outcome;
mod correlate;
mod cost;
mod efficiency;
mod efficiency_currencies;
mod forecast_measured;
mod golden;
mod harden_inputs;
mod harden_nan;
mod harden_output;
mod harden_props;
mod import;
mod input_limits;
mod io_rules;
mod judge;
mod judge_real;
mod layers;
mod ledger_selector;
mod llm_caps;
mod llm_cli;
mod llm_client;
mod llm_real_caps;
mod llm_usage;
mod mcq_cli;
mod mcq_parse;
mod mcq_rates;
mod mcq_real;
mod mcq_real_cut;
mod mcqgen;
mod mcqgen_demo;
mod mcqgen_guided;
mod mcqgen_real;
mod plan;
mod plot;
mod qa_metrics;
mod questions;
mod readme;
mod reml;
mod report;
mod resample_bench_cli;
mod resample_cpu;
mod resample_gpu;
mod run_cli;
mod run_evidence;
mod run_real;
mod search_http;
mod search_local;
mod selectors;
mod sim_ledger;
mod sim_model;
mod subsets;
mod unbalanced;
mod unbalanced_bootstrap;
mod unbalanced_costs;
mod variance;
