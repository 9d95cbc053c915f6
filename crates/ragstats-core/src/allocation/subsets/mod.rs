//! Subset enumeration of a depth panel: the measured SE of every (trajectory subset, read
//! subset), its mean per configuration (t′, r′) beside the nested and Q-only forecasts of
//! an audit, the mean absolute error (MAE) of each forecast, and a question bootstrap of
//! the MAE advantage (Q-only − nested) in which every replicate recomputes every subset SE
//! on the same question draws.
//!
//! * Subset SE (per stratum d, subset S = (S_T, S_R)): SE²_d(S) = s²(m_q(S))/Q_d with
//!   m_q(S) the mean of question q's cells in S; combined with the depth panel's stratum
//!   weights w_d, SE(S) = sqrt(Σ_d w_d² SE²_d(S)), with equal weights sqrt(Σ_d SE²_d(S))/D.
//!   Computed from cell moments ([`eval`]).
//! * Configuration (t′, r′): the equal-weight mean of SE(S) over its C(T,t′)·C(R,r′) subsets.
//! * Forecasts ([`crate::components::forecast::forecast`]) at (Q_d of the depth panel, t′, r′)
//!   from the audit's strata of the same names, combined with the same weights: nested
//!   (truncated components) and Q-only.
//! * MAE over the configurations with t′ ≥ `min_trajectories`; advantage = MAE_Q-only − MAE_nested.
//! * Bootstrap: replicate b draws Q_d questions with replacement in each stratum (the
//!   engine's streams), recomputes every SE(S), the configuration means and the MAEs
//!   against the *fixed* forecasts (the audit is not resampled). Percentile intervals.

pub mod eval;
pub mod moments;
mod view;

use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;

use self::eval::{add_se2, Layout, Moments, Scratch};
use self::moments::{n_columns, MomentColumns};
use crate::components::forecast::{forecast, Audit, DesignSpec};
use crate::document::{Engine, Report};
use crate::panel::all_equal;
use crate::panel::Stratum;
use crate::resample::engine::ResampleBackend;
use crate::resample::summary::{no_spread_notes, summarize, Method, Summary};
use crate::resample::Resampling;
use crate::{Error, Result};

/// Largest T·R supported (2,144 moment columns; memory and time grow as (TR)²).
pub const MAX_CELLS: usize = 64;
/// Largest T and largest R supported (2^12 − 1 masks each).
pub const MAX_SIDE: usize = 12;
/// Replicate moments held at once: replicates are processed in chunks of about this many
/// f64 totals (the result does not depend on the chunking).
const TOTALS_PER_CHUNK: usize = 1 << 22;

/// One configuration (t′, r′) of the report.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigRow {
    pub trajectories: usize,
    pub reads: usize,
    /// Subsets averaged: C(T, t′)·C(R, r′).
    pub subsets: usize,
    /// Mean measured SE over the subsets, its bootstrap SE and percentile interval.
    pub se_measured: Summary,
    pub se_nested: f64,
    pub se_q_only: f64,
    /// Whether the configuration counts in the MAEs (t′ ≥ min_trajectories).
    pub in_mae: bool,
}

