//! Labels priced into the plan: the measured pieces of [`crate::judges::plan`] from a judged
//! audit panel, its labels and its unit costs — what `plan` with labels and `compare`'s
//! next step with labels and a ledger both run.

use super::labels::{labelled_units, LabelSettings};
use super::priced::plan_costs;
use super::CompareSettings;
use crate::allocation::planner::Bounds;
use crate::allocation::planner_report::{planner, PlanCosts};
use crate::compare::report::PlannedTest;
use crate::components::forecast::Audit;
use crate::components::variance::analyse_panel;
use crate::import::Balance;
use crate::import::PanelSettings;
use crate::judges::compare::{PpiCompareReport, PpiNextStep, PpiPair};
use crate::judges::estimate::ppi_report;
use crate::judges::plan::{plan_labels, LabelPlanJob, LabelPlanReport, LabelPlanner};
use crate::ledger::check_price;
use crate::panel::{Panel, Source};
use crate::resample::summary::normal_quantile;
use crate::table::{format_number, Precision};
use crate::{Error, Result};

/// What a label plan prices and searches with.
pub(crate) struct LabelPricing<'a> {
    /// The audit's questions' unit costs (ledger or given).
    pub costs: &'a PlanCosts,
    /// c_Q.
    pub question_cost: f64,
    /// The cost of one label, checked by [`check_label_pricing`].
    pub label_cost: f64,
    /// The fewest labels per stratum.
    pub min_labels: usize,
    pub shares: Option<&'a [(String, usize)]>,
    pub bounds: Bounds,
    /// The cost unit's name.
    pub unit: &'a str,
}

/// Checks the settings that price labels, in `plan` and in `compare`'s next step: the label
/// cost, where given, is a price (finite and non-negative), and every stratum keeps at
/// least 2 labels (the rectifier's variance needs them).
///
/// # Errors
/// [`Error::Setting`] naming `label_cost` or `min_labels`.
pub(crate) fn check_label_pricing(label_cost: Option<f64>, min_labels: usize) -> Result<()> {
    if let Some(c) = label_cost {
        check_price("the label cost", c).map_err(|m| Error::setting("label_cost", m))?;
    }
    if min_labels < 2 {
        return Err(Error::setting(
            "min_labels",
            format!("{min_labels}: a stratum needs at least 2 labels (the rectifier's variance)"),
        ));
    }
    Ok(())
}

/// The cheapest labels n and Q:T:R reaching `target_se` (from an MDE `from_mde`, if so) for
/// the judged audit `panel` (read with `panel_settings`; its components `audit`) with the
/// labels `labels`, priced as `pricing` says.
///
/// # Errors
/// Those of pairing the labels, of the planner's unit costs, and [`Error::Data`] for a
/// stratum with fewer than 2 labelled questions.
#[allow(clippy::too_many_arguments)]
pub(crate) fn label_plan(
    panel: &Panel,
    audit: &Audit,
    panel_settings: &PanelSettings,
    labels: &Source,
    judged: &LabelSettings,
    pricing: &LabelPricing<'_>,
    target_se: f64,
    from_mde: Option<f64>,
    runners_up: usize,
) -> Result<LabelPlanReport> {
    judged.check()?;
    let (units, metric, pairing) = labelled_units(
        panel,
        labels,
        panel_settings,
        judged.label_metric.as_deref(),
    )?;
    let name = labels.name().display().to_string();
    let measured = ppi_report(
        &panel.outcome,
        &name,
        &metric,
        &units,
        &panel.stratum_weights(),
        judged.ppi_lambda,
        0.95,
    )?;
    let questions = planner(
        audit,
        Some(panel),
        pricing.costs,
        pricing.question_cost,
        pricing.shares,
        pricing.bounds,
    )?;
    let labelled = LabelPlanner::new(
        &questions,
        &units,
        pricing.label_cost,
        judged.ppi_lambda,
        pricing.min_labels,
    )?;
    let mut report = plan_labels(
        &labelled,
        &LabelPlanJob {
            target_se,
            from_mde,
            unit: pricing.unit.to_string(),
            labels: name,
            label_metric: metric,
            runners_up,
            se_measured: measured.se,
        },
    );
    // Pairing notes carry their own prefix; the plan's view adds one.
    report.notes.extend(
        pairing
            .iter()
            .map(|n| n.trim_start_matches("note: ").to_string()),
    );
    Ok(report)
}

