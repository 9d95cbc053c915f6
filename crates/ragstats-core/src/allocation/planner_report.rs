//! `stats plan` as one library call ([`plan`]): the search of [`super::planner`] for a goal
//! (target SE or MDE, budget, or a given design) from an audit's components and unit costs,
//! its runner-up allocations, the Q-only forecast's answer, and the plan's uncertainty from
//! a stratified question bootstrap of the audit panel.
//!
//! Plan uncertainty: in every replicate b the components (and, with ledger costs, the unit
//! costs) are refitted from the resampled questions ([`refit_replicates`], or
//! [`refit_replicates_unbalanced`] for an unbalanced audit) and the planner is rerun at the
//! chosen (T, R): the required Q* (target), the affordable Q* and its SE* (budget), or the
//! SE* and power* of the given design. The intervals are percentile intervals of those
//! statistics ([`percentile_interval`]); a replicate in which no Q up to `max_questions`
//! meets a target counts as Q = max_questions + 1, one that affords nothing as Q = 0 and
//! SE = ∞.

use serde::Serialize;

use super::bootstrap_engine;
use super::efficiency::UnitCosts;
use super::planner::{
    mde_multiplier, nested_unit_costs, power, refit_replicates, refit_replicates_unbalanced,
    unit_costs, variance_per_question, Allocation, Bounds, Goal, PlanStratum, Planner,
};
use crate::components::forecast::Audit;
use crate::components::reml::Spread;
use crate::components::variance::nested_stratum;
use crate::costs::accounting::CellCosts;
use crate::costs::panel_costs::{
    balanced_panel_costs, panel_trajectory_costs, QuestionCost, TrajectoryCost,
};
use crate::document::{Engine, Report};
use crate::panel::Panel;
use crate::resample::engine::ResampleBackend;
use crate::resample::summary::{percentile_interval, Interval};
use crate::resample::Resampling;
use crate::table::{format_number, Precision};
use crate::{Error, Result};

/// What the plan is for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlanGoal {
    /// The least-cost allocation with SE ≤ `se`; `from_mde` is the minimum detectable
    /// difference it was derived from (se = MDE / (z_{1−α/2} + z_power)), if any.
    TargetSe { se: f64, from_mde: Option<f64> },
    /// The least-SE allocation costing at most this.
    Budget(f64),
    /// A given design: `questions` in total (split in the shares), T and R.
    Design {
        questions: usize,
        trajectories: usize,
        reads: usize,
    },
}

impl Serialize for PlanGoal {
    /// An object with the goal's `kind` and values: `mde` (the MDE the target came from,
    /// `null` for a target SE given as such, then of kind `target_se`) and `target_se`;
    /// `budget`; or the design's `questions`, `trajectories` and `reads`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        match *self {
            PlanGoal::TargetSe { se, from_mde } => {
                let kind = if from_mde.is_some() {
                    "mde"
                } else {
                    "target_se"
                };
                m.serialize_entry("kind", kind)?;
                m.serialize_entry("mde", &from_mde)?;
                m.serialize_entry("target_se", &se)?;
            }
            PlanGoal::Budget(b) => {
                m.serialize_entry("kind", "budget")?;
                m.serialize_entry("budget", &b)?;
            }
            PlanGoal::Design {
                questions,
                trajectories,
                reads,
            } => {
                m.serialize_entry("kind", "design")?;
                m.serialize_entry("questions", &questions)?;
                m.serialize_entry("trajectories", &trajectories)?;
                m.serialize_entry("reads", &reads)?;
            }
        }
        m.end()
    }
}

impl PlanGoal {
    /// The planner's search goal (`None` for a given design, which is evaluated, not searched).
    pub fn search_goal(&self) -> Option<Goal> {
        match *self {
            PlanGoal::TargetSe { se, .. } => Some(Goal::TargetSe(se)),
            PlanGoal::Budget(b) => Some(Goal::Budget(b)),
            PlanGoal::Design { .. } => None,
        }
    }
}

/// The unit costs the plan prices allocations with.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanCosts {
    /// No costs: only a given design can be planned (it has no cost).
    None,
    /// The same c_T, c_R for every stratum, held fixed in the bootstrap.
    Given(UnitCosts),
    /// A balanced audit priced from its ledger: every question's trajectory and read costs
    /// at the full design, per stratum (unit costs as [`unit_costs`]; refitted in the bootstrap).
    Questions(Vec<Vec<QuestionCost>>),
    /// An audit (balanced or not) priced from its ledger: every trajectory's and read's cost
    /// as it is, `[stratum][question][trajectory]` (unit costs as [`nested_unit_costs`];
    /// refitted in the bootstrap).
    Trajectories(Vec<Vec<Vec<TrajectoryCost>>>),
}

