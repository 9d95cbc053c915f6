//! `stats efficiency`: the one-read efficiency loss at fixed T (the headline) per stratum and
//! combined, the loss at fixed Q (appendix D) per stratum and pooled, with bootstrap intervals,
//! and the direct one-read versus two-read check.

use std::path::{Path, PathBuf};

use ragstats_core::allocation::one_read::{
    analyse, analyse_unbalanced, OneReadReport, ReadCosts, ScopeResult,
};
use ragstats_core::costs::cost::{bill, for_selector, CellCosts, Currency};
use ragstats_core::costs::panel_costs::{
    question_costs, trajectory_costs, QuestionCost, TrajectoryCost,
};
use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::panel::Panel;
use ragstats_core::resample::engine::ResampleBackend;

use super::common::{
    by_selector, csv_num, design_cells, fixed, num, opt_num, print_json, print_sections,
    undefined_because, write_csv, By, Format, PanelOptions, Table,
};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

/// Flags of `stats efficiency`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Report each selector of the panel's `selector` column, then their average.
    #[arg(long, value_enum, value_name = "selector")]
    pub by: Option<By>,
    /// Cost ledger of the panel (JSONL).
    #[arg(long, value_name = "FILE")]
    pub ledger: PathBuf,
    /// Prices (TOML); needed for --currency usd.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// What the budget is counted in; `tokens,usd` reports both from one run (the same
    /// seed, so the same bootstrap resamples), one section per currency.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "tokens")]
    pub currency: Vec<CurrencyArg>,
    /// Search price in USD per 1,000 requests for --currency usd (default: the prices file's).
    #[arg(long, value_name = "USD", value_parser = super::cost::price_flag)]
    pub search_price: Option<f64>,
    /// Largest read count R the fixed-T loss minimises over (from 1).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_reads: u32,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the one-read loss (fixed T and fixed Q, with intervals) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Budget currency on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CurrencyArg {
    /// Model tokens (input + output).
    Tokens,
    /// Dollars: model fees and search fees.
    Usd,
}

/// Per-question costs of each stratum at the full panel design, and the reader costs of a
/// one-read (read 0) and a two-read (reads 0 and 1) panel as billed (empty when R < 2).
pub type PanelCosts = (Vec<Vec<QuestionCost>>, Vec<Vec<ReadCosts>>);

/// Loads a ledger (and prices) and returns its per-cell costs in `currency`: with one
/// selector analysed, only its reads are billed ([`for_selector`]).
fn cell_costs(selector: Option<&str>, input: &LedgerInput<'_>) -> anyhow::Result<CellCosts> {
    let LedgerInput {
        ledger,
        prices,
        currency,
        search_price,
    } = *input;
    let entries = for_selector(read_ledger(ledger)?, selector, ledger)?;
    let prices_doc = prices.map(Prices::read).transpose()?;
    if currency == CurrencyArg::Usd && prices_doc.is_none() {
        return Err(UsageError("--currency usd needs --prices FILE".into()).into());
    }
    let bills = bill(&entries, prices_doc.as_ref(), ledger, prices)?;
    let currency = match currency {
        CurrencyArg::Tokens => Currency::Tokens,
        CurrencyArg::Usd => Currency::Usd {
            search_usd_per_1000: search_price
                .or(prices_doc.as_ref().map(|p| p.search.usd_per_1000))
                .unwrap_or(0.0),
        },
    };
    Ok(CellCosts::new(&entries, &bills, currency, ledger)?)
}

/// Loads a ledger and returns the cost of every trajectory and read of every stratum as
/// they are in the panel (`[stratum][question][trajectory]`; balanced or not).
pub fn trajectory_panel_costs(
    panel: &Panel,
    input: &LedgerInput<'_>,
) -> anyhow::Result<Vec<Vec<Vec<TrajectoryCost>>>> {
    let cells = cell_costs(panel.selector.as_deref(), input)?;
    let ledger = input.ledger;
    Ok(panel
        .strata
        .iter()
        .map(|s| trajectory_costs(s, &cells, ledger))
        .collect::<ragstats_core::Result<_>>()?)
}

