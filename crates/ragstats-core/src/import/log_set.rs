//! Several evaluation logs read as one panel (`logs/*.eval`, a `Source::Files` of them),
//! exactly as a directory holding them is read: only logs (or directories of logs) may be
//! members of such a set.

use std::path::Path;

use super::{detect, is_log_input};
use crate::{Error, Result};

/// Checks that `p` may be one of several paths read as one set of logs.
///
/// # Errors
/// An I/O error (not found) for a path that does not exist; [`Error::Input`] naming `p`
/// when it is not an evaluation log or a directory of them (a CSV, JSONL or Parquet panel
/// is one file).
pub(super) fn check_member(p: &Path) -> Result<()> {
    if !p.exists() {
        return Err(Error::io(
            p,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    if is_log_input(p) {
        return Ok(());
    }
    Err(Error::input(
        p,
        None,
        format!(
            "several paths are read as one panel only when each is an inspect_ai log, an \
             lm-eval samples file or a directory of them; this is read as {} (give one panel \
             file, or combine panels into one first)",
            detect(p).name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panel_among_several_paths_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let log = "{\n  \"version\": 2,\n  \"status\": \"success\",\n  \"eval\": {\n    \"task\": \"x\"}}";
        std::fs::write(&a, log).unwrap();
        assert!(check_member(&a).is_ok());
        let csv = dir.path().join("panel.csv");
        std::fs::write(&csv, "dataset,question,f1\nd,q1,1\n").unwrap();
        let msg = check_member(&csv).unwrap_err().to_string();
        assert!(
            msg.contains("panel.csv") && msg.contains("read as one panel only when"),
            "{msg}"
        );
        let gone = dir.path().join("gone.eval");
        let err = check_member(&gone).unwrap_err();
        assert!(err.to_string().contains("gone.eval"), "{err}");
    }
}
