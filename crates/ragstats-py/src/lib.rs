//! The native module of the `ragstats` Python package (`ragstats._ragstats`): the analyses
//! of the `stats` command, on files or on data frames, returning the same JSON document
//! (`ragstats_core::document`), tables and text.
//!
//! One entry point, `analyse`, runs an analysis through the library's front door
//! (`ragstats_core::analyses`): its inputs as values (paths, lists of logs, data frames,
//! records), its settings from the call's keywords, no command line in between (this crate
//! does not depend on the CLI). Every call releases the GIL while it computes, stops on
//! Ctrl-C with `KeyboardInterrupt`, reports progress to a callback, turns the library's
//! errors into `ragstats.InputError` (bad input: a `ValueError`) or
//! `ragstats.RuntimeError`, and never lets a panic cross into Python. See docs/python.md.

use pyo3::prelude::*;
use pyo3::types::PyDict;

mod compute;
mod errors;
mod front_door;
mod input;
mod output;
mod pandas;

use errors::{InputError, RagstatsRuntimeError};
use output::Outcome;

/// Runs the analysis `name` through the library (no command line): `inputs` maps each
/// input's role (`panel` …) to a path, a list of logs or a table; `settings` is the call's
/// keywords as a JSON object; `plot` draws the figure. See [`front_door::run`].
#[pyfunction]
#[pyo3(signature = (name, inputs, settings, plot=false, progress=None))]
fn analyse(
    py: Python<'_>,
    name: String,
    inputs: &Bound<'_, PyDict>,
    settings: String,
    plot: bool,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<Outcome> {
    let sources = front_door::sources(inputs)?;
    compute::run(py, progress, move |watch| {
        let sink = watch.sink();
        Ok(Outcome::of(&front_door::run(
            &name, &sources, &settings, plot, &sink,
        )?))
    })
}

/// The analyses [`analyse`] runs through the library, with their inputs' roles.
#[pyfunction]
fn library_analyses() -> Vec<(&'static str, Vec<&'static str>)> {
    front_door::ANALYSES
        .iter()
        .map(|(name, roles)| (*name, roles.to_vec()))
        .collect()
}

/// The JSON schema of the settings of the front door's analysis `name` (see
/// [`front_door::settings_schema`]).
#[pyfunction]
fn settings_schema(name: &str) -> Option<String> {
    front_door::settings_schema(name)
}

#[pymodule]
fn _ragstats(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("RuntimeError", m.py().get_type::<RagstatsRuntimeError>())?;
    m.add_class::<Outcome>()?;
    m.add_function(wrap_pyfunction!(analyse, m)?)?;
    m.add_function(wrap_pyfunction!(library_analyses, m)?)?;
    m.add_function(wrap_pyfunction!(settings_schema, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
