//! The runner's trajectory log (`trajectories.jsonl`, the contract in docs/run.md and
//! docs/mcqgen.md): one record type written by the runner (`ragstats_agent::run`) and read by
//! `run-audit`, item generation (`ragstats_agent::mcqgen`) and the judge, with the rule for
//! which trajectories reached a correct answer.
//!
//! The reader is lenient where the contract allows it: fields other than the key, the
//! question, the steps' indexes and the reads' `em` may be missing (they take their empty
//! value), and fields the runner adds later are ignored. It is strict about the rest: a line
//! that is not a JSON object, a key (question, arm, trajectory) given twice, or an empty log
//! is an error naming file and line.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::io::JsonlReader;
use crate::questions::Dataset;

/// One ranked search result. A masked record keeps its rank slot but shows no content.
/// (Defined here, below the search backends, because the log stores them; re-exported as
/// `ragstats_agent::search::SearchRecord`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// Backend document id (for the local index: the corpus [`crate::questions::Document`] id).
    pub id: String,
    pub url: String,
    pub title: String,
    pub text: String,
    /// The backend's score or distance, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// True when the URL matched the mask list: title and text are empty.
    #[serde(default)]
    pub masked: bool,
}

/// One line of `trajectories.jsonl`: one (question, arm, trajectory). Fields are written in
/// the order declared here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// The run's name (the output directory's name).
    #[serde(default)]
    pub run: String,
    pub question_id: String,
    pub dataset: Dataset,
    pub question: String,
    /// Gold answer then aliases.
    pub answers: Vec<String>,
    /// Corpus ids of the gold supporting paragraphs.
    #[serde(default)]
    pub supporting: Vec<String>,
    /// The question's cluster ([`crate::questions::Question::cluster`]); absent when the
    /// question has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The planner arm: `open` or `adaptive`.
    pub arm: String,
    /// 0-based index within (question, arm).
    pub trajectory: u32,
    /// The planner model.
    #[serde(default)]
    pub model: String,
    /// One per planning step, in order.
    pub steps: Vec<Step>,
    /// Per selector (`rrf`, `rr`): the records the reader saw.
    #[serde(default)]
    pub packets: BTreeMap<String, Vec<SearchRecord>>,
    /// R reads per selector, in selector then read order.
    #[serde(default)]
    pub reads: Vec<Read>,
}

