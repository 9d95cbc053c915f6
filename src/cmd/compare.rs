//! `stats compare`: every arm of a panel against every other (or against one reference) —
//! estimates, paired differences with raw, Holm and BH p-values, simultaneous intervals,
//! rank intervals, best shares and what the next study needs.

use crate::cmd::render::Emit as _;
use std::path::PathBuf;

use ragstats_core::compare::{prepare, CompareReport, CompareSettings, NextCosts};
use ragstats_core::document::{to_body, Engine, Report};
use ragstats_core::inference::IntervalRule;
use ragstats_core::panel::SelectorChoice;
use ragstats_core::table::Cell;

use super::common::{Format, PanelOptions, Table};
use super::render::{Figure, Finished, Rendered};
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
    let notes = out.report.notes.clone();
    Ok(crate::cmd::render::finished("compare", inputs, out)
        .with_figure(figure)
        .with_notes_for_csv(args.format == crate::cmd::common::Format::Csv, &notes))
}

/// Checks the flags, reads the panel once and runs the comparison on the engine the flags
/// choose.
pub fn compute(args: &Args) -> anyhow::Result<CompareOutput> {
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
    let report = prepared.run(engine.as_ref(), &|d| progress.set(d))?;
    progress.finish();
    Ok(CompareOutput {
        report,
        all_pairs: args.all_pairs,
    })
}

/// The figure `--plot` draws (and `stats report` shows): the systems' intervals and the
/// matrix of differences with their Holm-adjusted p-values.
pub fn figure(args: &Args, out: &CompareOutput) -> anyhow::Result<String> {
    let rs = &args.resample;
    let caption = super::figure::panel_caption(
        &args.panel,
        &out.report.metric,
        Some((rs.seed, u64::from(rs.replicates))),
    );
    Ok(ragstats_plot::compare(&out.report, &caption)?)
}

/// What `stats compare` found.
pub struct CompareOutput {
    pub report: CompareReport,
    /// `--all-pairs`: the text tables list every pair, however many systems.
    pub all_pairs: bool,
}

/// Systems past which the text tables show only [`CompareReport::headline_pairs`] unless
/// `--all-pairs` is given: 10 systems make 45 pairs, 41 make 820 (and 820 per stratum).
const ALL_PAIRS_UP_TO: usize = 10;

/// What the text tables call each system: a path-like name (`org/model`, a local
/// `/models/…/name`) becomes its last component, unless two systems would then share a
/// name or the last component is empty; every other name stays whole.
fn short_names(names: &[String]) -> Vec<String> {
    let last = |n: &str| {
        n.trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(n)
            .to_string()
    };
    let shortened: Vec<String> = names.iter().map(|n| last(n)).collect();
    names
        .iter()
        .zip(&shortened)
        .map(|(full, short)| {
            let unique = shortened.iter().filter(|s| *s == short).count() == 1
                && !names.iter().any(|n| n == short && n != full);
            if short.is_empty() || !unique {
                full.clone()
            } else {
                short.clone()
            }
        })
        .collect()
}

/// The report's system names as the text tables show them.
struct Names {
    full: Vec<String>,
    short: Vec<String>,
}

impl Names {
    fn of(r: &CompareReport) -> Self {
        let full: Vec<String> = r.systems.iter().map(|s| s.name.clone()).collect();
        let short = short_names(&full);
        Names { full, short }
    }

    fn show<'a>(&'a self, name: &'a str) -> &'a str {
        self.full
            .iter()
            .position(|f| f == name)
            .map_or(name, |i| self.short[i].as_str())
    }

    /// `short = full` for each shortened name, or `None` when no name was shortened.
    fn legend(&self) -> Option<String> {
        let pairs: Vec<String> = self
            .full
            .iter()
            .zip(&self.short)
            .filter(|(f, s)| f != s)
            .map(|(f, s)| format!("{s} = {f}"))
            .collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }
}

