//! `import`: evaluation logs (inspect_ai `.eval`/`.json` logs, lm-eval samples) written as
//! a panel CSV, one row per sample and epoch, and their runs' model usage as a cost ledger
//! ([`crate::import::import_logs`] reads them; `docs/import.md` says how they map).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::overwrites;
use crate::document::{Finished, Inputs};
use crate::import::{detect, import_logs, ImportReport, LogMapping};
use crate::io::write_atomic;
use crate::panel::Source;
use crate::{Error, Result};

/// The settings of [`import`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct ImportSettings {
    /// The panel CSV to write (one row per sample and epoch).
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub out: PathBuf,
    /// Also write the runs' model usage here as a cost ledger (`eval` rows, one per sample,
    /// epoch and model), for `cost`, `efficiency`, `allocate` and `plan`.
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub ledger_out: Option<PathBuf>,
    /// Every row's arm (lm-eval samples without their results file), in place of
    /// `arm_from`.
    pub arm: Option<String>,
    /// How the logs map onto the panel.
    #[serde(flatten)]
    pub logs: LogMapping,
}

/// Reads the logs `logs` holds (files, or directories searched for them) and writes their
/// panel to `settings.out` and, with `settings.ledger_out`, their cost ledger; the report
/// says what was read (each log's rows, the files of the directories that are not logs)
/// and written, and its notes (the samples left out, the rules that named the runs) follow
/// the output as `note:` lines.
///
/// Every log is read before anything is written, so a bad log leaves no file behind; each
/// file is written atomically.
///
/// # Errors
/// [`Error::Usage`] for logs given as a table or records; [`Error::Setting`] naming `out`
/// or `ledger_out` for an output that is missing, is an input log, is the other output, or
/// is a log of an input directory; those of reading the logs and of writing the files.
pub fn import(logs: &Source, settings: &ImportSettings) -> Result<Finished> {
    let Source::Files(paths) = logs else {
        return Err(Error::Usage(format!(
            "{}: logs are files: give the paths of inspect_ai or lm-eval logs, or of \
             directories holding them",
            logs.name().display()
        )));
    };
    let out = &settings.out;
    if out.as_os_str().is_empty() {
        return Err(Error::setting("out", "expected the panel file to write"));
    }
    settings.logs.check()?;
    check_output("out", out, paths)?;
    if let Some(ledger) = &settings.ledger_out {
        if let Some(why) = overwrites(ledger, "panel's file (out)", std::slice::from_ref(out)) {
            return Err(Error::setting("ledger_out", why));
        }
        check_output("ledger_out", ledger, paths)?;
    }
    let imported = import_logs(paths, &settings.logs.import_options(settings.arm.clone()))?;
    // Everything is read before anything is written: a bad log leaves no file behind.
    let csv = imported.to_csv();
    let ledger = imported.ledger_jsonl();
    write_atomic(out, |w| w.write_all(csv.as_bytes()))?;
    if let Some(l) = &settings.ledger_out {
        write_atomic(l, |w| w.write_all(ledger.as_bytes()))?;
    }
    let report = ImportReport::new(&imported, out, settings.ledger_out.as_deref());
    let notes = imported
        .notes
        .iter()
        .map(|n| format!("note: {n}"))
        .collect();
    let inputs = Inputs::new().with_all("logs", logs.names());
    Ok(Finished::new("import", inputs, report).with_notes_after(notes))
}

