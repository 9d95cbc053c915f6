//! D-study forecasts of the standard error of an allocation (Q′, T′, R′).
//!
//! Nested forecast per stratum d, with components truncated at zero:
//! SE²_d = σ²_q/Q′_d + σ²_t/(Q′_d T′) + σ²_r/(Q′_d T′ R′); strata combine with the
//! audit's weights, SE² = Σ_d w_d² SE²_d ([`Audit::weights`]; equal weights 1/D give
//! (1/D²) Σ_d SE²_d).
//!
//! Q-only forecast: keep the audit's measured per-question variance (at the audit's T and
//! R) and scale, SE_d = SE_audit,d · sqrt(Q_audit,d / Q′_d); T′ and R′ are ignored.
//!
//! [`forecast_designs`] forecasts a list of designs as one report, and
//! [`ForecastReport::compare_measured`] sets a measured panel's SE beside the forecasts of
//! its own design.

use std::path::{Path, PathBuf};

use crate::panel::design::{positive_count, split_fields, Design, DesignError};
use serde::{Deserialize, Serialize};

use super::variance::{analyse_panel, combine, PerLevel, VarianceReport};
use crate::document::Report;
use crate::io::jsonl::parse_document;
use crate::io::read_text;
use crate::panel::{Panel, Weights};
use crate::{Error, Result};

/// What a forecast needs to know about one audited stratum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditStratum {
    pub name: String,
    pub questions: usize,
    pub trajectories: usize,
    pub reads: usize,
    /// Measured SE of the stratum mean in the audit.
    pub se: f64,
    /// Raw components (truncated when used).
    pub components: PerLevel,
    /// With clusters: the cluster level of the audit (`components` are then the lower
    /// levels, questions within clusters). Absent (`null` or missing) without clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<AuditCluster>,
}

/// What a forecast needs of an audited stratum's cluster level: G, the mean questions per
/// cluster and σ²_c (raw; truncated when used). Read from the `cluster` object of a
/// clustered variance report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AuditCluster {
    pub clusters: usize,
    pub questions_per_cluster: f64,
    pub component: f64,
}

impl AuditCluster {
    /// The forecast's view of a fitted cluster level.
    pub fn of(c: &super::cluster::ClusterLevel) -> Self {
        AuditCluster {
            clusters: c.clusters,
            questions_per_cluster: c.questions_per_cluster,
            component: c.component,
        }
    }
}

/// The audit a forecast is calibrated on.
#[derive(Debug, Clone, PartialEq)]
pub struct Audit {
    pub strata: Vec<AuditStratum>,
    /// Pooled (dataset-adjusted) components, when the audit had them.
    pub pooled: Option<PerLevel>,
    /// With clusters: the pooled σ²_c (raw), when the audit had a pooled fit.
    pub pooled_cluster: Option<f64>,
    /// The strata's weights w_d in the combined estimate Σ_d w_d·ȳ_d (Σ w_d = 1, in
    /// `strata`'s order), which every forecast's SE² = Σ_d w_d² SE²_d follows; empty for
    /// equal weights (1/D, computed as before weights existed, to the last bit).
    pub weights: Vec<f64>,
}

/// SE² of the combined estimate Σ_d w_d·ȳ_d from each stratum's SE²_d (`se2`, strata
/// order): Σ_d w_d² SE²_d, or with equal weights (`weights` empty) Σ_d SE²_d / D².
pub fn combined_se2(se2: &[f64], weights: &[f64]) -> f64 {
    if weights.is_empty() {
        let d2 = (se2.len() * se2.len()) as f64;
        se2.iter().sum::<f64>() / d2
    } else {
        debug_assert_eq!(se2.len(), weights.len());
        se2.iter().zip(weights).map(|(v, w)| w * w * v).sum()
    }
}

/// SE of the combined estimate: sqrt(Σ_d w_d² SE²_d), or with equal weights (`weights`
/// empty) sqrt(Σ_d SE²_d) / D, as [`combine`] computes it.
pub fn combined_se(se2: &[f64], weights: &[f64]) -> f64 {
    if weights.is_empty() {
        combine(&vec![0.0; se2.len()], se2).1
    } else {
        combined_se2(se2, weights).sqrt()
    }
}

impl Audit {
    /// The audit from a variance analysis.
    pub fn from_report(r: &VarianceReport) -> Self {
        Audit {
            strata: r
                .strata
                .iter()
                .map(|s| AuditStratum {
                    name: s.name.clone(),
                    questions: s.questions,
                    trajectories: s.trajectories,
                    reads: s.reads,
                    se: s.se,
                    components: s.fit.components,
                    cluster: s.cluster.as_ref().map(AuditCluster::of),
                })
                .collect(),
            pooled: r.pooled.as_ref().map(|p| p.fit.components),
            pooled_cluster: r
                .pooled
                .as_ref()
                .and_then(|p| p.cluster.as_ref())
                .map(|c| c.component),
            weights: r.weights.clone(),
        }
    }

