//! `stats mcq filter`: the difficulty filter (drop items every model answers alike) plus
//! the format rules; kept lines are copied unchanged. The analysis is
//! [`ragstats_core::mcq::filter::filter_items`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use crate::cmd::common::Format;
use crate::cmd::render::Finished;
use ragstats_core::analyses::{mcq_filter, McqFilterSettings};
use ragstats_core::panel::Source;

/// Flags of `stats mcq filter`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Generated items JSONL.
    pub items: PathBuf,
    /// Results files of at least two models (`mcq run` output).
    #[arg(long, num_args = 1.., required = true)]
    pub predictions: Vec<PathBuf>,
    /// Kept items JSONL (lines copied unchanged).
    #[arg(long)]
    pub out: PathBuf,
    /// Report of dropped lines [default: <out stem>.dropped.jsonl].
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq filter` prints for `a` (having written `--out` and `--report`): the
/// library's [`mcq_filter`].
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let predictions: Vec<Source> = a.predictions.iter().map(Source::file).collect();
    let settings = McqFilterSettings {
        out: a.out.clone(),
        report: a.report.clone(),
    };
    Ok(mcq_filter(
        &Source::file(&a.items),
        &predictions,
        &settings,
    )?)
}
