//! The ledger flags of `stats efficiency` (and `stats plan`): the currency, and the loaded
//! ledger with its prices (the pricing and the analysis are in the core).

use std::path::Path;

use ragstats_core::costs::accounting::{Budget, PricedLedger};
use ragstats_core::ledger::{read_ledger, Entry, Prices};

use super::CurrencyArg;

impl CurrencyArg {
    /// How the currency is named in outputs.
    pub fn unit(self) -> &'static str {
        self.budget(None).unit()
    }

    /// The budget the core prices in, with the `--search-price` override for dollars.
    pub fn budget(self, search_price: Option<f64>) -> Budget {
        match self {
            CurrencyArg::Tokens => Budget::Tokens,
            CurrencyArg::Usd => Budget::Usd {
                search_usd_per_1000: search_price,
            },
        }
    }
}

/// Reads a ledger and, when given, its prices file.
pub(super) fn load_ledger(
    ledger: &Path,
    prices: Option<&Path>,
) -> anyhow::Result<(Vec<Entry>, Option<Prices>)> {
    Ok((read_ledger(ledger)?, prices.map(Prices::read).transpose()?))
}

pub(super) fn priced<'a>(
    entries: &'a [Entry],
    path: &'a Path,
    prices: Option<&'a Prices>,
    prices_path: Option<&'a Path>,
) -> PricedLedger<'a> {
    PricedLedger {
        entries,
        path,
        prices,
        prices_path,
    }
}
