//! Matching a cost ledger to a panel: what each question of a (sub-)panel cost.
//!
//! Cells are matched by the file's labels (dataset, question, trajectory, read), each
//! question with its own trajectories and reads ([`crate::panel::Stratum::cell_label`]), so
//! unbalanced strata and labels unique per question are priced like balanced ones.
//!
//! From the per-cell costs of a loaded ledger ([`super::accounting::PricedLedger::cell_costs`])
//! come the costs of a whole panel as the one-read and planning analyses need them
//! ([`balanced_panel_costs`], [`panel_trajectory_costs`]).

use std::path::Path;

use serde::Serialize;

use super::accounting::CellCosts;
use crate::panel::{Panel, Stratum};
use crate::{Error, Result};

/// Reader cost of one question in a one-read panel (read 0 as billed) and in a two-read
/// panel (reads 0 and 1 as billed), all trajectories.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReadCosts {
    pub one: f64,
    pub two: f64,
}

/// A balanced panel's costs: per stratum each question's cost at the full design
/// (`[stratum][question]`), and its [`ReadCosts`] (empty when some stratum has R < 2).
pub type PanelCosts = (Vec<Vec<QuestionCost>>, Vec<Vec<ReadCosts>>);

/// The costs of a balanced `panel` from its ledger's per-cell costs (see [`PanelCosts`]):
/// question q's cost is the sum over its T trajectories of the trajectory cell and its R
/// read cells; its one-read cost sums read 0 of each trajectory, its two-read cost reads 0
/// and 1.
///
/// # Errors
/// As [`question_costs`]: a panel cell the ledger has no rows for.
pub fn balanced_panel_costs(panel: &Panel, cells: &CellCosts, ledger: &Path) -> Result<PanelCosts> {
    let full = panel
        .strata
        .iter()
        .map(|s| {
            let traj: Vec<usize> = (0..s.t()).collect();
            let reads: Vec<usize> = (0..s.r()).collect();
            question_costs(s, cells, 0..s.q(), &traj, &reads, ledger)
        })
        .collect::<Result<_>>()?;
    let reads = if panel.strata.iter().all(|s| s.r() >= 2) {
        panel
            .strata
            .iter()
            .map(|s| {
                let traj: Vec<usize> = (0..s.t()).collect();
                let one = question_costs(s, cells, 0..s.q(), &traj, &[0], ledger)?;
                let two = question_costs(s, cells, 0..s.q(), &traj, &[0, 1], ledger)?;
                Ok(one
                    .iter()
                    .zip(&two)
                    .map(|(a, b)| ReadCosts {
                        one: a.reads,
                        two: b.reads,
                    })
                    .collect())
            })
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    Ok((full, reads))
}

/// The cost of every trajectory and read of every stratum of `panel` as they are in it
/// (`[stratum][question][trajectory]`, balanced or not; see [`trajectory_costs`]).
///
/// # Errors
/// As [`trajectory_costs`].
pub fn panel_trajectory_costs(
    panel: &Panel,
    cells: &CellCosts,
    ledger: &Path,
) -> Result<Vec<Vec<Vec<TrajectoryCost>>>> {
    panel
        .strata
        .iter()
        .map(|s| trajectory_costs(s, cells, ledger))
        .collect()
}

/// What one question of a sub-panel cost, both arms together.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QuestionCost {
    /// Planner calls and searches of its selected trajectories.
    pub trajectories: f64,
    /// Reader calls of its selected (trajectory, read) cells.
    pub reads: f64,
}

/// What one trajectory of a panel cost: the trajectory without its reads, and each read
/// (in the question's read label order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrajectoryCost {
    pub trajectory: f64,
    pub reads: Vec<f64>,
}

/// The ledger cost of question `q`'s trajectory `t` (index in its own label order), or an
/// [`Error::Input`] naming the ledger.
fn trajectory_cost(
    stratum: &Stratum,
    cells: &CellCosts,
    q: usize,
    t: usize,
    ledger: &Path,
) -> Result<f64> {
    let (d, qn) = (&stratum.name, &stratum.questions[q]);
    let (tl, _) = stratum
        .cell_label(q, t, 0)
        .ok_or_else(|| no_cell(stratum, q, t, 0))?;
    cells
        .trajectory
        .get(&(d.clone(), qn.clone(), tl.to_string()))
        .copied()
        .ok_or_else(|| {
            Error::input(
                ledger,
                None,
                format!("no planner or search rows for dataset={d}, question={qn}, trajectory={tl}: the ledger does not match the panel"),
            )
        })
}

