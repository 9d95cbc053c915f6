//! From the rows a loader read to a validated [`Panel`]: choose the arms
//! ([`super::pairing`]) and the selector ([`super::selectors`]), pair the cells, then group
//! them into strata ([`super::strata`], [`super::balance`]).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::balance::{fill_stratum, LabelTexts, Policy};
use super::options::LoadOptions;
use super::pairing::{pair_cells, select_arms};
use super::raw::RawPanel;
use super::selectors::{choose_selector, SelectorChoice};
use super::strata::{group, labels};
use super::Panel;
use crate::{Error, Result};

/// The panel of the rows `raw` read from `path` (a file, or the name of an in-memory table)
/// with score column `metric`: arms, selector, paired cells, strata.
pub(super) fn assemble(
    path: &Path,
    mut raw: RawPanel,
    metric: String,
    opts: &LoadOptions,
) -> Result<Panel> {
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
    if opts.failure_score.is_some() && pair.is_none() {
        return Err(Error::setting(
            "failure_score",
            "scores a contrast's missing arm, so it needs a contrast B-A",
        ));
    }
    if let Some(x) = opts.failure_score.filter(|x| !x.is_finite()) {
        return Err(Error::setting(
            "failure_score",
            format!("{x} is not a finite score"),
        ));
    }
    // Pairing empties the rows: each question's cluster is taken first.
    let of = super::clusters::question_clusters(&raw);
    let mut cells = pair_cells(
        path,
        &mut raw,
        pair,
        opts.drop_incomplete,
        opts.failure_score,
    )?;
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
    let mut strata = strata.into_iter().collect::<Result<Vec<_>>>()?;
    for s in &mut strata {
        s.clusters = super::clusters::stratum_clusters(&raw, &of, &s.name, &s.questions);
    }
    let names: Vec<&str> = strata.iter().map(|s| s.name.as_str()).collect();
    let questions: Vec<usize> = strata.iter().map(|s| s.q()).collect();
    let weights = opts.weights.resolve(path, &names, &questions)?;
    Ok(Panel {
        source: PathBuf::from(path),
        metric,
        outcome,
        selector: match &opts.selector {
            Some(SelectorChoice::One(name)) => Some(name.clone()),
            Some(SelectorChoice::Average) => None,
            None if raw.selectors.len() == 1 => Some(raw.selectors.name(0).to_string()),
            None => None,
        },
        selectors: raw.selectors.to_vec(),
        strata,
        notes: raw.notes,
        weights,
    })
}
