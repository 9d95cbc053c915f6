//! `stats allocate`: nested allocations of one master panel compared on SE, cost, and
//! variance × cost, with paired bootstrap intervals.

use std::path::PathBuf;

use ragstats_core::allocation::allocate::{
    compare, question_order, AllocateReport, AllocationSpec, Compared, PairResult,
};
use ragstats_core::costs::cost::{bill, for_selector, parse_sweep, CellCosts, Currency};
use ragstats_core::ledger::{read_ledger, Prices};

use super::common::{
    csv_num, fixed, num, print_json, undefined_because, write_csv, Format, PanelOptions, Table,
    UNDEFINED,
};
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
        .collect::<ragstats_core::Result<_>>()?;
    if specs.len() < 2 {
        return Err(UsageError("give at least two --allocation to compare".into()).into());
    }
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    let entries = for_selector(
        read_ledger(&args.ledger)?,
        panel.selector.as_deref(),
        &args.ledger,
    )?;
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
        let svg = ragstats_plot::allocate(&report, &caption)?;
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
            if let Some(design) = master_design(&panel) {
                v["master_design"] = design;
            }
            for (i, p) in report.pairs.iter().enumerate() {
                if let Some(why) = pair_undefined(&report, p) {
                    v["pairs"][i]["undefined"] = why.into();
                }
            }
            print_json(&v)?;
        }
        Format::Csv => {
            let mut rows = Vec::new();
            let mut push = |a: &str, b: &str, what: String, c: &Compared| {
                rows.push(vec![
                    a.to_string(),
                    b.to_string(),
                    what,
                    csv_num(c.value),
                    csv_num(c.ci[0]),
                    csv_num(c.ci[1]),
                    if c.value.is_finite() {
                        c.resolved.to_string()
                    } else {
                        String::new()
                    },
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
        Format::Table => {
            out!(
                "{}",
                table(&report, &args.resample, reps, &engine.description())
            );
            if let Some(note) = unbalanced_note(&panel, &report) {
                out!("{note}");
            }
        }
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
    let mut out = t.to_text();
    out.push_str(&format!(
        "\npairs ({} bootstrap intervals, {reps} replicates with common random numbers on {adapter}):\n",
        resample.confidence.percent()
    ));
    let fmt = |c: &Compared, pct: bool| {
        if !c.value.is_finite() {
            return UNDEFINED.to_string();
        }
        let s = if pct {
            format!(
                "{:.1}% [{}%, {}%]",
                100.0 * c.value,
                fixed(100.0 * c.ci[0], 1),
                fixed(100.0 * c.ci[1], 1)
            )
        } else {
            format!(
                "{:.3} [{}, {}]",
                c.value,
                fixed(c.ci[0], 3),
                fixed(c.ci[1], 3)
            )
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
        if let Some(why) = pair_undefined(r, p) {
            out.push_str(&format!("    {}\n", undefined_because(&why)));
        }
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

/// Why a pair's comparisons are undefined (`null`), if any is: a ratio or reduction of SEs
/// that are 0.
fn pair_undefined(r: &AllocateReport, p: &PairResult) -> Option<String> {
    let all = std::iter::once(&p.se_reduction)
        .chain(std::iter::once(&p.var_x_tokens_ratio))
        .chain(&p.var_x_fees_ratio);
    if all.clone().all(|c| c.value.is_finite()) {
        return None;
    }
    let se = |n: &str| r.allocations.iter().find(|a| a.name == n).map(|a| a.se);
    Some(match se(&p.b) {
        Some(0.0) => format!(
            "the measured SE of {} is 0 (the scores do not vary), so reductions and ratios against it are undefined",
            p.b
        ),
        _ => "an SE or a cost is not positive and finite".into(),
    })
}

/// The master panel's design per stratum when it is unbalanced (for JSON): method, and
/// questions with min/mean/max trajectories per question and reads per trajectory.
fn master_design(panel: &ragstats_core::panel::Panel) -> Option<serde_json::Value> {
    if panel.strata.iter().all(|s| s.is_balanced()) {
        return None;
    }
    let strata: Vec<serde_json::Value> = panel
        .strata
        .iter()
        .map(|s| {
            let shape = ragstats_core::components::variance::nested_stratum(s).map(|n| n.shape());
            serde_json::json!({
                "name": s.name,
                "method": "measured SE (no components)",
                "balanced": s.is_balanced(),
                "shape": shape.ok(),
            })
        })
        .collect();
    Some(serde_json::Value::Array(strata))
}

/// What the table says about an unbalanced master panel: each stratum's design spread and,
/// per allocation, the questions that fall short of its T trajectories of R reads.
fn unbalanced_note(panel: &ragstats_core::panel::Panel, r: &AllocateReport) -> Option<String> {
    if panel.strata.iter().all(|s| s.is_balanced()) {
        return None;
    }
    let mut out = String::from(
        "\nnote: the master panel is unbalanced; the allocations compare measured SEs (no components are fitted). \
         Sub-panel Q:T:R = the first Q questions, each with its first T trajectories (in its own label order) and the \
         first R reads of each; a question with fewer keeps what it has. Master design (T and R min/mean/max per \
         question and per trajectory):\n",
    );
    let mut t = Table::new(&["stratum", "Q", "T", "R"]);
    for s in &panel.strata {
        if let Ok(n) = ragstats_core::components::variance::nested_stratum(s) {
            t.row(super::variance::shape_cells(&s.name, &n.shape()));
        }
    }
    out.push_str(&t.to_text());
    for a in &r.allocations {
        if let Some(short) = &a.short {
            let parts: Vec<String> = short.iter().map(|(n, k)| format!("{k} in {n}")).collect();
            out.push_str(&format!(
                "note: {} ({}:{}:{}): questions with fewer than {} trajectories of {} reads, kept with what they have: {}\n",
                a.name,
                a.questions,
                a.trajectories,
                a.reads,
                a.trajectories,
                a.reads,
                parts.join(", ")
            ));
        }
    }
    Some(out)
}
