//! Cost-ledger rows (DESIGN.md "Cost ledger") for calls that reached the model.
//!
//! One row per record that made at least one request and got an answer:
//! `kind` (default `reader`), `model`, `input_tokens` = `prompt_tokens` (cached tokens
//! included), `cached_input_tokens` = cached prompt tokens, `output_tokens` =
//! `completion_tokens` (reasoning included), plus `reasoning_tokens`, the request `id` and
//! `sample`, and any `dataset`, `question`, `arm`, `trajectory`, `read` from the request's
//! `meta`. Token counts the server did not report are `null` (unknown), never 0.
//!
//! No `key` is written: every row is a separate physical call that the provider billed, and
//! the ledger's `key` means "rows sharing it were one call, bill once". Re-asking the same
//! id in a later run (after a failure, or with `--no-cache`) really is billed again.
//! Cache hits and calls that failed make no row (failed attempts are not billed by the
//! providers covered; a failure's usage is unknown anyway).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::CallRecord;

/// One ledger row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerRow {
    /// `planner`, `reader` or `search`.
    pub kind: String,
    /// The model asked for (the name price tables use).
    pub model: String,
    /// Prompt tokens, cached included.
    pub input_tokens: Option<u64>,
    /// Cached prompt tokens.
    pub cached_input_tokens: Option<u64>,
    /// Completion tokens.
    pub output_tokens: Option<u64>,
    /// Reasoning tokens (part of `output_tokens`), informational.
    pub reasoning_tokens: Option<u64>,
    /// Request id.
    pub id: String,
    /// Sample index.
    pub sample: u32,
    /// `meta.dataset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Value>,
    /// `meta.question`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Value>,
    /// `meta.arm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<Value>,
    /// `meta.trajectory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Value>,
    /// `meta.read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<Value>,
}

impl LedgerRow {
    /// The row for `rec`, or `None` when it costs nothing new (a cache hit or a failure).
    pub fn from_record(rec: &CallRecord, kind: &str) -> Option<LedgerRow> {
        if rec.cached || rec.attempts == 0 || !rec.is_ok() {
            return None;
        }
        let u = rec.usage.as_ref();
        let meta = |k: &str| rec.meta.as_ref().and_then(|m| m.get(k)).cloned();
        Some(LedgerRow {
            kind: kind.to_string(),
            model: rec.model.clone(),
            input_tokens: u.and_then(|u| u.prompt_tokens),
            cached_input_tokens: u.and_then(|u| u.cached_prompt_tokens),
            output_tokens: u.and_then(|u| u.completion_tokens),
            reasoning_tokens: u.and_then(|u| u.reasoning_tokens),
            id: rec.id.clone(),
            sample: rec.sample,
            dataset: meta("dataset"),
            question: meta("question"),
            arm: meta("arm"),
            trajectory: meta("trajectory"),
            read: meta("read"),
        })
    }
}
