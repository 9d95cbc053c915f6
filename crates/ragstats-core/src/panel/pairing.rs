//! Arms: which rows form the outcome (one arm, or the contrast of two), the check that no
//! cell is given twice, and the reduction to one outcome per cell.

use std::collections::HashMap;
use std::path::Path;

use super::raw::{CellKey, Interner, RawPanel, NO_ARM};
use super::LoadOptions;
use crate::io::clip_list;
use crate::{Error, Result};

/// Arm ids (B, A) of a contrast B − A.
pub(super) type Pair = (u32, u32);

/// One cell's outcome: a score, or the paired difference score(B) − score(A).
pub(super) struct Cell {
    pub key: CellKey,
    /// The first line of the rows it came from.
    pub line: u32,
    pub value: f64,
}

/// The outcome's cells, sorted by key, the questions left incomplete by an unpaired
/// cell (with `--drop-incomplete`), keyed (dataset, question), with the reason, and the
/// unpaired cells dropped or scored otherwise (dataset id, what was done).
pub(super) struct Cells {
    pub cells: Vec<Cell>,
    pub unpaired: HashMap<(u32, u32), String>,
    pub unpaired_cells: Vec<(u32, String)>,
}

/// Chooses the outcome from `--contrast` / `--arm` and keeps only the rows it needs.
/// Returns the outcome's name and, for a contrast, the arm pair.
///
/// # Errors
/// [`Error::Input`] for a row without an arm in a panel with arms, an unknown arm, or
/// several arms and no choice; [`Error::Usage`] for both flags or a contrast of one arm.
pub(super) fn select_arms(
    path: &Path,
    raw: &mut RawPanel,
    metric: &str,
    opts: &LoadOptions,
) -> Result<(String, Option<Pair>)> {
    let has_arms = raw.rows.iter().any(|r| r.arm != NO_ARM);
    if has_arms {
        if let Some(r) = raw.rows.iter().find(|r| r.arm == NO_ARM) {
            return Err(Error::input(
                path,
                Some(r.line as u64),
                format!("empty '{}' value", raw.arm_name()),
            ));
        }
    }
    match (&opts.contrast, &opts.arm) {
        (Some(_), Some(_)) => Err(Error::Usage(
            "choose either a contrast or one arm, not both".into(),
        )),
        (Some(spec), None) => {
            let (b, a) = parse_contrast(path, spec, &raw.arms)?;
            raw.rows.retain(|r| r.arm == a || r.arm == b);
            Ok((format!("{metric}: {spec}"), Some((b, a))))
        }
        (None, Some(arm)) => {
            let id = raw.arms.get(arm).ok_or_else(|| {
                Error::input(
                    path,
                    None,
                    format!(
                        "unknown arm '{arm}'; the panel's arms are: {}",
                        clip_list(raw.arms.names())
                    ),
                )
            })?;
            raw.rows.retain(|r| r.arm == id);
            Ok((format!("{metric} ({arm})"), None))
        }
        (None, None) => {
            if raw.arms.len() > 1 {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "the panel has several arms ({}); choose a contrast B-A or one arm",
                        clip_list(raw.arms.names())
                    ),
                ));
            }
            Ok((metric.to_string(), None))
        }
    }
}

