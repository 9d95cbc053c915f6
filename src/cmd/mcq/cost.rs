//! `stats mcq cost`: tokens and fees of an `mcq run --ledger` ledger per item, group, task
//! and run.

use std::path::PathBuf;

use ragstats_core::costs::cost::bill;
use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::mcq::cost::{mcq_costs, McqCostRow};

use crate::cmd::common::{num, print_json, write_csv, Format, Table};

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

/// One row; non-integer figures through `f` (rounded for the table, exact for CSV).
fn cells(r: &McqCostRow, f: fn(f64) -> String) -> Vec<String> {
    vec![
        r.level.to_string(),
        r.name.clone(),
        r.calls.to_string(),
        r.input_tokens.to_string(),
        r.cached_input_tokens.to_string(),
        r.output_tokens.to_string(),
        f(r.tokens_per_call),
        r.usd.map(f).unwrap_or_default(),
    ]
}

pub fn run(a: Args) -> anyhow::Result<u8> {
    let entries = read_ledger(&a.ledger)?;
    let prices = a.prices.as_deref().map(Prices::read).transpose()?;
    let bills = bill(&entries, prices.as_ref(), &a.ledger, a.prices.as_deref())?;
    let r = mcq_costs(&entries, &bills, prices.is_some())?;
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
    match a.format {
        Format::Json => print_json(&r)?,
        Format::Csv => write_csv(
            &HEAD,
            &r.rows
                .iter()
                .map(|x| cells(x, |v| v.to_string()))
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            let mut t = Table::new(&HEAD);
            for row in &r.rows {
                t.row(cells(row, num));
            }
            out!("{}", t.to_text());
            let unknown = r.rows.last().map_or(0, |o| o.unknown_token_rows);
            if unknown > 0 {
                outln!("note: {unknown} row(s) had unknown (null) token counts and were billed as 0 tokens");
            }
            if r.other_rows > 0 {
                outln!(
                    "note: {} row(s) without an `item` field (not from `mcq run`) were left out",
                    r.other_rows
                );
            }
            if prices.is_none() {
                outln!("fees: give --prices FILE (see docs/ledger.md) for USD");
            }
        }
    }
    Ok(0)
}
