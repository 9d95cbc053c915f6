//! Nested variance components (questions > trajectories > reads) by balanced ANOVA moments.
//!
//! Per stratum with Q questions, T trajectories, R reads and outcome y_qtr:
//!
//! * SS_q = TR Σ_q (ȳ_q − ȳ)², df Q−1
//! * SS_t = R Σ_q Σ_t (ȳ_qt − ȳ_q)², df Q(T−1)
//! * SS_r = Σ (y_qtr − ȳ_qt)², df QT(R−1)
//!
//! with E\[MS_r\] = σ²_r, E\[MS_t\] = σ²_r + Rσ²_t, E\[MS_q\] = σ²_r + Rσ²_t + TRσ²_q, so
//! σ̂²_r = MS_r, σ̂²_t = (MS_t − MS_r)/R, σ̂²_q = (MS_q − MS_t)/(TR). With T = 1 or R = 1 a
//! level has no degrees of freedom: it is not estimable and its variance is absorbed by the
//! level above (which the fit reports in `notes`).
//!
//! An unbalanced stratum (questions with different numbers of trajectories or reads) is
//! fitted by REML instead ([`super::reml`]); [`analyse_panel`] chooses per stratum, and the
//! pooled fit is REML as soon as one stratum is unbalanced.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cluster::ClusterLevel;
pub use super::levels::{question_mean, se2_terms, Fit, Level, PerLevel};
use super::reml::{self, NestedBuilder, NestedStratum, Shape};
use crate::document::Report;
use crate::inference::measured::{small_sample_notes, Analysis, Design};
use crate::inference::t::{satterthwaite, t_quantile};
use crate::panel::{Panel, Stratum, StratumStats};
use crate::resample::summary::Interval;
use crate::{Error, Result};

/// How a fit was made: closed-form balanced ANOVA moments, or REML (unbalanced strata).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Method {
    #[serde(rename = "ANOVA")]
    Anova,
    #[serde(rename = "REML")]
    Reml,
}

impl Method {
    /// The method's name as printed and serialised.
    pub fn name(self) -> &'static str {
        match self {
            Method::Anova => "ANOVA",
            Method::Reml => "REML",
        }
    }
}

/// Sums of squares and degrees of freedom of a stratum, or pooled over strata.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnovaSums {
    /// Questions (summed over strata when pooled).
    pub questions: usize,
    pub t: usize,
    pub r: usize,
    pub ss_question: f64,
    pub ss_trajectory: f64,
    pub ss_read: f64,
    pub df_question: f64,
    pub df_trajectory: f64,
    pub df_read: f64,
}

impl AnovaSums {
    /// The sums of squares of one stratum from its per-question statistics.
    pub fn of_stratum(s: &StratumStats) -> Self {
        let q = s.q();
        let mean = s.mean();
        let tr = (s.t * s.r) as f64;
        AnovaSums {
            questions: q,
            t: s.t,
            r: s.r,
            ss_question: tr
                * s.questions
                    .iter()
                    .map(|x| (x.mean - mean).powi(2))
                    .sum::<f64>(),
            ss_trajectory: s.questions.iter().map(|x| x.ss_trajectory).sum(),
            ss_read: s.questions.iter().map(|x| x.ss_read).sum(),
            df_question: q as f64 - 1.0,
            df_trajectory: (q * (s.t - 1)) as f64,
            df_read: (q * s.t * (s.r - 1)) as f64,
        }
    }

    /// The dataset-adjusted pooled sums: a separate fixed mean per stratum, sums of squares
    /// and degrees of freedom added over strata (df Σ Q_d − D, Σ Q_d(T−1), Σ Q_d T(R−1)).
    ///
    /// # Errors
    /// [`Error::Data`] when strata differ in T or R (the pooled fit needs a common design).
    pub fn pooled(parts: &[AnovaSums]) -> Result<Self> {
        let first = parts
            .first()
            .ok_or_else(|| Error::Data("no strata to pool".into()))?;
        if let Some(p) = parts.iter().find(|p| p.t != first.t || p.r != first.r) {
            return Err(Error::Data(format!(
                "pooled fit needs equal T and R in every stratum; found T={}, R={} and T={}, R={}",
                first.t, first.r, p.t, p.r
            )));
        }
        Ok(parts.iter().skip(1).fold(*first, |a, p| AnovaSums {
            questions: a.questions + p.questions,
            t: a.t,
            r: a.r,
            ss_question: a.ss_question + p.ss_question,
            ss_trajectory: a.ss_trajectory + p.ss_trajectory,
            ss_read: a.ss_read + p.ss_read,
            df_question: a.df_question + p.df_question,
            df_trajectory: a.df_trajectory + p.df_trajectory,
            df_read: a.df_read + p.df_read,
        }))
    }
}

