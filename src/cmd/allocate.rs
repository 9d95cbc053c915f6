//! `stats allocate`: nested allocations of one master panel compared on SE, cost, and
//! variance × cost, with paired bootstrap intervals. The comparison, priced from the
//! ledger, is [`ragstats_core::allocation::allocate::allocate`]; its tables are its view in the library.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::allocation::allocate::{
    allocate, AllocateReport, AllocateSettings, AllocationSpec,
};
use ragstats_core::allocation::walk::{CpuWalk, WalkBackend};
use ragstats_core::costs::accounting::PricedLedger;
use ragstats_core::ledger::{read_ledger, Prices};

use super::common::{Format, PanelOptions};
use super::cost::parse_sweep;
use super::render::{Figure, Finished};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;
use ragstats_gpu::select::select_walk;

/// Flags of `stats allocate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Master panel (CSV or JSONL); every allocation is a nested sub-panel of it.
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
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
    /// Cost per question (judging, annotation, set-up) added to every allocation's
    /// questions: TOKENS,USD (allocate reports both; a single number is tokens only).
    #[arg(long, value_name = "TOKENS,USD", value_parser = question_cost_flag)]
    pub question_cost: Option<[f64; 2]>,
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
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// What `stats allocate` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let (outcome, report) = compute(args)?;
    let figure = match &args.plot {
        Some(_) => {
            let e = &report.engine;
            let boot = Some((e.seed.unwrap_or_default(), e.replicates.unwrap_or_default()));
            let caption = super::figure::panel_caption(&args.panel, &outcome, boot);
            let svg = ragstats_plot::allocate(&report, &caption)?;
            Some(Figure::new(
                svg,
                &[
                    super::common::panel_paths(&args.panel, &args.more),
                    vec![args.ledger.clone(), args.prices.clone()],
                ]
                .concat(),
            ))
        }
        None => None,
    };
    let inputs = super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    )
    .with("ledger", args.ledger.display())
    .with("prices", args.prices.display());
    let notes = report.notes.clone();
    Ok(crate::cmd::render::finished("allocate", inputs, report)
        .with_figure(figure)
        .with_csv_notes(&notes))
}

/// Loads the panel, ledger and prices `args` names and compares the allocations: the
/// analysed outcome (figure captions name it) and the comparison.
pub fn compute(args: &Args) -> anyhow::Result<(String, AllocateReport)> {
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
    let entries = read_ledger(&args.ledger)?;
    let prices = Prices::read(&args.prices)?;
    let settings = AllocateSettings {
        order_seed: args.order_seed,
        search_prices: args.search_price.as_deref().map(parse_sweep).transpose()?,
        resampling: args.resample.resampling_of(reps),
        question_cost: args.question_cost.unwrap_or([0.0, 0.0]),
    };
    let ledger = PricedLedger {
        entries: &entries,
        path: &args.ledger,
        prices: Some(&prices),
        prices_path: Some(&args.prices),
    };
    let n = specs.len() as u64;
    // The exact-size paired walk runs on its own engine, CPU or GPU (the same sums bit for
    // bit); `auto` keeps a small job on the CPU, as every engine does.
    let draws = u64::from(reps) * n * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>();
    let walk: Box<dyn WalkBackend> = match select_walk(args.resample.backend.into(), draws)? {
        Some(g) => Box::new(g),
        None => Box::new(CpuWalk),
    };
    let progress = Progress::new(u64::from(reps) * n, "allocate");
    let report = allocate(&panel, &specs, &ledger, &settings, walk.as_ref(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    Ok((panel.outcome, report))
}

/// `--question-cost TOKENS,USD` (or `TOKENS`): non-negative finite numbers.
fn question_cost_flag(s: &str) -> Result<[f64; 2], String> {
    let bad = || format!("'{s}': expected TOKENS,USD (or TOKENS), non-negative numbers");
    let v = s
        .split(',')
        .map(|x| x.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<Vec<f64>, String>>()?;
    if !v.iter().all(|x| x.is_finite() && *x >= 0.0) {
        return Err(bad());
    }
    match v[..] {
        [t] => Ok([t, 0.0]),
        [t, u] => Ok([t, u]),
        _ => Err(bad()),
    }
}
