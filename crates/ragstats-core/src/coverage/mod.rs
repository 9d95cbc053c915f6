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
pub mod clustered;
pub mod generate;
pub mod grid;
mod grid_view;
pub mod labelled;
pub mod model;
pub mod tally;
mod view;

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
pub struct CoverageJob {
    pub analyses: Vec<Analysis>,
    pub generators: Vec<Generator>,
    /// Simulated panels per generator (and as many again under the null for tests).
    pub panels: u32,
    /// Bootstrap replicates of each simulated panel's analyses.
    pub replicates: u32,
    pub seed: u64,
    /// Confidence level of the intervals (the tests' α is 1 − confidence).
    pub confidence: f64,
    /// The sequential analysis looks every this many questions.
    pub look_every: u64,
}

impl CoverageJob {
    /// Checks the settings' domain.
    ///
    /// # Errors
    /// [`Error::Setting`] for fewer than 10 panels or fewer than 100 replicates;
    /// [`Error::Usage`] for no analysis or generator, or a confidence outside (0, 1).
    pub fn check(&self) -> Result<()> {
        if self.analyses.is_empty() || self.generators.is_empty() {
            return Err(Error::Usage(
                "coverage needs at least one analysis and one generator".into(),
            ));
        }
        if self.panels < 10 {
            return Err(Error::setting(
                "panels",
                format!(
                    "{} simulated panels are too few for a coverage estimate; at least 10 are needed",
                    self.panels
                ),
            ));
        }
        if self.replicates < 100 {
            return Err(Error::setting(
                "replicates",
                format!(
                    "{} bootstrap replicates per simulated panel are too few; at least 100 are needed",
                    self.replicates
                ),
            ));
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
    /// With human labels: the human scores' model fitted to them ([`labelled`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<labelled::HumanModel>,
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
pub fn work(settings: &CoverageJob) -> u64 {
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
    settings: &CoverageJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CoverageReport> {
    settings.check()?;
    let target = Target::at(settings.confidence);
    let (analyses, generators, mut notes) = applicable(model, outcome, settings);
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
        look_every: settings.look_every,
        backend,
    };
    let tests = analyses.iter().any(|a| a.has_tests());
    let rows = study(
        &generators,
        tests,
        settings,
        &target,
        &mut notes,
        progress,
        |g, null, i| {
            let arms = generate::simulate(model, g, null, settings.seed, i);
            let truth = if null { &truth_null } else { &truth };
            run.observe(&arms, truth, null, panel_seed(settings.seed, g, null, i))
        },
    );
    let report = report(model, outcome_name, settings, target, rows, notes, backend);
    Ok(report)
}

/// What one simulated panel gives: its observations and the analyses that failed on it.
type Observed = (Vec<tally::Observation>, Vec<&'static str>);

/// The rows of a study: `observe(g, null, i)` on simulated panel i of every generator g —
/// `settings.panels` panels, and as many under the null when `tests` — in parallel,
/// calling `progress` with the panels done; each generator's results tallied in panel order.
fn study(
    generators: &[Generator],
    tests: bool,
    settings: &CoverageJob,
    target: &Target,
    notes: &mut Vec<String>,
    progress: &(dyn Fn(u64) + Sync),
    observe: impl Fn(Generator, bool, u64) -> Observed + Sync,
) -> Vec<Row> {
    let done = std::sync::atomic::AtomicU64::new(0);
    let mut rows = Vec::new();
    for &g in generators {
        let jobs: Vec<(bool, u64)> = [false, true]
            .into_iter()
            .filter(|&null| !null || tests)
            .flat_map(|null| (0..u64::from(settings.panels)).map(move |i| (null, i)))
            .collect();
        let results: Vec<Observed> = jobs
            .par_iter()
            .map(|&(null, i)| {
                let out = observe(g, null, i);
                progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                out
            })
            .collect();
        tally_rows(g, &results, settings, target, &mut rows, notes);
    }
    rows
}

/// The generators and analyses that apply to `model` and `outcome` of those `settings`
/// asks for, and notes on what was skipped and on the strata's weights.
fn applicable(
    model: &Model,
    outcome: Option<Outcome>,
    settings: &CoverageJob,
) -> (Vec<Analysis>, Vec<Generator>, Vec<String>) {
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
            notes.push("variance and bootstrap skipped: the panel has several arms; choose a contrast B-A or one arm".into());
        }
    } else if let Some(o) = outcome {
        if analyses::outcome_panel(&model.templates, o).is_none() {
            analyses.retain(|a| *a == Analysis::Compare);
            notes.push("variance and bootstrap skipped: the contrast's arms do not have the same cells; simulating unpaired cells is not supported yet".into());
        }
    }
    if !model.weights().is_empty() {
        let w: Vec<String> = model
            .strata
            .iter()
            .zip(model.weights())
            .map(|(s, w)| {
                format!(
                    "{} {}",
                    s.name,
                    crate::table::format_number(*w, crate::table::Precision::Auto)
                )
            })
            .collect();
        notes.push(format!(
            "strata weighted ({}): every analysis combines the simulated strata with them, and the truth is the weighted mean of the true stratum means",
            w.join(", ")
        ));
    }
    (analyses, generators, notes)
}

/// The rows of generator `g` from its studies' `results` (observations, and the analyses
/// that failed), and a note for an analysis that failed on every study.
fn tally_rows(
    g: Generator,
    results: &[Observed],
    settings: &CoverageJob,
    target: &Target,
    rows: &mut Vec<Row>,
    notes: &mut Vec<String>,
) {
    // (analysis, statistic, kind) → (hits, n), in order of first observation.
    let mut keys: Vec<(&'static str, String, Kind)> = Vec::new();
    let mut counts: Vec<(u64, u64)> = Vec::new();
    let mut errors: std::collections::BTreeMap<&'static str, u64> = Default::default();
    for (obs, errs) in results {
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
            target,
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

/// The report of `model`'s study: its `rows` sorted, those short of the target in a
/// sentence each.
fn report(
    model: &Model,
    outcome_name: Option<String>,
    settings: &CoverageJob,
    target: Target,
    mut rows: Vec<Row>,
    notes: Vec<String>,
    backend: &dyn ResampleBackend,
) -> CoverageReport {
    rows.sort_by(|x, y| (x.generator, x.analysis, x.kind).cmp(&(y.generator, y.analysis, y.kind)));
    let below_target = rows
        .iter()
        .filter(|r| r.short())
        .map(|r| r.sentence(&target))
        .collect();
    CoverageReport {
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
        labels: None,
        engine: Engine::resampled(
            backend.name().to_string(),
            backend.description(),
            u64::from(settings.replicates),
            settings.seed,
            settings.confidence,
        ),
    }
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

/// Reads the panel file at `path` once and runs [`coverage_of_rows`] on its rows.
///
/// # Errors
/// Those of reading the file and of [`coverage_of_rows`].
pub fn coverage_of_file(
    path: &Path,
    opts: &LoadOptions,
    choice: &OutcomeChoice,
    settings: &CoverageJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CoverageReport> {
    settings.check()?;
    let rows = PanelRows::from_file(path, opts)?;
    coverage_of_rows(&rows, opts, choice, settings, backend, progress)
}

/// Fits the model to every arm of the panel `rows` hold and runs [`coverage`].
///
/// # Errors
/// [`Error::Usage`] for both a contrast and an arm; [`Error::Input`] for an unknown arm or
/// a contrast that is not two of the panel's arms; the errors of assembling the arms'
/// panels and of fitting (a stratum with fewer than two questions).
pub fn coverage_of_rows(
    rows: &PanelRows,
    opts: &LoadOptions,
    choice: &OutcomeChoice,
    settings: &CoverageJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CoverageReport> {
    settings.check()?;
    let fitted = fit_of_rows(rows, opts, choice)?;
    coverage(
        &fitted.model,
        fitted.outcome,
        fitted.outcome_name,
        settings,
        backend,
        progress,
    )
}

/// The model fitted to every arm of a panel, and the outcome chosen.
pub struct Fitted {
    pub model: Model,
    pub outcome: Option<Outcome>,
    pub outcome_name: Option<String>,
}

/// Fits the model to every arm of the panel `rows` hold and chooses the outcome of
/// `variance` and `bootstrap` (what [`coverage_of_rows`] runs [`coverage`] on).
///
/// # Errors
/// As [`coverage_of_rows`].
pub fn fit_of_rows(rows: &PanelRows, opts: &LoadOptions, choice: &OutcomeChoice) -> Result<Fitted> {
    let path = rows.path();
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
                "choose either a contrast or one arm, not both".into(),
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
                    Error::setting(
                        "contrast",
                        format!(
                            "expected B-A with two of the panel's arms ({}); got '{spec}'",
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
    Ok(Fitted {
        model: Model::fit(names, panels)?,
        outcome,
        outcome_name,
    })
}

#[cfg(test)]
mod tests {
    use super::grid::{Design, Score};
    use super::*;
    use crate::components::variance::analyse_panel;
    use crate::resample::CpuBackend;

    fn design(strata: Vec<usize>, t: usize, r: usize, arms: usize) -> Design {
        Design {
            label: "test".into(),
            strata,
            trajectories: t,
            reads: r,
            score: Score::F1,
            arms,
        }
    }

    fn settings(analyses: Vec<Analysis>, generator: Generator, panels: u32) -> CoverageJob {
        CoverageJob {
            analyses,
            generators: vec![generator],
            panels,
            replicates: 200,
            seed: 7,
            confidence: 0.95,
            look_every: 25,
        }
    }

    fn row<'a>(r: &'a CoverageReport, statistic: &str) -> &'a Row {
        r.rows
            .iter()
            .find(|x| x.statistic.starts_with(statistic))
            .unwrap_or_else(|| panic!("no row {statistic}: {:#?}", r.rows))
    }

    /// A weighted panel (`--weights`): the truth is `variance --weights`'s estimate of the
    /// fitted panel (Σ_d w_d m_d), not the equal-weight mean, and every simulated panel
    /// carries the weights, so the analyses run on it are the weighted ones.
    #[test]
    fn a_weighted_panel_has_a_weighted_truth_and_weighted_simulations() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/demo/panel.csv");
        let opts = LoadOptions {
            arm: Some("open".into()),
            weights: crate::panel::Weights::Given {
                source: "w.csv".into(),
                weights: vec![("hotpotqa".into(), 3.0), ("musique".into(), 1.0)],
            },
            ..Default::default()
        };
        let panel = crate::panel::load_panel(&path, &opts).unwrap();
        assert_eq!(panel.weights, [0.75, 0.25]);
        let direct = analyse_panel(&panel).unwrap();
        let model = Model::fit(vec!["open".into()], vec![panel]).unwrap();
        assert!((model.truth(0) - direct.estimate).abs() < 1e-12);
        let equal = (model.strata[0].means[0] + model.strata[1].means[0]) / 2.0;
        assert!(
            (model.truth(0) - equal).abs() > 1e-3,
            "the weights must matter here"
        );
        let sim = generate::simulate(&model, Generator::Gaussian, false, 3, 0);
        assert_eq!(sim[0].weights, [0.75, 0.25]);
    }

    /// The Gaussian generator reproduces the model's components: the mean over simulated
    /// panels of the fitted components is the input within Monte Carlo error.
    #[test]
    fn simulated_panels_reproduce_the_fitted_components() {
        let model = design(vec![60], 3, 2, 1).model();
        let n = 200;
        let mut sums = [0.0; 4];
        for i in 0..n {
            let p = &generate::simulate(&model, Generator::Gaussian, false, 3, i)[0];
            let r = analyse_panel(p).unwrap();
            let c = &r.strata[0].fit.components;
            sums[0] += c.question;
            sums[1] += c.trajectory.unwrap();
            sums[2] += c.read.unwrap();
            sums[3] += r.estimate;
        }
        let m: Vec<f64> = sums.iter().map(|s| s / n as f64).collect();
        // Inputs 0.04, 0.01, 0.02, mean 0.45 (arm 1 of 1: m − 0.05). SEs of the averages over
        // 200 panels: about 0.0006, 0.0002, 0.0002 and 0.0019; bands of about 4 SE.
        assert!((m[0] - 0.04).abs() < 0.003, "question {}", m[0]);
        assert!((m[1] - 0.01).abs() < 0.001, "trajectory {}", m[1]);
        assert!((m[2] - 0.02).abs() < 0.001, "read {}", m[2]);
        assert!((m[3] - 0.45).abs() < 0.008, "mean {}", m[3]);
        // The bounded generator keeps the mean and, within its Beta levels, the components.
        let mut q = 0.0;
        let mut mean = 0.0;
        for i in 0..n {
            let p = &generate::simulate(&model, Generator::Bounded, false, 3, i)[0];
            let r = analyse_panel(p).unwrap();
            q += r.strata[0].fit.components.question / n as f64;
            mean += r.estimate / n as f64;
        }
        assert!((mean - 0.45).abs() < 0.008, "bounded mean {mean}");
        assert!((q - 0.04).abs() < 0.004, "bounded question component {q}");
    }

    /// A known case: the normal interval of a Gaussian one-stratum panel with 200 questions
    /// covers 0.95 within Monte Carlo error (400 panels: SE 0.011), and the bootstrap's
    /// percentile interval likewise; an interval of the wrong width (z = 1, or the SE
    /// halved) would cover about 0.68 and fail.
    #[test]
    fn a_normal_interval_at_200_questions_covers_95_percent() {
        let model = design(vec![200], 2, 1, 1).model();
        let s = settings(
            vec![Analysis::Variance, Analysis::Bootstrap],
            Generator::Gaussian,
            400,
        );
        let run = || {
            coverage(
                &model,
                Some(Outcome::Arm(0)),
                None,
                &s,
                &CpuBackend::new(),
                &|_| {},
            )
            .unwrap()
        };
        let r = run();
        for name in ["estimate: ", "estimate: percentile"] {
            let x = row(&r, name);
            let p = x.rate.unwrap();
            assert_eq!(x.n, 400);
            assert!((0.915..=0.985).contains(&p), "{name}: {p}");
            assert!((x.mc_se.unwrap() - (p * (1.0 - p) / 400.0).sqrt()).abs() < 1e-12);
        }
        // The same seed gives the same report; another seed another one.
        assert_eq!(run().rows, r.rows);
    }

    /// Under the null (three arms, equal means) compare's Holm family-wise error and each
    /// pair's Wald test reject at about 5% at 100 questions, and the simultaneous intervals
    /// cover about 95% under the alternative.
    #[test]
    fn compare_holds_its_level_under_the_null_at_100_questions() {
        let model = design(vec![50, 50], 2, 1, 3).model();
        let s = settings(vec![Analysis::Compare], Generator::Gaussian, 300);
        let r = coverage(&model, None, None, &s, &CpuBackend::new(), &|_| {}).unwrap();
        let holm = row(&r, "family: Holm").rate.unwrap();
        let wald = row(&r, "pairs: Wald").rate.unwrap();
        let sim = row(&r, "family: simultaneous").rate.unwrap();
        // 300 panels: SE 0.013 at 0.05; 900 pair tests: SE 0.007.
        assert!(holm <= 0.095, "Holm FWER {holm}");
        assert!((0.02..=0.085).contains(&wald), "Wald {wald}");
        assert!((0.89..=0.99).contains(&sim), "simultaneous {sim}");
        assert_eq!(row(&r, "pairs: Wald").n, 900);
    }

    /// The sequential analysis at a design of the size (one stratum of 600 binary
    /// questions, two arms, a look every 25): the sequence covers at every look and rarely
    /// resolves a null comparison, while the Wald interval checked at every look resolves
    /// far more often than α.
    #[test]
    fn the_sequence_holds_its_level_under_continuous_monitoring() {
        let model = Design {
            score: Score::Em,
            ..design(vec![600], 1, 1, 2)
        }
        .model();
        let s = settings(vec![Analysis::Sequential], Generator::Bounded, 200);
        let outcome = Some(Outcome::Contrast { b: 1, a: 0 });
        let r = coverage(&model, outcome, None, &s, &CpuBackend::new(), &|_| {}).unwrap();
        println!("{:#?}", r.rows);
        let wald = row(&r, "Wald interval excludes 0 at some look (every 25)");
        assert_eq!(wald.n, 200);
        for rule in ["union", "rounds"] {
            let covers = row(
                &r,
                &format!("{rule}: sequence covers at every look (every 25)"),
            );
            let seq = row(
                &r,
                &format!("{rule}: sequence excludes 0 at some look (every 25)"),
            );
            assert_eq!((covers.n, seq.n), (200, 200));
            assert_eq!(covers.errors + seq.errors, 0);
            // 200 panels: SE 0.015 at 0.05.
            assert!(covers.rate.unwrap() >= 0.95, "{covers:?}");
            assert!(seq.rate.unwrap() <= 0.05 + 0.03, "{seq:?}");
        }
        assert!(wald.rate.unwrap() > 0.15, "{wald:?}");
        assert_eq!(wald.verdict, "above target");
    }

    /// The demo panel (2 arms, 446 questions): every generator and analysis runs, with
    /// truths from the fitted model; the resample generator's contrast covers its truth
    /// (the panel's own estimate) about as often as nominal.
    #[test]
    fn the_demo_panel_runs_every_generator() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/demo/panel.csv");
        let s = CoverageJob {
            analyses: Analysis::ALL.to_vec(),
            generators: Generator::ALL.to_vec(),
            panels: 20,
            replicates: 100,
            seed: 1,
            confidence: 0.95,
            look_every: 25,
        };
        let choice = OutcomeChoice {
            contrast: Some("adaptive-open".into()),
            arm: None,
        };
        let r = coverage_of_file(
            &path,
            &LoadOptions::default(),
            &choice,
            &s,
            &CpuBackend::new(),
            &|_| {},
        )
        .unwrap();
        assert_eq!(r.arms, ["open", "adaptive"]);
        assert_eq!(r.outcome.as_deref(), Some("f1: adaptive-open"));
        assert_eq!(r.scale, Scale::Bounded);
        assert_eq!(r.design[0].questions, 223);
        assert_eq!((r.design[0].trajectories, r.design[0].reads), (3, 5));
        for g in ["gaussian", "bounded", "resample"] {
            for a in ["variance", "bootstrap", "compare"] {
                assert!(
                    r.rows.iter().any(|x| x.generator == g && x.analysis == a),
                    "{g} {a}"
                );
            }
        }
        assert!(r.rows.iter().all(|x| x.errors == 0 && x.rate.is_some()));
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        // Asking for both an arm and a contrast is a usage error, an unknown arm an input error.
        let both = OutcomeChoice {
            contrast: Some("adaptive-open".into()),
            arm: Some("open".into()),
        };
        assert!(matches!(
            coverage_of_file(
                &path,
                &LoadOptions::default(),
                &both,
                &s,
                &CpuBackend::new(),
                &|_| {}
            ),
            Err(Error::Usage(_))
        ));
        let unknown = OutcomeChoice {
            contrast: None,
            arm: Some("nope".into()),
        };
        let e = coverage_of_file(
            &path,
            &LoadOptions::default(),
            &unknown,
            &s,
            &CpuBackend::new(),
            &|_| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown arm 'nope'"), "{e}");
        // Too few panels or replicates: errors about that one setting, in its own words.
        let few = CoverageJob {
            panels: 9,
            ..s.clone()
        };
        let e = few.check().unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Setting {
                    setting: "panels",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "panels: 9 simulated panels are too few for a coverage estimate; at least 10 are needed"
        );
        let few = CoverageJob {
            replicates: 99,
            ..s.clone()
        };
        assert!(matches!(
            few.check(),
            Err(Error::Setting { setting: "replicates", msg })
                if msg == "99 bootstrap replicates per simulated panel are too few; at least 100 are needed"
        ));
        // A contrast that names no two arms names the contrast.
        let odd = OutcomeChoice {
            contrast: Some("adaptive-nope".into()),
            arm: None,
        };
        let e = coverage_of_file(
            &path,
            &LoadOptions::default(),
            &odd,
            &s,
            &CpuBackend::new(),
            &|_| {},
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "contrast: unknown arm 'nope' in the contrast adaptive-nope; the panel's arms are: \
             open, adaptive"
        );
    }
}
