//! `stats allocate`: nested allocations of one master panel compared on SE, cost, and
//! variance × cost, with paired bootstrap intervals.

use std::path::PathBuf;

use ragstats::allocation::allocate::{
    compare, question_order, AllocateReport, AllocationSpec, Compared,
};
use ragstats::costs::cost::{bill, parse_sweep, CellCosts, Currency};
use ragstats::ledger::{read_ledger, Prices};

use super::common::{num, print_json, write_csv, Format, PanelOptions, Table};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

/// Flags of `stats allocate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Master panel (CSV or JSONL); every allocation is a nested sub-panel of it.
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Cost ledger of the master panel.
    #[arg(long, value_name = "FILE")]
    pub ledger: PathBuf,
    /// Prices (TOML) for the fee comparisons.
    #[arg(long, value_name = "FILE")]
    pub prices: PathBuf,
    /// An allocation NAME=Q:T:R (Q split over strata in the master panel's shares). Repeat.
    #[arg(long = "allocation", value_name = "NAME=Q:T:R", required = true)]
    pub allocations: Vec<String>,
    /// Take questions in a seeded shuffled order instead of file order.
    #[arg(long, value_name = "S")]
    pub order_seed: Option<u64>,
    /// Search prices to sweep, USD per 1,000 requests (default: the prices file's sweep).
    #[arg(long, value_name = "SWEEP")]
    pub search_price: Option<String>,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the variance × fees ratio of each pair across the search-price sweep, with
    /// bootstrap bands (unresolved ratios hollow), as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let reps = args.resample.replicates()?;
    let specs: Vec<AllocationSpec> = args
        .allocations
        .iter()
        .map(|a| a.parse())
        .collect::<ragstats::Result<_>>()?;
    if specs.len() < 2 {
        return Err(UsageError("give at least two --allocation to compare".into()).into());
    }
    let panel = args.opts.load_noting_drops(&args.panel)?;
    let entries = read_ledger(&args.ledger)?;
    let prices = Prices::read(&args.prices)?;
    let bills = bill(&entries, Some(&prices), &args.ledger, Some(&args.prices))?;
    let sweep = match &args.search_price {
        Some(s) => parse_sweep(s)?,
        None if !prices.search.sweep_usd_per_1000.is_empty() => {
            prices.search.sweep_usd_per_1000.clone()
        }
        None => vec![prices.search.usd_per_1000],
    };
    let cells = |c| CellCosts::new(&entries, &bills, c, &args.ledger);
    let (tok, usd, searches) = (
        cells(Currency::Tokens)?,
        cells(Currency::Usd {
            search_usd_per_1000: 0.0,
        })?,
        cells(Currency::Searches)?,
    );
    let order = question_order(&panel.strata, args.order_seed);
    let engine = args.resample.engine(
        reps as u64 * specs.len() as u64 * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>(),
    )?;
    let progress = Progress::new(reps as u64 * specs.len() as u64, "allocate");
    let report = compare(
        &panel.strata,
        &specs,
        &order,
        &[&tok, &usd, &searches],
        &sweep,
        &args.ledger,
        engine.as_ref(),
        args.resample.seed,
        reps,
        args.resample.confidence.get(),
        &|d| progress.set(d),
    )?;
    progress.finish();
    if let Some(p) = &args.plot {
        let boot = Some((args.resample.seed, u64::from(reps)));
        let caption = super::figure::panel_caption(&args.panel, &panel.outcome, boot);
        let svg = ragstats::plot::allocate(&report, &caption)?;
        let inputs = [args.panel.as_path(), &args.ledger, &args.prices];
        super::figure::write_svg(p, &svg, &inputs)?;
    }
    match args.format {
        Format::Json => {
            let mut v = serde_json::to_value(&report)?;
            v["backend"] = engine.name().into();
            v["adapter"] = engine.description().into();
            v["replicates"] = reps.into();
            v["seed"] = args.resample.seed.into();
            print_json(&v)?;
        }
        Format::Csv => {
            let mut rows = Vec::new();
            let mut push = |a: &str, b: &str, what: String, c: &Compared| {
                rows.push(vec![
                    a.to_string(),
                    b.to_string(),
                    what,
                    c.value.to_string(),
                    c.ci[0].to_string(),
                    c.ci[1].to_string(),
                    c.resolved.to_string(),
                ])
            };
            for p in &report.pairs {
                push(&p.a, &p.b, "se_reduction".into(), &p.se_reduction);
                push(
                    &p.a,
                    &p.b,
                    "var_x_tokens_ratio".into(),
                    &p.var_x_tokens_ratio,
                );
                for (price, c) in report.search_prices.iter().zip(&p.var_x_fees_ratio) {
                    push(&p.a, &p.b, format!("var_x_fees_ratio@{price}"), c);
                }
            }
            write_csv(
                &[
                    "a",
                    "b",
                    "statistic",
                    "value",
                    "ci_low",
                    "ci_high",
                    "resolved",
                ],
                &rows,
            )?;
        }
        Format::Table => out!(
            "{}",
            table(&report, &args.resample, reps, &engine.description())
        ),
    }
    Ok(0)
}

fn table(r: &AllocateReport, resample: &ResampleArgs, reps: u32, adapter: &str) -> String {
    let mut head = vec![
        "allocation".to_string(),
        "Q:T:R".into(),
        "estimate".into(),
        "SE".into(),
        "model tokens".into(),
    ];
    for p in &r.search_prices {
        head.push(format!("USD @{p}/1k"));
    }
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(&h);
    for a in &r.allocations {
        let mut row = vec![
            a.name.clone(),
            format!("{}:{}:{}", a.questions, a.trajectories, a.reads),
            num(a.estimate),
            num(a.se),
            format!("{:.0}", a.model_tokens),
        ];
        row.extend(a.fees_usd.iter().map(|f| format!("{f:.4}")));
        t.row(row);
    }
    let mut out = t.render();
    out.push_str(&format!(
        "\npairs ({} bootstrap intervals, {reps} replicates with common random numbers on {adapter}):\n",
        resample.confidence.percent()
    ));
    let fmt = |c: &Compared, pct: bool| {
        let s = if pct {
            format!(
                "{:.1}% [{:.1}%, {:.1}%]",
                100.0 * c.value,
                100.0 * c.ci[0],
                100.0 * c.ci[1]
            )
        } else {
            format!("{:.3} [{:.3}, {:.3}]", c.value, c.ci[0], c.ci[1])
        };
        format!("{s}{}", if c.resolved { "" } else { " unresolved" })
    };
    for p in &r.pairs {
        out.push_str(&format!(
            "  {} vs {}: {} reduces measured SE by {}\n",
            p.a,
            p.b,
            p.a,
            fmt(&p.se_reduction, true)
        ));
        out.push_str(&format!(
            "    variance x tokens ratio {}/{}: {}\n",
            p.a,
            p.b,
            fmt(&p.var_x_tokens_ratio, false)
        ));
        for (price, c) in r.search_prices.iter().zip(&p.var_x_fees_ratio) {
            out.push_str(&format!(
                "    variance x fees ratio at ${price}/1k searches: {}\n",
                fmt(c, false)
            ));
        }
    }
    out
}