/// Fits the nested components from sums of squares (see the module docs for the formulas).
///
/// # Errors
/// [`Error::Data`] when the question level has no degrees of freedom (fewer than two
/// questions per stratum).
pub fn fit(s: &AnovaSums) -> Result<Fit> {
    if s.df_question < 1.0 {
        return Err(Error::Data(format!(
            "need at least 2 questions per stratum to estimate the question variance (have {})",
            s.questions
        )));
    }
    let ms_q = s.ss_question / s.df_question;
    let ms_t = (s.t > 1).then(|| s.ss_trajectory / s.df_trajectory);
    let ms_r = (s.r > 1).then(|| s.ss_read / s.df_read);
    let r = s.r as f64;
    let tr = (s.t * s.r) as f64;
    let read = ms_r;
    let trajectory = ms_t.map(|t| match ms_r {
        Some(mr) => (t - mr) / r,
        None => t,
    });
    let below = ms_t.or(ms_r).unwrap_or(0.0);
    let question = (ms_q - below) / tr;
    let mut notes = Vec::new();
    match (s.t > 1, s.r > 1) {
        (true, false) => notes.push(
            "read variance not estimable with R=1: the trajectory component includes it".to_string(),
        ),
        (false, true) => notes.push(
            "trajectory variance not estimable with T=1: the question component includes it".to_string(),
        ),
        (false, false) => notes.push(
            "trajectory and read variance not estimable with T=1, R=1: the question component includes both"
                .to_string(),
        ),
        (true, true) => {}
    }
    let components = PerLevel {
        question,
        trajectory,
        read,
    };
    let mut truncated = Vec::new();
    if question < 0.0 {
        truncated.push(Level::Question);
    }
    if trajectory.is_some_and(|v| v < 0.0) {
        truncated.push(Level::Trajectory);
    }
    if read.is_some_and(|v| v < 0.0) {
        truncated.push(Level::Read);
    }
    Ok(Fit {
        ms: PerLevel {
            question: ms_q,
            trajectory: ms_t,
            read: ms_r,
        },
        df: PerLevel {
            question: s.df_question,
            trajectory: (s.t > 1).then_some(s.df_trajectory),
            read: (s.r > 1).then_some(s.df_read),
        },
        components,
        truncated,
        notes,
    })
}

/// Sum of the present levels.
pub fn total(c: &PerLevel) -> f64 {
    c.question + c.trajectory.unwrap_or(0.0) + c.read.unwrap_or(0.0)
}

/// Each present level's share of the total; `None` when the total is not positive (every
/// component 0: the outcome does not vary, and each share would be 0/0).
pub fn shares(c: &PerLevel) -> Option<PerLevel> {
    let tot = total(c);
    if tot.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let f = |v: f64| v / tot;
    Some(PerLevel {
        question: f(c.question),
        trajectory: c.trajectory.map(f),
        read: c.read.map(f),
    })
}

/// Why a stratum's shares are undefined (`None`): every component is 0.
pub const SHARES_UNDEFINED: &str = "the outcome does not vary";

/// Why the pooled fit's shares are undefined: the strata's own means are removed first,
/// so the outcome may differ between strata and still leave nothing to share.
pub const POOLED_SHARES_UNDEFINED: &str = "the outcome does not vary within any stratum";

