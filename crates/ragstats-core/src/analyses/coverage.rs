//! `coverage`: how often each interval `variance`, `bootstrap` and `compare` print covers
//! the truth, and how often each test rejects under the null, on panels simulated with the
//! user's design ([`crate::coverage::coverage_of_rows`]) or on the grid of designs of
//! docs/COVERAGE.md ([`crate::coverage::grid::grid`]).

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;

use super::{labelled_units, source_input, Engines, LabelSettings, Progress};
use crate::coverage::grid::{designs, grid};
use crate::coverage::labelled::{coverage_with_labels, HumanModel};
use crate::coverage::{
    coverage_of_rows, fit_of_rows, work, Analysis, CoverageJob, Generator, OutcomeChoice,
};
use crate::document::{Finished, Inputs};
use crate::import::{panel_rows, Balance, PanelSettings};
use crate::panel::{LoadOptions, Source};
use crate::resample::Backend;
use crate::{Error, Result};

/// Which analysis's intervals and tests a coverage run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum AnalysisChoice {
    /// The variance analysis's interval of the outcome.
    Variance,
    /// The bootstrap's intervals of the outcome.
    Bootstrap,
    /// The comparison's intervals and tests of the arms.
    Compare,
    /// The confidence sequence of the outcome looked at every `look_every` questions, and
    /// the Wald interval checked at the same looks (not part of `all`).
    Sequential,
    /// Every one of them.
    #[default]
    All,
}

/// How a coverage run's panels are simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum GeneratorChoice {
    /// Gaussian, from the fitted model.
    Gaussian,
    /// Bounded (Beta/Bernoulli), from the fitted model.
    Bounded,
    /// Questions resampled within strata.
    Resample,
    /// Every one of them.
    #[default]
    All,
}

/// The settings of [`coverage`] (the defaults are the command line's).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct CoverageSettings {
    /// How the panel is read; its contrast or arm is the outcome `variance` and
    /// `bootstrap` are measured on.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// Which analysis's intervals and tests to measure.
    pub analysis: AnalysisChoice,
    /// How simulated panels are drawn.
    pub generator: GeneratorChoice,
    /// Simulated panels per generator (as many again under the null when tests are
    /// measured), at least 10.
    pub panels: u32,
    /// Bootstrap replicates of every simulated panel's analyses, at least 100.
    pub replicates: u32,
    /// Seed of the simulated panels and of their bootstraps.
    pub seed: u64,
    /// Where the resampling runs.
    pub backend: Backend,
    /// Confidence level of the intervals (the tests' level is 1 − it).
    pub confidence: f64,
    /// Measure the grid of simulated designs of docs/COVERAGE.md instead of a panel
    /// (bounded generator, every analysis; about 10 minutes on 2 cores at the defaults).
    pub grid: bool,
    /// With the sequential analysis: a look every this many questions (the user's
    /// monitoring design).
    pub look_every: u64,
    /// Measure the clustered designs of docs/COVERAGE.md ("Clustered designs": G clusters
    /// of 4 binary questions, G from 6 to 48) instead of a panel: the intervals of the
    /// analysis with `--cluster`, and of the same panels without it.
    pub clustered: bool,
    /// With labels: their score column and the judge's weight λ (the PPI++ intervals'
    /// coverage of the human-scale truth is measured).
    #[serde(flatten)]
    pub judged: LabelSettings,
}

impl Default for CoverageSettings {
    fn default() -> Self {
        CoverageSettings {
            panel: PanelSettings::default(),
            analysis: AnalysisChoice::All,
            generator: GeneratorChoice::All,
            panels: 200,
            replicates: 1000,
            seed: 1,
            backend: Backend::Auto,
            confidence: 0.95,
            grid: false,
            look_every: 25,
            clustered: false,
            judged: LabelSettings::default(),
        }
    }
}

impl CoverageSettings {
    /// The run these settings ask for, checked ([`CoverageJob::check`]).
    ///
    /// # Errors
    /// [`Error::Setting`] for too few panels or replicates, or a confidence outside (0, 1).
    pub fn job(&self) -> Result<CoverageJob> {
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::setting(
                "confidence",
                format!(
                    "{} must be between 0 and 1 (exclusive), e.g. 0.95",
                    self.confidence
                ),
            ));
        }
        let job = CoverageJob {
            analyses: match self.analysis {
                AnalysisChoice::Variance => vec![Analysis::Variance],
                AnalysisChoice::Bootstrap => vec![Analysis::Bootstrap],
                AnalysisChoice::Compare => vec![Analysis::Compare],
                AnalysisChoice::Sequential => vec![Analysis::Sequential],
                AnalysisChoice::All => Analysis::ALL.to_vec(),
            },
            generators: match self.generator {
                GeneratorChoice::Gaussian => vec![Generator::Gaussian],
                GeneratorChoice::Bounded => vec![Generator::Bounded],
                GeneratorChoice::Resample => vec![Generator::Resample],
                GeneratorChoice::All => Generator::ALL.to_vec(),
            },
            panels: self.panels,
            replicates: self.replicates,
            seed: self.seed,
            confidence: self.confidence,
            look_every: self.look_every,
        };
        if self.look_every == 0 {
            return Err(Error::setting(
                "look_every",
                "must be at least 1 question, e.g. 25",
            ));
        }
        job.check()?;
        Ok(job)
    }
}

