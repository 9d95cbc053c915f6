//! `simulate`: a synthetic panel (and optionally its cost ledger) with known structure,
//! written to files ([`crate::sim::simulate()`]; the model is in [`crate::sim::model`] and
//! docs/simulate.md).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::document::{Finished, Inputs};
use crate::io::{refuse_overwriting_inputs, write_atomic};
use crate::sim::io::{write_ledger_jsonl, write_panel_csv, write_panel_jsonl};
use crate::sim::{
    GaussianSpec, LedgerSpec, Sds, SimModel, SimSpec, SimulateJob, SimulateReport, WrittenFile,
};
use crate::{Error, Result};

/// Datasets (strata) and their question counts, in the order given: `name=Q,name=Q`, or
/// one count for a single stratum named `all`.
#[derive(Debug, Clone, PartialEq)]
pub struct Strata(pub Vec<(String, usize)>);

/// Baseline means: one for every dataset (no name) or one per named dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Means(pub Vec<(Option<String>, f64)>);

/// The settings of [`simulate`] (the defaults are the command line's).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct SimulateSettings {
    /// Panel file to write: JSON lines when the name ends in .jsonl or .ndjson, CSV
    /// otherwise.
    pub out: PathBuf,
    /// Datasets (strata) and questions per dataset, `name=Q,…`, or one number for a single
    /// stratum named `all`.
    #[serde(deserialize_with = "text_or_number")]
    #[cfg_attr(feature = "schema", schemars(with = "TextOrNumber"))]
    pub datasets: Strata,
    /// Trajectories per question and arm (T), at least 1.
    pub trajectories: u32,
    /// Reads per trajectory (R), at least 1.
    pub reads: u32,
    /// Arm names, baseline first (a list, or `a,b` text); every later arm differs from the
    /// baseline by the effect.
    #[serde(deserialize_with = "crate::io::from_text::one_or_many")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub arms: Vec<String>,
    /// Latent mean of the baseline arm: one number, or `name=value,…` per dataset.
    #[serde(deserialize_with = "text_or_number")]
    #[cfg_attr(feature = "schema", schemars(with = "TextOrNumber"))]
    pub mean: Means,
    /// Latent mean contrast (later arm − baseline).
    pub effect: f64,
    /// SD of the question effect shared by the arms (latent scale).
    pub sigma_q: f64,
    /// SD of the trajectory effect shared by the arms.
    pub sigma_t: f64,
    /// SD of the read effect shared by the arms.
    pub sigma_r: f64,
    /// SD of the contrast's own question effect.
    pub contrast_sigma_q: f64,
    /// SD of the contrast's own trajectory effect.
    pub contrast_sigma_t: f64,
    /// SD of the contrast's own read effect.
    pub contrast_sigma_r: f64,
    /// Seed of every random stream.
    pub seed: u64,
    /// Name of the bounded score column.
    pub metric_name: String,
    /// Also write the matching cost ledger (JSON lines) here.
    pub ledger: Option<PathBuf>,
    /// Model name on the ledger's planner and reader rows.
    pub model: String,
    /// Planner calls (and search requests) per trajectory and arm in the ledger, at least 1.
    pub planner_calls: u32,
    /// Write the Gaussian nested panel y = μ + a_q + b_qt + e_qtr instead (one arm named
    /// `single`, no clamping; true components are exactly sigma_q², sigma_t², sigma_r²), from
    /// one mean and the shared SDs; no ledger.
    pub gaussian: bool,
}

impl Default for SimulateSettings {
    fn default() -> Self {
        SimulateSettings {
            out: PathBuf::new(),
            datasets: Strata(vec![("hotpotqa".into(), 223), ("musique".into(), 223)]),
            trajectories: 3,
            reads: 5,
            arms: vec!["open".into(), "adaptive".into()],
            mean: Means(vec![(None, 0.45)]),
            effect: 0.02,
            sigma_q: 0.55,
            sigma_t: 0.15,
            sigma_r: 0.15,
            contrast_sigma_q: 0.30,
            contrast_sigma_t: 0.15,
            contrast_sigma_r: 0.18,
            seed: 1,
            metric_name: "f1".into(),
            ledger: None,
            model: "deepseek-v4.1-flash".into(),
            planner_calls: 4,
            gaussian: false,
        }
    }
}

/// The schema of a setting given as text or as a number.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema's shape, never built
enum TextOrNumber {
    Text(String),
    Number(f64),
}

/// `T` from its text form or from a number (read as the text it writes).
fn text_or_number<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Number(serde_json::Number),
        Text(String),
    }
    let text = match Form::deserialize(d)? {
        Form::Number(n) => n.to_string(),
        Form::Text(t) => t,
    };
    text.parse().map_err(serde::de::Error::custom)
}

impl std::str::FromStr for Strata {
    type Err = String;