/// Loads a ledger and returns the panel's costs (see [`PanelCosts`]); the panel must be
/// balanced.
pub fn panel_costs(panel: &Panel, input: &LedgerInput<'_>) -> anyhow::Result<PanelCosts> {
    let cells = cell_costs(panel.selector.as_deref(), input)?;
    let ledger = input.ledger;
    let full = panel
        .strata
        .iter()
        .map(|s| {
            let traj: Vec<usize> = (0..s.t()).collect();
            let reads: Vec<usize> = (0..s.r()).collect();
            question_costs(s, &cells, 0..s.q(), &traj, &reads, ledger)
        })
        .collect::<ragstats_core::Result<_>>()?;
    let reads = if panel.strata.iter().all(|s| s.r() >= 2) {
        panel
            .strata
            .iter()
            .map(|s| {
                let traj: Vec<usize> = (0..s.t()).collect();
                let one = question_costs(s, &cells, 0..s.q(), &traj, &[0], ledger)?;
                let two = question_costs(s, &cells, 0..s.q(), &traj, &[0, 1], ledger)?;
                Ok(one
                    .iter()
                    .zip(&two)
                    .map(|(a, b)| ReadCosts {
                        one: a.reads,
                        two: b.reads,
                    })
                    .collect())
            })
            .collect::<ragstats_core::Result<_>>()?
    } else {
        Vec::new()
    };
    Ok((full, reads))
}

/// A ledger, its prices and the currency to bill it in.
#[derive(Clone, Copy)]
pub struct LedgerInput<'a> {
    pub ledger: &'a Path,
    pub prices: Option<&'a Path>,
    pub currency: CurrencyArg,
    pub search_price: Option<f64>,
}

/// The one-read efficiency analysis of `panel` priced from a ledger: a balanced panel by
/// the sums-based analysis (bit for bit as before unbalanced panels were accepted), an
/// unbalanced one from every trajectory's and read's cost as it is, with REML components.
#[allow(clippy::too_many_arguments)]
pub fn report_of(
    panel: &Panel,
    input: &LedgerInput<'_>,
    engine: &dyn ResampleBackend,
    seed: u64,
    replicates: u32,
    confidence: f64,
    max_reads: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<OneReadReport> {
    Ok(if panel.strata.iter().all(|s| s.is_balanced()) {
        let (costs, read_costs) = panel_costs(panel, input)?;
        analyse(
            &panel.strata,
            &costs,
            &read_costs,
            engine,
            seed,
            replicates,
            confidence,
            max_reads,
            progress,
        )?
    } else {
        let costs = trajectory_panel_costs(panel, input)?;
        analyse_unbalanced(
            panel, &costs, engine, seed, replicates, confidence, max_reads, progress,
        )?
    })
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    // One figure shows one analysis; several would overwrite each other in one file.
    let sections = args.by.is_some() || args.currency.len() > 1;
    if args.plot.is_some() && sections {
        return Err(UsageError(
            "--plot draws one analysis: give one --currency and, for a selector, --selector NAME instead of --by selector".into(),
        )
        .into());
    }
    if args.by == Some(By::Selector) {
        return by_selector(&args.panel, &args.opts, args.format, |opts| {
            by_currency(Args {
                opts,
                by: None,
                ..args.clone()
            })
        });
    }
    by_currency(args)
}

/// Runs one analysis per currency asked for: one as before, several as sections.
fn by_currency(args: Args) -> anyhow::Result<u8> {
    let mut currencies = args.currency.clone();
    currencies.dedup();
    if currencies.len() == 1 {
        return run_one(args, currencies[0]);
    }
    let mut sections = Vec::new();
    let mut code = 0;
    for c in currencies {
        let (rc, bytes) = super::out::capture(|| run_one(args.clone(), c))?;
        code = code.max(rc);
        sections.push((unit(c).to_string(), bytes));
    }
    print_sections("currency", &sections, args.format)?;
    Ok(code)
}

/// How a currency is named in outputs.
fn unit(c: CurrencyArg) -> &'static str {
    match c {
        CurrencyArg::Tokens => "tokens",
        CurrencyArg::Usd => "USD",
    }
}