    /// This audit with its strata weighted by `weights` (resolved against the strata's
    /// names and question counts, [`Weights::resolve`]); `source` names the audit in errors.
    /// [`Weights::Equal`] makes them equal.
    ///
    /// # Errors
    /// [`Error::Input`] naming `source` for a stratum without a weight, a weight for a
    /// stratum the audit lacks, or weights summing to 0.
    pub fn weighted(mut self, weights: &Weights, source: &Path) -> Result<Self> {
        let names: Vec<&str> = self.strata.iter().map(|s| s.name.as_str()).collect();
        let questions: Vec<usize> = self.strata.iter().map(|s| s.questions).collect();
        self.weights = weights.resolve(source, &names, &questions)?;
        Ok(self)
    }

    /// The audit from a components file: the JSON that `stats variance --format json` writes.
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be read; [`Error::Input`] naming the file and line when
    /// it is not UTF-8 or not such a document.
    pub fn read_components(path: &std::path::Path) -> Result<Self> {
        Self::from_variance_json(&read_text(path)?, path)
    }

    /// The audit from the JSON text that `stats variance --format json` writes.
    ///
    /// # Errors
    /// [`Error::Input`] naming `source` when the text is not such a document (or names a
    /// key twice).
    pub fn from_variance_json(text: &str, source: &std::path::Path) -> Result<Self> {
        #[derive(Deserialize)]
        struct PooledCluster {
            component: f64,
        }
        #[derive(Deserialize)]
        struct Pooled {
            components: PerLevel,
            #[serde(default)]
            cluster: Option<PooledCluster>,
        }
        #[derive(Deserialize)]
        struct Doc {
            strata: Vec<AuditStratum>,
            pooled: Option<Pooled>,
            /// Written by `stats variance --weights`; absent for equal weights.
            #[serde(default)]
            weights: Vec<f64>,
        }
        let doc: Doc = parse_document(
            source,
            text,
            "not a components file (the JSON report of the variance analysis)",
        )?;
        if doc.strata.is_empty() {
            return Err(Error::input(source, None, "components file has no strata"));
        }
        let total: f64 = doc.weights.iter().sum();
        if !doc.weights.is_empty()
            && (doc.weights.len() != doc.strata.len()
                || doc.weights.iter().any(|w| !(w.is_finite() && *w >= 0.0))
                || (total - 1.0).abs() > 1e-9)
        {
            return Err(Error::input(
                source,
                None,
                format!(
                    "components file: 'weights' must give one weight ≥ 0 per stratum ({}), \
                     summing to 1, as the weighted variance analysis writes them",
                    doc.strata.len()
                ),
            ));
        }
        Ok(Audit {
            strata: doc.strata,
            pooled_cluster: doc
                .pooled
                .as_ref()
                .and_then(|p| p.cluster.as_ref())
                .map(|c| c.component),
            pooled: doc.pooled.map(|p| p.components),
            weights: doc.weights,
        })
    }
}

/// An allocation to forecast: total questions split in the audit's proportions, or explicit
/// per-stratum question counts; T′ and R′ are common to all strata.
#[derive(Debug, Clone, PartialEq)]
pub enum DesignSpec {
    /// `Q:T:R`: Q questions in all.
    Total(Design),
    /// `name=Q,name=Q:T:R`.
    PerStratum {
        questions: Vec<(String, usize)>,
        t: usize,
        r: usize,
    },
    /// `GxM:T:R`: G clusters in all (split over strata in the audit's proportions of
    /// clusters), M questions in each; the audit must have a cluster level.
    Clustered {
        clusters: usize,
        per_cluster: usize,
        t: usize,
        r: usize,
    },
}

/// `G x M` (`x`, `X` or `×`) of a clustered design's first field, when it is one.
fn clusters_by_size(q: &str) -> Option<(&str, &str)> {
    q.split_once(['x', 'X', '×'])
}

impl std::str::FromStr for DesignSpec {
    type Err = Error;

