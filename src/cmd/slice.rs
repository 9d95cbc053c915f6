//! `stats slice`: the sub-panel of a design Q:T:R written as a panel file (the analysis:
//! [`ragstats_core::analyses::slice`]).

use std::path::PathBuf;

use ragstats_core::analyses::{slice, SliceSettings};
use ragstats_core::panel::Source;

use super::common::PanelOptions;
use super::render::Finished;

/// Flags of `stats slice`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file (CSV, JSONL or Parquet, one row per read).
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Design Q:T:R (Q split over strata in the panel's question shares, by largest
    /// remainder) or per-stratum counts, e.g. hotpotqa=150,musique=24:2:1.
    #[arg(long, value_name = "Q:T:R")]
    pub design: String,
    /// Q of a Q:T:R design is the count in every stratum, not the total.
    #[arg(long)]
    pub per_stratum: bool,
    /// Seeded choice: questions in the seeded order of `allocate --order-seed S`, and for
    /// each question a seeded choice of T of its trajectories and of R reads of each.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Keep the first T trajectories and R reads (label order) of each question (the default
    /// without --seed, where the questions are the first in file order too; with --seed the
    /// sub-panel `allocate --order-seed S` measures).
    #[arg(long)]
    pub first: bool,
    /// Where to write the sub-panel, in the input's format (CSV, or JSONL for a .jsonl/.json
    /// input; the name must say the same).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Runs `stats slice`: the loading notes, then on stderr what it wrote.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let done = outcome(&args)?;
    for n in &done.notes_after {
        eprintln!("{n}");
    }
    eprintln!(
        "{}",
        done.result.text_with(&super::render::flag_of).trim_end()
    );
    Ok(0)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> SliceSettings {
    SliceSettings {
        panel: args.opts.settings(),
        design: args.design.clone(),
        per_stratum: args.per_stratum,
        seed: args.seed,
        first: args.first,
        out: args.out.clone(),
    }
}

/// What `stats slice` wrote: the library's [`slice()`] of PANEL (and the logs read with it).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let source = Source::files(&args.panel, &args.more);
    Ok(slice(&source, &settings(args))?)
}
