//! The native module of the `ragstats` Python package (`ragstats._ragstats`): the analyses
//! of the `stats` command, on files or on data frames, returning the same JSON document
//! (`ragstats_core::document`), tables and text.
//!
//! One entry point, `call`, runs an analysis command from its flags (the Python layer,
//! `python/ragstats/`, turns keyword arguments into them: one definition of every flag and
//! default, the CLI's); frames are registered as in-memory tables under the names the flags
//! give them (`ragstats_core::panel::memory`). Every call releases the GIL while it
//! computes, stops on Ctrl-C with `KeyboardInterrupt`, reports progress to a callback,
//! turns the library's errors into `ragstats.InputError` (bad input: a `ValueError`) or
//! `ragstats.RuntimeError`, and never lets a panic cross into Python. See docs/python.md.

use std::sync::Arc;

use clap::Parser;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod compute;
mod errors;
mod front_door;
mod input;
mod output;
mod pandas;
mod spec;

use errors::{Failure, InputError, RagstatsRuntimeError};
use output::Outcome;
use ragstats_core::panel::memory::with_tables;

/// Runs the `stats` command line `argv` (program name first) in this process and returns
/// its exit code: the wheel's `stats` entry point.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| ragstats_cli::run(argv))
}

/// Runs the analysis command `argv` (`["variance", "<pandas.DataFrame>", "--contrast", …]`,
/// without the program name) with the tables `tables` (name → frame) readable under their
/// names, and returns its result. `progress(done, total)` is called while a long call runs.
#[pyfunction]
#[pyo3(signature = (argv, tables=None, progress=None))]
fn call(
    py: Python<'_>,
    argv: Vec<String>,
    tables: Option<&Bound<'_, PyDict>>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<Outcome> {
    let mut registered = Vec::new();
    for (name, frame) in tables.into_iter().flatten() {
        registered.push((name.extract::<String>()?, input::table_from_py(&frame)?));
    }
    let args: Vec<String> = std::iter::once("stats".to_string()).chain(argv).collect();
    let cli = ragstats_cli::cli::Cli::try_parse_from(&args)
        .map_err(|e| InputError::new_err(parse_error(&e)))?;
    compute::run(py, progress, move |watch| {
        let sink = watch.sink();
        let finished = with_tables(registered, || {
            ragstats_cli::cmd::resample::with_progress_sink(Arc::new(sink), || {
                ragstats_cli::cmd::outcome(&cli.command)
            })
        });
        match finished {
            Some(r) => Ok(Outcome::of(&r.map_err(Failure::from)?)),
            None => Err(Failure::Input(format!(
                "`stats {}` is not an analysis the Python package runs; call \
                 ragstats.cli([...]) to run it as a command",
                args[1..].join(" ")
            ))),
        }
    })
}

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

/// clap's refusal of a keyword's value as Python shows it: the first paragraph, without its
/// `error: ` and the `--help` hint, naming the keyword where clap names the flag
/// (`invalid value '2' for 'confidence': …`).
fn parse_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let text = e.render().to_string();
    let first = text.split("\n\n").next().unwrap_or(&text).trim();
    let mut first = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let args: Vec<&String> = [ContextKind::InvalidArg, ContextKind::PriorArg]
        .into_iter()
        .flat_map(|kind| match e.get(kind) {
            Some(ContextValue::String(a)) => vec![a],
            Some(ContextValue::Strings(a)) => a.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    for arg in args {
        // `--confidence <LEVEL>` → `confidence`.
        if let Some(long) = arg
            .split_whitespace()
            .next()
            .filter(|a| a.starts_with("--"))
        {
            let keyword = long.trim_start_matches('-').replace('-', "_");
            first = first.replace(&format!("'{arg}'"), &format!("'{keyword}'"));
        }
    }
    first
}

/// Every command's flags as JSON (for `scripts/gen-python-api.py` and its test).
#[pyfunction]
fn commands() -> String {
    spec::commands_json()
}

#[pymodule]
fn _ragstats(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("RuntimeError", m.py().get_type::<RagstatsRuntimeError>())?;
    m.add_class::<Outcome>()?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(analyse, m)?)?;
    m.add_function(wrap_pyfunction!(library_analyses, m)?)?;
    m.add_function(wrap_pyfunction!(settings_schema, m)?)?;
    m.add_function(wrap_pyfunction!(commands, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
