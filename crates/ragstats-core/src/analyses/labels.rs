//! `labels sample` and `labels agreement`: the random labelling sheet of a judged panel
//! ([`crate::judges::sample`]) and judge–human agreement on its labels
//! ([`crate::judges::agreement`]); and the labels settings `variance` takes
//! ([`LabelSettings`], [`judged`]).

use std::path::PathBuf;

use serde::Deserialize;

use super::{overwrites, source_input};
use crate::document::{Finished, Inputs};
use crate::import::{Balance, PanelSettings};
use crate::io::from_text::number_opt;
use crate::judges::agreement::agreement;
use crate::judges::estimate::{ppi_report, PpiReport};
use crate::judges::labels::{read_labels, units, ArmsOf, StratumUnits};
use crate::judges::sample::{choose, write_sheet, SampleReport, SampledStratum};
use crate::panel::{Panel, Source};
use crate::{Error, Result};

/// How a judged panel's human labels are read and used (`variance`'s `labels`).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct LabelSettings {
    /// The labels' score column (default: the panel's metric).
    pub label_metric: Option<String>,
    /// The judge's weight λ in the PPI estimate, in [0, 1] (1: plain PPI, 0: the labels
    /// alone; default: power-tuned, PPI++).
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub ppi_lambda: Option<f64>,
}

