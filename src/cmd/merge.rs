//! `stats merge`: combine replicates files from sharded `stats bootstrap` runs.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::bootstrap::analysis::merge;
use ragstats_core::bootstrap::replicates::Replicates;

use super::common::Format;
use super::render::Finished;
use ragstats_core::bootstrap::analysis::BootstrapRun;

/// Flags of `stats merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Replicates files written by `stats bootstrap --replicates-out`, in any order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Also write the merged replicates (byte-identical to a single run's --replicates-out).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The run's total number of replicates B: require the files to hold all of 0..B (a
    /// missing first or last shard leaves no gap, only a shorter range).
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(1..))]
    pub replicates: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `stats merge` and prints the merged run's report.
pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// What `stats merge` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let inputs = ragstats_core::document::Inputs::new()
        .with_all("shards", args.files.iter().map(|f| f.display()));
    let out = compute(args)?;
    let notes = out.report.notes.clone();
    Ok(crate::cmd::render::finished("merge", inputs, out)
        .with_notes_for_csv(args.format == crate::cmd::common::Format::Csv, &notes))
}

/// Reads the shards, merges them (and writes `--out`), and summarises the merged run.
pub fn compute(args: &Args) -> anyhow::Result<BootstrapRun> {
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
    let merged = merge(shards)?;
    if let Some(total) = args.replicates {
        merged.replicates.require_all(total)?;
    }
    if let Some(out) = &args.out {
        merged.replicates.write(out)?;
    }
    Ok(merged)
}
