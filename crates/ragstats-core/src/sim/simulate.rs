//! One entry point for `stats simulate`: a panel from either model, and the matching cost
//! ledger of a bounded panel.

use serde::Serialize;

use super::model::{check_rows, simulate_normal_panel, simulate_panel, Sds, SimRow, SimSpec};
use super::synthetic_ledger::{simulate_ledger, LedgerSpec};
use crate::document::Report;
use crate::ledger::LedgerRow;
use crate::table::{Cell, Table, ToView, View};
use crate::{Error, Result};

/// The Gaussian nested model y_qtr = μ + a_q + b_qt + e_qtr ([`simulate_normal_panel`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianSpec {
    /// Strata (datasets) and their numbers of questions, in output order.
    pub strata: Vec<(String, usize)>,
    /// Trajectories per question (T).
    pub trajectories: usize,
    /// Reads per trajectory (R).
    pub reads: usize,
    /// The mean μ of every stratum.
    pub mean: f64,
    /// SDs (σ_q, σ_t, σ_r) of the three levels: the true components are their squares.
    pub sds: Sds,
    /// Seed of every random stream.
    pub seed: u64,
}

/// Which model to simulate.
#[derive(Debug, Clone, PartialEq)]
pub enum SimModel {
    /// The bounded paired F1/EM model of several arms ([`simulate_panel`]).
    Bounded(SimSpec),
    /// The Gaussian nested model of one arm `single` ([`simulate_normal_panel`]).
    Gaussian(GaussianSpec),
}

/// The settings of `stats simulate`: the model, and for a bounded panel optionally its
/// ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulateJob {
    /// The panel's model.
    pub model: SimModel,
    /// The ledger's workflow and token parameters (bounded panels only).
    pub ledger: Option<LedgerSpec>,
}

/// A simulated panel and, when asked for, its cost ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    /// The panel's rows (stratum, question, trajectory, read, arm order).
    pub panel: Vec<SimRow>,
    /// The ledger's rows.
    pub ledger: Option<Vec<LedgerRow>>,
}

/// A file `stats simulate` wrote: its path (as given) and its number of rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WrittenFile {
    pub path: String,
    pub rows: usize,
}

/// What `stats simulate` wrote: the ledger (with `--ledger`) and the panel, each once
/// written. `stats simulate` prints text only; this is the body its document would have
/// (`docs/json.md`, `simulate`). The simulation's seed is an input, not a resampling
/// engine's, so the document's engine is all `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SimulateReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger: Option<WrittenFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub panel: Option<WrittenFile>,
}

impl SimulateReport {
    /// The files written, by role (`ledger`, then `panel`), in the order they were written.
    pub fn files(&self) -> impl Iterator<Item = (&'static str, &WrittenFile)> {
        let ledger = self.ledger.iter().map(|f| ("ledger", f));
        ledger.chain(self.panel.iter().map(|f| ("panel", f)))
    }
}

impl Report for SimulateReport {}

/// Simulates the panel of `settings.model` and, for a bounded one, the ledger of
/// `settings.ledger`.
///
/// # Errors
/// [`Error::Setting`] for a Gaussian panel with a ledger or a Gaussian SD that is negative
/// or not finite; [`Error::Usage`] for a panel or ledger over [`super::MAX_ROWS`] rows, or a bounded spec that
/// fails [`SimSpec::validate`].
pub fn simulate(settings: &SimulateJob) -> Result<Simulation> {
    match &settings.model {
        SimModel::Gaussian(g) => {
            if settings.ledger.is_some() {
                return Err(Error::setting(
                    "ledger",
                    "a Gaussian simulated panel has no ledger",
                ));
            }
            let Sds { q, t, r } = g.sds;
            for (setting, sd) in [("sigma_q", q), ("sigma_t", t), ("sigma_r", r)] {
                if !(sd.is_finite() && sd >= 0.0) {
                    return Err(Error::setting(
                        setting,
                        format!("{sd} is not a standard deviation (finite and non-negative)"),
                    ));
                }
            }
            let questions: u128 = g.strata.iter().map(|(_, q)| *q as u128).sum();
            check_rows(
                "panel",
                questions * g.trajectories as u128 * g.reads as u128,
            )?;
            Ok(Simulation {
                panel: simulate_normal_panel(
                    &g.strata,
                    g.trajectories,
                    g.reads,
                    g.mean,
                    q,
                    t,
                    r,
                    g.seed,
                ),
                ledger: None,
            })
        }
        SimModel::Bounded(spec) => {
            let panel = simulate_panel(spec)?;
            let ledger = match &settings.ledger {
                Some(l) => Some(simulate_ledger(spec, l)?),
                None => None,
            };
            Ok(Simulation { panel, ledger })
        }
    }
}