/// The ledger cost of read `r` of question `q`'s trajectory `t`.
fn read_cost(
    stratum: &Stratum,
    cells: &CellCosts,
    q: usize,
    t: usize,
    r: usize,
    ledger: &Path,
) -> Result<f64> {
    let (d, qn) = (&stratum.name, &stratum.questions[q]);
    let (tl, rl) = stratum
        .cell_label(q, t, r)
        .ok_or_else(|| no_cell(stratum, q, t, r))?;
    cells
        .read
        .get(&(d.clone(), qn.clone(), tl.to_string(), rl.to_string()))
        .copied()
        .ok_or_else(|| {
            Error::input(
                ledger,
                None,
                format!("no reader row for dataset={d}, question={qn}, trajectory={tl}, read={rl}: the ledger does not match the panel"),
            )
        })
}

fn no_cell(stratum: &Stratum, q: usize, t: usize, r: usize) -> Error {
    Error::Data(format!(
        "stratum '{}', question '{}' has no trajectory {} with a read {} (or no labels to match a ledger by)",
        stratum.name,
        stratum.questions[q],
        t + 1,
        r + 1
    ))
}

/// Per-question costs of the sub-panel of `stratum` with trajectory indices `traj` and read
/// indices `reads` (each question's own trajectories and reads in label order; for a
/// balanced stratum the same positions in every question), for `questions`.
///
/// # Errors
/// [`Error::Input`] naming the ledger when a panel cell has no ledger rows: the ledger does
/// not describe this panel; [`Error::Data`] when a question has no such cell.
pub fn question_costs(
    stratum: &Stratum,
    cells: &CellCosts,
    questions: impl IntoIterator<Item = usize>,
    traj: &[usize],
    reads: &[usize],
    ledger: &Path,
) -> Result<Vec<QuestionCost>> {
    questions
        .into_iter()
        .map(|qi| {
            let mut c = QuestionCost::default();
            for &ti in traj {
                c.trajectories += trajectory_cost(stratum, cells, qi, ti, ledger)?;
                for &ri in reads {
                    c.reads += read_cost(stratum, cells, qi, ti, ri, ledger)?;
                }
            }
            Ok(c)
        })
        .collect()
}

/// Every question's trajectories with their costs, as they are in the panel (balanced or
/// not): `[question][trajectory]`.
///
/// # Errors
/// As [`question_costs`].
pub fn trajectory_costs(
    stratum: &Stratum,
    cells: &CellCosts,
    ledger: &Path,
) -> Result<Vec<Vec<TrajectoryCost>>> {
    (0..stratum.q())
        .map(|q| {
            stratum
                .trajectories_of(q)
                .iter()
                .enumerate()
                .map(|(t, reads)| {
                    Ok(TrajectoryCost {
                        trajectory: trajectory_cost(stratum, cells, q, t, ledger)?,
                        reads: (0..reads.len())
                            .map(|r| read_cost(stratum, cells, q, t, r, ledger))
                            .collect::<Result<_>>()?,
                    })
                })
                .collect()
        })
        .collect()
}

/// Each question's full cost (all its trajectories and reads) from [`trajectory_costs`].
pub fn full_costs(costs: &[Vec<TrajectoryCost>]) -> Vec<QuestionCost> {
    costs
        .iter()
        .map(|q| {
            let mut c = QuestionCost::default();
            for t in q {
                c.trajectories += t.trajectory;
                for r in &t.reads {
                    c.reads += r;
                }
            }
            c
        })
        .collect()
}

/// The cost of question `q`'s first `t` trajectories (in its own label order) with the
/// first `r` reads of each, as many as it has: the nested sub-panel of an unbalanced
/// stratum.
///
/// # Errors
/// As [`question_costs`].
pub fn prefix_cost(
    stratum: &Stratum,
    cells: &CellCosts,
    q: usize,
    t: usize,
    r: usize,
    ledger: &Path,
) -> Result<QuestionCost> {
    let mut c = QuestionCost::default();
    for (ti, reads) in stratum.trajectories_of(q).iter().take(t).enumerate() {
        c.trajectories += trajectory_cost(stratum, cells, q, ti, ledger)?;
        for ri in 0..reads.len().min(r) {
            c.reads += read_cost(stratum, cells, q, ti, ri, ledger)?;
        }
    }
    Ok(c)
}
