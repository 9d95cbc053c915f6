//! Answer consistency across repeated reads of fixed packets, by group (e.g. temperature).
//!
//! * Disagreement rate of a group: the share of its (dataset, question, trajectory, arm)
//!   cells whose reads' answers, normalised as in `score-answers` (lower case, no ASCII
//!   punctuation, no articles, folded whitespace), are not all equal.
//! * One-read SE of a group: for each read r, the measured SE of the estimate computed from
//!   read r alone (all trajectories, all questions); averaged over reads. The estimate is
//!   Σ_d w_d ȳ_d with the group panel's stratum weights ([`Panel::weights`]; 1/D by
//!   default), so its SE² is Σ_d w_d² SE²_d.
//! * For two groups, the ratio of their one-read SEs with a bootstrap interval. Questions
//!   are resampled with common random numbers (same seed, same question order per
//!   stratum), so when both groups hold the same questions the resample is paired.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::document::{Engine, Report};
use crate::panel::{ColumnMap, Panel, QuestionStats};
use crate::qa_scoring::qa::normalize_answer;
use crate::resample::columns::CenteredColumns;
use crate::resample::engine::{ResampleBackend, MAX_K};
use crate::resample::summary::{percentile_interval, Interval};
use crate::resample::Resampling;
use crate::table::Defined;
use crate::{Error, Result};

/// A read's cell: (dataset, question, trajectory, arm).
pub type Cell = (String, String, String, String);

/// One row of a reads file, as consistency needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadAnswer {
    pub group: String,
    /// (dataset, question, trajectory, arm).
    pub cell: Cell,
    pub answer: String,
}

/// Disagreement of one group.
#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    pub group: String,
    pub cells: usize,
    pub disagreeing: usize,
    pub rate: f64,
}

/// Counts, per group (sorted by group value), the cells whose normalised answers differ.
pub fn disagreement(rows: &[ReadAnswer]) -> Vec<Disagreement> {
    let mut cells: BTreeMap<&str, BTreeMap<&Cell, BTreeSet<String>>> = BTreeMap::new();
    for r in rows {
        cells
            .entry(&r.group)
            .or_default()
            .entry(&r.cell)
            .or_default()
            .insert(normalize_answer(&r.answer));
    }
    cells
        .into_iter()
        .map(|(g, c)| {
            let disagreeing = c.values().filter(|set| set.len() > 1).count();
            Disagreement {
                group: g.to_string(),
                cells: c.len(),
                disagreeing,
                rate: disagreeing as f64 / c.len() as f64,
            }
        })
        .collect()
}

/// Per-question columns for the one-read SEs: for each read r, (dev_r, dev_r²) with dev_r
/// the question's mean over trajectories at read r, centred on its stratum mean.
fn one_read_rows(panel: &Panel, order: &[Vec<usize>]) -> Result<Vec<Vec<Vec<f64>>>> {
    panel
        .strata
        .iter()
        .zip(order)
        .map(|(s, ord)| {
            if 2 * s.r() > MAX_K {
                return Err(Error::Data(format!(
                    "one-read SEs support at most {} reads per trajectory",
                    MAX_K / 2
                )));
            }
            let traj: Vec<usize> = (0..s.t()).collect();
            let means: Vec<Vec<f64>> = (0..s.r())
                .map(|r| {
                    ord.iter()
                        .map(|&q| {
                            QuestionStats::from_cells(&traj, &[r], |t, rr| s.y(q, t, rr)).mean
                        })
                        .collect()
                })
                .collect();
            let centres: Vec<f64> = means
                .iter()
                .map(|m| m.iter().sum::<f64>() / m.len() as f64)
                .collect();
            Ok((0..ord.len())
                .map(|i| {
                    means
                        .iter()
                        .zip(&centres)
                        .flat_map(|(m, c)| {
                            let d = m[i] - c;
                            [d, d * d]
                        })
                        .collect()
                })
                .collect())
        })
        .collect()
}

/// Mean over reads of the one-read SE of the combined estimate, from per-stratum sums:
/// for read r, sqrt(Σ_d w_d² s²_d,r/Q_d) with the strata's `weights` (empty: equal,
/// sqrt(Σ_d s²_d,r/Q_d / D²)).
fn one_read_se(sums: &[Vec<f64>], q: &[usize], weights: &[f64]) -> f64 {
    let reads = sums[0].len() / 2;
    let d2 = (q.len() * q.len()) as f64;
    (0..reads)
        .map(|r| {
            let se2: f64 = sums
                .iter()
                .zip(q)
                .enumerate()
                .map(|(d, (s, &n))| {
                    let n = n as f64;
                    let v = (s[2 * r + 1] - s[2 * r] * s[2 * r] / n) / (n - 1.0) / n;
                    weights.get(d).map_or(v, |w| w * w * v)
                })
                .sum();
            if weights.is_empty() {
                (se2 / d2).sqrt()
            } else {
                se2.sqrt()
            }
        })
        .sum::<f64>()
        / reads as f64
}

