//! The MCQ analyses that read items and annotations: `mcq validate` (every format rule of an
//! items file) and `mcq agree` (annotator agreement and majority-vote gold).

use std::path::PathBuf;

use serde::Deserialize;

use super::source_input;
use crate::document::{Finished, Inputs};
use crate::mcq::agree::{agree, read_annotations_from, AgreeSettings};
use crate::mcq::validate::{load_items_from, read_items_from, validation_report};
use crate::panel::Source;
use crate::Result;

/// Every format rule of the items `items` holds, all violations reported (the result's
/// exit code is 2 when there are any), with a summary line after the output.
///
/// # Errors
/// Those of reading the items (rule violations are the report, not errors).
pub fn mcq_validate(items: &Source) -> Result<Finished> {
    let file = read_items_from(items)?;
    let report = validation_report(items.name(), &file);
    let notes = match report.violations.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "{}: {} violation(s) on {} line(s); {} of {} line(s) valid",
            items.name().display(),
            report.violations.len(),
            report.lines_with_violations(),
            report.valid_items,
            report.lines
        )],
    };
    let inputs = source_input(Inputs::new(), "items", items);
    Ok(Finished::new("mcq validate", inputs, report).with_notes_after(notes))
}

/// The settings of [`mcq_agree`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct McqAgreeSettings {
    /// Gold by option instead of the majority answer set.
    pub per_option: bool,
    /// Write the majority-vote gold answers (JSON lines) to this file.
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub gold_out: Option<PathBuf>,
}

/// Annotator agreement (pairwise Jaccard) of the annotations `annotations` holds and their
/// majority-vote gold, checked against `items` when given; the gold goes to `gold_out`
/// (atomically; never over an input).
///
/// # Errors
/// Those of reading the inputs and writing the gold; an input error when `gold_out` names
/// an input.
pub fn mcq_agree(
    annotations: &Source,
    items: Option<&Source>,
    settings: &McqAgreeSettings,
) -> Result<Finished> {
    if let Some(gold) = &settings.gold_out {
        let mut inputs: Vec<(&str, &std::path::Path)> = annotations
            .paths()
            .iter()
            .map(|p| ("annotations file", p.as_path()))
            .collect();
        inputs.extend(
            items
                .iter()
                .flat_map(|s| s.paths())
                .map(|p| ("items file", p.as_path())),
        );
        crate::io::refuse_overwriting_inputs(&[("gold output", gold)], &inputs)?;
    }
    let items_read = items.map(load_items_from).transpose()?;
    let anns = read_annotations_from(annotations, items_read.as_deref())?;
    let report = agree(
        &anns,
        items_read.as_deref(),
        &AgreeSettings {
            per_option: settings.per_option,
        },
    );
    if let Some(p) = &settings.gold_out {
        let mut s = String::new();
        for g in &report.gold {
            // Through a `Value`: its keys are sorted, as the file has always had them.
            let v = serde_json::to_value(g).map_err(|e| crate::Error::Data(e.to_string()))?;
            s.push_str(&v.to_string());
            s.push('\n');
        }
        crate::io::write_atomic(p, |w| std::io::Write::write_all(w, s.as_bytes()))?;
    }
    let mut inputs = source_input(Inputs::new(), "annotations", annotations);
    if let Some(items) = items {
        inputs = source_input(inputs, "items", items);
    }
    Ok(Finished::new("mcq agree", inputs, report))
}
