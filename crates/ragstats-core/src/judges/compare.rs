//! `compare` with labels: every system's PPI++ estimate of its human-scale mean, and every
//! pair's PPI++ estimate of the paired difference b − a (the labelled questions of both
//! arms; [`super::estimate`]), with the normal interval, the Wald z test's two-sided p,
//! and Holm and Benjamini–Hochberg adjustments over the family of pairs.

use serde::Serialize;

use super::estimate::PpiReport;
use super::simultaneous::PpiSimultaneous;
use crate::compare::multiplicity::{benjamini_hochberg, holm};
use crate::document::Report;
use crate::resample::summary::normal_cdf;
use crate::table::{Cell, Table, ToView, View};

/// One system (arm): its PPI estimate.
#[derive(Debug, Clone, Serialize)]
pub struct PpiSystem {
    pub name: String,
    pub estimate: f64,
    pub se: f64,
    pub ci: [f64; 2],
    /// The judge's estimate alone.
    pub judge_estimate: f64,
    /// Labelled and unlabelled questions over the strata.
    pub labelled: usize,
    pub unlabelled: usize,
    /// The rank interval (1 = best) from the all-pairs simultaneous intervals
    /// ([`super::simultaneous`]); `None` where they were not made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_ci: Option<[usize; 2]>,
}

/// One pair b − a: the PPI estimate of the paired difference and its tests.
#[derive(Debug, Clone, Serialize)]
pub struct PpiPair {
    pub a: String,
    pub b: String,
    pub estimate: f64,
    pub se: f64,
    pub ci: [f64; 2],
    pub judge_estimate: f64,
    pub labelled: usize,
    /// Two-sided p of z = estimate / SE (1 when the SE is 0 and the estimate 0).
    pub p: f64,
    pub p_holm: f64,
    pub q_bh: f64,
    /// θ̂ ± c·SE at the family's simultaneous critical value c ([`super::simultaneous`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_simultaneous: Option<[f64; 2]>,
}