/// One group's precision.
#[derive(Debug, Clone, Serialize)]
pub struct GroupPrecision {
    pub group: String,
    pub reads: usize,
    pub one_read_se: f64,
}

/// The ratio of two groups' one-read SEs.
#[derive(Debug, Clone, Serialize)]
pub struct SeRatio {
    pub numerator: String,
    pub denominator: String,
    pub ratio: f64,
    pub ci: Interval,
    /// Both groups hold the same questions, so the resample is paired.
    pub paired: bool,
    /// Why `ratio` is undefined (JSON `null`: a one-read SE is 0 or not finite), when it
    /// is; not serialised otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined: Option<String>,
}

/// Question order of each stratum of `panel`, aligned to `reference` when both hold the
/// same questions; returns whether they were aligned.
pub fn align(panel: &Panel, reference: &Panel) -> (Vec<Vec<usize>>, bool) {
    let mut paired = panel.strata.len() == reference.strata.len();
    let order = panel
        .strata
        .iter()
        .enumerate()
        .map(|(d, s)| {
            let own: Vec<usize> = (0..s.q()).collect();
            let Some(r) = reference
                .strata
                .get(d)
                .filter(|r| r.name == s.name && r.q() == s.q())
            else {
                paired = false;
                return own;
            };
            let pos: std::collections::HashMap<&str, usize> = s
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| (q.as_str(), i))
                .collect();
            match r
                .questions
                .iter()
                .map(|q| pos.get(q.as_str()).copied())
                .collect::<Option<Vec<_>>>()
            {
                Some(o) => o,
                None => {
                    paired = false;
                    own
                }
            }
        })
        .collect();
    (order, paired)
}

/// One-read SE of each group panel, and for the first two the SE ratio with a bootstrap interval
/// (`resampling.replicates` replicates from `resampling.seed`, at `resampling.confidence`).
///
/// # Errors
/// [`Error::Data`] for too many reads or too few questions; backend errors.
pub fn precision(
    groups: &[(String, Panel)],
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Vec<GroupPrecision>, Option<SeRatio>)> {
    let Resampling {
        seed,
        replicates,
        confidence,
    } = *resampling;
    let mut out = Vec::new();
    let mut reps = Vec::new();
    let mut paired = true;
    for (i, (name, p)) in groups.iter().enumerate() {
        let (order, aligned) = if i == 0 {
            (
                p.strata.iter().map(|s| (0..s.q()).collect()).collect(),
                true,
            )
        } else {
            align(p, &groups[0].1)
        };
        paired &= aligned;
        let q: Vec<usize> = p.strata.iter().map(|s| s.q()).collect();
        if q.iter().any(|&n| n < 2) {
            return Err(Error::Data(format!(
                "group {name}: every stratum needs at least 2 questions"
            )));
        }
        let cols = CenteredColumns::new(&one_read_rows(p, &order)?)?;
        out.push(GroupPrecision {
            group: name.clone(),
            reads: p.strata[0].r(),
            one_read_se: one_read_se(cols.exact_sums(), &q, &p.weights),
        });
        if i < 2 && groups.len() >= 2 {
            let r = cols.resample(backend, seed, 0..replicates, progress)?;
            reps.push(
                r.iter()
                    .map(|s| one_read_se(s, &q, &p.weights))
                    .collect::<Vec<f64>>(),
            );
        }
    }
    let ratio = (groups.len() >= 2).then(|| {
        let mut v: Vec<f64> = reps[0]
            .iter()
            .zip(&reps[1])
            .map(|(a, b)| a / b)
            .filter(|x| x.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        SeRatio {
            numerator: out[0].group.clone(),
            denominator: out[1].group.clone(),
            ratio: out[0].one_read_se / out[1].one_read_se,
            ci: percentile_interval(&v, confidence),
            paired,
            undefined: None,
        }
    });
    Ok((out, ratio))
}

/// Reads the answers of a reads table (a CSV or JSONL file, or a table in memory): per row
/// the `by` column's value as the
/// group, the (dataset, question, trajectory, arm) cell and the `answer_column` text (an
/// absent field is empty). The cell's columns are the file's columns that `columns` gives
/// those roles (`--columns question=question_id`), else the columns named like the roles.
///
/// # Errors
/// [`Error::Io`] or [`Error::Input`] when the file cannot be read, or a row lacks the `by`,
/// `question` (or its mapped) or answer column.
pub fn read_answers(
    reads: &crate::panel::Source,
    by: &str,
    answer_column: &str,
    columns: &ColumnMap,
) -> Result<Vec<ReadAnswer>> {
    let question = columns.column_of("question");
    let cols = [
        by,
        columns.column_of("dataset"),
        question,
        columns.column_of("trajectory"),
        columns.column_of("arm"),
        answer_column,
    ];
    let records =
        crate::panel::records::read_records_from(reads, &cols, &[by, question, answer_column])?;
    Ok(records
        .into_iter()
        .map(|r| {
            let f = |i: usize| r.fields[i].clone().unwrap_or_default();
            ReadAnswer {
                group: f(0),
                cell: (f(1), f(2), f(3), f(4)),
                answer: f(5),
            }
        })
        .collect())
}

/// The groups of `rows` in order of first appearance.
pub fn groups_of(rows: &[ReadAnswer]) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for r in rows {
        if !groups.contains(&r.group) {
            groups.push(r.group.clone());
        }
    }
    groups
}

