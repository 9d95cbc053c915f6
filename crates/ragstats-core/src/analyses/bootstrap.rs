//! `bootstrap`: the stratified question bootstrap of the combined estimate, with optional
//! refitted components and forecast designs in every replicate, all of a run or one range
//! of its replicates ([`crate::bootstrap::analysis::prepare`]).

use std::ops::Range;
use std::path::PathBuf;

use serde::Deserialize;

use super::{labelled_units, LabelSettings};
use super::{overwrites, source_input, unpaired_cells, unpaired_json, Engines, Progress};
use crate::bootstrap::analysis::{prepare, BootstrapJob, BootstrapRun};
use crate::bootstrap::stratified::BootstrapSpec;
use crate::document::{Finished, Inputs};
use crate::import::{by_selector, unpaired_counts, Balance, By, PanelSettings};
use crate::io::from_text::{one_or_many, parsed_opt};
use crate::panel::Source;
use crate::resample::summary::Method;
use crate::resample::{ResampleSettings, MAX_REPLICATES};
use crate::{Error, Result};

/// Replicates `A..B` of a run (0 ≤ A < B): one shard of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicateRange(pub Range<u32>);

impl std::str::FromStr for ReplicateRange {
    type Err = String;

    /// Parses `A..B`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = || "expected A..B with integers 0 <= A < B".to_string();
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let (a, b): (u32, u32) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a >= b {
            return Err(bad());
        }
        if b - a > MAX_REPLICATES {
            return Err(format!(
                "{} replicates in one run; at most {MAX_REPLICATES} are allowed (split the range)",
                b - a
            ));
        }
        Ok(ReplicateRange(a..b))
    }
}

/// The settings of [`bootstrap`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct BootstrapSettings {
    /// How the panel is read.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// Report each selector of the panel's `selector` column, then their average.
    pub by: Option<By>,
    /// The replicates (of the whole run), seed, backend and confidence level.
    #[serde(flatten)]
    pub resample: ResampleSettings,
    /// Compute only replicates `A..B` of the run (a shard; merge the shards' replicates).
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub replicates_range: Option<ReplicateRange>,
    /// The interval method.
    pub method: Method,
    /// Also refit per-stratum and pooled variance components in every replicate (with a
    /// cluster column, balanced panels: the four levels, on the drawn clusters).
    pub components: bool,
    /// With components: the forecast nested SE of these designs (`Q:T:R`; with a cluster
    /// column also `GxM:T:R`) in every replicate.
    #[serde(deserialize_with = "one_or_many")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub design: Vec<String>,
    /// Forecast the designs from the pooled components instead of each stratum's.
    pub pooled: bool,
    /// Write every replicate's statistics to this file (a shard to merge).
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub replicates_out: Option<PathBuf>,
    /// With labels: their score column and the judge's weight λ.
    #[serde(flatten)]
    pub judged: LabelSettings,
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        BootstrapSettings {
            panel: PanelSettings::default(),
            by: None,
            resample: ResampleSettings::default(),
            replicates_range: None,
            method: Method::Percentile,
            components: false,
            design: Vec::new(),
            pooled: false,
            replicates_out: None,
            judged: LabelSettings::default(),
        }
    }
}

