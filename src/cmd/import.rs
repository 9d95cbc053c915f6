//! `stats import`: inspect_ai logs and lm-evaluation-harness samples as a panel CSV (and the
//! inspect runs' token usage as a cost ledger). The mapping flags ([`ImportFlags`], in
//! `common.rs`) are also every panel command's, which read such logs directly
//! (`docs/import.md`).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::import::{import_logs, ImportReport};
use ragstats_core::io::{refuse_overwriting_inputs, write_atomic};

use super::common::{Format, ImportFlags};
use super::render::Finished;

/// Flags of `stats import`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Logs: inspect_ai `.eval` or `.json` logs, lm-eval `samples_<task>_<date>.jsonl`
    /// files, or directories searched recursively for them (e.g. lm-eval's `output/`, with
    /// a folder per model; told apart by content).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// The panel CSV to write (one row per sample and epoch).
    #[arg(long, value_name = "FILE.csv")]
    pub out: PathBuf,
    /// Also write the runs' model usage as a cost ledger (`eval` rows, one per sample,
    /// epoch and model), for `stats cost`, `efficiency`, `allocate` and `plan`.
    #[arg(long, value_name = "FILE.jsonl")]
    pub ledger_out: Option<PathBuf>,
    /// Label every row's arm NAME (lm-eval samples without their results file), in place
    /// of `--arm-from`.
    #[arg(long, value_name = "NAME")]
    pub arm: Option<String>,
    #[command(flatten)]
    pub map: ImportFlags,
    /// Output format of the summary.
    #[arg(long, default_value = "table", value_parser = Format::parser(&[Format::Table, Format::Json]))]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// Reads the logs and writes the panel (and ledger): what `stats import` prints, as a value
/// (`ragstats.read_logs` reads the panel it wrote).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let mut outputs = vec![("--out", args.out.as_path())];
    if let Some(l) = &args.ledger_out {
        outputs.push(("--ledger-out", l.as_path()));
    }
    let inputs: Vec<(&str, &std::path::Path)> = args
        .logs
        .iter()
        .map(|p| ("input log", p.as_path()))
        .collect();
    refuse_overwriting_inputs(&outputs, &inputs)?;
    // A directory given as a log may hold the outputs' names too.
    for (role, out) in &outputs {
        if let Ok(canon) = std::fs::canonicalize(out) {
            if args
                .logs
                .iter()
                .filter_map(|l| std::fs::canonicalize(l).ok())
                .any(|l| {
                    canon.starts_with(&l)
                        && canon != l
                        && ragstats_core::import::detect(&canon).is_log()
                })
            {
                return Err(super::UsageError(format!(
                    "{role} {} is a log of the input directory: it would be overwritten; write to another file",
                    out.display()
                ))
                .into());
            }
        }
    }
    let imported = import_logs(&args.logs, &args.map.options(args.arm.clone()))?;
    // Everything is read before anything is written: a bad log leaves no file behind.
    let csv = imported.to_csv();
    let ledger = imported.ledger_jsonl();
    write_atomic(&args.out, |w| w.write_all(csv.as_bytes()))?;
    if let Some(l) = &args.ledger_out {
        write_atomic(l, |w| w.write_all(ledger.as_bytes()))?;
    }
    let report = ImportReport::new(&imported, &args.out, args.ledger_out.as_deref());
    let inputs = ragstats_core::document::Inputs::new()
        .with_all("logs", args.logs.iter().map(|p| p.display()));
    let mut finished = Finished::new("import", inputs, report);
    finished.notes_after = imported
        .notes
        .iter()
        .map(|n| format!("note: {n}"))
        .collect();
    Ok(finished)
}
