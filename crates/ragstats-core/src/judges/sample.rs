//! The labelling sheet: a uniformly random set of a panel's questions (stratified), every
//! cell of each as a row with the panel's keys and an empty score column for a human to
//! fill. PPI is unbiased only when the labelled questions are a uniformly random subset: a
//! hand-picked one (the easy questions, the ones the judge got wrong) biases every
//! correction.

use std::path::Path;

use serde::Serialize;

use super::labels::ArmsOf;
use crate::allocation::allocate::question_order;
use crate::components::forecast::split_questions;
use crate::document::Report;
use crate::io::write_atomic;
use crate::panel::Panel;
use crate::table::{Cell, Table, ToView, View};
use crate::{Error, Result};

/// The questions chosen: per stratum, their indices in panel order.
///
/// Per stratum the questions are put in the seeded order of `allocate --order-seed S`
/// (each question's key a Philox draw of its index: a uniformly random permutation) and
/// the first n_d kept; n_d is `n` split over the strata in their question shares by largest
/// remainder, or `n` in every stratum with `per_stratum`.
///
/// # Errors
/// [`Error::Setting`] naming `n` when it is 0 or more than the panel's (or a stratum's)
/// questions.
pub fn choose(panel: &Panel, n: usize, per_stratum: bool, seed: u64) -> Result<Vec<Vec<usize>>> {
    let qs: Vec<usize> = panel.strata.iter().map(|s| s.q()).collect();
    let total: usize = qs.iter().sum();
    if n == 0 {
        return Err(Error::setting("n", "expected at least 1 question to label"));
    }
    let counts = if per_stratum {
        if let Some(s) = panel.strata.iter().find(|s| s.q() < n) {
            return Err(Error::setting(
                "n",
                format!(
                    "{n} questions in every stratum, but stratum '{}' has {}",
                    s.name,
                    s.q()
                ),
            ));
        }
        vec![n; qs.len()]
    } else {
        if n > total {
            return Err(Error::setting(
                "n",
                format!("{n} questions to label, but the panel has {total}"),
            ));
        }
        split_questions(n, &qs)
    };
    let order = question_order(&panel.strata, Some(seed));
    Ok(order
        .into_iter()
        .zip(counts)
        .map(|(o, k)| {
            let mut kept: Vec<usize> = o.into_iter().take(k).collect();
            kept.sort_unstable();
            kept
        })
        .collect())
}

/// One stratum of a sheet.
#[derive(Debug, Clone, Serialize)]
pub struct SampledStratum {
    pub name: String,
    /// The stratum's questions.
    pub questions: usize,
    /// Chosen to label.
    pub chosen: usize,
}

/// What `labels sample` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct SampleReport {
    pub seed: u64,
    /// `proportional` or `per-stratum`.
    pub allocation: &'static str,
    pub strata: Vec<SampledStratum>,
    /// Rows (cells, times arms) of the sheet.
    pub rows: usize,
    /// The score column to fill.
    pub score_column: String,
    pub out: String,
}

impl Report for SampleReport {}

/// Writes the sheet of the `chosen` questions of `panel` to `out` (CSV, or JSON lines for a
/// `.jsonl`/`.json` name), atomically: columns `dataset, question, trajectory, read`, `arm`
/// where the outcome is an arm or a contrast (a row per arm: both arms of a contrast are
/// labelled), and the empty column `score_column`. Returns the rows written.
///
/// # Errors
/// Those of writing.
pub fn write_sheet(
    panel: &Panel,
    chosen: &[Vec<usize>],
    arms: &ArmsOf,
    score_column: &str,
    out: &Path,
) -> Result<usize> {
    let arm_names: Vec<Option<&str>> = match arms {
        ArmsOf::Contrast(b, a) => vec![Some(b.as_str()), Some(a.as_str())],
        ArmsOf::One(Some(a)) => vec![Some(a.as_str())],
        ArmsOf::One(None) => vec![None],
    };
    let with_arm = arm_names[0].is_some();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (s, qs) in panel.strata.iter().zip(chosen) {
        for &q in qs {
            for (t, reads) in s.trajectories_of(q).iter().enumerate() {
                for r in 0..reads.len() {
                    let (tl, rl) = s.cell_label(q, t, r).unwrap_or(("", ""));
                    for arm in &arm_names {
                        let mut row = vec![
                            s.name.clone(),
                            s.questions[q].clone(),
                            tl.to_string(),
                            rl.to_string(),
                        ];
                        if let Some(a) = arm {
                            row.push(a.to_string());
                        }
                        rows.push(row);
                    }
                }
            }
        }
    }
    let mut header = vec!["dataset", "question", "trajectory", "read"];
    if with_arm {
        header.push("arm");
    }
    let jsonl = crate::io::is_jsonl(out);
    write_atomic(out, |w| {
        if jsonl {
            for row in &rows {
                let mut m = serde_json::Map::new();
                for (h, v) in header.iter().zip(row) {
                    m.insert((*h).to_string(), serde_json::Value::String(v.clone()));
                }
                m.insert(score_column.to_string(), serde_json::Value::Null);
                writeln!(w, "{}", serde_json::Value::Object(m))?;
            }
            Ok(())
        } else {
            let mut c = csv::Writer::from_writer(w);
            let mut h: Vec<&str> = header.clone();
            h.push(score_column);
            c.write_record(&h).map_err(std::io::Error::other)?;
            for row in &rows {
                c.write_record(row.iter().map(String::as_str).chain([""]))
                    .map_err(std::io::Error::other)?;
            }
            c.flush()
        }
    })?;
    Ok(rows.len())
}

impl ToView for SampleReport {
    fn to_view(&self) -> View {
        let mut t = Table::new(&["stratum", "questions", "chosen"]);
        for s in &self.strata {
            t.row([
                Cell::text(&s.name),
                Cell::Count(s.questions as u64),
                Cell::Count(s.chosen as u64),
            ]);
        }
        let mut v = View::new(t);
        let parts: Vec<String> = self
            .strata
            .iter()
            .map(|s| format!("{}={}/{}", s.name, s.chosen, s.questions))
            .collect();
        v.text(format!(
            "wrote {} rows to label ({} questions at random, seed {}, {}: {}) to {}; fill \
             the empty {} column\n",
            self.rows,
            self.strata.iter().map(|s| s.chosen).sum::<usize>(),
            self.seed,
            self.allocation,
            parts.join(", "),
            self.out,
            self.score_column
        ));
        v
    }
}
