//! `stats mcq validate`: every format rule of an items file, all violations reported. The
//! analysis is [`ragstats_core::mcq::validate::validation_report`].

use std::path::{Path, PathBuf};

use ragstats_core::document::to_body;
use ragstats_core::mcq::validate::{read_items, validation_report, ItemsFile, ValidateReport};
use ragstats_core::table::Cell;
use serde_json::Value;

use crate::cmd::common::{Format, Table};
use crate::cmd::render::{Finished, Rendered};

/// Flags of `stats mcq validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Items JSONL.
    pub items: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Prints every violation on stderr as `FILE:LINE: ...`.
pub(super) fn print_violations(path: &Path, f: &ItemsFile) {
    for v in &f.violations {
        eprintln!("{}", v.display(path));
    }
}

/// What `stats mcq validate` found in one items file (exit code 2 when it has violations).
pub struct ValidateOutput {
    /// The items file.
    pub file: PathBuf,
    /// The analysis.
    pub report: ValidateReport,
}

/// Reads and checks the items file.
pub fn compute(a: &Args) -> anyhow::Result<ValidateOutput> {
    Ok(ValidateOutput {
        file: a.items.clone(),
        report: validation_report(&read_items(&a.items)?),
    })
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq validate` prints for `a`.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new().with("items", a.items.display());
    let r = &out.report;
    let notes = match r.violations.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "{}: {} violation(s) on {} line(s); {} of {} line(s) valid",
            a.items.display(),
            r.violations.len(),
            r.lines_with_violations(),
            r.valid_items,
            r.lines
        )],
    };
    Ok(Finished::new("mcq validate", inputs, out).with_notes_after(notes))
}

impl Rendered for ValidateOutput {
    fn text(&self) -> String {
        let r = &self.report;
        if !r.violations.is_empty() {
            return r
                .violations
                .iter()
                .map(|v| format!("{}\n", v.display(&self.file)))
                .collect();
        }
        let mut out = format!(
            "{}: {} item(s), no violations\n",
            self.file.display(),
            r.valid_items
        );
        let mut t = Table::new(&["group", "items"]);
        for (g, n) in &r.groups {
            t.row([Cell::text(g.as_str()), Cell::Count(*n as u64)]);
        }
        out.push_str(&t.to_text());
        out
    }

    fn csv(&self) -> Table {
        let mut t = Table::new(&["line", "id", "rule", "message"]);
        for v in &self.report.violations {
            t.row([
                Cell::Count(v.line),
                v.id.as_deref().map_or(Cell::Missing, Cell::text),
                Cell::text(v.rule),
                Cell::text(&v.message),
            ]);
        }
        t
    }

    /// The report's fields ([`ValidateReport`]).
    fn body(&self) -> Value {
        to_body(&self.report)
    }

    fn exit_code(&self) -> u8 {
        if self.report.violations.is_empty() {
            0
        } else {
            2
        }
    }
}
