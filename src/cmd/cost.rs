//! `stats cost`: tokens, fees and unit costs of a cost ledger. The accounting is
//! [`ragstats_core::costs::accounting::cost_report`]; this file parses the flags (the search-price
//! sweep, [`parse_sweep`]) and renders the report.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::costs::accounting::{
    cost_report, ledger_selectors, CostReport, CostSettings, PricedLedger,
};
use ragstats_core::io::clip;
use ragstats_core::ledger::{check_price, read_ledger, Prices, MAX_SWEEP_PRICES};
use ragstats_core::panel::SelectorChoice;

use super::common::{By, Format};
use super::render::{Finished, Sections};
use super::UsageError;

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

/// Parses a search-price sweep `START:STOP:STEP` (inclusive) or a comma list `0,0.5,1`.
///
/// # Errors
/// A usage error for malformed or negative values or a non-positive step.
pub fn parse_sweep(s: &str) -> Result<Vec<f64>, UsageError> {
    let bad = || {
        UsageError(format!("--search-price '{}': expected START:STOP:STEP (e.g. 0:1:0.25) or a list like 0,0.5,1 (USD per 1,000 requests)", clip(s)))
    };
    let nums = |parts: Vec<&str>| -> Result<Vec<f64>, UsageError> {
        parts
            .iter()
            .map(|p| {
                let v = p.trim().parse::<f64>().map_err(|_| bad())?;
                check_price("--search-price", v).map_err(UsageError)
            })
            .collect()
    };
    let too_many = |n: f64| {
        UsageError(format!(
            "--search-price '{}' holds {n:.0} prices; at most {MAX_SWEEP_PRICES} are allowed",
            clip(s)
        ))
    };
    if s.contains(':') {
        let v = nums(s.split(':').collect())?;
        let [a, b, step] = v[..] else {
            return Err(bad());
        };
        if step <= 0.0 || b < a {
            return Err(bad());
        }
        // Counted in f64 and bounded before anything is allocated (never NaN: a, b and step
        // are finite and step > 0; an infinite count is refused here too).
        let n = ((b - a) / step + 1e-9).floor();
        if n >= MAX_SWEEP_PRICES as f64 {
            return Err(too_many(n + 1.0));
        }
        Ok((0..=n as usize).map(|i| a + i as f64 * step).collect())
    } else {
        let n = s.split(',').count();
        if n > MAX_SWEEP_PRICES {
            return Err(too_many(n as f64));
        }
        nums(s.split(',').collect())
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.emit(args.format)
}

/// What `stats cost` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    if args.by != Some(By::Selector) {
        return Ok(crate::cmd::render::finished(
            "cost",
            inputs(args),
            compute(args, None)?,
        ));
    }
    let names = ledger_selectors(&read_ledger(&args.ledger)?);
    if names.is_empty() {
        return Err(UsageError(format!(
            "--by selector: no row of {} has a 'selector' field",
            args.ledger.display()
        ))
        .into());
    }
    let mut choices: Vec<(String, Option<&str>)> = names
        .iter()
        .map(|n| (n.clone(), Some(n.as_str())))
        .collect();
    if names.len() > 1 {
        choices.push((SelectorChoice::AVERAGE.into(), None));
    }
    let items = choices
        .into_iter()
        .map(|(name, selector)| Ok((name, Box::new(compute(args, selector)?) as _)))
        .collect::<anyhow::Result<_>>()?;
    let sections = Sections {
        by: "selector".into(),
        items,
    };
    Ok(crate::cmd::render::finished("cost", inputs(args), sections))
}

/// The envelope's inputs of `stats cost`.
fn inputs(args: &Args) -> ragstats_core::document::Inputs {
    ragstats_core::document::Inputs::new()
        .with("ledger", args.ledger.display())
        .with_opt("prices", args.prices.as_ref().map(|p| p.display()))
}

/// Loads the ledger and prices `args` names and accounts the rows of `selector` (`None`:
/// every row).
pub fn compute(args: &Args, selector: Option<&str>) -> anyhow::Result<CostReport> {
    let entries = read_ledger(&args.ledger)?;
    let prices = args.prices.as_deref().map(Prices::read).transpose()?;
    let settings = CostSettings {
        search_prices: args.search_price.as_deref().map(parse_sweep).transpose()?,
        selector: selector.map(String::from),
    };
    let priced = PricedLedger {
        entries: &entries,
        path: &args.ledger,
        prices: prices.as_ref(),
        prices_path: args.prices.as_deref(),
    };
    let report = cost_report(&priced, &settings)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_are_ranges_or_lists() {
        assert_eq!(
            parse_sweep("0:1:0.25").unwrap(),
            [0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert_eq!(parse_sweep("0, 0.5,1").unwrap(), [0.0, 0.5, 1.0]);
        for bad in ["1:0:0.5", "0:1:0", "0:1", "a,b", "-1"] {
            assert!(parse_sweep(bad).is_err(), "{bad}");
        }
        let e = parse_sweep("0:20000:1").unwrap_err().to_string();
        assert!(e.contains("holds 20001 prices; at most 10000"), "{e}");
    }
}
