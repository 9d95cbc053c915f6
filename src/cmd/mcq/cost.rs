//! `stats mcq cost`: tokens and fees of an `mcq run --ledger` ledger per item, group, task
//! and run. The analysis is [`ragstats_core::mcq::ledger_costs::mcq_ledger_costs`].

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::document::to_body;
use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::mcq::ledger_costs::{mcq_ledger_costs, McqCostReport, McqCostRow, McqPricing};
use ragstats_core::table::Cell;
use serde_json::Value;

use crate::cmd::common::{Format, Table};
use crate::cmd::render::{Finished, Rendered};

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

/// What `stats mcq cost` found for one ledger.
pub struct McqCostOutput {
    /// Whether `--prices` was given (fees are known).
    pub priced: bool,
    /// The analysis.
    pub report: McqCostReport,
}

/// Loads the ledger (and `--prices`) and sums it.
pub fn compute(a: &Args) -> anyhow::Result<McqCostOutput> {
    let entries = read_ledger(&a.ledger)?;
    let prices = a.prices.as_deref().map(Prices::read).transpose()?;
    let pricing = prices.as_ref().zip(a.prices.as_deref());
    let report = mcq_ledger_costs(
        &entries,
        &a.ledger,
        pricing.map(|(prices, path)| McqPricing { prices, path }),
    )?;
    Ok(McqCostOutput {
        priced: prices.is_some(),
        report,
    })
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

const HEAD: [&str; 8] = [
    "level",
    "name",
    "calls",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "tokens_per_call",
    "usd",
];

/// One row of the table: counts as counts, `tokens_per_call` and `usd` as numbers (text
/// shows them at the default precision, CSV every digit).
fn cells(r: &McqCostRow, text: bool) -> Vec<Cell> {
    vec![
        Cell::text(r.level),
        // Raw: the names of `run` rows (run indices) have always been right-aligned in
        // the text table, as numbers, among the item, group and task names.
        Cell::Raw(r.name.clone()),
        Cell::Count(r.calls),
        Cell::Count(r.input_tokens),
        Cell::Count(r.cached_input_tokens),
        Cell::Count(r.output_tokens),
        Cell::num(r.tokens_per_call),
        match (r.usd, text) {
            (Some(usd), _) => Cell::num(usd),
            // Without prices the text table leaves the fees blank, not `-`.
            (None, true) => Cell::Raw(String::new()),
            (None, false) => Cell::Missing,
        },
    ]
}

impl Rendered for McqCostOutput {
    fn text(&self) -> String {
        let r = &self.report;
        let mut t = Table::new(&HEAD);
        for row in &r.rows {
            t.row(cells(row, true));
        }
        let mut out = t.to_text();
        let unknown = r.rows.last().map_or(0, |o| o.unknown_token_rows);
        if unknown > 0 {
            out.push_str(&format!("note: {unknown} row(s) had unknown (null) token counts and were billed as 0 tokens\n"));
        }
        if r.other_rows > 0 {
            out.push_str(&format!(
                "note: {} row(s) without an `item` field (not from `mcq run`) were left out\n",
                r.other_rows
            ));
        }
        if !self.priced {
            out.push_str("fees: give --prices FILE (see docs/ledger.md) for USD\n");
        }
        out
    }

    fn csv(&self) -> Table {
        let mut t = Table::new(&HEAD);
        for row in &self.report.rows {
            t.row(cells(row, false));
        }
        t
    }

    /// The report's fields ([`McqCostReport`]).
    fn body(&self) -> Value {
        to_body(&self.report)
    }
}