/// Splits `B-A` into arm ids, trying every `-` so arm names may themselves contain dashes.
fn parse_contrast(path: &Path, spec: &str, arms: &Interner) -> Result<Pair> {
    let known = || clip_list(arms.names());
    if arms.is_empty() {
        return Err(Error::setting(
            "contrast",
            format!(
                "the contrast {spec} needs an 'arm' column, and {} has none",
                path.display()
            ),
        ));
    }
    for (i, _) in spec.match_indices('-') {
        let (b, a) = (&spec[..i], &spec[i + 1..]);
        if let (Some(bi), Some(ai)) = (arms.get(b), arms.get(a)) {
            if bi == ai {
                return Err(Error::setting(
                    "contrast",
                    format!("the two arms of the contrast {spec} must differ"),
                ));
            }
            return Ok((bi, ai));
        }
    }
    let named: Vec<&str> = spec.split('-').filter(|s| !s.is_empty()).collect();
    let unknown: Vec<&str> = named
        .iter()
        .copied()
        .filter(|n| arms.get(n).is_none())
        .collect();
    Err(Error::setting(
        "contrast",
        if spec.contains('-') && !unknown.is_empty() {
            format!(
                "unknown arm '{}' in the contrast {spec}; the panel's arms are: {}",
                unknown.join("', '"),
                known()
            )
        } else {
            format!(
                "expected B-A with two of the panel's arms ({}); got '{spec}'",
                known()
            )
        },
    ))
}

/// Sorts the rows so that each cell's rows (one per arm) are adjacent, refuses a cell given
/// twice, and reduces each cell to its outcome (for a contrast, B − A). An unpaired cell
/// (one arm only) is scored with `failure_score` for its missing arm when one is given;
/// else it marks its question with `drop_incomplete`, and otherwise is dropped alone (one
/// arm's failure costs one cell, not the question; docs/METHODS.md, "Unpaired cells").
/// Empties `raw.rows`.
///
/// # Errors
/// [`Error::Input`] naming the line of a duplicate cell.
pub(super) fn pair_cells(
    path: &Path,
    raw: &mut RawPanel,
    pair: Option<Pair>,
    drop_incomplete: bool,
    failure_score: Option<f64>,
) -> Result<Cells> {
    let mut rows = std::mem::take(&mut raw.rows);
    rows.sort_unstable_by_key(|r| (r.cell(), r.arm, r.line));
    for w in rows.windows(2) {
        if w[0].cell() == w[1].cell() && w[0].arm == w[1].arm {
            return Err(Error::input(
                path,
                Some(w[1].line as u64),
                format!(
                    "duplicate cell ({}); first seen on line {}",
                    raw.describe(&w[1]),
                    w[0].line
                ),
            ));
        }
    }
    let mut cells: Vec<Cell> = Vec::with_capacity(if pair.is_some() {
        rows.len() / 2
    } else {
        rows.len()
    });
    let mut unpaired: HashMap<(u32, u32), String> = HashMap::new();
    let mut unpaired_cells = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let row = rows[i];
        let Some((b, a)) = pair else {
            cells.push(Cell {
                key: row.cell(),
                line: row.line,
                value: row.value,
            });
            i += 1;
            continue;
        };
        let next = rows.get(i + 1).filter(|n| n.cell() == row.cell());
        if let Some(next) = next {
            // Sorted by arm id within a cell, so look each arm up explicitly.
            let (vb, va) = if row.arm == b {
                (row.value, next.value)
            } else {
                (next.value, row.value)
            };
            debug_assert!(row.arm == a || row.arm == b);
            cells.push(Cell {
                key: row.cell(),
                line: row.line.min(next.line),
                value: vb - va,
            });
            i += 2;
        } else {
            let missing = if row.arm == b { a } else { b };
            let msg = format!(
                "{}:{}: unpaired cell ({}): no row for arm '{}'",
                path.display(),
                row.line,
                raw.describe(&row),
                raw.arms.echo(missing)
            );
            if let Some(x) = failure_score {
                let value = if missing == b {
                    x - row.value
                } else {
                    row.value - x
                };
                cells.push(Cell {
                    key: row.cell(),
                    line: row.line,
                    value,
                });
                unpaired_cells.push((row.dataset, format!("{msg}; scored it {x}")));
            } else if drop_incomplete {
                unpaired.entry((row.dataset, row.question)).or_insert(msg);
            } else {
                unpaired_cells.push((row.dataset, format!("{msg}; dropped the cell")));
            }
            i += 1;
        }
    }
    Ok(Cells {
        cells,
        unpaired,
        unpaired_cells,
    })
}
