//! `forecast`: nested D-study and Q-only SE forecasts of allocations Q:T:R from an audit
//! (a panel fitted as the variance analysis fits it, or its components document), and
//! measured panels' SEs beside their designs' forecasts
//! ([`crate::components::forecast::forecast_designs`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{audit_input, source_input, unpaired_json, AuditInput};
use crate::components::forecast::{
    forecast_designs, Audit, DesignSpec, ForecastError, ForecastJob, ForecastReport, MeasuredPanel,
};
use crate::components::variance::analyse_panel;
use crate::document::{Figure, Finished, Inputs};
use crate::import::{unpaired_counts, Balance, PanelSettings};
use crate::io::from_text::one_or_many;
use crate::panel::Source;
use crate::{Error, Result};

/// The settings of [`forecast`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ForecastSettings {
    /// How the audit panel (and each measured panel) is read; a components document's
    /// strata are weighted by `weights` when given.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The allocations to forecast, in this order: `Q:T:R` (Q split over the strata in the
    /// audit's proportions) or per stratum, `hotpotqa=300,musique=146:2:1`; with a clustered
    /// audit also `GxM:T:R`, G clusters of M questions (G split in the audit's proportions).
    #[serde(deserialize_with = "one_or_many")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub design: Vec<String>,
    /// Measured panels, `DESIGN=PANEL` (or a bare panel file, matched to the design with its
    /// shape): each one's SE beside its design's forecasts.
    #[serde(deserialize_with = "one_or_many")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub measured: Vec<String>,
    /// Every stratum's nested forecast from the pooled (dataset-adjusted) components.
    pub pooled: bool,
}

/// Draws the figure of [`forecast`] from the audit and the report.
pub type DrawForecast<'a> = Option<&'a dyn Fn(&Audit, &ForecastReport) -> Result<String>>;

/// The forecasts of `settings.design` from the audit panel `audit` (fitted by REML where
/// a stratum is unbalanced) or the components document `components` (one of the two), with
/// each measured panel's SE beside its design's; `draw` adds the figure.
///
/// # Errors
/// [`Error::Usage`] without an audit or with both; those of loading the inputs; a design
/// that does not parse or cannot be forecast from this audit (the message names it); a
/// measured panel whose shape is not its design's ([`Error::Setting`] `measured`).
pub fn forecast(
    audit: Option<&Source>,
    components: Option<&Source>,
    settings: &ForecastSettings,
    draw: DrawForecast<'_>,
) -> Result<Finished> {
    let mut notes = Vec::new();
    let mut unpaired = (0, 0);
    let mut count = |panel: &crate::panel::Panel| {
        let (d, s) = unpaired_counts(panel);
        unpaired = (unpaired.0 + d, unpaired.1 + s);
    };
    let (read, source) = match audit_input(audit, components)? {
        AuditInput::Panel(source) => {
            let panel = settings.panel.load(source, Balance::Fitted)?;
            notes.extend(settings.panel.loading_notes(&panel, false));
            count(&panel);
            (Audit::from_report(&analyse_panel(&panel)?), source)
        }
        AuditInput::Components(source) => (components_of(source, &settings.panel)?, source),
    };
    let job = ForecastJob {
        designs: settings.design.clone(),
        pooled: settings.pooled,
    };
    let mut report = forecast_designs(&read, &job).map_err(flat)?;
    for m in &settings.measured {
        // DESIGN=PANEL splits at the last '=' (a per-stratum design holds '=' itself); a
        // left side that is not a design means the whole value is a path.
        let (design, path) = match m.rsplit_once('=') {
            Some((d, p)) if d.parse::<DesignSpec>().is_ok() => (Some(d), Path::new(p)),
            _ => (None, Path::new(m.as_str())),
        };
        let panel = settings
            .panel
            .load(&Source::file(path), Balance::Required)?;
        notes.extend(settings.panel.loading_notes(&panel, false));
        count(&panel);
        let measured = MeasuredPanel {
            label: m,
            design,
            path,
            panel: &panel,
        };
        report.compare_measured(&read, &measured).map_err(flat)?;
    }
    let figure = match draw {
        Some(draw) => {
            let files: Vec<PathBuf> = report
                .designs
                .iter()
                .filter_map(|r| r.measured_panel.clone())
                .chain(source.paths().iter().cloned())
                .collect();
            Some(Figure::new(draw(&read, &report)?, &files))
        }
        None => None,
    };
    let report_notes = report.notes.clone();
    let inputs = match (audit, components) {
        (Some(a), _) => source_input(Inputs::new(), "audit", a),
        (None, Some(c)) => source_input(Inputs::new(), "components", c),
        (None, None) => Inputs::new(),
    };
    let mut done = Finished::new("forecast", inputs, report)
        .with_figure(figure)
        .with_notes_after(notes)
        .with_csv_notes(&report_notes);
    done.unpaired_cells = unpaired_json(unpaired);
    Ok(done)
}

/// The audit of a components document `source` (a file, or one record holding the
/// document), its strata weighted by `settings.weights` when given (else the document's own
/// weights stand).
pub(super) fn components_of(source: &Source, settings: &PanelSettings) -> Result<Audit> {
    let audit = match source {
        Source::Files(paths) if paths.len() == 1 => Audit::read_components(&paths[0])?,
        Source::Records { name, rows } if rows.len() == 1 => {
            let text = serde_json::Value::Object(rows[0].clone()).to_string();
            Audit::from_variance_json(&text, Path::new(name))?
        }
        _ => {
            return Err(Error::Usage(format!(
                "{}: a components document is one file or one mapping (the variance \
                 analysis's JSON report)",
                source.name().display()
            )))
        }
    };
    match &settings.weights {
        Some(w) => audit.weighted(w, source.name()),
        None => Ok(audit),
    }
}

/// A forecast's error as one library error: a design that cannot be forecast is named
/// before why.
fn flat(e: ForecastError) -> Error {
    match e {
        ForecastError::Input(e) => e,
        ForecastError::Design { design, source } => match source {
            Error::Setting { setting, msg } => Error::Setting {
                setting,
                msg: format!("design {design}: {msg}"),
            },
            other => Error::Usage(format!("design {design}: {other}")),
        },
    }
}