/// One planning step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 0-based step index.
    pub step: u32,
    /// The chat messages the planner was sent.
    #[serde(default)]
    pub planner_messages: Vec<Value>,
    /// The planner's raw reply (its thought and its action).
    #[serde(default)]
    pub planner_text: String,
    /// The parsed query; `None` (`null`) on a planning failure.
    #[serde(default)]
    pub query: Option<String>,
    /// Why no query could be parsed, when `query` is `None`.
    #[serde(default)]
    pub failure: Option<String>,
    /// The query's ranked results (texts cut to 5,000 characters); empty on failure.
    #[serde(default)]
    pub results: Vec<SearchRecord>,
    /// Added field: true for step 0, the call and search shared by every arm of the
    /// trajectory.
    #[serde(default)]
    pub shared: bool,
    /// Added field: how many of `results` were masked benchmark URLs.
    #[serde(default)]
    pub masked: usize,
    /// Added field: the planner's reply was cut at the token cap (`finish_reason`
    /// `length`). Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One reader call on a selector's packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Read {
    /// The selector whose packet the reader saw.
    pub selector: String,
    /// 0-based read index.
    pub read: u32,
    /// The chat messages the reader was sent.
    #[serde(default)]
    pub reader_messages: Vec<Value>,
    /// The reader's raw reply.
    #[serde(default)]
    pub reader_text: String,
    /// The parsed answer (a missing or `null` answer reads as empty).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub answer: String,
    /// Exact match of `answer` against the gold answers (0 or 1).
    pub em: f64,
    /// Token F1 of `answer` against the gold answers.
    #[serde(default)]
    pub f1: f64,
    /// Added field: why the reply gave no answer (a copied placeholder, docs/run.md); the
    /// read then has an empty `answer` scored 0. Absent for a read that was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Added field: the reader's reply was cut at the token cap (`finish_reason` `length`).
    /// Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
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
    let mut seen: HashMap<String, u64> = HashMap::new();
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
/// [`Error::Setting`] (`selector`) when `wanted` occurs in no read; [`Error::Usage`] when
/// no trajectory has reads.
pub fn pick_selector(trajs: &[Logged], wanted: Option<&str>) -> Result<String> {
    let all: Vec<String> = trajs.iter().flat_map(|t| t.selectors()).collect();
    match wanted {
        Some(w) if all.iter().any(|s| s == w) => Ok(w.to_string()),
        Some(w) => Err(Error::setting(
            "selector",
            format!(
                "no read uses the selector {w:?} (selectors in the log: {})",
                crate::io::clip_list(dedup(&all))
            ),
        )),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The lenient reader: a record with only the required fields takes empty values for
    /// the rest, a `null` answer reads as empty, and a field it does not know is ignored.
    #[test]
    fn minimal_records_read_with_empty_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(
            &p,
            concat!(
                r#"{"question_id":"q","dataset":"musique","question":"?","answers":["a"],"#,
                r#""arm":"open","trajectory":2,"steps":[{"step":0}],"#,
                r#""reads":[{"selector":"rr","read":0,"answer":null,"em":1.0}],"later":7}"#,
                "\n"
            ),
        )
        .unwrap();
        let got = read_trajectories(&p).unwrap();
        assert_eq!(got.len(), 1);
        let l = &got[0];
        assert_eq!((l.line, l.key().as_str()), (1, "q/open/2"));
        assert_eq!(l.t.dataset, Dataset::Musique);
        assert_eq!(l.t.run, "");
        assert!(l.t.supporting.is_empty() && l.t.packets.is_empty());
        let s = &l.t.steps[0];
        assert_eq!(
            (s.query.as_deref(), s.results.len(), s.masked),
            (None, 0, 0)
        );
        let r = &l.t.reads[0];
        assert_eq!((r.answer.as_str(), r.em, r.f1), ("", 1.0, 0.0));
        assert_eq!(l.correct("rr"), Some(true));
        assert_eq!(l.correct("rrf"), None);
    }

    /// What the runner writes reads back equal, field for field.
    #[test]
    fn a_written_record_reads_back_equal() {
        let t = Trajectory {
            run: "demo".into(),
            question_id: "q1".into(),
            dataset: Dataset::Hotpotqa,
            question: "Who?".into(),
            answers: vec!["X".into(), "x".into()],
            supporting: vec!["d1".into()],
            cluster: Some("Alû".into()),
            arm: "adaptive".into(),
            trajectory: 0,
            model: "M".into(),
            steps: vec![Step {
                step: 0,
                planner_messages: vec![serde_json::json!({"role": "user", "content": "p"})],
                planner_text: "Query: who".into(),
                query: Some("who".into()),
                failure: None,
                results: vec![SearchRecord {
                    id: "d1".into(),
                    url: "u".into(),
                    title: "T".into(),
                    text: "t".into(),
                    score: Some(1.5),
                    masked: false,
                }],
                shared: true,
                masked: 0,
                truncated: true,
            }],
            packets: BTreeMap::new(),
            reads: vec![Read {
                selector: "rrf".into(),
                read: 0,
                reader_messages: vec![],
                reader_text: "Answer: X".into(),
                answer: "X".into(),
                em: 1.0,
                f1: 1.0,
                failure: None,
                truncated: false,
            }],
        };
        // `truncated` is written only when true (the step's), like `failure`.
        let line = serde_json::to_string(&t).unwrap();
        assert_eq!(line.matches("\"truncated\":true").count(), 1);
        assert!(!line.contains("\"truncated\":false"));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, serde_json::to_string(&t).unwrap() + "\n").unwrap();
        assert_eq!(read_trajectories(&p).unwrap()[0].t, t);
    }
}