/// Everything `stats variance` reports for one stratum.
#[derive(Debug, Clone, Serialize)]
pub struct StratumReport {
    pub name: String,
    /// ANOVA (balanced) or REML (unbalanced).
    pub method: Method,
    pub questions: usize,
    /// Trajectories per question (the mean, rounded, when unbalanced: see `shape`).
    pub trajectories: usize,
    /// Reads per trajectory (the mean, rounded, when unbalanced: see `shape`).
    pub reads: usize,
    /// Questions, and min / mean / max trajectories per question and reads per trajectory,
    /// of an unbalanced stratum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// Questions dropped as incomplete while loading.
    pub dropped: usize,
    pub mean: f64,
    /// Measured SE of the stratum mean, sqrt(MS_q/(QTR)) = s(ȳ_q)/√Q.
    pub se: f64,
    /// REML only: lme4's θ, the REML criterion, and the levels at the boundary 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reml: Option<RemlSummary>,
    /// With clusters (`--cluster`): the cluster level (G, MS_c, σ²_c, its shares). `fit`
    /// then holds the lower levels with questions counted within clusters, the shares are
    /// of the four-level totals, and `se` is the cluster-level SE
    /// ([`super::cluster`]). Absent (not serialised) without clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterLevel>,
    #[serde(flatten)]
    pub fit: Fit,
    /// Shares of the single-observation variance σ²_q + σ²_t + σ²_r (truncated
    /// components; with clusters, of σ²_c + σ²_q + σ²_t + σ²_r); `None` (JSON `null`) when every component is 0 ([`SHARES_UNDEFINED`]).
    pub share_single: Option<PerLevel>,
    /// Shares of SE² at the observed design (truncated components); `None` as
    /// `share_single`.
    pub share_se2: Option<PerLevel>,
    /// Why each `null` share is undefined, keyed by field (`share_single`, `share_se2`):
    /// [`SHARES_UNDEFINED`]. Empty (and not serialised) when both are defined.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub undefined: BTreeMap<&'static str, &'static str>,
}

/// What a REML fit adds to a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemlSummary {
    pub theta: reml::Theta,
    pub criterion: f64,
    pub iterations: usize,
    /// Estimable levels whose component is exactly 0 (lme4's singular fit).
    pub boundary: Vec<Level>,
}

/// The pooled, dataset-adjusted fit.
#[derive(Debug, Clone, Serialize)]
pub struct PooledReport {
    pub method: Method,
    pub questions: usize,
    pub strata: usize,
    pub trajectories: usize,
    pub reads: usize,
    /// With clusters: the pooled cluster level ([`StratumReport::cluster`]); boxed, as
    /// the report is held by value in enums of results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Box<ClusterLevel>>,
    #[serde(flatten)]
    pub fit: Fit,
    /// `None` when every component is 0 ([`POOLED_SHARES_UNDEFINED`]).
    pub share_single: Option<PerLevel>,
    /// Why `share_single` is `null`, when it is (`{"share_single":`
    /// [`POOLED_SHARES_UNDEFINED`]`}`); empty and not serialised otherwise.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub undefined: BTreeMap<&'static str, &'static str>,
}

/// The full variance analysis of a panel.
#[derive(Debug, Clone, Serialize)]
pub struct VarianceReport {
    pub outcome: String,
    /// Σ_d w_d·ȳ_d: the equal-weight mean of the stratum means (w_d = 1/D), or with
    /// `weights` their weighted mean.
    pub estimate: f64,
    /// sqrt(Σ_d w_d²·SE²_d): sqrt(Σ_d SE²_d) / D with equal weights.
    pub se: f64,
    /// The strata's weights w_d (in `strata`'s order, Σ w_d = 1) when they are not equal;
    /// empty (and not serialised) for equal weights.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
    pub strata: Vec<StratumReport>,
    /// `None` with `pooled_unavailable` set when the strata differ in T or R.
    pub pooled: Option<PooledReport>,
    /// Why there is no pooled fit (JSON `null` when there is one).
    pub pooled_unavailable: Option<String>,
}

impl Report for VarianceReport {}

impl VarianceReport {
    /// The Welch–Satterthwaite degrees of freedom of [`Self::se`]:
    /// ν = (Σₛ aₛ)² / Σₛ aₛ² / (Qₛ − 1) with aₛ = wₛ²·SEₛ² (wₛ = 1/D with equal weights),
    /// each stratum's SE resting on its question mean square (Qₛ − 1 df; the same count is
    /// used for a REML stratum), or with clusters on its cluster mean square (Gₛ − 1 df).
    /// `None` when the SE is 0.
    pub fn df(&self) -> Option<f64> {
        let d = self.strata.len() as f64;
        let w = |i: usize| self.weights.get(i).copied();
        satterthwaite(self.strata.iter().enumerate().map(|(i, s)| {
            let a = match w(i) {
                Some(w) => (w * s.se).powi(2),
                None => (s.se / d).powi(2),
            };
            let units = s.cluster.as_ref().map_or(s.questions, |c| c.clusters);
            (a, units as f64 - 1.0)
        }))
    }

