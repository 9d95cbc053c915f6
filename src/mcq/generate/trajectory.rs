//! Reading the runner's trajectory log (`trajectories.jsonl`, the contract in docs/mcqgen.md)
//! and deciding which trajectories reached a correct answer.
//!
//! Only the fields item generation and judging use are read; any others (the runner may add
//! fields) are ignored.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::io::JsonlReader;
use crate::questions::Dataset;
use crate::search::SearchRecord;

/// One planning step of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 0-based step index.
    pub step: u32,
    /// The planner's raw output (its thought and its action).
    #[serde(default)]
    pub planner_text: String,
    /// The search query the step issued; `None` when none could be parsed.
    #[serde(default)]
    pub query: Option<String>,
    /// Why no query was parsed, when `query` is `None`.
    #[serde(default)]
    pub failure: Option<String>,
    /// The ranked results of `query` (empty on failure).
    #[serde(default)]
    pub results: Vec<SearchRecord>,
}

/// One reader call on a selector's packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Read {
    /// The selector whose packet the reader saw.
    pub selector: String,
    /// 0-based read index.
    pub read: u32,
    /// The reader's raw output.
    #[serde(default)]
    pub reader_text: String,
    /// The parsed answer.
    #[serde(default)]
    pub answer: Option<String>,
    /// Exact match of `answer` against the gold answers (0 or 1).
    pub em: f64,
}

/// One line of the trajectory log: one (question, arm, trajectory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// Run name.
    #[serde(default)]
    pub run: String,
    pub question_id: String,
    pub dataset: Dataset,
    pub question: String,
    /// Gold answer, then aliases.
    pub answers: Vec<String>,
    /// Corpus ids of the gold supporting paragraphs.
    #[serde(default)]
    pub supporting: Vec<String>,
    /// Planner arm (`open`, `adaptive`).
    pub arm: String,
    /// 0-based index within (question, arm).
    pub trajectory: u32,
    /// The planner model.
    #[serde(default)]
    pub model: String,
    pub steps: Vec<Step>,
    /// Per selector: the records the reader saw.
    #[serde(default)]
    pub packets: BTreeMap<String, Vec<SearchRecord>>,
    #[serde(default)]
    pub reads: Vec<Read>,
}

/// Where an item or a skip came from: the trajectory, and the step or selector within it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Run name.
    pub run: String,
    pub question_id: String,
    pub arm: String,
    pub trajectory: u32,
    /// Planning step, for items made from a step.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub step: Option<u32>,
    /// Selector, for items made from a packet.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub selector: Option<String>,
    /// 1-based line of the trajectory log.
    pub line: u64,
}

/// A trajectory with the line it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    pub t: Trajectory,
    /// 1-based line in the log.
    pub line: u64,
}

impl Logged {
    /// The trajectory's key `question_id/arm/trajectory` (unique in a log).
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{}",
            self.t.question_id, self.t.arm, self.t.trajectory
        )
    }

    /// A [`Source`] for this trajectory with no step or selector.
    pub fn source(&self) -> Source {
        Source {
            run: self.t.run.clone(),
            question_id: self.t.question_id.clone(),
            arm: self.t.arm.clone(),
            trajectory: self.t.trajectory,
            step: None,
            selector: None,
            line: self.line,
        }
    }

    /// The selectors of the reads, in first-appearance order.
    pub fn selectors(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.t.reads {
            if !out.contains(&r.selector) {
                out.push(r.selector.clone());
            }
        }
        out
    }

    /// Whether the trajectory reached a correct answer under `selector`: the mean `em` over
    /// its reads of that selector is 1 (every read exact). `None` when it has no such read.
    pub fn correct(&self, selector: &str) -> Option<bool> {
        let ems: Vec<f64> = self
            .t
            .reads
            .iter()
            .filter(|r| r.selector == selector)
            .map(|r| r.em)
            .collect();
        if ems.is_empty() {
            return None;
        }
        Some(ems.iter().sum::<f64>() / ems.len() as f64 >= 1.0 - 1e-12)
    }

    /// The set of supporting corpus ids.
    pub fn supporting(&self) -> HashSet<&str> {
        self.t.supporting.iter().map(String::as_str).collect()
    }
}

/// Reads a trajectory log.
///
/// # Errors
/// [`Error::Io`]; [`Error::Input`] naming file and line for a line that is not a trajectory
/// (with serde's description of the missing or mistyped field), for a key
/// (question, arm, trajectory) given twice, or for an empty log.
pub fn read_trajectories(path: &Path) -> Result<Vec<Logged>> {
    let mut rdr = JsonlReader::open(path)?;
    let mut out: Vec<Logged> = Vec::new();
    let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    while let Some((line, v)) = rdr.next_value()? {
        if !matches!(v, Value::Object(_)) {
            return Err(Error::input(
                path,
                Some(line),
                "expected a JSON object (one trajectory per line)",
            ));
        }
        let t: Trajectory = serde_json::from_value(v).map_err(|e| {
            Error::input(
                path,
                Some(line),
                format!("not a trajectory record (see docs/mcqgen.md): {e}"),
            )
        })?;
        let l = Logged { t, line };
        if let Some(first) = seen.insert(l.key(), line) {
            return Err(Error::input(
                path,
                Some(line),
                format!("trajectory {} already given on line {first}", l.key()),
            ));
        }
        out.push(l);
    }
    if out.is_empty() {
        return Err(Error::input(path, None, "no trajectories in the file"));
    }
    Ok(out)
}

/// Picks the selector whose reads define correctness: `wanted` when given (it must occur in
/// some trajectory's reads), else the first selector of the first trajectory with reads.
///
/// # Errors
/// [`Error::Usage`] when `wanted` occurs in no read, or no trajectory has reads.
pub fn pick_selector(trajs: &[Logged], wanted: Option<&str>) -> Result<String> {
    let all: Vec<String> = trajs.iter().flat_map(|t| t.selectors()).collect();
    match wanted {
        Some(w) if all.iter().any(|s| s == w) => Ok(w.to_string()),
        Some(w) => Err(Error::Usage(format!(
            "--selector {w:?}: no read uses it (selectors in the log: {})",
            crate::io::clip_list(dedup(&all))
        ))),
        None => all.first().cloned().ok_or_else(|| {
            Error::Usage(
                "no trajectory has reads, so none can be called correct or incorrect".into(),
            )
        }),
    }
}

fn dedup(v: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in v {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}