/// `compare` with labels.
#[derive(Debug, Clone, Serialize)]
pub struct PpiCompareReport {
    pub metric: String,
    pub labels: String,
    pub label_metric: String,
    pub lambda: String,
    pub confidence: f64,
    pub systems: Vec<PpiSystem>,
    pub pairs: Vec<PpiPair>,
    /// The simultaneous intervals' critical values and bootstrap (`None`: not made).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<PpiSimultaneous>,
    /// With a ledger and a label cost: what the next study needs to resolve the closest
    /// unresolved pair, labels included; absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<PpiNextStep>,
    /// Why there is no next step (every pair resolved, or none with a difference), with a
    /// ledger; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_undefined: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report for PpiCompareReport {}

impl PpiCompareReport {
    /// Adds the simultaneous intervals `s` (its intervals in the order of `pairs`, each of
    /// b − a as the pair reads; its ranks in the order of `systems`).
    pub fn with_simultaneous(&mut self, s: PpiSimultaneous) {
        for (p, i) in self.pairs.iter_mut().zip(&s.intervals) {
            p.ci_simultaneous = Some(*i);
        }
        for (x, r) in self.systems.iter_mut().zip(&s.ranks) {
            x.rank_ci = Some(*r);
        }
        self.simultaneous = Some(s);
    }
}

/// The next study of `compare --labels --ledger`: the closest unresolved pair (largest
/// |z| among the pairs Holm leaves unresolved) and the cheapest labels n and Q:T:R whose
/// PPI++ SE of the pair's paired difference reaches |estimate| / (c + z_power)
/// ([`super::plan`]).
#[derive(Debug, Clone, Serialize)]
pub struct PpiNextStep {
    pub a: String,
    pub b: String,
    pub estimate: f64,
    pub se: f64,
    /// The power asked for, at the difference as estimated.
    pub power: f64,
    /// The test planned for, in words: Holm's first step (Bonferroni) over the family.
    pub test: String,
    /// Its critical value z_{1−α/(2m)}.
    pub critical_value: f64,
    /// s₁ = |estimate| / (critical_value + z_power).
    pub target_se: f64,
    /// The cheapest design reaching s₁ (`null` when none within the bounds does:
    /// `plan_undefined` says why).
    pub plan: Option<super::plan::LabelDesign>,
    pub plan_undefined: Option<String>,
    /// The cost unit (`tokens`, `USD`) and one label's cost.
    pub currency: String,
    pub label_cost: f64,
    /// The advice in one paragraph.
    pub text: String,
}

/// Two-sided normal p of `est / se`.
fn p_value(est: f64, se: f64) -> f64 {
    if se > 0.0 {
        2.0 * normal_cdf(-(est / se).abs())
    } else if est == 0.0 {
        1.0
    } else {
        0.0
    }
}

fn counts(r: &PpiReport) -> (usize, usize) {
    r.strata.iter().fold((0, 0), |(l, u), s| {
        (l + s.ppi.labelled, u + s.ppi.unlabelled)
    })
}

/// The report of the systems' PPI reports `systems` and the pairs' `pairs` ((a, b, the
/// report of b − a)).
pub fn ppi_compare(
    metric: &str,
    systems: Vec<(String, PpiReport)>,
    pairs: Vec<(String, String, PpiReport)>,
) -> PpiCompareReport {
    let first = systems.first().map(|s| &s.1);
    let p: Vec<f64> = pairs
        .iter()
        .map(|(_, _, r)| p_value(r.estimate, r.se))
        .collect();
    let (h, bh) = (holm(&p), benjamini_hochberg(&p));
    let mut notes: Vec<String> = Vec::new();
    for n in systems
        .iter()
        .flat_map(|s| &s.1.notes)
        .chain(pairs.iter().flat_map(|p| &p.2.notes))
    {
        // Each arm's estimate leaves the other arms' labels out by design: not news here.
        if !n.contains("of other arms than") && !notes.contains(n) {
            notes.push(n.clone());
        }
    }
    PpiCompareReport {
        metric: metric.to_string(),
        labels: first.map(|r| r.labels.clone()).unwrap_or_default(),
        label_metric: first.map(|r| r.label_metric.clone()).unwrap_or_default(),
        lambda: first.map(|r| r.lambda.clone()).unwrap_or_default(),
        confidence: first.map_or(0.95, |r| r.confidence),
        systems: systems
            .iter()
            .map(|(name, r)| {
                let (labelled, unlabelled) = counts(r);
                PpiSystem {
                    name: name.clone(),
                    estimate: r.estimate,
                    se: r.se,
                    ci: r.ci,
                    judge_estimate: r.judge_estimate,
                    labelled,
                    unlabelled,
                    rank_ci: None,
                }
            })
            .collect(),
        pairs: pairs
            .iter()
            .enumerate()
            .map(|(i, (a, b, r))| PpiPair {
                a: a.clone(),
                b: b.clone(),
                estimate: r.estimate,
                se: r.se,
                ci: r.ci,
                judge_estimate: r.judge_estimate,
                labelled: counts(r).0,
                p: p[i],
                p_holm: h[i],
                q_bh: bh[i],
                ci_simultaneous: None,
            })
            .collect(),
        simultaneous: None,
        next: None,
        next_undefined: None,
        notes,
    }
}

impl ToView for PpiCompareReport {
    fn to_view(&self) -> View {
        let mut head = vec![
            "system",
            "estimate",
            "se",
            "lower",
            "upper",
            "judge",
            "labelled",
            "unlabelled",
        ];
        let simultaneous = self.simultaneous.is_some();
        if simultaneous {
            head.push("rank");
        }
        let mut systems = Table::new(&head);
        for s in &self.systems {
            let mut row = vec![
                Cell::text(&s.name),
                Cell::num(s.estimate),
                Cell::num(s.se),
                Cell::num(s.ci[0]),
                Cell::num(s.ci[1]),
                Cell::num(s.judge_estimate),
                Cell::Count(s.labelled as u64),
                Cell::Count(s.unlabelled as u64),
            ];
            if let Some(r) = s.rank_ci {
                row.push(Cell::text(format!("{}–{}", r[0], r[1])));
            }
            systems.row(row);
        }
        let mut head = vec![
            "pair",
            "difference",
            "se",
            "lower",
            "upper",
            "judge",
            "labelled",
            "p",
            "p_holm",
            "q_bh",
        ];
        if simultaneous {
            head.extend(["simultaneous_lower", "simultaneous_upper"]);
        }
        let mut pairs = Table::new(&head);
        for p in &self.pairs {
            let mut row = vec![
                Cell::text(format!("{} - {}", p.b, p.a)),
                Cell::num(p.estimate),
                Cell::num(p.se),
                Cell::num(p.ci[0]),
                Cell::num(p.ci[1]),
                Cell::num(p.judge_estimate),
                Cell::Count(p.labelled as u64),
                Cell::num(p.p),
                Cell::num(p.p_holm),
                Cell::num(p.q_bh),
            ];
            if let Some(i) = p.ci_simultaneous {
                row.extend([Cell::num(i[0]), Cell::num(i[1])]);
            }
            pairs.row(row);
        }
        let mut v = View::new(pairs.clone());
        v.text(format!(
            "{}: human-scale estimates (PPI++, labels {} [{}], lambda {}, labelled questions; \
             {} normal intervals, Wald z tests)\n",
            self.metric,
            self.labels,
            self.label_metric,
            self.lambda,
            crate::table::percent(self.confidence)
        ));
        v.table("systems", systems);
        v.text("\n");
        v.table("pairs", pairs);
        if let Some(s) = &self.simultaneous {
            v.text(format!(
                "simultaneous intervals: critical value {:.3} (max-|z| {}; independent systems {:.3}; \
                 Bonferroni {:.3}), ranks at {:.3}; PPI++ bootstrap of every pair, {} replicates, \
                 seed {}, backend {}\n",
                s.critical,
                s.max_t.map_or("-".to_string(), |v| format!("{v:.3}")),
                s.independent,
                s.bonferroni,
                s.critical_ranks,
                s.replicates,
                s.seed,
                s.backend
            ));
        }
        if let Some(n) = &self.next {
            v.text(format!("\nnext step: {}\n", n.text));
        } else if let Some(why) = &self.next_undefined {
            v.text(format!("\nnext step: none ({why})\n"));
        }
        for n in &self.notes {
            v.text(format!("{n}\n"));
        }
        v
    }
}
