//! Human labels of a judged panel: reading a labels file (CSV or JSON lines: the panel's key
//! columns and a score column) and pairing each label with the panel's cell, then the
//! question-level units PPI corrects ([`units`]).
//!
//! Labels sit at the question level: a question is labelled when it has human scores for
//! some of its cells (all of them, as `stats labels sample` asks). Its human score is the
//! nested mean of its labelled cells (mean over its labelled trajectories of the mean of
//! their labelled reads), paired with the judge's nested mean over the same cells; an
//! unlabelled question contributes the judge's nested mean over all its cells. The question
//! is the i.i.d. unit, so the trajectory and read variance enter through the question
//! means' variances, as in the panel's own SE.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::io::csv::CsvReader;
use crate::io::jsonl::scalar_text;
use crate::io::{clip, is_jsonl};
use crate::panel::{Panel, Source};
use crate::{Error, Result};

/// One row of a labels file.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRow {
    /// The file's line (1-based; a table's row n is line n).
    pub line: u64,
    pub dataset: Option<String>,
    pub question: String,
    pub trajectory: Option<String>,
    pub read: Option<String>,
    pub arm: Option<String>,
    pub score: f64,
}

/// A label's key as the file gives it: dataset, question, trajectory, read, arm.
type LabelKey = (
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A cell of the panel: (stratum, question, trajectory, read) indices.
type CellAt = (usize, usize, usize, usize);

/// A labelled cell of a question: (trajectory, read, human score).
type LabelledCell = (usize, usize, f64);

/// A labels file as read.
#[derive(Debug, Clone)]
pub struct Labels {
    /// What messages call it.
    pub file: PathBuf,
    /// The score column read.
    pub metric: String,
    pub rows: Vec<LabelRow>,
}

/// Reads the labels `source` holds: its `question` column, the optional `dataset`,
/// `trajectory`, `read` and `arm` columns, and the score column `metric`.
///
/// # Errors
/// [`Error::Input`] naming the file (and line) for a missing `question` or score column, an
/// empty or non-finite score, and two rows for one cell.
pub fn read_labels(source: &Source, metric: &str) -> Result<Labels> {
    let file = source.name().to_path_buf();
    let raw = match source {
        Source::Files(paths) if paths.len() == 1 && !is_jsonl(&paths[0]) => read_csv(&paths[0])?,
        Source::Files(paths) if paths.len() != 1 => {
            return Err(Error::input(
                &file,
                None,
                "one labels file expected, not several",
            ))
        }
        _ => read_jsonl(source)?,
    };
    let mut rows = Vec::with_capacity(raw.len());
    let mut seen: HashMap<LabelKey, u64> = HashMap::new();
    let text =
        |m: &Map<String, Value>, k: &str| m.get(k).and_then(scalar_text).filter(|s| !s.is_empty());
    for (line, m) in raw {
        let Some(question) = text(&m, "question") else {
            return Err(Error::input(
                &file,
                Some(line),
                "no question: a labels file has the panel's key columns (dataset, question, \
                 trajectory, read, arm) and a score column",
            ));
        };
        let score = match m.get(metric) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.trim().parse::<f64>().map_err(|_| {
                Error::input(
                    &file,
                    Some(line),
                    format!("score '{}' is not a number", clip(s)),
                )
            })?),
            Some(other) => {
                return Err(Error::input(
                    &file,
                    Some(line),
                    format!("score {} is not a number", clip(&other.to_string())),
                ))
            }
        };
        let Some(score) = score else {
            return Err(Error::input(
                &file,
                Some(line),
                format!(
                    "no {metric} score: label the cell, or delete the rows of questions left \
                     unlabelled (a question is labelled or not as a whole)"
                ),
            ));
        };
        if !score.is_finite() {
            return Err(Error::input(
                &file,
                Some(line),
                format!("{metric} score {score} is not finite"),
            ));
        }
        let row = LabelRow {
            line,
            dataset: text(&m, "dataset"),
            question,
            trajectory: text(&m, "trajectory"),
            read: text(&m, "read"),
            arm: text(&m, "arm"),
            score,
        };
        let key = (
            row.dataset.clone(),
            row.question.clone(),
            row.trajectory.clone(),
            row.read.clone(),
            row.arm.clone(),
        );
        if let Some(first) = seen.insert(key, line) {
            return Err(Error::input(
                &file,
                Some(line),
                format!(
                    "a second label for question '{}'{} (the first is on line {first}): \
                     give one label per cell",
                    clip(&row.question),
                    cell_words(&row)
                ),
            ));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(Error::input(&file, None, "no labels"));
    }
    Ok(Labels {
        file,
        metric: metric.to_string(),
        rows,
    })
}

