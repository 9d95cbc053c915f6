//! Settings the priced analyses share (`compare` with a ledger, `plan`, `efficiency`): the
//! unit a cost is counted in, and the bounds of the least-cost search over Q:T:R; and the
//! audit's costs a plan prices with ([`plan_costs`]).

use serde::Deserialize;

use crate::allocation::efficiency::UnitCosts;
use crate::allocation::planner::Bounds;
use crate::allocation::planner_report::PlanCosts;
use crate::costs::accounting::{Budget, PricedLedger};
use crate::ledger::{read_ledger_from, Prices};
use crate::panel::{Panel, Source};
use crate::{Error, Result};

/// What a cost is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum CostUnit {
    /// Model tokens (input + output).
    #[default]
    Tokens,
    /// Dollars: model fees and search fees.
    Usd,
}

impl CostUnit {
    /// How outputs name the unit: `tokens` or `USD`.
    pub fn unit(self) -> &'static str {
        self.budget(None).unit()
    }

    /// The budget the accounting prices in; `search_price` (USD per 1,000 requests)
    /// overrides the prices' own for dollars.
    pub fn budget(self, search_price: Option<f64>) -> Budget {
        match self {
            CostUnit::Tokens => Budget::Tokens,
            CostUnit::Usd => Budget::Usd {
                search_usd_per_1000: search_price,
            },
        }
    }
}

impl std::str::FromStr for CostUnit {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tokens" => Ok(CostUnit::Tokens),
            "usd" => Ok(CostUnit::Usd),
            other => Err(format!("'{other}': expected tokens or usd")),
        }
    }
}

/// The largest total Q, T and R the least-cost search may choose (each inclusive, from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct SearchBounds {
    /// Largest total number of questions searched (1 to 100,000,000).
    pub max_questions: u64,
    /// Largest number of trajectories per question searched (1 to 1,000).
    pub max_trajectories: u64,
    /// Largest number of reads per trajectory searched (1 to 1,000).
    pub max_reads: u64,
}

impl Default for SearchBounds {
    fn default() -> Self {
        SearchBounds {
            max_questions: 100_000,
            max_trajectories: 10,
            max_reads: 10,
        }
    }
}

impl SearchBounds {
    /// The search's bounds, each checked against its range.
    ///
    /// # Errors
    /// [`Error::Setting`] naming the bound outside its range.
    pub fn bounds(&self) -> Result<Bounds> {
        let check = |name: &'static str, v: u64, max: u64| -> Result<usize> {
            if (1..=max).contains(&v) {
                usize::try_from(v)
                    .map_err(|_| Error::setting(name, format!("{v} does not fit this machine")))
            } else {
                Err(Error::setting(name, format!("{v} is not in 1..={max}")))
            }
        };
        Ok(Bounds {
            max_questions: check("max_questions", self.max_questions, 100_000_000)?,
            max_trajectories: check("max_trajectories", self.max_trajectories, 1000)?,
            max_reads: check("max_reads", self.max_reads, 1000)?,
        })
    }
}

/// Per-question costs of a balanced audit `panel`, or every trajectory's and read's cost of
/// an unbalanced one, from `ledger` (with `prices` for dollars); else the `given` unit
/// costs, or none.
///
/// # Errors
/// Those of reading the ledger and the prices and of pricing the panel's cells.
pub(super) fn plan_costs(
    ledger: Option<&Source>,
    prices: Option<&Source>,
    panel: &Panel,
    unit: CostUnit,
    search_price: Option<f64>,
    given: Option<UnitCosts>,
) -> Result<PlanCosts> {
    let Some(ledger) = ledger else {
        return Ok(given.map_or(PlanCosts::None, PlanCosts::Given));
    };
    let entries = read_ledger_from(ledger)?;
    let prices_read = prices.map(Prices::from_source).transpose()?;
    let priced = PricedLedger {
        entries: &entries,
        path: ledger.name(),
        prices: prices_read.as_ref(),
        prices_path: prices.map(Source::name),
    };
    let cells = priced.cell_costs(panel.selector.as_deref(), unit.budget(search_price))?;
    PlanCosts::of_panel(panel, &cells, ledger.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked_against_their_ranges() {
        let ok = SearchBounds::default().bounds().unwrap();
        assert_eq!(
            (ok.max_questions, ok.max_trajectories, ok.max_reads),
            (100_000, 10, 10)
        );
        let zero = SearchBounds {
            max_reads: 0,
            ..SearchBounds::default()
        };
        match zero.bounds() {
            Err(Error::Setting { setting, msg }) => {
                assert_eq!(setting, "max_reads");
                assert_eq!(msg, "0 is not in 1..=1000");
            }
            other => panic!("expected a setting error, got {other:?}"),
        }
        let big = SearchBounds {
            max_questions: 100_000_001,
            ..SearchBounds::default()
        };
        assert!(
            matches!(big.bounds(), Err(Error::Setting { setting, .. }) if setting == "max_questions")
        );
    }

    #[test]
    fn cost_units_read_the_command_line_words() {
        assert_eq!("USD".parse::<CostUnit>(), Ok(CostUnit::Usd));
        assert_eq!("tokens".parse::<CostUnit>(), Ok(CostUnit::Tokens));
        assert_eq!(
            "euro".parse::<CostUnit>(),
            Err("'euro': expected tokens or usd".to_string())
        );
        assert_eq!(CostUnit::Usd.unit(), "USD");
        let unit: CostUnit = serde_json::from_str("\"usd\"").unwrap();
        assert_eq!(
            unit.budget(Some(2.0)),
            Budget::Usd {
                search_usd_per_1000: Some(2.0)
            }
        );
    }
}