fn run_one(args: Args, currency: CurrencyArg) -> anyhow::Result<u8> {
    let range = 0..args.resample.replicates()?;
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    let engine = args
        .resample
        .engine(u64::from(range.end) * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>())?;
    let progress = Progress::new(u64::from(range.end), "efficiency");
    let report = report_of(
        &panel,
        &LedgerInput {
            ledger: &args.ledger,
            prices: args.prices.as_deref(),
            currency,
            search_price: args.search_price,
        },
        engine.as_ref(),
        args.resample.seed,
        range.end,
        args.resample.confidence.get(),
        args.max_reads,
        &|d| progress.set(d),
    )?;
    progress.finish();
    if let Some(p) = &args.plot {
        let boot = Some((args.resample.seed, u64::from(range.end)));
        let caption = super::figure::panel_caption(&args.panel, &panel.outcome, boot);
        let svg = ragstats_plot::efficiency(&report, &caption)?;
        let mut inputs = vec![args.panel.as_path(), args.ledger.as_path()];
        inputs.extend(args.prices.as_deref());
        super::figure::write_svg(p, &svg, &inputs)?;
    }
    let unit = unit(currency);
    match args.format {
        Format::Json => {
            let mut v = serde_json::to_value(&report)?;
            v["currency"] = unit.into();
            v["backend"] = engine.name().into();
            v["adapter"] = engine.description().into();
            v["replicates"] = range.end.into();
            v["seed"] = args.resample.seed.into();
            add_undefined(&mut v, &report);
            print_json(&v)?;
        }
        Format::Csv => {
            let header = [
                "analysis",
                "scope",
                "questions",
                "trajectories",
                "reads",
                "c_t",
                "c_r",
                "r_star",
                "r_best",
                "loss_percent",
                "loss_ci_low",
                "loss_ci_high",
            ];
            let mut header = header.to_vec();
            if report.unbalanced {
                header.push("method");
            }
            let rows = csv_rows(&report);
            write_csv(&header, &rows)?;
        }
        Format::Table => out!(
            "{}",
            table(
                &report,
                unit,
                &engine.description(),
                range.end,
                &args.resample.confidence.percent()
            )
        ),
    }
    Ok(0)
}

fn scopes(r: &OneReadReport) -> impl Iterator<Item = &ScopeResult> {
    r.strata.iter().chain(r.pooled.iter())
}

/// The CSV cells R*, best R, loss % and its interval ends (empty where undefined), shared
/// by the fixed-T, combined and fixed-Q rows.
fn loss_csv(e: Option<(f64, u32, f64)>, ci: Option<[f64; 2]>) -> [String; 5] {
    let o = |v: Option<f64>| v.map(csv_num).unwrap_or_default();
    [
        o(e.map(|e| e.0)),
        o(e.map(|e| f64::from(e.1))),
        o(e.map(|e| e.2)),
        o(ci.map(|c| c[0])),
        o(ci.map(|c| c[1])),
    ]
}