    /// Parses `Q:T:R` or `name=Q,name=Q:T:R`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::Usage(format!(
                "bad design '{s}': {why}; expected Q:T:R (e.g. 446:2:1), per-stratum counts (e.g. hotpotqa=300,musique=146:2:1) or G clusters of M questions GxM:T:R (e.g. 100x4:2:1)"
            ))
        };
        let why = |e: DesignError| match e {
            DesignError::Fields => bad("need three ':'-separated fields"),
            DesignError::NotPositive { field, text } => {
                bad(&format!("{field} must be a positive integer, got '{text}'"))
            }
        };
        let (q, t, r) = split_fields(s).map_err(why)?;
        if let Some((g, m)) = clusters_by_size(q).filter(|_| !q.contains('=')) {
            let count = |text: &str, field| {
                positive_count(text).ok_or_else(|| {
                    why(DesignError::NotPositive {
                        field,
                        text: text.trim().to_string(),
                    })
                })
            };
            return Ok(DesignSpec::Clustered {
                clusters: count(g, "G")?,
                per_cluster: count(m, "M")?,
                t,
                r,
            });
        }
        if q.contains('=') {
            let mut questions = Vec::new();
            for item in q.split(',') {
                let (name, n) = item
                    .split_once('=')
                    .ok_or_else(|| bad(&format!("'{item}' is not name=Q")))?;
                let n = positive_count(n).ok_or_else(|| {
                    why(DesignError::NotPositive {
                        field: "Q",
                        text: n.to_string(),
                    })
                })?;
                questions.push((name.trim().to_string(), n));
            }
            Ok(DesignSpec::PerStratum { questions, t, r })
        } else {
            Ok(DesignSpec::Total(
                Design::from_fields(q, t, r).map_err(why)?,
            ))
        }
    }
}

/// One forecast row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forecast {
    /// Total questions.
    pub questions: usize,
    /// Questions per stratum (audit order).
    pub per_stratum: Vec<(String, usize)>,
    pub trajectories: usize,
    pub reads: usize,
    /// A clustered design (`GxM:T:R`): G clusters in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<usize>,
    /// A clustered design: M questions per cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub questions_per_cluster: Option<usize>,
    /// A clustered design: clusters per stratum (audit order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters_per_stratum: Vec<(String, usize)>,
    pub se_nested: f64,
    /// The audit's SE scaled by its questions (clustered designs: by its clusters,
    /// SE_audit · sqrt(G_audit / G′)).
    pub se_q_only: f64,
}

/// What the forecast cannot vary: for each set of components used (each stratum's, or the
/// pooled ones with `pooled`) with a level that was not estimable in the audit (R = 1 or
/// T = 1), a note saying that level's variance is folded into the level above and the
/// forecast cannot vary R (or T): the SE is the same for every R′ (T′).
pub fn folded_notes(audit: &Audit, pooled: bool) -> Vec<String> {
    let sets: Vec<(String, PerLevel)> = match (pooled, audit.pooled) {
        (true, Some(p)) => vec![("pooled".to_string(), p)],
        _ => audit
            .strata
            .iter()
            .map(|s| (s.name.clone(), s.components))
            .collect(),
    };
    let mut notes = Vec::new();
    for (name, c) in sets {
        match (c.trajectory.is_some(), c.read.is_some()) {
            (true, false) => notes.push(format!(
                "{name}: the audit has R = 1, so the read component is folded into the trajectory \
                 component and the forecast cannot vary R (every R' gives the same SE)"
            )),
            (false, true) => notes.push(format!(
                "{name}: the audit has T = 1, so the trajectory component is folded into the question \
                 component and the forecast cannot vary T (every T' gives the same SE)"
            )),
            (false, false) => notes.push(format!(
                "{name}: the audit has T = 1 and R = 1, so the trajectory and read components are \
                 folded into the question component and the forecast cannot vary T or R"
            )),
            (true, true) => {}
        }
    }
    notes
}

/// Splits `total` questions over strata in proportion to `weights` by largest remainder
/// (ties to the earlier stratum), so the parts sum to `total` exactly.
pub fn split_questions(total: usize, weights: &[usize]) -> Vec<usize> {
    let w: f64 = weights.iter().sum::<usize>() as f64;
    let exact: Vec<f64> = weights
        .iter()
        .map(|&x| total as f64 * x as f64 / w)
        .collect();
    let mut parts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut left = total - parts.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.partial_cmp(&ra)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        parts[i] += 1;
        left -= 1;
    }
    parts
}

/// Nested D-study SE² of one stratum at (q, t, r) from truncated components; a level that
/// was not estimable contributes nothing (its variance sits in the level above).
pub fn nested_se2(c: &PerLevel, q: f64, t: f64, r: f64) -> f64 {
    let c = c.truncated();
    c.question / q + c.trajectory.unwrap_or(0.0) / (q * t) + c.read.unwrap_or(0.0) / (q * t * r)
}

