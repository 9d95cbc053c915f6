//! The analyses the Python package runs through the library's front door
//! ([`ragstats_core::analyses`]): inputs as [`Source`] values (paths, lists of logs, data
//! frames), settings deserialized from the call's keywords (JSON made by the Python layer;
//! a field's name is the keyword), no command line in between.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use serde::de::DeserializeOwned;

use ragstats_core::analyses;
use ragstats_core::document::Finished;
use ragstats_core::panel::Source;

use crate::errors::{Failure, InputError};

/// The analyses [`run`] knows (the others still go through the command line), each with
/// its inputs' roles (the Python keywords that take a path, a table or records).
pub const ANALYSES: &[(&str, &[&str])] = &[
    ("variance", &["panel", "labels"]),
    ("score-answers", &["input"]),
    ("correlate", &["file"]),
    ("mcq validate", &["items"]),
    ("mcq agree", &["annotations", "items"]),
    ("cost", &["ledger", "prices"]),
    ("subsets", &["panel", "audit"]),
    ("mcq score", &["results", "items", "shuffled"]),
    ("mcq compare", &["a", "b", "more", "items"]),
    ("mcq cost", &["ledger", "prices"]),
    ("mcq filter", &["items", "predictions"]),
    ("run-audit", &["dir"]),
    ("forecast", &["audit", "components"]),
    ("bootstrap", &["panel", "labels"]),
    ("merge", &["files"]),
    ("consistency", &["reads"]),
    ("slice", &["panel"]),
    ("simulate", &[]),
    ("coverage", &["panel", "labels"]),
    ("allocate", &["panel", "ledger", "prices"]),
    ("efficiency", &["panel", "ledger", "prices"]),
    (
        "plan",
        &["audit", "components", "labels", "ledger", "prices"],
    ),
    ("compare", &["panel", "labels", "ledger", "prices"]),
    ("import", &["logs"]),
    ("sequential", &["panel"]),
    ("gate", &["panel"]),
    ("labels sample", &["panel"]),
    ("labels agreement", &["panel", "labels"]),
];

/// The input `value` of `role` as a source: a path (`str` or `os.PathLike`), a list of
/// paths (evaluation logs read as one set), or a table (anything
/// [`crate::input::table_from_py`] reads), named `<pandas.DataFrame>` in messages.
///
/// # Errors
/// `TypeError` for anything else; those of reading a table.
pub fn source_from_py(value: &Bound<'_, PyAny>) -> PyResult<Source> {
    let path = |v: &Bound<'_, PyAny>| -> PyResult<Option<std::path::PathBuf>> {
        if v.is_instance_of::<PyString>() || v.hasattr("__fspath__")? {
            return Ok(Some(v.extract()?));
        }
        Ok(None)
    };
    if let Some(p) = path(value)? {
        return Ok(Source::file(p));
    }
    if is_records(value)? {
        return records(value);
    }
    if value.is_instance_of::<PyDict>() {
        // One mapping (prices `{"models": …, "search": …}`): one record.
        let list = PyList::new(value.py(), [value])?;
        return records(list.as_any()).map(|s| match s {
            Source::Records { rows, .. } => Source::Records {
                name: "<dict>".into(),
                rows,
            },
            other => other,
        });
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut paths = Vec::new();
        for item in value.try_iter()? {
            let item = item?;
            match path(&item)? {
                Some(p) => paths.push(p),
                None => {
                    return Err(InputError::new_err(
                        "a list is read as evaluation logs: give paths (str or os.PathLike)",
                    ))
                }
            }
        }
        if paths.is_empty() {
            return Err(InputError::new_err(
                "an empty list of logs: give at least one path",
            ));
        }
        return Ok(Source::Files(paths));
    }
    let table = crate::input::table_from_py(value)?;
    Ok(Source::table(
        format!("<{}>", crate::input::describe_type(value)?),
        table,
    ))
}

