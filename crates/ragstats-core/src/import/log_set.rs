//! Several evaluation logs named as one: a panel command given `logs/*.eval` reads the
//! files the shell expanded as one set, exactly as it reads a directory holding them.
//!
//! The set is registered on this thread under its first path for the duration of a call
//! ([`with_log_set`]); [`super::import_logs`] and [`super::is_log_input`] look the name up,
//! so every loader that takes one path (the panel loader, `compare`'s table) reads the set.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{detect, is_log_input};
use crate::{Error, Result};

thread_local! {
    static SETS: RefCell<HashMap<PathBuf, Vec<PathBuf>>> = RefCell::new(HashMap::new());
}

/// Runs `f` with `paths[0]` standing for all of `paths` (files or directories of logs) on
/// this thread, and removes the name afterwards (also when `f` panics). With one path, `f`
/// simply runs.
///
/// # Errors
/// [`Error::Input`] naming the first path that is not an evaluation log (or a directory of
/// them) when there are several: only logs are read as one set; a CSV, JSONL or Parquet
/// panel is one file. Otherwise whatever `f` returns.
pub fn with_log_set<R, E: From<Error>>(
    paths: &[PathBuf],
    f: impl FnOnce() -> std::result::Result<R, E>,
) -> std::result::Result<R, E> {
    let [first, rest @ ..] = paths else {
        return f();
    };
    if rest.is_empty() {
        return f();
    }
    for p in paths {
        check_member(p)?;
    }
    struct Unregister(PathBuf);
    impl Drop for Unregister {
        fn drop(&mut self) {
            SETS.with(|s| s.borrow_mut().remove(&self.0));
        }
    }
    SETS.with(|s| s.borrow_mut().insert(first.clone(), paths.to_vec()));
    let _unregister = Unregister(first.clone());
    f()
}

/// The logs `name` stands for on this thread, if it names a set.
pub(super) fn members(name: &Path) -> Option<Vec<PathBuf>> {
    SETS.with(|s| s.borrow().get(name).cloned())
}

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
    fn a_set_is_named_by_its_first_path_only_inside_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        // Only the detection's first bytes matter here.
        let log = "{\n  \"version\": 2,\n  \"status\": \"success\",\n  \"eval\": {\n    \"task\": \"x\"}}";
        std::fs::write(&a, log).unwrap();
        std::fs::write(&b, log).unwrap();
        let paths = vec![a.clone(), b.clone()];
        let inside = with_log_set(&paths, || Ok::<_, Error>(members(&a))).unwrap();
        assert_eq!(inside, Some(paths));
        assert_eq!(members(&a), None);
    }

    #[test]
    fn a_panel_among_several_paths_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let log = "{\n  \"version\": 2,\n  \"status\": \"success\",\n  \"eval\": {\n    \"task\": \"x\"}}";
        std::fs::write(&a, log).unwrap();
        let csv = dir.path().join("panel.csv");
        std::fs::write(&csv, "dataset,question,f1\nd,q1,1\n").unwrap();
        let err = with_log_set(&[a.clone(), csv.clone()], || Ok::<_, Error>(())).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("panel.csv") && msg.contains("read as one panel only when"),
            "{msg}"
        );
        let gone = dir.path().join("gone.eval");
        let err = with_log_set(&[a, gone], || Ok::<_, Error>(())).unwrap_err();
        assert!(err.to_string().contains("gone.eval"), "{err}");
    }
}
