//! `stats run-audit`: the Appendix C checks of a `stats run` output directory. The analysis
//! is [`ragstats_agent::run::audit::audit_run`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_agent::run::audit::{audit_run, RunAudit};
use ragstats_core::trajlog::read_trajectories;

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

/// Reads the run's trajectory log and audits it: the log read and its audit.
pub fn compute(a: &Args) -> anyhow::Result<(PathBuf, RunAudit)> {
    let path = if a.dir.is_dir() {
        a.dir.join("trajectories.jsonl")
    } else {
        a.dir.clone()
    };
    let logs: Vec<_> = read_trajectories(&path)?.into_iter().map(|l| l.t).collect();
    Ok((path, audit_run(&logs)))
}

/// Runs `stats run-audit`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(if a.json { Format::Json } else { Format::Table })
}

/// What `stats run-audit` prints for `a`, and its warnings for stderr.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let (file, audit) = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new().with("trajectories", file.display());
    let warnings = audit
        .warnings
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    Ok(crate::cmd::render::finished("run-audit", inputs, audit).with_notes_after(warnings))
}

/// Prints each warning on stderr as one `warning:` line.
pub fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}
