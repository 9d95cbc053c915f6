//! Pricing a panel from ledger files the way `stats efficiency` does, for `stats plan` and
//! `stats report` (the analysis itself is in the core).

use std::path::Path;

use ragstats_core::allocation::one_read::OneReadReport;
use ragstats_core::allocation::one_read_ledger::{efficiency_of_panel, EfficiencySettings};
use ragstats_core::costs::accounting::{Budget, CellCosts, PricedLedger};
use ragstats_core::costs::panel_costs::{
    balanced_panel_costs, panel_trajectory_costs, PanelCosts, TrajectoryCost,
};
use ragstats_core::ledger::{read_ledger, Entry, Prices};
use ragstats_core::panel::Panel;
use ragstats_core::resample::engine::ResampleBackend;
use ragstats_core::resample::Resampling;

use super::CurrencyArg;

impl CurrencyArg {
    /// How the currency is named in outputs.
    pub fn unit(self) -> &'static str {
        match self {
            CurrencyArg::Tokens => "tokens",
            CurrencyArg::Usd => "USD",
        }
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

/// A ledger, its prices and the currency to bill it in, as files (for `stats plan` and
/// `stats report`, which price panels the way `stats efficiency` does).
#[derive(Clone, Copy)]
pub struct LedgerInput<'a> {
    pub ledger: &'a Path,
    pub prices: Option<&'a Path>,
    pub currency: CurrencyArg,
    pub search_price: Option<f64>,
}

impl LedgerInput<'_> {
    /// Loads the files and returns the panel's per-cell costs, with `f` pricing the panel.
    fn price<T>(
        &self,
        panel: &Panel,
        f: impl FnOnce(&CellCosts) -> ragstats_core::Result<T>,
    ) -> anyhow::Result<T> {
        let (entries, prices) = load_ledger(self.ledger, self.prices)?;
        let ledger = priced(&entries, self.ledger, prices.as_ref(), self.prices);
        let budget = self.currency.budget(self.search_price);
        let cells = ledger.cell_costs(panel.selector.as_deref(), budget)?;
        Ok(f(&cells)?)
    }
}

/// The cost of every trajectory and read of every stratum as they are in the panel
/// ([`panel_trajectory_costs`]), priced from the ledger files.
pub fn trajectory_panel_costs(
    panel: &Panel,
    input: &LedgerInput<'_>,
) -> anyhow::Result<Vec<Vec<Vec<TrajectoryCost>>>> {
    input.price(panel, |c| panel_trajectory_costs(panel, c, input.ledger))
}

/// A balanced panel's costs ([`balanced_panel_costs`]), priced from the ledger files.
pub fn panel_costs(panel: &Panel, input: &LedgerInput<'_>) -> anyhow::Result<PanelCosts> {
    input.price(panel, |c| balanced_panel_costs(panel, c, input.ledger))
}

/// The one-read efficiency analysis of a loaded `panel` priced from the ledger files
/// ([`efficiency_of_panel`]), for `stats report`.
pub fn report_of(
    panel: &Panel,
    input: &LedgerInput<'_>,
    resampling: &Resampling,
    max_reads: u32,
    engine: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<OneReadReport> {
    let (entries, prices) = load_ledger(input.ledger, input.prices)?;
    let ledger = priced(&entries, input.ledger, prices.as_ref(), input.prices);
    let settings = EfficiencySettings {
        budget: input.currency.budget(input.search_price),
        max_reads,
        resampling: *resampling,
    };
    Ok(efficiency_of_panel(
        panel, &ledger, &settings, engine, progress,
    )?)
}
