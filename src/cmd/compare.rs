//! `stats compare`: every arm of a panel against every other (or against one reference) —
//! estimates, paired differences with raw, Holm and BH p-values, simultaneous intervals,
//! rank intervals, best shares and what the next study needs (the analysis:
//! [`ragstats_core::analyses::compare`]).

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::analyses::{compare, CompareSettings, CostUnit, SearchBounds};
use ragstats_core::compare::CompareReport;
use ragstats_core::inference::IntervalRule;
use ragstats_core::panel::{SelectorChoice, Source};

use super::common::{Format, PanelOptions};
use super::efficiency::CurrencyArg;
use super::render::Finished;
use super::resample::{with_bars, ResampleArgs};
use super::UsageError;

/// Flags of `stats compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel (CSV, JSONL, Parquet, or inspect_ai / lm-eval logs) with two or more arms.
    pub panel: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with PANEL as one panel (a shell glob such as
    /// `logs/*.eval`; a directory of logs works too).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    /// The column whose values are the systems compared (default: `arm`), e.g. `selector`
    /// for the selectors of a retrieval study or `model`; cells are paired on dataset,
    /// question, trajectory and read as arms are. A panel with several arms needs --arm.
    #[arg(long, value_name = "selector|model|COLUMN")]
    pub by: Option<String>,
    /// With --by: compare the systems within this arm (needed when the panel's `arm` column
    /// has several values).
    #[arg(long, value_name = "NAME", requires = "by")]
    pub arm: Option<String>,
    /// Score column to analyse (default: `f1` if present, else the only non-key column).
    #[arg(long, value_name = "COLUMN")]
    pub metric: Option<String>,
    /// Compare only these systems (comma-separated names of the arm, or --by, column): the
    /// other systems' rows are left out before anything is checked, so their duplicates and
    /// missing questions do not stop the comparison.
    #[arg(long, value_name = "A,B,…", value_delimiter = ',', num_args = 1..)]
    pub arms: Vec<String>,
    /// Compare every arm with this one only (a Dunnett-style family) instead of every pair.
    #[arg(long, value_name = "ARM")]
    pub reference: Option<String>,
    #[command(flatten)]
    pub labels: super::common::LabelOptions,
    /// Drop questions that differ from their stratum's design instead of fitting them by REML.
    #[arg(long)]
    pub drop_incomplete: bool,
    /// Score a cell one arm of a pair lacks as X for that pair (the reader never answered)
    /// instead of leaving the cell out of the pair's difference.
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub failure_score: Option<f64>,
    /// With a `selector` column: one selector's rows, or `average` (the default).
    #[arg(long, value_name = "NAME|average")]
    pub selector: Option<SelectorChoice>,
    /// Power the next study's question count is planned for.
    #[arg(long, default_value_t = 0.8, value_name = "P")]
    pub power: f64,
    /// Intervals and tests: `auto` uses the score methods (Wilson, Newcombe, exact McNemar)
    /// for a binary outcome with one cell per question and Student t otherwise; `t` and
    /// `score` force one; `clopper-pearson` is `score` with Clopper-Pearson's exact
    /// (conservative) interval for each system instead of Wilson's.
    #[arg(long, value_enum, default_value_t = IntervalArg::Auto)]
    pub interval: IntervalArg,
    /// Cost ledger (JSONL) of the panel: the next step then names the cheapest Q:T:R that
    /// resolves the closest unresolved pair (`stats plan`'s search) and its cost.
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// Prices (TOML); needed for dollars with --ledger.
    #[arg(long, value_name = "FILE", requires = "ledger")]
    pub prices: Option<PathBuf>,
    /// What the next step's cost is counted in (default: tokens).
    #[arg(long, value_enum, requires = "ledger")]
    pub currency: Option<super::efficiency::CurrencyArg>,
    /// Search price in USD per 1,000 requests for dollars (default: the prices file's).
    #[arg(long, value_name = "USD", requires = "ledger", value_parser = super::cost::price_flag)]
    pub search_price: Option<f64>,
    /// Cost per question in the next step's currency (judging, annotation, set-up).
    #[arg(long, value_name = "COST", default_value_t = 0.0, requires = "ledger", value_parser = super::cost::price_flag)]
    pub question_cost: f64,
    /// With --labels and --ledger: the cost of one label (one labelled question's human
    /// score) in the next step's currency; the next step then names the cheapest labels and
    /// Q:T:R that resolve the closest unresolved pair.
    #[arg(long, value_name = "COST", requires_all = ["labels", "ledger"], value_parser = super::cost::price_flag)]
    pub label_cost: Option<f64>,
    /// With --label-cost: the fewest labels the next step gives a stratum (at least 2).
    #[arg(long, value_name = "N", default_value_t = 40, requires = "label_cost")]
    pub min_labels: usize,
    /// With --ledger: the bounds of the next step's least-cost search.
    #[command(flatten)]
    pub bounds: super::plan::BoundsArgs,
    #[command(flatten)]
    pub resample: ResampleArgs,
    #[command(flatten)]
    pub shape: super::common::ShapeFlags,
    #[command(flatten)]
    pub import: super::common::ImportFlags,
    /// Print every pair in the table output. Past 10 systems the tables show by default only
    /// the leader against the rest of the top group and each system against the next by
    /// estimate (JSON and CSV always hold every pair).
    #[arg(long)]
    pub all_pairs: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the systems' intervals and the matrix of adjusted p-values as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(args.plot.as_deref(), args.format)
}

