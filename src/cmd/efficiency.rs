//! `stats efficiency`: the one-read efficiency loss at fixed T (the headline) per stratum and
//! combined, the loss at fixed Q (appendix D) per stratum and pooled, with bootstrap intervals,
//! and the direct one-read versus two-read check (the analysis:
//! [`ragstats_core::analyses::efficiency`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::allocation::one_read_ledger::EfficiencyReport;
use ragstats_core::analyses::{efficiency, CostUnit, DrawEfficiency, EfficiencySettings};
use ragstats_core::costs::accounting::Budget;
use ragstats_core::panel::Source;

use super::common::{By, Format, PanelOptions};
use super::render::Finished;
use super::resample::{with_bars, ResampleArgs};

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

flag_enum! {
    /// Budget currency on the command line.
    pub enum CurrencyArg => CostUnit {
        /// Model tokens (input + output).
        Tokens,
        /// Dollars: model fees and search fees.
        Usd,
    }
}

impl CurrencyArg {
    /// The budget the core prices in, with the `--search-price` override for dollars.
    pub fn budget(self, search_price: Option<f64>) -> Budget {
        CostUnit::from(self).budget(search_price)
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> EfficiencySettings {
    EfficiencySettings {
        panel: args.opts.settings(),
        by: args
            .by
            .map(|By::Selector| ragstats_core::import::By::Selector),
        currency: args.currency.iter().map(|&c| c.into()).collect(),
        search_price: args.search_price,
        max_reads: args.max_reads,
        question_cost: args.question_cost,
        resample: args.resample.settings(),
    }
}

/// What `stats efficiency` prints for `args` (and the figure `--plot` asks for): the
/// library's [`efficiency`] of PANEL (and the logs read with it) priced from `--ledger`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let draw = |outcome: &str, report: &EfficiencyReport| {
        let e = &report.engine;
        let boot = Some((e.seed.unwrap_or_default(), e.replicates.unwrap_or_default()));
        let caption = super::figure::panel_caption(&args.panel, outcome, boot);
        ragstats_plot::efficiency(&report.analysis, &caption)
    };
    let draw: DrawEfficiency<'_> = match args.plot {
        Some(_) => Some(&draw),
        None => None,
    };
    let prices = args.prices.as_ref().map(Source::file);
    let done = with_bars(|progress| {
        efficiency(
            &Source::files(&args.panel, &args.more),
            &Source::file(&args.ledger),
            prices.as_ref(),
            &settings(args),
            &ragstats_gpu::Engines,
            progress,
            draw,
        )
    });
    Ok(done?)
}
