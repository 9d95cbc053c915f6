//! `stats mcq validate`: every format rule of an items file, all violations reported. The
//! analysis is [`ragstats_core::mcq::validate::validation_report`].

use crate::cmd::render::Emit as _;
use std::path::{Path, PathBuf};

use ragstats_core::mcq::validate::{read_items, validation_report, ItemsFile, ValidateReport};

use crate::cmd::common::Format;
use crate::cmd::render::Finished;

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

/// Reads and checks the items file.
pub fn compute(a: &Args) -> anyhow::Result<ValidateReport> {
    Ok(validation_report(&a.items, &read_items(&a.items)?))
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq validate` prints for `a`.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new().with("items", a.items.display());
    let r = &out;
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
    Ok(crate::cmd::render::finished("mcq validate", inputs, out).with_notes_after(notes))
}
