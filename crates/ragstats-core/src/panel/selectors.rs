//! Selectors: a panel may carry a `selector` column naming the passage selector (e.g. RRF,
//! RR) that produced each row, several selectors being run on the same trajectories and
//! reads. Rows of different selectors are never extra reads: the outcome is either one
//! selector's rows (`--selector NAME`) or, per question × trajectory × read cell (and arm),
//! the mean over all selectors (`--selector average`, the default when the panel has more
//! than one selector). A contrast of arms is then taken on these cell means, so it is the
//! selector-average contrast.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use super::raw::{RawPanel, RawRow, NO_SELECTOR};
use crate::io::{clip, clip_list};
use crate::{Error, Result};

/// Questions with a cell lacking a selector, keyed (dataset, question), with the reason.
type Incomplete = HashMap<(u32, u32), String>;

/// Which selector's rows form the outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectorChoice {
    /// Only the rows of this selector.
    One(String),
    /// Per cell, the mean over every selector of the panel (each cell must have them all).
    Average,
}

impl SelectorChoice {
    /// The word that asks for the selector average on the command line.
    pub const AVERAGE: &'static str = "average";
}

impl FromStr for SelectorChoice {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "" => Err("expected a selector name or 'average'".into()),
            Self::AVERAGE => Ok(SelectorChoice::Average),
            name => Ok(SelectorChoice::One(name.to_string())),
        }
    }
}

/// Applies the selector choice to `raw.rows`: keeps one selector's rows, or replaces each
/// (cell, arm)'s rows by their mean over selectors (the default when the panel has more than
/// one selector). Returns the outcome with the choice appended (`f1; selector rr`,
/// `f1; average over selectors rrf, rr`; unchanged when there is nothing to choose) and,
/// with `drop_incomplete`, the questions with a cell lacking a selector, keyed (dataset,
/// question), with the reason.
///
/// # Errors
/// [`Error::Input`] for a row without a selector in a panel with selectors, a selector given
/// twice for one cell and arm, a cell lacking a selector (unless `drop_incomplete`), an
/// unknown selector, `average` when a selector is itself named so, or a choice on a panel
/// without a `selector` column.
pub(super) fn choose_selector(
    path: &Path,
    raw: &mut RawPanel,
    outcome: String,
    choice: Option<&SelectorChoice>,
    drop_incomplete: bool,
) -> Result<(String, Incomplete)> {
    let none = HashMap::new();
    if raw.selectors.is_empty() {
        return match choice {
            None => Ok((outcome, none)),
            Some(_) => Err(Error::setting(
                "selector",
                format!(
                    "choosing a selector needs a 'selector' column, and {} has none",
                    path.display()
                ),
            )),
        };
    }
    if let Some(r) = raw.rows.iter().find(|r| r.selector == NO_SELECTOR) {
        return Err(Error::input(
            path,
            Some(r.line as u64),
            "empty 'selector' value",
        ));
    }
    match choice {
        Some(SelectorChoice::One(name)) => {
            let id = raw.selectors.get(name).ok_or_else(|| {
                Error::input(
                    path,
                    None,
                    format!(
                        "unknown selector '{}'; the panel's selectors are: {} (or 'average')",
                        clip(name),
                        clip_list(raw.selectors.names())
                    ),
                )
            })?;
            raw.rows.retain(|r| r.selector == id);
            Ok((format!("{outcome}; selector {name}"), none))
        }
        None if raw.selectors.len() == 1 => Ok((outcome, none)),
        Some(SelectorChoice::Average) | None => {
            if raw.selectors.get(SelectorChoice::AVERAGE).is_some() {
                return Err(Error::input(
                    path,
                    None,
                    "the panel has a selector named 'average', so the selector average is ambiguous; \
                     rename it or choose another selector",
                ));
            }
            let names: Vec<&str> = raw.selectors.names().collect();
            let label = format!("{outcome}; average over selectors {}", names.join(", "));
            let incomplete = average(path, raw, drop_incomplete)?;
            Ok((label, incomplete))
        }
    }
}

/// Replaces each (cell, arm)'s rows by one row holding their mean over selectors (first
/// line, no selector). A cell lacking a selector is an error, or with `drop_incomplete`
/// keeps the mean of the selectors it has and marks its question.
fn average(path: &Path, raw: &mut RawPanel, drop_incomplete: bool) -> Result<Incomplete> {
    let n = raw.selectors.len();
    let mut rows = std::mem::take(&mut raw.rows);
    rows.sort_unstable_by_key(|r| (r.cell(), r.arm, r.selector, r.line));
    let mut out: Vec<RawRow> = Vec::with_capacity(rows.len() / n);
    let mut incomplete = HashMap::new();
    let mut i = 0;
    while i < rows.len() {
        let first = rows[i];
        let mut j = i + 1;
        while j < rows.len() && rows[j].cell() == first.cell() && rows[j].arm == first.arm {
            if rows[j].selector == rows[j - 1].selector {
                return Err(Error::input(
                    path,
                    Some(rows[j].line as u64),
                    format!(
                        "duplicate cell ({}); first seen on line {}",
                        raw.describe(&rows[j]),
                        rows[j - 1].line
                    ),
                ));
            }
            j += 1;
        }
        let group = &rows[i..j];
        // Summed in selector order, so the mean does not depend on the file's row order.
        let mean = group.iter().map(|r| r.value).sum::<f64>() / group.len() as f64;
        let row = RawRow {
            selector: NO_SELECTOR,
            line: group.iter().map(|r| r.line).min().expect("non-empty"),
            value: mean,
            ..first
        };
        if group.len() < n {
            let missing: Vec<&str> = (0..n as u32)
                .filter(|s| !group.iter().any(|r| r.selector == *s))
                .map(|s| raw.selectors.name(s))
                .collect();
            let msg = format!(
                "cell ({}) has no row for selector '{}'; the selector average needs every \
                 selector in every cell",
                raw.describe(&row),
                clip(&missing.join("', '"))
            );
            if !drop_incomplete {
                return Err(Error::input(
                    path,
                    Some(row.line as u64),
                    format!("{msg} (choose one selector, or drop incomplete questions)"),
                ));
            }
            incomplete.entry((row.dataset, row.question)).or_insert(msg);
        }
        out.push(row);
        i = j;
    }
    raw.rows = out;
    Ok(incomplete)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_name_or_average() {
        assert_eq!(
            "average".parse::<SelectorChoice>(),
            Ok(SelectorChoice::Average)
        );
        assert_eq!(
            " rrf ".parse::<SelectorChoice>(),
            Ok(SelectorChoice::One("rrf".into()))
        );
        assert!("".parse::<SelectorChoice>().is_err());
    }
}