/// `, trajectory 'x', read 'y'` for the key columns a row has.
fn cell_words(r: &LabelRow) -> String {
    let mut s = String::new();
    for (name, v) in [
        ("dataset", &r.dataset),
        ("trajectory", &r.trajectory),
        ("read", &r.read),
        ("arm", &r.arm),
    ] {
        if let Some(v) = v {
            s.push_str(&format!(", {name} '{}'", clip(v)));
        }
    }
    s
}

fn read_csv(path: &std::path::Path) -> Result<Vec<(u64, Map<String, Value>)>> {
    let mut r = CsvReader::open(path)?;
    let headers = r.headers().to_vec();
    let mut out = Vec::new();
    while let Some((line, rec)) = r.next_record()? {
        let m: Map<String, Value> = headers
            .iter()
            .zip(rec.iter())
            .map(|(h, v)| (h.clone(), Value::String(v.to_string())))
            .collect();
        out.push((line, m));
    }
    Ok(out)
}

fn read_jsonl(source: &Source) -> Result<Vec<(u64, Map<String, Value>)>> {
    let mut r = crate::panel::memory::jsonl_of(source)?;
    let mut out = Vec::new();
    while let Some((line, m)) = r.next_object()? {
        out.push((line, m));
    }
    Ok(out)
}

/// How the panel's outcome is made of arms: one arm's (or the only) score, or a contrast
/// B − A.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArmsOf {
    /// The labels' arm must be this one where they name one.
    One(Option<String>),
    /// B − A: a cell is labelled when both arms are.
    Contrast(String, String),
}

impl ArmsOf {
    /// The arms of a panel read with `contrast` (`B-A`) or `arm`. Arm names may hold `-`
    /// (`qwen3-8b`): the contrast is split at the `-` whose two sides are both in `known`
    /// (the arms the labels name), else at the first.
    pub fn of(contrast: Option<&str>, arm: Option<&str>, known: &[&str]) -> ArmsOf {
        let Some(c) = contrast else {
            return ArmsOf::One(arm.map(str::to_string));
        };
        let splits: Vec<(&str, &str)> = c
            .match_indices('-')
            .map(|(i, _)| (c[..i].trim(), c[i + 1..].trim()))
            .collect();
        let chosen = splits
            .iter()
            .find(|(b, a)| known.contains(b) && known.contains(a))
            .or(splits.first());
        match chosen {
            Some((b, a)) => ArmsOf::Contrast(b.to_string(), a.to_string()),
            None => ArmsOf::One(arm.map(str::to_string)),
        }
    }
}

/// The question-level units of one stratum for PPI.
#[derive(Debug, Clone, PartialEq)]
pub struct StratumUnits {
    pub name: String,
    /// Human scores of the labelled questions.
    pub y: Vec<f64>,
    /// The judge on the same cells of the same questions.
    pub yhat: Vec<f64>,
    /// The judge on each unlabelled question (all its cells).
    pub yhat_unlabelled: Vec<f64>,
    /// The labelled questions' ids, in panel order.
    pub labelled_questions: Vec<String>,
    /// The unlabelled questions' ids, in panel order (what matches a question across the
    /// arms and pairs of `compare`'s shared bootstrap draws).
    pub unlabelled_questions: Vec<String>,
    /// The labelled cells' (judge, human) scores.
    pub pairs: Vec<(f64, f64)>,
}

