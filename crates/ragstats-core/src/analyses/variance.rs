//! `variance`: nested variance components per stratum, pooled, and the combined estimate
//! with its interval ([`crate::components::variance::variance_of_panel`]).

use serde::Deserialize;

use super::LabelSettings;
use super::{judged, source_input, source_input_opt, unpaired_cells, unpaired_json, Draw};
use crate::components::variance::{variance_of_panel, PanelVariance};
use crate::document::{Figure, Finished, Inputs};
use crate::import::{by_selector, unpaired_counts, Balance, By, PanelSettings};
use crate::judges::estimate::JudgedVariance;
use crate::panel::Source;
use crate::{Error, Result};

/// The settings of [`variance`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct VarianceSettings {
    /// How the panel is read.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// Report each selector of the panel's `selector` column, then their average.
    pub by: Option<By>,
    /// With labels: their score column and the judge's weight λ.
    #[serde(flatten)]
    pub judged: LabelSettings,
}

/// The variance analysis of the panel `panel` holds: ANOVA for balanced strata, REML for
/// unbalanced ones (kept nested), with the loading notes after the output; with
/// `settings.by`, one section per selector. `draw` adds the figure of the components'
/// shares.
///
/// With `labels` (human scores of some of the panel's cells, the panel's metric being a
/// judge's), the result is the PPI++ estimate of the human-scale mean
/// ([`crate::judges::estimate`]) above the judge's components.
///
/// ```
/// use ragstats_core::analyses::{variance, VarianceSettings};
/// use ragstats_core::import::PanelSettings;
/// use ragstats_core::panel::Source;
///
/// let panel = Source::file(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/demo/panel.csv"));
/// let settings = VarianceSettings {
///     panel: PanelSettings { contrast: Some("adaptive-open".into()), ..Default::default() },
///     ..Default::default()
/// };
/// let done = variance(&panel, None, &settings, None)?;
/// // Python's float sums over the CSV give 0.010275721225710013 (tests/python/test_variance.py).
/// assert!((done.document()["estimate"].as_f64().unwrap() - 0.010275721225710013).abs() < 1e-15);
/// assert!(done.result.text().contains("adaptive-open"));
/// # Ok::<(), ragstats_core::Error>(())
/// ```
///
/// # Errors
/// Those of loading the panel and of the analysis; [`Error::Setting`] for a figure asked
/// of sections (one figure shows one analysis), labels with `by` selector, and label
/// settings without labels; those of reading and pairing the labels.
pub fn variance(
    panel: &Source,
    labels: Option<&Source>,
    settings: &VarianceSettings,
    draw: Draw<'_, PanelVariance>,
) -> Result<Finished> {
    let inputs = source_input_opt(
        source_input(Inputs::new(), "panel", panel),
        "labels",
        labels,
    );
    if labels.is_none() {
        if settings.judged.ppi_lambda.is_some() {
            return Err(Error::setting(
                "ppi_lambda",
                "weighs the judge against labels: give labels",
            ));
        }
        if settings.judged.label_metric.is_some() {
            return Err(Error::setting(
                "label_metric",
                "names the labels' score column: give labels",
            ));
        }
    }
    if settings.by == Some(By::Selector) {
        if labels.is_some() {
            return Err(Error::setting(
                "by",
                "selector cannot be used with labels: choose one selector (labels score one \
                 outcome)",
            ));
        }
        if draw.is_some() {
            return Err(Error::setting(
                "plot",
                "draws one analysis: choose one selector instead of by selector",
            ));
        }
        let mut notes = Vec::new();
        let mut unpaired = (0, 0);
        let sections = by_selector(panel, &settings.panel, |one| {
            let loaded = one.load(panel, Balance::Fitted)?;
            notes.extend(one.loading_notes(&loaded, true));
            let (d, s) = unpaired_counts(&loaded);
            unpaired = (unpaired.0 + d, unpaired.1 + s);
            let report = variance_of_panel(&loaded)
                .map_err(|e| e.noted(one.loading_notes(&loaded, true)))?;
            Ok::<_, Error>(Box::new(report) as _)
        })?;
        let mut done = Finished::new("variance", inputs, sections).with_notes_after(notes);
        done.unpaired_cells = unpaired_json(unpaired);
        return Ok(done);
    }
    let loaded = settings.panel.load(panel, Balance::Fitted)?;
    // A fit that refuses what loading left (the questions a contrast's dropped cells leave)
    // is read with loading's notes.
    let report = variance_of_panel(&loaded)
        .map_err(|e| e.noted(settings.panel.loading_notes(&loaded, true)))?;
    let figure = match draw {
        Some(draw) => Some(Figure::new(draw(&report)?, panel.paths())),
        None => None,
    };
    if let Some(labels) = labels {
        let ppi = judged(&loaded, labels, &settings.panel, &settings.judged)
            .map_err(|e| e.noted(settings.panel.loading_notes(&loaded, true)))?;
        let mut done = Finished::new("variance", inputs, JudgedVariance { ppi, judge: report })
            .with_figure(figure)
            .with_notes_after(settings.panel.loading_notes(&loaded, true));
        done.unpaired_cells = unpaired_cells(&loaded);
        return Ok(done);
    }
    let mut done = Finished::new("variance", inputs, report)
        .with_figure(figure)
        .with_notes_after(settings.panel.loading_notes(&loaded, true));
    done.unpaired_cells = unpaired_cells(&loaded);
    Ok(done)
}
