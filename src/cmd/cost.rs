//! `stats cost`: tokens, fees and unit costs of a cost ledger.

use std::path::PathBuf;

use ragstats_core::costs::cost::{
    account, bill, for_selector, ledger_selectors, parse_sweep, CostReport, Totals,
};
use ragstats_core::ledger::{check_price, read_ledger, Prices};
use ragstats_core::panel::SelectorChoice;

use super::common::{num, print_json, print_sections, write_csv, By, Format, Table};
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

/// Loads, bills and accounts a ledger: with `selector`, only that selector's rows and the
/// rows no selector owns ([`for_selector`]).
pub fn load(
    ledger: &std::path::Path,
    prices_path: Option<&std::path::Path>,
    sweep: Option<&str>,
    selector: Option<&str>,
) -> anyhow::Result<(CostReport, Option<Prices>)> {
    let entries = for_selector(read_ledger(ledger)?, selector, ledger)?;
    let prices = prices_path.map(Prices::read).transpose()?;
    let bills = bill(&entries, prices.as_ref(), ledger, prices_path)?;
    let sweep = match sweep {
        Some(s) => parse_sweep(s)?,
        None => match &prices {
            Some(p) if !p.search.sweep_usd_per_1000.is_empty() => {
                p.search.sweep_usd_per_1000.clone()
            }
            Some(p) => vec![p.search.usd_per_1000],
            None => vec![],
        },
    };
    let point = prices
        .as_ref()
        .map(|p| p.search.usd_per_1000)
        .unwrap_or(0.0);
    Ok((
        account(&entries, &bills, &sweep, point, prices.is_some()),
        prices,
    ))
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.by != Some(By::Selector) {
        return run_one(&args, None);
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
    let mut sections = Vec::new();
    for (name, selector) in choices {
        let (_, bytes) = super::out::capture(|| run_one(&args, selector))?;
        sections.push((name, bytes));
    }
    print_sections("selector", &sections, args.format)?;
    Ok(0)
}

/// The report of one selector's rows (`None`: every row).
fn run_one(args: &Args, selector: Option<&str>) -> anyhow::Result<u8> {
    let (r, _) = load(
        &args.ledger,
        args.prices.as_deref(),
        args.search_price.as_deref(),
        selector,
    )?;
    match args.format {
        Format::Json => print_json(&r)?,
        Format::Csv => {
            let mut header: Vec<String> = [
                "arm",
                "dataset",
                "model_calls",
                "input_tokens",
                "cached_input_tokens",
                "output_tokens",
                "model_tokens",
                "model_usd",
                "search_requests",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            for p in &r.search_prices {
                header.push(format!("total_usd_at_search_{p}"));
            }
            let rows: Vec<Vec<String>> = r
                .groups
                .iter()
                .chain(std::iter::once(&r.total))
                .map(|g| cells(g, |v| v.to_string()))
                .collect();
            let h: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
            write_csv(&h, &rows)?;
        }
        Format::Table => out!("{}", table(&r)),
    }
    Ok(0)
}

/// One group's row: counts as integers, dollars through `usd`.
fn cells(g: &Totals, usd: impl Fn(f64) -> String) -> Vec<String> {
    let mut row = vec![
        g.arm.clone(),
        g.dataset.clone(),
        g.model_calls.to_string(),
        g.input_tokens.to_string(),
        g.cached_input_tokens.to_string(),
        g.output_tokens.to_string(),
        g.model_tokens.to_string(),
        usd(g.model_usd),
        g.search_requests.to_string(),
    ];
    row.extend(g.total_usd.iter().map(|&v| usd(v)));
    row
}

fn table(r: &CostReport) -> String {
    let mut head = vec![
        "arm".to_string(),
        "dataset".into(),
        "calls".into(),
        "input tok".into(),
        "cached tok".into(),
        "output tok".into(),
        "model tok".into(),
        "model USD".into(),
        "searches".into(),
    ];
    for p in &r.search_prices {
        head.push(format!("USD @{p}/1k"));
    }
    let h: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    let mut t = Table::new(&h);
    for g in r.groups.iter().chain(std::iter::once(&r.total)) {
        t.row(cells(g, |v| format!("{v:.4}")));
    }
    let mut out = t.to_text();
    let u = &r.unit_costs;
    if u.trajectory_note.is_some() || u.read_note.is_some() {
        // Say which unit cost this ledger gives, and why the other is not a figure.
        out.push_str("\nunit costs:\n");
        let price = |x: f64| {
            u.usd
                .as_ref()
                .map(|_| {
                    format!(
                        " (${} with search at ${}/1k requests)",
                        num(x),
                        u.search_usd_per_1000
                    )
                })
                .unwrap_or_default()
        };
        let usd = u.usd.unwrap_or(ragstats_core::costs::cost::UnitCostPair {
            trajectory: f64::NAN,
            read: f64::NAN,
        });
        match &u.trajectory_note {
            Some(n) => out.push_str(&format!("  c_T: not computed: {n}\n")),
            None => out.push_str(&format!(
                "  c_T = {} tokens over {} trajectories{}\n",
                num(u.tokens.trajectory),
                u.trajectories,
                price(usd.trajectory)
            )),
        }
        match &u.read_note {
            Some(n) => out.push_str(&format!("  c_R: not computed: {n}\n")),
            None => out.push_str(&format!(
                "  c_R = {} tokens over {} reads{}\n",
                num(u.tokens.read),
                u.reads,
                price(usd.read)
            )),
        }
    } else {
        out.push_str(&format!(
            "\nunit costs over {} trajectories and {} reads (both arms):\n  c_T = {} tokens, c_R = {} tokens\n",
            u.trajectories,
            u.reads,
            num(u.tokens.trajectory),
            num(u.tokens.read)
        ));
    }
    if let (Some(d), None, None) = (&u.usd, &u.trajectory_note, &u.read_note) {
        out.push_str(&format!(
            "  c_T = ${} , c_R = ${}  (search at ${}/1k requests)\n",
            num(d.trajectory),
            num(d.read),
            u.search_usd_per_1000
        ));
    }
    if r.total.unknown_token_rows > 0 {
        out.push_str(&format!(
            "note: {} rows had unknown (null) token counts and were billed as 0 tokens\n",
            r.total.unknown_token_rows
        ));
    }
    out
}