impl PlanCosts {
    /// The ledger costs of an audit `panel` from its per-cell costs `cells` (read from
    /// `ledger`): every question's at the full design when every stratum is balanced
    /// ([`PlanCosts::Questions`]), else every trajectory's and read's as they are
    /// ([`PlanCosts::Trajectories`]), so an unbalanced audit is priced like a balanced one.
    ///
    /// # Errors
    /// Those of [`balanced_panel_costs`] and [`panel_trajectory_costs`] (a panel cell the
    /// ledger has no rows for).
    pub fn of_panel(panel: &Panel, cells: &CellCosts, ledger: &std::path::Path) -> Result<Self> {
        Ok(if panel.strata.iter().all(|s| s.is_balanced()) {
            PlanCosts::Questions(balanced_panel_costs(panel, cells, ledger)?.0)
        } else {
            PlanCosts::Trajectories(panel_trajectory_costs(panel, cells, ledger)?)
        })
    }

    /// Whether the costs come from a ledger (then they are refitted in every replicate).
    pub fn from_ledger(&self) -> bool {
        matches!(self, PlanCosts::Questions(_) | PlanCosts::Trajectories(_))
    }
}

/// Everything `plan` is asked, besides its inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanJob {
    pub goal: PlanGoal,
    /// The name of the cost unit (`tokens`, `USD`), as messages and the report say it.
    pub unit: String,
    /// Two-sided significance level α of the MDE and the power.
    pub alpha: f64,
    /// Power the MDE is defined at.
    pub power: f64,
    /// A true difference δ to compute each allocation's power against.
    pub difference: Option<f64>,
    /// Integer split weights per stratum name (every audit stratum once); `None`: the
    /// audit's question counts.
    pub shares: Option<Vec<(String, usize)>>,
    pub bounds: Bounds,
    /// Runner-up allocations reported after the best.
    pub runners_up: usize,
    /// Bootstrap replicates, seed and confidence level of the plan's uncertainty (used only
    /// when the audit has a panel).
    pub resampling: Resampling,
    /// c_Q, a cost per question in `unit` (judging, annotation, set-up), added to every
    /// question's cost T (c_T + c_R1 + (R − 1) c_R+) whatever its T and R.
    pub question_cost: f64,
}

/// One reported allocation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanRow {
    #[serde(flatten)]
    pub allocation: Allocation,
    /// Stratum names beside `per_stratum`.
    pub strata: Vec<String>,
    /// The Q-only forecast's SE of the same questions per stratum.
    pub se_q_only: f64,
    /// MDE = (z_{1−α/2} + z_power) · SE.
    pub mde: f64,
    /// Power against `difference`, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<f64>,
    /// How much more it costs than the best (target) or how much larger its SE is (budget),
    /// percent; `None` for the best.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_percent: Option<f64>,
}

/// The Q-only forecast's answer to the goal, at each stratum's audit T and R.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QOnly {
    pub trajectories: Vec<usize>,
    pub reads: Vec<usize>,
    pub questions: usize,
    pub per_stratum: Vec<usize>,
    pub se_q_only: f64,
    /// The nested SE at those questions and the audit's T and R:
    /// sqrt(Σ_d v_d(T_d, R_d)/Q_d) / D.
    pub se_nested: f64,
    pub cost: Option<f64>,
}

/// A percentile interval of one plan statistic over the bootstrap replicates (their
/// number and the confidence level are the report's engine's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanInterval {
    /// What the statistic is (`required Q at T = 2, R = 1`).
    pub what: String,
    /// The statistic of the audit itself.
    pub estimate: f64,
    pub ci: Interval,
    /// Replicates in which no Q up to --max-questions met the goal (counted as above it).
    #[serde(skip_serializing_if = "is_zero")]
    pub beyond_bounds: usize,
    /// Whether the statistic is a question count (printed with one decimal).
    #[serde(skip)]
    pub count: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What `plan` found: the `stats plan` report. Its serialization is the document's body