fn csv_rows(r: &OneReadReport) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for s in &r.strata {
        let e = s.fixed_t.as_ref();
        let mut row = vec!["fixed_t".to_string()];
        row.extend(scope_design(s));
        row.extend([csv_num(s.unit_costs.trajectory), csv_num(s.unit_costs.read)]);
        row.extend(loss_csv(
            e.map(|e| (e.r_star, e.r_best, e.loss_percent)),
            s.fixed_t_loss_ci,
        ));
        row.extend(method_cell(r, s));
        rows.push(row);
    }
    let c = &r.combined;
    let e = c.fixed_t.as_ref();
    let (t, rd) = common_design(r);
    rows.push(vec![
        "fixed_t".into(),
        "combined".into(),
        c.questions.to_string(),
        t.unwrap_or_default(),
        rd.unwrap_or_default(),
        String::new(),
        String::new(),
    ]);
    rows.last_mut().expect("just pushed").extend(loss_csv(
        e.map(|e| (e.r_star, e.r_best, e.loss_percent)),
        c.loss_ci,
    ));
    if r.unbalanced {
        rows.last_mut().expect("just pushed").push(String::new());
    }
    for s in scopes(r) {
        let e = s.efficiency.as_ref();
        let mut row = vec!["fixed_q".to_string()];
        row.extend(scope_design(s));
        row.extend([csv_num(s.unit_costs.trajectory), csv_num(s.unit_costs.read)]);
        row.extend(loss_csv(
            e.map(|e| (e.r_star, e.r_best, e.loss_percent)),
            s.loss_ci,
        ));
        row.extend(method_cell(r, s));
        rows.push(row);
    }
    rows
}

/// T and R of the combination as text when every stratum shares them.
fn common_design(r: &OneReadReport) -> (Option<String>, Option<String>) {
    if r.unbalanced {
        return (None, None);
    }
    let same = |f: fn(&ScopeResult) -> usize| {
        let first = r.strata.first().map(f)?;
        r.strata
            .iter()
            .all(|s| f(s) == first)
            .then(|| first.to_string())
    };
    (same(|s| s.trajectories), same(|s| s.reads))
}

fn loss_cells(
    r_star: Option<f64>,
    r_best: Option<u32>,
    loss: Option<f64>,
    ci: Option<[f64; 2]>,
) -> [String; 4] {
    [
        opt_num(r_star),
        r_best.map(|r| r.to_string()).unwrap_or_else(|| "-".into()),
        loss.map(|l| fixed(l, 2)).unwrap_or_else(|| "-".into()),
        ci.map(|c| format!("[{}, {}]", fixed(c[0], 2), fixed(c[1], 2)))
            .unwrap_or_else(|| "-".into()),
    ]
}

