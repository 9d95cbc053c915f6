//! Judge–human agreement on the labelled cells of a panel, and what PPI buys at these data.
//!
//! On the labelled cells (judge score x, human score y): Pearson's r; Cohen's κ when both
//! are binary (0/1): κ = (p_o − p_e)/(1 − p_e), p_o the share of cells where they agree,
//! p_e = p_x p_y + (1 − p_x)(1 − p_y). The judge's mean bias is the mean over the labelled
//! questions of (judge − human) (the question is the i.i.d. unit: a question's cells are
//! not independent), with the Student t interval on n − 1 df. The variance reduction is
//! that of the PPI++ estimate against the labels alone (λ = 0) at these data:
//! SE²_PPI / SE²_labels, and the effective number of labels n·SE²_labels / SE²_PPI (how many
//! labels the labels-only estimate would need for the PPI estimate's SE).

use serde::Serialize;

use super::labels::StratumUnits;
use super::ppi::{combine, ppi_mean, PpiMean};
use crate::document::Report;
use crate::inference::t::t_quantile;
use crate::table::{Cell, Table, ToView, View};
use crate::Result;

/// Agreement of one stratum (or of all, `name` = `all`).
#[derive(Debug, Clone, Serialize)]
pub struct AgreementRow {
    pub name: String,
    /// Labelled questions n and labelled cells.
    pub questions: usize,
    pub cells: usize,
    /// Pearson's r of judge and human over the labelled cells (`null` when either is
    /// constant).
    pub correlation: Option<f64>,
    /// Cohen's κ when both scores are 0/1 (`null` otherwise or when p_e = 1).
    pub kappa: Option<f64>,
    /// Mean of judge − human over the labelled questions, and its interval.
    pub bias: f64,
    pub bias_ci: Option<[f64; 2]>,
    /// λ̂ (power-tuned; `null` for the strata combined, each having its own).
    pub lambda: Option<f64>,
    /// SE²_PPI / SE²_labels (below 1: PPI helps).
    pub variance_ratio: Option<f64>,
    /// n · SE²_labels / SE²_PPI.
    pub effective_labels: Option<f64>,
}