/// The bootstrap of the panel `panel` holds on `engines` (unbalanced strata kept nested:
/// each replicate's components are refitted by REML), writing `settings.replicates_out`;
/// with `settings.by`, one section per selector.
///
/// With `labels` (human scores of some cells, the metric being a judge's) it is the
/// bootstrap of the PPI++ estimate ([`crate::judges::boot`]): labelled and unlabelled
/// questions resampled within strata on the engine, λ re-tuned in every replicate.
///
/// # Errors
/// [`Error::Setting`] for designs without components, a replicates file with selector
/// sections or that is the panel, and the resampling settings' errors; those of loading the
/// panel and of the bootstrap; with labels, [`Error::Setting`] for `by`, components,
/// designs, a replicates range or file and BCa, and those of reading the labels.
pub fn bootstrap(
    panel: &Source,
    labels: Option<&Source>,
    settings: &BootstrapSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<Finished> {
    let s = settings;
    if let Some(labels) = labels {
        return judged_bootstrap(panel, labels, s, engines, progress);
    }
    s.judged.check_without_labels(false)?;
    if !s.design.is_empty() && !s.components {
        return Err(Error::setting(
            "design",
            "needs components (forecasts are refitted from the components)",
        ));
    }
    let replicates = match &s.replicates_range {
        Some(r) => {
            s.resample.check_confidence()?;
            r.0.clone()
        }
        None => 0..s.resample.resampling()?.replicates,
    };
    let inputs = source_input(Inputs::new(), "panel", panel);
    if s.by == Some(By::Selector) {
        if s.replicates_out.is_some() {
            return Err(Error::setting(
                "replicates_out",
                "cannot be used with by selector: one file holds one run's replicates",
            ));
        }
        let mut notes = Vec::new();
        let mut unpaired = (0, 0);
        let sections = by_selector(panel, &s.panel, |one| {
            let loaded = one.load(panel, Balance::Fitted)?;
            notes.extend(one.loading_notes(&loaded, true));
            let (d, c) = unpaired_counts(&loaded);
            unpaired = (unpaired.0 + d, unpaired.1 + c);
            let run = run_on(&loaded, s, replicates.clone(), engines, progress)
                .map_err(|e| e.noted(one.loading_notes(&loaded, true)))?;
            Ok::<_, Error>(Box::new(run) as _)
        })?;
        let mut done = Finished::new("bootstrap", inputs, sections).with_notes_after(notes);
        done.unpaired_cells = unpaired_json(unpaired);
        return Ok(done);
    }
    if let Some(out) = &s.replicates_out {
        if let Some(why) = overwrites(out, "panel", panel.paths()) {
            return Err(Error::setting("replicates_out", why));
        }
    }
    // Unbalanced strata are kept nested: the components of every replicate are refitted by
    // REML on its drawn questions.
    let loaded = s.panel.load(panel, Balance::Fitted)?;
    // A failure after loading comes after the loading notes, as a success would.
    let run = run_on(&loaded, s, replicates, engines, progress)
        .map_err(|e| e.noted(s.panel.loading_notes(&loaded, true)))?;
    if let Some(path) = &s.replicates_out {
        run.replicates.write(path)?;
    }
    let notes = run.report.notes.clone();
    let mut done = Finished::new("bootstrap", inputs, run)
        .with_notes_after(s.panel.loading_notes(&loaded, true))
        .with_csv_notes(&notes);
    done.unpaired_cells = unpaired_cells(&loaded);
    Ok(done)
}

/// Replicates `replicates` of the bootstrap of the loaded `panel` with `settings`.
fn run_on(
    panel: &crate::panel::Panel,
    settings: &BootstrapSettings,
    replicates: Range<u32>,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<BootstrapRun> {
    let job = BootstrapJob {
        spec: BootstrapSpec {
            components: settings.components,
            designs: settings.design.clone(),
            pooled_forecast: settings.pooled,
        },
        seed: settings.resample.seed,
        replicates,
        method: settings.method,
        confidence: settings.resample.confidence,
    };
    // Prepared first: the designs are checked before an engine is started, and `auto`
    // weighs the job's size.
    let boot = prepare(panel, &job)?;
    let engine = engines.resampler(settings.resample.backend, boot.draws())?;
    let total = job.replicates.len() as u64;
    boot.run(engine.as_ref(), &|d| progress("bootstrap", d, total))
}

/// [`bootstrap`] with labels: the bootstrap of the PPI++ estimate.
fn judged_bootstrap(
    panel: &Source,
    labels: &Source,
    s: &BootstrapSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<Finished> {
    for (name, given) in [
        ("by", s.by.is_some()),
        ("components", s.components),
        ("design", !s.design.is_empty()),
        ("replicates_range", s.replicates_range.is_some()),
        ("replicates_out", s.replicates_out.is_some()),
    ] {
        if given {
            return Err(Error::setting(
                name,
                "cannot be used with labels: with labels, bootstrap resamples the PPI++ \
                 estimate (docs/judges.md)",
            ));
        }
    }
    s.judged.check()?;
    let replicates = s.resample.resampling()?.replicates;
    let loaded = s.panel.load(panel, Balance::Fitted)?;
    let notes = s.panel.loading_notes(&loaded, true);
    let (units, metric, pairing) =
        labelled_units(&loaded, labels, &s.panel, s.judged.label_metric.as_deref())
            .map_err(|e| e.noted(notes.clone()))?;
    let draws: u64 = units
        .iter()
        .map(|u| (u.y.len() + u.yhat_unlabelled.len()) as u64)
        .sum::<u64>()
        * u64::from(replicates);
    let engine = engines.resampler(s.resample.backend, draws)?;
    let total = u64::from(replicates);
    let label_name = labels.name().display().to_string();
    let mut report = crate::judges::boot::ppi_bootstrap(
        (&loaded.outcome, &label_name, &metric),
        &units,
        &loaded.stratum_weights(),
        s.judged.ppi_lambda,
        engine.as_ref(),
        s.resample.seed,
        replicates,
        s.method,
        s.resample.confidence,
        &|d| progress("bootstrap", d, total),
    )
    .map_err(|e| e.noted(notes.clone()))?;
    report.notes.extend(pairing);
    let inputs = source_input(
        source_input(Inputs::new(), "panel", panel),
        "labels",
        labels,
    );
    let mut done = Finished::new("bootstrap", inputs, report).with_notes_after(notes);
    done.unpaired_cells = unpaired_cells(&loaded);
    Ok(done)
}