/// Refuses the output `path` (the setting `setting`) when it is one of the input logs, or a
/// log found inside an input directory (which writing it would overwrite).
fn check_output(setting: &'static str, path: &Path, logs: &[PathBuf]) -> Result<()> {
    if let Some(why) = overwrites(path, "input log", logs) {
        return Err(Error::setting(setting, why));
    }
    let Ok(canon) = std::fs::canonicalize(path) else {
        return Ok(());
    };
    let inside = logs
        .iter()
        .filter_map(|l| std::fs::canonicalize(l).ok())
        .any(|l| canon.starts_with(&l) && canon != l && detect(&canon).is_log());
    if inside {
        return Err(Error::setting(
            setting,
            format!(
                "{} is a log of an input directory: it would be overwritten; write to another \
                 file",
                path.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(p: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/import/logs")
            .join(p)
    }

    /// The error of a call that must fail.
    fn error(r: Result<Finished>) -> Error {
        match r {
            Err(e) => e,
            Ok(_) => panic!("the import succeeded"),
        }
    }

    /// The setting the error of a call that must fail names, and its message.
    fn setting_of(r: Result<Finished>) -> (&'static str, String) {
        match error(r) {
            Error::Setting { setting, msg } => (setting, msg),
            other => panic!("not a setting's error: {other}"),
        }
    }

    fn settings(out: &Path) -> ImportSettings {
        ImportSettings {
            out: out.to_path_buf(),
            ..Default::default()
        }
    }

    #[test]
    fn each_bad_output_names_its_setting() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.eval");
        std::fs::copy(fixture("eval/arith-model-a.eval"), &log).unwrap();
        let logs = Source::file(&log);

        assert_eq!(
            setting_of(import(&logs, &ImportSettings::default())),
            ("out", "expected the panel file to write".into())
        );

        let (s, msg) = setting_of(import(&logs, &settings(&log)));
        assert_eq!(s, "out");
        assert!(
            msg.ends_with(
                "a.eval is also the input log: it would be overwritten; write to another file"
            ),
            "{msg}"
        );

        let out = dir.path().join("p.csv");
        let same = ImportSettings {
            ledger_out: Some(out.clone()),
            ..settings(&out)
        };
        let (s, msg) = setting_of(import(&logs, &same));
        assert_eq!(s, "ledger_out");
        assert!(msg.ends_with("p.csv is also the panel's file (out): it would be overwritten; write to another file"), "{msg}");

        let onto_log = ImportSettings {
            ledger_out: Some(log.clone()),
            ..settings(&out)
        };
        let (s, msg) = setting_of(import(&logs, &onto_log));
        assert_eq!(s, "ledger_out");
        assert!(msg.contains("is also the input log"), "{msg}");

        // A log of a directory read as input is an input too.
        let (s, msg) = setting_of(import(&Source::file(dir.path()), &settings(&log)));
        assert_eq!(s, "out");
        assert!(msg.ends_with("a.eval is a log of an input directory: it would be overwritten; write to another file"), "{msg}");
        // Nothing was written.
        assert!(!out.exists());
    }

    #[test]
    fn logs_are_files_not_tables() {
        let rows = vec![serde_json::Map::new()];
        let records = Source::Records {
            name: "<records>".into(),
            rows,
        };
        let e = error(import(&records, &settings(Path::new("p.csv"))));
        assert!(matches!(e, Error::Usage(_)), "{e}");
        assert!(
            e.to_string().starts_with("<records>: logs are files"),
            "{e}"
        );
    }

    #[test]
    fn settings_read_from_json_take_the_mapping_and_the_outputs() {
        let s: ImportSettings = serde_json::from_str(
            r#"{"out": "p.csv", "ledger_out": "l.jsonl", "arm": "x",
                "arm_from": "metadata:system", "score": ["match"], "missing_as": 0}"#,
        )
        .unwrap();
        assert_eq!(s.out, Path::new("p.csv"));
        assert_eq!(s.ledger_out.as_deref(), Some(Path::new("l.jsonl")));
        let o = s.logs.import_options(s.arm.clone());
        assert_eq!(o.arm.as_deref(), Some("x"));
        assert_eq!(o.scores, vec!["match".to_string()]);
        assert_eq!(o.missing_as, Some(0.0));
        // A mapping value is refused in the command line's words.
        let e = serde_json::from_str::<ImportSettings>(r#"{"arm_from": "file"}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown source of the arm 'file'"),
            "{e}"
        );
    }

    // The fixture is an inspect `.eval` log (a zip): read with the `formats` feature only.
    #[cfg(feature = "formats")]
    #[test]
    fn the_logs_are_written_as_the_panel_and_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let (out, ledger) = (dir.path().join("p.csv"), dir.path().join("l.jsonl"));
        let s = ImportSettings {
            ledger_out: Some(ledger.clone()),
            ..settings(&out)
        };
        let logs = Source::file(fixture("eval"));
        let done = import(&logs, &s).unwrap();
        let csv = std::fs::read_to_string(&out).unwrap();
        // 20 samples × 3 epochs × 2 models, and the header.
        assert_eq!(csv.lines().count(), 121);
        assert!(
            csv.starts_with("dataset,question,trajectory,read,arm,"),
            "{csv}"
        );
        assert!(std::fs::metadata(&ledger).unwrap().len() > 0);
        let doc = done.document();
        assert_eq!(doc["rows"], 120);
        assert_eq!(doc["run"]["command"], "import");
        assert_eq!(doc["run"]["inputs"]["logs"][0], logs.names()[0]);
    }
}
