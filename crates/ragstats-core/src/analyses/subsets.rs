//! `subsets`: the measured SE of every trajectory × read subset of a depth panel beside the
//! audit's nested and Q-only forecasts, with the MAE advantage and its bootstrap interval
//! ([`crate::allocation::subsets::analyse_subsets`]).

use serde::Deserialize;

use super::{source_input, unpaired_cells, Draw, Engines, Progress};
use crate::allocation::subsets::{analyse_subsets, SubsetAnalysis, SubsetJob, SubsetStudy};
use crate::components::forecast::Audit;
use crate::components::variance::analyse_panel;
use crate::document::{Figure, Finished, Inputs};
use crate::import::{Balance, PanelSettings};
use crate::panel::Source;
use crate::resample::ResampleSettings;
use crate::Result;

/// The settings of [`subsets`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct SubsetsSettings {
    /// How the depth panel (and an audit panel) is read.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The bootstrap of the MAE advantage.
    #[serde(flatten)]
    pub resample: ResampleSettings,
    /// The fewest trajectories a configuration has (1 to the depth panel's T).
    pub min_trajectories: usize,
    /// Also list every subset's measured SE.
    pub per_subset: bool,
}

impl Default for SubsetsSettings {
    fn default() -> Self {
        SubsetsSettings {
            panel: PanelSettings::default(),
            resample: ResampleSettings::default(),
            min_trajectories: 1,
            per_subset: false,
        }
    }
}

/// The audit `source` holds: a components document (`variance --format json`), or a
/// panel read with `settings` and fitted.
///
/// # Errors
/// Those of reading the document or loading and fitting the panel.
pub fn audit_of(source: &Source, settings: &PanelSettings) -> Result<Audit> {
    if let Source::Files(paths) = source {
        if let [one] = paths.as_slice() {
            let text = crate::io::read_text(one)?;
            let is_components = serde_json::from_str::<serde_json::Value>(&text)
                .map(|v| v.get("strata").is_some())
                .unwrap_or(false);
            if is_components {
                return Audit::from_variance_json(&text, one);
            }
        }
    }
    let panel = settings.load(source, Balance::Required)?;
    Ok(Audit::from_report(&analyse_panel(&panel)?))
}

/// The subset study of the depth panel `panel` against `audit` on `engines`; `draw` adds
/// the figure.
///
/// # Errors
/// Those of loading the inputs, of the resampling settings, and of the study.
pub fn subsets(
    panel: &Source,
    audit: &Source,
    settings: &SubsetsSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: Draw<'_, SubsetAnalysis>,
) -> Result<Finished> {
    let resampling = settings.resample.resampling()?;
    let depth = settings.panel.load(panel, Balance::Required)?;
    // A failure after loading comes after the loading notes, as a success would.
    let noted = |e: crate::Error| e.noted(settings.panel.loading_notes(&depth, false));
    let audit_read = audit_of(audit, &settings.panel).map_err(noted)?;
    // The depth panel's weights (resolved on its strata) combine both the measured subset
    // SEs and the audit's forecasts.
    let study = SubsetStudy::weighted(
        &depth.strata,
        &depth.weights,
        &audit_read,
        settings.min_trajectories,
    )
    .map_err(noted)?;
    let units = study.work_units(u64::from(resampling.replicates));
    let questions: u64 = depth.strata.iter().map(|s| s.q() as u64).sum();
    let engine = engines
        .resampler(settings.resample.backend, units * questions)
        .map_err(noted)?;
    let job = SubsetJob {
        resampling,
        per_subset: settings.per_subset,
    };
    let analysis = analyse_subsets(&depth.outcome, &study, &job, engine.as_ref(), &|d| {
        progress("subsets", d, units)
    })
    .map_err(noted)?;
    let figure = match draw {
        Some(draw) => {
            let files: Vec<_> = panel.paths().iter().chain(audit.paths()).cloned().collect();
            Some(Figure::new(draw(&analysis)?, &files))
        }
        None => None,
    };
    let notes = analysis.report.notes.clone();
    let inputs = source_input(source_input(Inputs::new(), "panel", panel), "audit", audit);
    let mut done = Finished::new("subsets", inputs, analysis)
        .with_figure(figure)
        .with_notes_after(settings.panel.loading_notes(&depth, false))
        .with_csv_notes(&notes);
    done.unpaired_cells = unpaired_cells(&depth);
    Ok(done)
}
