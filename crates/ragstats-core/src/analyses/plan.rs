//! `plan`: the least-cost allocation (Q, T, R) for a target SE or a minimum detectable
//! difference, the least-SE allocation for a budget, or the SE, MDE and power of a given
//! design, from an audit's components and unit costs, with a bootstrap interval of the plan
//! ([`crate::allocation::planner_report::plan`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::forecast::components_of;
use super::label_plan::{check_label_pricing, label_plan, LabelPricing};
use super::priced::plan_costs;
use super::LabelSettings;
use super::SearchBounds;
use super::{
    audit_input, source_input, source_input_opt, unpaired_cells, AuditInput, CostUnit, Engines,
    Progress,
};
use crate::allocation::efficiency::UnitCosts;
use crate::allocation::planner::mde_multiplier;
use crate::allocation::planner_report::{plan as plan_of, PlanCosts, PlanGoal, PlanJob};
use crate::components::forecast::Audit;
use crate::components::variance::analyse_panel;
use crate::document::{Finished, Inputs};
use crate::import::{Balance, PanelSettings};
use crate::ledger::check_price;
use crate::panel::Source;
use crate::resample::{CpuBackend, ResampleBackend, ResampleSettings, Resampling};
use crate::{Error, Result};

/// Unit costs given as such: text `C_T,C_R` or `C_T,C_R1,C_R+`, or the list of those numbers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum GivenUnitCosts {
    /// `C_T,C_R` or `C_T,C_R1,C_R+`.
    Text(String),
    /// `[C_T, C_R]` or `[C_T, C_R1, C_R+]`.
    List(Vec<f64>),
}

impl GivenUnitCosts {
    /// The unit costs: one trajectory without its reads, then one read (or the first read
    /// and each later read), non-negative and finite with a positive sum.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `unit_costs` for anything else.
    pub fn costs(&self) -> Result<UnitCosts> {
        let (shown, v) = match self {
            GivenUnitCosts::List(l) => (
                l.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
                Some(l.clone()),
            ),
            GivenUnitCosts::Text(s) => (
                s.clone(),
                s.split(',').map(|x| x.trim().parse::<f64>().ok()).collect(),
            ),
        };
        let bad = || {
            Error::setting(
                "unit_costs",
                format!(
                    "'{shown}': expected C_T,C_R (or C_T,C_R1,C_R+), non-negative numbers with \
                     a positive sum"
                ),
            )
        };
        let v = v.ok_or_else(bad)?;
        let c = match v[..] {
            [t, r] => UnitCosts::flat(t, r),
            [t, r1, r] => UnitCosts {
                first_read: r1,
                ..UnitCosts::flat(t, r)
            },
            _ => return Err(bad()),
        };
        if !(v.iter().all(|x| x.is_finite() && *x >= 0.0) && c.trajectory + c.first_read > 0.0) {
            return Err(bad());
        }
        Ok(c)
    }
}

/// Question shares per stratum: text `name=W,name=W` or a map of names to weights.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Shares {
    /// `name=W,name=W` (positive integer weights).
    Text(String),
    /// `{name: W}`.
    Map(BTreeMap<String, usize>),
}

impl Shares {
    /// The (name, positive integer weight) pairs as given (the plan matches them to the
    /// audit's strata).
    ///
    /// # Errors
    /// [`Error::Setting`] naming `shares` for an item that is not `name=W` or a weight
    /// that is not a positive integer.
    pub fn pairs(&self) -> Result<Vec<(String, usize)>> {
        let weight = |name: &str, w: &str| match w.trim().parse::<usize>() {
            Ok(w) if w >= 1 => Ok(w),
            _ => Err(Error::setting(
                "shares",
                format!("the weight of '{name}' must be a positive integer, got '{w}'"),
            )),
        };
        match self {
            Shares::Map(m) => m
                .iter()
                .map(|(name, &w)| Ok((name.trim().to_string(), weight(name, &w.to_string())?)))
                .collect(),
            Shares::Text(text) => text
                .split(',')
                .map(|item| {
                    let (name, w) = item.split_once('=').ok_or_else(|| {
                        Error::setting(
                            "shares",
                            format!("'{item}' is not name=W (e.g. hotpotqa=1,musique=1)"),
                        )
                    })?;
                    Ok((name.trim().to_string(), weight(name, w)?))
                })
                .collect(),
        }
    }
}

