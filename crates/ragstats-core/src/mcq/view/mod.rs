//! The MCQ analyses' views, one module per report (`mcq score`, `agree`, `filter`,
//! `validate`, `cost`, `compare` of two files and its leaderboard of more), and the cells and
//! lines they share.

use super::cluster::Clusters;
use super::score::Stat;
pub(crate) use crate::table::number as num;
use crate::table::Cell;

mod agree;
mod compare;
mod cost;
mod filter;
mod leaderboard;
mod score;
mod validate;

/// The lines a text report has about its clusters: the rule, the counts and the notes.
pub fn cluster_lines(c: &Clusters) -> String {
    let mut out = format!(
        "\nclusters: by {} from {}: {} cluster(s) of {} item(s), the largest {}, {} in more than one group; the bootstrap drew whole clusters, jointly across groups\n",
        c.rule, c.items_file, c.clusters, c.items, c.largest, c.spanning_groups
    );
    for n in &c.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// An interval cell: `[lo, hi]`.
pub fn ci(s: &Stat) -> String {
    format!("[{}, {}]", num(s.ci[0]), num(s.ci[1]))
}

/// A run mean ± SD cell (the mean alone when there is one run).
pub fn pm(s: &Stat) -> String {
    if s.run_sd.is_nan() {
        num(s.run_mean)
    } else {
        format!("{} ± {}", num(s.run_mean), num(s.run_sd))
    }
}

/// A number of the CSV of `mcq score` or `mcq compare`: every digit, as [`Cell::num`]
/// writes it; a value that is not finite (a one-run SD, a side without the level) stays
/// `NaN` as these CSVs have always written it, where a typed number would be an empty cell.
pub fn csv_f64(v: f64) -> Cell {
    if v.is_finite() {
        Cell::num(v)
    } else {
        Cell::Raw(v.to_string())
    }
}

/// `95%`: a confidence level as table headers show it.
pub use crate::table::percent;
