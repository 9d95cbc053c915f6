//! What `slice` wrote, as a report: the design, how its cells were chosen, the questions kept
//! per stratum and the rows copied to the sub-panel file.

use serde::Serialize;

use super::slice::{Slice, SliceJob};
use crate::document::Report;

/// One stratum of a written sub-panel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlicedStratum {
    pub name: String,
    /// Questions kept.
    pub questions: usize,
}

/// The report of one `slice` run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SliceReport {
    /// Trajectories per question and reads per trajectory of the design.
    pub trajectories: usize,
    pub reads: usize,
    /// `first` (first questions, trajectories and reads), `seeded` (seeded questions,
    /// trajectories and reads) or `seeded-first` (seeded questions, first trajectories and
    /// reads).
    pub choice: &'static str,
    pub seed: Option<u64>,
    pub strata: Vec<SlicedStratum>,
    /// Rows of the input copied to the sub-panel.
    pub rows: usize,
    /// The sub-panel file.
    pub out: String,
}

impl Report for SliceReport {}

impl SliceReport {
    /// The report of `slice`, chosen by `settings`, written to `out` as `rows` rows.
    pub fn new(settings: &SliceJob, slice: &Slice, rows: usize, out: &str) -> SliceReport {
        let (trajectories, reads) = settings.trajectories_reads();
        SliceReport {
            trajectories,
            reads,
            choice: match (settings.seed, settings.first) {
                (Some(_), false) => "seeded",
                (Some(_), true) => "seeded-first",
                (None, _) => "first",
            },
            seed: settings.seed,
            strata: slice
                .strata
                .iter()
                .map(|s| SlicedStratum {
                    name: s.name.clone(),
                    questions: s.questions.len(),
                })
                .collect(),
            rows,
            out: out.to_string(),
        }
    }

    /// One line: how many rows of which design, chosen how, written where.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self
            .strata
            .iter()
            .map(|s| format!("{}={}", s.name, s.questions))
            .collect();
        format!(
            "wrote {} rows of design {}:{}:{} ({}) to {}",
            self.rows,
            parts.join(","),
            self.trajectories,
            self.reads,
            match self.choice {
                "seeded" => "seeded questions, trajectories and reads",
                "seeded-first" => "seeded questions, first trajectories and reads",
                _ => "first questions, trajectories and reads",
            },
            self.out
        )
    }
}