fn table(r: &OneReadReport, unit: &str, adapter: &str, reps: u32, pct: &str) -> String {
    let mut out = format!(
        "one-read efficiency loss at fixed T (the headline): J_T(R) = SE^2 x cost with T fixed and the budget spent on questions, integer R from 1 to {} ({unit}); bootstrap {reps} replicates on {adapter}\n\n",
        r.max_reads
    );
    let ci_head = format!("{pct} CI");
    let head = |r_star: &'static str| {
        let mut h = vec![
            "scope", "Q", "T", "R", "c_T", "c_R", r_star, "R best", "loss %", &ci_head,
        ];
        if r.unbalanced {
            h.push("method");
        }
        Table::new(&h)
    };
    let mut t = head("R*_T");
    for s in &r.strata {
        let e = s.fixed_t.as_ref();
        let mut row = scope_design(s);
        row.extend([num(s.unit_costs.trajectory), num(s.unit_costs.read)]);
        row.extend(loss_cells(
            e.map(|e| e.r_star),
            e.map(|e| e.r_best),
            e.map(|e| e.loss_percent),
            s.fixed_t_loss_ci,
        ));
        row.extend(method_cell(r, s));
        t.row(row);
    }
    let c = &r.combined;
    let e = c.fixed_t.as_ref();
    let (ct, cr) = common_design(r);
    let dash = || "-".to_string();
    let mut row = vec![
        "combined".to_string(),
        c.questions.to_string(),
        ct.unwrap_or_else(dash),
        cr.unwrap_or_else(dash),
        dash(),
        dash(),
    ];
    row.extend(loss_cells(
        e.map(|e| e.r_star),
        e.map(|e| e.r_best),
        e.map(|e| e.loss_percent),
        c.loss_ci,
    ));
    if r.unbalanced {
        row.push(dash());
    }
    t.row(row);
    out.push_str(&t.to_text());
    out.push_str("\nfixed Q (appendix D), budget anchored at the panel's cost:\n");
    let mut t = head("R*");
    for s in scopes(r) {
        let e = s.efficiency.as_ref();
        let mut row = scope_design(s);
        row.extend([num(s.unit_costs.trajectory), num(s.unit_costs.read)]);
        row.extend(loss_cells(
            e.map(|e| e.r_star),
            e.map(|e| e.r_best),
            e.map(|e| e.loss_percent),
            s.loss_ci,
        ));
        row.extend(method_cell(r, s));
        t.row(row);
    }
    out.push_str(&t.to_text());
    for n in undefined_notes(r) {
        out.push_str(&format!(
            "  {} {}: {}\n",
            n.scope,
            n.field,
            undefined_because(&n.reason)
        ));
    }
    if let Some(d) = &r.direct {
        let ci = |c: Option<[f64; 2]>| {
            c.map(|c| format!(" [{}, {}]", fixed(c[0], 4), fixed(c[1], 4)))
                .unwrap_or_default()
        };
        let pairs: Vec<String> = d
            .pairs
            .iter()
            .map(|p| {
                format!(
                    "reads {},{}: {}{}",
                    p.reads[0],
                    p.reads[1],
                    ratio_text(p.ratio, d.se_one_read, d.se_two_reads),
                    ci(p.ci)
                )
            })
            .collect();
        out.push_str(&format!(
            "\ndirect check (no components), averaged over {} disjoint pairs of reads: one-read SE {} vs two-read SE {}; variance x cost ratio one/two = {}{}\n  costs as billed ({unit}): one read = read 0, two reads = reads 0 and 1: panel cost {} vs {}\n  per pair: {}\n",
            d.pairs.len(),
            num(d.se_one_read),
            num(d.se_two_reads),
            ratio_text(d.ratio, d.se_one_read, d.se_two_reads),
            ci(d.ci),
            num(d.cost_one_read),
            num(d.cost_two_reads),
            pairs.join("; ")
        ));
        if r.unbalanced {
            out.push_str("  unbalanced panel: pair (a, b) uses every trajectory with both reads a and b (trajectories with fewer reads are left out, and questions without such a trajectory); the costs are those of the trajectories with at least 2 reads\n");
        }
    }
    if r.unbalanced {
        out.push_str(UNBALANCED_NOTE);
    }
    out
}

/// What the table of an unbalanced panel says about its method and design.
const UNBALANCED_NOTE: &str = "\nnote: unbalanced panel: components as `stats variance` fits them (REML for unbalanced strata and the pooled fit, ANOVA for balanced strata), refitted in every bootstrap replicate (whole questions resampled); T and R are min/mean/max per question and per trajectory, the losses are taken at the mean design (T = trajectories/Q, R = reads/trajectories), and c_T, c_R are the mean cost per trajectory and per read over the cells that exist\n";

/// A scope's name and design cells: Q, T, R, or for an unbalanced panel Q and the
/// min/mean/max of T per question and of R per trajectory (as `stats variance` prints them).
fn scope_design(s: &ScopeResult) -> Vec<String> {
    match &s.shape {
        Some(shape) => super::variance::shape_cells(&s.name, shape),
        None => design_cells(&s.name, s.questions, s.trajectories, s.reads),
    }
}

/// The method cell of a scope, present only for an unbalanced panel.
fn method_cell(r: &OneReadReport, s: &ScopeResult) -> Option<String> {
    r.unbalanced
        .then(|| s.method.map_or("-", |m| m.name()).to_string())
}

/// One value of the report that is undefined, and why.
struct Undefined {
    /// `a stratum's name`, `pooled` or `combined`.
    scope: String,
    /// The JSON field that is `null` (or missing) because of it.
    field: &'static str,
    reason: String,
}

