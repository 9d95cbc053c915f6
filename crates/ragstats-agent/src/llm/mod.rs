//! An OpenAI-compatible chat-completions client that loses nothing.
//!
//! - [`Client`] makes one call with the policies: on-disk cache ([`cache`]), requests- and
//!   tokens-per-minute ceilings ([`ratelimit`]), retries with full-jitter backoff honouring
//!   `Retry-After` ([`retry`]), and parsing of every server dialect's usage and reasoning
//!   output ([`response`]). It returns a [`CallRecord`]: an answer or an error, never a panic.
//! - [`batch::run_batch`] runs many calls with bounded concurrency, appends each record to a
//!   JSONL file the moment it finishes ([`append_log`]), writes cost-ledger rows ([`ledger_rows`]),
//!   resumes where a previous run stopped, and stops cleanly on a [`Cancel`] signal.
//! - [`requests`] reads `requests.jsonl` with file:line errors.
//! - [`probe`]: whether a server's chat template delivers system messages (`stats llm check`).
//!
//! ```no_run
//! # async fn demo() -> ragstats_core::Result<()> {
//! use ragstats_agent::llm::{batch, ChatRequest, Client, ClientConfig, Message};
//! let client = Client::new(ClientConfig::new("http://127.0.0.1:8000/v1"))?;
//! let req = ChatRequest::new("q1", "qwen3-8b", vec![Message::user("2+2?").to_value()]);
//! let rec = client.complete(&req).await;
//! let opts = batch::BatchOptions::new("responses.jsonl");
//! let summary = batch::run_batch(&client, vec![req], &opts, &mut |_p| {}).await?;
//! # let _ = (rec, summary); Ok(()) }
//! ```

pub mod append_log;
pub mod batch;
pub mod cache;
pub mod cancel;
pub mod client;
pub mod ledger_rows;
pub mod probe;
pub mod ratelimit;
pub mod requests;
pub mod response;
pub mod retry;

pub use cancel::Cancel;
pub use client::{Client, ClientConfig, ClientStats};
pub use ragstats_core::chat::{
    CallError, CallRecord, ChatRequest, ErrorKind, Message, ModelConfig, SamplingParams, Usage,
    CUT_NOTE,
};
pub use retry::RetryPolicy;
