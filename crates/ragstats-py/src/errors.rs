//! The library's errors as Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

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
    /// Bad input or usage (exit code 2 in the CLI): `InputError`.
    Input(String),
    /// Anything else (exit code 1): `RuntimeError`.
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

impl From<anyhow::Error> for Failure {
    /// The CLI layer's errors: the kind is the one the CLI's exit code gives
    /// ([`ragstats_cli::exit_code`]); the message is the whole chain, as the CLI prints it.
    fn from(e: anyhow::Error) -> Failure {
        let text = e
            .chain()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(": ");
        if ragstats_cli::exit_code(&e) == 2 {
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