/// Clustered D-study SE² of one stratum with G clusters of M questions at (T, R): σ²_c/G +
/// σ²_q/(GM) + σ²_t/(GMT) + σ²_r/(GMTR), components truncated at zero (`cluster` raw σ²_c).
pub fn clustered_se2(cluster: f64, c: &PerLevel, g: f64, m: f64, t: f64, r: f64) -> f64 {
    cluster.max(0.0) / g + nested_se2(c, g * m, t, r)
}

/// Whether the audit's strata have a cluster level.
pub fn audit_is_clustered(audit: &Audit) -> bool {
    !audit.strata.is_empty() && audit.strata.iter().all(|s| s.cluster.is_some())
}

/// Forecasts a clustered design (`GxM:T:R`): G split over strata in proportion to the
/// audit's clusters, SE²_d from [`clustered_se2`], the "Q-only" SE scaled by clusters.
fn forecast_clustered(
    audit: &Audit,
    (g, m, t, r): (usize, usize, usize, usize),
    pooled: bool,
) -> Result<Forecast> {
    let clusters: Vec<&AuditCluster> = audit
        .strata
        .iter()
        .map(|s| s.cluster.as_ref())
        .collect::<Option<_>>()
        .ok_or_else(|| {
            Error::Usage(
                "a clustered design GxM:T:R needs an audit with a cluster level: read the \
                 audit with its cluster column"
                    .into(),
            )
        })?;
    let w: Vec<usize> = clusters.iter().map(|c| c.clusters).collect();
    let counts = split_questions(g, &w);
    if let Some(i) = counts.iter().position(|&n| n == 0) {
        return Err(Error::Usage(format!(
            "the design leaves stratum '{}' with no clusters; ask for more clusters",
            audit.strata[i].name
        )));
    }
    let pooled_c = if pooled {
        Some((
            audit
                .pooled
                .ok_or_else(|| Error::Usage("the audit has no pooled components".into()))?,
            audit
                .pooled_cluster
                .ok_or_else(|| Error::Usage("the audit has no pooled components".into()))?,
        ))
    } else {
        None
    };
    let mut nested = Vec::new();
    let mut q_only = Vec::new();
    for ((s, c), &gd) in audit.strata.iter().zip(&clusters).zip(&counts) {
        let (lower, sc) = pooled_c.unwrap_or((s.components, c.component));
        let gf = gd as f64;
        nested.push(clustered_se2(sc, &lower, gf, m as f64, t as f64, r as f64));
        q_only.push(s.se * s.se * c.clusters as f64 / gf);
    }
    let names = audit.strata.iter().map(|s| s.name.clone());
    Ok(Forecast {
        questions: g * m,
        per_stratum: names.clone().zip(counts.iter().map(|&n| n * m)).collect(),
        trajectories: t,
        reads: r,
        clusters: Some(g),
        questions_per_cluster: Some(m),
        clusters_per_stratum: names.zip(counts.iter().copied()).collect(),
        se_nested: combined_se(&nested, &audit.weights),
        se_q_only: combined_se(&q_only, &audit.weights),
    })
}