/// Whether `value` is records: a non-empty list of dicts.
fn is_records(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(list) = value.cast::<PyList>() else {
        return Ok(false);
    };
    Ok(!list.is_empty() && list.iter().all(|x| x.is_instance_of::<PyDict>()))
}

/// Records (a list of dicts, each what one JSON line holds) as a source, through JSON: the
/// Python layer's `json` module writes them as a file would hold them.
fn records(value: &Bound<'_, PyAny>) -> PyResult<Source> {
    let json = value.py().import("json")?;
    let text: String = json.call_method1("dumps", (value,))?.extract()?;
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(&text).map_err(|e| InputError::new_err(format!("records: {e}")))?;
    Ok(Source::Records {
        name: "<records>".into(),
        rows,
    })
}

/// The inputs of a call by role (`panel`, `ledger` …).
pub fn sources(inputs: &Bound<'_, PyDict>) -> PyResult<HashMap<String, Source>> {
    let mut out = HashMap::new();
    for (role, value) in inputs {
        out.insert(role.extract::<String>()?, source_from_py(&value)?);
    }
    Ok(out)
}

/// The settings `json` (the call's keywords) as `S`; an error names the keyword.
fn settings<S: DeserializeOwned>(json: &str) -> Result<S, Failure> {
    let de = &mut serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let keyword = e.path().to_string();
        let msg = e.into_inner().to_string();
        // serde_json appends where in the JSON text it failed, which the caller never wrote.
        let msg = match msg.rfind(" at line ") {
            Some(at) => msg[..at].to_string(),
            None => msg,
        };
        // A flattened field (the panel's settings inside an analysis's) has no path: the
        // keyword is the one that fails alone.
        let keyword = match keyword.as_str() {
            "." => failing_keyword::<S>(json).unwrap_or(keyword),
            _ => keyword,
        };
        let text = if keyword == "." {
            msg
        } else {
            format!("{keyword}: {msg}")
        };
        // serde's words for a value of the wrong kind (a bool for a text setting).
        if text.contains("invalid type: ") {
            Failure::Type(text)
        } else {
            Failure::Input(text)
        }
    })
}

/// The first keyword of the settings object `json` whose value alone fails to deserialize
/// as `S`.
fn failing_keyword<S: DeserializeOwned>(json: &str) -> Option<String> {
    let serde_json::Value::Object(all) = serde_json::from_str(json).ok()? else {
        return None;
    };
    all.into_iter().find_map(|(k, v)| {
        let one = serde_json::Value::Object([(k.clone(), v)].into_iter().collect());
        serde_json::from_value::<S>(one).is_err().then_some(k)
    })
}

/// The JSON schema of the settings of the analysis `name` (what `scripts/gen-python-api.py`
/// types its keywords by); `None` for an analysis without settings or outside the front door.
pub fn settings_schema(name: &str) -> Option<String> {
    let schema = match name {
        "variance" => schemars::schema_for!(analyses::VarianceSettings),
        "score-answers" => schemars::schema_for!(analyses::ScoreAnswersSettings),
        "correlate" => schemars::schema_for!(analyses::CorrelateSettings),
        "mcq agree" => schemars::schema_for!(analyses::McqAgreeSettings),
        "cost" => schemars::schema_for!(analyses::CostSettings),
        "subsets" => schemars::schema_for!(analyses::SubsetsSettings),
        "mcq score" => schemars::schema_for!(analyses::McqScoreSettings),
        "mcq compare" => schemars::schema_for!(analyses::McqCompareSettings),
        "mcq filter" => schemars::schema_for!(analyses::McqFilterSettings),
        "forecast" => schemars::schema_for!(analyses::ForecastSettings),
        "bootstrap" => schemars::schema_for!(analyses::BootstrapSettings),
        "merge" => schemars::schema_for!(analyses::MergeSettings),
        "consistency" => schemars::schema_for!(analyses::ConsistencySettings),
        "slice" => schemars::schema_for!(analyses::SliceSettings),
        "simulate" => schemars::schema_for!(analyses::SimulateSettings),
        "coverage" => schemars::schema_for!(analyses::CoverageSettings),
        "allocate" => schemars::schema_for!(analyses::AllocateSettings),
        "efficiency" => schemars::schema_for!(analyses::EfficiencySettings),
        "plan" => schemars::schema_for!(analyses::PlanSettings),
        "compare" => schemars::schema_for!(analyses::CompareSettings),
        "import" => schemars::schema_for!(analyses::ImportSettings),
        "sequential" => schemars::schema_for!(analyses::SequentialSettings),
        "gate" => schemars::schema_for!(analyses::GateSettings),
        "labels sample" => schemars::schema_for!(analyses::LabelsSampleSettings),
        "labels agreement" => schemars::schema_for!(analyses::LabelsAgreementSettings),
        _ => return None,
    };
    serde_json::to_string(&schema).ok()
}