/// What `consistency` found. The engine and the resampling settings are the document's
/// envelope ([`Report::engine`]), not fields of the body.
#[derive(Debug, Clone, Serialize)]
pub struct ConsistencyReport {
    /// The grouping column (e.g. `temperature`).
    pub by: String,
    /// Disagreement per group (sorted by group value).
    pub disagreement: Vec<Disagreement>,
    /// One-read SE of each compared group.
    pub precision: Vec<GroupPrecision>,
    /// The first two compared groups' SE ratio with its interval (`None` with one group);
    /// its `undefined` says why the ratio is, when it is.
    pub se_ratio: Option<SeRatio>,
    /// The outcome of the first group's panel.
    pub outcome: Option<String>,
    /// The engine's short name (`cpu`, `gpu`).
    #[serde(skip)]
    pub backend: String,
    /// What the engine ran on (threads, adapter).
    #[serde(skip)]
    pub adapter: String,
    #[serde(skip)]
    pub replicates: u32,
    #[serde(skip)]
    pub seed: u64,
    /// Confidence level of the ratio's percentile interval.
    #[serde(skip)]
    pub confidence: f64,
}

impl ConsistencyReport {
    /// The SE ratio's value, or why it is undefined ([`SeRatio::undefined`]); `None`
    /// with one compared group.
    pub fn ratio(&self) -> Option<Defined<f64>> {
        let r = self.se_ratio.as_ref()?;
        Some(Defined::unless(r.undefined.as_deref(), r.ratio))
    }
}

impl Report for ConsistencyReport {
    /// The engine that resampled the SE ratio, and its replicates, seed and confidence.
    fn engine(&self) -> Engine {
        Engine::resampled(
            self.backend.clone(),
            self.adapter.clone(),
            u64::from(self.replicates),
            self.seed,
            self.confidence,
        )
    }
}

