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
use std::path::Path;

use serde_json::Value;

use super::qa::{score, Style};
use crate::io::{clip, JsonlReader};
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
pub fn read_items(path: &Path) -> Result<Vec<AnswerItem>> {
    let mut rdr = JsonlReader::open(path)?;
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
