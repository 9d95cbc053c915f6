//! Turns replicate statistics into the bootstrap report (the same for a single run and for
//! merged shards).

use std::collections::BTreeMap;

use serde::Serialize;

use super::replicates::Replicates;
use crate::components::reml::Shape;
use crate::components::variance::Method as FitMethod;
use crate::inference::t::{satterthwaite, t_quantile};
use crate::resample::summary::{
    no_spread_notes, normal_cdf, summarize, tail_probability, variance, Method, Summary,
};
use crate::table::Defined;

/// One stratum's mean with its bootstrap SE and interval.
#[derive(Debug, Clone, Serialize)]
pub struct StratumSummary {
    pub name: String,
    pub questions: usize,
    pub trajectories: usize,
    pub reads: usize,
    /// An unbalanced stratum's min / mean / max design (`trajectories` and `reads` are then
    /// the rounded means).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// Clusters G the cluster bootstrap drew from (absent for the question bootstrap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<usize>,
    #[serde(flatten)]
    pub summary: Summary,
}

/// Bootstrap summaries of refitted components; `None` where a level is not estimable.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentSummaries {
    pub name: String,
    /// How the components were refitted (given on unbalanced panels only: REML for an
    /// unbalanced stratum and the pooled fit, ANOVA for a balanced stratum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<FitMethod>,
    /// With clusters (`bootstrap --cluster --components`): the refitted cluster component
    /// σ²_c (the other levels are then questions within clusters); absent without clusters,
    /// and where not estimable (the reason is in `undefined`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Summary>,
    pub question: Option<Summary>,
    pub trajectory: Option<Summary>,
    pub read: Option<Summary>,
    /// Why each `None` level is not estimable, keyed by level name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub undefined: BTreeMap<&'static str, String>,
}

/// A forecast SE's bootstrap distribution.
#[derive(Debug, Clone, Serialize)]
pub struct DesignSummary {
    pub design: String,
    pub se_nested: Option<Summary>,
    /// Why `se_nested` is `null`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined: Option<String>,
}

/// `--components` part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentsReport {
    pub strata: Vec<ComponentSummaries>,
    pub pooled: ComponentSummaries,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub designs: Vec<DesignSummary>,
}

/// The whole bootstrap result. The replicates, seed and confidence are the run's settings:
/// a document has them in its `run` envelope ([`super::analysis::BootstrapRun`]'s engine),
/// not among the report's fields.
#[derive(Debug, Clone, Serialize)]
pub struct BootstrapReport {
    pub outcome: String,
    /// Replicates summarised: `range[1] − range[0]`.
    #[serde(skip)]
    pub replicates: u32,
    pub range: [u32; 2],
    #[serde(skip)]
    pub seed: u64,
    pub method: Method,
    #[serde(skip)]
    pub confidence: f64,
    /// The equal-weight estimate with its bootstrap SE and interval (JSON: the fields
    /// `estimate`, `se`, `ci` of the report itself).
    #[serde(flatten)]
    pub summary: Summary,
    /// Why the SEs are undefined (`null`), when they are: fewer than 2 replicates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub se_undefined: Option<String>,
    /// The small-sample expansion of the estimate's interval ([`Expansion`]); `null` when
    /// the estimate does not vary.
    pub expansion: Option<Expansion>,
    pub strata: Vec<StratumSummary>,
    /// The strata's weights w_d in the estimate Σ w_d·ȳ_d (in `strata`'s order), when they
    /// are not equal; empty (and not serialised) for equal weights.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components: Option<ComponentsReport>,
    /// What a reader should know before the numbers:
    /// [`crate::resample::summary::NO_SPREAD_NOTE`] when every replicate of the estimate
    /// equals it (the outcome does not vary between questions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl BootstrapReport {
    /// The bootstrap SE of the estimate, or why it is undefined ([`Self::se_undefined`]:
    /// fewer than 2 replicates).
    pub fn se(&self) -> Defined<f64> {
        Defined::unless(self.se_undefined.as_deref(), self.summary.se)
    }
}

