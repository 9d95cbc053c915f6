//! `stats efficiency` as one library call: the one-read analysis ([`super::one_read`]) of a
//! panel priced from its cost ledger ([`efficiency_of_panel`]), and why each undefined value
//! of its report is undefined ([`OneReadReport::undefined`]).

use super::one_read::{analyse, analyse_unbalanced, OneReadReport, ScopeResult};
use crate::costs::accounting::{Budget, PricedLedger};
use crate::costs::panel_costs::{balanced_panel_costs, panel_trajectory_costs};
use crate::panel::Panel;
use crate::resample::engine::ResampleBackend;
use crate::resample::Resampling;
use crate::table::{format_number, Precision};
use crate::Result;

/// Settings of [`efficiency_of_panel`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EfficiencySettings {
    /// What the budget is counted in.
    pub budget: Budget,
    /// The largest read count R the fixed-T loss minimises over (from 1).
    pub max_reads: u32,
    /// The question bootstrap: seed, replicates and the confidence of the central
    /// percentile intervals.
    pub resampling: Resampling,
}

/// The one-read efficiency analysis of `panel` with its costs from `ledger` in
/// `settings.budget` (with one selector analysed, only the rows it pays for).
///
/// A balanced panel is priced per question at its full design, with its one-read (read 0)
/// and two-read (reads 0 and 1) reader costs as billed, and analysed by the sums-based
/// [`analyse`] (bit for bit as before unbalanced panels were accepted); an unbalanced one
/// is priced trajectory by trajectory as it is and analysed by [`analyse_unbalanced`]
/// (REML components, mean design).
///
/// # Errors
/// [`crate::Error::Usage`] for dollars without prices; [`crate::Error::Input`] naming the
/// ledger when it does not describe the panel's cells; the analyses' errors.
pub fn efficiency_of_panel(
    panel: &Panel,
    ledger: &PricedLedger<'_>,
    settings: &EfficiencySettings,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let cells = ledger.cell_costs(panel.selector.as_deref(), settings.budget)?;
    let EfficiencySettings {
        max_reads,
        ref resampling,
        ..
    } = *settings;
    if panel.strata.iter().all(|s| s.is_balanced()) {
        let (costs, read_costs) = balanced_panel_costs(panel, &cells, ledger.path)?;
        analyse(
            &panel.strata,
            &costs,
            &read_costs,
            resampling,
            max_reads,
            backend,
            progress,
        )
    } else {
        let costs = panel_trajectory_costs(panel, &cells, ledger.path)?;
        analyse_unbalanced(panel, &costs, resampling, max_reads, backend, progress)
    }
}

/// One value of a [`OneReadReport`] that is undefined (`null` or missing in JSON), and why.
#[derive(Debug, Clone, PartialEq)]
pub struct UndefinedValue {
    /// A stratum's name, `pooled` or `combined`.
    pub scope: String,
    /// The JSON field that is `null` (or missing) because of it, e.g. `fixed_t.r_star`.
    pub field: &'static str,
    pub reason: String,
}

/// A number as the reasons show it (the tables' default precision).
fn num(v: f64) -> String {
    format_number(v, Precision::Auto)
}

/// Why a scope's losses are undefined when J = SE² × cost cannot be formed: the scores do
/// not vary, c_R is not positive, or J(1) is not positive.
fn loss_reason(s: &ScopeResult) -> String {
    let c = &s.components;
    let total = c.question + c.trajectory.unwrap_or(0.0) + c.read.unwrap_or(0.0);
    if total == 0.0 {
        "the scores do not vary (every variance component is 0), so SE^2 x cost is 0 at every R and the loss is 0/0".into()
    } else if s.unit_costs.read.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        format!(
            "c_R is {}, so reads cost nothing to trade against questions",
            num(s.unit_costs.read)
        )
    } else {
        "SE^2 x cost at R = 1 is not positive (the truncated components sum to 0)".into()
    }
}

/// Why R* = sqrt(σ²_read c_T / (σ²_traj c_R)) is not finite: it is unbounded when the
/// trajectory component is not positive (or not estimable), or when c_R is 0.
fn r_star_reason(s: &ScopeResult) -> String {
    match s.components.trajectory {
        Some(t) if t <= 0.0 => format!(
            "the trajectory component is {} (not positive), so more reads always beat more trajectories and R* is unbounded",
            num(t)
        ),
        None => "the panel has one trajectory per question, so the trajectory component is not estimable".into(),
        _ => "c_R is 0, so R* is unbounded".into(),
    }
}

impl OneReadReport {
    /// The strata, then the pooled fit if there is one.
    pub fn scopes(&self) -> impl Iterator<Item = &ScopeResult> {
        self.strata.iter().chain(self.pooled.iter())
    }

    /// Every undefined value of the report with its reason, in table order: each stratum's
    /// fixed-T loss (or its R*_T), the combination's, then each scope's fixed-Q loss and R*.
    pub fn undefined(&self) -> Vec<UndefinedValue> {
        let mut notes = Vec::new();
        let mut note = |scope: &str, field, reason| {
            notes.push(UndefinedValue {
                scope: scope.to_string(),
                field,
                reason,
            })
        };
        for s in &self.strata {
            match &s.fixed_t {
                None => note(&s.name, "fixed_t", loss_reason(s)),
                Some(e) if !e.r_star.is_finite() => {
                    note(&s.name, "fixed_t.r_star", r_star_reason(s))
                }
                Some(_) => {}
            }
        }
        if self.combined.fixed_t.is_none() {
            let bad: Vec<&str> = self
                .strata
                .iter()
                .filter(|s| s.fixed_t.is_none())
                .map(|s| s.name.as_str())
                .collect();
            note(
                "combined",
                "fixed_t",
                if bad.is_empty() {
                    "SE^2 x cost of the combination is not positive at R = 1".into()
                } else {
                    format!("the loss is undefined in {}", bad.join(", "))
                },
            );
        }
        for s in self.scopes() {
            match &s.efficiency {
                None => note(&s.name, "efficiency", loss_reason(s)),
                Some(e) => {
                    if !e.loss_percent.is_finite() {
                        note(&s.name, "efficiency.loss_percent", loss_reason(s));
                    }
                    if !e.r_star.is_finite() {
                        note(&s.name, "efficiency.r_star", r_star_reason(s));
                    }
                }
            }
        }
        notes
    }
}

/// Why the direct check's variance × cost ratio (one read over two) is undefined: both SEs
/// are 0 (0/0), or the two-read variance × cost is 0.
pub fn direct_ratio_reason(se_one: f64, se_two: f64) -> String {
    if se_one == 0.0 && se_two == 0.0 {
        "both SEs are 0 (the scores do not vary), so the ratio is 0/0".into()
    } else {
        "the two-read variance x cost is 0".into()
    }
}
