//! What a run writes: the trajectory log (`trajectories.jsonl`, the contract in
//! docs/run.md), the panel (`panel.csv`) and the cost ledger (`ledger.jsonl`), each
//! rebuilt whole from the run's results and written atomically, so an interrupted and
//! resumed run writes the same bytes as an uninterrupted one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::io::{write_atomic, JsonlReader};
use crate::ledger::LedgerRow;
use crate::questions::Dataset;
use crate::search::SearchRecord;
use crate::{Error, Result};

/// One line of `trajectories.jsonl`: one (question, arm, trajectory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryLog {
    /// The run's name (the output directory's name).
    pub run: String,
    pub question_id: String,
    pub dataset: Dataset,
    pub question: String,
    /// Gold answer then aliases.
    pub answers: Vec<String>,
    /// Corpus ids of the gold supporting paragraphs.
    pub supporting: Vec<String>,
    /// The planner: `open` or `adaptive`.
    pub arm: String,
    /// 0-based index within (question, arm).
    pub trajectory: u32,
    pub model: String,
    /// One per planning step, in order.
    pub steps: Vec<StepLog>,
    /// Per selector (`rrf`, `rr`): the records the reader saw.
    pub packets: BTreeMap<String, Vec<SearchRecord>>,
    /// R reads per selector, in selector then read order.
    pub reads: Vec<ReadLog>,
}

/// One planning step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLog {
    pub step: u32,
    pub planner_messages: Vec<Value>,
    /// The planner's raw reply.
    pub planner_text: String,
    /// The parsed query; `null` on a planning failure.
    pub query: Option<String>,
    /// Why no query could be parsed.
    pub failure: Option<String>,
    /// The query's ranked results (texts cut to 5,000 characters); empty on failure.
    pub results: Vec<SearchRecord>,
    /// Added field: true for step 0, the call and search shared by every arm of the
    /// trajectory.
    #[serde(default)]
    pub shared: bool,
    /// Added field: how many of `results` were masked benchmark URLs.
    #[serde(default)]
    pub masked: usize,
}

/// One read of a packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLog {
    pub selector: String,
    pub read: u32,
    pub reader_messages: Vec<Value>,
    pub reader_text: String,
    pub answer: String,
    pub em: f64,
    pub f1: f64,
}

/// Everything one run produced, in output order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutput {
    pub trajectories: Vec<TrajectoryLog>,
    pub ledger: Vec<LedgerRow>,
}

/// Writes `dir/trajectories.jsonl`, `dir/panel.csv` and `dir/ledger.jsonl`, each atomically.
///
/// # Errors
/// [`Error::Io`] naming the file that could not be written.
pub fn write_outputs(dir: &Path, out: &RunOutput) -> Result<()> {
    write_atomic(&dir.join("trajectories.jsonl"), |w| {
        for t in &out.trajectories {
            serde_json::to_writer(&mut *w, t)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    write_atomic(&dir.join("panel.csv"), |w| {
        write_panel(w, &out.trajectories)
    })?;
    write_atomic(&dir.join("ledger.jsonl"), |w| {
        for r in &out.ledger {
            serde_json::to_writer(&mut *w, r)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(())
}

/// The panel: one row per read, columns `dataset,question,trajectory,read,arm,selector,f1,em,answer`,
/// in trajectory-log order. Scores are written in Rust's shortest round-trip form.
pub fn write_panel(w: &mut dyn Write, logs: &[TrajectoryLog]) -> std::io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    let io = |e: csv::Error| std::io::Error::other(e.to_string());
    csv.write_record([
        "dataset",
        "question",
        "trajectory",
        "read",
        "arm",
        "selector",
        "f1",
        "em",
        "answer",
    ])
    .map_err(io)?;
    for t in logs {
        let dataset = match t.dataset {
            Dataset::Hotpotqa => "hotpotqa",
            Dataset::Musique => "musique",
        };
        for r in &t.reads {
            csv.write_record([
                dataset,
                &t.question_id,
                &t.trajectory.to_string(),
                &r.read.to_string(),
                &t.arm,
                &r.selector,
                &r.f1.to_string(),
                &r.em.to_string(),
                &r.answer,
            ])
            .map_err(io)?;
        }
    }
    csv.flush()
}

/// Reads a `trajectories.jsonl`.
///
/// # Errors
/// [`Error::Input`] naming the file and line of a line that is not a trajectory record.
pub fn read_trajectories(path: &Path) -> Result<Vec<TrajectoryLog>> {
    let mut r = JsonlReader::open(path)?;
    let mut out = Vec::new();
    while let Some((_, t)) = r.next_as::<TrajectoryLog>()? {
        out.push(t);
    }
    if out.is_empty() {
        return Err(Error::input(path, None, "no trajectory records"));
    }
    Ok(out)
}
