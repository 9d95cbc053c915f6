//! The PPI++ estimate of a judged panel's human-scale mean with its labels: per stratum
//! (each with its own λ) and combined with the strata's weights, Σ w_d θ̂_d with
//! SE² = Σ w_d² SE_d² and the normal interval.

use serde::Serialize;

use super::labels::StratumUnits;
use super::ppi::{combine, ppi_mean, PpiMean};
use crate::document::Report;
use crate::resample::summary::normal_quantile;
use crate::table::{Cell, Table, ToView, View};
use crate::{Error, Result};

/// One stratum's PPI estimate.
#[derive(Debug, Clone, Serialize)]
pub struct PpiStratum {
    pub name: String,
    /// w_d in the combined estimate.
    pub weight: f64,
    /// The judge's mean over every question of the stratum (what the panel alone says).
    pub judge_mean: f64,
    /// The mean of the labelled questions' human scores (the labels alone).
    pub labels_mean: f64,
    /// The PPI estimate and its parts.
    #[serde(flatten)]
    pub ppi: PpiMean,
    /// The normal interval at the report's level.
    pub ci: [f64; 2],
}

/// The PPI estimate of a panel: per stratum and combined.
#[derive(Debug, Clone, Serialize)]
pub struct PpiReport {
    /// The outcome (the judge's score column, an arm's, or a contrast).
    pub outcome: String,
    /// The labels file and its score column.
    pub labels: String,
    pub label_metric: String,
    /// Where the labels sit: always `question` (a question's human score is the mean of its
    /// labelled cells; the question is the i.i.d. unit).
    pub level: &'static str,
    /// `power-tuned` or the λ given.
    pub lambda: String,
    pub confidence: f64,
    pub strata: Vec<PpiStratum>,
    /// Σ w_d θ̂_d.
    pub estimate: f64,
    pub se: f64,
    pub ci: [f64; 2],
    /// Σ w_d × judge mean: the uncorrected judge's estimate, for comparison.
    pub judge_estimate: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report for PpiReport {}

/// The PPI report of `units` with the strata's `weights`, λ `lambda` (`None`: tuned) and
/// interval level `confidence`.
///
/// # Errors
/// [`Error::Data`] naming a stratum with fewer than 2 labelled questions.
pub fn ppi_report(
    outcome: &str,
    labels: &str,
    label_metric: &str,
    units: &[StratumUnits],
    weights: &[f64],
    lambda: Option<f64>,
    confidence: f64,
) -> Result<PpiReport> {
    let z = normal_quantile(0.5 + confidence / 2.0);
    let mut strata = Vec::new();
    for (u, &w) in units.iter().zip(weights) {
        let p = ppi_mean(&u.y, &u.yhat, &u.yhat_unlabelled, lambda).map_err(|e| match e {
            Error::Data(m) => Error::Data(format!("stratum '{}': {m}", u.name)),
            e => e,
        })?;
        let all: f64 = u.yhat.iter().chain(&u.yhat_unlabelled).sum();
        strata.push(PpiStratum {
            name: u.name.clone(),
            weight: w,
            judge_mean: all / (u.yhat.len() + u.yhat_unlabelled.len()) as f64,
            labels_mean: u.y.iter().sum::<f64>() / u.y.len() as f64,
            ci: [p.estimate - z * p.se, p.estimate + z * p.se],
            ppi: p,
        });
    }
    let parts: Vec<(f64, PpiMean)> = strata.iter().map(|s| (s.weight, s.ppi)).collect();
    let (estimate, se) = combine(&parts);
    Ok(PpiReport {
        outcome: outcome.to_string(),
        labels: labels.to_string(),
        label_metric: label_metric.to_string(),
        level: "question",
        lambda: lambda.map_or("power-tuned".to_string(), |l| format!("{l}")),
        confidence,
        judge_estimate: strata.iter().map(|s| s.weight * s.judge_mean).sum(),
        strata,
        estimate,
        se,
        ci: [estimate - z * se, estimate + z * se],
        notes: Vec::new(),
    })
}

fn num(v: f64) -> String {
    crate::table::number(v)
}

impl ToView for PpiReport {
    fn to_view(&self) -> View {
        let mut t = Table::new(&[
            "stratum",
            "weight",
            "labelled",
            "unlabelled",
            "lambda",
            "judge",
            "labels",
            "ppi",
            "se",
            "lower",
            "upper",
        ]);
        for s in &self.strata {
            t.row([
                Cell::text(&s.name),
                Cell::num(s.weight),
                Cell::Count(s.ppi.labelled as u64),
                Cell::Count(s.ppi.unlabelled as u64),
                Cell::num(s.ppi.lambda),
                Cell::num(s.judge_mean),
                Cell::num(s.labels_mean),
                Cell::num(s.ppi.estimate),
                Cell::num(s.ppi.se),
                Cell::num(s.ci[0]),
                Cell::num(s.ci[1]),
            ]);
        }
        let mut v = View::new(t.clone());
        v.text(format!(
            "{}: human-scale estimate (PPI++, labels {} [{}], lambda {}, labelled questions)\n",
            self.outcome, self.labels, self.label_metric, self.lambda
        ));
        v.table("ppi", t);
        v.text(format!(
            "estimate {}  SE {}  {} CI [{}, {}]  (normal)   judge alone {}\n",
            num(self.estimate),
            num(self.se),
            crate::table::percent(self.confidence),
            num(self.ci[0]),
            num(self.ci[1]),
            num(self.judge_estimate)
        ));
        for n in &self.notes {
            v.text(format!("{n}\n"));
        }
        v
    }
}

/// `variance` with labels: the PPI++ estimate of the human-scale mean, and the judge's own
/// variance components (what the panel alone says, on the judge's scale).
#[derive(Debug, Clone, Serialize)]
pub struct JudgedVariance {
    pub ppi: PpiReport,
    pub judge: crate::components::variance::PanelVariance,
}

impl Report for JudgedVariance {}

impl ToView for JudgedVariance {
    fn to_view(&self) -> View {
        let mut v = self.ppi.to_view();
        v.text("\nthe judge's scores alone (variance components on the judge's scale):\n");
        v.text(self.judge.to_view().to_text());
        v
    }
}