/// The library's settings for `args`.
pub fn settings(args: &Args) -> CompareSettings {
    let panel = PanelOptions {
        metric: args.metric.clone(),
        arm: args.arm.clone(),
        drop_incomplete: args.drop_incomplete,
        selector: args.selector.clone(),
        failure_score: args.failure_score,
        shape: args.shape.clone(),
        import: args.import.clone(),
        ..Default::default()
    }
    .settings();
    CompareSettings {
        panel,
        by: args.by.clone(),
        arms: args.arms.clone(),
        reference: args.reference.clone(),
        power: args.power,
        interval: args.interval.into(),
        resample: args.resample.settings(),
        all_pairs: args.all_pairs,
        currency: args.currency.map(|c| match c {
            CurrencyArg::Tokens => CostUnit::Tokens,
            CurrencyArg::Usd => CostUnit::Usd,
        }),
        search_price: args.search_price,
        question_cost: args.question_cost,
        bounds: SearchBounds {
            max_questions: args.bounds.max_questions,
            max_trajectories: args.bounds.max_trajectories,
            max_reads: args.bounds.max_reads,
        },
        judged: args.labels.settings(),
        label_cost: args.label_cost,
        min_labels: args.min_labels,
    }
}

/// The refusals the command line words its own way, naming its flags as they were typed
/// (tests/it hold these words): `--by selector` with `--selector`, `--by` of evaluation
/// logs (which `--arm-from` maps), the search's bounds without `--ledger`, and `--arms`
/// with an empty name. The library refuses the same settings in its words.
fn refusals(args: &Args) -> Result<(), UsageError> {
    let by = args.by.as_deref().map(str::trim);
    if by == Some("selector") && args.selector.is_some() {
        return Err(UsageError(
            "--by selector compares the selectors; --selector picks one of them: give one or the other"
                .into(),
        ));
    }
    if by.is_some_and(|c| !c.is_empty() && c != "arm")
        && ragstats_core::import::is_log_input(&args.panel)
    {
        return Err(UsageError(format!(
            "--by reads a column of a panel, and {} holds evaluation logs: choose what the systems are with --arm-from model|task|solver|metadata:KEY",
            args.panel.display()
        )));
    }
    if args.ledger.is_none() && args.bounds != super::plan::BoundsArgs::default() {
        return Err(UsageError(
            "--max-questions, --max-trajectories and --max-reads bound the next step's priced \
             search, which needs --ledger"
                .into(),
        ));
    }
    if args.arms.iter().any(|a| a.trim().is_empty()) {
        return Err(UsageError(format!(
            "--arms {}: expected the names of two or more systems separated by commas, e.g. --arms a,b,c",
            args.arms.join(",")
        )));
    }
    Ok(())
}

/// What `stats compare` prints for `args` (and the figure `--plot` asks for): the library's
/// [`compare`] of PANEL (and the logs read with it).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    refusals(args)?;
    let s = settings(args);
    let panel = Source::files(&args.panel, &args.more);
    let ledger = args.ledger.as_ref().map(Source::file);
    let prices = args.prices.as_ref().map(Source::file);
    let labels = args.labels.labels.as_ref().map(Source::file);
    let draw = |r: &CompareReport| figure(&panel, &s, r);
    let done = with_bars(|progress| {
        compare(
            &panel,
            labels.as_ref(),
            ledger.as_ref(),
            prices.as_ref(),
            &s,
            &ragstats_gpu::Engines,
            progress,
            args.plot.is_some().then_some(&draw as _),
        )
    });
    Ok(done?)
}

/// The figure `--plot` draws (and `stats report` shows): the systems' intervals and the
/// matrix of differences with their Holm-adjusted p-values.
pub fn figure(
    panel: &Source,
    s: &CompareSettings,
    report: &CompareReport,
) -> ragstats_core::Result<String> {
    let caption = ragstats_plot::Caption {
        panel: panel.name().display().to_string(),
        outcome: report.metric.clone(),
        bootstrap: Some((s.resample.seed, u64::from(s.resample.replicates))),
    };
    ragstats_plot::compare(report, &caption)
}

flag_enum! {
    /// `--interval`: the values of [`IntervalRule`].
    pub enum IntervalArg => IntervalRule {
        Auto,
        T,
        Score,
        ClopperPearson,
    }
}