/// The settings of [`plan`]: one goal (`target_se`, `mde`, `budget_tokens`, `budget_usd`, or
/// a design `questions`, `trajectories`, `reads`), the costs and the search.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct PlanSettings {
    /// How the audit panel is read (unbalanced strata are kept as they are); a components
    /// document's strata are weighted by `weights` when given.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// Goal: the cheapest allocation whose SE is at most this.
    pub target_se: Option<f64>,
    /// Goal: the cheapest allocation whose minimum detectable difference
    /// (z_{1-α/2} + z_power)·SE is at most this.
    pub mde: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many model tokens.
    pub budget_tokens: Option<f64>,
    /// Goal: the allocation of least SE costing at most this many dollars.
    pub budget_usd: Option<f64>,
    /// Given design: total questions (split as `shares`), with `trajectories` and `reads`.
    pub questions: Option<u64>,
    /// Given design: trajectories per question.
    pub trajectories: Option<u64>,
    /// Given design: reads per trajectory.
    pub reads: Option<u64>,
    /// Unit costs for every stratum instead of a ledger's: one trajectory without its
    /// reads and one read (or the first read and each later read).
    pub unit_costs: Option<GivenUnitCosts>,
    /// A cost per question in the plan's unit (judging, annotation, set-up), added to every
    /// question whatever its T and R.
    pub question_cost: f64,
    /// With an audit read with its cluster column: the cost of one cluster itself in the
    /// plan's unit (retrieving and reading its passage), paid once however many of its
    /// questions are asked. The plan is then the cheapest G×M:T:R design.
    pub cluster_cost: Option<f64>,
    /// With clusters: the most questions per cluster the search tries.
    pub max_per_cluster: usize,
    /// What costs are counted in (a budget in tokens or dollars implies its own).
    pub currency: Option<CostUnit>,
    /// The search price for dollars, USD per 1,000 requests (default: the prices').
    pub search_price: Option<f64>,
    /// A true difference to compute each allocation's power against.
    pub difference: Option<f64>,
    /// Two-sided significance level, strictly between 0 and 1.
    pub alpha: f64,
    /// Power the MDE is defined at, strictly between 0 and 1.
    pub power: f64,
    /// Question shares per stratum (positive integer weights; default: the audit's
    /// question counts).
    pub shares: Option<Shares>,
    /// The least-cost search's bounds.
    #[serde(flatten)]
    pub bounds: SearchBounds,
    /// Runner-up allocations shown after the best.
    pub runners_up: usize,
    /// The plan bootstrap's replicates, seed, backend and confidence level (used only with
    /// an audit panel).
    #[serde(flatten)]
    pub resample: ResampleSettings,
    /// With labels: the cost of one label (one labelled question's human score) in the
    /// plan's unit; the plan is then the cheapest labels n and Q:T:R for the PPI++
    /// estimate (docs/judges.md, "Labels in the plan").
    pub label_cost: Option<f64>,
    /// With labels: the fewest labels the plan gives a stratum (at least 2).
    pub min_labels: usize,
    /// With labels: their score column and the judge's weight λ.
    #[serde(flatten)]
    pub judged: LabelSettings,
}

impl Default for PlanSettings {
    fn default() -> Self {
        PlanSettings {
            panel: PanelSettings::default(),
            target_se: None,
            mde: None,
            budget_tokens: None,
            budget_usd: None,
            questions: None,
            trajectories: None,
            reads: None,
            unit_costs: None,
            question_cost: 0.0,
            cluster_cost: None,
            max_per_cluster: 20,
            currency: None,
            search_price: None,
            difference: None,
            alpha: 0.05,
            power: 0.8,
            shares: None,
            bounds: SearchBounds::default(),
            runners_up: 5,
            resample: ResampleSettings::default(),
            label_cost: None,
            min_labels: crate::judges::plan::FEW_LABELS,
            judged: LabelSettings::default(),
        }
    }
}

