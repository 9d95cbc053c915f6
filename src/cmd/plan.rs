//! `stats plan`: the least-cost allocation (Q, T, R) for a target SE or a minimum detectable
//! difference, the least-SE allocation for a budget, or the SE, MDE and power of a given
//! design, from an audit's components and unit costs, with a bootstrap interval of the plan.

use std::path::PathBuf;
use std::str::FromStr;

use ragstats_core::allocation::efficiency::UnitCosts;
use ragstats_core::allocation::plan::{
    mde_multiplier, nested_unit_costs, power, refit_replicates, refit_replicates_unbalanced,
    unit_costs, Allocation, Bounds, Goal, PlanStratum, Planner,
};
use ragstats_core::components::forecast::Audit;
use ragstats_core::resample::summary::percentile_interval;

use super::common::{num, print_json, write_csv, Format, PanelOptions, Table};
use super::efficiency::{panel_costs, trajectory_panel_costs, CurrencyArg, LedgerInput};
use super::resample::{Progress, ResampleArgs};
use super::variance::report_for;
use super::UsageError;

/// A probability strictly between 0 and 1, refused when the flag is parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probability(f64);

impl FromStr for Probability {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p < 1.0 => Ok(Probability(p)),
            _ => Err("must be between 0 and 1 (exclusive), e.g. 0.05".into()),
        }
    }
}

/// A positive finite number (`30e6` is accepted).
fn positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("must be a positive number, e.g. 0.01 or 30e6".into()),
    }
}

/// A finite number.
fn finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err("must be a finite number, e.g. 0.02".into()),
    }
}

/// Flags of `stats plan`.
#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("goal")
        .required(true)
        .args(["target_se", "mde", "budget_tokens", "budget_usd", "questions"])
))]
pub struct Args {
    /// Audit panel the components (and, with --ledger, the unit costs) are estimated from.
    #[arg(
        long,
        value_name = "PANEL",
        required_unless_present = "components",
        conflicts_with = "components"
    )]
    pub audit: Option<PathBuf>,
    /// Components file written by `stats variance --format json`, instead of --audit (no
    /// bootstrap; unit costs from --unit-costs).
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Cost ledger of the audit panel (JSONL): unit costs c_T and c_R per stratum as
    /// `stats efficiency` computes them.
    #[arg(long, value_name = "FILE", conflicts_with = "unit_costs")]
    pub ledger: Option<PathBuf>,
    /// Unit costs C_T,C_R (one trajectory without its reads, one read) for every stratum,
    /// instead of --ledger.
    #[arg(long, value_name = "C_T,C_R", value_parser = unit_costs_flag)]
    pub unit_costs: Option<UnitCosts>,
    /// Prices (TOML); needed for dollars with --ledger.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// What costs are counted in (--budget-usd implies usd, --budget-tokens tokens).
    #[arg(long, value_enum)]
    pub currency: Option<CurrencyArg>,
    /// Search price in USD per 1,000 requests for dollars (default: the prices file's).
    #[arg(long, value_name = "USD", value_parser = super::cost::price_flag)]
    pub search_price: Option<f64>,
    /// Goal: the cheapest allocation whose SE is at most this.
    #[arg(long, value_name = "SE", value_parser = positive)]
    pub target_se: Option<f64>,
    /// Goal: the cheapest allocation whose minimum detectable difference
    /// (z_{1-α/2} + z_power)·SE is at most this.
    #[arg(long, value_name = "D", value_parser = positive)]
    pub mde: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many model tokens.
    #[arg(long, value_name = "TOKENS", value_parser = positive)]
    pub budget_tokens: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many dollars.
    #[arg(long, value_name = "USD", value_parser = positive)]
    pub budget_usd: Option<f64>,
    /// Given design: total questions (split as --shares), with --trajectories and --reads.
    #[arg(long, value_name = "Q", requires_all = ["trajectories", "reads"], value_parser = clap::value_parser!(u64).range(1..))]
    pub questions: Option<u64>,
    /// Given design: trajectories per question.
    #[arg(long, value_name = "T", requires = "questions", value_parser = clap::value_parser!(u64).range(1..))]
    pub trajectories: Option<u64>,
    /// Given design: reads per trajectory.
    #[arg(long, value_name = "R", requires = "questions", value_parser = clap::value_parser!(u64).range(1..))]
    pub reads: Option<u64>,
    /// A true difference to compute each allocation's power against.
    #[arg(long, value_name = "D", value_parser = finite, allow_negative_numbers = true)]
    pub difference: Option<f64>,
    /// Two-sided significance level.
    #[arg(
        long,
        default_value = "0.05",
        value_name = "ALPHA",
        allow_negative_numbers = true
    )]
    pub alpha: Probability,
    /// Power the MDE is defined at.
    #[arg(
        long,
        default_value = "0.8",
        value_name = "P",
        allow_negative_numbers = true
    )]
    pub power: Probability,
    /// Question shares name=W,name=W (integer weights; default: the audit's question counts).
    #[arg(long, value_name = "NAME=W,...")]
    pub shares: Option<String>,
    /// Largest total Q searched.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_questions: u64,
    /// Largest T searched.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_trajectories: u64,
    /// Largest R searched.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_reads: u64,
    /// Runner-up allocations shown after the best.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub runners_up: usize,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

