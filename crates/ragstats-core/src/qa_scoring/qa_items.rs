//! Prediction files for `stats score-answers`: JSONL, one item per line.
//!
//! Each line is an object with
//! * `id`: string or integer, unique in the file;
//! * `prediction`: string (may be empty);
//! * the gold answers, either `answers`: a non-empty list of strings (SQuAD/HotpotQA
//!   style), or `answer`: a string with an optional `answer_aliases`: list of strings
//!   (MuSiQue style; the golds are the answer followed by its aliases). Giving both
//!   `answers` and `answer` is an error, because it is ambiguous which should count.
//!
//! Other fields are ignored. Blank lines are skipped.

use std::collections::HashMap;

use serde_json::Value;

use super::qa::{score, Style};
use crate::document::Report;
use crate::io::clip;
use crate::{Error, Result};

/// One scored question: its id, the prediction and its gold answers.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerItem {
    pub id: String,
    pub prediction: String,
    pub golds: Vec<String>,
    /// 1-based line number in the input file.
    pub line: u64,
}

/// Per-item scores.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ItemScore {
    pub id: String,
    pub em: f64,
    pub f1: f64,
}

/// Mean EM and F1 over `n` items (both 0 when `n` = 0).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScoreSummary {
    pub style: Style,
    pub n: usize,
    pub em: f64,
    pub f1: f64,
}