/// Forecasts one design from an audit. With `pooled`, every stratum uses the pooled
/// components for the nested forecast (the Q-only forecast always uses each stratum's SE).
///
/// With a clustered audit, `GxM:T:R` designs are forecast by [`clustered_se2`]; an
/// unclustered design (`Q:T:R`, or per stratum) keeps meaning independent questions: each
/// question its own cluster (G = Q, M = 1), SE²_d = (σ²_c + σ²_q)/Q + σ²_t/(QT) + σ²_r/(QTR).
///
/// # Errors
/// [`Error::Usage`] when a per-stratum design names an unknown stratum or misses one, when
/// a stratum would get zero questions (clusters), when `pooled` is asked of an audit
/// without it, or a clustered design of an audit without clusters.
pub fn forecast(audit: &Audit, design: &DesignSpec, pooled: bool) -> Result<Forecast> {
    if let DesignSpec::Clustered {
        clusters,
        per_cluster,
        t,
        r,
    } = design
    {
        return forecast_clustered(audit, (*clusters, *per_cluster, *t, *r), pooled);
    }
    let (counts, t, r) = match design {
        DesignSpec::Clustered { .. } => unreachable!("forecast above"),
        DesignSpec::Total(d) => {
            let w: Vec<usize> = audit.strata.iter().map(|s| s.questions).collect();
            (split_questions(d.questions, &w), d.trajectories, d.reads)
        }
        DesignSpec::PerStratum { questions, t, r } => {
            let mut counts = Vec::with_capacity(audit.strata.len());
            for s in &audit.strata {
                let q = questions
                    .iter()
                    .find(|(n, _)| n == &s.name)
                    .map(|(_, q)| *q)
                    .ok_or_else(|| {
                        Error::Usage(format!(
                            "design gives no question count for stratum '{}'",
                            s.name
                        ))
                    })?;
                counts.push(q);
            }
            if let Some((n, _)) = questions
                .iter()
                .find(|(n, _)| !audit.strata.iter().any(|s| &s.name == n))
            {
                let known: Vec<&str> = audit.strata.iter().map(|s| s.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "design names stratum '{n}', which the audit does not have (strata: {})",
                    known.join(", ")
                )));
            }
            (counts, *t, *r)
        }
    };
    if let Some(i) = counts.iter().position(|&q| q == 0) {
        return Err(Error::Usage(format!(
            "the design leaves stratum '{}' with no questions; ask for more questions",
            audit.strata[i].name
        )));
    }
    let pooled_c = if pooled {
        Some(
            audit
                .pooled
                .ok_or_else(|| Error::Usage("the audit has no pooled components".into()))?,
        )
    } else {
        None
    };
    let mut nested = Vec::new();
    let mut q_only = Vec::new();
    for (s, &q) in audit.strata.iter().zip(&counts) {
        let c = pooled_c.unwrap_or(s.components);
        // A clustered audit: each question of the design its own cluster.
        let sc = match (pooled, &s.cluster) {
            (_, None) => 0.0,
            (true, Some(_)) => audit.pooled_cluster.unwrap_or(0.0),
            (false, Some(cl)) => cl.component,
        };
        nested.push(sc.max(0.0) / q as f64 + nested_se2(&c, q as f64, t as f64, r as f64));
        q_only.push(s.se * s.se * s.questions as f64 / q as f64);
    }
    Ok(Forecast {
        questions: counts.iter().sum(),
        per_stratum: audit
            .strata
            .iter()
            .map(|s| s.name.clone())
            .zip(counts.iter().copied())
            .collect(),
        trajectories: t,
        reads: r,
        clusters: None,
        questions_per_cluster: None,
        clusters_per_stratum: Vec::new(),
        se_nested: combined_se(&nested, &audit.weights),
        se_q_only: combined_se(&q_only, &audit.weights),
    })
}

/// What [`forecast_designs`] forecasts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ForecastJob {
    /// The allocations as given, `Q:T:R` or per stratum `name=Q,name=Q:T:R`, forecast in
    /// this order.
    pub designs: Vec<String>,
    /// Every stratum's nested forecast from the pooled components instead of its own.
    pub pooled: bool,
}

/// One design's forecasts and, once a measured panel of that design is compared
/// ([`ForecastReport::compare_measured`]), its measured SE and the relative errors
/// (forecast − measured) / measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignForecast {
    /// The design's nested and Q-only forecasts.
    #[serde(flatten)]
    pub forecast: Forecast,
    /// The measured panel's file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_panel: Option<PathBuf>,
    /// The measured panel's SE of the combined estimate with the audit's weights (as
    /// `stats variance` fits it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub se_measured: Option<f64>,
    /// (SE nested − SE measured) / SE measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel_error_nested: Option<f64>,
    /// (SE Q-only − SE measured) / SE measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel_error_q_only: Option<f64>,
}

/// The forecasts of several designs from one audit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForecastReport {
    /// Which components the nested forecasts use: `pooled` or `per-stratum`.
    pub components: &'static str,
    /// One entry per design, in the order of the settings.
    pub designs: Vec<DesignForecast>,
    /// What the forecasts cannot vary ([`folded_notes`]).
    pub notes: Vec<String>,
    /// The audit's stratum weights the forecasts combine the strata with ([`Audit::weights`],
    /// strata order); empty (and not serialised) for equal weights.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f64>,
    /// Whether the pooled components are used (measured designs are forecast the same way).
    #[serde(skip)]
    pub pooled: bool,
    /// The audit's strata names (the text names the weights by them; not in the JSON).
    #[serde(skip)]
    pub strata: Vec<String>,
}

/// A forecast does not resample: its document's engine is all `null`.
impl Report for ForecastReport {}

/// Why [`forecast_designs`] or [`ForecastReport::compare_measured`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ForecastError {
    /// A design that does not parse, a measured panel that does not fit, a failed analysis.
    #[error(transparent)]
    Input(#[from] Error),
    /// A design parsed but cannot be forecast from this audit (an unknown or missing
    /// stratum, a stratum left without questions, pooled components the audit lacks).
    #[error("design {design}")]
    Design {
        /// The design as given.
        design: String,
        /// Why it cannot be forecast.
        #[source]
        source: Error,
    },
}