/// The next step of `compare` with labels and a ledger: the closest unresolved pair of
/// `report` (largest |z| among the pairs whose Holm-adjusted p exceeds α = 1 − confidence)
/// and the cheapest labels n and Q:T:R whose PPI++ SE of its paired difference reaches
/// s₁ = |d̂| / (c + z_power), c = z_{1−α/(2m)} (Holm's first step over the family's m
/// pairs, as `compare`'s own next step plans), priced from `ledger` (and `prices`) with
/// one label at `label_cost`. The pair's panel is `panel` read as the contrast b − a.
///
/// # Errors
/// Those of loading the pair's panel, reading the ledger and prices, and of [`label_plan`]
/// (a search without a design is no error: `plan_undefined` says why).
pub(crate) fn ppi_next_step(
    report: &PpiCompareReport,
    panel: &Source,
    labels: &Source,
    ledger: &Source,
    prices: Option<&Source>,
    settings: &CompareSettings,
    label_cost: f64,
) -> Result<(Option<PpiNextStep>, Option<String>)> {
    let alpha = 1.0 - report.confidence;
    let m = report.pairs.len().max(1);
    let open: Vec<&PpiPair> = report.pairs.iter().filter(|p| p.p_holm > alpha).collect();
    if open.is_empty() {
        return Ok((None, Some("every pair of the family is resolved".into())));
    }
    let Some(p) = open
        .iter()
        .filter(|p| p.se > 0.0 && p.estimate != 0.0)
        .max_by(|x, y| {
            (x.estimate / x.se)
                .abs()
                .total_cmp(&(y.estimate / y.se).abs())
        })
    else {
        return Ok((
            None,
            Some("every unresolved pair has a zero difference or a zero SE".into()),
        ));
    };
    let c = normal_quantile(1.0 - alpha / (2.0 * m as f64));
    let planned = PlannedTest::holm_first_step(m, alpha, c);
    let target_se = p.estimate.abs() / (c + normal_quantile(settings.power));
    // The pair's panel and its judge components, as `variance --contrast b-a` reads them.
    let ps = PanelSettings {
        arm: None,
        contrast: Some(format!("{}-{}", p.b, p.a)),
        ..settings.panel.clone()
    };
    let loaded = ps.load(panel, Balance::Fitted)?;
    let audit = Audit::from_report(&analyse_panel(&loaded)?);
    let unit = settings.currency.unwrap_or_default();
    let costs = plan_costs(
        Some(ledger),
        prices,
        &loaded,
        unit,
        settings.search_price,
        None,
    )?;
    let planned_labels = label_plan(
        &loaded,
        &audit,
        &ps,
        labels,
        &settings.judged,
        &LabelPricing {
            costs: &costs,
            question_cost: settings.question_cost,
            label_cost,
            min_labels: settings.min_labels,
            shares: None,
            bounds: settings.bounds.bounds()?,
            unit: unit.unit(),
        },
        target_se,
        None,
        0,
    )?;
    let num = |v: f64| format_number(v, Precision::Auto);
    let z = (p.estimate / p.se).abs();
    let mut text = format!(
        "The closest unresolved pair is {b} − {a}: {est:.4} (SE {se:.4}, z = {z:.2}; \
         Holm-adjusted p = {ph:.3}). Planned for {test}, critical value {c:.3}: if the \
         difference is really {est:.4}, resolving it with {pw:.0}% power needs the PPI++ SE \
         {target_se:.4}.",
        a = p.a,
        b = p.b,
        est = p.estimate,
        se = p.se,
        ph = p.p_holm,
        test = planned.name,
        pw = 100.0 * settings.power,
    );
    let design = planned_labels.designs.first().cloned();
    let why = match &design {
        Some(d) => {
            text.push_str(&format!(
                " With the ledger's unit costs and a label at {lc} {u}, the cheapest design \
                 that does it labels {n} of Q:T:R = {q}:{t}:{r} (SE {se:.4}), costing {cost} \
                 {u}, of which {labels} for the labels (`stats plan`'s search with labels).",
                lc = format_number(label_cost, Precision::Shortest),
                u = unit.unit(),
                n = d.labels,
                q = d.questions,
                t = d.trajectories,
                r = d.reads,
                se = d.se,
                cost = num(d.cost),
                labels = num(d.labels_cost),
            ));
            None
        }
        None => {
            let why = planned_labels
                .notes
                .first()
                .cloned()
                .unwrap_or_else(|| "no design within the bounds".into());
            text.push_str(&format!(" With the ledger's costs: {why}."));
            Some(why)
        }
    };
    Ok((
        Some(PpiNextStep {
            a: p.a.clone(),
            b: p.b.clone(),
            estimate: p.estimate,
            se: p.se,
            power: settings.power,
            test: planned.name,
            critical_value: c,
            target_se,
            plan: design,
            plan_undefined: why,
            currency: unit.unit().to_string(),
            label_cost,
            text,
        }),
        None,
    ))
}
