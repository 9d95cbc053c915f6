//! `stats cost`: tokens, fees and unit costs of a cost ledger. The accounting is
//! [`ragstats_core::analyses::cost`]; this file turns the flags into its settings.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{cost, CostSettings, SearchPrices};
use ragstats_core::ledger::check_price;
pub use ragstats_core::ledger::parse_sweep;
use ragstats_core::panel::Source;

use super::common::{By, Format};
use super::render::Finished;

/// Flags of `stats cost`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cost ledger (JSONL, one row per model call or search request).
    pub ledger: PathBuf,
    /// Prices (TOML): USD per 1M input, cached input and output tokens per model; search per 1,000 requests.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Search prices to sweep, USD per 1,000 unique requests: START:STOP:STEP or a list (default: the prices file's sweep).
    #[arg(long, value_name = "SWEEP")]
    pub search_price: Option<String>,
    /// Report each selector the rows name (its reads plus the planner calls and searches
    /// every selector shares), then the selector average (every row, as its design runs
    /// every selector).
    #[arg(long, value_enum, value_name = "selector")]
    pub by: Option<By>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Parses a single price flag (USD) with the one price validation, [`check_price`].
pub fn price_flag(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number"))?;
    check_price("the price", v)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> CostSettings {
    CostSettings {
        search_price: args.search_price.clone().map(SearchPrices::Text),
        by: args
            .by
            .map(|By::Selector| ragstats_core::import::By::Selector),
    }
}

/// What `stats cost` prints for `args`: the library's [`cost`].
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let prices = args.prices.as_ref().map(Source::file);
    Ok(cost(
        &Source::file(&args.ledger),
        prices.as_ref(),
        &settings(args),
    )?)
}
