//! Labels priced into the plan: the measured pieces of [`crate::judges::plan`] from a judged
//! audit panel, its labels and its unit costs — what `plan` with labels and `compare`'s
//! next step with labels and a ledger both run.

use super::labels::{labelled_units, LabelSettings};
use crate::allocation::planner::Bounds;
use crate::allocation::planner_report::{planner, PlanCosts};
use crate::components::forecast::Audit;
use crate::import::PanelSettings;
use crate::judges::estimate::ppi_report;
use crate::judges::plan::{plan_labels, LabelPlanJob, LabelPlanReport, LabelPlanner};
use crate::ledger::check_price;
use crate::panel::{Panel, Source};
use crate::{Error, Result};

/// What a label plan prices and searches with.
pub(crate) struct LabelPricing<'a> {
    /// The audit's questions' unit costs (ledger or given).
    pub costs: &'a PlanCosts,
    /// c_Q.
    pub question_cost: f64,
    /// The cost of one label, checked by [`checked_label_cost`].
    pub label_cost: f64,
    /// The fewest labels per stratum.
    pub min_labels: usize,
    pub shares: Option<&'a [(String, usize)]>,
    pub bounds: Bounds,
    /// The cost unit's name.
    pub unit: &'a str,
}

/// The label cost, a price: finite and non-negative.
///
/// # Errors
/// [`Error::Setting`] naming `label_cost`.
pub(crate) fn checked_label_cost(v: f64) -> Result<f64> {
    check_price("the label cost", v).map_err(|m| Error::setting("label_cost", m))
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
    report
        .notes
        .extend(pairing.iter().map(|n| n.trim_start_matches("note: ").to_string()));
    Ok(report)
}
