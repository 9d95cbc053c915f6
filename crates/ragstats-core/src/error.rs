//! The crate-wide error type. Messages are written for the person running an analysis,
//! from the command line or from Python: they name the file, the line or record, and what
//! was expected, in the analysis's words (an arm, a contrast, the replicates), never in a
//! front end's (a `--flag`, a keyword). An error about one setting is an
//! [`Error::Setting`] that carries the setting's name; each front end names it its own way
//! (docs/library.md, "Errors").

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
    /// A bad value of one setting of an analysis, or one that does not fit the data.
    /// `setting` is the setting's name, in snake_case: the Python keyword, and the long flag
    /// of the `stats` command with `_` written `-` (the CLI prints the flag in its place);
    /// `msg` says what is wrong in the analysis's own words, never naming a flag.
    #[error("{setting}: {msg}")]
    Setting { setting: &'static str, msg: String },
    /// Bad usage that is not about one setting (a combination of them, a missing input),
    /// in the analysis's own words.
    #[error("{0}")]
    Usage(String),
    /// An analysis that cannot be computed from the data given (e.g. too few questions).
    #[error("{0}")]
    Data(String),
    /// An error that came after notes its user should read with it (a contrast's dropped
    /// cells, before a fit refuses the questions left): shown as the error itself, the notes
    /// for a front end to show first.
    #[error("{error}")]
    Noted {
        notes: Vec<String>,
        error: Box<Error>,
    },
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

    /// Builds an [`Error::Setting`]: `msg` is wrong with the setting named `setting`.
    pub fn setting(setting: &'static str, msg: impl Into<String>) -> Self {
        Error::Setting {
            setting,
            msg: msg.into(),
        }
    }

    /// The message without the setting's name, for a parser of that setting's value (the
    /// front end names the setting itself, as clap does for a flag's value); any other
    /// error as it is displayed.
    pub fn into_detail(self) -> String {
        match self {
            Error::Setting { msg, .. } => msg,
            e => e.to_string(),
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

    /// This error with `notes` to show first (itself when there are none).
    pub fn noted(self, notes: Vec<String>) -> Error {
        if notes.is_empty() {
            return self;
        }
        Error::Noted {
            notes,
            error: Box::new(self),
        }
    }

    /// The notes to show before the error (none for most errors).
    pub fn notes(&self) -> &[String] {
        match self {
            Error::Noted { notes, .. } => notes,
            _ => &[],
        }
    }

    /// The error itself, without the notes it carries.
    pub fn without_notes(&self) -> &Error {
        match self {
            Error::Noted { error, .. } => error.without_notes(),
            e => e,
        }
    }

    /// The process exit code for this error: 2 for bad input or usage, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Noted { error, .. } => error.exit_code(),
            Error::Input { .. } | Error::Setting { .. } | Error::Usage(_) | Error::Data(_) => 2,
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 2,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error about one setting: its name, then the message in the analysis's words; bad
    /// usage (exit 2); a value parser gets the message alone.
    #[test]
    fn a_setting_error_names_its_setting() {
        let e = Error::setting("failure_score", "inf is not a finite score");
        assert_eq!(e.to_string(), "failure_score: inf is not a finite score");
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.into_detail(), "inf is not a finite score");
        let other = Error::Data("too few questions".into());
        assert_eq!(other.into_detail(), "too few questions");
    }
}
