//! The library's errors as Python exceptions, and the one way a computation runs: without
//! the GIL, with panics caught.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _ragstats,
    InputError,
    PyValueError,
    "Bad input: a malformed file or frame (naming the file:line or row), a bad argument."
);
create_exception!(
    _ragstats,
    RagstatsRuntimeError,
    PyRuntimeError,
    "A failure while running: the GPU, an I/O error, an analysis that cannot be computed."
);

/// What went wrong in a computation, before it becomes an exception.
pub enum Failure {
    /// Bad input or usage (exit code 2 in the CLI).
    Input(String),
    /// Anything else (exit code 1).
    Runtime(String),
}

impl From<ragstats_core::Error> for Failure {
    fn from(e: ragstats_core::Error) -> Failure {
        let text = e.to_string();
        if e.exit_code() == 2 {
            Failure::Input(text)
        } else {
            Failure::Runtime(text)
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Input(m) => InputError::new_err(m),
            Failure::Runtime(m) => RagstatsRuntimeError::new_err(m),
        }
    }
}

/// Runs `f` with the GIL released; its error becomes `InputError`/`RuntimeError`, a panic
/// `RuntimeError` naming it (never an abort of the interpreter).
pub fn guard<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Failure> + Send,
) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.into()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            Err(RagstatsRuntimeError::new_err(format!(
                "internal error (a bug in ragstats; please report it): {what}"
            )))
        }
    }
}
