//! `ragstats-agent`: everything that talks to a model or a search engine.
//!
//! - [`llm`]: the OpenAI-compatible chat-completions client (cache, rate limits, retries,
//!   batches that resume); the call-record types it returns live in `ragstats_core::chat`.
//! - [`search`]: search backends (DeepResearchGym-style HTTP, a local tantivy BM25 index,
//!   masks and a result cache).
//! - [`run`]: the agentic RAG runner of the budget paper (planner → search → selector →
//!   reader), its run plan, prompts and trajectory log, and `run-audit`.
//! - [`http`]: the HTTP client builder every backend starts from (TLS by rustls with ring).
//! - [`judge`]: LLM-as-judge step scores of logged trajectories.
//! - [`mcqgen`]: RAGCap-Bench item generation (vanilla and guided) from logged trajectories.
//!
//! It builds on `ragstats-core` (inputs, records, analyses) and never prints.

// A library never prints: progress and notes reach the front end through return values
// and callbacks. (Tests may say why they skip.)
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod http;
pub mod judge;
pub mod llm;
pub mod mcqgen;
pub mod run;
pub mod search;
