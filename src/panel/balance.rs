//! The balance check: every question of a stratum needs all T × R cells, and the filling
//! of the stratum's Q × T × R array from the questions that have them.

use std::path::Path;

use super::pairing::Cells;
use super::raw::RawPanel;
use super::strata::{Group, Labels};
use super::Stratum;
use crate::{Error, Result};

/// How many missing cells an unbalanced-design message lists.
const SHOWN: usize = 5;

/// Fills stratum `d`'s array, question by question (`groups`, in order). A question missing
/// a cell or with an unpaired one is an error, or with `drop_incomplete` is dropped and
/// counted.
///
/// # Errors
/// [`Error::Input`] at an unbalanced question's first line, naming its missing cells; or
/// for a stratum with no complete question left.
pub(super) fn fill_stratum(
    path: &Path,
    raw: &RawPanel,
    d: u32,
    groups: &[Group],
    cells: &Cells,
    labels: &Labels,
    drop_incomplete: bool,
) -> Result<Stratum> {
    let (tn, rn) = (labels.traj.len(), labels.reads.len());
    let mut questions = Vec::with_capacity(groups.len());
    let mut y = Vec::with_capacity(groups.len() * tn * rn);
    let mut dropped = 0;
    let mut block = vec![f64::NAN; tn * rn];
    for g in groups {
        block.iter_mut().for_each(|v| *v = f64::NAN);
        for c in &cells.cells[g.cells.clone()] {
            block[labels.t_pos[&c.key.2] * rn + labels.r_pos[&c.key.3]] = c.value;
        }
        let missing: Vec<usize> = (0..tn * rn).filter(|&i| block[i].is_nan()).collect();
        if missing.is_empty() && !cells.unpaired.contains_key(&(d, g.qid)) {
            questions.push(raw.questions.names[g.qid as usize].clone());
            y.extend_from_slice(&block);
            continue;
        }
        if drop_incomplete {
            dropped += 1;
            continue;
        }
        return Err(unbalanced(path, raw, d, g, labels, &missing));
    }
    let name = raw.datasets.names[d as usize].clone();
    if questions.is_empty() {
        return Err(Error::input(
            path,
            None,
            format!(
                "stratum '{}' has no complete question left ({dropped} dropped as incomplete)",
                raw.datasets.echo(d)
            ),
        ));
    }
    Ok(Stratum {
        name,
        questions,
        trajectories: labels
            .traj
            .iter()
            .map(|&t| raw.trajectories.names[t as usize].clone())
            .collect(),
        reads: labels
            .reads
            .iter()
            .map(|&r| raw.reads.names[r as usize].clone())
            .collect(),
        y,
        dropped,
    })
}

/// The error for question `g` of stratum `d`, missing the cells at block positions
/// `missing` (`t * R + r`).
fn unbalanced(
    path: &Path,
    raw: &RawPanel,
    d: u32,
    g: &Group,
    labels: &Labels,
    missing: &[usize],
) -> Error {
    let (tn, rn) = (labels.traj.len(), labels.reads.len());
    let shown: Vec<String> = missing
        .iter()
        .take(SHOWN)
        .map(|&i| {
            format!(
                "(trajectory {}, read {})",
                raw.trajectories.echo(labels.traj[i / rn]),
                raw.reads.echo(labels.reads[i % rn])
            )
        })
        .collect();
    let more = if missing.len() > SHOWN {
        format!(" and {} more", missing.len() - SHOWN)
    } else {
        String::new()
    };
    Error::input(
        path,
        Some(g.first_line as u64),
        format!(
            "unbalanced design: question '{}' in stratum '{}' is missing {} of {} cells: {}{}; \
             every question needs all {} trajectories x {} reads (use --drop-incomplete to drop such questions)",
            raw.questions.echo(g.qid),
            raw.datasets.echo(d),
            missing.len(),
            tn * rn,
            shown.join(", "),
            more,
            tn,
            rn
        ),
    )
}
