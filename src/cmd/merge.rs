//! `stats merge`: combine replicates files from sharded `stats bootstrap` runs (the
//! analysis: [`ragstats_core::analyses::merge`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{merge, MergeSettings};
use ragstats_core::panel::Source;

use super::common::Format;
use super::render::Finished;

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

/// The library's settings for `args`.
pub fn settings(args: &Args) -> MergeSettings {
    MergeSettings {
        out: args.out.clone(),
        replicates: args.replicates,
    }
}

/// What `stats merge` prints for `args`: the library's [`merge`] of FILES.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    Ok(merge(&Source::Files(args.files.clone()), &settings(args))?)
}
