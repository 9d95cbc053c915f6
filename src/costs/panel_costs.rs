//! Matching a cost ledger to a panel: what each question of a (sub-)panel cost.

use std::path::Path;

use super::cost::CellCosts;
use crate::panel::Stratum;
use crate::{Error, Result};

/// What one question of a sub-panel cost, both arms together.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QuestionCost {
    /// Planner calls and searches of its selected trajectories.
    pub trajectories: f64,
    /// Reader calls of its selected (trajectory, read) cells.
    pub reads: f64,
}

/// Per-question costs of the sub-panel of `stratum` with trajectory indices `traj` and read
/// indices `reads` (indices into the stratum's sorted labels), for `questions`.
///
/// # Errors
/// [`Error::Input`] naming the ledger when a panel cell has no ledger rows: the ledger does
/// not describe this panel.
pub fn question_costs(
    stratum: &Stratum,
    cells: &CellCosts,
    questions: impl IntoIterator<Item = usize>,
    traj: &[usize],
    reads: &[usize],
    ledger: &Path,
) -> Result<Vec<QuestionCost>> {
    let d = &stratum.name;
    questions
        .into_iter()
        .map(|qi| {
            let q = &stratum.questions[qi];
            let mut c = QuestionCost::default();
            for &ti in traj {
                let t = &stratum.trajectories[ti];
                c.trajectories += cells.trajectory.get(&(d.clone(), q.clone(), t.clone())).copied().ok_or_else(|| {
                    Error::input(
                        ledger,
                        None,
                        format!("no planner or search rows for dataset={d}, question={q}, trajectory={t}: the ledger does not match the panel"),
                    )
                })?;
                for &ri in reads {
                    let r = &stratum.reads[ri];
                    c.reads += cells.read.get(&(d.clone(), q.clone(), t.clone(), r.clone())).copied().ok_or_else(|| {
                        Error::input(
                            ledger,
                            None,
                            format!("no reader row for dataset={d}, question={q}, trajectory={t}, read={r}: the ledger does not match the panel"),
                        )
                    })?;
                }
            }
            Ok(c)
        })
        .collect()
}
