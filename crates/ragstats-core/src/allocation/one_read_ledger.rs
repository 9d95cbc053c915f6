//! `stats efficiency` as one library call: the one-read analysis ([`super::one_read`]) of a
//! panel priced from its cost ledger ([`efficiency_of_panel`]; with its currency and engine,
//! [`efficiency_report`]), and why each undefined value of its report is undefined
//! ([`OneReadReport::undefined`]).

use serde::Serialize;

use super::bootstrap_engine;
use super::one_read::{analyse, analyse_clustered, analyse_unbalanced, OneReadReport, ScopeResult};
use crate::bootstrap::analysis::panel_cluster_draw;
use crate::bootstrap::report::few_clusters_note;
use crate::costs::accounting::{Budget, PricedLedger};
use crate::costs::panel_costs::{absent_cells, balanced_panel_costs, panel_trajectory_costs};
use crate::document::{Engine, Report};
use crate::panel::Panel;
use crate::resample::engine::ResampleBackend;
use crate::resample::Resampling;
use crate::table::{format_number, Precision};
use crate::{Error, Result};

/// Settings of [`efficiency_of_panel`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EfficiencyJob {
    /// What the budget is counted in.
    pub budget: Budget,
    /// The largest read count R the fixed-T loss minimises over (from 1).
    pub max_reads: u32,
    /// The question bootstrap: seed, replicates and the confidence of the central
    /// percentile intervals.
    pub resampling: Resampling,
    /// c_Q, a cost per question in the budget's unit (judging, annotation, set-up); it
    /// enters the fixed-T loss only (at fixed Q it is spent whatever R is).
    pub question_cost: f64,
}

/// The one-read efficiency analysis of `panel` with its costs from `ledger` in
/// `settings.budget` (with one selector analysed, only the rows it pays for).
///
/// A balanced panel is priced per question at its full design, with its one-read (read 0)
/// and two-read (reads 0 and 1) reader costs as billed, and analysed by the sums-based
/// [`analyse`] (bit for bit as before unbalanced panels were accepted); an unbalanced one
/// is priced trajectory by trajectory as it is and analysed by [`analyse_unbalanced`]
/// (REML components, mean design). A constant outcome's report warns first that its
/// zero-width intervals say nothing about precision
/// ([`crate::resample::summary::NO_SPREAD_NOTE`]).
///
/// # Errors
/// [`crate::Error::Usage`] for dollars without prices; [`crate::Error::Input`] naming the
/// ledger when it does not describe the panel's cells; the analyses' errors.
pub fn efficiency_of_panel(
    panel: &Panel,
    ledger: &PricedLedger<'_>,
    settings: &EfficiencyJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let cells = ledger.cell_costs(panel.selector.as_deref(), settings.budget)?;
    let EfficiencyJob {
        max_reads,
        ref resampling,
        question_cost,
        ..
    } = *settings;
    let clusters = panel_cluster_draw(panel)?;
    let balanced = panel.strata.iter().all(|s| s.is_balanced());
    let mut report = if let (Some(draw), true) = (&clusters, balanced) {
        let (costs, read_costs) = balanced_panel_costs(panel, &cells, ledger.path)?;
        analyse_clustered(
            &panel.strata,
            &panel.weights,
            &costs,
            &read_costs,
            draw,
            resampling,
            max_reads,
            question_cost,
            backend,
            progress,
        )?
    } else if balanced {
        let (costs, read_costs) = balanced_panel_costs(panel, &cells, ledger.path)?;
        analyse(
            &panel.strata,
            &panel.weights,
            &costs,
            &read_costs,
            resampling,
            max_reads,
            question_cost,
            backend,
            progress,
        )?
    } else {
        let costs = panel_trajectory_costs(panel, &cells, ledger.path)?;
        if let Some(draw) = &clusters {
            // As analyse_clustered: every stratum needs 2 clusters to draw from.
            for (c, s) in draw.strata().iter().zip(&panel.strata) {
                if c.count() < 2 {
                    return Err(Error::setting(
                        "cluster",
                        format!(
                            "stratum '{}' has {} cluster; the cluster bootstrap needs at least \
                             2 clusters in every stratum",
                            s.name,
                            c.count()
                        ),
                    ));
                }
            }
        }
        let mut r = analyse_unbalanced(
            panel,
            &costs,
            clusters.as_ref(),
            resampling,
            max_reads,
            question_cost,
            backend,
            progress,
        )?;
        r.clusters = clusters.as_ref().map(|d| d.counts());
        r
    };
    report.absent_rows = absent_cells(panel, &cells).rows;
    report.note_warnings();
    if let Some(g) = &report.clusters {
        report.warnings.extend(few_clusters_note(g));
        if report.direct.is_some() {
            report.warnings.push(DIRECT_CHECK_CLUSTER_NOTE.to_string());
        }
    } else if report.direct.is_some() {
        report.warnings.push(DIRECT_CHECK_NOTE.to_string());
    }
    if panel.outcome_is_constant() {
        // First: the bootstrap intervals of a constant outcome have no width to read.
        report
            .warnings
            .insert(0, crate::resample::summary::NO_SPREAD_NOTE.to_string());
    }
    Ok(report)
}