    /// This report with its strata combined with `weights` (Σ = 1, one per stratum):
    /// estimate Σ w_d·ȳ_d, SE sqrt(Σ w_d²·SE_d²). Empty `weights` leave it as it is.
    pub fn weighted(mut self, weights: &[f64]) -> Self {
        if weights.is_empty() {
            return self;
        }
        debug_assert_eq!(weights.len(), self.strata.len());
        self.estimate = self
            .strata
            .iter()
            .zip(weights)
            .map(|(s, w)| w * s.mean)
            .sum();
        self.se = self
            .strata
            .iter()
            .zip(weights)
            .map(|(s, w)| (w * s.se).powi(2))
            .sum::<f64>()
            .sqrt();
        self.weights = weights.to_vec();
        self
    }
}

/// The variance analysis of a panel with the metric its outcome was scored by: what `stats
/// variance` reports ([`variance_of_panel`]). Serialises as the analysis's fields plus
/// `metric`.
#[derive(Debug, Clone, Serialize)]
pub struct PanelVariance {
    /// The panel's score column (`f1`, `em` …).
    pub metric: String,
    /// The Welch–Satterthwaite df of the SE ([`VarianceReport::df`]); `null` when the SE is 0.
    pub df: Option<f64>,
    /// The 95% interval estimate ± t₀.₉₇₅,ν · SE on those df.
    pub ci: Interval,
    /// What a reader should know before the numbers: where docs/COVERAGE.md measured the
    /// interval short at a design like this one ([`crate::inference::measured`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub variance: VarianceReport,
}

impl Report for PanelVariance {}

/// [`analyse_panel`] of `panel`, with the panel's metric.
///
/// # Errors
/// Those of [`analyse_panel`].
pub fn variance_of_panel(panel: &Panel) -> Result<PanelVariance> {
    let variance = analyse_panel(panel)?;
    let df = variance.df();
    let t = t_quantile(0.975, df.unwrap_or(f64::INFINITY));
    Ok(PanelVariance {
        metric: panel.metric.clone(),
        df,
        ci: Interval::new(
            variance.estimate - t * variance.se,
            variance.estimate + t * variance.se,
        ),
        notes: small_sample_notes(Analysis::Variance, &Design::of_panel(panel)),
        variance,
    })
}