impl PlanSettings {
    /// The goal the settings ask for, each value checked.
    ///
    /// # Errors
    /// [`Error::Usage`] for no goal or several; [`Error::Setting`] for a value out of its
    /// range or a design without all three of its sizes.
    pub fn goal(&self) -> Result<PlanGoal> {
        let positive = |name: &'static str, v: Option<f64>| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(Error::setting(
                name,
                format!("{x} must be a positive number, e.g. 0.01 or 30e6"),
            )),
            _ => Ok(v),
        };
        let target_se = positive("target_se", self.target_se)?;
        let mde = positive("mde", self.mde)?;
        let budget_tokens = positive("budget_tokens", self.budget_tokens)?;
        let budget_usd = positive("budget_usd", self.budget_usd)?;
        let given = [
            ("target_se", target_se.is_some()),
            ("mde", mde.is_some()),
            ("budget_tokens", budget_tokens.is_some()),
            ("budget_usd", budget_usd.is_some()),
            ("questions", self.questions.is_some()),
        ];
        let named: Vec<&str> = given.iter().filter(|g| g.1).map(|g| g.0).collect();
        if named.len() > 1 {
            return Err(Error::Usage(format!(
                "give one goal, not {}",
                named.join(" and ")
            )));
        }
        if self.questions.is_none() && (self.trajectories.is_some() || self.reads.is_some()) {
            return Err(Error::setting(
                "questions",
                "a given design needs its questions with its trajectories and reads",
            ));
        }
        let size = |name: &'static str, v: Option<u64>| match v {
            Some(0) => Err(Error::setting(name, "must be at least 1")),
            Some(n) => usize::try_from(n)
                .map_err(|_| Error::setting(name, format!("{n} does not fit this machine"))),
            None => Err(Error::setting(
                name,
                "a given design needs its questions, trajectories and reads",
            )),
        };
        Ok(if let Some(se) = target_se {
            PlanGoal::TargetSe { se, from_mde: None }
        } else if let Some(m) = mde {
            PlanGoal::TargetSe {
                se: m / mde_multiplier(self.alpha, self.power),
                from_mde: Some(m),
            }
        } else if let Some(b) = budget_tokens.or(budget_usd) {
            PlanGoal::Budget(b)
        } else if self.questions.is_some() {
            PlanGoal::Design {
                questions: size("questions", self.questions)?,
                trajectories: size("trajectories", self.trajectories)?,
                reads: size("reads", self.reads)?,
            }
        } else {
            return Err(Error::Usage(
                "give a goal: target_se, mde, budget_tokens, budget_usd, or a design \
                 (questions, trajectories and reads)"
                    .into(),
            ));
        })
    }

    /// The unit costs are counted in: a budget's own, else `currency`, else tokens.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `currency` when it is not the budget's.
    pub fn cost_unit(&self) -> Result<CostUnit> {
        match (self.budget_tokens, self.budget_usd, self.currency) {
            (Some(_), _, Some(CostUnit::Usd)) => Err(Error::setting(
                "currency",
                "usd: a budget in tokens counts tokens",
            )),
            (_, Some(_), Some(CostUnit::Tokens)) => Err(Error::setting(
                "currency",
                "tokens: a budget in dollars counts dollars",
            )),
            (Some(_), _, _) => Ok(CostUnit::Tokens),
            (_, Some(_), _) => Ok(CostUnit::Usd),
            (_, _, c) => Ok(c.unwrap_or_default()),
        }
    }

    /// Checks the levels, the difference and the prices.
    fn check(&self) -> Result<()> {
        let probability = |name: &'static str, p: f64, eg: &str| {
            if p > 0.0 && p < 1.0 {
                Ok(())
            } else {
                Err(Error::setting(
                    name,
                    format!("{p} must be between 0 and 1 (exclusive), e.g. {eg}"),
                ))
            }
        };
        probability("alpha", self.alpha, "0.05")?;
        probability("power", self.power, "0.8")?;
        if let Some(d) = self.difference {
            if !d.is_finite() {
                return Err(Error::setting(
                    "difference",
                    format!("{d} must be a finite number, e.g. 0.02"),
                ));
            }
        }
        check_price("the price", self.question_cost)
            .map_err(|m| Error::setting("question_cost", m))?;
        if let Some(c) = self.cluster_cost {
            check_price("the price", c).map_err(|m| Error::setting("cluster_cost", m))?;
        }
        if self.max_per_cluster == 0 {
            return Err(Error::setting("max_per_cluster", "must be at least 1"));
        }
        if let Some(p) = self.search_price {
            check_price("the price", p).map_err(|m| Error::setting("search_price", m))?;
        }
        check_label_pricing(self.label_cost, self.min_labels)?;
        Ok(())
    }
}