/// What was written: one line per file (text), one row per file (CSV).
impl ToView for SimulateReport {
    fn to_view(&self) -> View {
        let mut t = Table::new(&["file", "path", "rows"]);
        for (what, f) in self.files() {
            t.row([
                Cell::text(what),
                Cell::text(&f.path),
                Cell::Count(f.rows as u64),
            ]);
        }
        let mut v = View::new(t);
        v.text(
            self.files()
                .map(|(what, f)| format!("wrote {} {what} rows to {}\n", f.rows, f.path))
                .collect::<String>(),
        );
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document of what was written: each file's path and rows by role, no file that
    /// was not written, and a null engine.
    #[test]
    fn the_simulate_document_lists_the_files_written() {
        use crate::document::{document, Inputs};
        use serde_json::{json, Value};
        let mut r = SimulateReport {
            ledger: Some(WrittenFile {
                path: "l.jsonl".into(),
                rows: 12,
            }),
            panel: None,
        };
        // The ledger is written first: before the panel, only it is there.
        assert_eq!(
            crate::document::to_body(&r),
            json!({"ledger": {"path": "l.jsonl", "rows": 12}})
        );
        r.panel = Some(WrittenFile {
            path: "p.csv".into(),
            rows: 40,
        });
        let d = document("simulate", Inputs::new(), &r);
        assert_eq!(d["panel"], json!({"path": "p.csv", "rows": 40}));
        assert_eq!(d["ledger"]["rows"], 12);
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(d["run"][key], Value::Null, "{key}");
        }
        let roles: Vec<&str> = r.files().map(|(role, _)| role).collect();
        assert_eq!(roles, ["ledger", "panel"]);
    }

    /// The regression pin of tests/it/sim_model.rs `pinned_values` (one stratum of 2
    /// questions, T = 1, R = 2, μ = 0, every SD 1, seed 1), through the entry point.
    #[test]
    fn simulate_reproduces_the_pinned_gaussian_panel() {
        let g = GaussianSpec {
            strata: vec![("d".into(), 2)],
            trajectories: 1,
            reads: 2,
            mean: 0.0,
            sds: Sds {
                q: 1.0,
                t: 1.0,
                r: 1.0,
            },
            seed: 1,
        };
        let s = SimulateJob {
            model: SimModel::Gaussian(g.clone()),
            ledger: None,
        };
        let sim = simulate(&s).unwrap();
        let ys: Vec<u64> = sim.panel.iter().map(|r| r.f1.to_bits()).collect();
        assert_eq!(
            ys,
            [
                4613028443943973938,
                4614520076741527043,
                4610774595666454635,
                4611384226039362951,
            ]
        );
        assert!(sim.ledger.is_none() && sim.panel.iter().all(|r| r.arm == "single"));
        // A negative SD and a ledger are refused.
        let mut bad = g.clone();
        bad.sds.r = -0.5;
        let e = simulate(&SimulateJob {
            model: SimModel::Gaussian(bad),
            ledger: None,
        })
        .unwrap_err();
        // The error names the one setting at fault (the read level's SD), not a flag.
        assert!(
            matches!(&e, Error::Setting { setting: "sigma_r", msg }
                if msg == "-0.5 is not a standard deviation (finite and non-negative)"),
            "{e:?}"
        );
        let e = simulate(&SimulateJob {
            model: SimModel::Gaussian(g),
            ledger: Some(LedgerSpec::default()),
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "ledger: a Gaussian simulated panel has no ledger"
        );
        assert_eq!(e.exit_code(), 2);
    }

    /// The bounded design of tests/it/sim_model.rs `shapes_order_and_bounds` (7 + 5
    /// questions, T = 3, R = 5, two arms): (7 + 5)·3·5·2 panel rows, and a ledger.
    #[test]
    fn simulate_bounded_panel_and_ledger() {
        let spec = SimSpec {
            strata: vec![("hotpotqa".into(), 7), ("musique".into(), 5)],
            trajectories: 3,
            reads: 5,
            arms: vec!["open".into(), "adaptive".into()],
            seed: 1,
            means: vec![0.6, 0.4],
            effect: 0.02,
            shared: Sds {
                q: 0.55,
                t: 0.15,
                r: 0.15,
            },
            contrast: Sds {
                q: 0.3,
                t: 0.15,
                r: 0.18,
            },
        };
        let s = SimulateJob {
            model: SimModel::Bounded(spec.clone()),
            ledger: Some(LedgerSpec::default()),
        };
        let sim = simulate(&s).unwrap();
        assert_eq!(sim.panel.len(), (7 + 5) * 3 * 5 * 2);
        assert_eq!(sim.panel[0].question, "hotpotqa-0001");
        assert_eq!(sim.panel, simulate_panel(&spec).unwrap());
        let ledger = sim.ledger.unwrap();
        assert_eq!(
            ledger,
            simulate_ledger(&spec, &LedgerSpec::default()).unwrap()
        );
        assert!(!ledger.is_empty());
    }
}