/// What `efficiency --cluster` says of its direct check's interval: measured short at every
/// size simulated (docs/COVERAGE.md, "Cluster bootstrap").
pub const DIRECT_CHECK_CLUSTER_NOTE: &str = "the direct check's interval, drawn by clusters, \
    covered 0.907-0.920 at 95% in simulation (2 strata of 6 to 24 clusters of 4 questions; \
    docs/COVERAGE.md, \"Cluster bootstrap\"): read it as somewhat too narrow";

/// What `efficiency` (questions drawn, no clusters) says of its direct check's interval:
/// measured short without clusters too (docs/COVERAGE.md, "`efficiency --cluster`: the
/// direct check", the rows at G = 96, M = 1).
pub const DIRECT_CHECK_NOTE: &str = "the direct check's interval covered 0.926 ± 0.012 at 95% \
    in simulation (2 strata of 96 questions, T = R = 2; docs/COVERAGE.md, \"Cluster \
    bootstrap\"): read it as somewhat too narrow";

/// The `stats efficiency` report: the one-read analysis ([`efficiency_of_panel`]) in its
/// currency, with the engine its bootstrap ran on. Its serialization is the document's
/// body (`docs/json.md`, `efficiency`): `currency` beside the analysis's own fields.
#[derive(Debug, Clone, Serialize)]
pub struct EfficiencyReport {
    /// The budget's unit: `tokens` or `USD`.
    pub currency: &'static str,
    #[serde(flatten)]
    pub analysis: OneReadReport,
    /// The question bootstrap's backend, adapter, replicates, seed and confidence (in the
    /// document's `run`, not its body).
    #[serde(skip)]
    pub engine: Engine,
}

impl Report for EfficiencyReport {
    fn engine(&self) -> Engine {
        self.engine.clone()
    }
}