/// The plan of `settings`' goal from the audit panel `audit` (its components fitted, its
/// questions bootstrapped) or the components document `components` (one of the two), with
/// unit costs priced from the audit's ledger `ledger` (with `prices` for dollars) or given
/// as `settings.unit_costs`.
///
/// With `labels` (human scores of some of a judged audit's questions) and
/// `settings.label_cost`, the plan is the cheapest labels n and Q:T:R whose PPI++ estimate
/// reaches the target SE or MDE ([`crate::judges::plan`]); no bootstrap of it is made.
///
/// # Errors
/// [`Error::Usage`] without an audit or with both, or without a goal or with several;
/// [`Error::Setting`] for a setting out of its range, unit costs with a ledger, a ledger
/// with a components document, shares or unit costs that do not parse, and the
/// resampling settings' errors; with labels, a missing label cost, a components document,
/// clusters, or a goal other than a target SE or an MDE, and the label settings without
/// labels; those of loading the inputs and of the plan.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    audit: Option<&Source>,
    components: Option<&Source>,
    labels: Option<&Source>,
    ledger: Option<&Source>,
    prices: Option<&Source>,
    settings: &PlanSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<Finished> {
    let s = settings;
    s.check()?;
    let goal = s.goal()?;
    let unit = s.cost_unit()?;
    if labels.is_none() {
        if s.label_cost.is_some() {
            return Err(Error::setting(
                "label_cost",
                "prices human labels: give the labels file too",
            ));
        }
        s.judged.check_without_labels(false)?;
    }
    if ledger.is_some() && s.unit_costs.is_some() {
        return Err(Error::setting(
            "unit_costs",
            "are given or priced from the ledger, not both: drop one",
        ));
    }
    let bounds = s.bounds.bounds()?;
    let shares = s.shares.as_ref().map(Shares::pairs).transpose()?;
    let given = s
        .unit_costs
        .as_ref()
        .map(GivenUnitCosts::costs)
        .transpose()?;
    // The audit: components, and the panel when there is one (for costs and the bootstrap).
    let (read, panel) = match audit_input(audit, components)? {
        AuditInput::Panel(source) => {
            // Ledger costs are matched to each question's own cells, so an unbalanced audit
            // is priced like a balanced one.
            let p = s.panel.load(source, Balance::Fitted)?;
            (Audit::from_report(&analyse_panel(&p)?), Some(p))
        }
        AuditInput::Components(source) => {
            if ledger.is_some() {
                return Err(Error::setting(
                    "ledger",
                    "is matched to the audit panel's cells: give an audit panel, or unit \
                     costs with a components document",
                ));
            }
            (components_of(source, &s.panel)?, None)
        }
    };
    let clustered = crate::components::forecast::audit_is_clustered(&read);
    if let Some(labels) = labels {
        if clustered {
            return Err(Error::setting(
                "cluster",
                "plans with labels are not made over clusters yet: leave the cluster column \
                 out of the audit",
            ));
        }
        let Some(p) = &panel else {
            return Err(Error::setting(
                "components",
                "labels are paired with the audit panel's cells: give the audit panel, not a \
                 components document",
            ));
        };
        let costs = plan_costs(ledger, prices, p, unit, s.search_price, given)?;
        let report = plan_with_labels(s, &goal, unit, &read, p, labels, &costs, bounds, shares)?;
        let inputs = source_input(
            source_input(Inputs::new(), "audit", audit.expect("a panel is an audit")),
            "labels",
            labels,
        );
        let inputs = source_input_opt(source_input_opt(inputs, "ledger", ledger), "prices", prices);
        return Ok(
            Finished::new("plan", inputs, report).with_notes_after(s.panel.loading_notes(p, true))
        );
    }
    if s.cluster_cost.is_some() && !clustered {
        return Err(Error::setting(
            "cluster_cost",
            "prices the clusters of an audit read with its cluster column (the cluster setting)",
        ));
    }
    let costs = match &panel {
        Some(p) => plan_costs(ledger, prices, p, unit, s.search_price, given)?,
        None => given.map_or(PlanCosts::None, PlanCosts::Given),
    };
    if clustered {
        return plan_clustered(
            s,
            &goal,
            unit,
            &read,
            panel.as_ref(),
            &costs,
            bounds,
            shares,
        )
        .map(|report| {
            let inputs = match (audit, components) {
                (Some(a), _) => source_input(Inputs::new(), "audit", a),
                (None, Some(c)) => source_input(Inputs::new(), "components", c),
                (None, None) => Inputs::new(),
            };
            let inputs =
                source_input_opt(source_input_opt(inputs, "ledger", ledger), "prices", prices);
            let mut done = Finished::new("plan", inputs, report);
            if let Some(p) = &panel {
                done = done.with_notes_after(s.panel.loading_notes(p, true));
            }
            done
        });
    }
    // The engine resamples only an audit panel; a components document plans without one.
    let (resampling, engine): (Resampling, Box<dyn ResampleBackend>) = match &panel {
        Some(p) => {
            let r = s.resample.resampling()?;
            let draws =
                u64::from(r.replicates) * p.strata.iter().map(|s| s.q() as u64).sum::<u64>();
            (r, engines.resampler(s.resample.backend, draws)?)
        }
        None => {
            s.resample.check_confidence()?;
            let r = Resampling {
                seed: s.resample.seed,
                replicates: s.resample.replicates,
                confidence: s.resample.confidence,
            };
            (r, Box::new(CpuBackend::new()))
        }
    };
    let job = PlanJob {
        goal,
        unit: unit.unit().into(),
        alpha: s.alpha,
        power: s.power,
        difference: s.difference,
        shares,
        bounds,
        runners_up: s.runners_up,
        resampling,
        question_cost: s.question_cost,
    };
    let total = u64::from(resampling.replicates);
    let mut report = plan_of(&read, panel.as_ref(), &costs, &job, engine.as_ref(), &|d| {
        progress("plan", d, total)
    })?;
    report.ledger = ledger.map(|l| l.name().to_path_buf());
    let inputs = match (audit, components) {
        (Some(a), _) => source_input(Inputs::new(), "audit", a),
        (None, Some(c)) => source_input(Inputs::new(), "components", c),
        (None, None) => Inputs::new(),
    };
    let inputs = source_input_opt(source_input_opt(inputs, "ledger", ledger), "prices", prices);
    let notes = report.notes.clone();
    let mut done = Finished::new("plan", inputs, report).with_csv_notes(&notes);
    if let Some(p) = &panel {
        done = done.with_notes_after(s.panel.loading_notes(p, true));
        done.unpaired_cells = unpaired_cells(p);
    }
    Ok(done)
}

