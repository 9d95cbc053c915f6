//! Cost-ledger rows ([`ragstats_core::ledger::LedgerRow`], docs/ledger.md) for calls that reached
//! the model.
//!
//! One row per record that made at least one request and got an answer: `kind` (default
//! `reader`), `model`, `input_tokens` = `prompt_tokens` (cached tokens included),
//! `cached_input_tokens` = cached prompt tokens, `output_tokens` = `completion_tokens`
//! (reasoning included), plus `reasoning_tokens`, the request `id` and `sample`, and any
//! `dataset`, `question`, `arm`, `trajectory`, `read` from the request's `meta` (when a
//! string or a number). Token counts the server did not report are left out (unknown),
//! never written as 0. A request made by `mcq run` (its `meta.mcq` holds `item`, `group`,
//! `run` and `prompt`) also gets those four fields, so an MCQ ledger can be costed per item,
//! group and run.
//!
//! No `key` is written: every row is a separate physical call that the provider billed, and
//! the ledger's `key` means "rows sharing it were one call, bill once". Re-asking the same
//! id in a later run (after a failure, or with `--no-cache`) really is billed again.
//! Cache hits and calls that failed make no row (failed attempts are not billed by the
//! providers covered; a failure's usage is unknown anyway).

use serde_json::Value;

use ragstats_core::chat::CallRecord;
use ragstats_core::ledger::{CallKind, Label, LedgerRow};

/// The row for `rec`, or `None` when it costs nothing new (a cache hit or a failure).
pub fn ledger_row(rec: &CallRecord, kind: CallKind) -> Option<LedgerRow> {
    if rec.cached || rec.attempts == 0 || !rec.is_ok() {
        return None;
    }
    let u = rec.usage.as_ref();
    let meta = |k: &str| match rec.meta.as_ref().and_then(|m| m.get(k)) {
        Some(Value::String(s)) => Some(Label::Text(s.clone())),
        Some(Value::Number(n)) => Some(Label::Number(n.clone())),
        // The ledger reader would ignore any other type; it is not written.
        _ => None,
    };
    let mcq = rec.meta.as_ref().and_then(|m| m.get("mcq"));
    let mcq_text = |k: &str| {
        mcq.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Some(LedgerRow {
        item: mcq_text("item"),
        group: mcq_text("group"),
        run: mcq
            .and_then(|m| m.get("run"))
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        prompt: mcq_text("prompt"),
        dataset: meta("dataset"),
        question: meta("question"),
        arm: meta("arm"),
        trajectory: meta("trajectory"),
        read: meta("read"),
        selector: meta("selector"),
        model: Some(rec.model.clone()),
        input_tokens: u.and_then(|u| u.prompt_tokens),
        cached_input_tokens: u.and_then(|u| u.cached_prompt_tokens),
        output_tokens: u.and_then(|u| u.completion_tokens),
        reasoning_tokens: u.and_then(|u| u.reasoning_tokens),
        id: Some(rec.id.clone()),
        sample: Some(rec.sample),
        ..LedgerRow::new(kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(meta: Value) -> CallRecord {
        serde_json::from_value(json!({
            "id": "q7#run1", "sample": 1, "model": "m", "text": "Answer: B",
            "usage": {"prompt_tokens": 120, "completion_tokens": 4, "total_tokens": 124,
                      "raw": {}},
            "latency_ms": 1.0, "elapsed_ms": 1.0, "attempts": 1, "cached": false,
            "meta": meta
        }))
        .unwrap()
    }

    #[test]
    fn rows_carry_the_request_labels_and_the_mcq_fields() {
        // An `llm batch` request file's labels.
        let r = ledger_row(
            &record(
                json!({"dataset": "hotpotqa", "question": "q7", "trajectory": 2, "read": 0,
                          "selector": "rrf", "other": [1]}),
            ),
            CallKind::Reader,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"kind": "reader", "dataset": "hotpotqa", "question": "q7", "trajectory": 2,
                   "read": 0, "selector": "rrf", "model": "m", "input_tokens": 120, "output_tokens": 4,
                   "id": "q7#run1", "sample": 1})
        );
        // An `mcq run` request's `meta.mcq`.
        let r = ledger_row(
            &record(
                json!({"mcq": {"item": "pc-3", "group": "planning-convergent", "run": 1,
                                    "prompt": "bare", "fingerprint": "ab"}}),
            ),
            CallKind::Reader,
        )
        .unwrap();
        assert_eq!(
            (
                r.item.as_deref(),
                r.group.as_deref(),
                r.run,
                r.prompt.as_deref()
            ),
            (
                Some("pc-3"),
                Some("planning-convergent"),
                Some(1),
                Some("bare")
            )
        );
        assert_eq!((r.question, r.trajectory), (None, None));
    }
}
