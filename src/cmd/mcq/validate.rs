//! `stats mcq validate`: every format rule of an items file, all violations reported. The
//! analysis is [`ragstats_core::mcq::validate::validation_report`].

use crate::cmd::render::Emit as _;
use std::path::{Path, PathBuf};

use ragstats_core::analyses::mcq_validate;
use ragstats_core::mcq::validate::ItemsFile;
use ragstats_core::panel::Source;

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

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq validate` prints for `a`: the library's [`mcq_validate`].
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    Ok(mcq_validate(&Source::file(&a.items))?)
}
