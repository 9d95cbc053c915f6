//! Evaluation panels: loading (CSV or JSONL), validation, strata, arm pairing, and the
//! per-question sufficient statistics every analysis starts from.
//!
//! A panel is long format, one row per read: `dataset` (the stratum), `question`,
//! `trajectory`, `read`, optionally `arm` and `selector`, and numeric score columns. After
//! loading, each stratum holds one outcome per cell (a score, or with `--contrast B-A` the
//! paired difference score(B) − score(A); of one selector, or of the mean over selectors): a
//! balanced Q × T × R array when every question has the stratum's T trajectories of R reads,
//! else (when the caller accepts unbalanced strata) the questions nested as they are, with
//! notes naming the questions that differ.
//!
//! Trajectory labels are nested in questions and read labels in trajectories: only the
//! grouping and the counts matter, so labels unique per question (e.g. uuids) are fine.

pub mod arrow;
mod assemble;
mod balance;
mod clusters;
pub mod design;
mod load;
pub mod memory;
mod options;
mod pairing;
mod raw;
mod read;
pub mod records;
mod selectors;
mod settle;
mod source;
mod strata;
mod suffstats;

pub use clusters::Clusters;
pub use design::Design;
pub use load::{load_panel, LoadOptions, PanelRows};
pub use options::{combine_strata, ColumnMap, Duplicates, Weights};
pub use read::IGNORED_CLUSTERS_COVERAGE;
pub use selectors::SelectorChoice;
pub use source::Source;
pub use suffstats::{QuestionStats, StratumStats};

use std::path::PathBuf;

/// A loaded, validated panel.
#[derive(Debug, Clone)]
pub struct Panel {
    /// The file it came from.
    pub source: PathBuf,
    /// The score column analysed.
    pub metric: String,
    /// What the outcome is: the metric itself, one arm's metric, or a contrast `B-A`.
    pub outcome: String,
    /// The values of the `selector` column in order of first appearance (empty without one).
    pub selectors: Vec<String>,
    /// The one selector whose rows the outcome holds (`--selector NAME`, or the panel's only
    /// selector); `None` for the selector average or a panel without a `selector` column.
    /// Cost matching bills this selector's reads only (`costs::accounting::for_selector`).
    pub selector: Option<String>,
    /// Strata in order of first appearance in the file.
    pub strata: Vec<Stratum>,
    /// What loading chose or changed that the user should hear of (the score column it
    /// picked, questions `common_questions` dropped, duplicate rows merged), for a front
    /// end to show as notes.
    pub notes: Vec<String>,
    /// The strata's weights w_d (Σ w_d = 1) when an analysis combines them
    /// ([`LoadOptions::weights`]); empty for equal weights, 1/D.
    pub weights: Vec<f64>,
}

impl Panel {
    /// The strata's weights: [`Panel::weights`], or 1/D each when they are equal.
    pub fn stratum_weights(&self) -> Vec<f64> {
        if self.weights.is_empty() {
            vec![1.0 / self.strata.len() as f64; self.strata.len()]
        } else {
            self.weights.clone()
        }
    }

    /// Whether the outcome takes one value in every cell of every stratum (and there is at
    /// least one cell). Then every question bootstrap draws the same value, so its SE of 0
    /// and zero-width interval say nothing about precision: the resampling reports say so
    /// ([`crate::resample::summary::NO_SPREAD_NOTE`]).
    pub fn outcome_is_constant(&self) -> bool {
        all_equal(self.strata.iter().flat_map(|s| match &s.nested {
            Some(n) => n.y.iter(),
            None => s.y.iter(),
        }))
    }

    /// Whether the panel was read with a cluster column ([`LoadOptions::cluster`]): every
    /// stratum then has [`Stratum::clusters`].
    pub fn is_clustered(&self) -> bool {
        !self.strata.is_empty() && self.strata.iter().all(|s| s.clusters.is_some())
    }
}

/// One stratum (dataset): a balanced Q × T × R array of outcomes, or (`nested`) its
/// questions, trajectories and reads as they are. `Default` is an empty balanced stratum,
/// for building one field by field.
#[derive(Debug, Clone, Default)]
pub struct Stratum {
    /// The `dataset` value (or `all` when the file has no dataset column).
    pub name: String,
    /// Question ids in order of first appearance in the file.
    pub questions: Vec<String>,
    /// Trajectory labels, sorted (numerically when all are integers), when every question
    /// has the same ones; else positions `1..=T`. Empty when `nested`.
    pub trajectories: Vec<String>,
    /// Read labels likewise (`1..=R` when they differ between trajectories).
    pub reads: Vec<String>,
    /// Outcomes, index `(q * T + t) * R + r`. Empty when `nested`.
    pub y: Vec<f64>,
    /// Questions dropped by `--drop-incomplete`.
    pub dropped: usize,
    /// Each dropped question's id and why it was dropped.
    pub dropped_questions: Vec<String>,
    /// The outcomes nested as they are, when the stratum is unbalanced (and the loader was
    /// asked to accept that); `None` for a balanced stratum.
    pub nested: Option<Nested>,
    /// Notes on an unbalanced stratum: which questions differ from its design and how.
    pub notes: Vec<String>,
    /// With a contrast, the cells present in one arm only: dropped from the outcome (the
    /// default), or scored with `failure_score` for the missing arm (the message says which).
    /// Cells of questions `drop_incomplete` dropped are in `dropped_questions` instead.
    pub unpaired_cells: Vec<String>,
    /// The file's labels of every cell, for matching a cost ledger (`None` for a stratum
    /// built in code: then `trajectories` and `reads` name a balanced array's cells).
    pub labels: Option<CellLabels>,
    /// With a cluster column ([`LoadOptions::cluster`]): the cluster of each of
    /// `questions` (clusters are nested in strata). `None` without one.
    pub clusters: Option<Clusters>,
}