/// The coverage of every interval and the error rate of every test at the design of the
/// panel `panel` holds (read once; the model fitted to every arm), or with
/// `settings.grid` (and no panel) at the grid of simulated designs. With `labels` (human
/// scores of some of the panel's cells, the metric being a judge's) the intervals and tests
/// measured are the PPI++ ones, against the human-scale truth of a human model fitted to
/// the labels ([`crate::coverage::labelled`]).
///
/// # Errors
/// [`Error::Usage`] without a panel and without the grid, or with both; those of
/// [`CoverageSettings::job`], of reading the panel and the labels, and of the run.
pub fn coverage(
    panel: Option<&Source>,
    labels: Option<&Source>,
    settings: &CoverageSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<Finished> {
    let engine = || engines.resampler(settings.backend, u64::MAX);
    if labels.is_some() && (settings.grid || settings.clustered) {
        return Err(Error::Usage(
            "labels go with a panel: the grid and the clustered designs simulate their own".into(),
        ));
    }
    settings.judged.check_without_labels(labels.is_some())?;
    if settings.clustered {
        if panel.is_some() || settings.grid {
            return Err(Error::Usage(
                "the clustered designs are simulated on their own: give a panel, the grid or \
                 the clustered designs, one of them"
                    .into(),
            ));
        }
        settings.job()?;
        let designs = crate::coverage::clustered::ClusteredDesign::all().len() as u64;
        let total = designs * u64::from(settings.panels);
        let done = AtomicU64::new(0);
        let report = crate::coverage::clustered::clustered_coverage(
            settings.panels,
            settings.seed,
            settings.confidence,
            &|| {
                progress(
                    "coverage clustered",
                    done.fetch_add(1, Ordering::Relaxed) + 1,
                    total,
                )
            },
        )?;
        return Ok(Finished::new("coverage", Inputs::new(), report));
    }
    if settings.grid {
        if panel.is_some() {
            return Err(Error::Usage(
                "the grid simulates its own designs: give a panel or the grid, not both".into(),
            ));
        }
        settings.job()?;
        let all = designs();
        let total = all.len() as u64 * u64::from(settings.panels) * 2;
        let done = AtomicU64::new(0);
        let report = grid(
            &all,
            settings.panels,
            settings.replicates,
            settings.seed,
            settings.confidence,
            engine()?.as_ref(),
            &|_, _| {
                progress(
                    "coverage grid",
                    done.fetch_add(1, Ordering::Relaxed) + 1,
                    total,
                )
            },
        )?;
        return Ok(Finished::new("coverage", Inputs::new(), report));
    }
    let Some(source) = panel else {
        return Err(Error::Usage("coverage needs a panel, or the grid".into()));
    };
    let job = settings.job()?;
    settings.panel.check()?;
    let choice = OutcomeChoice {
        contrast: settings.panel.contrast.clone(),
        arm: settings.panel.arm.clone(),
    };
    // The arms are assembled one by one from the rows read once; the outcome is chosen
    // from them, not by the loader.
    let opts = LoadOptions {
        contrast: None,
        arm: None,
        ..settings.panel.load_options(Balance::Fitted)
    };
    let rows = panel_rows(source, &opts, &settings.panel.import_options())?;
    let total = work(&job);
    let report = match labels {
        None => coverage_of_rows(&rows, &opts, &choice, &job, engine()?.as_ref(), &|d| {
            progress("coverage", d, total)
        })?,
        Some(labels) => {
            settings.judged.check()?;
            let fitted = fit_of_rows(&rows, &opts, &choice)?;
            let armless = rows.arms().is_empty();
            let mut units = Vec::new();
            let mut metric = String::new();
            for (arm, panel) in fitted.model.arms.iter().zip(&fitted.model.templates) {
                let ps = PanelSettings {
                    arm: (!armless).then(|| arm.clone()),
                    contrast: None,
                    ..settings.panel.clone()
                };
                let (u, m, _) =
                    labelled_units(panel, labels, &ps, settings.judged.label_metric.as_deref())?;
                units.push(u);
                metric = m;
            }
            let human = HumanModel::fit(
                &fitted.model,
                &units,
                (&labels.name().display().to_string(), &metric),
                settings.judged.ppi_lambda,
            )?;
            coverage_with_labels(
                &fitted.model,
                human,
                fitted.outcome,
                fitted.outcome_name,
                &job,
                engine()?.as_ref(),
                &|d| progress("coverage", d, total),
            )?
        }
    };
    let notes = report.notes.clone();
    let inputs = source_input(Inputs::new(), "panel", source);
    let inputs = match labels {
        Some(l) => source_input(inputs, "labels", l),
        None => inputs,
    };
    Ok(Finished::new("coverage", inputs, report).with_csv_notes(&notes))
}