/// Summarises every statistic of a (complete or partial) run.
pub fn build_report(r: &Replicates) -> BootstrapReport {
    let h = &r.header;
    let n = h.plan.statistics.len();
    let column = |i: usize| -> Vec<f64> { r.values.iter().skip(i).step_by(n).copied().collect() };
    let accel = |i: usize| h.acceleration.as_ref().map(|a| a[i]).unwrap_or(0.0);
    let summary_at = |i: usize, confidence: f64| -> Option<Summary> {
        let reps = column(i);
        if !h.point[i].is_finite() || reps.iter().any(|v| !v.is_finite()) {
            return None;
        }
        Some(summarize(h.point[i], &reps, h.method, confidence, accel(i)))
    };
    let summary = |i: usize| summary_at(i, h.confidence);
    let nan = Summary::NAN;
    let d = h.plan.strata.len();
    // The resampled units: questions, or with clusters the clusters, whose number sets the
    // bootstrap's (n − 1)/n variance and the t's df that the expansion undoes.
    let clustered = !h.plan.clusters.is_empty();
    let questions: Vec<usize> = if clustered {
        h.plan.clusters.clone()
    } else {
        h.plan.strata.iter().map(|s| s.questions).collect()
    };
    // Each stratum's share of the estimate's variance: w_d²·v_d (equal weights scale every
    // share alike, which changes neither f nor ν, so they are left unscaled).
    let w = &h.plan.weights;
    let stratum_var: Vec<f64> = (0..d)
        .map(|i| variance(&column(1 + i)) * w.get(i).map_or(1.0, |w| w * w))
        .collect();
    let expansion = Expansion::of_estimate(&questions, &stratum_var, h.confidence);
    let est =
        summary_at(0, expansion.as_ref().map_or(h.confidence, |e| e.confidence)).unwrap_or(nan);
    let strata = h
        .plan
        .strata
        .iter()
        .enumerate()
        .map(|(i, s)| StratumSummary {
            name: s.name.clone(),
            questions: s.questions,
            trajectories: s.trajectories,
            reads: s.reads,
            shape: s.shape,
            clusters: h.plan.clusters.get(i).copied(),
            summary: summary_at(
                1 + i,
                Expansion::of_stratum(questions[i], h.confidence)
                    .map_or(h.confidence, |e| e.confidence),
            )
            .unwrap_or(nan),
        })
        .collect();
    let components = h.plan.spec.components.then(|| {
        // A level whose point estimate is defined can still be undefined in a replicate
        // (a refit that fails on a degenerate resample); with T = 1 or R = 1 the level
        // has no degrees of freedom at all.
        let why = |level: &str, n: Option<usize>| match n {
            Some(1) => format!("{level}: one per cell, so the level has no degrees of freedom"),
            _ => format!(
                "{level}: the refit is undefined at the point estimate or in some replicate"
            ),
        };
        let unbalanced = h.plan.unbalanced;
        // σ²_c of scope i (strata, then pooled) follows the lower levels and the designs.
        let clustered = h.plan.clustered_components();
        let cluster_at = 1 + d + 3 * (d + 1) + h.plan.spec.designs.len();
        let comp = |name: &str, reml: bool, base: usize, t: Option<usize>, r: Option<usize>| {
            let (question, trajectory, read) =
                (summary(base), summary(base + 1), summary(base + 2));
            let mut undefined = BTreeMap::new();
            let scope = (base - (1 + d)) / 3;
            let cluster = clustered.then(|| summary(cluster_at + scope)).flatten();
            if clustered && cluster.is_none() {
                undefined.insert("cluster", why("clusters", None));
            }
            if question.is_none() {
                undefined.insert("question", why("questions", None));
            }
            if trajectory.is_none() {
                undefined.insert("trajectory", why("trajectories", t));
            }
            if read.is_none() {
                undefined.insert("read", why("reads", r));
            }
            ComponentSummaries {
                name: name.to_string(),
                method: unbalanced.then_some(if reml {
                    FitMethod::Reml
                } else {
                    FitMethod::Anova
                }),
                cluster,
                question,
                trajectory,
                read,
                undefined,
            }
        };
        let base = 1 + d;
        ComponentsReport {
            strata: h
                .plan
                .strata
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    // An unbalanced stratum's counts are rounded means, not one per cell.
                    let (t, r) = match s.shape {
                        Some(_) => (None, None),
                        None => (Some(s.trajectories), Some(s.reads)),
                    };
                    comp(&s.name, s.shape.is_some(), base + 3 * i, t, r)
                })
                .collect(),
            pooled: comp("pooled", true, base + 3 * d, None, None),
            designs: h
                .plan
                .spec
                .designs
                .iter()
                .enumerate()
                .map(|(j, t)| {
                    let se_nested = summary(base + 3 * d + 3 + j);
                    DesignSummary {
                        design: t.clone(),
                        undefined: se_nested.is_none().then(|| {
                            "a stratum's components are not estimable at the point estimate or in some replicate".to_string()
                        }),
                        se_nested,
                    }
                })
                .collect(),
        }
    });
    BootstrapReport {
        outcome: h.plan.outcome.clone(),
        replicates: h.range[1] - h.range[0],
        range: h.range,
        seed: h.seed,
        method: h.method,
        confidence: h.confidence,
        summary: est,
        se_undefined: (h.range[1] - h.range[0] < 2).then(|| {
            format!(
                "{} replicate(s): a standard error needs at least 2",
                h.range[1] - h.range[0]
            )
        }),
        expansion,
        strata,
        weights: h.plan.weights.clone(),
        components,
        notes: {
            let mut notes = no_spread_notes(no_spread(h.point[0], &column(0)));
            notes.extend(few_clusters_note(&h.plan.clusters));
            if h.plan.clustered_components() {
                notes.push(CLUSTER_REFITS_NOTE.to_string());
            }
            notes
        },
    }
}