/// A p-value in a text table: one below f64's smallest (a Wald p past |z| ≈ 38 underflows
/// to 0) shows as `< 1e-300`, not as a p of exactly 0.
fn p_cell(p: f64) -> Cell {
    if p == 0.0 {
        Cell::text("< 1e-300")
    } else {
        Cell::num(p)
    }
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

/// The interval column's header at the report's confidence level: `95% CI`.
fn ci_header(r: &CompareReport) -> String {
    let level = 100.0 * r.engine.confidence.unwrap_or(0.95);
    // 95, 99, 99.5: the level as a user writes it.
    let level = (level * 1e6).round() / 1e6;
    format!("{level}% CI")
}

/// A degrees-of-freedom cell, one decimal (undefined when the SE is 0).
fn df_cell(df: Option<f64>) -> Cell {
    df.map_or(Cell::Undefined(None), |v| Cell::fixed(v, 1))
}

/// `[lo, hi]` with 6 decimals.
fn interval(i: [f64; 2]) -> Cell {
    Cell::text(format!("[{:.6}, {:.6}]", i[0], i[1]))
}

fn systems_table(r: &CompareReport, names: &Names) -> Table {
    let ci = ci_header(r);
    let mut t = Table::new(&[
        "system",
        "Q",
        "estimate",
        "SE",
        "df",
        ci.as_str(),
        "rank CI",
        "best share",
        "top",
    ]);
    for s in r.by_estimate().into_iter().map(|i| &r.systems[i]) {
        t.row([
            Cell::text(names.show(&s.name)),
            Cell::Count(s.questions as u64),
            Cell::fixed(s.estimate, 6),
            Cell::fixed(s.se, 6),
            df_cell(s.df),
            interval(s.ci.0),
            Cell::text(format!("{}–{}", s.rank_ci[0], s.rank_ci[1])),
            Cell::fixed(s.best_share, 4),
            Cell::text(if s.top_group { "*" } else { "" }),
        ]);
    }
    t
}

fn pairs_table(r: &CompareReport, shown: &[usize], names: &Names) -> Table {
    let ci = ci_header(r);
    let mut t = Table::new(&[
        "pair (b − a)",
        "estimate",
        "SE",
        "df",
        ci.as_str(),
        "simultaneous",
        "p",
        "p(Holm)",
        "q(BH)",
        "resolved",
    ]);
    for p in shown.iter().map(|&i| &r.pairs[i]) {
        t.row([
            Cell::text(format!("{} − {}", names.show(&p.b), names.show(&p.a))),
            Cell::fixed(p.estimate, 6),
            Cell::fixed(p.se, 6),
            df_cell(p.df),
            interval(p.ci.0),
            interval(p.ci_simultaneous.0),
            p_cell(p.p),
            p_cell(p.p_holm),
            p_cell(p.q_bh),
            Cell::text(if p.resolved { "yes" } else { "no" }),
        ]);
    }
    t
}

fn strata_table(r: &CompareReport, shown: &[usize], names: &Names) -> Table {
    let mut t = Table::new(&[
        "stratum",
        "Q",
        "pair (b − a)",
        "estimate",
        "SE",
        "p",
        "p(Holm)",
    ]);
    for s in &r.strata {
        // A stratum's pairs are the family's, in the family's order.
        for p in shown.iter().filter_map(|&i| s.pairs.get(i)) {
            t.row([
                Cell::text(&s.name),
                Cell::Count(s.questions as u64),
                Cell::text(format!("{} − {}", names.show(&p.b), names.show(&p.a))),
                Cell::fixed(p.estimate, 6),
                Cell::fixed(p.se, 6),
                p_cell(p.p),
                p_cell(p.p_holm),
            ]);
        }
    }
    t
}

impl Rendered for CompareOutput {
    fn text(&self) -> String {
        let r = &self.report;
        let c = &r.critical_values;
        let family = match &r.family.reference {
            Some(a) => format!("every arm − {a} ({} pairs)", r.family.size),
            None => format!("all pairs ({})", r.family.size),
        };
        let df =
            c.df.map_or("normal reference".to_string(), |v| format!("df {v:.1}"));
        let max_t = c.max_t.map_or("-".to_string(), |v| format!("{v:.3}"));
        let mut s = format!(
            "metric: {}   family: {family}\n\
             critical values ({df}): marginal t {:.3}, simultaneous {:.3} (max-|t| {max_t}; independent systems {:.3}; Bonferroni {:.3})\n\
             intervals: {}\n",
            r.metric, c.marginal, c.simultaneous, c.independent, c.bonferroni, r.methods.ci
        );
        s.push_str(&ragstats_core::table::cells::weights_line(
            r.strata.iter().map(|st| st.name.as_str()),
            &r.weights,
        ));
        for n in &r.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        let names = Names::of(r);
        if let Some(legend) = names.legend() {
            s.push_str(&format!("names: {legend}\n"));
        }
        let shown: Vec<usize> = if self.all_pairs || r.systems.len() <= ALL_PAIRS_UP_TO {
            (0..r.pairs.len()).collect()
        } else {
            r.headline_pairs()
        };
        s.push('\n');
        s.push_str(&systems_table(r, &names).to_text());
        let top: Vec<&str> = r.top_group.iter().map(|t| names.show(t)).collect();
        s.push_str(&format!(
            "\ntop group (rank interval reaching 1): {}\n\n",
            top.join(", ")
        ));
        if shown.len() < r.pairs.len() {
            s.push_str(&format!(
                "pairs: {} of {} shown: the leader against the rest of the top group and each \
                 system against the next by estimate (--all-pairs for every pair; JSON and CSV \
                 hold them all)\n",
                shown.len(),
                r.pairs.len()
            ));
        }
        s.push_str(&pairs_table(r, &shown, &names).to_text());
        s.push('\n');
        s.push_str(&strata_table(r, &shown, &names).to_text());
        s.push('\n');
        match (&r.next, &r.next_undefined) {
            (Some(n), _) => s.push_str(&format!("next: {}\n", n.text)),
            (None, Some(why)) => s.push_str(&format!("next: nothing to resolve ({why})\n")),
            (None, None) => {}
        }
        s
    }

    /// The pairs table, one row per pair of the family.
    fn csv(&self) -> Table {
        let mut t = Table::new(&[
            "a",
            "b",
            "estimate",
            "se",
            "df",
            "ci_lower",
            "ci_upper",
            "sim_lower",
            "sim_upper",
            "p",
            "p_holm",
            "q_bh",
        ]);
        for p in &self.report.pairs {
            t.row([
                Cell::text(&p.a),
                Cell::text(&p.b),
                Cell::num(p.estimate),
                Cell::num(p.se),
                p.df.map_or(Cell::Undefined(None), Cell::num),
                Cell::num(p.ci.lower()),
                Cell::num(p.ci.upper()),
                Cell::num(p.ci_simultaneous.lower()),
                Cell::num(p.ci_simultaneous.upper()),
                Cell::num(p.p),
                Cell::num(p.p_holm),
                Cell::num(p.q_bh),
            ]);
        }
        t
    }

    fn body(&self) -> serde_json::Value {
        to_body(&self.report)
    }

    fn engine(&self) -> Engine {
        self.report.engine()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_underflowed_p_is_shown_as_below_the_smallest_double() {
        let mut t = Table::new(&["p"]);
        t.row([p_cell(0.0)]);
        t.row([p_cell(3.4247e-203)]);
        t.row([p_cell(0.306451)]);
        let text = t.to_text();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(lines[1..], ["< 1e-300", "3.4247e-203", "0.306451"]);
    }

    #[test]
    fn path_like_names_are_shortened_unless_two_would_collide() {
        let names: Vec<String> = [
            "upstage/SOLAR-10.7B-Instruct-v1.0",
            "/models/n22/llama3.1-chat/",
            "org-a/base",
            "org-b/base",
            "gpt-4o",
            "x/chat",
            "chat",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            short_names(&names),
            [
                "SOLAR-10.7B-Instruct-v1.0",
                "llama3.1-chat",
                // Both end in `base`; `x/chat`'s last component is another system's name.
                "org-a/base",
                "org-b/base",
                "gpt-4o",
                "x/chat",
                "chat",
            ]
        );
        let n = Names {
            short: short_names(&names[..2]),
            full: names[..2].to_vec(),
        };
        assert_eq!(
            n.legend().as_deref(),
            Some("SOLAR-10.7B-Instruct-v1.0 = upstage/SOLAR-10.7B-Instruct-v1.0; llama3.1-chat = /models/n22/llama3.1-chat/")
        );
        assert_eq!(
            n.show("upstage/SOLAR-10.7B-Instruct-v1.0"),
            "SOLAR-10.7B-Instruct-v1.0"
        );
    }
}