/// Nested mean of `(trajectory, value)` pairs: the mean over trajectories of the mean of
/// each trajectory's values.
fn nested_mean(cells: &[(usize, f64)]) -> f64 {
    let mut by: Vec<(usize, f64, usize)> = Vec::new();
    for &(t, v) in cells {
        match by.iter_mut().find(|e| e.0 == t) {
            Some(e) => {
                e.1 += v;
                e.2 += 1;
            }
            None => by.push((t, v, 1)),
        }
    }
    by.iter().map(|e| e.1 / e.2 as f64).sum::<f64>() / by.len() as f64
}

/// The labels of `labels` paired with the cells of `panel` (whose outcome is made of arms as
/// `arms` says) as question-level units per stratum, and notes (cells dropped because one
/// arm of a contrast has no label).
///
/// # Errors
/// [`Error::Input`] naming the labels file and line for a label whose stratum, question,
/// trajectory or read the panel lacks, a key column the file lacks where the panel has
/// several values, or (for a contrast) a label without an arm; labels of other arms than
/// the outcome's one arm or two arms are left out with a note.
pub fn units(
    panel: &Panel,
    labels: &Labels,
    arms: &ArmsOf,
) -> Result<(Vec<StratumUnits>, Vec<String>)> {
    let file = &labels.file;
    let err = |line: u64, msg: String| Error::input(file, Some(line), msg);
    let strata: HashMap<&str, usize> = panel
        .strata
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let questions: Vec<HashMap<&str, usize>> = panel
        .strata
        .iter()
        .map(|s| {
            s.questions
                .iter()
                .enumerate()
                .map(|(i, q)| (q.as_str(), i))
                .collect()
        })
        .collect();
    // (stratum, question, trajectory, read) → (B or the one arm's score, A's score).
    let mut cells: HashMap<CellAt, (Option<f64>, Option<f64>)> = HashMap::new();
    let mut order: Vec<CellAt> = Vec::new();
    let mut other_arms = 0usize;
    for r in &labels.rows {
        let slot = match (arms, &r.arm) {
            (ArmsOf::Contrast(b, a), Some(arm)) => {
                if arm == b {
                    0
                } else if arm == a {
                    1
                } else {
                    // A sheet of several arms labels them all; one pair reads its two
                    // (as one arm's analysis reads its own).
                    other_arms += 1;
                    continue;
                }
            }
            (ArmsOf::Contrast(b, a), None) => {
                return Err(err(
                    r.line,
                    format!(
                        "no arm: the outcome is the contrast {b}-{a}, so each cell needs a \
                         label of each arm (an arm column)"
                    ),
                ))
            }
            (ArmsOf::One(Some(want)), Some(arm)) if arm != want => {
                // A sheet of a contrast labels both arms; one arm's analysis reads its own.
                other_arms += 1;
                continue;
            }
            _ => 0,
        };
        let d = match &r.dataset {
            Some(name) => *strata.get(name.as_str()).ok_or_else(|| {
                err(
                    r.line,
                    format!("stratum '{}' is not in the panel", clip(name)),
                )
            })?,
            None if panel.strata.len() == 1 => 0,
            None => {
                return Err(err(
                    r.line,
                    format!(
                        "no dataset: the panel has {} strata, so a label names its stratum \
                         (a dataset column)",
                        panel.strata.len()
                    ),
                ))
            }
        };
        let s = &panel.strata[d];
        let q = *questions[d].get(r.question.as_str()).ok_or_else(|| {
            err(
                r.line,
                format!(
                    "question '{}' is not in stratum '{}' of the panel",
                    clip(&r.question),
                    clip(&s.name)
                ),
            )
        })?;
        let trajs = s.trajectories_of(q);
        let t = match &r.trajectory {
            Some(label) => (0..trajs.len())
                .find(|&t| s.cell_label(q, t, 0).map(|c| c.0) == Some(label.as_str()))
                .ok_or_else(|| {
                    err(
                        r.line,
                        format!(
                            "question '{}' has no trajectory '{}' in the panel",
                            clip(&r.question),
                            clip(label)
                        ),
                    )
                })?,
            None if trajs.len() == 1 => 0,
            None => {
                return Err(err(
                    r.line,
                    format!(
                        "no trajectory: question '{}' has {} trajectories in the panel",
                        clip(&r.question),
                        trajs.len()
                    ),
                ))
            }
        };
        let reads = trajs[t].len();
        let rd = match &r.read {
            Some(label) => (0..reads)
                .find(|&x| s.cell_label(q, t, x).map(|c| c.1) == Some(label.as_str()))
                .ok_or_else(|| {
                    err(
                        r.line,
                        format!(
                            "question '{}' has no read '{}' of that trajectory in the panel",
                            clip(&r.question),
                            clip(label)
                        ),
                    )
                })?,
            None if reads == 1 => 0,
            None => {
                return Err(err(
                    r.line,
                    format!(
                        "no read: that trajectory of question '{}' has {reads} reads in the \
                         panel",
                        clip(&r.question)
                    ),
                ))
            }
        };
        let key = (d, q, t, rd);
        let e = cells.entry(key).or_insert_with(|| {
            order.push(key);
            (None, None)
        });
        let v = if slot == 0 { &mut e.0 } else { &mut e.1 };
        if v.is_some() {
            // Two rows naming the same cell in different words (a key column left out on one).
            return Err(err(
                r.line,
                format!(
                    "a second label for a cell of question '{}': give one label per cell",
                    clip(&r.question)
                ),
            ));
        }
        *v = Some(r.score);
    }
    let mut notes = Vec::new();
    if other_arms > 0 {
        match arms {
            ArmsOf::One(Some(want)) => notes.push(format!(
                "note: {other_arms} label(s) of other arms than '{}' left out",
                clip(want)
            )),
            ArmsOf::Contrast(b, a) => notes.push(format!(
                "note: {other_arms} label(s) of other arms than '{}' and '{}' left out",
                clip(b),
                clip(a)
            )),
            ArmsOf::One(None) => {}
        }
    }
    let mut per: Vec<HashMap<usize, Vec<LabelledCell>>> = vec![HashMap::new(); panel.strata.len()];
    let mut one_armed = 0usize;
    for key in order {
        let (d, q, t, rd) = key;
        let human = match (arms, cells[&key]) {
            (ArmsOf::Contrast(..), (Some(b), Some(a))) => b - a,
            (ArmsOf::Contrast(..), _) => {
                one_armed += 1;
                continue;
            }
            (_, (Some(v), _)) => v,
            _ => continue,
        };
        per[d].entry(q).or_default().push((t, rd, human));
    }
    if one_armed > 0 {
        notes.push(format!(
            "note: {one_armed} labelled cell(s) have a label of one arm only and were left \
             out (a contrast's label is the difference of both arms')"
        ));
    }
    let mut out = Vec::new();
    for (d, s) in panel.strata.iter().enumerate() {
        let mut u = StratumUnits {
            name: s.name.clone(),
            y: Vec::new(),
            yhat: Vec::new(),
            yhat_unlabelled: Vec::new(),
            labelled_questions: Vec::new(),
            unlabelled_questions: Vec::new(),
            pairs: Vec::new(),
        };
        for q in 0..s.q() {
            let trajs = s.trajectories_of(q);
            match per[d].get(&q) {
                Some(lab) => {
                    let human: Vec<(usize, f64)> = lab.iter().map(|c| (c.0, c.2)).collect();
                    let judge: Vec<(usize, f64)> =
                        lab.iter().map(|c| (c.0, trajs[c.0][c.1])).collect();
                    u.y.push(nested_mean(&human));
                    u.yhat.push(nested_mean(&judge));
                    u.labelled_questions.push(s.questions[q].clone());
                    u.pairs.extend(lab.iter().map(|c| (trajs[c.0][c.1], c.2)));
                }
                None => {
                    let all: Vec<(usize, f64)> = trajs
                        .iter()
                        .enumerate()
                        .flat_map(|(t, reads)| reads.iter().map(move |v| (t, *v)))
                        .collect();
                    u.yhat_unlabelled.push(nested_mean(&all));
                    u.unlabelled_questions.push(s.questions[q].clone());
                }
            }
        }
        out.push(u);
    }
    Ok((out, notes))
}
