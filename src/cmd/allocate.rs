//! `stats allocate`: nested allocations of one master panel compared on SE, cost, and
//! variance × cost, with paired bootstrap intervals (the analysis:
//! [`ragstats_core::analyses::allocate`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::allocation::allocate::AllocateReport;
use ragstats_core::analyses::{
    allocate, AllocateSettings, DrawAllocate, QuestionCosts, SearchPrices,
};
use ragstats_core::panel::Source;

use super::common::{Format, PanelOptions};
use super::render::Finished;
use super::resample::{with_bars, ResampleArgs};

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
    #[arg(long, value_name = "TOKENS,USD")]
    pub question_cost: Option<String>,
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

/// The library's settings for `args`.
pub fn settings(args: &Args) -> AllocateSettings {
    AllocateSettings {
        panel: args.opts.settings(),
        allocation: args.allocations.clone(),
        order_seed: args.order_seed,
        search_price: args.search_price.clone().map(SearchPrices::Text),
        question_cost: args.question_cost.clone().map(QuestionCosts::Text),
        resample: args.resample.settings(),
    }
}

/// What `stats allocate` prints for `args` (and the figure `--plot` asks for): the
/// library's [`allocate`] of PANEL (and the logs read with it) priced from `--ledger` and
/// `--prices`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let draw = |outcome: &str, report: &AllocateReport| {
        let e = &report.engine;
        let boot = Some((e.seed.unwrap_or_default(), e.replicates.unwrap_or_default()));
        let caption = super::figure::panel_caption(&args.panel, outcome, boot);
        ragstats_plot::allocate(report, &caption)
    };
    let draw: DrawAllocate<'_> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let done = with_bars(|progress| {
        allocate(
            &Source::files(&args.panel, &args.more),
            &Source::file(&args.ledger),
            &Source::file(&args.prices),
            &settings(args),
            &ragstats_gpu::Engines,
            progress,
            draw,
        )
    });
    Ok(done?)
}