fn unit_costs_flag(s: &str) -> Result<UnitCosts, String> {
    let bad = || format!("'{s}': expected C_T,C_R, two non-negative numbers with a positive sum");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let (t, r) = (
        a.trim().parse::<f64>().map_err(|_| bad())?,
        b.trim().parse::<f64>().map_err(|_| bad())?,
    );
    if !(t.is_finite() && r.is_finite() && t >= 0.0 && r >= 0.0 && t + r > 0.0) {
        return Err(bad());
    }
    Ok(UnitCosts {
        trajectory: t,
        read: r,
    })
}

/// One allocation as printed.
#[derive(serde::Serialize)]
struct Row {
    #[serde(flatten)]
    allocation: Allocation,
    /// Stratum names beside `per_stratum`.
    strata: Vec<String>,
    se_q_only: f64,
    mde: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    power: Option<f64>,
    /// How much more it costs than the best (target) or how much larger its SE is (budget),
    /// percent; `None` for the best.
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_percent: Option<f64>,
}

#[derive(serde::Serialize)]
struct QOnly {
    trajectories: Vec<usize>,
    reads: Vec<usize>,
    questions: usize,
    per_stratum: Vec<usize>,
    se_q_only: f64,
    se_nested: f64,
    cost: Option<f64>,
}