/// The input `role` of `inputs`.
fn input<'a>(inputs: &'a HashMap<String, Source>, role: &str) -> Result<&'a Source, Failure> {
    inputs
        .get(role)
        .ok_or_else(|| Failure::Input(format!("missing input: {role}")))
}

/// Runs the analysis `name` on `inputs` with the settings `json`; `plot` draws its figure;
/// `progress(done, total)` hears how far a long one is.
pub fn run(
    name: &str,
    inputs: &HashMap<String, Source>,
    json: &str,
    plot: bool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Finished, Failure> {
    let progress = |_work: &str, done: u64, total: u64| progress(done, total);
    let engines = ragstats_gpu::Engines;
    match name {
        "variance" => {
            let s: analyses::VarianceSettings = settings(json)?;
            let panel = input(inputs, "panel")?;
            let caption = |outcome: &str| ragstats_plot::Caption {
                panel: panel.name().display().to_string(),
                outcome: outcome.to_string(),
                bootstrap: None,
            };
            let draw = |v: &ragstats_core::components::variance::PanelVariance| {
                ragstats_plot::variance(&v.variance, &caption(&v.variance.outcome))
            };
            Ok(analyses::variance(
                panel,
                inputs.get("labels"),
                &s,
                plot.then_some(&draw as _),
            )?)
        }
        "score-answers" => Ok(analyses::score_answers(
            input(inputs, "input")?,
            &settings::<analyses::ScoreAnswersSettings>(json)?,
        )?),
        "correlate" => {
            let s: analyses::CorrelateSettings = settings(json)?;
            let table = input(inputs, "file")?;
            let draw = |r: &ragstats_core::correlate::all_pairs::CorrelateReport| {
                let caption =
                    ragstats_plot::Caption::for_correlate(&table.name().display().to_string(), &s);
                ragstats_plot::correlate(&r.pairs, &r.matrix.x, &r.matrix.y, r.method, &caption)
            };
            Ok(analyses::correlate(
                table,
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "mcq validate" => Ok(analyses::mcq_validate(input(inputs, "items")?)?),
        "mcq agree" => Ok(analyses::mcq_agree(
            input(inputs, "annotations")?,
            inputs.get("items"),
            &settings::<analyses::McqAgreeSettings>(json)?,
        )?),
        "cost" => Ok(analyses::cost(
            input(inputs, "ledger")?,
            inputs.get("prices"),
            &settings::<analyses::CostSettings>(json)?,
        )?),
        "subsets" => {
            let s: analyses::SubsetsSettings = settings(json)?;
            let panel = input(inputs, "panel")?;
            let draw = |a: &ragstats_core::allocation::subsets::SubsetAnalysis| {
                let caption = ragstats_plot::Caption {
                    panel: panel.name().display().to_string(),
                    outcome: a.outcome.clone(),
                    bootstrap: Some((
                        a.report.seed,
                        u64::from(a.report.range[1] - a.report.range[0]),
                    )),
                };
                ragstats_plot::subsets(&a.report, &caption)
            };
            Ok(analyses::subsets(
                panel,
                input(inputs, "audit")?,
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "mcq score" => {
            let s: analyses::McqScoreSettings = settings(json)?;
            let results = input(inputs, "results")?;
            let draw = |r: &ragstats_core::mcq::score::ScoreReport| {
                let caption = ragstats_plot::Caption::for_mcq(
                    results.name().display().to_string(),
                    format!("{}, {}", r.model, r.prompt),
                    &s.boot,
                );
                ragstats_plot::mcq_score(&r.scores, r.positions.as_deref(), &caption)
            };
            Ok(analyses::mcq_score(
                results,
                inputs.get("items"),
                inputs.get("shuffled"),
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "mcq compare" => {
            let s: analyses::McqCompareSettings = settings(json)?;
            let (a, b) = (input(inputs, "a")?, input(inputs, "b")?);
            // MORE: each further path is a results file of its own.
            let more: Vec<Source> = match inputs.get("more") {
                Some(Source::Files(paths)) => paths.iter().map(Source::file).collect(),
                Some(other) => vec![other.clone()],
                None => Vec::new(),
            };
            let files: Vec<Source> = [a.clone(), b.clone()].into_iter().chain(more).collect();
            let draw = |r: &ragstats_core::mcq::compare::CompareReport| {
                let caption = ragstats_plot::Caption::for_mcq(
                    format!("{} vs {}", a.name().display(), b.name().display()),
                    String::new(),
                    &s.boot,
                );
                ragstats_plot::mcq_compare_report(r, &caption)
            };
            Ok(analyses::mcq_compare(
                &files,
                inputs.get("items"),
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "mcq cost" => Ok(analyses::mcq_cost(
            input(inputs, "ledger")?,
            inputs.get("prices"),
        )?),
        "mcq filter" => {
            // Each prediction path is a results file of its own.
            let predictions: Vec<Source> = match input(inputs, "predictions")? {
                Source::Files(paths) => paths.iter().map(Source::file).collect(),
                other => vec![other.clone()],
            };
            Ok(analyses::mcq_filter(
                input(inputs, "items")?,
                &predictions,
                &settings::<analyses::McqFilterSettings>(json)?,
            )?)
        }
        "run-audit" => Ok(ragstats_agent::run::audit::run_audit(input(
            inputs, "dir",
        )?)?),
        "forecast" => {
            let s: analyses::ForecastSettings = settings(json)?;
            let (audit, components) = (inputs.get("audit"), inputs.get("components"));
            let name = audit.or(components).map(|a| a.name().display().to_string());
            let draw =
                |a: &ragstats_core::components::forecast::Audit,
                 r: &ragstats_core::components::forecast::ForecastReport| {
                    let caption = ragstats_plot::Caption::for_panel(
                        name.as_deref().unwrap_or_default(),
                        &s.panel,
                        None,
                    );
                    ragstats_plot::forecast_report(a, r, &caption)
                };
            Ok(analyses::forecast(
                audit,
                components,
                &s,
                plot.then_some(&draw as _),
            )?)
        }
        "bootstrap" => Ok(analyses::bootstrap(
            input(inputs, "panel")?,
            inputs.get("labels"),
            &settings::<analyses::BootstrapSettings>(json)?,
            &engines,
            &progress,
        )?),
        "merge" => Ok(analyses::merge(
            input(inputs, "files")?,
            &settings::<analyses::MergeSettings>(json)?,
        )?),
        "consistency" => {
            let s: analyses::ConsistencySettings = settings(json)?;
            let reads = input(inputs, "reads")?;
            let draw = |r: &ragstats_core::components::consistency::ConsistencyReport| {
                let caption = ragstats_plot::Caption::for_panel(
                    &reads.name().display().to_string(),
                    &s.panel,
                    Some((r.seed, u64::from(r.replicates))),
                );
                ragstats_plot::consistency(
                    &r.disagreement,
                    &r.precision,
                    r.se_ratio.as_ref(),
                    &caption,
                )
            };
            Ok(analyses::consistency(
                reads,
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "slice" => Ok(analyses::slice(
            input(inputs, "panel")?,
            &settings::<analyses::SliceSettings>(json)?,
        )?),
        "simulate" => Ok(analyses::simulate(
            &settings::<analyses::SimulateSettings>(json)?,
        )?),
        "coverage" => Ok(analyses::coverage(
            inputs.get("panel"),
            inputs.get("labels"),
            &settings::<analyses::CoverageSettings>(json)?,
            &engines,
            &progress,
        )?),
        "allocate" => {
            let s: analyses::AllocateSettings = settings(json)?;
            let panel = input(inputs, "panel")?;
            let draw = |outcome: &str, r: &ragstats_core::allocation::allocate::AllocateReport| {
                let e = &r.engine;
                let caption = ragstats_plot::Caption {
                    panel: panel.name().display().to_string(),
                    outcome: outcome.to_string(),
                    bootstrap: Some((e.seed.unwrap_or_default(), e.replicates.unwrap_or_default())),
                };
                ragstats_plot::allocate(r, &caption)
            };
            Ok(analyses::allocate(
                panel,
                input(inputs, "ledger")?,
                input(inputs, "prices")?,
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "efficiency" => {
            let s: analyses::EfficiencySettings = settings(json)?;
            let panel = input(inputs, "panel")?;
            let draw =
                |outcome: &str,
                 r: &ragstats_core::allocation::one_read_ledger::EfficiencyReport| {
                    let e = &r.engine;
                    let caption = ragstats_plot::Caption {
                        panel: panel.name().display().to_string(),
                        outcome: outcome.to_string(),
                        bootstrap: Some((
                            e.seed.unwrap_or_default(),
                            e.replicates.unwrap_or_default(),
                        )),
                    };
                    ragstats_plot::efficiency(&r.analysis, &caption)
                };
            Ok(analyses::efficiency(
                panel,
                input(inputs, "ledger")?,
                inputs.get("prices"),
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "compare" => {
            let s: analyses::CompareSettings = settings(json)?;
            let panel = input(inputs, "panel")?;
            let draw = |r: &ragstats_core::compare::CompareReport| {
                let caption = ragstats_plot::Caption {
                    panel: panel.name().display().to_string(),
                    outcome: r.metric.clone(),
                    bootstrap: Some((s.resample.seed, u64::from(s.resample.replicates))),
                };
                ragstats_plot::compare(r, &caption)
            };
            Ok(analyses::compare(
                panel,
                inputs.get("labels"),
                inputs.get("ledger"),
                inputs.get("prices"),
                &s,
                &engines,
                &progress,
                plot.then_some(&draw as _),
            )?)
        }
        "plan" => Ok(analyses::plan(
            inputs.get("audit"),
            inputs.get("components"),
            inputs.get("labels"),
            inputs.get("ledger"),
            inputs.get("prices"),
            &settings::<analyses::PlanSettings>(json)?,
            &engines,
            &progress,
        )?),
        "import" => Ok(analyses::import(
            input(inputs, "logs")?,
            &settings::<analyses::ImportSettings>(json)?,
        )?),
        "sequential" => Ok(analyses::sequential(
            input(inputs, "panel")?,
            &settings::<analyses::SequentialSettings>(json)?,
        )?),
        "gate" => Ok(analyses::gate(
            input(inputs, "panel")?,
            &settings::<analyses::GateSettings>(json)?,
            &engines,
            &progress,
        )?),
        "labels sample" => Ok(analyses::labels_sample(
            input(inputs, "panel")?,
            &settings::<analyses::LabelsSampleSettings>(json)?,
        )?),
        "labels agreement" => Ok(analyses::labels_agreement(
            input(inputs, "panel")?,
            input(inputs, "labels")?,
            &settings::<analyses::LabelsAgreementSettings>(json)?,
        )?),
        other => Err(Failure::Input(format!(
            "`{other}` is not an analysis of the library's front door (these are: {})",
            ANALYSES
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