/// A panel measured at one design, to compare with that design's forecasts.
#[derive(Debug, Clone, Copy)]
pub struct MeasuredPanel<'a> {
    /// How the panel was named (the `--measured` argument as given), for error messages.
    pub label: &'a str,
    /// The design the panel is declared to have; `None`: the design with the panel's shape.
    pub design: Option<&'a str>,
    /// The panel's file.
    pub path: &'a Path,
    /// The loaded panel.
    pub panel: &'a Panel,
}

/// Forecasts every design of `settings` from `audit`: per design the nested SE
/// sqrt(Σ_d w_d² [σ²_q/Q′_d + σ²_t/(Q′_d T′) + σ²_r/(Q′_d T′ R′)]) and the Q-only SE
/// sqrt(Σ_d w_d² SE²_audit,d Q_audit,d / Q′_d) ([`forecast`]; w_d the audit's weights, 1/D
/// by default), with the notes on levels
/// the audit could not estimate.
///
/// # Errors
/// [`ForecastError::Input`] for a design that does not parse; [`ForecastError::Design`]
/// naming a design that cannot be forecast from this audit.
pub fn forecast_designs(
    audit: &Audit,
    settings: &ForecastJob,
) -> std::result::Result<ForecastReport, ForecastError> {
    let mut designs = Vec::with_capacity(settings.designs.len());
    for d in &settings.designs {
        designs.push(DesignForecast {
            forecast: forecast_one(audit, d, settings.pooled)?,
            measured_panel: None,
            se_measured: None,
            rel_error_nested: None,
            rel_error_q_only: None,
        });
    }
    Ok(ForecastReport {
        components: if settings.pooled {
            "pooled"
        } else {
            "per-stratum"
        },
        designs,
        notes: {
            let mut notes = folded_notes(audit, settings.pooled);
            if audit_is_clustered(audit) {
                notes.push(
                    "the audit has clusters: a design GxM:T:R is G clusters of M questions; a \
                     design Q:T:R has every question in its own cluster (G = Q, M = 1)"
                        .into(),
                );
            }
            notes
        },
        weights: audit.weights.clone(),
        pooled: settings.pooled,
        strata: audit.strata.iter().map(|s| s.name.clone()).collect(),
    })
}

/// The forecast of the design `d` (text as given); a failure names it.
fn forecast_one(
    audit: &Audit,
    d: &str,
    pooled: bool,
) -> std::result::Result<Forecast, ForecastError> {
    let spec: DesignSpec = d.parse()?;
    forecast(audit, &spec, pooled).map_err(|source| ForecastError::Design {
        design: d.to_string(),
        source,
    })
}

/// A design as per-stratum questions (name, Q) with T and R (`None` when the strata differ).
type Shape = (Vec<(String, usize)>, Option<usize>, Option<usize>);

fn design_of(f: &Forecast) -> Shape {
    (f.per_stratum.clone(), Some(f.trajectories), Some(f.reads))
}

fn shape_of(p: &Panel) -> Shape {
    let same = |v: Vec<usize>| v.first().copied().filter(|x| v.iter().all(|y| y == x));
    (
        p.strata.iter().map(|s| (s.name.clone(), s.q())).collect(),
        same(p.strata.iter().map(|s| s.t()).collect()),
        same(p.strata.iter().map(|s| s.r()).collect()),
    )
}

fn show(s: &Shape) -> String {
    let n = |v: Option<usize>| v.map(|x| x.to_string()).unwrap_or_else(|| "mixed".into());
    let qs: Vec<String> = s.0.iter().map(|(name, q)| format!("{name}={q}")).collect();
    format!("{}:{}:{}", qs.join(","), n(s.1), n(s.2))
}