    /// `name=Q,name=Q` or a single count.
    fn from_str(s: &str) -> std::result::Result<Strata, String> {
        if let Ok(q) = s.trim().parse::<usize>() {
            return if q == 0 {
                Err("the number of questions must be at least 1".into())
            } else {
                Ok(Strata(vec![("all".into(), q)]))
            };
        }
        let mut out: Vec<(String, usize)> = Vec::new();
        for part in s.split(',') {
            let (name, q) = part
                .split_once('=')
                .ok_or_else(|| format!("expected name=QUESTIONS, got {part:?}"))?;
            let name = name.trim();
            valid_name(name)?;
            let q: usize = q.trim().parse().map_err(|_| {
                format!(
                    "dataset {name}: expected a whole number of questions, got {:?}",
                    q.trim()
                )
            })?;
            if q == 0 {
                return Err(format!(
                    "dataset {name}: the number of questions must be at least 1"
                ));
            }
            if out.iter().any(|(n, _)| n == name) {
                return Err(format!("dataset {name} is listed twice"));
            }
            out.push((name.to_string(), q));
        }
        Ok(Strata(out))
    }
}

/// Refuses a dataset name that is not plain ASCII letters, digits, `-`, `_` or `.`.
fn valid_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(format!(
            "dataset name {name:?} must be non-empty ASCII letters, digits, '-', '_' or '.'"
        ));
    }
    Ok(())
}

impl std::str::FromStr for Means {
    type Err = String;

    /// `0.5` or `name=0.5,name=0.4`.
    fn from_str(s: &str) -> std::result::Result<Means, String> {
        if let Ok(m) = s.trim().parse::<f64>() {
            return if m.is_finite() {
                Ok(Means(vec![(None, m)]))
            } else {
                Err("the mean must be finite".into())
            };
        }
        s.split(',')
            .map(|part| {
                let (name, v) = part
                    .split_once('=')
                    .ok_or_else(|| format!("expected a number or name=VALUE, got {part:?}"))?;
                let v: f64 = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| {
                        format!(
                            "mean of {}: expected a finite number, got {:?}",
                            name.trim(),
                            v.trim()
                        )
                    })?;
                Ok((Some(name.trim().to_string()), v))
            })
            .collect::<std::result::Result<Vec<_>, String>>()
            .map(Means)
    }
}

impl Means {
    /// The mean of each of `strata`, in their order.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `mean` when it names a dataset `strata` lacks, or gives
    /// none for one of them.
    fn per_stratum(&self, strata: &[(String, usize)]) -> Result<Vec<f64>> {
        if let [(None, m)] = self.0.as_slice() {
            return Ok(vec![*m]);
        }
        let names: Vec<&str> = strata.iter().map(|s| s.0.as_str()).collect();
        for (n, _) in &self.0 {
            let n = n.as_deref().unwrap_or("");
            if !names.contains(&n) {
                return Err(Error::setting(
                    "mean",
                    format!(
                        "names dataset {n:?}, which is not one of the datasets ({})",
                        names.join(", ")
                    ),
                ));
            }
        }
        strata
            .iter()
            .map(|(name, _)| {
                self.0
                    .iter()
                    .find(|(n, _)| n.as_deref() == Some(name))
                    .map(|(_, m)| *m)
                    .ok_or_else(|| {
                        Error::setting("mean", format!("gives no value for dataset {name}"))
                    })
            })
            .collect()
    }
}

impl SimulateSettings {
    /// The simulation these settings ask for, checked.
    ///
    /// # Errors
    /// [`Error::Setting`] naming the setting: a count below 1, a metric name that is empty or
    /// another column's, means that do not match the datasets, a Gaussian panel with a
    /// ledger or several means.
    pub fn job(&self) -> Result<SimulateJob> {
        for (name, v) in [
            ("trajectories", self.trajectories),
            ("reads", self.reads),
            ("planner_calls", self.planner_calls),
        ] {
            if v < 1 {
                return Err(Error::setting(name, format!("{v}: expected at least 1")));
            }
        }
        if self.metric_name.is_empty()
            || ["dataset", "question", "trajectory", "read", "arm", "em"]
                .contains(&self.metric_name.as_str())
        {
            return Err(Error::setting(
                "metric_name",
                format!(
                    "{:?} must be non-empty and differ from the other column names",
                    self.metric_name
                ),
            ));
        }
        let strata = self.datasets.0.clone();
        let means = self.mean.per_stratum(&strata)?;
        let shared = Sds {
            q: self.sigma_q,
            t: self.sigma_t,
            r: self.sigma_r,
        };
        if self.gaussian {
            if self.ledger.is_some() {
                return Err(Error::setting(
                    "ledger",
                    "a Gaussian panel has no ledger: give no ledger with gaussian",
                ));
            }
            if means.len() != 1 {
                return Err(Error::setting("mean", "a Gaussian panel takes one mean"));
            }
            return Ok(SimulateJob {
                model: SimModel::Gaussian(GaussianSpec {
                    strata,
                    trajectories: self.trajectories as usize,
                    reads: self.reads as usize,
                    mean: means[0],
                    sds: shared,
                    seed: self.seed,
                }),
                ledger: None,
            });
        }
        Ok(SimulateJob {
            model: SimModel::Bounded(SimSpec {
                strata,
                trajectories: self.trajectories as usize,
                reads: self.reads as usize,
                arms: self.arms.iter().map(|a| a.trim().to_string()).collect(),
                seed: self.seed,
                means,
                effect: self.effect,
                shared,
                contrast: Sds {
                    q: self.contrast_sigma_q,
                    t: self.contrast_sigma_t,
                    r: self.contrast_sigma_r,
                },
            }),
            ledger: self.ledger.as_ref().map(|_| LedgerSpec {
                model: self.model.clone(),
                planner_calls: self.planner_calls as usize,
                ..LedgerSpec::default()
            }),
        })
    }
}

