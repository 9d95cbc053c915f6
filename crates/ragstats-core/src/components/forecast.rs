//! D-study forecasts of the standard error of an allocation (Q′, T′, R′).
//!
//! Nested forecast per stratum d, with components truncated at zero:
//! SE²_d = σ²_q/Q′_d + σ²_t/(Q′_d T′) + σ²_r/(Q′_d T′ R′); strata combine with equal
//! weights, SE² = (1/D²) Σ_d SE²_d.
//!
//! Q-only forecast: keep the audit's measured per-question variance (at the audit's T and
//! R) and scale, SE_d = SE_audit,d · sqrt(Q_audit,d / Q′_d); T′ and R′ are ignored.

use serde::{Deserialize, Serialize};

use super::variance::{combine, PerLevel, VarianceReport};
use crate::io::jsonl::parse_document;
use crate::io::read_text;
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
}

/// The audit a forecast is calibrated on.
#[derive(Debug, Clone, PartialEq)]
pub struct Audit {
    pub strata: Vec<AuditStratum>,
    /// Pooled (dataset-adjusted) components, when the audit had them.
    pub pooled: Option<PerLevel>,
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
                })
                .collect(),
            pooled: r.pooled.as_ref().map(|p| p.fit.components),
        }
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
        struct Pooled {
            components: PerLevel,
        }
        #[derive(Deserialize)]
        struct Doc {
            strata: Vec<AuditStratum>,
            pooled: Option<Pooled>,
        }
        let doc: Doc = parse_document(
            source,
            text,
            "not a components file written by `stats variance --format json`",
        )?;
        if doc.strata.is_empty() {
            return Err(Error::input(source, None, "components file has no strata"));
        }
        Ok(Audit {
            strata: doc.strata,
            pooled: doc.pooled.map(|p| p.components),
        })
    }
}

/// An allocation to forecast: total questions split in the audit's proportions, or explicit
/// per-stratum question counts; T′ and R′ are common to all strata.
#[derive(Debug, Clone, PartialEq)]
pub enum DesignSpec {
    Total {
        questions: usize,
        t: usize,
        r: usize,
    },
    PerStratum {
        questions: Vec<(String, usize)>,
        t: usize,
        r: usize,
    },
}

impl std::str::FromStr for DesignSpec {
    type Err = Error;

    /// Parses `Q:T:R` or `name=Q,name=Q:T:R`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::Usage(format!(
                "bad design '{s}': {why}; expected Q:T:R (e.g. 446:2:1) or per-stratum counts (e.g. hotpotqa=300,musique=146:2:1)"
            ))
        };
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() != 3 {
            return Err(bad("need three ':'-separated fields"));
        }
        let count = |p: &str, what: &str| -> Result<usize> {
            match p.trim().parse::<usize>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(bad(&format!(
                    "{what} must be a positive integer, got '{p}'"
                ))),
            }
        };
        let t = count(parts[1], "T")?;
        let r = count(parts[2], "R")?;
        if parts[0].contains('=') {
            let mut questions = Vec::new();
            for item in parts[0].split(',') {
                let (name, q) = item
                    .split_once('=')
                    .ok_or_else(|| bad(&format!("'{item}' is not name=Q")))?;
                questions.push((name.trim().to_string(), count(q, "Q")?));
            }
            Ok(DesignSpec::PerStratum { questions, t, r })
        } else {
            Ok(DesignSpec::Total {
                questions: count(parts[0], "Q")?,
                t,
                r,
            })
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
    pub se_nested: f64,
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

/// Forecasts one design from an audit. With `pooled`, every stratum uses the pooled
/// components for the nested forecast (the Q-only forecast always uses each stratum's SE).
///
/// # Errors
/// [`Error::Usage`] when a per-stratum design names an unknown stratum or misses one, when
/// a stratum would get zero questions, or when `pooled` is asked of an audit without it.
pub fn forecast(audit: &Audit, design: &DesignSpec, pooled: bool) -> Result<Forecast> {
    let (counts, t, r) = match design {
        DesignSpec::Total { questions, t, r } => {
            let w: Vec<usize> = audit.strata.iter().map(|s| s.questions).collect();
            (split_questions(*questions, &w), *t, *r)
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
        nested.push(nested_se2(&c, q as f64, t as f64, r as f64));
        q_only.push(s.se * s.se * s.questions as f64 / q as f64);
    }
    let zeros = vec![0.0; counts.len()];
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
        se_nested: combine(&zeros, &nested).1,
        se_q_only: combine(&zeros, &q_only).1,
    })
}
