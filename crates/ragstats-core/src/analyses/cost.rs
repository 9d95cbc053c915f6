//! `cost`: tokens, fees and unit costs of a cost ledger
//! ([`crate::costs::accounting::cost_report`]).

use serde::Deserialize;

use super::{source_input, source_input_opt};
use crate::costs::accounting::{cost_report, ledger_selectors, CostJob, PricedLedger};
use crate::document::{Finished, Inputs, Rendered, Sections};
use crate::import::{selector_choices, By};
use crate::ledger::{check_price, parse_sweep, read_ledger_from, Prices, MAX_SWEEP_PRICES};
use crate::panel::{SelectorChoice, Source};
use crate::{Error, Result};

/// Search prices to total the fees at: a sweep's text (`0:1:0.25`, `0,0.5,1`) or a list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum SearchPrices {
    /// `START:STOP:STEP` or `a,b,c` (USD per 1,000 requests).
    Text(String),
    /// The prices themselves.
    List(Vec<f64>),
}

impl SearchPrices {
    /// The prices, checked.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `search_price` for a bad price or too many.
    pub fn prices(&self) -> Result<Vec<f64>> {
        match self {
            SearchPrices::Text(t) => parse_sweep(t),
            SearchPrices::List(l) => {
                if l.len() > MAX_SWEEP_PRICES {
                    return Err(Error::setting(
                        "search_price",
                        format!("{} prices; at most {MAX_SWEEP_PRICES} are allowed", l.len()),
                    ));
                }
                l.iter()
                    .map(|&v| {
                        check_price("the search price", v)
                            .map_err(|m| Error::setting("search_price", m))
                    })
                    .collect()
            }
        }
    }
}

/// The settings of [`cost`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct CostSettings {
    /// Search prices to total the fees at (default: the prices' sweep, else their point
    /// price, else none).
    pub search_price: Option<SearchPrices>,
    /// Report each selector of the ledger's rows, then their average.
    pub by: Option<By>,
}

/// The cost report of the ledger `ledger` holds, with fees from `prices` when given; with
/// `settings.by`, one section per selector of the ledger's rows.
///
/// # Errors
/// Those of reading the ledger and the prices and of the accounting; [`Error::Setting`]
/// naming `by` when no row has a selector.
pub fn cost(ledger: &Source, prices: Option<&Source>, settings: &CostSettings) -> Result<Finished> {
    let entries = read_ledger_from(ledger)?;
    let prices_read = prices.map(Prices::from_source).transpose()?;
    let search_prices = settings
        .search_price
        .as_ref()
        .map(SearchPrices::prices)
        .transpose()?;
    let report = |selector: Option<&str>| {
        let priced = PricedLedger {
            entries: &entries,
            path: ledger.name(),
            prices: prices_read.as_ref(),
            prices_path: prices.map(|p| p.name()),
        };
        let job = CostJob {
            search_prices: search_prices.clone(),
            selector: selector.map(String::from),
        };
        cost_report(&priced, &job)
    };
    let inputs = source_input_opt(
        source_input(Inputs::new(), "ledger", ledger),
        "prices",
        prices,
    );
    if settings.by != Some(By::Selector) {
        return Ok(Finished::new("cost", inputs, report(None)?));
    }
    let names = ledger_selectors(&entries);
    if names.is_empty() {
        return Err(Error::setting(
            "by",
            format!(
                "selector: no row of {} has a 'selector' field",
                ledger.name().display()
            ),
        ));
    }
    // A selector's own rows, or (the average) every row.
    let items = selector_choices(&names)
        .into_iter()
        .map(|(name, choice)| {
            let selector = match &choice {
                SelectorChoice::One(s) => Some(s.as_str()),
                SelectorChoice::Average => None,
            };
            Ok((name, Box::new(report(selector)?) as Box<dyn Rendered>))
        })
        .collect::<Result<_>>()?;
    let sections = Sections {
        by: "selector".into(),
        items,
    };
    Ok(Finished::new("cost", inputs, sections))
}