/// What `bootstrap --cluster --components` says of its refits' intervals: the percentile
/// intervals of σ²_c and of a clustered forecast SE measured short at every size
/// simulated (docs/COVERAGE.md, "Cluster bootstrap", `bootstrap --cluster --components`).
pub const CLUSTER_REFITS_NOTE: &str = "the intervals of the components and forecast SEs \
    refitted from cluster draws covered 0.76-0.92 at 95% in simulation (σ²_c and the forecast SE; \
    2 strata of 6 to 24 clusters of 4 questions; docs/COVERAGE.md, \"Cluster bootstrap\"): \
    read them as too narrow, the more so with few clusters";

/// Fewest clusters per stratum at which the cluster bootstrap's expanded percentile
/// interval of a stratum mean holds its level within Monte Carlo error in the simulation
/// of docs/COVERAGE.md ("Cluster bootstrap"); below it the interval undercovers.
pub const FEW_CLUSTERS: usize = 6;

/// The note of a cluster bootstrap with fewer than [`FEW_CLUSTERS`] clusters in some
/// stratum; `None` for the question bootstrap or enough clusters.
pub fn few_clusters_note(clusters: &[usize]) -> Option<String> {
    let least = clusters.iter().copied().min()?;
    (least < FEW_CLUSTERS).then(|| {
        format!(
            "only {least} cluster(s) in a stratum: the cluster bootstrap interval undercovers \
             below {FEW_CLUSTERS} clusters (docs/COVERAGE.md, \"Cluster bootstrap\"); read it \
             as too narrow"
        )
    })
}

/// The small-sample expansion of a mean's bootstrap interval (Hesterberg 2015, "What
/// teachers should know about the bootstrap", §4.2: the expanded percentile interval).
///
/// A bootstrap of a mean of Q questions has variance (Q − 1)/Q of the mean's SE², and its
/// quantiles are normal ones where Student's t is due; both make a percentile interval short
/// at tens of questions. The expansion asks for the bootstrap quantiles at the tail
/// α'/2 = Φ(−f · t_{1−α/2, ν}) instead of α/2, where f² = Σₛ vₛ Qₛ/(Qₛ − 1) / Σₛ vₛ undoes the
/// (Q − 1)/Q (vₛ the bootstrap variance of stratum s's mean times wₛ², weighted as the
/// estimate is) and ν is the Welch–Satterthwaite df of Σₛ vₛ Qₛ/(Qₛ − 1) on Qₛ − 1 each. With
/// one stratum, f = √(Q/(Q − 1)) and ν = Q − 1. It applies to the estimate and the stratum
/// means (percentile, basic and BCa alike: BCa's z quantiles are taken at α'/2); the
/// refitted components and forecast SEs are not means and keep the nominal tail.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Expansion {
    /// f: the factor that undoes the bootstrap's (Q − 1)/Q variance.
    pub factor: f64,
    /// ν: the degrees of freedom of the t quantile.
    pub df: f64,
    /// The tail α'/2 the interval's quantiles are taken at (the nominal is (1 − level)/2).
    pub tail: f64,
    /// 1 − 2·tail: the level the quantiles are taken at.
    #[serde(skip)]
    pub confidence: f64,
}

impl Expansion {
    /// The expansion at `confidence` for factor `f` on `df`.
    fn new(factor: f64, df: f64, confidence: f64) -> Option<Expansion> {
        if !(factor.is_finite() && df.is_finite() && df > 0.0) {
            return None;
        }
        let nominal = tail_probability(confidence);
        let tail = normal_cdf(-factor * t_quantile(1.0 - nominal, df));
        Some(Expansion {
            factor,
            df,
            tail,
            confidence: 1.0 - 2.0 * tail,
        })
    }

    /// The estimate's expansion from each stratum's questions and the bootstrap variance of
    /// its mean; `None` when no stratum varies (or a variance is undefined: fewer than 2
    /// replicates) or one has a single question.
    pub fn of_estimate(
        questions: &[usize],
        variances: &[f64],
        confidence: f64,
    ) -> Option<Expansion> {
        if questions.iter().any(|&q| q < 2) {
            return None;
        }
        let inflated: Vec<(f64, f64)> = questions
            .iter()
            .zip(variances)
            .map(|(&q, &v)| (v * q as f64 / (q as f64 - 1.0), q as f64 - 1.0))
            .collect();
        let total: f64 = variances.iter().sum();
        if total.is_nan() || total <= 0.0 {
            return None;
        }
        let factor = (inflated.iter().map(|x| x.0).sum::<f64>() / total).sqrt();
        Expansion::new(factor, satterthwaite(inflated)?, confidence)
    }

    /// One stratum mean's expansion: f = √(Q/(Q − 1)) on Q − 1 df.
    pub fn of_stratum(questions: usize, confidence: f64) -> Option<Expansion> {
        let q = questions as f64;
        (questions >= 2).then(|| Expansion::new((q / (q - 1.0)).sqrt(), q - 1.0, confidence))?
    }
}

/// Whether a finite point estimate has at least one replicate and every replicate equals it
/// (bit for bit): the resamples cannot differ, as when the outcome does not vary between
/// questions.
fn no_spread(point: f64, replicates: &[f64]) -> bool {
    point.is_finite() && !replicates.is_empty() && replicates.iter().all(|v| *v == point)
}