/// Reads the prediction file `path`.
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::Input`] naming the file, the 1-based line
/// and what was expected, for a line that is not a JSON object, a missing or mistyped
/// field, an empty gold list, or a duplicate id.
pub fn read_items(source: &crate::panel::Source) -> Result<Vec<AnswerItem>> {
    let path = source.name();
    let mut rdr = crate::panel::memory::jsonl_of(source)?;
    let mut items = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    while let Some((line, obj)) = rdr.next_object()? {
        let err = |msg: String| Error::input(path, Some(line), msg);
        let id = match obj.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            Some(_) => return Err(err("\"id\" must be a string or an integer".into())),
            None => return Err(err("missing \"id\"".into())),
        };
        let item = format!("item {}", clip(&id));
        let prediction = match obj.get("prediction") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(err(format!("{item}: \"prediction\" must be a string"))),
            None => return Err(err(format!("{item}: missing \"prediction\""))),
        };
        let golds = match (obj.get("answers"), obj.get("answer")) {
            (Some(_), Some(_)) => {
                return Err(err(format!(
                "{item}: give either \"answers\" or \"answer\" (+ \"answer_aliases\"), not both"
            )))
            }
            (Some(a), None) => string_list(a)
                .ok_or_else(|| err(format!("{item}: \"answers\" must be a list of strings")))?,
            (None, Some(Value::String(a))) => {
                let mut g = vec![a.clone()];
                if let Some(al) = obj.get("answer_aliases") {
                    g.extend(string_list(al).ok_or_else(|| {
                        err(format!(
                            "{item}: \"answer_aliases\" must be a list of strings"
                        ))
                    })?);
                }
                g
            }
            (None, Some(_)) => return Err(err(format!("{item}: \"answer\" must be a string"))),
            (None, None) => {
                return Err(err(format!(
                    "{item}: missing gold answers (\"answers\" list or \"answer\" string)"
                )))
            }
        };
        if golds.is_empty() {
            return Err(err(format!("{item}: the gold answer list is empty")));
        }
        if let Some(first) = seen.insert(id.clone(), line) {
            return Err(err(format!(
                "duplicate id {:?} (first on line {first})",
                clip(&id)
            )));
        }
        items.push(AnswerItem {
            id,
            prediction,
            golds,
            line,
        });
    }
    Ok(items)
}

fn string_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// Scores every item and their means: EM and F1 are each the maximum over the item's golds,
/// and the summary is their plain mean over items.
pub fn score_items(items: &[AnswerItem], style: Style) -> (Vec<ItemScore>, ScoreSummary) {
    let scores: Vec<ItemScore> = items
        .iter()
        .map(|it| {
            let (em, f1) = score(&it.prediction, &it.golds, style);
            ItemScore {
                id: it.id.clone(),
                em,
                f1,
            }
        })
        .collect();
    let n = scores.len();
    let mean = |f: fn(&ItemScore) -> f64| {
        if n == 0 {
            0.0
        } else {
            scores.iter().map(f).sum::<f64>() / n as f64
        }
    };
    let summary = ScoreSummary {
        style,
        n,
        em: mean(|s| s.em),
        f1: mean(|s| s.f1),
    };
    (scores, summary)
}

/// Settings of `score-answers`: which official script's rules, and whether every item's
/// scores are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct AnswerSettings {
    /// HotpotQA (the default), SQuAD v1.1 or MuSiQue rules.
    pub style: Style,
    /// Keep every item's EM and F1 in the report.
    pub per_item: bool,
}

/// What `score-answers` reports: the means and, when asked for, every item's scores. Its
/// document's body is the summary's fields (`style`, `n`, `em`, `f1`) with `items` beside
/// them when every item was kept.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AnswerReport {
    /// Style, item count, mean EM and mean F1.
    #[serde(flatten)]
    pub summary: ScoreSummary,
    /// Every item's EM and F1, in file order (with [`AnswerSettings::per_item`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemScore>>,
}

/// Scoring answers resamples nothing: the engine is all `null`.
impl Report for AnswerReport {}

/// Scores predictions against their gold answers with the official rules of
/// `settings.style`: per item EM and F1 are each the maximum over its golds; the summary is
/// their plain mean over items, EM = Σ em_i / n, F1 = Σ f1_i / n.
///
/// # Errors
/// [`Error::Data`] for no items (the means of nothing are undefined, not 0).
pub fn score_answers(items: &[AnswerItem], settings: &AnswerSettings) -> Result<AnswerReport> {
    if items.is_empty() {
        return Err(Error::Data(
            "no answers to score (EM and F1 of nothing are undefined)".into(),
        ));
    }
    let (scores, summary) = score_items(items, settings.style);
    Ok(AnswerReport {
        summary,
        items: settings.per_item.then_some(scores),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four items of tests/it/cli_score_answers.rs (its numbers are the official
    /// scripts' values, averaged by hand): EM 2/4 in every style; F1 per item hotpotqa
    /// 2/3, 0, 0, 1; squad 2/3, 0.5, 0, 1; musique 2/3, 0.5, 1, 1.
    #[test]
    fn score_answers_means_per_style() {
        let item = |id: &str, prediction: &str, golds: &[&str]| AnswerItem {
            id: id.into(),
            prediction: prediction.into(),
            golds: golds.iter().map(|g| g.to_string()).collect(),
            line: 1,
        };
        let items = [
            item("q1", "the cat sat", &["cat sat on mat"]),
            item("q2", "yes", &["yes it is"]),
            item("3", "", &[""]),
            item("q4", "NYC", &["New York City", "nyc"]),
        ];
        for (style, f1s) in [
            (Style::Hotpotqa, [2.0 / 3.0, 0.0, 0.0, 1.0]),
            (Style::Squad, [2.0 / 3.0, 0.5, 0.0, 1.0]),
            (Style::Musique, [2.0 / 3.0, 0.5, 1.0, 1.0]),
        ] {
            let s = AnswerSettings {
                style,
                per_item: true,
            };
            let r = score_answers(&items, &s).unwrap();
            assert_eq!((r.summary.n, r.summary.em), (4, 0.5));
            assert!((r.summary.f1 - f1s.iter().sum::<f64>() / 4.0).abs() < 1e-15);
            let got: Vec<f64> = r.items.unwrap().iter().map(|i| i.f1).collect();
            for (g, w) in got.iter().zip(f1s) {
                assert!((g - w).abs() < 1e-15, "{style:?}: {got:?}");
            }
        }
        let s = AnswerSettings {
            style: Style::Squad,
            per_item: false,
        };
        assert!(score_answers(&items, &s).unwrap().items.is_none());
        assert!(score_answers(&[], &s).is_err());
    }

    /// Two items, SQuAD rules: q1 matches exactly (EM 1, F1 1); q2 predicts "red car" for
    /// "blue car", one common token of two each, F1 = 2 * (1/2 * 1/2) / (1/2 + 1/2) = 0.5.
    /// Means: EM 0.5, F1 0.75.
    #[test]
    fn the_document_is_the_summary_with_the_items_and_a_null_engine() {
        use crate::document::{document, Inputs};
        use serde_json::json;
        let item = |id: &str, prediction: &str, gold: &str| AnswerItem {
            id: id.into(),
            prediction: prediction.into(),
            golds: vec![gold.into()],
            line: 1,
        };
        let items = [
            item("q1", "Paris", "paris"),
            item("q2", "red car", "blue car"),
        ];
        let settings = AnswerSettings {
            style: Style::Squad,
            per_item: true,
        };
        let r = score_answers(&items, &settings).unwrap();
        let d = document(
            "score-answers",
            Inputs::new().with("answers", "a.jsonl"),
            &r,
        );
        let mut body = d.clone();
        let run = body.as_object_mut().unwrap().remove("run").unwrap();
        assert_eq!(
            body,
            json!({
                "style": "squad", "n": 2, "em": 0.5, "f1": 0.75,
                "items": [
                    {"id": "q1", "em": 1.0, "f1": 1.0},
                    {"id": "q2", "em": 0.0, "f1": 0.5},
                ],
            })
        );
        assert_eq!(run["inputs"], json!({"answers": "a.jsonl"}));
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(run[key], serde_json::Value::Null, "{key}");
        }
        // Without --per-item there is no `items` key (not `null`).
        let settings = AnswerSettings {
            per_item: false,
            ..settings
        };
        let body = crate::document::to_body(&score_answers(&items, &settings).unwrap());
        assert_eq!(
            body,
            json!({"style": "squad", "n": 2, "em": 0.5, "f1": 0.75})
        );
    }
}
