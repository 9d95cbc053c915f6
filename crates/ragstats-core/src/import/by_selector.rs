//! One result per selector ([`by_selector`]): an analysis run once for each value of the
//! panel's `selector` column, then for their average, shown as [`Sections`].

use serde::Deserialize;

use super::PanelSettings;
use crate::document::{Rendered, Sections};
use crate::panel::{SelectorChoice, Source};
use crate::{Error, Result};

/// Report one section per value of a column (the `by` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// One section per selector of the panel's `selector` column, then their average.
    Selector,
}

/// The values of the `selector` column of `source` in order of first appearance (empty
/// values skipped; none when there is no such column).
///
/// # Errors
/// Those of reading the file or the table.
pub fn selector_names(source: &Source) -> Result<Vec<String>> {
    let values: Vec<Option<String>> = match source {
        Source::Table { name, table } => table
            .json_rows()
            .map_err(|m| Error::input(name, None, m))?
            .into_iter()
            .map(|r| {
                r.get("selector")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            .collect(),
        Source::Records { .. } => return Err(source.records_refused()),
        Source::Files(_) => crate::panel::records::read_records(source.name(), &["selector"], &[])?
            .into_iter()
            .map(|r| r.fields.into_iter().next().flatten())
            .collect(),
    };
    let mut names: Vec<String> = Vec::new();
    for s in values.into_iter().flatten() {
        let s = s.trim().to_string();
        if !s.is_empty() && !names.contains(&s) {
            names.push(s);
        }
    }
    Ok(names)
}

/// The sections of `by selector` for the selectors `names`: each one, then their average
/// when there are several.
pub fn selector_choices(names: &[String]) -> Vec<(String, SelectorChoice)> {
    let mut choices: Vec<(String, SelectorChoice)> = names
        .iter()
        .map(|n| (n.clone(), SelectorChoice::One(n.clone())))
        .collect();
    if names.len() > 1 {
        choices.push((SelectorChoice::AVERAGE.into(), SelectorChoice::Average));
    }
    choices
}

/// `run` once per selector of `source` and once for their average (when there are
/// several), each with `settings`' selector set accordingly, as sections under `selector`.
///
/// # Errors
/// [`Error::Setting`] when `settings` already chooses a selector, or the panel has no
/// `selector` column; any run's error.
pub fn by_selector<E: From<Error>>(
    source: &Source,
    settings: &PanelSettings,
    mut run: impl FnMut(PanelSettings) -> std::result::Result<Box<dyn Rendered>, E>,
) -> std::result::Result<Sections, E> {
    if settings.selector.is_some() {
        return Err(E::from(Error::setting(
            "selector",
            "cannot be used with by selector, which reports every selector; drop it",
        )));
    }
    let names = selector_names(source)?;
    if names.is_empty() {
        return Err(E::from(Error::setting(
            "by",
            format!(
                "{} has no 'selector' column, so there are no selectors to report",
                source.name().display()
            ),
        )));
    }
    let mut items = Vec::new();
    for (name, choice) in selector_choices(&names) {
        let one = PanelSettings {
            selector: Some(choice),
            ..settings.clone()
        };
        items.push((name, run(one)?));
    }
    Ok(Sections {
        by: "selector".into(),
        items,
    })
}
