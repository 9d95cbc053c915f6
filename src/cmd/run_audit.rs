//! `stats run-audit`: the Appendix C checks of a `stats run` output directory. The analysis
//! is [`ragstats_agent::run::audit::audit_run`].

use std::path::PathBuf;

use ragstats_agent::run::audit::{audit_run, RunAudit};
use ragstats_core::document::{to_body, Engine, Report};
use ragstats_core::trajlog::read_trajectories;

use super::common::{Format, Table};
use super::render::{Finished, Rendered};

mod table;

pub use table::{audit_table, totals_lines, warn, AUDIT_NOTE};

/// Flags of `stats run-audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A `stats run` output directory (or its trajectories.jsonl).
    pub dir: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `stats run-audit` found in one trajectory log.
pub struct RunAuditOutput {
    /// The trajectory log read.
    pub file: PathBuf,
    /// The analysis.
    pub audit: RunAudit,
}

/// Reads the run's trajectory log and audits it.
pub fn compute(a: &Args) -> anyhow::Result<RunAuditOutput> {
    let path = if a.dir.is_dir() {
        a.dir.join("trajectories.jsonl")
    } else {
        a.dir.clone()
    };
    let logs: Vec<_> = read_trajectories(&path)?.into_iter().map(|l| l.t).collect();
    Ok(RunAuditOutput {
        audit: audit_run(&logs),
        file: path,
    })
}

/// Runs `stats run-audit`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(if a.json { Format::Json } else { Format::Table })
}

/// What `stats run-audit` prints for `a`, and its warnings for stderr.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new().with("trajectories", out.file.display());
    let warnings = out
        .audit
        .warnings
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    Ok(Finished::new("run-audit", inputs, out).with_notes_after(warnings))
}

impl Rendered for RunAuditOutput {
    fn text(&self) -> String {
        let (head, cells) = audit_table(&self.audit.rows);
        let mut t = Table::new(&head);
        for r in cells {
            t.row(r);
        }
        let mut out = t.to_text();
        out.push_str(AUDIT_NOTE);
        out.push('\n');
        for l in totals_lines(&self.audit.totals) {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }

    fn csv(&self) -> Table {
        let (head, cells) = audit_table(&self.audit.rows);
        let mut t = Table::new(&head);
        for r in cells {
            t.row(r);
        }
        t
    }

    /// The document body of [`RunAudit`]; the log read is `run.inputs.trajectories`.
    fn body(&self) -> serde_json::Value {
        to_body(&self.audit)
    }

    fn engine(&self) -> Engine {
        self.audit.engine()
    }
}
