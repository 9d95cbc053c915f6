//! The coverage study (`stats coverage`): does every interval cover, and every test hold
//! its level, at the user's own design?
//!
//! From a panel, fit a model ([`model`]), simulate `panels` panels of the same design with
//! each generator ([`generate`]: Gaussian, bounded Beta/Bernoulli, questions resampled),
//! run the same analyses on each through the library calls the commands make
//! ([`analyses`]), and count ([`tally`]): for each interval its coverage of the truth, for
//! each test its rejection rate on panels simulated under the null (every arm's mean
//! equalised), each with its Monte Carlo SE √(p(1 − p)/n) and a verdict against the target
//! (95% intervals cover 0.935–0.97; 5% tests reject at most 0.065). [`grid`] runs the same
//! on simulated designs for docs/COVERAGE.md.
//!
//! Each simulated panel is its own engine job (its bootstraps keyed by a seed derived from
//! the run's seed, the generator, null or not, and the panel's index), and the panels run
//! in parallel: panel i gives the same counts on any thread, backend or number of threads.
//! Batching independent panels as columns of one engine job would share one draw of
//! questions between them and bypass the analyses' own code, so it is not done.

pub mod analyses;
pub mod generate;
pub mod grid;
pub mod model;
pub mod tally;

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

pub use analyses::{Analysis, Outcome, Truth};
pub use generate::Generator;
pub use model::{Model, Scale};
pub use tally::{Kind, Row, Target};

use crate::document::{Engine, Report};
use crate::panel::{LoadOptions, PanelRows};
use crate::resample::ResampleBackend;
use crate::rng::KeyedStream;
use crate::{Error, Result};

/// What a coverage run simulates and measures.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageSettings {
    pub analyses: Vec<Analysis>,
    pub generators: Vec<Generator>,
    /// Simulated panels per generator (and as many again under the null for tests).
    pub panels: u32,
    /// Bootstrap replicates of each simulated panel's analyses.
    pub replicates: u32,
    pub seed: u64,
    /// Confidence level of the intervals (the tests' α is 1 − confidence).
    pub confidence: f64,
}

impl CoverageSettings {
    /// Checks the settings' domain.
    ///
    /// # Errors
    /// [`Error::Usage`] for no analysis or generator, fewer than 10 panels, fewer than 100
    /// replicates, or a confidence outside (0, 1).
    pub fn check(&self) -> Result<()> {
        if self.analyses.is_empty() || self.generators.is_empty() {
            return Err(Error::Usage(
                "coverage needs at least one analysis and one generator".into(),
            ));
        }
        if self.panels < 10 {
            return Err(Error::Usage(format!(
                "--panels {}: at least 10 simulated panels are needed for a coverage estimate",
                self.panels
            )));
        }
        if self.replicates < 100 {
            return Err(Error::Usage(format!(
                "--replicates {}: at least 100 bootstrap replicates per simulated panel are needed",
                self.replicates
            )));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::Usage(format!(
                "confidence {}: must be between 0 and 1",
                self.confidence
            )));
        }
        Ok(())
    }
}

/// One stratum of the design simulated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignStratum {
    pub name: String,
    pub questions: usize,
    /// Trajectories per question (0 when unbalanced).
    pub trajectories: usize,
    /// Reads per trajectory (0 when unbalanced).
    pub reads: usize,
    /// Cells (outcomes) of each arm.
    pub cells: Vec<usize>,
    /// Per arm: its mean m and components (σ²_q, σ²_t, σ²_r) in the fitted model.
    pub model: Vec<ArmModel>,
}

/// An arm's fitted mean and components in one stratum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmModel {
    pub arm: String,
    pub mean: f64,
    pub components: model::Components,
}

/// What `stats coverage` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageReport {
    /// The panel's score column.
    pub metric: String,
    /// The outcome `variance` and `bootstrap` analysed (`f1: B-A`, `f1 (A)`), if any.
    pub outcome: Option<String>,
    pub arms: Vec<String>,
    pub scale: Scale,
    pub design: Vec<DesignStratum>,
    pub panels: u32,
    pub replicates: u32,
    pub confidence: f64,
    pub target: Target,
    /// One row per generator, analysis and interval or test.
    pub rows: Vec<Row>,
    /// Every row short of the target, in one sentence each.
    pub below_target: Vec<String>,
    /// What was not simulated or measured, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub engine: Engine,
}

impl Report for CoverageReport {
    fn engine(&self) -> Engine {
        self.engine.clone()
    }
}

/// The seed of simulated panel `index`'s bootstraps.
fn panel_seed(seed: u64, generator: Generator, null: bool, index: u64) -> u64 {
    KeyedStream::new(
        seed,
        &[
            generate::COVERAGE,
            generator as u64 + 1,
            u64::from(null),
            index,
            u64::MAX,
        ],
    )
    .next_u64()
}

/// Work units of a run (for a progress bar): panels × generators, twice when a test is
/// measured.
pub fn work(settings: &CoverageSettings) -> u64 {
    let nulls = if settings.analyses.iter().any(|a| a.has_tests()) {
        2
    } else {
        1
    };
    u64::from(settings.panels) * settings.generators.len() as u64 * nulls
}

