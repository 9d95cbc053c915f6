//! The crate-wide error type. Messages are written for the person running `stats`:
//! they name the file, the line or record, and what was expected.

use std::path::PathBuf;

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error the library reports. [`Error::exit_code`] maps each to the CLI's exit code:
/// 2 for bad input or usage, 1 for runtime failures.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A malformed input file: names the file, the 1-based line (or record) and the problem.
    #[error("{}{}: {msg}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Input {
        file: PathBuf,
        line: Option<u64>,
        msg: String,
    },
    /// A bad flag value or combination of flags.
    #[error("{0}")]
    Usage(String),
    /// An analysis that cannot be computed from the data given (e.g. too few questions).
    #[error("{0}")]
    Data(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The GPU backend failed (no adapter, device lost, out of memory).
    #[error("{0}")]
    Gpu(String),
    /// Any other failure while running (network, interrupted work).
    #[error("{0}")]
    Runtime(String),
}

/// What [`Error::io`] says of a directory given where a file is expected.
pub const IS_A_DIRECTORY: &str = "is a directory; expected a file";

impl Error {
    /// Builds an [`Error::Input`] for `file` at 1-based `line`.
    pub fn input(file: impl Into<PathBuf>, line: Option<u64>, msg: impl Into<String>) -> Self {
        Error::Input {
            file: file.into(),
            line,
            msg: msg.into(),
        }
    }

    /// Wraps an I/O error with the path it concerns. A directory where a file was expected
    /// (`EISDIR`: opened for reading, or written over) is bad usage, not a failure of the
    /// machine: an [`Error::Input`] `PATH: is a directory; expected a file` (exit 2).
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::IsADirectory {
            return Error::input(path, None, IS_A_DIRECTORY);
        }
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The process exit code for this error: 2 for bad input or usage, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input { .. } | Error::Usage(_) | Error::Data(_) => 2,
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 2,
            _ => 1,
        }
    }
}
