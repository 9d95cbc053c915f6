//! Evaluation panels: loading (CSV or JSONL), validation, strata, arm pairing, and the
//! per-question sufficient statistics every analysis starts from.
//!
//! A panel is long format, one row per read: `dataset` (the stratum), `question`,
//! `trajectory`, `read`, optionally `arm`, and numeric score columns. After loading, each
//! stratum is a balanced Q × T × R array of outcomes (a score, or with `--contrast B-A`
//! the paired difference score(B) − score(A)).

mod balance;
mod load;
mod pairing;
mod raw;
mod read;
pub mod records;
mod strata;
mod suffstats;

pub use load::{load_panel, LoadOptions};
pub use suffstats::{QuestionStats, StratumStats};

use std::path::PathBuf;

/// A loaded, validated, balanced panel.
#[derive(Debug, Clone)]
pub struct Panel {
    /// The file it came from.
    pub source: PathBuf,
    /// The score column analysed.
    pub metric: String,
    /// What the outcome is: the metric itself, one arm's metric, or a contrast `B-A`.
    pub outcome: String,
    /// Strata in order of first appearance in the file.
    pub strata: Vec<Stratum>,
}

/// One stratum (dataset): a balanced Q × T × R array of outcomes.
#[derive(Debug, Clone)]
pub struct Stratum {
    /// The `dataset` value (or `all` when the file has no dataset column).
    pub name: String,
    /// Question ids in order of first appearance in the file.
    pub questions: Vec<String>,
    /// Trajectory labels, sorted (numerically when all are integers).
    pub trajectories: Vec<String>,
    /// Read labels, sorted (numerically when all are integers).
    pub reads: Vec<String>,
    /// Outcomes, index `(q * T + t) * R + r`.
    pub y: Vec<f64>,
    /// Questions dropped by `--drop-incomplete`.
    pub dropped: usize,
}

impl Stratum {
    /// Number of questions Q.
    pub fn q(&self) -> usize {
        self.questions.len()
    }
    /// Trajectories per question T.
    pub fn t(&self) -> usize {
        self.trajectories.len()
    }
    /// Reads per trajectory R.
    pub fn r(&self) -> usize {
        self.reads.len()
    }
    /// Outcome of question `q`, trajectory `t`, read `r`.
    pub fn y(&self, q: usize, t: usize, r: usize) -> f64 {
        self.y[(q * self.t() + t) * self.r() + r]
    }
}
