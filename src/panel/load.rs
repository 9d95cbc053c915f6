//! Loading a panel file into a validated [`Panel`]: read the rows ([`super::read`]), choose
//! the arms ([`super::pairing`]) and the selector ([`super::selectors`]), pair the cells,
//! then group them into strata
//! ([`super::strata`], [`super::balance`]).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::balance::{fill_stratum, LabelTexts, Policy};
use super::pairing::{pair_cells, select_arms};
use super::read::read_rows;
use super::selectors::{choose_selector, SelectorChoice};
use super::strata::{group, labels};
use super::Panel;
use crate::{Error, Result};

/// How to read a panel.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Score column; default `f1` if present, else the only non-key column.
    pub metric: Option<String>,
    /// `B-A`: the outcome is score(B) − score(A), paired on (dataset, question, trajectory, read).
    pub contrast: Option<String>,
    /// Keep only this arm (when the panel has several and no contrast is asked for).
    pub arm: Option<String>,
    /// Drop questions that differ from their stratum's design (missing, extra or unpaired
    /// cells) so every stratum is balanced; each dropped question is listed in the stratum.
    pub drop_incomplete: bool,
    /// Keep an unbalanced stratum nested (for REML) instead of refusing it; its notes name
    /// the questions that differ. Ignored with `drop_incomplete`.
    pub allow_unbalanced: bool,
    /// Keep only rows whose column (first) has this value (second), e.g. one temperature.
    pub filter: Option<(String, String)>,
    /// One selector's rows, or their mean per cell; `None`: the mean when the panel has
    /// several selectors (see [`SelectorChoice`]).
    pub selector: Option<SelectorChoice>,
}

/// Loads a panel from CSV (`.csv`, or anything not `.jsonl`/`.json`) or JSONL.
///
/// # Errors
/// [`Error::Input`] naming the file, line and problem for: a missing column, a non-numeric
/// or non-finite score, a duplicate cell, an unpaired arm cell, an unknown arm or selector,
/// a cell lacking one of the selectors to be averaged, an unbalanced question (unless `drop_incomplete` or `allow_unbalanced`); [`Error::Io`] when the file cannot be read.
pub fn load_panel(path: &Path, opts: &LoadOptions) -> Result<Panel> {
    let (mut raw, metric) = read_rows(path, opts)?;
    if raw.rows.is_empty() {
        return Err(Error::input(path, None, "the panel has no rows"));
    }
    let (outcome, pair) = select_arms(path, &mut raw, &metric, opts)?;
    let (outcome, incomplete) = choose_selector(
        path,
        &mut raw,
        outcome,
        opts.selector.as_ref(),
        opts.drop_incomplete,
    )?;
    let mut cells = pair_cells(path, &mut raw, pair, opts.drop_incomplete)?;
    for (question, why) in incomplete {
        cells.unpaired.entry(question).or_insert(why);
    }
    let texts = LabelTexts::new(&raw);
    let policy = Policy {
        drop_incomplete: opts.drop_incomplete,
        allow_unbalanced: opts.allow_unbalanced,
    };
    // Strata are filled independently, in parallel; the first failing one (in file order)
    // is the error reported, as when they were filled one after another.
    let strata: Vec<Result<_>> = group(&cells.cells)
        .into_par_iter()
        .map(|(d, groups)| {
            let labels = labels(&raw, &cells.cells, &groups);
            fill_stratum(path, &raw, d, &groups, &cells, &labels, &texts, &policy)
        })
        .collect();
    let strata = strata.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(Panel {
        source: PathBuf::from(path),
        metric,
        outcome,
        selector: match &opts.selector {
            Some(SelectorChoice::One(name)) => Some(name.clone()),
            Some(SelectorChoice::Average) => None,
            None if raw.selectors.names.len() == 1 => raw.selectors.names.first().cloned(),
            None => None,
        },
        selectors: raw.selectors.names,
        strata,
    })
}
