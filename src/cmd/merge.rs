//! `stats merge`: combine replicates files from sharded `stats bootstrap` runs.

use std::path::PathBuf;

use ragstats_core::bootstrap::replicates::Replicates;
use ragstats_core::bootstrap::report::build_report;

use super::bootstrap::print_report;
use super::common::Format;

/// Flags of `stats merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Replicates files written by `stats bootstrap --replicates-out`, in any order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Also write the merged replicates (byte-identical to a single run's --replicates-out).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(out) = &args.out {
        let inputs: Vec<(&str, &std::path::Path)> =
            args.files.iter().map(|p| ("input", p.as_path())).collect();
        ragstats_core::io::refuse_overwriting_inputs(&[("--out", out)], &inputs)?;
    }
    let shards = args
        .files
        .iter()
        .map(|p| Ok((p.display().to_string(), Replicates::read(p)?)))
        .collect::<ragstats_core::Result<Vec<_>>>()?;
    let n = shards.len();
    let merged = Replicates::merge(shards)?;
    if let Some(out) = &args.out {
        merged.write(out)?;
    }
    print_report(
        &build_report(&merged),
        "merged",
        &format!("{n} replicates files"),
        args.format,
    )?;
    Ok(0)
}