/// [`efficiency_of_panel`] with its currency and engine: the report `stats efficiency`
/// prints.
///
/// # Errors
/// Those of [`efficiency_of_panel`].
pub fn efficiency_report(
    panel: &Panel,
    ledger: &PricedLedger<'_>,
    settings: &EfficiencyJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<EfficiencyReport> {
    Ok(EfficiencyReport {
        currency: settings.budget.unit(),
        analysis: efficiency_of_panel(panel, ledger, settings, backend, progress)?,
        engine: bootstrap_engine(backend, &settings.resampling),
    })
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

/// Why a stratum's fixed-T loss is undefined (field `fixed_t`), or its R*_T
/// (`fixed_t.r_star`), if either is.
fn fixed_t_reason(s: &ScopeResult) -> Option<(&'static str, String)> {
    match &s.fixed_t {
        None => Some(("fixed_t", loss_reason(s))),
        Some(e) if !e.r_star.is_finite() => Some(("fixed_t.r_star", r_star_reason(s))),
        Some(_) => None,
    }
}

/// Why a scope's fixed-Q loss is undefined (field `efficiency`), or its loss percent and
/// R* (`efficiency.loss_percent`, `efficiency.r_star`), in that order.
fn fixed_q_reasons(s: &ScopeResult) -> Vec<(&'static str, String)> {
    match &s.efficiency {
        None => vec![("efficiency", loss_reason(s))],
        Some(e) => {
            let mut out = Vec::new();
            if !e.loss_percent.is_finite() {
                out.push(("efficiency.loss_percent", loss_reason(s)));
            }
            if !e.r_star.is_finite() {
                out.push(("efficiency.r_star", r_star_reason(s)));
            }
            out
        }
    }
}

impl OneReadReport {
    /// The strata, then the pooled fit if there is one.
    pub fn scopes(&self) -> impl Iterator<Item = &ScopeResult> {
        self.strata.iter().chain(self.pooled.iter())
    }

    /// Why the combination's fixed-T loss is undefined, if it is: the strata where it is
    /// undefined, or a combination whose SE² × cost is not positive.
    fn combined_reason(&self) -> Option<String> {
        self.combined.fixed_t.is_none().then(|| {
            let bad: Vec<&str> = self
                .strata
                .iter()
                .filter(|s| s.fixed_t.is_none())
                .map(|s| s.name.as_str())
                .collect();
            if bad.is_empty() {
                "SE^2 x cost of the combination is not positive at R = 1".into()
            } else {
                format!("the loss is undefined in {}", bad.join(", "))
            }
        })
    }

    /// Every undefined value of the report with its reason, in table order: each stratum's
    /// fixed-T loss (or its R*_T), the combination's, then each scope's fixed-Q loss and R*.
    pub fn undefined(&self) -> Vec<UndefinedValue> {
        let note = |scope: &str, (field, reason): (&'static str, String)| UndefinedValue {
            scope: scope.to_string(),
            field,
            reason,
        };
        let mut notes: Vec<UndefinedValue> = self
            .strata
            .iter()
            .filter_map(|s| fixed_t_reason(s).map(|r| note(&s.name, r)))
            .collect();
        if let Some(why) = self.combined_reason() {
            notes.push(note("combined", ("fixed_t", why)));
        }
        for s in self.scopes() {
            notes.extend(fixed_q_reasons(s).into_iter().map(|r| note(&s.name, r)));
        }
        notes
    }

    /// Writes the reasons of [`OneReadReport::undefined`] into each scope's `undefined`
    /// (and the combination's), and the direct check's when its ratio is not finite
    /// ([`direct_ratio_reason`]), so the report's serialization says why each `null` is.
    pub(super) fn note_undefined(&mut self) {
        for s in &mut self.strata {
            let reasons: Vec<_> = fixed_t_reason(s)
                .into_iter()
                .chain(fixed_q_reasons(s))
                .collect();
            s.undefined.extend(reasons);
        }
        if let Some(p) = &mut self.pooled {
            let reasons = fixed_q_reasons(p);
            p.undefined.extend(reasons);
        }
        if let Some(why) = self.combined_reason() {
            self.combined.undefined.insert("fixed_t", why);
        }
        if let Some(d) = &mut self.direct {
            if !d.ratio.is_finite() {
                let why = direct_ratio_reason(d.se_one_read, d.se_two_reads);
                d.undefined.insert("ratio", why);
            }
        }
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::{json, Value};

    use super::*;
    use crate::document::{document, Inputs};
    use crate::ledger::{CallKind, Entry, LedgerRow};
    use crate::panel::Stratum;
    use crate::resample::CpuBackend;

    /// One stratum `d` of 4 questions × 2 trajectories × 2 reads, every score 0.5, and its
    /// ledger: one 100-token planner call per trajectory and one 50-token reader call per
    /// read.
    fn constant_panel() -> (Panel, Vec<Entry>) {
        let stratum = Stratum {
            name: "d".into(),
            questions: (0..4).map(|q| format!("q{q}")).collect(),
            trajectories: vec!["0".into(), "1".into()],
            reads: vec!["0".into(), "1".into()],
            y: vec![0.5; 16],
            ..Stratum::default()
        };
        let panel = Panel {
            notes: Vec::new(),
            weights: Vec::new(),
            source: PathBuf::from("p.csv"),
            metric: "f1".into(),
            outcome: "f1".into(),
            selectors: Vec::new(),
            selector: None,
            strata: vec![stratum],
        };
        let mut entries = Vec::new();
        for q in 0..4 {
            for t in 0..2u32 {
                let cell = |kind, read: Option<u32>, tokens| LedgerRow {
                    dataset: Some("d".into()),
                    question: Some(format!("q{q}").into()),
                    trajectory: Some(t.into()),
                    read: read.map(Into::into),
                    model: Some("m".into()),
                    input_tokens: Some(tokens),
                    output_tokens: Some(0),
                    ..LedgerRow::new(kind)
                };
                entries.push(cell(CallKind::Planner, None, 100));
                for r in 0..2u32 {
                    entries.push(cell(CallKind::Reader, Some(r), 50));
                }
            }
        }
        let entries = entries
            .into_iter()
            .enumerate()
            .map(|(i, row)| Entry {
                line: i as u64 + 1,
                row,
            })
            .collect();
        (panel, entries)
    }

    /// The document of the report (docs/json.md, `efficiency`): the engine of its bootstrap
    /// in `run` and nowhere in the body, the currency beside the analysis, and the reasons
    /// of the undefined values where they are. Costs by hand: c_T = 100, c_R = 50; the
    /// direct check's C₁ = 8 trajectories × 100 + 8 reads 0 × 50 = 1,200 and C₂ = 800 +
    /// 16 × 50 = 1,600. Constant scores leave every loss and the ratio undefined.
    #[test]
    fn the_efficiency_document_has_its_engine_in_run_and_its_reasons_in_place() {
        let (panel, entries) = constant_panel();
        let ledger = PricedLedger {
            entries: &entries,
            path: Path::new("l.jsonl"),
            prices: None,
            prices_path: None,
        };
        let settings = EfficiencyJob {
            budget: Budget::Tokens,
            max_reads: 4,
            resampling: Resampling {
                seed: 3,
                replicates: 20,
                confidence: 0.9,
            },
            question_cost: 0.0,
        };
        let cpu = CpuBackend::new();
        let r = efficiency_report(&panel, &ledger, &settings, &cpu, &|_| {}).unwrap();
        let d = document("efficiency", Inputs::new().with("panel", "p.csv"), &r);
        let run = &d["run"];
        assert_eq!(run["backend"], "cpu");
        assert_eq!(run["adapter"], json!(cpu.description()));
        assert_eq!((&run["replicates"], &run["seed"]), (&json!(20), &json!(3)));
        assert_eq!(run["confidence"], 0.9);
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert!(d.get(key).is_none(), "{key} is in the body");
        }
        assert_eq!(
            (&d["currency"], &d["max_reads"]),
            (&json!("tokens"), &json!(4))
        );
        let s = &d["strata"][0];
        assert_eq!(
            s["unit_costs"],
            json!({"trajectory": 100.0, "first_read": 50.0, "read": 50.0})
        );
        assert_eq!(s["fixed_t"], Value::Null);
        let reason = "the scores do not vary (every variance component is 0), so SE^2 x cost is 0 at every R and the loss is 0/0";
        assert_eq!(s["undefined"]["fixed_t"], reason);
        assert_eq!(
            d["combined"]["undefined"],
            json!({"fixed_t": "the loss is undefined in d"})
        );
        let direct = &d["direct"];
        assert_eq!(
            (&direct["cost_one_read"], &direct["cost_two_reads"]),
            (&json!(1200.0), &json!(1600.0))
        );
        assert_eq!(direct["ratio"], Value::Null);
        assert_eq!(
            direct["undefined"]["ratio"],
            "both SEs are 0 (the scores do not vary), so the ratio is 0/0"
        );
        // Each reason in the body is one of the report's own, in its scope.
        for n in r.analysis.undefined() {
            let scope = match n.scope.as_str() {
                "combined" => &d["combined"],
                "pooled" => &d["pooled"],
                "d" => s,
                other => panic!("scope {other}"),
            };
            assert_eq!(scope["undefined"][n.field], json!(n.reason), "{}", n.field);
        }
    }

    /// A best R beyond the panel's reads is said to extrapolate, and a stratum under 30
    /// questions to make the normal approximation rough (the constant panel: 4 questions,
    /// R = 2; a fixed-T best R of 3 is set by hand, since constant scores have no loss), after
    /// the constant outcome's own note.
    #[test]
    fn warnings_name_extrapolation_and_small_strata() {
        let (panel, entries) = constant_panel();
        let ledger = PricedLedger {
            entries: &entries,
            path: Path::new("l.jsonl"),
            prices: None,
            prices_path: None,
        };
        let settings = EfficiencyJob {
            budget: Budget::Tokens,
            max_reads: 4,
            resampling: Resampling {
                seed: 3,
                replicates: 20,
                confidence: 0.9,
            },
            question_cost: 0.0,
        };
        let mut r =
            efficiency_of_panel(&panel, &ledger, &settings, &CpuBackend::new(), &|_| {}).unwrap();
        // The constant outcome's note comes first (issue #51).
        assert_eq!(
            r.warnings,
            [
                crate::resample::summary::NO_SPREAD_NOTE,
                "d: 4 questions (fewer than 30), so the normal approximation behind SE-based comparisons is rough",
                // The direct check's interval was measured short (docs/COVERAGE.md).
                DIRECT_CHECK_NOTE,
            ]
        );
        r.strata[0].fixed_t = Some(crate::allocation::fixed_t::FixedTLoss {
            j_one: 2.0,
            r_best: 3,
            j_best: 1.0,
            r_star: 3.2,
            loss_percent: 100.0,
        });
        r.note_warnings();
        assert_eq!(r.warnings.len(), 2);
        assert_eq!(
            r.warnings[0],
            "d: the fixed-T best R = 3 exceeds the panel's 2 read(s), so that loss extrapolates the components beyond the audit"
        );
        assert_eq!(r.absent_rows, 0);
    }
}