/// The coverage study of `model`: see the module documentation. `outcome` is what
/// `variance` and `bootstrap` analyse; `progress` is called with the work units done
/// ([`work`]).
///
/// # Errors
/// [`Error::Usage`] for bad settings; otherwise none: an analysis failing on a simulated
/// panel is counted in its rows' `errors`.
pub fn coverage(
    model: &Model,
    outcome: Option<Outcome>,
    outcome_name: Option<String>,
    settings: &CoverageSettings,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CoverageReport> {
    settings.check()?;
    let target = Target::at(settings.confidence);
    let mut notes = Vec::new();
    let mut generators = settings.generators.clone();
    if model.scale == Scale::Unbounded && generators.contains(&Generator::Bounded) {
        generators.retain(|g| *g != Generator::Bounded);
        notes.push("bounded generator skipped: the scores are not all in [0, 1]".into());
    }
    let mut analyses = settings.analyses.clone();
    if model.k() < 2 && analyses.contains(&Analysis::Compare) {
        analyses.retain(|a| *a != Analysis::Compare);
        notes.push("compare skipped: the panel has one arm".into());
    }
    if analyses.contains(&Analysis::Compare) {
        let t = &model.templates;
        if (1..t.len()).any(|a| crate::compare::cell_difference(&t[0], &t[a]).is_none()) {
            analyses.retain(|a| *a != Analysis::Compare);
            notes.push("compare skipped: the arms do not have the same cells (unpaired or missing cells); simulating them is not supported yet".into());
        }
    }
    if outcome.is_none() {
        analyses.retain(|a| *a == Analysis::Compare);
        if settings.analyses.iter().any(|a| *a != Analysis::Compare) {
            notes.push("variance and bootstrap skipped: the panel has several arms; choose --contrast B-A or --arm NAME".into());
        }
    } else if let Some(o) = outcome {
        if analyses::outcome_panel(&model.templates, o).is_none() {
            analyses.retain(|a| *a == Analysis::Compare);
            notes.push("variance and bootstrap skipped: the contrast's arms do not have the same cells; simulating unpaired cells is not supported yet".into());
        }
    }
    let truth_of = |m: &Model| Truth {
        arms: (0..m.k()).map(|a| m.truth(a)).collect(),
        strata: m.strata.iter().map(|s| s.means.clone()).collect(),
    };
    let (truth, truth_null) = (truth_of(model), truth_of(&model.null()));
    let run = analyses::Run {
        analyses: &analyses,
        outcome,
        arm_names: &model.arms,
        replicates: settings.replicates,
        confidence: settings.confidence,
        backend,
    };
    let tests = analyses.iter().any(|a| a.has_tests());
    let done = std::sync::atomic::AtomicU64::new(0);
    let mut rows = Vec::new();
    for &g in &generators {
        let jobs: Vec<(bool, u64)> = [false, true]
            .into_iter()
            .filter(|&null| !null || tests)
            .flat_map(|null| (0..u64::from(settings.panels)).map(move |i| (null, i)))
            .collect();
        let results: Vec<_> = jobs
            .par_iter()
            .map(|&(null, i)| {
                let arms = generate::simulate(model, g, null, settings.seed, i);
                let truth = if null { &truth_null } else { &truth };
                let out = run.observe(&arms, truth, null, panel_seed(settings.seed, g, null, i));
                progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                out
            })
            .collect();
        // (analysis, statistic, kind) → (hits, n), in order of first observation.
        let mut keys: Vec<(&'static str, String, Kind)> = Vec::new();
        let mut counts: Vec<(u64, u64)> = Vec::new();
        let mut errors: std::collections::BTreeMap<&'static str, u64> = Default::default();
        for (obs, errs) in &results {
            for o in obs {
                let key = (o.analysis, o.statistic.clone(), o.kind);
                let at = match keys.iter().position(|k| *k == key) {
                    Some(at) => at,
                    None => {
                        keys.push(key);
                        counts.push((0, 0));
                        keys.len() - 1
                    }
                };
                counts[at].0 += u64::from(o.hit);
                counts[at].1 += 1;
            }
            for e in errs {
                *errors.entry(e).or_default() += 1;
            }
        }
        for ((analysis, statistic, kind), (hits, n)) in keys.into_iter().zip(counts) {
            let nominal = match kind {
                Kind::Interval => settings.confidence,
                Kind::Test => 1.0 - settings.confidence,
            };
            let e = errors.get(analysis).copied().unwrap_or(0);
            rows.push(Row::new(
                g.name(),
                analysis,
                statistic,
                kind,
                nominal,
                hits,
                n,
                e,
                &target,
            ));
        }
        for (analysis, e) in errors {
            if !rows
                .iter()
                .any(|r| r.generator == g.name() && r.analysis == analysis)
            {
                notes.push(format!(
                    "{} / {analysis}: failed on every one of {e} simulated panels",
                    g.name()
                ));
            }
        }
    }
    rows.sort_by(|x, y| (x.generator, x.analysis, x.kind).cmp(&(y.generator, y.analysis, y.kind)));
    let below_target = rows
        .iter()
        .filter(|r| r.short())
        .map(|r| r.sentence(&target))
        .collect();
    Ok(CoverageReport {
        metric: model.templates[0].metric.clone(),
        outcome: outcome_name,
        arms: model.arms.clone(),
        scale: model.scale,
        design: design_of(model),
        panels: settings.panels,
        replicates: settings.replicates,
        confidence: settings.confidence,
        target,
        rows,
        below_target,
        notes,
        engine: Engine {
            backend: Some(backend.name().to_string()),
            adapter: Some(backend.description()),
            replicates: Some(u64::from(settings.replicates)),
            seed: Some(settings.seed),
            confidence: Some(settings.confidence),
        },
    })
}

/// The design and fitted model, stratum by stratum.
fn design_of(model: &Model) -> Vec<DesignStratum> {
    model
        .strata
        .iter()
        .map(|sm| {
            let strata: Vec<&crate::panel::Stratum> = model
                .templates
                .iter()
                .map(|p| p.strata.iter().find(|s| s.name == sm.name).expect("fitted"))
                .collect();
            DesignStratum {
                name: sm.name.clone(),
                questions: strata[0].q(),
                trajectories: strata[0].t(),
                reads: strata[0].r(),
                cells: strata
                    .iter()
                    .map(|s| s.nested.as_ref().map_or(s.y.len(), |n| n.y.len()))
                    .collect(),
                model: model
                    .arms
                    .iter()
                    .enumerate()
                    .map(|(a, arm)| ArmModel {
                        arm: arm.clone(),
                        mean: sm.means[a],
                        components: sm.components[a],
                    })
                    .collect(),
            }
        })
        .collect()
}

/// What `stats coverage PANEL` measures: the outcome of `variance` and `bootstrap`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutcomeChoice {
    /// `B-A`.
    pub contrast: Option<String>,
    pub arm: Option<String>,
}

/// Reads the panel at `path` once, fits the model to every arm and runs [`coverage`].
///
/// # Errors
/// [`Error::Usage`] for both a contrast and an arm; [`Error::Input`] for an unknown arm or
/// a contrast that is not two of the panel's arms; the errors of loading the arms' panels
/// and of fitting (a stratum with fewer than two questions).
pub fn coverage_of_file(
    path: &Path,
    opts: &LoadOptions,
    choice: &OutcomeChoice,
    settings: &CoverageSettings,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CoverageReport> {
    settings.check()?;
    let rows = PanelRows::read(path, opts)?;
    let arms = rows.arms();
    let (names, wanted): (Vec<String>, Vec<LoadOptions>) = if arms.is_empty() {
        (vec![rows.metric().to_string()], vec![opts.clone()])
    } else {
        arms.iter()
            .map(|a| {
                (
                    a.clone(),
                    LoadOptions {
                        arm: Some(a.clone()),
                        contrast: None,
                        failure_score: None,
                        ..opts.clone()
                    },
                )
            })
            .unzip()
    };
    let (outcome, outcome_name) = match (&choice.contrast, &choice.arm) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "use either --contrast or --arm, not both".into(),
            ))
        }
        (Some(spec), None) => {
            // Validated as the loader validates it, then split where it split.
            let check = LoadOptions {
                contrast: Some(spec.clone()),
                ..opts.clone()
            };
            rows.assemble(std::slice::from_ref(&check))?;
            let (b, a) = spec
                .match_indices('-')
                .find_map(|(i, _)| {
                    let b = names.iter().position(|n| *n == spec[..i])?;
                    let a = names.iter().position(|n| *n == spec[i + 1..])?;
                    Some((b, a))
                })
                .ok_or_else(|| {
                    Error::input(
                        path,
                        None,
                        format!(
                            "--contrast {spec}: expected B-A with two of the panel's arms ({})",
                            names.join(", ")
                        ),
                    )
                })?;
            (
                Some(Outcome::Contrast { b, a }),
                Some(format!("{}: {spec}", rows.metric())),
            )
        }
        (None, Some(arm)) => {
            let a = names
                .iter()
                .position(|n| n == arm)
                .filter(|_| !arms.is_empty())
                .ok_or_else(|| {
                    Error::input(
                        path,
                        None,
                        format!(
                            "unknown arm '{arm}'; the panel's arms are: {}",
                            arms.join(", ")
                        ),
                    )
                })?;
            (
                Some(Outcome::Arm(a)),
                Some(format!("{} ({arm})", rows.metric())),
            )
        }
        (None, None) if names.len() == 1 => {
            (Some(Outcome::Arm(0)), Some(rows.metric().to_string()))
        }
        (None, None) => (None, None),
    };
    let panels = rows.assemble(&wanted)?;
    let model = Model::fit(names, panels)?;
    coverage(&model, outcome, outcome_name, settings, backend, progress)
}
