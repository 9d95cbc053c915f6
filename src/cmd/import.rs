//! `stats import`: inspect_ai logs and lm-evaluation-harness samples as a panel CSV (and the
//! inspect runs' token usage as a cost ledger; the analysis:
//! [`ragstats_core::analyses::import`]). The mapping flags ([`ImportFlags`], in `common.rs`)
//! are also every panel command's, which read such logs directly (`docs/import.md`).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{import, ImportSettings};
use ragstats_core::panel::Source;

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

/// The library's settings for `args`.
pub fn settings(args: &Args) -> ImportSettings {
    ImportSettings {
        out: args.out.clone(),
        ledger_out: args.ledger_out.clone(),
        arm: args.arm.clone(),
        logs: args.map.mapping(),
    }
}

/// What `stats import` prints for `args`: the library's [`import`] of LOG…, which wrote
/// the panel (and ledger).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    Ok(import(&Source::Files(args.logs.clone()), &settings(args))?)
}