/// Simulates the panel (and, with `settings.ledger`, its cost ledger) and writes them,
/// each atomically: the ledger first, then the panel; the report says what was written.
///
/// # Errors
/// Those of [`SimulateSettings::job`] and [`crate::sim::simulate()`]; [`Error::Setting`]
/// naming `out` when there is none; [`Error::Usage`] when the ledger is the panel's file;
/// a write error — the panel's after the ledger was written carries the ledger's line as
/// a note ([`Error::Noted`]).
pub fn simulate(settings: &SimulateSettings) -> Result<Finished> {
    let out = &settings.out;
    if out.as_os_str().is_empty() {
        return Err(Error::setting("out", "expected the panel file to write"));
    }
    if let Some(ledger) = &settings.ledger {
        refuse_overwriting_inputs(&[("out", out), ("ledger", ledger)], &[]).map_err(|_| {
            Error::setting(
                "ledger",
                format!(
                    "{} is also the panel's file (out): it would be overwritten; write the \
                     ledger to another file",
                    ledger.display()
                ),
            )
        })?;
    }
    let sim = crate::sim::simulate(&settings.job()?)?;
    let mut report = SimulateReport::default();
    if let (Some(path), Some(ledger)) = (&settings.ledger, &sim.ledger) {
        write_atomic(path, |w| write_ledger_jsonl(ledger, w))?;
        report.ledger = Some(written(path, ledger.len()));
    }
    write_atomic(out, |w| {
        if writes_jsonl(out) {
            write_panel_jsonl(&sim.panel, &settings.metric_name, w)
        } else {
            write_panel_csv(&sim.panel, &settings.metric_name, w)
        }
    })
    .map_err(|e| {
        let notes = report
            .ledger
            .iter()
            .map(|f| format!("wrote {} ledger rows to {}", f.rows, f.path))
            .collect();
        e.noted(notes)
    })?;
    report.panel = Some(written(out, sim.panel.len()));
    Ok(Finished::new("simulate", Inputs::new(), report))
}

/// Whether `path` names a JSON-lines panel (`.jsonl` or `.ndjson`, any case); CSV
/// otherwise.
fn writes_jsonl(path: &Path) -> bool {
    matches!(
        path.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("jsonl" | "ndjson")
    )
}

/// The file at `path`, written with `rows` rows.
fn written(path: &Path, rows: usize) -> WrittenFile {
    WrittenFile {
        path: path.display().to_string(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datasets_and_means_read_the_command_line_words_or_numbers() {
        let s: SimulateSettings = serde_json::from_str(
            r#"{"datasets": "a=3,b=2", "mean": "a=0.3,b=0.6", "out": "x.csv"}"#,
        )
        .unwrap();
        assert_eq!(s.datasets, Strata(vec![("a".into(), 3), ("b".into(), 2)]));
        assert_eq!(s.mean.per_stratum(&s.datasets.0).unwrap(), vec![0.3, 0.6]);
        let n: SimulateSettings = serde_json::from_str(r#"{"datasets": 12, "mean": 0.5}"#).unwrap();
        assert_eq!(n.datasets, Strata(vec![("all".into(), 12)]));
        assert_eq!(n.mean, Means(vec![(None, 0.5)]));
        let bad = serde_json::from_str::<SimulateSettings>(r#"{"datasets": "a=0"}"#);
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("dataset a: the number of questions must be at least 1"));
    }

    #[test]
    fn settings_errors_name_the_setting() {
        let named = |s: SimulateSettings| match s.job() {
            Err(Error::Setting { setting, msg }) => (setting, msg),
            other => panic!("expected a setting error, got {other:?}"),
        };
        let base = SimulateSettings::default;
        assert_eq!(
            named(SimulateSettings {
                mean: "nq=0.3".parse().unwrap(),
                ..base()
            }),
            (
                "mean",
                "names dataset \"nq\", which is not one of the datasets (hotpotqa, musique)"
                    .to_string()
            )
        );
        assert_eq!(
            named(SimulateSettings {
                mean: "hotpotqa=0.3".parse().unwrap(),
                ..base()
            })
            .1,
            "gives no value for dataset musique"
        );
        assert_eq!(
            named(SimulateSettings {
                metric_name: "em".into(),
                ..base()
            })
            .0,
            "metric_name"
        );
        assert_eq!(
            named(SimulateSettings { reads: 0, ..base() }),
            ("reads", "0: expected at least 1".to_string())
        );
        assert_eq!(
            named(SimulateSettings {
                gaussian: true,
                ledger: Some("l.jsonl".into()),
                ..base()
            })
            .0,
            "ledger"
        );
    }
}