/// Why a scope's losses are undefined when J = SE² x cost cannot be formed.
fn loss_reason(s: &ScopeResult) -> String {
    let c = &s.components;
    let total = c.question + c.trajectory.unwrap_or(0.0) + c.read.unwrap_or(0.0);
    if total == 0.0 {
        "the scores do not vary (every variance component is 0), so SE^2 x cost is 0 at every R and the loss is 0/0".into()
    } else if s.unit_costs.read.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        format!(
            "c_R is {}, so reads cost nothing to trade against questions",
            num(s.unit_costs.read)
        )
    } else {
        "SE^2 x cost at R = 1 is not positive (the truncated components sum to 0)".into()
    }
}

/// Why R* (sqrt(σ²_read c_T / (σ²_traj c_R))) is not finite: it is unbounded when the
/// trajectory component is not positive.
fn r_star_reason(s: &ScopeResult) -> String {
    match s.components.trajectory {
        Some(t) if t <= 0.0 => format!(
            "the trajectory component is {} (not positive), so more reads always beat more trajectories and R* is unbounded",
            num(t)
        ),
        None => "the panel has one trajectory per question, so the trajectory component is not estimable".into(),
        _ => "c_R is 0, so R* is unbounded".into(),
    }
}

/// Every undefined value of the report with its reason, in table order.
fn undefined_notes(r: &OneReadReport) -> Vec<Undefined> {
    let mut notes = Vec::new();
    let mut note = |scope: &str, field, reason| {
        notes.push(Undefined {
            scope: scope.to_string(),
            field,
            reason,
        })
    };
    for s in &r.strata {
        match &s.fixed_t {
            None => note(&s.name, "fixed_t", loss_reason(s)),
            Some(e) if !e.r_star.is_finite() => note(&s.name, "fixed_t.r_star", r_star_reason(s)),
            Some(_) => {}
        }
    }
    if r.combined.fixed_t.is_none() {
        let bad: Vec<&str> = r
            .strata
            .iter()
            .filter(|s| s.fixed_t.is_none())
            .map(|s| s.name.as_str())
            .collect();
        note(
            "combined",
            "fixed_t",
            if bad.is_empty() {
                "SE^2 x cost of the combination is not positive at R = 1".into()
            } else {
                format!("the loss is undefined in {}", bad.join(", "))
            },
        );
    }
    for s in scopes(r) {
        match &s.efficiency {
            None => note(&s.name, "efficiency", loss_reason(s)),
            Some(e) => {
                if !e.loss_percent.is_finite() {
                    note(&s.name, "efficiency.loss_percent", loss_reason(s));
                }
                if !e.r_star.is_finite() {
                    note(&s.name, "efficiency.r_star", r_star_reason(s));
                }
            }
        }
    }
    notes
}

/// The direct check's variance x cost ratio, or `undefined (why)`.
fn ratio_text(ratio: f64, se_one: f64, se_two: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.4}")
    } else {
        undefined_because(&direct_reason(se_one, se_two))
    }
}

fn direct_reason(se_one: f64, se_two: f64) -> String {
    if se_one == 0.0 && se_two == 0.0 {
        "both SEs are 0 (the scores do not vary), so the ratio is 0/0".into()
    } else {
        "the two-read variance x cost is 0".into()
    }
}

/// Adds an `undefined` object (field -> reason) to each JSON scope with a `null` or missing
/// value, and to `direct` when its ratio is `null`.
fn add_undefined(v: &mut serde_json::Value, r: &OneReadReport) {
    for n in undefined_notes(r) {
        let target = match n.scope.as_str() {
            "combined" => Some(&mut v["combined"]),
            "pooled" if r.pooled.is_some() => Some(&mut v["pooled"]),
            name => r
                .strata
                .iter()
                .position(|s| s.name == name)
                .map(|i| &mut v["strata"][i]),
        };
        if let Some(t) = target {
            t["undefined"][n.field] = n.reason.into();
        }
    }
    if let Some(d) = &r.direct {
        if !d.ratio.is_finite() {
            v["direct"]["undefined"]["ratio"] = direct_reason(d.se_one_read, d.se_two_reads).into();
        }
    }
}