/// The cheapest labels n and Q:T:R for a judged audit `panel` with `labels`
/// ([`crate::judges::plan`]): the goal must be a target SE or an MDE, and a label cost given.
///
/// # Errors
/// [`Error::Setting`] naming `label_cost` when it is missing; [`Error::Usage`] for a budget
/// or a given design; those of [`label_plan`].
#[allow(clippy::too_many_arguments)]
fn plan_with_labels(
    s: &PlanSettings,
    goal: &PlanGoal,
    unit: CostUnit,
    audit: &Audit,
    panel: &crate::panel::Panel,
    labels: &Source,
    costs: &PlanCosts,
    bounds: crate::allocation::planner::Bounds,
    shares: Option<Vec<(String, usize)>>,
) -> Result<crate::judges::plan::LabelPlanReport> {
    let Some(label_cost) = s.label_cost else {
        return Err(Error::setting(
            "label_cost",
            "labels in the plan need the cost of one label (one labelled question's human \
             score) in the plan's unit, e.g. 0.5 in dollars or 20000 in tokens",
        ));
    };
    let PlanGoal::TargetSe { se, from_mde } = *goal else {
        return Err(Error::Usage(
            "with labels, plan finds the cheapest labels and Q:T:R for a target SE or an MDE; \
             a budget or a given design is not planned with labels yet"
                .into(),
        ));
    };
    label_plan(
        panel,
        audit,
        &s.panel,
        labels,
        &s.judged,
        &LabelPricing {
            costs,
            question_cost: s.question_cost,
            label_cost,
            min_labels: s.min_labels,
            shares: shares.as_deref(),
            bounds,
            unit: unit.unit(),
        },
        se,
        from_mde,
        s.runners_up,
    )
}

