//! Matching a cost ledger to a panel: what each question of a (sub-)panel cost.
//!
//! Cells are matched by the file's labels (dataset, question, trajectory, read), each
//! question with its own trajectories and reads ([`crate::panel::Stratum::cell_label`]), so
//! unbalanced strata and labels unique per question are priced like balanced ones.
//!
//! From the per-cell costs of a loaded ledger ([`super::accounting::PricedLedger::cell_costs`])
//! come the costs of a whole panel as the one-read and planning analyses need them
//! ([`balanced_panel_costs`], [`panel_trajectory_costs`]).

use std::collections::{HashMap, HashSet};
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
///
/// Every billed row of a question the panel holds counts ([`absent_cells`]): the cost of its
/// trajectories the panel lacks (a failed trajectory's planner, search and reader rows) is
/// added to its trajectory cost, and the cost of reads the panel lacks of a trajectory it
/// has to its read cost (as later reads, not first ones), so the question costs sum to the
/// billed total of the panel's questions.
pub fn balanced_panel_costs(panel: &Panel, cells: &CellCosts, ledger: &Path) -> Result<PanelCosts> {
    let absent = absent_cells(panel, cells);
    let full = panel
        .strata
        .iter()
        .zip(&absent.questions)
        .map(|(s, extra)| {
            let traj: Vec<usize> = (0..s.t()).collect();
            let reads: Vec<usize> = (0..s.r()).collect();
            let mut c = question_costs(s, cells, 0..s.q(), &traj, &reads, ledger)?;
            for (c, e) in c.iter_mut().zip(extra) {
                c.trajectories += e.trajectories;
                c.reads += e.reads.iter().sum::<f64>();
            }
            Ok(c)
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
/// (`[stratum][question][trajectory]`, balanced or not; see [`trajectory_costs`]), with
/// every billed row of a question the panel holds ([`absent_cells`]): the cost of the
/// question's trajectories the panel lacks is added to its first trajectory's
/// `trajectory`, and that of a trajectory's reads the panel lacks is its `extra_reads`.
///
/// # Errors
/// As [`trajectory_costs`].
pub fn panel_trajectory_costs(
    panel: &Panel,
    cells: &CellCosts,
    ledger: &Path,
) -> Result<Vec<Vec<Vec<TrajectoryCost>>>> {
    let absent = absent_cells(panel, cells);
    panel
        .strata
        .iter()
        .zip(&absent.questions)
        .map(|(s, extra)| {
            let mut c = trajectory_costs(s, cells, ledger)?;
            for (q, e) in c.iter_mut().zip(extra) {
                if let Some(first) = q.first_mut() {
                    first.trajectory += e.trajectories;
                }
                for (t, r) in q.iter_mut().zip(&e.reads) {
                    t.extra_reads += r;
                }
            }
            Ok(c)
        })
        .collect()
}

/// What a ledger bills for the cells of a panel's questions that the panel does not hold
/// (a trajectory that failed before its reads, a read whose call failed): [`absent_cells`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AbsentCells {
    /// Ledger rows (planner, search and reader) of such cells.
    pub rows: u64,
    /// `[stratum][question]`: what its absent cells cost.
    pub questions: Vec<Vec<AbsentCost>>,
}

/// The absent cells of one question.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AbsentCost {
    /// Trajectories the panel lacks, each with all its rows (planner, search and reader).
    pub trajectories: f64,
    /// Per trajectory the panel has (its label order), its reads the panel lacks.
    pub reads: Vec<f64>,
}

/// The ledger's cells of each of `panel`'s questions that the panel lacks, matched by the
/// file's labels (dataset, question, trajectory, read), with their costs and rows. A
/// stratum without labels to match by has none.
pub fn absent_cells(panel: &Panel, cells: &CellCosts) -> AbsentCells {
    type Cells<'a> = Vec<(&'a str, Option<&'a str>, f64, u64)>;
    let mut by_question: HashMap<(&str, &str), Cells<'_>> = HashMap::new();
    for (k, &rows) in &cells.trajectory_rows {
        let cost = cells.trajectory.get(k).copied().unwrap_or(0.0);
        by_question
            .entry((k.0.as_str(), k.1.as_str()))
            .or_default()
            .push((k.2.as_str(), None, cost, rows));
    }
    for (k, &rows) in &cells.read_rows {
        let cost = cells.read.get(k).copied().unwrap_or(0.0);
        by_question
            .entry((k.0.as_str(), k.1.as_str()))
            .or_default()
            .push((k.2.as_str(), Some(k.3.as_str()), cost, rows));
    }
    let mut out = AbsentCells::default();
    for s in &panel.strata {
        let mut qs = Vec::with_capacity(s.q());
        for (q, name) in s.questions.iter().enumerate() {
            let traj = s.trajectories_of(q);
            let mut cost = AbsentCost {
                trajectories: 0.0,
                reads: vec![0.0; traj.len()],
            };
            let labels: Option<Vec<(&str, HashSet<&str>)>> = traj
                .iter()
                .enumerate()
                .map(|(t, reads)| {
                    let tl = s.cell_label(q, t, 0)?.0;
                    let rl = (0..reads.len())
                        .map(|r| s.cell_label(q, t, r).map(|l| l.1))
                        .collect::<Option<HashSet<&str>>>()?;
                    Some((tl, rl))
                })
                .collect();
            if let (Some(labels), Some(found)) =
                (labels, by_question.get(&(s.name.as_str(), name.as_str())))
            {
                for &(tl, rl, c, rows) in found {
                    match labels.iter().position(|(l, _)| *l == tl) {
                        None => {
                            cost.trajectories += c;
                            out.rows += rows;
                        }
                        Some(t) => {
                            if rl.is_some_and(|r| !labels[t].1.contains(r)) {
                                cost.reads[t] += c;
                                out.rows += rows;
                            }
                        }
                    }
                }
            }
            qs.push(cost);
        }
        out.questions.push(qs);
    }
    out
}

/// What one question of a sub-panel cost, both arms together.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QuestionCost {
    /// Planner calls and searches of its selected trajectories.
    pub trajectories: f64,
    /// Reader calls of its selected (trajectory, read) cells.
    pub reads: f64,
    /// The part of `reads` that is each selected trajectory's first selected read (billed
    /// uncached when prompts are cached; the rest are later reads).
    pub first_reads: f64,
}

