//! The native module of the `ragstats` Python package (`ragstats._ragstats`): the same
//! analyses as the `stats` command, on files or on data frames, returning the same JSON
//! document (`ragstats_core::document`), tables and text. The Python layer
//! (`python/ragstats/`) wraps these functions with keyword arguments, docstrings and the
//! `Result` class; see docs/python.md.
//!
//! Every function releases the GIL while it computes, turns the library's errors into
//! `ragstats.InputError` (bad input: a `ValueError`) or `ragstats.RuntimeError`, and never
//! lets a panic cross into Python.

use pyo3::prelude::*;

mod compute;
mod errors;
mod input;
mod output;
mod spec;

use errors::{InputError, RagstatsRuntimeError};
use output::Outcome;

/// Runs the `stats` command line `argv` (program name first) in this process and returns
/// its exit code: the wheel's `stats` entry point.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| ragstats_cli::run(argv))
}

/// `stats variance`: nested variance components per stratum, pooled, and the combined
/// estimate, of a panel given as a path or a data frame.
#[pyfunction]
#[pyo3(signature = (panel, *, metric=None, contrast=None, arm=None, drop_incomplete=false, selector=None))]
fn variance(
    py: Python<'_>,
    panel: &Bound<'_, PyAny>,
    metric: Option<String>,
    contrast: Option<String>,
    arm: Option<String>,
    drop_incomplete: bool,
    selector: Option<String>,
) -> PyResult<Outcome> {
    let opts = input::panel_options(metric, contrast, arm, drop_incomplete, selector)?;
    let source = input::PanelSource::from_py(panel)?;
    let inputs = ragstats_core::document::Inputs::new().with("panel", source.describe());
    compute::run(py, None, move |_| {
        let panel = source.load(&opts.load_options(true))?;
        let out = ragstats_cli::cmd::variance::output_for(panel)?;
        Ok(Outcome::of(&out, "variance", inputs))
    })
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
    m.add_function(wrap_pyfunction!(variance, m)?)?;
    m.add_function(wrap_pyfunction!(commands, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