/// The file's labels of a stratum's cells in outcome order: `trajectory` has one entry per
/// trajectory (question by question, each question's in label order), `read` one per
/// outcome. Balanced strata whose questions have their own labels (e.g. uuids) need these:
/// their `trajectories` and `reads` are then positions.
///
/// Each cell holds the index of its label in the panel's label texts, which every stratum
/// shares: a per-cell copy or reference count made filling a large panel's strata on
/// several threads fight over a few shared counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellLabels {
    /// The panel's trajectory label texts, which `trajectory` indexes.
    pub trajectory_names: std::sync::Arc<[String]>,
    /// The panel's read label texts, which `read` indexes.
    pub read_names: std::sync::Arc<[String]>,
    pub trajectory: Vec<u32>,
    pub read: Vec<u32>,
}

/// An unbalanced stratum's outcomes: question q's trajectories are
/// `traj_start[q]..traj_start[q + 1]`, trajectory t's reads `y[read_start[t]..read_start[t + 1]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Nested {
    pub traj_start: Vec<usize>,
    pub read_start: Vec<usize>,
    pub y: Vec<f64>,
}

impl Stratum {
    /// Whether the stratum is a balanced Q × T × R array.
    pub fn is_balanced(&self) -> bool {
        self.nested.is_none()
    }

    /// Question `q`'s trajectories, each as the slice of its reads' outcomes (balanced or not).
    pub fn trajectories_of(&self, q: usize) -> Vec<&[f64]> {
        match &self.nested {
            Some(n) => (n.traj_start[q]..n.traj_start[q + 1])
                .map(|t| &n.y[n.read_start[t]..n.read_start[t + 1]])
                .collect(),
            None => (0..self.t())
                .map(|t| {
                    let start = (q * self.t() + t) * self.r();
                    &self.y[start..start + self.r()]
                })
                .collect(),
        }
    }

    /// Number of questions Q.
    pub fn q(&self) -> usize {
        self.questions.len()
    }
    /// Trajectories per question T (0 when `nested`).
    pub fn t(&self) -> usize {
        self.trajectories.len()
    }
    /// Reads per trajectory R (0 when `nested`).
    pub fn r(&self) -> usize {
        self.reads.len()
    }
    /// Outcome of question `q`, trajectory `t`, read `r`.
    pub fn y(&self, q: usize, t: usize, r: usize) -> f64 {
        self.y[(q * self.t() + t) * self.r() + r]
    }

    /// The file's labels of question `q`'s trajectory `t` (its t-th in label order) and of
    /// that trajectory's read `r`: from [`Stratum::labels`] when loaded from a file, else
    /// the balanced array's `trajectories[t]` and `reads[r]`. `None` when there is no such
    /// cell.
    pub fn cell_label(&self, q: usize, t: usize, r: usize) -> Option<(&str, &str)> {
        let (ti, ri) = match &self.nested {
            Some(n) => {
                let ti = n.traj_start.get(q)? + t;
                if ti >= *n.traj_start.get(q + 1)? || n.read_start[ti] + r >= n.read_start[ti + 1] {
                    return None;
                }
                (ti, n.read_start[ti] + r)
            }
            None => {
                if q >= self.q() || t >= self.t() || r >= self.r() {
                    return None;
                }
                let ti = q * self.t() + t;
                (ti, ti * self.r() + r)
            }
        };
        match &self.labels {
            Some(l) => Some((
                l.trajectory_names.get(*l.trajectory.get(ti)? as usize)?,
                l.read_names.get(*l.read.get(ri)? as usize)?,
            )),
            None if self.nested.is_none() => {
                Some((self.trajectories[t].as_str(), self.reads[r].as_str()))
            }
            None => None,
        }
    }
}

/// Whether `values` holds at least one value and every one equals the first (bit for bit
/// as `==` compares): an outcome with no spread for a resample to find.
pub fn all_equal<'a>(values: impl IntoIterator<Item = &'a f64>) -> bool {
    let mut values = values.into_iter();
    values
        .next()
        .is_some_and(|first| values.all(|v| v == first))
}
