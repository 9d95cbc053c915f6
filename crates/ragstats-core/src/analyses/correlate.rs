//! `correlate`: Pearson, Spearman, point-biserial or Kendall correlations of every x × y
//! column pair, with p-values, Fisher-z and bootstrap intervals and permutation tests
//! ([`crate::correlate::all_pairs::correlate`]).

use serde::Deserialize;

use super::{source_input, Draw, Engines, Progress};
use crate::correlate::all_pairs::{CorrelateJob, CorrelateReport, CorrelateStage};
use crate::correlate::analysis::{bootstrap_calls, is_rank};
use crate::correlate::{load_source, prepare, LoadSpec, Method, Missing};
use crate::document::{Figure, Finished, Inputs};
use crate::panel::Source;
use crate::resample::{Backend, ResampleSettings, Resampling};
use crate::{Error, Result};

/// The settings of [`correlate`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct CorrelateSettings {
    /// The x columns.
    #[serde(deserialize_with = "columns")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub x: Vec<String>,
    /// The y columns.
    #[serde(deserialize_with = "columns")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub y: Vec<String>,
    /// The coefficient (default Pearson).
    pub method: Method,
    /// Resample whole clusters (rows sharing this column's value).
    pub cluster: Option<String>,
    /// Average the rows of each unit (value of this column) into one row first.
    pub aggregate_by: Option<String>,
    /// A row with a missing cell: an error (the default), or dropped from every pair.
    pub missing: Missing,
    /// Random permutations of the y rows (0: no permutation test).
    pub permutations: u32,
    /// The bootstrap (replicates 0: none), its seed, backend and confidence level.
    #[serde(flatten)]
    pub resample: ResampleSettings,
}

/// Column names as a list, or as text `a,b,c`.
fn columns<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Text(String),
        List(Vec<String>),
    }
    Ok(match Form::deserialize(d)? {
        Form::Text(t) => t.split(',').map(|c| c.trim().to_string()).collect(),
        Form::List(l) => l,
    })
}

/// The most permutations one run may ask for.
pub const MAX_PERMUTATIONS: u32 = 10_000_000;

/// The correlations of the table `table` holds, on `engines`; `draw` adds the figure.
///
/// # Errors
/// [`Error::Setting`] for a bootstrap of one replicate, permutations beyond
/// [`MAX_PERMUTATIONS`] or with clusters (rows of one cluster are not exchangeable); those of
/// reading the table and of the analysis.
pub fn correlate(
    table: &Source,
    settings: &CorrelateSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: Draw<'_, CorrelateReport>,
) -> Result<Finished> {
    let (report, notes) = correlate_report(table, settings, engines, progress)?;
    let figure = match draw {
        Some(draw) => Some(Figure::new(draw(&report)?, table.paths())),
        None => None,
    };
    let inputs = source_input(Inputs::new(), "table", table);
    Ok(Finished::new("correlate", inputs, report)
        .with_figure(figure)
        .with_notes_after(notes))
}

/// The report of [`correlate`] and its notes (rows dropped for missing values), for a front
/// end that shows it its own way (`stats report`).
///
/// # Errors
/// As [`correlate`].
pub fn correlate_report(
    table: &Source,
    settings: &CorrelateSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<(CorrelateReport, Vec<String>)> {
    let s = settings;
    s.resample.check_confidence()?;
    if s.resample.replicates == 1 {
        return Err(Error::setting(
            "replicates",
            "must be 0 (no bootstrap) or at least 2",
        ));
    }
    if s.permutations > MAX_PERMUTATIONS {
        return Err(Error::setting(
            "permutations",
            format!("{}: at most {MAX_PERMUTATIONS}", s.permutations),
        ));
    }
    if s.permutations > 0 && s.cluster.is_some() {
        return Err(Error::setting(
            "permutations",
            "cannot be used with cluster: rows of one cluster are not exchangeable; \
             correlate cluster means (aggregate_by) instead",
        ));
    }
    let data = load_source(
        table,
        &LoadSpec {
            x: s.x.clone(),
            y: s.y.clone(),
            cluster: s.cluster.clone(),
            aggregate_by: s.aggregate_by.clone(),
            missing: s.missing,
        },
    )?;
    let mut notes = Vec::new();
    if data.dropped > 0 {
        notes.push(format!(
            "note: dropped {} of {} rows with missing values",
            data.dropped, data.rows_read
        ));
    }
    let prep = prepare(&data, s.method)?;
    let clusters = data.clusters.as_ref().map(|(_, names)| names.len());
    let reps = u64::from(s.resample.replicates);
    let calls = bootstrap_calls(&prep, clusters.is_some()) as u64;
    // No engine is started for a cluster bootstrap the analysis refuses (fewer than 2
    // clusters), nor for the rank methods, whose bootstrap re-ranks every resample on the CPU.
    let engine = (reps > 0 && clusters.is_none_or(|c| c >= 2) && !is_rank(s.method))
        .then(|| {
            let units = clusters.map_or(data.n() as u64, |c| c as u64);
            engines.resampler(s.resample.backend, calls * reps * units)
        })
        .transpose()?;
    // Kendall's S is not a sum: its permutations run on the CPU, so no GPU is started.
    let permuter = if s.permutations > 0 && s.method != Method::Kendall {
        engines.permuter(s.resample.backend)?
    } else {
        None
    };
    let job = CorrelateJob {
        resampling: Resampling {
            seed: s.resample.seed,
            replicates: s.resample.replicates,
            confidence: s.resample.confidence,
        },
        permutations: s.permutations,
        gpu_requested: s.resample.backend == Backend::Gpu,
    };
    let perms = u64::from(s.permutations);
    let stage = |stage: CorrelateStage, d: u64| match stage {
        CorrelateStage::Bootstrap => progress("bootstrap", d, calls * reps),
        CorrelateStage::Permutations => progress("permutations", d, perms),
    };
    let report = crate::correlate::all_pairs::correlate(
        &data,
        &prep,
        &job,
        engine.as_deref(),
        permuter.as_deref(),
        &stage,
    )?;
    Ok((report, notes))
}
