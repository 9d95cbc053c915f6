//! The difficulty filter (drop items every model answers the same way) and the format
//! filter (the validation rules), as in RAGCap-Bench's dataset construction.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::results::{Outcome, RunResult};
use super::validate::{ItemsFile, Loaded};
use crate::error::{Error, Result};

/// A dropped line and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dropped {
    /// 1-based line in the items file.
    pub line: u64,
    /// Item id, when the line has one.
    pub id: Option<String>,
    /// `format` (a validation rule) or `difficulty` (every model gave the same answer).
    pub reason: &'static str,
    /// The broken rules, or a sentence naming the agreed answer.
    pub detail: String,
    /// Models that agreed (difficulty only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// The answer they agreed on (difficulty only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Vec<String>>,
    /// Whether that answer is the gold one (difficulty only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreed_is_gold: Option<bool>,
}

/// The outcome of filtering.
#[derive(Debug, Clone)]
pub struct FilterOutcome {
    /// Items kept, in file order.
    pub kept: Vec<Loaded>,
    /// Lines dropped, in file order.
    pub dropped: Vec<Dropped>,
    /// Kept items that some model has no parsed answer for (not tested for difficulty).
    pub untested: Vec<String>,
    /// Models seen in the predictions, sorted.
    pub models: Vec<String>,
}

/// What `mcq filter` reports: the kept lines (unchanged) and every dropped one with why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilterReport {
    /// Non-blank lines of the items file.
    pub items: u64,
    /// The kept lines as they were in the file, in file order.
    pub kept: Vec<String>,
    /// Lines dropped by a format rule.
    pub dropped_format: usize,
    /// Items dropped because every model answered them alike.
    pub dropped_difficulty: usize,
    /// Kept items that some model has no parsed answer for (not tested for difficulty).
    pub untested: Vec<String>,
    /// Models seen in the predictions, sorted.
    pub models: Vec<String>,
    /// Lines dropped, in file order.
    pub dropped: Vec<Dropped>,
}

/// Filters a read items file by the predictions of at least two models ([`filter`]) and
/// counts the lines dropped by each filter.
///
/// # Errors
/// Those of [`filter`].
pub fn filter_items(file: ItemsFile, predictions: &[RunResult]) -> Result<FilterReport> {
    let items = file.lines;
    let out = filter(file, predictions)?;
    let dropped_format = out.dropped.iter().filter(|d| d.reason == "format").count();
    Ok(FilterReport {
        items,
        kept: out.kept.into_iter().map(|l| l.raw).collect(),
        dropped_format,
        dropped_difficulty: out.dropped.len() - dropped_format,
        untested: out.untested,
        models: out.models,
        dropped: out.dropped,
    })
}