/// The reasons of a scope's undefined shares: `field → why` for each `None` of `shares`.
fn undefined_shares(
    shares: &[(&'static str, &Option<PerLevel>)],
    why: &'static str,
) -> BTreeMap<&'static str, &'static str> {
    shares
        .iter()
        .filter(|(_, s)| s.is_none())
        .map(|(field, _)| (*field, why))
        .collect()
}

/// `r` with the reason beside every undefined share ([`StratumReport::undefined`],
/// [`PooledReport::undefined`]).
fn with_reasons(mut r: VarianceReport) -> VarianceReport {
    for s in &mut r.strata {
        s.undefined = undefined_shares(
            &[
                ("share_single", &s.share_single),
                ("share_se2", &s.share_se2),
            ],
            SHARES_UNDEFINED,
        );
    }
    if let Some(p) = &mut r.pooled {
        p.undefined = undefined_shares(
            &[("share_single", &p.share_single)],
            POOLED_SHARES_UNDEFINED,
        );
    }
    r
}

/// Equal-weight combination of stratum estimates: (mean of the estimates, sqrt(Σ SE²)/D).
pub fn combine(estimates: &[f64], se2: &[f64]) -> (f64, f64) {
    let d = estimates.len() as f64;
    (
        estimates.iter().sum::<f64>() / d,
        se2.iter().sum::<f64>().sqrt() / d,
    )
}

/// Runs the whole analysis on the sufficient statistics of each stratum.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than two questions.
pub fn analyse(
    outcome: &str,
    strata: &[StratumStats],
    dropped: &[usize],
) -> Result<VarianceReport> {
    let mut reports = Vec::with_capacity(strata.len());
    let mut sums = Vec::with_capacity(strata.len());
    for (i, s) in strata.iter().enumerate() {
        let a = AnovaSums::of_stratum(s);
        let f = fit(&a).map_err(|e| Error::Data(format!("stratum '{}': {e}", s.name)))?;
        let (q, t, r) = (s.q() as f64, s.t as f64, s.r as f64);
        let trunc = f.truncated();
        reports.push(StratumReport {
            name: s.name.clone(),
            method: Method::Anova,
            questions: s.q(),
            trajectories: s.t,
            reads: s.r,
            shape: None,
            dropped: dropped.get(i).copied().unwrap_or(0),
            mean: s.mean(),
            se: (f.ms.question / (q * t * r)).sqrt(),
            reml: None,
            cluster: None,
            share_single: shares(&trunc),
            share_se2: shares(&se2_terms(&trunc, q, t, r)),
            undefined: BTreeMap::new(),
            fit: f,
        });
        sums.push(a);
    }
    let means: Vec<f64> = reports.iter().map(|s| s.mean).collect();
    let se2: Vec<f64> = reports.iter().map(|s| s.se * s.se).collect();
    let (estimate, se) = combine(&means, &se2);
    let (pooled, pooled_unavailable) =
        match AnovaSums::pooled(&sums).and_then(|p| Ok((p, fit(&p)?))) {
            Ok((p, f)) => (
                Some(PooledReport {
                    method: Method::Anova,
                    questions: p.questions,
                    strata: strata.len(),
                    trajectories: p.t,
                    reads: p.r,
                    cluster: None,
                    share_single: shares(&f.truncated()),
                    undefined: BTreeMap::new(),
                    fit: f,
                }),
                None,
            ),
            Err(e) => (None, Some(e.to_string())),
        };
    Ok(with_reasons(VarianceReport {
        weights: Vec::new(),
        outcome: outcome.to_string(),
        estimate,
        se,
        strata: reports,
        pooled,
        pooled_unavailable,
    }))
}

/// The outcomes of a stratum, balanced or not, as REML's nested layout.
///
/// # Errors
/// [`Error::Data`] for a stratum without questions.
pub fn nested_stratum(s: &Stratum) -> Result<NestedStratum> {
    let mut b = NestedBuilder::new();
    for q in 0..s.q() {
        for t in s.trajectories_of(q) {
            b.trajectory(t)?;
        }
        b.end_question()?;
    }
    b.finish()
}

/// A REML fit as a [`Fit`]: the components and notes, no mean squares, nothing truncated
/// (REML keeps components ≥ 0 by fitting on the boundary instead).
fn reml_fit(f: &reml::RemlFit) -> (Fit, RemlSummary) {
    let mut notes = f.notes.clone();
    for l in &f.boundary {
        notes.push(format!(
            "{} component at the boundary 0 (REML, as lme4's singular fit)",
            l.name()
        ));
    }
    (
        Fit {
            ms: PerLevel::NONE,
            df: PerLevel::NONE,
            components: f.components,
            truncated: Vec::new(),
            notes,
        },
        RemlSummary {
            theta: f.theta,
            criterion: f.criterion,
            iterations: f.iterations,
            boundary: f.boundary.clone(),
        },
    )
}

/// The equal-weight mean of question means (each the mean of its trajectory means) and its
/// measured SE s(ȳ_q)/√Q: model-free, and for a balanced stratum the same as ȳ and
/// sqrt(MS_q/(QTR)).
pub fn question_mean_se(s: &Stratum) -> (f64, f64) {
    let means: Vec<f64> = (0..s.q()).map(|q| question_mean(s, q)).collect();
    let n = means.len() as f64;
    let m = means.iter().sum::<f64>() / n;
    let var = means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// The variance analysis of a loaded panel: balanced strata by closed-form ANOVA (exactly
/// [`analyse`]), unbalanced strata by REML; the pooled fit by ANOVA when every stratum is
/// balanced, else by REML with a fixed mean per stratum over all strata.
///
/// For a REML stratum, `trajectories` and `reads` are the rounded mean design (`shape` has
/// min / mean / max), `mean` and `se` come from [`question_mean_se`], and the SE² shares are
/// taken at the mean design (Q, T̄, R̄). The strata are combined with the panel's weights
/// ([`Panel::weights`], [`VarianceReport::weighted`]).
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than two questions, or a REML fit fails.
pub fn analyse_panel(panel: &Panel) -> Result<VarianceReport> {
    Ok(analyse_strata(panel)?.weighted(&panel.weights))
}

/// [`analyse_panel`] with equal weights.
fn analyse_strata(panel: &Panel) -> Result<VarianceReport> {
    if panel.is_clustered() {
        return analyse_clustered(panel);
    }
    if panel.strata.iter().all(Stratum::is_balanced) {
        let stats: Vec<StratumStats> = panel
            .strata
            .iter()
            .map(StratumStats::from_stratum)
            .collect();
        let dropped: Vec<usize> = panel.strata.iter().map(|s| s.dropped).collect();
        return analyse(&panel.outcome, &stats, &dropped);
    }
    let nested: Vec<NestedStratum> = panel
        .strata
        .iter()
        .map(nested_stratum)
        .collect::<Result<_>>()?;
    let mut reports = Vec::with_capacity(panel.strata.len());
    for (i, s) in panel.strata.iter().enumerate() {
        if s.is_balanced() {
            let stats = [StratumStats::from_stratum(s)];
            let one = analyse(&panel.outcome, &stats, &[s.dropped])?;
            reports.push(one.strata.into_iter().next().expect("one stratum"));
            continue;
        }
        let n = &nested[i];
        if n.questions() < 2 {
            return Err(Error::Data(format!(
                "stratum '{}': need at least 2 questions per stratum to estimate the question variance (have {})",
                s.name,
                n.questions()
            )));
        }
        let f = reml::fit(&[n]).map_err(|e| Error::Data(format!("stratum '{}': {e}", s.name)))?;
        let (fit, summary) = reml_fit(&f);
        let shape = n.shape();
        let (mean, se) = question_mean_se(s);
        let (q, t, r) = (
            shape.questions as f64,
            shape.trajectories.mean,
            shape.reads.mean,
        );
        let trunc = fit.truncated();
        reports.push(StratumReport {
            name: s.name.clone(),
            method: Method::Reml,
            questions: shape.questions,
            trajectories: t.round() as usize,
            reads: r.round() as usize,
            shape: Some(shape),
            dropped: s.dropped,
            mean,
            se,
            reml: Some(summary),
            cluster: None,
            share_single: shares(&trunc),
            share_se2: shares(&se2_terms(&trunc, q, t, r)),
            undefined: BTreeMap::new(),
            fit,
        });
    }
    let means: Vec<f64> = reports.iter().map(|s| s.mean).collect();
    let se2: Vec<f64> = reports.iter().map(|s| s.se * s.se).collect();
    let (estimate, se) = combine(&means, &se2);
    let refs: Vec<&NestedStratum> = nested.iter().collect();
    let (pooled, pooled_unavailable) = match reml::fit(&refs) {
        Ok(f) => {
            let (fit, _) = reml_fit(&f);
            let shapes: Vec<Shape> = nested.iter().map(NestedStratum::shape).collect();
            let questions: usize = shapes.iter().map(|s| s.questions).sum();
            let trajectories: usize = shapes.iter().map(|s| s.trajectories.total).sum();
            let rows: usize = shapes.iter().map(|s| s.reads.total).sum();
            (
                Some(PooledReport {
                    method: Method::Reml,
                    questions,
                    strata: nested.len(),
                    trajectories: (trajectories as f64 / questions as f64).round() as usize,
                    reads: (rows as f64 / trajectories as f64).round() as usize,
                    cluster: None,
                    share_single: shares(&fit.truncated()),
                    undefined: BTreeMap::new(),
                    fit,
                }),
                None,
            )
        }
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(with_reasons(VarianceReport {
        weights: Vec::new(),
        outcome: panel.outcome.clone(),
        estimate,
        se,
        strata: reports,
        pooled,
        pooled_unavailable,
    }))
}

/// The four-level analysis of a panel with clusters ([`super::cluster`]): a stratum whose
/// clusters all have M questions of T trajectories of R reads by the nested ANOVA, any
/// other by REML; the pooled fit by ANOVA when every stratum is balanced with a common M,
/// T and R, else by REML with a fixed mean per stratum. Each stratum's SE is the
/// cluster-level SE.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than two clusters, or a REML fit fails.
fn analyse_clustered(panel: &Panel) -> Result<VarianceReport> {
    use super::cluster::{anova_pooled, anova_stratum, clustered_mean_se, reml_fit};
    let mut reports = Vec::with_capacity(panel.strata.len());
    let mut anovas = Vec::new();
    let mut sizes = Vec::new();
    let mut pairs = Vec::new();
    let (mut t_sum, mut r_sum, mut n_t, mut n_q) = (0.0, 0.0, 0.0, 0.0);
    for s in &panel.strata {
        let c = s
            .clusters
            .as_ref()
            .expect("a clustered panel's strata have clusters");
        let named = |e: Error| Error::Data(format!("stratum '{}': {e}", s.name));
        let (mean, robust_se) = clustered_mean_se(s, c).ok_or_else(|| {
            Error::Data(format!(
                "stratum '{}': need at least 2 clusters per stratum to estimate the cluster \
                 variance (have {})",
                s.name,
                c.g()
            ))
        })?;
        sizes.extend(c.sizes());
        pairs.push((s, c));
        let m = c.common_size().filter(|_| s.is_balanced());
        let report = match m {
            Some(m) => {
                let (cf, a) = anova_stratum(s, c, m).map_err(named)?;
                anovas.push(a);
                let n = (s.q() * s.t() * s.r()) as f64;
                t_sum += (s.q() * s.t()) as f64;
                r_sum += n;
                n_q += s.q() as f64;
                n_t += (s.q() * s.t()) as f64;
                StratumReport {
                    name: s.name.clone(),
                    method: Method::Anova,
                    questions: s.q(),
                    trajectories: s.t(),
                    reads: s.r(),
                    shape: None,
                    dropped: s.dropped,
                    mean,
                    se: (cf.cluster.ms.unwrap_or(f64::NAN) / n).sqrt(),
                    reml: None,
                    cluster: Some(cf.cluster),
                    share_single: cf.share_single,
                    share_se2: cf.share_se2,
                    undefined: BTreeMap::new(),
                    fit: cf.fit,
                }
            }
            None => {
                let shape = nested_stratum(s)?.shape();
                t_sum += shape.trajectories.total as f64;
                r_sum += shape.reads.total as f64;
                n_q += shape.questions as f64;
                n_t += shape.trajectories.total as f64;
                let cf = reml_fit(&[(s, c)], shape.trajectories.mean, shape.reads.mean, true)
                    .map_err(named)?;
                StratumReport {
                    name: s.name.clone(),
                    method: Method::Reml,
                    questions: shape.questions,
                    trajectories: shape.trajectories.mean.round() as usize,
                    reads: shape.reads.mean.round() as usize,
                    shape: Some(shape),
                    dropped: s.dropped,
                    mean,
                    se: robust_se,
                    reml: None,
                    cluster: Some(cf.cluster),
                    share_single: cf.share_single,
                    share_se2: cf.share_se2,
                    undefined: BTreeMap::new(),
                    fit: cf.fit,
                }
            }
        };
        reports.push(report);
    }
    let means: Vec<f64> = reports.iter().map(|s| s.mean).collect();
    let se2: Vec<f64> = reports.iter().map(|s| s.se * s.se).collect();
    let (estimate, se) = combine(&means, &se2);
    let all_anova = anovas.len() == panel.strata.len();
    let (t_mean, r_mean) = (t_sum / n_q, r_sum / n_t);
    let pooled_fit = if all_anova {
        anova_pooled(&anovas, &sizes)
    } else {
        reml_fit(&pairs, t_mean, r_mean, false)
    };
    let (pooled, pooled_unavailable) = match pooled_fit {
        Ok(cf) => (
            Some(PooledReport {
                method: if all_anova {
                    Method::Anova
                } else {
                    Method::Reml
                },
                questions: n_q as usize,
                strata: panel.strata.len(),
                trajectories: t_mean.round() as usize,
                reads: r_mean.round() as usize,
                cluster: Some(Box::new(cf.cluster)),
                share_single: cf.share_single,
                undefined: BTreeMap::new(),
                fit: cf.fit,
            }),
            None,
        ),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(with_reasons(VarianceReport {
        weights: Vec::new(),
        outcome: panel.outcome.clone(),
        estimate,
        se,
        strata: reports,
        pooled,
        pooled_unavailable,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{document, Inputs};
    use serde_json::{json, Value};

    /// A balanced stratum built in code: Q questions × T × R outcomes `y` (question-major).
    fn stratum(name: &str, q: usize, t: usize, r: usize, y: Vec<f64>) -> Stratum {
        Stratum {
            name: name.into(),
            questions: (1..=q).map(|i| format!("q{i}")).collect(),
            trajectories: (0..t).map(|i| i.to_string()).collect(),
            reads: (0..r).map(|i| i.to_string()).collect(),
            y,
            ..Default::default()
        }
    }

    /// Stratum `d` (Q=3, T=2, R=2, the hand-worked panel of tests/it/variance.rs) and stratum
    /// `flat`, whose outcome is 1 everywhere, so its shares are undefined.
    fn panel() -> Panel {
        let tiny = vec![1., 3., 2., 6., 0., 0., 4., 2., 5., 5., 5., 7.];
        Panel {
            notes: Vec::new(),
            weights: Vec::new(),
            source: "tiny.csv".into(),
            metric: "f1".into(),
            outcome: "f1".into(),
            selectors: Vec::new(),
            selector: None,
            strata: vec![
                stratum("d", 3, 2, 2, tiny),
                stratum("flat", 3, 2, 2, vec![1.0; 12]),
            ],
        }
    }

    #[test]
    fn the_variance_document_has_the_metric_the_reasons_and_no_engine() {
        let report = variance_of_panel(&panel()).unwrap();
        assert_eq!(report.engine(), crate::document::Engine::default());
        let doc = document("variance", Inputs::new().with("panel", "tiny.csv"), &report);
        let keys = crate::document::keys(&doc);
        assert_eq!(
            keys,
            [
                "ci",
                "df",
                "estimate",
                "metric",
                "outcome",
                "pooled",
                "pooled_unavailable",
                "run",
                "se",
                "strata"
            ]
        );
        assert_eq!(doc["metric"], "f1");
        assert_eq!(doc["run"]["inputs"], json!({"panel": "tiny.csv"}));
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(doc["run"][key], Value::Null, "{key}");
        }
        // Stratum means 10/3 and 1, equal weights: (10/3 + 1)/2 = 13/6. SE: d's is 7/6
        // (MS_q/(QTR) = 49/36), flat's 0, so sqrt(49/36)/2 = 7/12.
        let close = |v: &Value, want: f64| {
            let got = v.as_f64().unwrap();
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        };
        close(&doc["estimate"], 13.0 / 6.0);
        close(&doc["se"], 7.0 / 12.0);
        assert_eq!(doc["pooled_unavailable"], Value::Null);
        let d = &doc["strata"][0];
        close(&d["components"]["question"], 35.0 / 12.0);
        close(&d["share_single"]["question"], 35.0 / 77.0);
        assert!(d.get("undefined").is_none(), "{d}");
        let flat = &doc["strata"][1];
        assert_eq!(flat["share_single"], Value::Null);
        assert_eq!(flat["share_se2"], Value::Null);
        assert_eq!(
            flat["undefined"],
            json!({"share_single": SHARES_UNDEFINED, "share_se2": SHARES_UNDEFINED})
        );
        // The pooled fit removes each stratum's mean; d still varies within, so its shares
        // are defined.
        assert!(doc["pooled"]["share_single"].is_object());
        assert!(doc["pooled"].get("undefined").is_none());
    }

    #[test]
    fn a_pooled_fit_without_variation_says_why_its_shares_are_undefined() {
        let mut p = panel();
        p.strata[0] = stratum("two", 3, 2, 2, vec![2.0; 12]);
        let doc = crate::document::to_body(&variance_of_panel(&p).unwrap());
        assert_eq!(doc["pooled"]["share_single"], Value::Null);
        assert_eq!(
            doc["pooled"]["undefined"],
            json!({"share_single": POOLED_SHARES_UNDEFINED})
        );
        // The strata differ (2 and 1), so the combined estimate is their mean, 1.5, with SE 0.
        assert_eq!(doc["estimate"], 1.5);
        assert_eq!(doc["se"], 0.0);
    }
}