/// One subset's measured SE (trajectory and read positions, 0-based).
#[derive(Debug, Clone, Serialize)]
pub struct SubsetRow {
    pub trajectories: Vec<usize>,
    pub reads: Vec<usize>,
    pub se: f64,
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct SubsetReport {
    /// (name, questions) of each depth stratum.
    pub strata: Vec<(String, usize)>,
    pub trajectories: usize,
    pub reads: usize,
    pub min_trajectories: usize,
    pub configurations: Vec<ConfigRow>,
    pub mae_nested: Summary,
    pub mae_q_only: Summary,
    /// MAE_Q-only − MAE_nested (positive: the nested forecast is closer).
    pub advantage: Summary,
    /// The bootstrap's seed (a document's `run.seed`, not a field of its body).
    #[serde(skip)]
    pub seed: u64,
    pub range: [u32; 2],
    /// Confidence of the percentile intervals (a document's `run.confidence`).
    #[serde(skip)]
    pub confidence: f64,
    /// Engine calls per replicate chunk (moment column groups of 16).
    pub engine_calls: usize,
    /// What a reader should know before the numbers:
    /// [`crate::resample::summary::NO_SPREAD_NOTE`] when the depth
    /// panel's outcome is constant (every measured SE and its interval are then 0 by
    /// arithmetic).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A prepared subset study: validated panel, moment columns and fixed forecasts.
#[derive(Debug, Clone)]
pub struct SubsetStudy {
    layout: Layout,
    names: Vec<String>,
    questions: Vec<usize>,
    cols: MomentColumns,
    nested: Vec<f64>,
    q_only: Vec<f64>,
    min_trajectories: usize,
    /// Every outcome of the depth panel is the same value.
    constant: bool,
    /// The depth panel's stratum weights w_d (empty: equal).
    weights: Vec<f64>,
    /// The first stratum's trajectory and read labels (a subset names its positions by
    /// them).
    trajectory_labels: Vec<String>,
    read_labels: Vec<String>,
}

/// The audit strata named like the depth strata, in the depth panel's order.
///
/// # Errors
/// [`Error::Data`] naming the first depth stratum the audit lacks.
pub fn matching_audit(audit: &Audit, names: &[String]) -> Result<Audit> {
    let mut strata = Vec::with_capacity(names.len());
    for n in names {
        let s = audit.strata.iter().find(|s| &s.name == n).ok_or_else(|| {
            let have: Vec<&str> = audit.strata.iter().map(|s| s.name.as_str()).collect();
            Error::Data(format!(
                "depth stratum '{n}' has no audit stratum of the same name (audit strata: {})",
                have.join(", ")
            ))
        })?;
        strata.push(s.clone());
    }
    Ok(Audit {
        strata,
        pooled: None,
        weights: Vec::new(),
        pooled_cluster: None,
    })
}

impl SubsetStudy {
    /// Validates the depth panel's strata and computes the forecasts of every configuration.
    ///
    /// # Errors
    /// [`Error::Data`] when strata differ in T or R, a stratum has fewer than 2 questions,
    /// the design exceeds [`MAX_SIDE`] or [`MAX_CELLS`], or a stratum is not in the audit;
    /// [`Error::Usage`] when `min_trajectories` is 0 or exceeds T.
    pub fn new(strata: &[Stratum], audit: &Audit, min_trajectories: usize) -> Result<Self> {
        Self::weighted(strata, &[], audit, min_trajectories)
    }

    /// [`SubsetStudy::new`] with the depth panel's strata combined with `weights` (Σ = 1,
    /// strata order; empty: equal), in every measured SE and in the forecasts alike.
    ///
    /// # Errors
    /// As [`SubsetStudy::new`].
    pub fn weighted(
        strata: &[Stratum],
        weights: &[f64],
        audit: &Audit,
        min_trajectories: usize,
    ) -> Result<Self> {
        let first = strata
            .first()
            .ok_or_else(|| Error::Data("the depth panel has no strata".into()))?;
        let layout = Layout {
            t: first.t(),
            r: first.r(),
        };
        for s in strata {
            if s.t() != layout.t || s.r() != layout.r {
                return Err(Error::Data(format!(
                    "subsets need the same T and R in every stratum; '{}' has T={}, R={} but '{}' has T={}, R={}",
                    first.name, layout.t, layout.r, s.name, s.t(), s.r()
                )));
            }
            if s.q() < 2 {
                return Err(Error::Data(format!(
                    "stratum '{}' has {} question(s); a measured SE needs at least 2",
                    s.name,
                    s.q()
                )));
            }
        }
        if layout.t > MAX_SIDE || layout.r > MAX_SIDE || layout.t * layout.r > MAX_CELLS {
            return Err(Error::Data(format!(
                "T={}, R={}: subsets support T, R ≤ {MAX_SIDE} and T·R ≤ {MAX_CELLS}",
                layout.t, layout.r
            )));
        }
        if min_trajectories == 0 || min_trajectories > layout.t {
            return Err(Error::setting(
                "min_trajectories",
                format!(
                    "expected 1 to T = {} (the depth panel's trajectories), not {min_trajectories}",
                    layout.t
                ),
            ));
        }
        let names: Vec<String> = strata.iter().map(|s| s.name.clone()).collect();
        let questions: Vec<usize> = strata.iter().map(Stratum::q).collect();
        let audit = Audit {
            weights: weights.to_vec(),
            ..matching_audit(audit, &names)?
        };
        let mut nested = Vec::new();
        let mut q_only = Vec::new();
        for tp in 1..=layout.t {
            for rp in 1..=layout.r {
                let spec = DesignSpec::PerStratum {
                    questions: names
                        .iter()
                        .cloned()
                        .zip(questions.iter().copied())
                        .collect(),
                    t: tp,
                    r: rp,
                };
                let f = forecast(&audit, &spec, false)?;
                nested.push(f.se_nested);
                q_only.push(f.se_q_only);
            }
        }
        let ys: Vec<&[f64]> = strata.iter().map(|s| s.y.as_slice()).collect();
        let constant = all_equal(ys.iter().flat_map(|y| y.iter()));
        Ok(SubsetStudy {
            layout,
            names,
            questions,
            cols: MomentColumns::new(layout, &ys),
            nested,
            q_only,
            min_trajectories,
            constant,
            weights: weights.to_vec(),
            trajectory_labels: first.trajectories.clone(),
            read_labels: first.reads.clone(),
        })
    }

    /// The subset layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Engine calls per replicate chunk.
    pub fn engine_calls(&self) -> usize {
        self.cols.engine_calls()
    }

    /// Progress units of [`Self::run`] for `n` replicates.
    pub fn work_units(&self, n: u64) -> u64 {
        n * self.engine_calls() as u64
    }

    /// SE(S) of every subset from per-stratum moments, in subset order.
    fn subset_se(&self, strata: &[Moments], scratch: &mut Scratch, se2: &mut Vec<f64>) {
        se2.clear();
        se2.resize(self.layout.n_subsets(), 0.0);
        if self.weights.is_empty() {
            for m in strata {
                add_se2(self.layout, m, scratch, se2);
            }
            let d = strata.len() as f64;
            for v in se2.iter_mut() {
                *v = v.sqrt() / d;
            }
            return;
        }
        let mut one = vec![0.0; se2.len()];
        for (m, w) in strata.iter().zip(&self.weights) {
            one.iter_mut().for_each(|v| *v = 0.0);
            add_se2(self.layout, m, scratch, &mut one);
            for (v, x) in se2.iter_mut().zip(&one) {
                *v += w * w * x;
            }
        }
        for v in se2.iter_mut() {
            *v = v.sqrt();
        }
    }

    /// Measured SE of every subset of the panel itself.
    pub fn point_subsets(&self) -> Vec<SubsetRow> {
        let mut se = Vec::new();
        self.subset_se(self.cols.exact(), &mut Scratch::default(), &mut se);
        let bits = |m: usize, n: usize| (0..n).filter(|i| m >> i & 1 == 1).collect();
        se.iter()
            .enumerate()
            .map(|(i, &se)| {
                let (mt, mr) = self.layout.masks(i);
                SubsetRow {
                    trajectories: bits(mt, self.layout.t),
                    reads: bits(mr, self.layout.r),
                    se,
                }
            })
            .collect()
    }

    /// Configuration means of SE(S) from per-stratum moments.
    fn config_means(&self, strata: &[Moments], cfg: &[usize], sizes: &[usize]) -> Vec<f64> {
        let mut se = Vec::new();
        self.subset_se(strata, &mut Scratch::default(), &mut se);
        let mut sums = vec![0f64; self.layout.n_configs()];
        for (v, &c) in se.iter().zip(cfg) {
            sums[c] += v;
        }
        sums.iter().zip(sizes).map(|(s, &n)| s / n as f64).collect()
    }

    /// Configuration means of every replicate in `replicates`, `[replicate][configuration]`.
    ///
    /// # Errors
    /// Whatever the engine reports.
    pub fn replicate_config_means(
        &self,
        engine: &dyn ResampleBackend,
        seed: u64,
        replicates: Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Vec<f64>>> {
        let cfg = self.layout.config_of_subsets();
        let sizes = self.layout.config_sizes();
        let per_rep = self.names.len() * n_columns(self.layout);
        let chunk = (TOTALS_PER_CHUNK / per_rep).max(1) as u32;
        let calls = self.engine_calls() as u64;
        let mut out = Vec::with_capacity((replicates.end - replicates.start) as usize);
        let mut start = replicates.start;
        while start < replicates.end {
            let end = replicates.end.min(start.saturating_add(chunk));
            let done = (start - replicates.start) as u64 * calls;
            let n = (end - start) as u64;
            let moments = self.cols.resample(engine, seed, start..end, &|d| {
                // Units inside this chunk are g·n + d for group g; rescale to whole chunks.
                progress(done + d.min(calls * n))
            })?;
            out.extend(
                moments
                    .par_iter()
                    .map(|m| self.config_means(m, &cfg, &sizes))
                    .collect::<Vec<_>>(),
            );
            start = end;
        }
        Ok(out)
    }

    /// The full analysis: point estimates, forecasts, MAEs and bootstrap summaries over
    /// replicates `0..resampling.replicates` drawn from `resampling.seed`, with percentile
    /// intervals at `resampling.confidence`. (A shard of the replicates is
    /// [`Self::replicate_config_means`] over a range.)
    ///
    /// # Errors
    /// [`Error::Usage`] for a confidence outside (0, 1); engine errors.
    pub fn run(
        &self,
        resampling: &Resampling,
        engine: &dyn ResampleBackend,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SubsetReport> {
        let Resampling {
            seed,
            replicates,
            confidence,
        } = *resampling;
        let replicates = 0..replicates;
        if !(confidence > 0.0 && confidence < 1.0) {
            return Err(Error::Usage(format!(
                "confidence {confidence} must be between 0 and 1"
            )));
        }
        let cfg = self.layout.config_of_subsets();
        let sizes = self.layout.config_sizes();
        let point = self.config_means(self.cols.exact(), &cfg, &sizes);
        let reps = self.replicate_config_means(engine, seed, replicates.clone(), progress)?;
        let in_mae: Vec<bool> = (0..self.layout.n_configs())
            .map(|c| c / self.layout.r + 1 >= self.min_trajectories)
            .collect();
        let mae = |se: &[f64], f: &[f64]| -> f64 {
            let (mut s, mut n) = (0.0, 0usize);
            for c in (0..se.len()).filter(|&c| in_mae[c]) {
                s += (f[c] - se[c]).abs();
                n += 1;
            }
            s / n as f64
        };
        let sum = |theta: f64, v: &[f64]| summarize(theta, v, Method::Percentile, confidence, 0.0);
        let (mn, mq) = (mae(&point, &self.nested), mae(&point, &self.q_only));
        let rn: Vec<f64> = reps.iter().map(|r| mae(r, &self.nested)).collect();
        let rq: Vec<f64> = reps.iter().map(|r| mae(r, &self.q_only)).collect();
        let ra: Vec<f64> = rq.iter().zip(&rn).map(|(q, n)| q - n).collect();
        let configurations = (0..self.layout.n_configs())
            .map(|c| {
                let col: Vec<f64> = reps.iter().map(|r| r[c]).collect();
                ConfigRow {
                    trajectories: c / self.layout.r + 1,
                    reads: c % self.layout.r + 1,
                    subsets: sizes[c],
                    se_measured: sum(point[c], &col),
                    se_nested: self.nested[c],
                    se_q_only: self.q_only[c],
                    in_mae: in_mae[c],
                }
            })
            .collect();
        Ok(SubsetReport {
            strata: self
                .names
                .iter()
                .cloned()
                .zip(self.questions.iter().copied())
                .collect(),
            trajectories: self.layout.t,
            reads: self.layout.r,
            min_trajectories: self.min_trajectories,
            configurations,
            mae_nested: sum(mn, &rn),
            mae_q_only: sum(mq, &rq),
            advantage: sum(mq - mn, &ra),
            seed,
            range: [replicates.start, replicates.end],
            confidence,
            engine_calls: self.engine_calls(),
            notes: no_spread_notes(self.constant),
        })
    }
}

/// How a prepared [`SubsetStudy`] is run: the bootstrap replicates, seed and confidence of
/// its percentile intervals, and whether every subset's own SE is listed too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubsetJob {
    /// The bootstrap: replicates `0..replicates` from `seed`, intervals at `confidence`.
    pub resampling: Resampling,
    /// Also list every subset's measured SE ([`SubsetStudy::point_subsets`]).
    pub per_subset: bool,
}

/// What a subset study found: the outcome, the report, the engine that resampled it, and
/// (when asked) every subset's measured SE. The engine and the resampling settings are the
/// document's envelope ([`Report::engine`]), not fields of the body.
#[derive(Debug, Clone, Serialize)]
pub struct SubsetAnalysis {
    /// The outcome analysed (`f1`, `f1: adaptive-open`).
    pub outcome: String,
    #[serde(flatten)]
    pub report: SubsetReport,
    /// The engine's short name (`cpu`, `gpu`) and its description (threads, adapter).
    #[serde(skip)]
    pub backend: String,
    #[serde(skip)]
    pub adapter: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subsets: Option<Vec<SubsetRow>>,
    /// The depth panel's trajectory and read labels, by which the text and CSV name a
    /// subset's positions (the JSON gives positions).
    #[serde(skip)]
    pub trajectory_labels: Vec<String>,
    #[serde(skip)]
    pub read_labels: Vec<String>,
}

impl Report for SubsetAnalysis {
    /// The engine, and the bootstrap's replicates (`range[1] − range[0]`), seed and
    /// confidence.
    fn engine(&self) -> Engine {
        let r = &self.report;
        Engine::resampled(
            self.backend.clone(),
            self.adapter.clone(),
            u64::from(r.range[1] - r.range[0]),
            r.seed,
            r.confidence,
        )
    }
}

/// Runs a prepared subset study ([`SubsetStudy::new`]: the depth panel's strata checked
/// against the audit, every configuration's forecasts fixed) on `backend`: the measured SE
/// of every configuration with its bootstrap summary, the forecasts' MAEs and the MAE
/// advantage (see the module docs), and with `per_subset` every subset's SE. `outcome`
/// names what the depth panel's values are (the report says it).
///
/// # Errors
/// [`Error::Usage`] for a confidence outside (0, 1); engine errors.
pub fn analyse_subsets(
    outcome: &str,
    study: &SubsetStudy,
    settings: &SubsetJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SubsetAnalysis> {
    let report = study.run(&settings.resampling, backend, progress)?;
    Ok(SubsetAnalysis {
        outcome: outcome.to_string(),
        report,
        backend: backend.name().to_string(),
        adapter: backend.description(),
        subsets: settings.per_subset.then(|| study.point_subsets()),
        trajectory_labels: study.trajectory_labels.clone(),
        read_labels: study.read_labels.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::forecast::AuditStratum;
    use crate::components::levels::PerLevel;
    use crate::document::{document, Inputs};
    use crate::resample::CpuBackend;
    use serde_json::{json, Value};

    /// Stratum `d`: questions x (0, 1) and y (2, 6) over two trajectories, one read. The
    /// question means of trajectory {0} are (0, 2): SE sqrt(2/2) = 1; of {1} (1, 6): 2.5;
    /// of {0, 1} (0.5, 4): 1.75.
    #[test]
    fn the_subsets_document_has_the_engine_in_its_envelope_only() {
        let s = Stratum {
            name: "d".into(),
            questions: vec!["x".into(), "y".into()],
            trajectories: vec!["0".into(), "1".into()],
            reads: vec!["0".into()],
            y: vec![0.0, 1.0, 2.0, 6.0],
            ..Default::default()
        };
        let audit = Audit {
            strata: vec![AuditStratum {
                name: "d".into(),
                questions: 100,
                trajectories: 2,
                reads: 1,
                se: 0.02,
                components: PerLevel {
                    question: 0.04,
                    trajectory: Some(0.03),
                    read: None,
                },
                cluster: None,
            }],
            pooled: None,
            weights: Vec::new(),
            pooled_cluster: None,
        };
        let study = SubsetStudy::new(&[s], &audit, 1).unwrap();
        let settings = SubsetJob {
            resampling: Resampling {
                seed: 3,
                replicates: 40,
                confidence: 0.9,
            },
            per_subset: true,
        };
        let cpu = CpuBackend::new();
        let a = analyse_subsets("f1", &study, &settings, &cpu, &|_| {}).unwrap();
        let doc = document("subsets", Inputs::new().with("panel", "depth.csv"), &a);
        assert_eq!(
            doc["run"],
            json!({
                "command": "subsets",
                "ragstats": env!("CARGO_PKG_VERSION"),
                "inputs": {"panel": "depth.csv"},
                "backend": "cpu",
                "adapter": cpu.description(),
                "replicates": 40,
                "seed": 3,
                "confidence": 0.9,
            })
        );
        let keys = crate::document::keys(&doc);
        assert_eq!(
            keys,
            [
                "advantage",
                "configurations",
                "engine_calls",
                "mae_nested",
                "mae_q_only",
                "min_trajectories",
                "outcome",
                "range",
                "reads",
                "run",
                "strata",
                "subsets",
                "trajectories",
            ]
        );
        assert_eq!(doc["outcome"], "f1");
        assert_eq!(doc["range"], json!([0, 40]));
        assert_eq!(doc["strata"], json!([["d", 2]]));
        let se: Vec<f64> = doc["subsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["se"].as_f64().unwrap())
            .collect();
        for (got, want) in se.iter().zip([1.0, 2.5, 1.75]) {
            assert!((got - want).abs() < 1e-12, "{se:?}");
        }
        // t' = 1: the mean of the two one-trajectory subsets' SEs, (1 + 2.5)/2.
        let t1 = &doc["configurations"][0];
        assert_eq!((&t1["trajectories"], &t1["reads"]), (&json!(1), &json!(1)));
        let est = t1["se_measured"]["estimate"].as_f64().unwrap();
        assert!((est - 1.75).abs() < 1e-12, "{est}");
        assert_ne!(doc["mae_nested"], Value::Null);
    }
}