#[derive(serde::Serialize)]
struct Interval {
    what: String,
    replicates: u32,
    confidence: f64,
    estimate: f64,
    ci: [f64; 2],
    /// Replicates in which no Q up to --max-questions met the goal (counted as above it).
    #[serde(skip_serializing_if = "is_zero")]
    beyond_bounds: usize,
    /// Whether the statistic is a question count (printed with one decimal).
    #[serde(skip)]
    count: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

enum Mode {
    Target { se: f64, from_mde: Option<f64> },
    Budget(f64),
    Given { q: usize, t: usize, r: usize },
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let mode = if let Some(se) = args.target_se {
        Mode::Target { se, from_mde: None }
    } else if let Some(m) = args.mde {
        Mode::Target {
            se: m / mde_multiplier(args.alpha.0, args.power.0),
            from_mde: Some(m),
        }
    } else if let Some(b) = args.budget_tokens.or(args.budget_usd) {
        Mode::Budget(b)
    } else {
        // The goal group is required, so --questions is present here.
        Mode::Given {
            q: usize::try_from(args.questions.unwrap_or(1))?,
            t: usize::try_from(args.trajectories.unwrap_or(1))?,
            r: usize::try_from(args.reads.unwrap_or(1))?,
        }
    };
    let currency = match (args.budget_tokens, args.budget_usd, args.currency) {
        (Some(_), _, Some(CurrencyArg::Usd)) => {
            return Err(
                UsageError("--budget-tokens counts tokens, not --currency usd".into()).into(),
            )
        }
        (_, Some(_), Some(CurrencyArg::Tokens)) => {
            return Err(
                UsageError("--budget-usd counts dollars, not --currency tokens".into()).into(),
            )
        }
        (Some(_), _, _) => CurrencyArg::Tokens,
        (_, Some(_), _) => CurrencyArg::Usd,
        (_, _, c) => c.unwrap_or(CurrencyArg::Tokens),
    };
    let unit = match currency {
        CurrencyArg::Tokens => "tokens",
        CurrencyArg::Usd => "USD",
    };
    // The audit: components, and the panel when there is one (for costs and the bootstrap).
    let (audit, panel) = match (&args.audit, &args.components) {
        (Some(path), _) => {
            // Ledger costs are matched to each question's own cells, so an unbalanced audit
            // is priced like a balanced one.
            let p = args.opts.load_unbalanced_noting(path)?;
            (Audit::from_report(&report_for(&p)?), Some(p))
        }
        (None, Some(path)) => {
            if args.ledger.is_some() {
                return Err(UsageError(
                    "--ledger is matched to the audit panel's cells: give --audit PANEL, or --unit-costs with --components".into(),
                )
                .into());
            }
            (Audit::read_components(path)?, None)
        }
        (None, None) => {
            return Err(UsageError("give --audit PANEL or --components FILE".into()).into())
        }
    };
    // Per-question costs of a balanced audit (as before), or every trajectory's and read's
    // cost of an unbalanced one.
    let balanced = panel
        .as_ref()
        .is_some_and(|p| p.strata.iter().all(|s| s.is_balanced()));
    let (question_costs, nested_costs) = match (&args.ledger, &panel) {
        (Some(ledger), Some(p)) if balanced => (
            Some(
                panel_costs(
                    p,
                    &LedgerInput {
                        ledger,
                        prices: args.prices.as_deref(),
                        currency,
                        search_price: args.search_price,
                    },
                )?
                .0,
            ),
            None,
        ),
        (Some(ledger), Some(p)) => (
            None,
            Some(trajectory_panel_costs(
                p,
                &LedgerInput {
                    ledger,
                    prices: args.prices.as_deref(),
                    currency,
                    search_price: args.search_price,
                },
            )?),
        ),
        _ => (None, None),
    };
    let ledger_costs = question_costs.is_some() || nested_costs.is_some();
    let costs: Vec<Option<UnitCosts>> = match (&question_costs, &nested_costs, &panel) {
        (Some(qc), _, Some(p)) => qc
            .iter()
            .zip(&p.strata)
            .map(|(c, s)| Some(unit_costs(c, s.t(), s.r())))
            .collect(),
        (_, Some(nc), _) => nc.iter().map(|c| Some(nested_unit_costs(c))).collect(),
        _ => match args.unit_costs {
            Some(u) => vec![Some(u); audit.strata.len()],
            None => vec![None; audit.strata.len()],
        },
    };
    if let Some(c) = costs
        .iter()
        .flatten()
        .find(|c| !(c.trajectory.is_finite() && c.read.is_finite() && c.trajectory + c.read > 0.0))
    {
        return Err(UsageError(format!(
            "the unit costs c_T = {}, c_R = {} cannot price a plan (they must be finite with a positive sum)",
            num(c.trajectory),
            num(c.read)
        ))
        .into());
    }
    let weights = match &args.shares {
        None => audit.strata.iter().map(|s| s.questions).collect(),
        Some(text) => parse_shares(text, &audit)?,
    };
    let bounds = Bounds {
        max_questions: usize::try_from(args.max_questions)?,
        max_trajectories: usize::try_from(args.max_trajectories)?,
        max_reads: usize::try_from(args.max_reads)?,
    };
    let planner = Planner {
        strata: audit
            .strata
            .iter()
            .zip(&costs)
            .zip(&weights)
            .map(|((s, c), &w)| PlanStratum {
                name: s.name.clone(),
                components: s.components,
                costs: *c,
                weight: w,
                audit_questions: s.questions,
                audit_trajectories: s.trajectories,
                audit_reads: s.reads,
                audit_se: s.se,
            })
            .collect(),
        bounds,
    };
    let names: Vec<String> = planner.strata.iter().map(|s| s.name.clone()).collect();
    let m = mde_multiplier(args.alpha.0, args.power.0);
    let alpha = args.alpha.0;
    let row = |a: Allocation, extra: Option<f64>| Row {
        se_q_only: planner.q_only_se(&a.per_stratum),
        mde: m * a.se,
        power: args.difference.map(|d| power(d, a.se, alpha)),
        strata: names.clone(),
        extra_percent: extra,
        allocation: a,
    };
    let mut notes = plan_notes(&audit);
    let goal = match mode {
        Mode::Target { se, .. } => Some(Goal::TargetSe(se)),
        Mode::Budget(b) => Some(Goal::Budget(b)),
        Mode::Given { .. } => None,
    };
    let (rows, q_only) = match (&mode, goal) {
        (Mode::Given { q, t, r }, _) => {
            let parts = planner.split(*q);
            if let Some(i) = parts.iter().position(|&n| n == 0) {
                return Err(UsageError(format!(
                    "--questions {q} leaves stratum '{}' with no questions; ask for more questions",
                    names[i]
                ))
                .into());
            }
            (vec![row(planner.evaluate(&parts, *t, *r), None)], None)
        }
        (_, Some(goal)) => {
            let all = planner.search(goal)?;
            let Some(best) = all.first().cloned() else {
                let (least, floor) = planner.floors();
                let why = match goal {
                    Goal::TargetSe(s) if s < floor => format!(
                        "the target SE {} is below what the audit's question variance allows at the maximum Q: \
                         with Q = {} (--max-questions) the question level alone gives SE {} however many \
                         trajectories and reads; raise --max-questions or relax the target",
                        num(s),
                        bounds.max_questions,
                        num(floor)
                    ),
                    Goal::TargetSe(s) => format!(
                        "no allocation within the bounds reaches SE {}: the least is {} at Q = {}, T = {}, R = {}; \
                         raise --max-questions, --max-trajectories or --max-reads, or relax the target",
                        num(s),
                        num(least),
                        bounds.max_questions,
                        bounds.max_trajectories,
                        bounds.max_reads
                    ),
                    Goal::Budget(b) => format!(
                        "the budget {} {unit} buys no allocation with at least one question per stratum",
                        num(b)
                    ),
                };
                anyhow::bail!("{why}");
            };
            let best_key = |a: &Allocation| match goal {
                Goal::TargetSe(_) => a.cost.unwrap_or(0.0),
                Goal::Budget(_) => a.se,
            };
            let b0 = best_key(&best);
            let rows: Vec<Row> = all
                .into_iter()
                .take(1 + args.runners_up)
                .enumerate()
                .map(|(i, a)| {
                    let extra = (i > 0).then(|| 100.0 * (best_key(&a) / b0 - 1.0));
                    row(a, extra)
                })
                .collect();
            let q_only = planner.q_only(goal).map(|(parts, se, cost)| {
                let nested = planner
                    .strata
                    .iter()
                    .zip(&parts)
                    .map(|(s, &q)| {
                        ragstats_core::allocation::plan::variance_per_question(
                            &s.components,
                            s.audit_trajectories,
                            s.audit_reads,
                        ) / q as f64
                    })
                    .sum::<f64>();
                let d = parts.len() as f64;
                QOnly {
                    trajectories: planner
                        .strata
                        .iter()
                        .map(|s| s.audit_trajectories)
                        .collect(),
                    reads: planner.strata.iter().map(|s| s.audit_reads).collect(),
                    questions: parts.iter().sum(),
                    per_stratum: parts,
                    se_q_only: se,
                    se_nested: nested.sqrt() / d,
                    cost,
                }
            });
            (rows, q_only)
        }
        (_, None) => unreachable!("only a given design has no goal"),
    };
    // Plan uncertainty: components and unit costs refitted in every bootstrap replicate.
    let chosen = &rows[0].allocation;
    let mut intervals = Vec::new();
    let mut engine_desc = String::new();
    match &panel {
        Some(p) => {
            let reps = args.resample.replicates()?;
            let engine = args.resample.engine(
                u64::from(reps) * p.strata.iter().map(|s| s.q() as u64).sum::<u64>(),
            )?;
            engine_desc = engine.description();
            let progress = Progress::new(u64::from(reps), "plan");
            let refits = if balanced {
                refit_replicates(
                    &p.strata,
                    question_costs.as_deref(),
                    engine.as_ref(),
                    args.resample.seed,
                    reps,
                    &|d| progress.set(d),
                )?
            } else {
                let designs: Vec<String> = p
                    .strata
                    .iter()
                    .filter_map(|s| {
                        let shape = ragstats_core::components::variance::nested_stratum(s).ok()?.shape();
                        let c = super::variance::shape_cells(&s.name, &shape);
                        let method = if s.is_balanced() { "ANOVA" } else { "REML" };
                        Some(format!("{}: {method}, Q = {}, T = {}, R = {}", c[0], c[1], c[2], c[3]))
                    })
                    .collect();
                notes.push(format!(
                    "the audit is unbalanced ({}; T and R min/mean/max per question and per trajectory): components as `stats variance` fits them, refitted in every replicate from the resampled questions{}",
                    designs.join("; "),
                    if ledger_costs {
                        "; c_T and c_R are the mean cost per trajectory and per read over the cells that exist, refitted from the same draws"
                    } else {
                        ""
                    }
                ));
                refit_replicates_unbalanced(
                    p,
                    nested_costs.as_deref(),
                    engine.as_ref(),
                    args.resample.seed,
                    reps,
                    &|d| progress.set(d),
                )?
            };
            progress.finish();
            let conf = args.resample.confidence.get();
            let interval = |what: String, estimate: f64, mut v: Vec<f64>, beyond: usize| {
                v.sort_by(f64::total_cmp);
                Interval {
                    what,
                    replicates: reps,
                    confidence: conf,
                    estimate,
                    ci: percentile_interval(&v, conf),
                    beyond_bounds: beyond,
                    count: false,
                }
            };
            let planners: Vec<Planner> = refits
                .iter()
                .map(|f| {
                    let mut pl = planner.clone();
                    for (i, s) in pl.strata.iter_mut().enumerate() {
                        s.components = f.components[i];
                        if let Some(c) = &f.costs {
                            s.costs = Some(c[i]);
                        }
                    }
                    pl
                })
                .collect();
            let (t, r) = (chosen.trajectories, chosen.reads);
            match goal {
                Some(g) => {
                    let found: Vec<Option<Allocation>> =
                        planners.iter().map(|pl| pl.best_at(g, t, r)).collect();
                    let beyond = found.iter().filter(|a| a.is_none()).count();
                    let qs: Vec<f64> = found
                        .iter()
                        .map(|a| {
                            let none = match g {
                                Goal::TargetSe(_) => bounds.max_questions as f64 + 1.0,
                                Goal::Budget(_) => 0.0,
                            };
                            a.as_ref().map_or(none, |a| a.questions as f64)
                        })
                        .collect();
                    let what = match g {
                        Goal::TargetSe(_) => format!("required Q at T = {t}, R = {r}"),
                        Goal::Budget(_) => format!("affordable Q of least SE at T = {t}, R = {r}"),
                    };
                    intervals.push(Interval {
                        count: true,
                        ..interval(what, chosen.questions as f64, qs, beyond)
                    });
                    if let Goal::Budget(_) = g {
                        let ses: Vec<f64> = found
                            .iter()
                            .map(|a| a.as_ref().map_or(f64::INFINITY, |a| a.se))
                            .collect();
                        intervals.push(interval(
                            format!("SE at that Q, T = {t}, R = {r}"),
                            chosen.se,
                            ses,
                            0,
                        ));
                    }
                }
                None => {
                    let evals: Vec<Allocation> = planners
                        .iter()
                        .map(|pl| pl.evaluate(&chosen.per_stratum, t, r))
                        .collect();
                    intervals.push(interval(
                        "SE of the design".into(),
                        chosen.se,
                        evals.iter().map(|a| a.se).collect(),
                        0,
                    ));
                    if let Some(d) = args.difference {
                        intervals.push(interval(
                            format!("power against a difference of {}", num(d)),
                            power(d, chosen.se, alpha),
                            evals.iter().map(|a| power(d, a.se, alpha)).collect(),
                            0,
                        ));
                    }
                }
            }
            if !ledger_costs && args.unit_costs.is_some() && goal.is_some() {
                notes.push(
                    "the bootstrap refits the components only: --unit-costs are held fixed".into(),
                );
            }
        }
        None => notes.push(
            "no bootstrap interval: a components file has no questions to resample (give --audit PANEL)"
                .into(),
        ),
    }
    let target = match mode {
        Mode::Target { se, from_mde } => Some((se, from_mde)),
        _ => None,
    };
    match args.format {
        Format::Json => {
            let goal_json = match mode {
                Mode::Target { se, from_mde } => serde_json::json!({
                    "kind": if from_mde.is_some() { "mde" } else { "target_se" },
                    "mde": from_mde,
                    "target_se": se,
                }),
                Mode::Budget(b) => serde_json::json!({"kind": "budget", "budget": b}),
                Mode::Given { q, t, r } => serde_json::json!({
                    "kind": "design", "questions": q, "trajectories": t, "reads": r,
                }),
            };
            print_json(&serde_json::json!({
                "goal": goal_json,
                "currency": unit,
                "alpha": alpha,
                "power": args.power.0,
                "mde_multiplier": m,
                "difference": args.difference,
                "bounds": bounds,
                "strata": planner.strata,
                "allocations": rows,
                "q_only": q_only,
                "bootstrap": intervals,
                "notes": notes,
            }))?;
        }
        Format::Csv => {
            let header = [
                "rank",
                "questions",
                "per_stratum",
                "trajectories",
                "reads",
                "se",
                "se_q_only",
                "mde",
                "power",
                "cost",
                "extra_percent",
            ];
            let o = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            let data: Vec<Vec<String>> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let a = &r.allocation;
                    vec![
                        (i + 1).to_string(),
                        a.questions.to_string(),
                        per_stratum(&names, &a.per_stratum),
                        a.trajectories.to_string(),
                        a.reads.to_string(),
                        a.se.to_string(),
                        r.se_q_only.to_string(),
                        r.mde.to_string(),
                        o(r.power),
                        o(a.cost),
                        o(r.extra_percent),
                    ]
                })
                .collect();
            write_csv(&header, &data)?;
            for n in &notes {
                eprintln!("note: {n}");
            }
        }
        Format::Table => {
            let mut out = String::new();
            let shares = per_stratum(&names, &weights);
            let search = format!(
                "searched every T = 1..{}, R = 1..{} and total Q = 1..{} (split by largest remainder in the shares {shares})",
                bounds.max_trajectories, bounds.max_reads, bounds.max_questions
            );
            match (&mode, target) {
                (_, Some((se, from_mde))) => {
                    if let Some(d) = from_mde {
                        out.push_str(&format!(
                            "MDE {} at two-sided alpha = {} and power {}: target SE = MDE/(z_{{1-alpha/2}} + z_power) = {}/{} = {}\n",
                            num(d), alpha, args.power.0, num(d), fixed6(m), num(se)
                        ));
                    }
                    out.push_str(&format!(
                        "least-cost allocations ({unit}) with nested SE <= {}; {search}: for each (T, R) the cheapest Q, so the first row is the minimum over the whole range\n",
                        num(se)
                    ));
                }
                (Mode::Budget(b), _) => out.push_str(&format!(
                    "least-SE allocations costing at most {} {unit}; {search}: for each (T, R) the most precise affordable Q, so the first row is the minimum over the whole range\n",
                    num(*b)
                )),
                _ => out.push_str(&format!(
                    "the given design, split by largest remainder in the shares {shares}; MDE at two-sided alpha = {} and power {}\n",
                    alpha, args.power.0
                )),
            }
            out.push_str(&format!(
                "components (truncated at 0) and unit costs ({unit}{}):\n",
                match (&args.ledger, args.unit_costs) {
                    (Some(l), _) => format!(", from {}", l.display()),
                    (None, Some(_)) => ", as given".into(),
                    _ => ", none given".into(),
                }
            ));
            let mut t = Table::new(&["stratum", "σ²_q", "σ²_t", "σ²_r", "c_T", "c_R"]);
            for s in &planner.strata {
                let c = s.components.truncated();
                let o = |v: Option<f64>| v.map(num).unwrap_or_else(|| "-".into());
                t.row(vec![
                    s.name.clone(),
                    num(c.question),
                    o(c.trajectory),
                    o(c.read),
                    o(s.costs.map(|c| c.trajectory)),
                    o(s.costs.map(|c| c.read)),
                ]);
            }
            out.push_str(&t.to_text());
            out.push('\n');
            let extra_head = match mode {
                Mode::Budget(_) => "SE more",
                _ => "cost more",
            };
            let mut head = vec![
                "rank",
                "Q",
                "Q per stratum",
                "T",
                "R",
                "SE",
                "SE Q-only",
                "MDE",
            ];
            if args.difference.is_some() {
                head.push("power");
            }
            head.push("cost");
            if !matches!(mode, Mode::Given { .. }) {
                head.push(extra_head);
            }
            let mut t = Table::new(&head);
            for (i, r) in rows.iter().enumerate() {
                let a = &r.allocation;
                let mut cells = vec![
                    (i + 1).to_string(),
                    a.questions.to_string(),
                    per_stratum(&names, &a.per_stratum),
                    a.trajectories.to_string(),
                    a.reads.to_string(),
                    num(a.se),
                    num(r.se_q_only),
                    num(r.mde),
                ];
                if let Some(p) = r.power {
                    cells.push(fixed4(p));
                }
                cells.push(a.cost.map(num).unwrap_or_else(|| "-".into()));
                if !matches!(mode, Mode::Given { .. }) {
                    cells.push(
                        r.extra_percent
                            .map(|e| format!("+{}%", fixed2(e)))
                            .unwrap_or_else(|| "-".into()),
                    );
                }
                t.row(cells);
            }
            out.push_str(&t.to_text());
            if let Some(q) = &q_only {
                let design = if q.trajectories.iter().all(|&t| t == q.trajectories[0])
                    && q.reads.iter().all(|&r| r == q.reads[0])
                {
                    format!("T = {}, R = {}", q.trajectories[0], q.reads[0])
                } else {
                    "each stratum's T and R".into()
                };
                out.push_str(&format!(
                    "\nQ-only forecast (SE_audit·sqrt(Q_audit/Q), the audit's design {design}): Q = {} ({}), SE Q-only {}, nested SE there {}, cost {}\n",
                    q.questions,
                    per_stratum(&names, &q.per_stratum),
                    num(q.se_q_only),
                    num(q.se_nested),
                    q.cost.map(num).unwrap_or_else(|| "-".into()),
                ));
            } else if let Some(g) = goal {
                out.push_str(&match g {
                    Goal::TargetSe(se) => format!(
                        "\nQ-only forecast (SE_audit·sqrt(Q_audit/Q), the audit's design): no Q up to {} reaches SE {}\n",
                        bounds.max_questions,
                        num(se)
                    ),
                    Goal::Budget(b) => format!(
                        "\nQ-only forecast (SE_audit·sqrt(Q_audit/Q), the audit's design): {} {unit} does not buy one question per stratum there\n",
                        num(b)
                    ),
                });
            }
            if !intervals.is_empty() {
                out.push_str(&format!(
                    "\nplan uncertainty: stratified question bootstrap of the audit, {} replicates on {}, components{} refitted in each; {} percentile intervals:\n",
                    intervals[0].replicates,
                    engine_desc,
                    if ledger_costs { " and unit costs" } else { "" },
                    args.resample.confidence.percent()
                ));
                for iv in &intervals {
                    let show = |v: f64| {
                        if iv.count && v > bounds.max_questions as f64 {
                            format!("> {}", bounds.max_questions)
                        } else if iv.count {
                            format!("{v:.1}")
                        } else {
                            num(v)
                        }
                    };
                    out.push_str(&format!(
                        "  {}: {} [{}, {}]{}\n",
                        iv.what,
                        if iv.count {
                            format!("{}", iv.estimate)
                        } else {
                            num(iv.estimate)
                        },
                        show(iv.ci[0]),
                        show(iv.ci[1]),
                        if iv.beyond_bounds > 0 && matches!(mode, Mode::Budget(_)) {
                            format!(
                                " ({} replicates afford no allocation, counted as Q = 0)",
                                iv.beyond_bounds
                            )
                        } else if iv.beyond_bounds > 0 {
                            format!(
                                " ({} replicates need more than {} questions)",
                                iv.beyond_bounds, bounds.max_questions
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
            }
            if !notes.is_empty() {
                out.push('\n');
                for n in &notes {
                    out.push_str(&format!("note: {n}\n"));
                }
            }
            out!("{out}");
        }
    }
    Ok(0)
}

fn fixed2(v: f64) -> String {
    super::common::fixed(v, 2)
}

fn fixed4(v: f64) -> String {
    super::common::fixed(v, 4)
}

fn fixed6(v: f64) -> String {
    super::common::fixed(v, 6)
}

fn per_stratum(names: &[String], counts: &[usize]) -> String {
    names
        .iter()
        .zip(counts)
        .map(|(n, q)| format!("{n}={q}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `--shares name=W,...`: a positive integer weight for every stratum of the audit.
fn parse_shares(text: &str, audit: &Audit) -> anyhow::Result<Vec<usize>> {
    let mut given = Vec::new();
    for item in text.split(',') {
        let (name, w) = item.split_once('=').ok_or_else(|| {
            UsageError(format!(
                "--shares: '{item}' is not name=W (e.g. hotpotqa=1,musique=1)"
            ))
        })?;
        let w: usize = match w.trim().parse() {
            Ok(w) if w >= 1 => w,
            _ => {
                return Err(UsageError(format!(
                    "--shares: the weight of '{name}' must be a positive integer, got '{w}'"
                ))
                .into())
            }
        };
        given.push((name.trim().to_string(), w));
    }
    let known: Vec<&str> = audit.strata.iter().map(|s| s.name.as_str()).collect();
    if let Some((n, _)) = given.iter().find(|(n, _)| !known.contains(&n.as_str())) {
        return Err(UsageError(format!(
            "--shares names stratum '{n}', which the audit does not have (strata: {})",
            known.join(", ")
        ))
        .into());
    }
    audit
        .strata
        .iter()
        .map(|s| {
            given
                .iter()
                .find(|(n, _)| n == &s.name)
                .map(|(_, w)| *w)
                .ok_or_else(|| {
                    UsageError(format!("--shares gives no weight for stratum '{}'", s.name)).into()
                })
        })
        .collect()
}

/// What the plan assumes where the audit could not separate a level (T = 1 or R = 1).
fn plan_notes(audit: &Audit) -> Vec<String> {
    let mut notes = Vec::new();
    for s in &audit.strata {
        let c = s.components;
        match (c.trajectory.is_some(), c.read.is_some()) {
            (true, false) => notes.push(format!(
                "{}: the audit has R = 1, so it cannot inform the read level: the read variance is counted in the \
                 trajectory component and the plan assumes extra reads reduce no variance (it buys no read beyond the \
                 first: R = 1 is the only read count planned when no stratum has a read component; audit with R >= 2 \
                 to weigh reads)",
                s.name
            )),
            (false, true) => notes.push(format!(
                "{}: the audit has T = 1, so it cannot inform the trajectory level: the trajectory variance is counted \
                 in the question component and the plan assumes extra trajectories reduce no variance (it buys one \
                 trajectory per question: T = 1 is the only trajectory count planned when no stratum has a trajectory \
                 component; audit with T >= 2 to weigh trajectories)",
                s.name
            )),
            (false, false) => notes.push(format!(
                "{}: the audit has T = 1 and R = 1, so it cannot inform the trajectory or read level: both are counted \
                 in the question component and the plan assumes extra trajectories and reads reduce no variance (it \
                 plans T = R = 1)",
                s.name
            )),
            (true, true) => {}
        }
    }
    notes
}
