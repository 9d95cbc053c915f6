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
    /// A keyword given a value of the wrong type (`contrast=True`): `TypeError`.
    Type(String),
}

/// One error of a chain as Python shows it: an error about a setting as `keyword: message`
/// (a setting's name is the keyword that fills it).
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    match e
        .downcast_ref::<ragstats_core::Error>()
        .map(ragstats_core::Error::without_notes)
    {
        Some(ragstats_core::Error::Setting { setting, msg }) => {
            format!("{setting}: {msg}")
        }
        _ => e.to_string(),
    }
}

impl From<ragstats_core::Error> for Failure {
    fn from(e: ragstats_core::Error) -> Failure {
        let mut text = describe(&e);
        // The notes the error came after (a contrast's dropped cells) follow it, one a line.
        for note in e.notes() {
            text.push('\n');
            text.push_str(note);
        }
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
            Failure::Type(m) => pyo3::exceptions::PyTypeError::new_err(m),
        }
    }
}