/// What one trajectory of a panel cost: the trajectory without its reads, and each read
/// (in the question's read label order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrajectoryCost {
    pub trajectory: f64,
    pub reads: Vec<f64>,
    /// Reads of this trajectory the ledger bills but the panel lacks (failed reads; see
    /// [`panel_trajectory_costs`]), counted as later reads.
    pub extra_reads: f64,
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
                for (k, &ri) in reads.iter().enumerate() {
                    let v = read_cost(stratum, cells, qi, ti, ri, ledger)?;
                    c.reads += v;
                    if k == 0 {
                        c.first_reads += v;
                    }
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
                        extra_reads: 0.0,
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
                c.reads += t.extra_reads;
                c.first_reads += t.reads.first().copied().unwrap_or(0.0);
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
            let v = read_cost(stratum, cells, q, ti, ri, ledger)?;
            c.reads += v;
            if ri == 0 {
                c.first_reads += v;
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// One question, trajectories 0 and 1 of reads 0 and 1 in the panel; the ledger also
    /// bills a failed trajectory 2 (planner 7 + a reader row 3, 2 rows) and a failed read 5
    /// of trajectory 1 (4, 1 row). The panel's own cells cost 10 per trajectory and 1 per
    /// read.
    #[test]
    fn absent_cells_bill_failed_trajectories_and_reads_to_their_question() {
        let s = Stratum {
            name: "d".into(),
            questions: vec!["q".into()],
            trajectories: vec!["0".into(), "1".into()],
            reads: vec!["0".into(), "1".into()],
            y: vec![0.0; 4],
            ..Stratum::default()
        };
        let panel = Panel {
            notes: Vec::new(),
            weights: Vec::new(),
            source: PathBuf::from("p.csv"),
            metric: "y".into(),
            outcome: "y".into(),
            selectors: Vec::new(),
            selector: None,
            strata: vec![s],
        };
        let mut c = CellCosts::default();
        let k3 = |t: &str| ("d".to_string(), "q".to_string(), t.to_string());
        let k4 = |t: &str, r: &str| {
            (
                "d".to_string(),
                "q".to_string(),
                t.to_string(),
                r.to_string(),
            )
        };
        for (t, cost) in [("0", 10.0), ("1", 10.0), ("2", 7.0)] {
            c.trajectory.insert(k3(t), cost);
            c.trajectory_rows.insert(k3(t), 1);
        }
        for (t, r, cost) in [
            ("0", "0", 1.0),
            ("0", "1", 1.0),
            ("1", "0", 1.0),
            ("1", "1", 1.0),
            ("2", "0", 3.0),
            ("1", "5", 4.0),
        ] {
            c.read.insert(k4(t, r), cost);
            c.read_rows.insert(k4(t, r), 1);
        }
        let a = absent_cells(&panel, &c);
        assert_eq!(a.rows, 3);
        assert_eq!(
            a.questions,
            vec![vec![AbsentCost {
                trajectories: 10.0,
                reads: vec![0.0, 4.0],
            }]]
        );
        // The panel's question costs: 2·10 + 10 (trajectory 2) and 4·1 + 4 (read 5), with
        // first reads 2·1; in all 38 = every billed cost of the question.
        let (full, _) = balanced_panel_costs(&panel, &c, Path::new("l.jsonl")).unwrap();
        let q = full[0][0];
        assert_eq!((q.trajectories, q.reads, q.first_reads), (30.0, 8.0, 2.0));
        let nested = panel_trajectory_costs(&panel, &c, Path::new("l.jsonl")).unwrap();
        assert_eq!(nested[0][0][0].trajectory, 20.0);
        assert_eq!(nested[0][0][1].extra_reads, 4.0);
        let total = full_costs(&nested[0]);
        assert_eq!((total[0].trajectories, total[0].reads), (30.0, 8.0));
    }
}
