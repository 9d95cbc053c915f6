//! `consistency`: answer disagreement across repeated reads by group, and the ratio of
//! two groups' one-read SEs with its bootstrap interval
//! ([`crate::components::consistency::consistency`]).

use serde::Deserialize;

use super::{source_input, unpaired_json, Draw, Engines, Progress};
use crate::components::consistency::{groups_of, read_answers, ConsistencyReport};
use crate::document::{Figure, Finished, Inputs};
use crate::import::{unpaired_counts, Balance, PanelSettings};
use crate::panel::{LoadOptions, Source};
use crate::resample::ResampleSettings;
use crate::{Error, Result};

/// The settings of [`consistency`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ConsistencySettings {
    /// The grouping column (e.g. temperature).
    pub by: String,
    /// The column holding the answer text.
    pub answer_column: String,
    /// The two groups whose one-read SEs to compare, `A,B` (default: the first two in file
    /// order).
    pub compare: Option<String>,
    /// How each group's panel is read.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The bootstrap of the SE ratio.
    #[serde(flatten)]
    pub resample: ResampleSettings,
}

impl Default for ConsistencySettings {
    fn default() -> Self {
        ConsistencySettings {
            by: String::new(),
            answer_column: "answer".into(),
            compare: None,
            panel: PanelSettings::default(),
            resample: ResampleSettings::default(),
        }
    }
}

/// The consistency analysis of the reads file `reads` on `engines`; `draw` adds the figure.
///
/// # Errors
/// As [`consistency_report`].
pub fn consistency(
    reads: &Source,
    settings: &ConsistencySettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: Draw<'_, ConsistencyReport>,
) -> Result<Finished> {
    let (report, notes, unpaired) = analyse(reads, settings, engines, progress)?;
    let figure = match draw {
        Some(draw) => Some(Figure::new(draw(&report)?, reads.paths())),
        None => None,
    };
    let inputs = source_input(Inputs::new(), "reads", reads);
    let mut done = Finished::new("consistency", inputs, report)
        .with_figure(figure)
        .with_notes_after(notes);
    done.unpaired_cells = unpaired;
    Ok(done)
}

/// The report of [`consistency`], for a front end that shows it its own way (`stats
/// report`).
///
/// # Errors
/// [`Error::Setting`] for a `by` or `answer_column` that the column map gives a panel role,
/// a metric that is the `by` column, `compare` not naming two of the file's groups, and the
/// resampling settings' errors; [`Error::Usage`] for reads that are not a file; those of
/// reading the file and of the analysis.
pub fn consistency_report(
    reads: &Source,
    settings: &ConsistencySettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<ConsistencyReport> {
    analyse(reads, settings, engines, progress).map(|(report, _, _)| report)
}

/// The report, the notes on the groups' unpaired cells, and their counts for the envelope.
fn analyse(
    reads: &Source,
    settings: &ConsistencySettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<(ConsistencyReport, Vec<String>, Option<serde_json::Value>)> {
    let s = settings;
    if matches!(reads, Source::Files(paths) if paths.len() > 1) {
        return Err(Error::Usage(format!(
            "{}: the reads are one table (a CSV or JSONL file, or a data frame), not several \
             files",
            reads.name().display()
        )));
    }
    if s.by.is_empty() {
        return Err(Error::setting(
            "by",
            "give the grouping column (e.g. temperature)",
        ));
    }
    s.panel.check()?;
    let columns = s.panel.columns.clone().unwrap_or_default();
    // `by` and `answer_column` name the file's own columns; one that the column map also
    // gives a role would be renamed away before the groups are read.
    for (setting, column) in [("by", &s.by), ("answer_column", &s.answer_column)] {
        if let Some(role) = columns.role_of(column) {
            return Err(Error::setting(
                setting,
                format!(
                    "{column}: the column map gives that column the role {role}; group by, \
                     and read answers from, a column that plays no panel role"
                ),
            ));
        }
    }
    let resampling = s.resample.resampling()?;
    let rows = read_answers(reads, &s.by, &s.answer_column, &columns)?;
    if s.panel.metric.as_deref() == Some(s.by.as_str()) {
        return Err(Error::setting(
            "metric",
            format!(
                "{0} is the by column: the score is constant within each group, so its \
                 one-read SE is 0 and the SE ratio is 0/0; choose a score column",
                s.by
            ),
        ));
    }
    let mut panels = Vec::new();
    let mut notes = Vec::new();
    let mut unpaired = (0, 0);
    for g in compared(s, groups_of(&rows))? {
        // The panel settings as every panel analysis reads them (columns, weights, …),
        // keeping the group's rows.
        let opts = LoadOptions {
            filter: Some((s.by.clone(), g.clone())),
            ..s.panel.load_options(Balance::Required)
        };
        let panel = crate::import::load_source(reads, &opts, &s.panel.import_options())?;
        for st in &panel.strata {
            notes.extend(
                st.unpaired_cells
                    .iter()
                    .map(|m| format!("note: {}: {m}", st.name)),
            );
        }
        let (d, c) = unpaired_counts(&panel);
        unpaired = (unpaired.0 + d, unpaired.1 + c);
        panels.push((g, panel));
    }
    let questions: u64 = panels
        .iter()
        .flat_map(|p| p.1.strata.iter())
        .map(|s| s.q() as u64)
        .sum();
    let reps = u64::from(resampling.replicates);
    // A failure after loading comes after the groups' notes, as a success would.
    let noted = |e: crate::Error| e.noted(notes.clone());
    let engine = engines
        .resampler(s.resample.backend, 2 * reps * questions)
        .map_err(noted)?;
    let report = crate::components::consistency::consistency(
        &s.by,
        &rows,
        &panels,
        &resampling,
        engine.as_ref(),
        &|d| progress("consistency", d, 2 * reps),
    )
    .map_err(noted)?;
    Ok((report, notes, unpaired_json(unpaired)))
}

/// The groups `compare` names (each must be among `groups`), or every group.
fn compared(s: &ConsistencySettings, groups: Vec<String>) -> Result<Vec<String>> {
    let Some(text) = &s.compare else {
        return Ok(groups);
    };
    let v: Vec<String> = text.split(',').map(|x| x.trim().to_string()).collect();
    if v.len() != 2 {
        return Err(Error::setting(
            "compare",
            format!("'{text}': expected two groups A,B"),
        ));
    }
    if let Some(g) = v.iter().find(|g| !groups.contains(g)) {
        return Err(Error::setting(
            "compare",
            format!(
                "no group '{g}' in column '{}' (groups: {})",
                s.by,
                groups.join(", ")
            ),
        ));
    }
    Ok(v)
}