/// (`docs/json.md`, `plan`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanReport {
    pub goal: PlanGoal,
    /// The cost unit (`tokens`, `USD`).
    #[serde(rename = "currency")]
    pub unit: String,
    pub alpha: f64,
    pub power: f64,
    /// z_{1−α/2} + z_power.
    pub mde_multiplier: f64,
    pub difference: Option<f64>,
    pub bounds: Bounds,
    /// The strata as planned: components, unit costs, split weights, audit design.
    pub strata: Vec<PlanStratum>,
    /// The strata's weights w_d in the combined estimate whose SE is planned (strata order,
    /// Σ = 1); empty (and not serialised) for equal weights.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
    /// The best allocation first, then the runners-up (one row for a given design).
    pub allocations: Vec<PlanRow>,
    /// The Q-only forecast's answer (`None` for a given design or when it has none).
    pub q_only: Option<QOnly>,
    /// The plan's bootstrap intervals (empty without an audit panel).
    pub bootstrap: Vec<PlanInterval>,
    /// What the plan assumes or could not do, for the reader.
    pub notes: Vec<String>,
    /// The plan-uncertainty bootstrap's backend, adapter, replicates, seed and confidence
    /// (all `None` without an audit panel, which has no bootstrap); in the document's
    /// `run`, not its body.
    #[serde(skip)]
    pub engine: Engine,
    /// Whether the unit costs came from a ledger (and were refitted in the bootstrap); the
    /// text says so, the document's body does not.
    #[serde(skip)]
    pub ledger_costs: bool,
    /// Whether the unit costs were given as such (the text says so; not in the body).
    #[serde(skip)]
    pub costs_given: bool,
    /// The ledger the unit costs were priced from, as the caller names it (the text says so;
    /// not in the body); set by the caller, which read it.
    #[serde(skip)]
    pub ledger: Option<std::path::PathBuf>,
}

impl Report for PlanReport {
    fn engine(&self) -> Engine {
        self.engine.clone()
    }
}

