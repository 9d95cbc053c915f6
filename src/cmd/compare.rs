//! `stats compare`: every arm of a panel against every other (or against one reference) —
//! estimates, paired differences with raw, Holm and BH p-values, simultaneous intervals,
//! rank intervals, best shares and what the next study needs.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::compare::{prepare, CompareReport, CompareSettings, NextCosts};
use ragstats_core::inference::IntervalRule;
use ragstats_core::panel::SelectorChoice;

use super::common::{Format, PanelOptions};
use super::render::{Figure, Finished};
use super::resample::{Progress, ResampleArgs};
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

/// What `stats compare` prints for `args` (and the figure `--plot` asks for).
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    super::common::with_panel_paths(&args.panel, &args.more, || outcome_of(args))
}

/// [`outcome`] with PANEL (and the logs read with it) readable by its name.
fn outcome_of(args: &Args) -> anyhow::Result<Finished> {
    let out = compute(args)?;
    let figure = match &args.plot {
        Some(_) => Some(Figure::new(
            figure(args, &out)?,
            &super::common::panel_paths(&args.panel, &args.more),
        )),
        None => None,
    };
    let inputs = super::common::panel_input(
        ragstats_core::document::Inputs::new(),
        "panel",
        &args.panel,
        &args.more,
    )
    .with_opt("by", args.by.as_deref())
    .with_opt("arm", args.arm.as_deref())
    .with_opt("ledger", args.ledger.as_ref().map(|p| p.display()))
    .with_opt("prices", args.prices.as_ref().map(|p| p.display()));
    let notes = out.notes.clone();
    Ok(crate::cmd::render::finished("compare", inputs, out)
        .with_figure(figure)
        .with_csv_notes(&notes))
}

/// Checks the flags, reads the panel once and runs the comparison on the engine the flags
/// choose.
pub fn compute(args: &Args) -> anyhow::Result<CompareReport> {
    if !(args.power > 0.0 && args.power < 1.0) {
        return Err(UsageError(format!(
            "--power {}: must be between 0 and 1 (exclusive), e.g. 0.8",
            args.power
        ))
        .into());
    }
    let by = args.by.as_deref().map(str::trim);
    if by == Some("") {
        return Err(
            UsageError("--by: expected a column name, e.g. model or selector".into()).into(),
        );
    }
    if by == Some("selector") && args.selector.is_some() {
        return Err(UsageError(
            "--by selector compares the selectors; --selector picks one of them: give one or the other"
                .into(),
        )
        .into());
    }
    if by.is_some_and(|c| c != "arm") && ragstats_core::import::is_log_input(&args.panel) {
        return Err(UsageError(format!(
            "--by reads a column of a panel, and {} holds evaluation logs: choose what the systems are with --arm-from model|task|solver|metadata:KEY",
            args.panel.display()
        ))
        .into());
    }
    if args.ledger.is_none() && args.bounds != super::plan::BoundsArgs::default() {
        return Err(UsageError(
            "--max-questions, --max-trajectories and --max-reads bound the next step's priced \
             search, which needs --ledger"
                .into(),
        )
        .into());
    }
    let costs = match &args.ledger {
        Some(ledger) => Some(NextCosts {
            ledger: ledger.clone(),
            prices: args.prices.clone(),
            budget: args
                .currency
                .unwrap_or(super::efficiency::CurrencyArg::Tokens)
                .budget(args.search_price),
            question_cost: args.question_cost,
            bounds: args.bounds.bounds()?,
        }),
        None => None,
    };
    let settings = CompareSettings {
        reference: args.reference.clone(),
        resampling: args.resample.resampling()?,
        power: args.power,
        intervals: args.interval.rule(),
        costs,
    };
    // `--arms a, b` as typed: names are trimmed; an empty one is a slip, not an arm.
    let arms: Vec<String> = args.arms.iter().map(|a| a.trim().to_string()).collect();
    if arms.iter().any(String::is_empty) {
        return Err(UsageError(format!(
            "--arms {}: expected the names of two or more systems separated by commas, e.g. --arms a,b,c",
            args.arms.join(",")
        ))
        .into());
    }
    let opts = ragstats_core::panel::LoadOptions {
        arm_column: by.map(str::to_string),
        within_arm: args.arm.clone(),
        keep_arms: arms,
        // Every system and pair combines the strata with `--weights` (in `shape`; equal
        // without it).
        ..PanelOptions {
            metric: args.metric.clone(),
            drop_incomplete: args.drop_incomplete,
            selector: args.selector.clone(),
            failure_score: args.failure_score,
            shape: args.shape.clone(),
            ..Default::default()
        }
        .load_options(true)
    };
    // Parquet and evaluation logs are read once into memory; the arms and pairs are then
    // assembled from that table.
    let prepared = ragstats_core::import::with_panel_table(
        &args.panel,
        &opts,
        &args.import.options(None),
        || prepare(&args.panel, &opts, &settings),
    )?;
    let engine = args.resample.engine(prepared.draws())?;
    let progress = Progress::new(prepared.work(), "compare");
    let mut report = prepared.run(engine.as_ref(), &|d| progress.set(d))?;
    progress.finish();
    report.all_pairs = args.all_pairs;
    Ok(report)
}

/// The figure `--plot` draws (and `stats report` shows): the systems' intervals and the
/// matrix of differences with their Holm-adjusted p-values.
pub fn figure(args: &Args, report: &CompareReport) -> anyhow::Result<String> {
    let rs = &args.resample;
    let caption = super::figure::panel_caption(
        &args.panel,
        &report.metric,
        Some((rs.seed, u64::from(rs.replicates))),
    );
    Ok(ragstats_plot::compare(report, &caption)?)
}

/// `--interval`: the values of [`IntervalRule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IntervalArg {
    Auto,
    T,
    Score,
    ClopperPearson,
}

impl IntervalArg {
    pub fn rule(self) -> IntervalRule {
        match self {
            IntervalArg::Auto => IntervalRule::Auto,
            IntervalArg::T => IntervalRule::T,
            IntervalArg::Score => IntervalRule::Score,
            IntervalArg::ClopperPearson => IntervalRule::ClopperPearson,
        }
    }
}
