//! `stats efficiency`: the one-read efficiency loss at fixed T (the headline) per stratum and
//! combined, the loss at fixed Q (appendix D) per stratum and pooled, with bootstrap intervals,
//! and the direct one-read versus two-read check. The analysis, priced from the ledger, is
//! [`ragstats_core::allocation::one_read_ledger::efficiency_of_panel`]; its tables are its
//! view in the library.

mod ledger;

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::allocation::one_read_ledger::{
    efficiency_report, EfficiencyReport, EfficiencyJob,
};

use super::common::{By, Format, PanelOptions};
use super::render::sections_by_selector;
use super::render::{Figure, Finished, Rendered, Sections};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;
use ledger::{load_ledger, priced};

/// Flags of `stats efficiency`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
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
    /// Cost per question in the --currency's unit (judging, annotation, set-up), whatever
    /// its T and R: it enters the fixed-T loss (at fixed Q it is spent whatever R is).
    #[arg(long, value_name = "COST", default_value_t = 0.0, value_parser = super::cost::price_flag)]
    pub question_cost: f64,
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

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// What `stats efficiency` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let mut currencies = args.currency.clone();
    currencies.dedup();
    if args.question_cost != 0.0 && currencies.len() > 1 {
        return Err(UsageError(
            "--question-cost is in one currency: give one --currency with it".into(),
        )
        .into());
    }
    // One figure shows one analysis; several would overwrite each other in one file.
    if args.plot.is_some() && (args.by.is_some() || currencies.len() > 1) {
        return Err(UsageError(
            "--plot draws one analysis: give one --currency and, for a selector, --selector NAME instead of --by selector".into(),
        )
        .into());
    }
    if args.by == Some(By::Selector) {
        let sections = sections_by_selector(&args.panel, &args.opts, |opts| {
            by_currency(&Args {
                opts,
                by: None,
                ..args.clone()
            })
        })?;
        return Ok(crate::cmd::render::finished(
            "efficiency",
            inputs(args),
            sections,
        ));
    }
    if currencies.len() > 1 {
        return Ok(crate::cmd::render::finished_boxed(
            "efficiency",
            inputs(args),
            by_currency(args)?,
        ));
    }
    let (outcome, report) = compute(args)?;
    let figure = match &args.plot {
        Some(_) => {
            let e = &report.engine;
            let boot = Some((e.seed.unwrap_or_default(), e.replicates.unwrap_or_default()));
            let caption = super::figure::panel_caption(&args.panel, &outcome, boot);
            let svg = ragstats_plot::efficiency(&report.analysis, &caption)?;
            let mut files = vec![args.panel.as_path(), args.ledger.as_path()];
            files.extend(args.prices.as_deref());
            files.extend(args.more.iter().map(PathBuf::as_path));
            Some(Figure::new(svg, &files))
        }
        None => None,
    };
    // CSV has no place for the report's warnings; the one that changes how every interval
    // reads goes to stderr.
    let notes: Vec<String> = report
        .analysis
        .warnings
        .iter()
        .filter(|w| *w == ragstats_core::resample::summary::NO_SPREAD_NOTE)
        .cloned()
        .collect();
    Ok(
        crate::cmd::render::finished("efficiency", inputs(args), report)
            .with_figure(figure)
            .with_csv_notes(&notes),
    )
}

/// The envelope's inputs of `stats efficiency`.
fn inputs(args: &Args) -> ragstats_core::document::Inputs {
    super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    )
    .with("ledger", args.ledger.display())
    .with_opt("prices", args.prices.as_ref().map(|p| p.display()))
}

/// One analysis per currency asked for: one as it is, several as sections (each run with
/// the same seed, so the same resamples).
fn by_currency(args: &Args) -> anyhow::Result<Box<dyn Rendered>> {
    let mut currencies = args.currency.clone();
    currencies.dedup();
    if let [one] = currencies[..] {
        return Ok(Box::new(compute_in(args, one)?.1));
    }
    let items = currencies
        .iter()
        .map(|&c| Ok((c.unit().to_string(), Box::new(compute_in(args, c)?.1) as _)))
        .collect::<anyhow::Result<_>>()?;
    Ok(Box::new(Sections {
        by: "currency".into(),
        items,
    }))
}

/// Loads the panel, ledger and prices `args` names and runs the analysis in the first
/// currency asked for: the analysed outcome (figure captions name it) and the report.
pub fn compute(args: &Args) -> anyhow::Result<(String, EfficiencyReport)> {
    compute_in(args, args.currency[0])
}

/// Loads the panel, ledger and prices `args` names and runs the analysis in `currency`: the
/// analysed outcome and the report.
pub fn compute_in(
    args: &Args,
    currency: CurrencyArg,
) -> anyhow::Result<(String, EfficiencyReport)> {
    let replicates = args.resample.replicates()?;
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    let draws = u64::from(replicates) * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>();
    let engine = args.resample.engine(draws)?;
    let progress = Progress::new(u64::from(replicates), "efficiency");
    let (entries, prices) = load_ledger(&args.ledger, args.prices.as_deref())?;
    let settings = EfficiencyJob {
        budget: currency.budget(args.search_price),
        max_reads: args.max_reads,
        resampling: args.resample.resampling_of(replicates),
        question_cost: args.question_cost,
    };
    let ledger = priced(
        &entries,
        &args.ledger,
        prices.as_ref(),
        args.prices.as_deref(),
    );
    let report = efficiency_report(&panel, &ledger, &settings, engine.as_ref(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    Ok((panel.outcome, report))
}
