//! The import report's view (`stats import`): the logs table (`logs`), the files skipped,
//! and what was written; the CSV is the logs table.

use super::ImportReport;
use crate::table::{Span, Table, ToView, View};

/// Skipped files the text lists; the whole list is in the JSON report (a results folder can
/// hold many other files).
const SHOWN: usize = 10;

impl ToView for ImportReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut v = View::new(logs_table(r));
        v.table("logs", logs_table(r));
        if !r.skipped.is_empty() {
            let mut s = format!(
                "skipped {} file(s) of the directories searched:\n",
                r.skipped.len()
            );
            for k in r.skipped.iter().take(SHOWN) {
                s.push_str(&format!("  {} ({})\n", k.path.display(), k.reason));
            }
            v.text(s);
            if r.skipped.len() > SHOWN {
                v.text_naming(vec![
                    Span::text(format!("  … and {} more (", r.skipped.len() - SHOWN)),
                    Span::setting("format", "json"),
                    Span::text(" lists them)\n"),
                ]);
            }
        }
        let mut s = format!(
            "wrote {} rows ({} score column(s): {}) to {}\n",
            r.rows,
            r.scores.len(),
            r.scores.join(", "),
            r.out.display()
        );
        if let Some(l) = &r.ledger_out {
            s.push_str(&format!(
                "wrote {} ledger rows to {}\n",
                r.ledger_rows,
                l.display()
            ));
        }
        v.text(s);
        v
    }
}

/// One row per log: its file, format, task, arm, rows and samples left out.
fn logs_table(r: &ImportReport) -> Table {
    let mut t = Table::new(&["log", "format", "task", "arm", "rows", "left out"]);
    for l in &r.logs {
        t.row([
            l.path.display().to_string(),
            l.format.to_string(),
            l.task.clone(),
            l.arm.clone().unwrap_or_else(|| "-".into()),
            l.rows.to_string(),
            l.left_out.len().to_string(),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Skipped;
    use std::path::PathBuf;

    #[test]
    fn past_ten_skipped_files_the_text_names_the_setting_that_lists_them() {
        let r = ImportReport {
            out: PathBuf::from("p.csv"),
            ledger_out: None,
            rows: 0,
            scores: vec!["score".into()],
            ledger_rows: 0,
            logs: Vec::new(),
            notes: Vec::new(),
            skipped: (0..12)
                .map(|i| Skipped {
                    path: PathBuf::from(format!("f{i}.txt")),
                    reason: "not a log".into(),
                })
                .collect(),
        };
        let v = r.to_view();
        let text = v.to_text();
        assert!(text.contains("  f9.txt (not a log)\n  … and 2 more (format=json lists them)\n"));
        assert!(!text.contains("f10.txt"));
        let cli = v.to_text_with(&|name, value| format!("<{name} {}>", value.unwrap_or("")));
        assert!(
            cli.contains("… and 2 more (<format json> lists them)\n"),
            "{cli}"
        );
    }
}