/// Answer consistency of `rows` grouped by the column `by` ([`disagreement`]) and the
/// precision of each
/// group panel of `panels` (one per compared group, in order; [`precision`]): each one-read
/// SE, and for the first two their ratio SE_1/SE_2 with a percentile interval over
/// question-bootstrap replicates (paired when both hold the same questions) drawn as
/// `resampling` says.
///
/// # Errors
/// [`Error::Data`] for too many reads or too few questions; backend errors.
pub fn consistency(
    by: &str,
    rows: &[ReadAnswer],
    panels: &[(String, Panel)],
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ConsistencyReport> {
    let dis = disagreement(rows);
    let (prec, mut ratio) = precision(panels, resampling, backend, progress)?;
    if let Some(r) = &mut ratio {
        r.undefined = ratio_undefined(r, &prec);
    }
    Ok(ConsistencyReport {
        by: by.to_string(),
        disagreement: dis,
        precision: prec,
        se_ratio: ratio,
        outcome: panels.first().map(|p| p.1.outcome.clone()),
        backend: backend.name().to_string(),
        adapter: backend.description(),
        replicates: resampling.replicates,
        seed: resampling.seed,
        confidence: resampling.confidence,
    })
}

/// Why the SE ratio is undefined (a group's one-read SE is 0 or not finite), if it is.
fn ratio_undefined(r: &SeRatio, prec: &[GroupPrecision]) -> Option<String> {
    if r.ratio.is_finite() {
        return None;
    }
    let se = |g: &str| prec.iter().find(|p| p.group == g).map(|p| p.one_read_se);
    Some(match (se(&r.numerator), se(&r.denominator)) {
        (Some(n), Some(d)) if n == 0.0 && d == 0.0 => format!(
            "the one-read SEs of {} and {} are both 0 (the scores do not vary), so the ratio is 0/0",
            r.numerator, r.denominator
        ),
        (_, Some(0.0)) => format!(
            "the one-read SE of {} is 0 (its scores do not vary)",
            r.denominator
        ),
        _ => "a one-read SE is not finite".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{document, Inputs};
    use crate::panel::Stratum;
    use crate::resample::CpuBackend;
    use serde_json::{json, Value};

    /// A group's panel: one stratum, questions q1..q3, one trajectory, reads `y[q]`.
    fn panel(y: [[f64; 2]; 3]) -> Panel {
        Panel {
            notes: Vec::new(),
            weights: Vec::new(),
            source: "reads.csv".into(),
            metric: "f1".into(),
            outcome: "f1".into(),
            selectors: Vec::new(),
            selector: None,
            strata: vec![Stratum {
                name: "d".into(),
                questions: vec!["q1".into(), "q2".into(), "q3".into()],
                trajectories: vec!["0".into()],
                reads: vec!["0".into(), "1".into()],
                y: y.concat(),
                ..Default::default()
            }],
        }
    }

    fn answer(group: &str, question: &str, answer: &str) -> ReadAnswer {
        ReadAnswer {
            group: group.into(),
            cell: ("d".into(), question.into(), "0".into(), String::new()),
            answer: answer.into(),
        }
    }

    #[test]
    fn the_consistency_document_has_the_engine_in_its_envelope_only() {
        // Group a: q1 "x"/"X." agree once normalised, q2 "y"/"z" do not: rate 1/2. Group b:
        // one cell, agreeing.
        let rows = [
            answer("a", "q1", "x"),
            answer("a", "q1", "X."),
            answer("a", "q2", "y"),
            answer("a", "q2", "z"),
            answer("b", "q1", "x"),
            answer("b", "q1", "x"),
        ];
        // One-read SEs: a's read means (1, 0, 1) and (0, 0, 1) each have variance 1/3, so
        // SE sqrt(1/3 / 3) = 1/3 at both reads; b's (2, 0, 1) have variance 1: SE 1/√3.
        let panels = [
            ("a".to_string(), panel([[1., 0.], [0., 0.], [1., 1.]])),
            ("b".to_string(), panel([[2., 2.], [0., 0.], [1., 1.]])),
        ];
        let resampling = Resampling {
            seed: 3,
            replicates: 20,
            confidence: 0.9,
        };
        let cpu = CpuBackend::new();
        let r = consistency("temperature", &rows, &panels, &resampling, &cpu, &|_| {}).unwrap();
        let doc = document("consistency", Inputs::new().with("reads", "r.csv"), &r);
        assert_eq!(
            doc["run"],
            json!({
                "command": "consistency",
                "ragstats": env!("CARGO_PKG_VERSION"),
                "inputs": {"reads": "r.csv"},
                "backend": "cpu",
                "adapter": cpu.description(),
                "replicates": 20,
                "seed": 3,
                "confidence": 0.9,
            })
        );
        let keys = crate::document::keys(&doc);
        assert_eq!(
            keys,
            [
                "by",
                "disagreement",
                "outcome",
                "precision",
                "run",
                "se_ratio"
            ]
        );
        assert_eq!(doc["by"], "temperature");
        assert_eq!(doc["outcome"], "f1");
        assert_eq!(
            doc["disagreement"],
            json!([
                {"group": "a", "cells": 2, "disagreeing": 1, "rate": 0.5},
                {"group": "b", "cells": 1, "disagreeing": 0, "rate": 0.0},
            ])
        );
        let close = |v: &Value, want: f64| {
            let got = v.as_f64().unwrap();
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        };
        close(&doc["precision"][0]["one_read_se"], 1.0 / 3.0);
        close(&doc["precision"][1]["one_read_se"], 1.0 / 3f64.sqrt());
        let ratio = &doc["se_ratio"];
        close(&ratio["ratio"], 3f64.sqrt() / 3.0);
        assert_eq!(
            (&ratio["numerator"], &ratio["denominator"], &ratio["paired"]),
            (&json!("a"), &json!("b"), &json!(true))
        );
        assert!(ratio.get("undefined").is_none(), "{ratio}");
    }

    #[test]
    fn an_undefined_ratio_says_why_inside_se_ratio() {
        let flat = panel([[1., 1.], [1., 1.], [1., 1.]]);
        let panels = [("a".to_string(), flat.clone()), ("b".to_string(), flat)];
        let resampling = Resampling {
            seed: 1,
            replicates: 5,
            confidence: 0.95,
        };
        let r = consistency("t", &[], &panels, &resampling, &CpuBackend::new(), &|_| {}).unwrap();
        let why =
            "the one-read SEs of a and b are both 0 (the scores do not vary), so the ratio is 0/0";
        assert_eq!(r.ratio(), Some(Defined::Undefined(why.into())));
        let body = crate::document::to_body(&r);
        assert_eq!(body["se_ratio"]["ratio"], Value::Null);
        assert_eq!(body["se_ratio"]["undefined"], why);
    }
}
