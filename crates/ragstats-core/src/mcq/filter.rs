//! The difficulty filter (drop items every model answers the same way) and the format
//! filter (the validation rules), as in RAGCap-Bench's dataset construction.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

use super::results::{Outcome, RunResult};
use super::validate::{ItemsFile, Loaded};
use crate::document::Report;
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
/// Serialized with `kept` as the number of kept lines (the lines are the `--out` file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilterReport {
    /// Non-blank lines of the items file.
    pub items: u64,
    /// The kept lines as they were in the file, in file order.
    #[serde(serialize_with = "count")]
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

/// Writes a list as its length.
fn count<S: Serializer>(v: &[String], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u64(v.len() as u64)
}

/// Writes a path as text (`Path::display`: a name that is not UTF-8 is written lossily
/// rather than failing the document).
fn display<S: Serializer>(p: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&p.display())
}

/// The document of `mcq filter` (docs/json.md): the [`FilterReport`] and the two files
/// the command wrote, the kept lines (`out`) and the dropped-lines report (`report`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilterRun {
    /// The analysis.
    #[serde(flatten)]
    pub filter: FilterReport,
    /// The kept items file (`--out`).
    #[serde(serialize_with = "display")]
    pub out: PathBuf,
    /// The dropped-lines report (`--report`).
    #[serde(rename = "report", serialize_with = "display")]
    pub report_file: PathBuf,
}

/// A filter does not resample: the default (all `null`) engine.
impl Report for FilterRun {}

impl FilterRun {
    /// The run of `filter` whose kept lines went to `out` and dropped lines to
    /// `report_file`.
    pub fn new(filter: FilterReport, out: &Path, report_file: &Path) -> FilterRun {
        FilterRun {
            filter,
            out: out.to_path_buf(),
            report_file: report_file.to_path_buf(),
        }
    }
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

    #[test]
    fn a_filter_document_counts_the_kept_lines_and_names_the_files_written() {
        use crate::document::{document, Inputs};
        use serde_json::{json, Value};
        let r = FilterReport {
            items: 3,
            kept: vec!["{\"id\": \"a\"}".into(), "{\"id\": \"b\"}".into()],
            dropped_format: 1,
            dropped_difficulty: 0,
            untested: vec!["b".into()],
            models: vec!["m1".into(), "m2".into()],
            dropped: vec![Dropped {
                line: 2,
                id: None,
                reason: "format",
                detail: "[json] bad".into(),
                models: vec![],
                answer: None,
                agreed_is_gold: None,
            }],
        };
        let run = FilterRun::new(r, Path::new("out/kept.jsonl"), Path::new("out/d.jsonl"));
        let inputs = Inputs::new()
            .with("items", "g.jsonl")
            .with_all("predictions", ["p1.jsonl", "p2.jsonl"]);
        let d = document("mcq filter", inputs, &run);
        let mut body = d.clone();
        body.as_object_mut().unwrap().remove("run");
        assert_eq!(
            body,
            json!({
                "items": 3, "kept": 2, "dropped_format": 1, "dropped_difficulty": 0,
                "untested": ["b"], "models": ["m1", "m2"],
                "out": "out/kept.jsonl", "report": "out/d.jsonl",
                "dropped": [{"line": 2, "id": null, "reason": "format",
                             "detail": "[json] bad"}],
            })
        );
        assert_eq!(
            d["run"]["inputs"],
            json!({"items": "g.jsonl", "predictions": ["p1.jsonl", "p2.jsonl"]})
        );
        for k in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(d["run"][k], Value::Null, "{k}");
        }
    }
}