/// Plans an evaluation from an `audit` (its components; with `panel`, the audit panel they
/// were fitted from, for the bootstrap) and `costs`: the search of the goal, its runners-up
/// and the Q-only answer, or the given design evaluated, and with a panel the plan's
/// bootstrap intervals (see the module docs). `backend` runs the resampling; it is used
/// only with a panel.
///
/// # Errors
/// [`Error::Usage`] for unit costs that cannot price a plan, shares that do not name the
/// audit's strata, a given design leaving a stratum without questions, or a goal without
/// costs; [`Error::Runtime`] when no allocation within the bounds meets the goal; fit and
/// backend errors of the bootstrap.
pub fn plan(
    audit: &Audit,
    panel: Option<&Panel>,
    costs: &PlanCosts,
    settings: &PlanJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PlanReport> {
    let num = |v: f64| format_number(v, Precision::Auto);
    let unit = settings.unit.as_str();
    let planner = planner(
        audit,
        panel,
        costs,
        settings.question_cost,
        settings.shares.as_deref(),
        settings.bounds,
    )?;
    let with_question = |c: UnitCosts| UnitCosts {
        question: settings.question_cost,
        ..c
    };
    let bounds = settings.bounds;
    let names: Vec<String> = planner.strata.iter().map(|s| s.name.clone()).collect();
    let m = mde_multiplier(settings.alpha, settings.power);
    let alpha = settings.alpha;
    let row = |a: Allocation, extra: Option<f64>| PlanRow {
        se_q_only: planner.q_only_se(&a.per_stratum),
        mde: m * a.se,
        power: settings.difference.map(|d| power(d, a.se, alpha)),
        strata: names.clone(),
        extra_percent: extra,
        allocation: a,
    };
    let mut notes = plan_notes(audit);
    let goal = settings.goal.search_goal();
    let (rows, q_only) = match (settings.goal, goal) {
        (
            PlanGoal::Design {
                questions: q,
                trajectories: t,
                reads: r,
            },
            _,
        ) => {
            let parts = planner.split(q);
            if let Some(i) = parts.iter().position(|&n| n == 0) {
                return Err(Error::setting(
                    "questions",
                    format!(
                        "{q} leaves stratum '{}' with no questions; ask for more questions",
                        names[i]
                    ),
                ));
            }
            (vec![row(planner.evaluate(&parts, t, r), None)], None)
        }
        (_, Some(goal)) => {
            let all = planner.search(goal)?;
            let Some(best) = all.first().cloned() else {
                return Err(Error::Runtime(unmet_goal(&planner, goal, unit)));
            };
            let best_key = |a: &Allocation| match goal {
                Goal::TargetSe(_) => a.cost.unwrap_or(0.0),
                Goal::Budget(_) => a.se,
            };
            let b0 = best_key(&best);
            let rows: Vec<PlanRow> = all
                .into_iter()
                .take(1 + settings.runners_up)
                .enumerate()
                .map(|(i, a)| {
                    let extra = (i > 0).then(|| 100.0 * (best_key(&a) / b0 - 1.0));
                    row(a, extra)
                })
                .collect();
            (rows, q_only_answer(&planner, goal))
        }
        (_, None) => unreachable!("only a given design has no goal"),
    };
    if settings.question_cost != 0.0 && planner.strata.iter().any(|s| s.costs.is_some()) {
        notes.push(format!(
            "each question also costs c_Q = {} {unit} (the cost per question), whatever its T and R",
            num(settings.question_cost)
        ));
    }
    notes.extend(extrapolation_notes(&planner, &rows[0].allocation));
    if let Some((shares, gain)) = planner.weighted_split(&rows[0].allocation) {
        let a = &rows[0].allocation;
        let given: Vec<String> = names
            .iter()
            .zip(&shares)
            .map(|(n, w)| format!("{n}={w}"))
            .collect();
        notes.push(format!(
            "with these stratum weights, the split of questions that minimises SE^2 x cost at \
             T = {}, R = {} is Q_d proportional to w_d sqrt(v_d/k_d) (docs/METHODS.md, \
             \"Stratum weights\"): the shares {} lower SE^2 x cost by {:.1}% against the split \
             planned here",
            a.trajectories,
            a.reads,
            given.join(","),
            100.0 * gain
        ));
    }
    let (bootstrap, engine) = match panel {
        Some(p) => {
            let mut refits = refits(p, costs, &mut notes, settings, backend, progress)?;
            for f in &mut refits {
                for c in f.costs.iter_mut().flatten() {
                    *c = with_question(*c);
                }
            }
            let intervals = uncertainty(&planner, &refits, &rows[0].allocation, settings);
            if matches!(costs, PlanCosts::Given(_)) && goal.is_some() {
                notes.push(
                    "the bootstrap refits the components only: the unit costs given are held fixed"
                        .into(),
                );
            }
            (intervals, bootstrap_engine(backend, &settings.resampling))
        }
        None => {
            notes.push(
                "no bootstrap interval: a components file has no questions to resample (give an audit panel)"
                    .into(),
            );
            (Vec::new(), Engine::default())
        }
    };
    if panel.is_some_and(Panel::outcome_is_constant) {
        // First: a constant audit's bootstrap intervals have no width to read.
        notes.insert(0, crate::resample::summary::NO_SPREAD_NOTE.to_string());
    }
    Ok(PlanReport {
        goal: settings.goal,
        unit: settings.unit.clone(),
        alpha,
        power: settings.power,
        mde_multiplier: m,
        difference: settings.difference,
        bounds,
        weights: planner.weights,
        strata: planner.strata,
        allocations: rows,
        q_only,
        bootstrap,
        notes,
        engine,
        ledger_costs: costs.from_ledger(),
        costs_given: matches!(costs, PlanCosts::Given(_)),
        ledger: None,
    })
}

/// Cautions on the chosen allocation `a`: a T or R beyond the audit's own (the nested
/// forecast then extrapolates the components to designs the audit never ran), and strata
/// with fewer than [`super::one_read::FEW_QUESTIONS`] questions (the normal approximation
/// behind SE, MDE and power is rough).
fn extrapolation_notes(planner: &Planner, a: &Allocation) -> Vec<String> {
    let mut notes = Vec::new();
    let audit_t = planner.strata.iter().map(|s| s.audit_trajectories).min();
    let audit_r = planner.strata.iter().map(|s| s.audit_reads).min();
    for (what, chosen, audit) in [
        ("trajectories", a.trajectories, audit_t),
        ("reads", a.reads, audit_r),
    ] {
        if let Some(audit) = audit.filter(|&n| chosen > n) {
            notes.push(format!(
                "warning: the plan's T = {}, R = {} has more {what} ({chosen}) than the audit ({audit}), so its SE extrapolates the components beyond the audit; an audit with more {what} would check it",
                a.trajectories, a.reads
            ));
        }
    }
    for s in &planner.strata {
        if s.audit_questions < super::one_read::FEW_QUESTIONS {
            notes.push(format!(
                "warning: stratum '{}' has {} audit questions (fewer than {}), so the normal approximation behind the SE, MDE and power is rough",
                s.name,
                s.audit_questions,
                super::one_read::FEW_QUESTIONS
            ));
        }
    }
    notes
}

/// Why no allocation within the planner's bounds meets `goal` (costs in `unit`), and what
/// to change.
pub fn unmet_goal(planner: &Planner, goal: Goal, unit: &str) -> String {
    let num = |v: f64| format_number(v, Precision::Auto);
    let bounds = planner.bounds;
    let (least, floor) = planner.floors();
    match goal {
        Goal::TargetSe(s) if s < floor => format!(
            "the target SE {} is below what the audit's question variance allows at the maximum Q: \
             with Q = {} (the most questions searched) the question level alone gives SE {} \
             however many trajectories and reads; search more questions or relax the target",
            num(s),
            bounds.max_questions,
            num(floor)
        ),
        Goal::TargetSe(s) => format!(
            "no allocation within the bounds reaches SE {}: the least is {} at Q = {}, T = {}, R = {}; \
             search more questions, trajectories or reads, or relax the target",
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
    }
}

/// The Q-only forecast's answer to `goal` with the nested SE at its questions and the
/// audit's T and R.
fn q_only_answer(planner: &Planner, goal: Goal) -> Option<QOnly> {
    planner.q_only(goal).map(|(parts, se, cost)| {
        let nested = planner
            .strata
            .iter()
            .zip(&parts)
            .map(|(s, &q)| {
                variance_per_question(&s.components, s.audit_trajectories, s.audit_reads) / q as f64
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
    })
}

/// The components (and ledger unit costs) of every stratum refitted in each bootstrap
/// replicate: ANOVA sums for a balanced audit, the REML question bootstrap for an unbalanced
/// one (which `notes` then describes).
fn refits(
    p: &Panel,
    costs: &PlanCosts,
    notes: &mut Vec<String>,
    settings: &PlanJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<super::planner::Refit>> {
    if p.strata.iter().all(|s| s.is_balanced()) {
        let qc = match costs {
            PlanCosts::Questions(qc) => Some(qc.as_slice()),
            _ => None,
        };
        return refit_replicates(&p.strata, qc, &settings.resampling, backend, progress);
    }
    let designs: Vec<String> = p
        .strata
        .iter()
        .filter_map(|s| {
            let shape = nested_stratum(s).ok()?.shape();
            let method = if s.is_balanced() { "ANOVA" } else { "REML" };
            Some(format!(
                "{}: {method}, Q = {}, T = {}, R = {}",
                s.name,
                shape.questions,
                spread(&shape.trajectories),
                spread(&shape.reads)
            ))
        })
        .collect();
    notes.push(format!(
        "the audit is unbalanced ({}; T and R min/mean/max per question and per trajectory): components as `stats variance` fits them, refitted in every replicate from the resampled questions{}",
        designs.join("; "),
        if costs.from_ledger() {
            "; c_T and c_R are the mean cost per trajectory and per read over the cells that exist, refitted from the same draws"
        } else {
            ""
        }
    ));
    let nc = match costs {
        PlanCosts::Trajectories(nc) => Some(nc.as_slice()),
        _ => None,
    };
    refit_replicates_unbalanced(p, nc, &settings.resampling, backend, progress)
}

/// A count per parent as `stats variance` prints it: the count when constant, else
/// `min/mean/max` (mean to 2 decimals).
fn spread(x: &Spread) -> String {
    if x.min == x.max {
        x.min.to_string()
    } else {
        format!("{}/{:.2}/{}", x.min, x.mean, x.max)
    }
}

/// The plan statistics of every refitted replicate at the chosen allocation's (T, R), as
/// percentile intervals (see the module docs).
fn uncertainty(
    planner: &Planner,
    refits: &[super::planner::Refit],
    chosen: &Allocation,
    settings: &PlanJob,
) -> Vec<PlanInterval> {
    let num = |v: f64| format_number(v, Precision::Auto);
    let (conf, alpha) = (settings.resampling.confidence, settings.alpha);
    let bounds = planner.bounds;
    let interval = |what: String, estimate: f64, mut v: Vec<f64>, beyond: usize| {
        v.sort_by(f64::total_cmp);
        PlanInterval {
            what,
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
    let mut intervals = Vec::new();
    match settings.goal.search_goal() {
        Some(g) => {
            let found: Vec<Option<Allocation>> =
                planners.iter().map(|pl| pl.best_at(g, t, r)).collect();
            let beyond = found.iter().filter(|a| a.is_none()).count();
            let none = match g {
                Goal::TargetSe(_) => bounds.max_questions as f64 + 1.0,
                Goal::Budget(_) => 0.0,
            };
            let qs: Vec<f64> = found
                .iter()
                .map(|a| a.as_ref().map_or(none, |a| a.questions as f64))
                .collect();
            let what = match g {
                Goal::TargetSe(_) => format!("required Q at T = {t}, R = {r}"),
                Goal::Budget(_) => format!("affordable Q of least SE at T = {t}, R = {r}"),
            };
            intervals.push(PlanInterval {
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
            if let Some(d) = settings.difference {
                intervals.push(interval(
                    format!("power against a difference of {}", num(d)),
                    power(d, chosen.se, alpha),
                    evals.iter().map(|a| power(d, a.se, alpha)).collect(),
                    0,
                ));
            }
        }
    }
    intervals
}

/// The split weight of every audit stratum from `given` (name, weight) pairs.
///
/// # Errors
/// [`Error::Usage`] naming a stratum the audit does not have, or one without a weight.
fn share_weights(given: &[(String, usize)], audit: &Audit) -> Result<Vec<usize>> {
    let known: Vec<&str> = audit.strata.iter().map(|s| s.name.as_str()).collect();
    if let Some((n, _)) = given.iter().find(|(n, _)| !known.contains(&n.as_str())) {
        return Err(Error::setting(
            "shares",
            format!(
                "stratum '{n}' is not a stratum of the audit (strata: {})",
                known.join(", ")
            ),
        ));
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
                    Error::setting("shares", format!("no weight for stratum '{}'", s.name))
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

/// The planner [`plan`] searches: the audit's strata with their components, the unit costs
/// `costs` gives each (plus `question_cost`, c_Q, per question), the split weights
/// (`shares`, else the audit's question counts) and the `bounds`. `stats compare` plans the
/// next study of a pair with it.
///
/// # Errors
/// [`Error::Usage`] for unit costs that cannot price a plan, or shares that do not name
/// the audit's strata.
pub fn planner(
    audit: &Audit,
    panel: Option<&Panel>,
    costs: &PlanCosts,
    question_cost: f64,
    shares: Option<&[(String, usize)]>,
    bounds: Bounds,
) -> Result<Planner> {
    let num = |v: f64| format_number(v, Precision::Auto);
    let strata_costs: Vec<Option<UnitCosts>> = match (costs, panel) {
        (PlanCosts::Questions(qc), Some(p)) => qc
            .iter()
            .zip(&p.strata)
            .map(|(c, s)| Some(unit_costs(c, s.t(), s.r())))
            .collect(),
        (PlanCosts::Trajectories(nc), _) => nc.iter().map(|c| Some(nested_unit_costs(c))).collect(),
        (PlanCosts::Given(u), _) => vec![Some(*u); audit.strata.len()],
        _ => vec![None; audit.strata.len()],
    };
    let with_question = |c: UnitCosts| UnitCosts {
        question: question_cost,
        ..c
    };
    let strata_costs: Vec<Option<UnitCosts>> = strata_costs
        .into_iter()
        .map(|c| c.map(with_question))
        .collect();
    if let Some(c) = strata_costs.iter().flatten().find(|c| {
        !(c.trajectory.is_finite()
            && c.first_read.is_finite()
            && c.read.is_finite()
            && c.per_question(1.0, 1.0) > 0.0)
    }) {
        let first = if c.first_read == c.read {
            String::new()
        } else {
            format!(", c_R1 = {}", num(c.first_read))
        };
        return Err(Error::Usage(format!(
            "the unit costs c_T = {}{first}, c_R = {} cannot price a plan (they must be finite with a positive sum)",
            num(c.trajectory),
            num(c.read)
        )));
    }
    let weights = match shares {
        None => audit.strata.iter().map(|s| s.questions).collect(),
        Some(given) => share_weights(given, audit)?,
    };
    Ok(Planner {
        strata: audit
            .strata
            .iter()
            .zip(&strata_costs)
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
        weights: audit.weights.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::forecast::AuditStratum;
    use crate::components::variance::PerLevel;
    use crate::resample::cpu::CpuBackend;

    /// The hand-worked audit of `tests/it/plan.rs` (and docs/plan.md): one stratum of 100
    /// questions with σ² = (0.04, 0.01, 0.02) at T = R = 2 and SE 0.02.
    fn audit() -> Audit {
        Audit {
            strata: vec![AuditStratum {
                name: "all".into(),
                questions: 100,
                trajectories: 2,
                reads: 2,
                se: 0.02,
                components: PerLevel {
                    question: 0.04,
                    trajectory: Some(0.01),
                    read: Some(0.02),
                },
                cluster: None,
            }],
            pooled: None,
            weights: Vec::new(),
            pooled_cluster: None,
        }
    }

    fn settings(goal: PlanGoal) -> PlanJob {
        PlanJob {
            goal,
            unit: "tokens".into(),
            alpha: 0.05,
            power: 0.8,
            difference: None,
            shares: None,
            bounds: Bounds {
                max_questions: 3000,
                max_trajectories: 10,
                max_reads: 10,
            },
            runners_up: 5,
            resampling: Resampling {
                seed: 1,
                replicates: 200,
                confidence: 0.95,
            },
            question_cost: 0.0,
        }
    }

    fn run(costs: &PlanCosts, s: &PlanJob) -> Result<PlanReport> {
        plan(&audit(), None, costs, s, &CpuBackend::new(), &|_| {})
    }

    const COSTS: PlanCosts = PlanCosts::Given(UnitCosts {
        first_read: 1.0,
        question: 0.0,
        trajectory: 3.0,
        read: 1.0,
    });

    /// v(T, R) = 0.04 + 0.01/T + 0.02/(TR), a question costs T (3 + R): SE ≤ 0.01 needs
    /// Q ≥ v/1e-4, so (1, 1) needs Q = 700 (cost 2800) and the runner-up (1, 2) Q = 600
    /// (cost 3000, 7.142857% more); the MDE at the best is 2.801585218112968 · 0.01.
    #[test]
    fn target_se_is_the_hand_worked_minimum() {
        let r = run(
            &COSTS,
            &settings(PlanGoal::TargetSe {
                se: 0.01,
                from_mde: None,
            }),
        )
        .unwrap();
        let best = &r.allocations[0];
        let a = &best.allocation;
        assert_eq!((a.questions, a.trajectories, a.reads), (700, 1, 1));
        assert!((a.cost.unwrap() - 2800.0).abs() < 1e-9);
        assert!((a.se - 0.01).abs() < 1e-12);
        assert!((best.mde - 2.801585218112968 * a.se).abs() < 1e-12);
        assert_eq!(best.extra_percent, None);
        // The Q-only SE of 700 questions: 0.02 · sqrt(100/700).
        assert!((best.se_q_only - 0.02 * (100.0f64 / 700.0).sqrt()).abs() < 1e-15);
        let second = &r.allocations[1];
        assert_eq!(
            (second.allocation.questions, second.allocation.reads),
            (600, 2)
        );
        let extra = second.extra_percent.unwrap();
        assert!((extra - 100.0 * (3000.0 / 2800.0 - 1.0)).abs() < 1e-9);
        assert_eq!(r.allocations.len(), 6);
        // The Q-only forecast: SE_audit² · Q_audit / Q ≤ 1e-4 needs Q = 0.04/1e-4 = 400 at
        // the audit's T = R = 2 (cost 400 · 2 · (3 + 2) = 4000).
        let q = r.q_only.unwrap();
        assert_eq!(q.questions, 400);
        assert!((q.cost.unwrap() - 4000.0).abs() < 1e-9);
        // Nested SE there: sqrt((0.04 + 0.005 + 0.005)/400).
        assert!((q.se_nested - (0.05f64 / 400.0).sqrt()).abs() < 1e-15);
        // No panel: no bootstrap, and a note says why.
        assert!(r.bootstrap.is_empty() && r.engine == Engine::default());
        assert!(r.notes[0].starts_with("no bootstrap interval"));
    }

    /// The document of a plan (docs/json.md, `plan`): the goal as `{"kind": …}` with its
    /// values, the cost unit as `currency`, and with an audit panel the engine of the
    /// plan-uncertainty bootstrap (its replicates, seed and confidence) in `run` only, not
    /// in each interval. The audit panel (100 questions × 2 × 2, scores on a grid of
    /// tenths) only feeds the bootstrap: the plan is the hand-worked one above (Q = 700 at
    /// T = R = 1), and the bootstrap's estimate is that Q.
    #[test]
    fn the_plan_document_has_the_bootstrap_engine_in_run() {
        use crate::document::{document, Inputs};
        use crate::panel::{Panel, Stratum};
        use serde_json::{json, Value};
        let stratum = Stratum {
            name: "all".into(),
            questions: (0..100).map(|q| format!("q{q}")).collect(),
            trajectories: vec!["0".into(), "1".into()],
            reads: vec!["0".into(), "1".into()],
            y: (0..400)
                .map(|i| ((i * 7 + i / 4 * 3) % 10) as f64 / 10.0)
                .collect(),
            ..Stratum::default()
        };
        let panel = Panel {
            notes: Vec::new(),
            weights: Vec::new(),
            source: "audit.csv".into(),
            metric: "f1".into(),
            outcome: "f1".into(),
            selectors: Vec::new(),
            selector: None,
            strata: vec![stratum],
        };
        let s = settings(PlanGoal::TargetSe {
            se: 0.01,
            from_mde: None,
        });
        let cpu = CpuBackend::new();
        let r = plan(&audit(), Some(&panel), &COSTS, &s, &cpu, &|_| {}).unwrap();
        let d = document("plan", Inputs::new().with("audit", "audit.csv"), &r);
        let e = &d["run"];
        assert_eq!(
            (&e["backend"], &e["adapter"]),
            (&json!("cpu"), &json!(cpu.description()))
        );
        assert_eq!(
            (&e["replicates"], &e["seed"], &e["confidence"]),
            (&json!(200), &json!(1), &json!(0.95))
        );
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "allocations",
                "alpha",
                "bootstrap",
                "bounds",
                "currency",
                "difference",
                "goal",
                "mde_multiplier",
                "notes",
                "power",
                "q_only",
                "run",
                "strata"
            ]
        );
        assert_eq!(
            d["goal"],
            json!({"kind": "target_se", "mde": null, "target_se": 0.01})
        );
        assert_eq!(
            (&d["currency"], &d["difference"]),
            (&json!("tokens"), &Value::Null)
        );
        assert_eq!(d["allocations"][0]["questions"], 700);
        let b = d["bootstrap"].as_array().unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(
            (&b[0]["what"], &b[0]["estimate"]),
            (&json!("required Q at T = 1, R = 1"), &json!(700.0))
        );
        for key in ["replicates", "confidence", "seed", "backend", "adapter"] {
            assert!(
                b[0].get(key).is_none() && d.get(key).is_none(),
                "{key} is in the body"
            );
        }
        // Without a panel there is no bootstrap, and the engine is all null.
        let none = document("plan", Inputs::new(), &run(&COSTS, &s).unwrap());
        assert_eq!(none["bootstrap"], json!([]));
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(none["run"][key], Value::Null, "{key}");
        }
    }

    /// Every goal's JSON, as `stats plan` has always written it.
    #[test]
    fn goals_serialize_with_their_kind() {
        let v = |g: PlanGoal| serde_json::to_value(g).unwrap();
        let mde = v(PlanGoal::TargetSe {
            se: 0.5,
            from_mde: Some(1.4),
        });
        assert_eq!(
            mde,
            serde_json::json!({"kind": "mde", "mde": 1.4, "target_se": 0.5})
        );
        assert_eq!(
            v(PlanGoal::Budget(20.0)),
            serde_json::json!({"kind": "budget", "budget": 20.0})
        );
        let design = v(PlanGoal::Design {
            questions: 446,
            trajectories: 2,
            reads: 1,
        });
        assert_eq!(
            design,
            serde_json::json!({"kind": "design", "questions": 446, "trajectories": 2, "reads": 1})
        );
    }

    /// MDE 0.03 at α = 0.05, power 0.8: SE ≤ 0.03/2.801585 = 0.010708, so (1, 1) needs
    /// Q = ⌈0.07/0.00011467⌉ = 611 at cost 2444 (tests/it/plan.rs).
    #[test]
    fn mde_goal_is_the_hand_worked_minimum() {
        let se = 0.03 / mde_multiplier(0.05, 0.8);
        let r = run(
            &COSTS,
            &settings(PlanGoal::TargetSe {
                se,
                from_mde: Some(0.03),
            }),
        )
        .unwrap();
        let a = &r.allocations[0].allocation;
        assert_eq!((a.questions, a.trajectories, a.reads), (611, 1, 1));
        assert!((a.cost.unwrap() - 2444.0).abs() < 1e-9);
    }

    /// A budget of 2800 at (1, 1) buys exactly 700 questions; the best over all (T, R) has
    /// an SE no larger than that allocation's 0.01 and costs at most 2800.
    #[test]
    fn budget_buys_the_least_se() {
        let r = run(&COSTS, &settings(PlanGoal::Budget(2800.0))).unwrap();
        let a = &r.allocations[0].allocation;
        assert!(a.se <= 0.01 + 1e-15 && a.cost.unwrap() <= 2800.0);
        let too_little = run(&COSTS, &settings(PlanGoal::Budget(3.0))).unwrap_err();
        assert!(matches!(too_little, Error::Runtime(_)), "{too_little}");
        assert_eq!(
            too_little.to_string(),
            "the budget 3.000000 tokens buys no allocation with at least one question per stratum"
        );
    }

    /// A given design 400:2:2 has SE sqrt(0.05/400) = 0.0111803 and, against δ = 0.03, the
    /// power Φ(δ/SE − z_0.975) + Φ(−δ/SE − z_0.975).
    #[test]
    fn given_design_has_the_nested_se_and_power() {
        let mut s = settings(PlanGoal::Design {
            questions: 400,
            trajectories: 2,
            reads: 2,
        });
        s.difference = Some(0.03);
        let r = run(&PlanCosts::None, &s).unwrap();
        let row = &r.allocations[0];
        let se = (0.05f64 / 400.0).sqrt();
        assert!((row.allocation.se - se).abs() < 1e-15);
        assert_eq!(row.allocation.cost, None);
        assert_eq!(row.power, Some(power(0.03, se, 0.05)));
        // Reference: Python 3's statistics.NormalDist() with δ/SE = 2.6832815729997477:
        // cdf(δ/SE − inv_cdf(0.975)) + cdf(−δ/SE − inv_cdf(0.975)) = 0.7652593202022941.
        assert!(
            (row.power.unwrap() - 0.7652593202022941).abs() < 1e-12,
            "{:?}",
            row.power
        );
        assert!(r.q_only.is_none());
    }

    #[test]
    fn bad_costs_and_shares_are_usage_errors() {
        let target = settings(PlanGoal::TargetSe {
            se: 0.01,
            from_mde: None,
        });
        let e = run(&PlanCosts::None, &target).unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        let zero = PlanCosts::Given(UnitCosts::flat(0.0, 0.0));
        let e = run(&zero, &target).unwrap_err();
        assert!(
            e.to_string().contains("c_T = 0.000000, c_R = 0.000000"),
            "{e}"
        );
        let mut s = target.clone();
        s.shares = Some(vec![("other".into(), 1)]);
        let e = run(&COSTS, &s).unwrap_err();
        // An error about the shares setting, naming it.
        assert!(
            matches!(&e, Error::Setting { setting: "shares", msg }
                if msg == "stratum 'other' is not a stratum of the audit (strata: all)"),
            "{e:?}"
        );
    }
}