/// The agreement report.
#[derive(Debug, Clone, Serialize)]
pub struct AgreementReport {
    pub outcome: String,
    pub labels: String,
    pub label_metric: String,
    pub confidence: f64,
    pub strata: Vec<AgreementRow>,
    /// The strata combined with the panel's weights (absent for one stratum).
    pub combined: Option<AgreementRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report for AgreementReport {}

/// Pearson's r of `x` and `y` (`None` when either has no spread).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Cohen's κ of two 0/1 raters (`None` when a score is not 0 or 1, or p_e = 1).
pub fn cohen_kappa(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.iter().chain(y).any(|&v| v != 0.0 && v != 1.0) || x.is_empty() {
        return None;
    }
    let n = x.len() as f64;
    let po = x.iter().zip(y).filter(|(a, b)| a == b).count() as f64 / n;
    let (px, py) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let pe = px * py + (1.0 - px) * (1.0 - py);
    (pe < 1.0).then(|| (po - pe) / (1.0 - pe))
}

fn row(
    name: &str,
    u: &[&StratumUnits],
    cells: &[(f64, f64)],
    ppi: (f64, f64),
    labels_se: f64,
    lambda: Option<f64>,
    confidence: f64,
) -> AgreementRow {
    let (x, y): (Vec<f64>, Vec<f64>) = cells.iter().copied().unzip();
    let diffs: Vec<f64> = u
        .iter()
        .flat_map(|s| s.yhat.iter().zip(&s.y).map(|(a, b)| a - b))
        .collect();
    let n = diffs.len();
    let bias = diffs.iter().sum::<f64>() / n as f64;
    let bias_ci = (n >= 2).then(|| {
        let var = diffs.iter().map(|d| (d - bias) * (d - bias)).sum::<f64>() / (n - 1) as f64;
        let h = t_quantile(0.5 + confidence / 2.0, (n - 1) as f64) * (var / n as f64).sqrt();
        [bias - h, bias + h]
    });
    let ratio = (labels_se > 0.0).then(|| (ppi.1 * ppi.1) / (labels_se * labels_se));
    AgreementRow {
        name: name.to_string(),
        questions: n,
        cells: cells.len(),
        correlation: pearson(&x, &y),
        kappa: cohen_kappa(&x, &y),
        bias,
        bias_ci,
        lambda,
        variance_ratio: ratio,
        effective_labels: ratio.filter(|r| *r > 0.0).map(|r| n as f64 / r),
    }
}

/// The agreement report of `units` and the strata's `weights`.
///
/// # Errors
/// Those of [`ppi_mean`] (a stratum with fewer than 2 labelled questions).
pub fn agreement(
    outcome: &str,
    labels: &str,
    label_metric: &str,
    units: &[StratumUnits],
    weights: &[f64],
    confidence: f64,
) -> Result<AgreementReport> {
    let mut strata = Vec::new();
    let mut tuned: Vec<(f64, PpiMean)> = Vec::new();
    let mut only: Vec<(f64, PpiMean)> = Vec::new();
    for (u, &w) in units.iter().zip(weights) {
        let p = ppi_mean(&u.y, &u.yhat, &u.yhat_unlabelled, None).map_err(|e| match e {
            crate::Error::Data(m) => crate::Error::Data(format!("stratum '{}': {m}", u.name)),
            e => e,
        })?;
        let l = ppi_mean(&u.y, &u.yhat, &u.yhat_unlabelled, Some(0.0))?;
        strata.push(row(
            &u.name,
            &[u],
            &u.pairs,
            (p.estimate, p.se),
            l.se,
            Some(p.lambda),
            confidence,
        ));
        tuned.push((w, p));
        only.push((w, l));
    }
    let combined = (units.len() > 1).then(|| {
        let all: Vec<&StratumUnits> = units.iter().collect();
        let cells: Vec<(f64, f64)> = units.iter().flat_map(|u| u.pairs.clone()).collect();
        let labels = combine(&only);
        row(
            "all",
            &all,
            &cells,
            combine(&tuned),
            labels.1,
            None,
            confidence,
        )
    });
    Ok(AgreementReport {
        outcome: outcome.to_string(),
        labels: labels.to_string(),
        label_metric: label_metric.to_string(),
        confidence,
        strata,
        combined,
        notes: Vec::new(),
    })
}

impl ToView for AgreementReport {
    fn to_view(&self) -> View {
        let mut t = Table::new(&[
            "stratum",
            "questions",
            "cells",
            "correlation",
            "kappa",
            "bias",
            "bias_lower",
            "bias_upper",
            "lambda",
            "variance_ratio",
            "effective_labels",
        ]);
        for r in self.strata.iter().chain(&self.combined) {
            t.row([
                Cell::text(&r.name),
                Cell::Count(r.questions as u64),
                Cell::Count(r.cells as u64),
                r.correlation
                    .map_or(Cell::undefined_because("a constant score"), Cell::num),
                r.kappa
                    .map_or(Cell::undefined_because("not binary"), Cell::num),
                Cell::num(r.bias),
                r.bias_ci
                    .map_or(Cell::undefined_because("n < 2"), |c| Cell::num(c[0])),
                r.bias_ci
                    .map_or(Cell::undefined_because("n < 2"), |c| Cell::num(c[1])),
                r.lambda
                    .map_or(Cell::undefined_because("per stratum"), Cell::num),
                r.variance_ratio
                    .map_or(Cell::undefined_because("labels without spread"), Cell::num),
                r.effective_labels
                    .map_or(Cell::undefined_because("labels without spread"), Cell::num),
            ]);
        }
        let mut v = View::new(t.clone());
        v.text(format!(
            "{}: judge against human labels ({} [{}]); bias = judge − human per labelled \
             question, {} t interval\n",
            self.outcome,
            self.labels,
            self.label_metric,
            crate::table::percent(self.confidence)
        ));
        v.table("agreement", t);
        v.text(
            "variance_ratio: SE² of the PPI++ estimate over that of the labels alone; \
             effective_labels: the labels the labels-only estimate would need for the same SE\n",
        );
        for n in &self.notes {
            v.text(format!("{n}\n"));
        }
        v
    }
}
