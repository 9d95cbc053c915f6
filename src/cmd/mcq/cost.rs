//! `stats mcq cost`: tokens and fees of an `mcq run --ledger` ledger per item, group, task
//! and run. The analysis is [`ragstats_core::mcq::ledger_costs::mcq_ledger_costs`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::mcq::ledger_costs::{mcq_ledger_costs, McqCostReport, McqPricing};

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

/// Loads the ledger (and `--prices`) and sums it.
pub fn compute(a: &Args) -> anyhow::Result<McqCostReport> {
    let entries = read_ledger(&a.ledger)?;
    let prices = a.prices.as_deref().map(Prices::read).transpose()?;
    let pricing = prices.as_ref().zip(a.prices.as_deref());
    Ok(mcq_ledger_costs(
        &entries,
        &a.ledger,
        pricing.map(|(prices, path)| McqPricing { prices, path }),
    )?)
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    outcome(&a)?.emit(a.format)
}

/// What `stats mcq cost` prints for `a`.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    let out = compute(a)?;
    let inputs = ragstats_core::document::Inputs::new()
        .with("ledger", a.ledger.display())
        .with_opt("prices", a.prices.as_ref().map(|p| p.display()));
    Ok(crate::cmd::render::finished("mcq cost", inputs, out))
}
