//! `stats run-audit`: the Appendix C checks of a `stats run` output directory. The analysis
//! is [`ragstats_agent::run::audit::audit_run`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_agent::run::audit::run_audit;

use super::common::Format;
use super::render::Finished;

/// Flags of `stats run-audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A `stats run` output directory (or its trajectories.jsonl).
    pub dir: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(if a.json { Format::Json } else { Format::Table })
}

/// What `stats run-audit` prints for `a`: the library's [`run_audit`].
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    Ok(run_audit(&ragstats_core::panel::Source::file(&a.dir))?)
}

/// Prints each warning on stderr as one `warning:` line.
pub fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}