/// The cheapest G×M:T:R design for a clustered audit
/// ([`crate::allocation::cluster_plan::plan_clusters`]): the goal must be a target SE or
/// an MDE; G is bounded by `max_questions`, M by `max_per_cluster`.
///
/// # Errors
/// [`Error::Usage`] for a budget or a given design (forecast a clustered design with
/// `stats forecast` instead), or unit costs that cannot price the plan.
#[allow(clippy::too_many_arguments)]
fn plan_clustered(
    s: &PlanSettings,
    goal: &PlanGoal,
    unit: CostUnit,
    audit: &Audit,
    panel: Option<&crate::panel::Panel>,
    costs: &PlanCosts,
    bounds: crate::allocation::planner::Bounds,
    shares: Option<Vec<(String, usize)>>,
) -> Result<crate::allocation::cluster_plan::ClusterPlanReport> {
    use crate::allocation::cluster_plan::{plan_clusters, ClusterPlanJob};
    let PlanGoal::TargetSe { se, from_mde } = *goal else {
        return Err(Error::Usage(
            "with clusters, plan finds the cheapest G×M:T:R design for a target SE or an MDE; \
             forecast a given clustered design GxM:T:R instead"
                .into(),
        ));
    };
    let planner = crate::allocation::planner_report::planner(
        audit,
        panel,
        costs,
        s.question_cost,
        shares.as_deref(),
        bounds,
    )?;
    let job = ClusterPlanJob {
        target_se: se,
        from_mde,
        cluster_cost: s.cluster_cost.unwrap_or(0.0),
        max_clusters: bounds.max_questions,
        max_per_cluster: s.max_per_cluster,
        max_trajectories: bounds.max_trajectories,
        max_reads: bounds.max_reads,
        runners_up: s.runners_up,
    };
    plan_clusters(audit, &planner, unit.unit(), &job)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyses::test_support::{demo, setting_of};
    use crate::analyses::CpuEngines;

    fn settings() -> PlanSettings {
        PlanSettings {
            panel: PanelSettings {
                contrast: Some("adaptive-open".into()),
                ..Default::default()
            },
            resample: ResampleSettings {
                replicates: 20,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn run(s: &PlanSettings, ledger: bool) -> Result<Finished> {
        let l = demo("ledger.jsonl");
        plan(
            Some(&demo("panel.csv")),
            None,
            None,
            ledger.then_some(&l),
            None,
            s,
            &CpuEngines,
            &|_, _, _| {},
        )
    }

    #[test]
    fn the_settings_are_checked_in_their_own_words() {
        let s = PlanSettings {
            mde: Some(0.02),
            shares: Some(Shares::Text("hotpotqa".into())),
            ..settings()
        };
        assert_eq!(
            setting_of(run(&s, true)),
            (
                "shares",
                "'hotpotqa' is not name=W (e.g. hotpotqa=1,musique=1)".to_string()
            )
        );
        let s = PlanSettings {
            budget_tokens: Some(1e6),
            currency: Some(CostUnit::Usd),
            ..settings()
        };
        assert_eq!(setting_of(run(&s, true)).0, "currency");
        let s = PlanSettings {
            mde: Some(0.02),
            alpha: 1.5,
            ..settings()
        };
        assert_eq!(
            setting_of(run(&s, true)),
            (
                "alpha",
                "1.5 must be between 0 and 1 (exclusive), e.g. 0.05".to_string()
            )
        );
        let s = PlanSettings {
            mde: Some(0.02),
            unit_costs: Some(GivenUnitCosts::Text("3,x".into())),
            ..settings()
        };
        assert_eq!(setting_of(run(&s, false)).0, "unit_costs");
        let s = PlanSettings {
            questions: Some(10),
            ..settings()
        };
        assert_eq!(setting_of(run(&s, true)).0, "trajectories");
        assert!(matches!(run(&settings(), true), Err(Error::Usage(_))));
    }

    #[test]
    fn shares_and_unit_costs_read_text_and_their_structured_forms() {
        let s: PlanSettings = serde_json::from_str(
            r#"{"shares": {"a": 1, "b": 2}, "unit_costs": [3, 1, 0.5], "max_reads": 4}"#,
        )
        .unwrap();
        assert_eq!(
            s.shares.unwrap().pairs().unwrap(),
            [("a".to_string(), 1), ("b".to_string(), 2)]
        );
        let c = s.unit_costs.unwrap().costs().unwrap();
        assert_eq!((c.trajectory, c.first_read, c.read), (3.0, 1.0, 0.5));
        assert_eq!(s.bounds.max_reads, 4);
        assert_eq!(
            Shares::Text("a=0".into()).pairs().unwrap_err().to_string(),
            "shares: the weight of 'a' must be a positive integer, got '0'"
        );
    }

    #[test]
    fn a_given_design_from_the_ledger_is_planned() {
        let s = PlanSettings {
            questions: Some(446),
            trajectories: Some(2),
            reads: Some(1),
            ..settings()
        };
        let doc = run(&s, true).unwrap().document();
        assert_eq!(doc["goal"]["kind"], "design");
        assert_eq!(doc["allocations"].as_array().unwrap().len(), 1);
        assert_eq!(
            doc["run"]["inputs"]["ledger"],
            demo("ledger.jsonl").name().display().to_string()
        );
    }
}