impl LabelSettings {
    /// Checks λ's domain.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `ppi_lambda` outside [0, 1].
    pub fn check(&self) -> Result<()> {
        match self.ppi_lambda {
            Some(l) if !(0.0..=1.0).contains(&l) => Err(Error::setting(
                "ppi_lambda",
                format!("{l} must be between 0 and 1 (1: plain PPI, 0: labels only)"),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses a label setting without labels (`labels_given` says whether labels are).
    ///
    /// # Errors
    /// [`Error::Setting`] naming `ppi_lambda`, else `label_metric`, where one is given
    /// without labels.
    pub fn check_without_labels(&self, labels_given: bool) -> Result<()> {
        if labels_given {
            return Ok(());
        }
        for (name, given) in [
            ("ppi_lambda", self.ppi_lambda.is_some()),
            ("label_metric", self.label_metric.is_some()),
        ] {
            if given {
                return Err(Error::setting(name, "is a setting of labels: give labels"));
            }
        }
        Ok(())
    }
}

/// The labels `labels` holds paired with the loaded `panel` (read with `panel_settings`):
/// the question-level units per stratum, the label column, and the notes of pairing.
///
/// # Errors
/// Those of reading and pairing the labels.
pub fn labelled_units(
    panel: &Panel,
    labels: &Source,
    panel_settings: &PanelSettings,
    label_metric: Option<&str>,
) -> Result<(Vec<StratumUnits>, String, Vec<String>)> {
    let metric = label_metric.unwrap_or(&panel.metric).to_string();
    let read = read_labels(labels, &metric)?;
    let known: Vec<&str> = read.rows.iter().filter_map(|r| r.arm.as_deref()).collect();
    let arms = ArmsOf::of(
        panel_settings.contrast.as_deref(),
        panel_settings.arm.as_deref(),
        &known,
    );
    let (u, notes) = units(panel, &read, &arms)?;
    Ok((u, metric, notes))
}

/// The PPI++ report of the loaded `panel` with the labels `labels` (what `variance` reports
/// with labels): every stratum corrected with its own λ, then weighted as the panel's
/// strata are; the 95% normal interval.
///
/// # Errors
/// Those of [`labelled_units`]; [`Error::Data`] for a stratum with fewer than 2 labelled
/// questions.
pub fn judged(
    panel: &Panel,
    labels: &Source,
    panel_settings: &PanelSettings,
    settings: &LabelSettings,
) -> Result<PpiReport> {
    settings.check()?;
    let (u, metric, notes) = labelled_units(
        panel,
        labels,
        panel_settings,
        settings.label_metric.as_deref(),
    )?;
    let mut r = ppi_report(
        &panel.outcome,
        &labels.name().display().to_string(),
        &metric,
        &u,
        &panel.stratum_weights(),
        settings.ppi_lambda,
        0.95,
    )?;
    r.notes = notes;
    let fewest = u.iter().map(|s| s.y.len()).min().unwrap_or(0);
    if fewest < FEW_LABELS {
        r.notes.push(few_labels_note(fewest));
    }
    Ok(r)
}

/// Below this many labelled questions in a stratum the PPI++ normal interval was measured
/// short of its level (docs/COVERAGE.md, "PPI with human labels").
pub const FEW_LABELS: usize = 50;

/// The note of a stratum with only `n` labelled questions.
fn few_labels_note(n: usize) -> String {
    format!(
        "note: {n} labelled questions in a stratum: the 95% PPI++ normal interval (ppi_py's z \
         interval) covered 0.919 ± 0.006 at 15 labels (the demo's design) and 0.933 ± 0.006 at \
         40 (docs/COVERAGE.md); coverage with these labels measures it at this design"
    )
}

/// `compare` with labels ([`crate::judges::compare`]): each system's (arm's) PPI++ estimate
/// and each pair's PPI++ paired difference, the systems the panel's arms (or `arms`), the
/// pairs every pair or each against `reference`.
///
/// # Errors
/// Fewer than two systems, an unknown reference; those of loading each arm and contrast and
/// of [`judged`].
pub fn judged_compare(
    panel: &Source,
    labels: &Source,
    panel_settings: &PanelSettings,
    settings: &LabelSettings,
    arms: &[String],
    reference: Option<&str>,
) -> Result<crate::judges::compare::PpiCompareReport> {
    let all = crate::allocation::slice_rows::arms(panel)?;
    let systems: Vec<String> = if arms.is_empty() {
        all
    } else {
        arms.iter().map(|a| a.trim().to_string()).collect()
    };
    if systems.len() < 2 {
        return Err(Error::input(
            panel.name(),
            None,
            format!(
                "compare needs two or more systems (arms), found {}",
                systems.len()
            ),
        ));
    }
    if let Some(r) = reference {
        if !systems.iter().any(|s| s == r) {
            return Err(Error::setting(
                "reference",
                format!("'{r}' is not one of the systems ({})", systems.join(", ")),
            ));
        }
    }
    let one = |arm: Option<&str>, contrast: Option<String>| PanelSettings {
        arm: arm.map(str::to_string),
        contrast,
        ..panel_settings.clone()
    };
    let mut estimates = Vec::new();
    let mut metric = String::new();
    for s in &systems {
        let ps = one(Some(s), None);
        let loaded = ps.load(panel, Balance::Fitted)?;
        metric = loaded.metric.clone();
        estimates.push((s.clone(), judged(&loaded, labels, &ps, settings)?));
    }
    let mut pairs = Vec::new();
    for (i, a) in systems.iter().enumerate() {
        for b in &systems[i + 1..] {
            let (a, b) = match reference {
                Some(r) if b == r => (b, a),
                Some(r) if a != r => continue,
                _ => (a, b),
            };
            let ps = one(None, Some(format!("{b}-{a}")));
            let loaded = ps.load(panel, Balance::Fitted)?;
            pairs.push((
                a.clone(),
                b.clone(),
                judged(&loaded, labels, &ps, settings)?,
            ));
        }
    }
    Ok(crate::judges::compare::ppi_compare(
        &metric, estimates, pairs,
    ))
}

/// The settings of [`labels_sample`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct LabelsSampleSettings {
    /// How the panel is read (an arm or a contrast puts an `arm` column in the sheet).
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// Questions to label: in all, split over the strata in their question shares.
    pub n: usize,
    /// N is the count in every stratum, not the total.
    pub per_stratum: bool,
    /// The seed of the random choice.
    pub seed: u64,
    /// The sheet's empty score column (default: the panel's metric).
    pub label_metric: Option<String>,
    /// Where to write the sheet: CSV, or JSON lines for a `.jsonl`/`.json` name.
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub out: PathBuf,
}

/// Chooses `settings.n` questions of the panel `panel` holds uniformly at random (seeded,
/// stratified; [`choose`]) and writes their cells as a labelling sheet to `settings.out`
/// ([`write_sheet`]).
///
/// # Errors
/// [`Error::Setting`] for weights, an empty `out` or one that is the panel, and N of 0 or
/// beyond the panel's questions; those of loading and writing.
pub fn labels_sample(panel: &Source, settings: &LabelsSampleSettings) -> Result<Finished> {
    let out = &settings.out;
    if out.as_os_str().is_empty() {
        return Err(Error::setting(
            "out",
            "expected the file to write the sheet to",
        ));
    }
    if let Some(why) = overwrites(out, "panel", panel.paths()) {
        return Err(Error::setting("out", why));
    }
    if settings.panel.weights.is_some() {
        return Err(Error::setting(
            "weights",
            "a labelling sheet combines no strata: give weights to the analysis of the labels",
        ));
    }
    let loaded = settings.panel.load(panel, Balance::Fitted)?;
    let chosen = choose(&loaded, settings.n, settings.per_stratum, settings.seed)?;
    let names = crate::allocation::slice_rows::arms(panel).unwrap_or_default();
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    let arms = ArmsOf::of(
        settings.panel.contrast.as_deref(),
        settings.panel.arm.as_deref(),
        &known,
    );
    let column = settings
        .label_metric
        .clone()
        .unwrap_or_else(|| loaded.metric.clone());
    let rows = write_sheet(&loaded, &chosen, &arms, &column, out)?;
    let report = SampleReport {
        seed: settings.seed,
        allocation: if settings.per_stratum {
            "per-stratum"
        } else {
            "proportional"
        },
        strata: loaded
            .strata
            .iter()
            .zip(&chosen)
            .map(|(s, c)| SampledStratum {
                name: s.name.clone(),
                questions: s.q(),
                chosen: c.len(),
            })
            .collect(),
        rows,
        score_column: column,
        out: out.display().to_string(),
    };
    Ok(Finished::new(
        "labels sample",
        source_input(Inputs::new(), "panel", panel),
        report,
    )
    .with_notes_after(settings.panel.loading_notes(&loaded, true)))
}

/// The settings of [`labels_agreement`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct LabelsAgreementSettings {
    /// How the panel is read (the judge's scores).
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The labels' score column (default: the panel's metric).
    pub label_metric: Option<String>,
}

/// Judge–human agreement on the labelled cells of the panel `panel` holds, with the labels
/// `labels` holds ([`crate::judges::agreement`]): correlation, Cohen's κ for binary
/// scores, the judge's mean bias with its 95% interval, and the variance reduction PPI++
/// buys (the effective number of labels).
///
/// # Errors
/// Those of loading the panel, reading and pairing the labels; [`Error::Data`] for a
/// stratum with fewer than 2 labelled questions.
pub fn labels_agreement(
    panel: &Source,
    labels: &Source,
    settings: &LabelsAgreementSettings,
) -> Result<Finished> {
    let loaded = settings.panel.load(panel, Balance::Fitted)?;
    let notes = settings.panel.loading_notes(&loaded, true);
    let (u, metric, pairing) = labelled_units(
        &loaded,
        labels,
        &settings.panel,
        settings.label_metric.as_deref(),
    )
    .map_err(|e| e.noted(notes.clone()))?;
    let mut report = agreement(
        &loaded.outcome,
        &labels.name().display().to_string(),
        &metric,
        &u,
        &loaded.stratum_weights(),
        0.95,
    )
    .map_err(|e| e.noted(notes.clone()))?;
    report.notes = pairing;
    let inputs = source_input(
        source_input(Inputs::new(), "panel", panel),
        "labels",
        labels,
    );
    Ok(Finished::new("labels agreement", inputs, report).with_notes_after(notes))
}
