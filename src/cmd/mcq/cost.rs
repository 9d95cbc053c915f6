//! `stats mcq cost`: tokens and fees of an `mcq run --ledger` ledger per item, group, task
//! and run. The analysis is [`ragstats_core::mcq::ledger_costs::mcq_ledger_costs`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::mcq_cost;
use ragstats_core::panel::Source;

use crate::cmd::common::Format;
use crate::cmd::render::Finished;

/// Flags of `stats mcq cost`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cost ledger written by `stats mcq run --ledger`.
    pub ledger: PathBuf,
    /// Prices (TOML, as for `stats cost`): USD per 1M input, cached input and output tokens per model.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq cost` prints for `a`: the library's [`mcq_cost`].
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let prices = a.prices.as_ref().map(Source::file);
    Ok(mcq_cost(&Source::file(&a.ledger), prices.as_ref())?)
}