/// Applies the format filter (every violation drops its line) and the difficulty filter:
/// an item is dropped when every model has at least one parsed answer for it and all parsed
/// answers (every run of every model, in original labels) are the same set.
///
/// # Errors
/// [`Error::Usage`] when the predictions hold fewer than two distinct models.
pub fn filter(file: ItemsFile, predictions: &[RunResult]) -> Result<FilterOutcome> {
    let models: BTreeSet<&str> = predictions.iter().map(|r| r.model.as_str()).collect();
    if models.len() < 2 {
        return Err(Error::Usage(format!(
            "the difficulty filter needs predictions from at least two models; got {}",
            if models.is_empty() {
                "none".to_string()
            } else {
                models.iter().copied().collect::<Vec<_>>().join(", ")
            }
        )));
    }
    // id -> model -> parsed answers (sorted label sets).
    let mut answers: BTreeMap<&str, BTreeMap<&str, Vec<Vec<String>>>> = BTreeMap::new();
    for r in predictions {
        if r.outcome != Outcome::Ok {
            continue;
        }
        let mut a = r.answer.clone().unwrap_or_default();
        a.sort();
        answers
            .entry(r.id.as_str())
            .or_default()
            .entry(r.model.as_str())
            .or_default()
            .push(a);
    }
    let mut dropped = Vec::new();
    let mut by_line: BTreeMap<u64, Vec<&super::validate::Violation>> = BTreeMap::new();
    for v in &file.violations {
        by_line.entry(v.line).or_default().push(v);
    }
    for (line, vs) in by_line {
        dropped.push(Dropped {
            line,
            id: vs.iter().find_map(|v| v.id.clone()),
            reason: "format",
            detail: vs
                .iter()
                .map(|v| format!("[{}] {}", v.rule, v.message))
                .collect::<Vec<_>>()
                .join("; "),
            models: vec![],
            answer: None,
            agreed_is_gold: None,
        });
    }
    let mut kept = Vec::new();
    let mut untested = Vec::new();
    for l in file.items {
        let per_model = answers.get(l.item.id.as_str());
        let complete = per_model.is_some_and(|m| models.iter().all(|k| m.contains_key(k)));
        if !complete {
            untested.push(l.item.id.clone());
            kept.push(l);
            continue;
        }
        let m = per_model.expect("checked above");
        let first = m
            .values()
            .next()
            .and_then(|v| v.first())
            .cloned()
            .unwrap_or_default();
        let all_same = m.values().flatten().all(|a| *a == first);
        if all_same {
            let mut gold = l.item.answer.clone();
            gold.sort();
            let shown = super::item::in_option_order(&first, &l.item.labels());
            dropped.push(Dropped {
                line: l.line,
                id: Some(l.item.id.clone()),
                reason: "difficulty",
                detail: format!(
                    "all {} model(s) answered {{{}}} in every run",
                    m.len(),
                    shown.join(", ")
                ),
                models: m.keys().map(|s| s.to_string()).collect(),
                answer: Some(shown),
                agreed_is_gold: Some(first == gold),
            });
        } else {
            kept.push(l);
        }
    }
    dropped.sort_by_key(|d| d.line);
    Ok(FilterOutcome {
        kept,
        dropped,
        untested,
        models: models.into_iter().map(String::from).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::score::test_line;
    use super::super::validate::read_items;
    use super::*;

    /// The case of tests/it/mcq_cli.rs `filter_drops_items_every_model_answers_alike`,
    /// through the library: x is answered A by every run of both models (dropped for
    /// difficulty, and A is gold), y gets A and A,B (kept), `bad` breaks the format rules,
    /// z has no parsed answer from m2 (kept, untested).
    #[test]
    fn filter_items_by_hand() {
        let item = |id: &str| {
            serde_json::json!({"id": id, "task": "evidence_extraction", "language": "en",
                "query": "q", "context": "c", "instruction": "i", "polarity": "correct",
                "options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"}],
                "answer": ["A"]})
            .to_string()
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("gen.jsonl");
        let lines = [item("x"), item("y"), "{\"id\": \"bad\"}".into(), item("z")];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let e = "evidence_extraction";
        let mut x1 = test_line("x", "m2", e, &["A"], "ok", Some(&["A"]));
        x1.run = 1;
        let preds = [
            test_line("x", "m1", e, &["A"], "ok", Some(&["A"])),
            test_line("y", "m1", e, &["A"], "ok", Some(&["A"])),
            test_line("z", "m1", e, &["A"], "ok", Some(&["B"])),
            test_line("x", "m2", e, &["A"], "ok", Some(&["A"])),
            x1,
            test_line("y", "m2", e, &["A"], "ok", Some(&["A", "B"])),
            test_line("z", "m2", e, &["A"], "parse_failed", None),
        ];
        let r = filter_items(read_items(&p).unwrap(), &preds).unwrap();
        assert_eq!(r.items, 4);
        assert_eq!(r.kept, [item("y"), item("z")]);
        assert_eq!((r.dropped_format, r.dropped_difficulty), (1, 1));
        assert_eq!(r.untested, ["z"]);
        assert_eq!(r.models, ["m1", "m2"]);
        let d = &r.dropped[0];
        assert_eq!(
            (d.line, d.id.as_deref(), d.reason),
            (1, Some("x"), "difficulty")
        );
        assert_eq!(
            (d.models.as_slice(), d.agreed_is_gold),
            (&["m1".to_string(), "m2".to_string()][..], Some(true))
        );
        assert_eq!((r.dropped[1].line, r.dropped[1].reason), (3, "format"));
        // One model is not enough.
        assert!(filter_items(read_items(&p).unwrap(), &preds[..3]).is_err());
    }
}