impl ForecastReport {
    /// Sets `m`'s measured SE (the SE of [`analyse_panel`], its strata combined with the
    /// audit's weights) beside the
    /// forecasts of the design with the panel's shape (per-stratum Q, T, R), and the
    /// relative errors (SE forecast − SE measured) / SE measured. With a declared design,
    /// the panel must have that design.
    ///
    /// # Errors
    /// [`Error::Usage`] when the panel's shape is not its declared design, no design of the
    /// report has it, or that design already has a measured panel; [`ForecastError::Design`]
    /// when the declared design cannot be forecast; the variance analysis's error.
    pub fn compare_measured(
        &mut self,
        audit: &Audit,
        m: &MeasuredPanel<'_>,
    ) -> std::result::Result<(), ForecastError> {
        let label = m.label;
        let shape = shape_of(m.panel);
        let usage = |msg: String| ForecastError::Input(Error::setting("measured", msg));
        let position = self
            .designs
            .iter()
            .position(|r| design_of(&r.forecast) == shape);
        let i = match m.design {
            Some(d) => {
                let f = forecast_one(audit, d, self.pooled)?;
                if design_of(&f) != shape {
                    return Err(usage(format!(
                        "{label}: the panel {} has design {}, not {d} ({})",
                        m.path.display(),
                        show(&shape),
                        show(&design_of(&f))
                    )));
                }
                position.ok_or_else(|| {
                    usage(format!(
                        "{label}: no design {d} among the designs forecast to compare with"
                    ))
                })?
            }
            None => position.ok_or_else(|| {
                usage(format!(
                    "{label}: the panel has design {}, which none of the designs forecast has; give DESIGN=PANEL",
                    show(&shape)
                ))
            })?,
        };
        let row = &mut self.designs[i];
        if row.measured_panel.is_some() {
            return Err(usage(format!(
                "{label}: design {} already has a measured panel",
                show(&shape)
            )));
        }
        // The measured panel has the audit's strata in its order (its shape matched), so
        // the audit's weights apply to it as they are (equal ones leave its SE as fitted).
        let se = analyse_panel(m.panel)?.weighted(&audit.weights).se;
        row.measured_panel = Some(m.path.to_path_buf());
        row.se_measured = Some(se);
        row.rel_error_nested = Some((row.forecast.se_nested - se) / se);
        row.rel_error_q_only = Some((row.forecast.se_q_only - se) / se);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panel::{load_panel, LoadOptions};

    /// Two strata audited at Q = 4, T = 2, R = 1 (so the read level is folded), with
    /// components and SEs chosen by hand.
    fn audit() -> Audit {
        let stratum = |name: &str, se: f64, q: f64, t: f64| AuditStratum {
            name: name.into(),
            questions: 4,
            trajectories: 2,
            reads: 1,
            se,
            components: PerLevel {
                question: q,
                trajectory: Some(t),
                read: None,
            },
            cluster: None,
        };
        Audit {
            strata: vec![
                stratum("a", 0.05, 0.01, 0.004),
                stratum("b", 0.03, 0.004, 0.002),
            ],
            pooled: Some(PerLevel {
                question: 0.007,
                trajectory: Some(0.003),
                read: None,
            }),
            weights: Vec::new(),
            pooled_cluster: None,
        }
    }

    #[test]
    fn the_forecast_document_is_the_report_with_a_null_engine() {
        use crate::document::{document, Engine, Inputs};
        use serde_json::{json, Value};
        let settings = ForecastJob {
            designs: vec!["8:2:1".into()],
            pooled: false,
        };
        let r = forecast_designs(&audit(), &settings).unwrap();
        assert_eq!(r.engine(), Engine::default());
        let doc = document("forecast", Inputs::new().with("audit", "a.csv"), &r);
        let keys = crate::document::keys(&doc);
        assert_eq!(keys, ["components", "designs", "notes", "run"]);
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(doc["run"][key], Value::Null, "{key}");
        }
        assert_eq!(doc["run"]["inputs"], json!({"audit": "a.csv"}));
        assert_eq!(doc["components"], "per-stratum");
        // 8:2:1 splits 4 + 4: nested sqrt(0.003 + 0.00125)/2 (see the test below); no
        // measured panel, so no measured keys.
        let d = &doc["designs"][0];
        assert_eq!(d["per_stratum"], json!([["a", 4], ["b", 4]]));
        assert_eq!(
            (
                d["questions"].clone(),
                d["trajectories"].clone(),
                d["reads"].clone()
            ),
            (json!(8), json!(2), json!(1))
        );
        assert!((d["se_nested"].as_f64().unwrap() - 0.00425f64.sqrt() / 2.0).abs() < 1e-15);
        assert!(d.get("measured_panel").is_none() && d.get("se_measured").is_none());
        assert_eq!(doc["notes"].as_array().unwrap().len(), 2);
        // `pooled` is said by `components`, not a key of its own.
        assert!(doc.get("pooled").is_none());
    }

    #[test]
    fn designs_are_forecast_by_hand_formulas() {
        let settings = ForecastJob {
            designs: vec!["8:2:1".into(), "a=2,b=8:4:3".into()],
            pooled: false,
        };
        let r = forecast_designs(&audit(), &settings).unwrap();
        assert_eq!(r.components, "per-stratum");
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-15, "{a} vs {b}");
        // 8:2:1 splits 4 + 4. Nested: a 0.01/4 + 0.004/8 = 0.003, b 0.004/4 + 0.002/8 =
        // 0.00125; Q-only at the audit's Q is the audit's SE.
        let f = &r.designs[0].forecast;
        assert_eq!(f.per_stratum, [("a".into(), 4), ("b".into(), 4)]);
        close(f.se_nested, 0.00425f64.sqrt() / 2.0);
        close(
            f.se_q_only,
            (0.05f64.powi(2) + 0.03f64.powi(2)).sqrt() / 2.0,
        );
        // a=2, b=8 at T' = 4: a 0.01/2 + 0.004/8 = 0.0055, b 0.004/8 + 0.002/32 = 0.0005625;
        // R' is ignored (the read level is folded); Q-only a 0.05²·4/2, b 0.03²·4/8.
        let f = &r.designs[1].forecast;
        assert_eq!((f.questions, f.trajectories, f.reads), (10, 4, 3));
        close(f.se_nested, (0.0055f64 + 0.0005625).sqrt() / 2.0);
        close(f.se_q_only, (0.0025f64 * 2.0 + 0.0009 / 2.0).sqrt() / 2.0);
        assert_eq!(r.notes.len(), 2);
        assert!(
            r.notes[0].starts_with("a: the audit has R = 1"),
            "{:?}",
            r.notes
        );
        // Pooled: 0.007/4 + 0.003/8 in both strata.
        let pooled = ForecastJob {
            designs: vec!["8:2:1".into()],
            pooled: true,
        };
        let r = forecast_designs(&audit(), &pooled).unwrap();
        assert_eq!((r.components, r.notes.len()), ("pooled", 1));
        close(
            r.designs[0].forecast.se_nested,
            (2.0 * (0.007 / 4.0 + 0.003 / 8.0f64)).sqrt() / 2.0,
        );
    }

    #[test]
    fn a_design_that_cannot_be_forecast_is_named() {
        let settings = |d: &str| ForecastJob {
            designs: vec!["8:2:1".into(), d.into()],
            pooled: false,
        };
        match forecast_designs(&audit(), &settings("a=3,c=1:1:1")) {
            Err(ForecastError::Design { design, source }) => {
                assert_eq!(design, "a=3,c=1:1:1");
                assert!(source.to_string().contains("stratum 'b'"), "{source}");
            }
            other => panic!("{other:?}"),
        }
        match forecast_designs(&audit(), &settings("8:0:1")) {
            Err(ForecastError::Input(Error::Usage(m))) => assert!(m.contains("bad design"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    /// `tests/it/forecast_measured.rs` and the golden `forecast` CSV: the demo panel audits
    /// itself at 446:3:5, so its Q-only forecast is its measured SE; 446:2:1 forecasts
    /// SE nested 0.011107560908725648 and Q-only 0.010047667224300564.
    #[test]
    fn the_demo_panel_measured_at_its_own_design() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/demo/panel.csv");
        let panel = load_panel(
            &path,
            &LoadOptions {
                contrast: Some("adaptive-open".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let variance = analyse_panel(&panel).unwrap();
        let audit = Audit::from_report(&variance);
        let settings = ForecastJob {
            designs: vec!["446:2:1".into(), "446:3:5".into()],
            pooled: false,
        };
        let mut r = forecast_designs(&audit, &settings).unwrap();
        assert_eq!(r.designs[0].forecast.se_nested, 0.011107560908725648);
        assert_eq!(r.designs[0].forecast.se_q_only, 0.010047667224300564);
        let m = MeasuredPanel {
            label: "446:3:5=demo",
            design: Some("446:3:5"),
            path: &path,
            panel: &panel,
        };
        r.compare_measured(&audit, &m).unwrap();
        let d = &r.designs[1];
        assert_eq!(d.se_measured, Some(variance.se));
        assert!(d.rel_error_q_only.unwrap().abs() < 1e-12);
        let want = d.forecast.se_nested / variance.se - 1.0;
        assert!((d.rel_error_nested.unwrap() - want).abs() < 1e-12);
        assert!(r.designs[0].se_measured.is_none());
        // Declared at a design it does not have, or given twice: refused.
        let e = r
            .compare_measured(
                &audit,
                &MeasuredPanel {
                    design: Some("446:2:1"),
                    ..m
                },
            )
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("has design hotpotqa=223,musique=223:3:5, not 446:2:1"),
            "{e}"
        );
        let e = r
            .compare_measured(&audit, &MeasuredPanel { design: None, ..m })
            .unwrap_err();
        assert!(
            e.to_string().contains("already has a measured panel"),
            "{e}"
        );
    }
}
