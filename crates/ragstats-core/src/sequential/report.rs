//! What `sequential` reports: the confidence sequence at every look over the panel's
//! questions in arrival order, when it resolved the comparison (or reached the width asked
//! for), and the questions that stopping there saves ([`monitor`]).

use serde::Serialize;

use super::{Bound, Interval, RoundPlan, Sequence, StrataRule};
use crate::document::Report;
use crate::resample::summary::{normal_quantile, tail_probability};
use crate::table::{percent, Cell, Table, ToView, View};
use crate::Result;

/// One look: the questions seen, the estimate, the sequence's interval there.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Look {
    /// Questions seen (over all strata).
    pub questions: u64,
    /// The weighted mean of the strata's means; `null` while a stratum has no question.
    pub estimate: Option<f64>,
    /// The sequence's interval [lower, upper]; an end is `null` when unbounded.
    pub interval: [Option<f64>; 2],
    /// Half its width; `null` when unbounded.
    pub half_width: Option<f64>,
    /// Whether the interval lies wholly beyond the margin (excludes 0 without one).
    pub resolved: bool,
    /// In rounds: the complete rounds the look's interval and estimate are of (a look
    /// mid-round reports the last complete one); absent with the union bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
}

impl Look {
    fn of(i: &Interval, margin: f64) -> Look {
        Look {
            questions: i.questions,
            estimate: i.estimate,
            interval: [i.lower, i.upper],
            half_width: i.half_width(),
            resolved: i.excludes(margin),
            rounds: i.rounds,
        }
    }
}

/// A stratum of the sequence: its name, weight and questions, and in rounds its questions
/// per round and those no complete round holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequenceStratum {
    pub name: String,
    pub weight: f64,
    pub questions: u64,
    /// In rounds: m_d, its questions in each round; `null` with the union bound.
    pub round_size: Option<u64>,
    /// In rounds: its last questions that complete no round (n_d − K·m_d), not counted.
    pub left_out: u64,
}

/// The rule a sequential analysis stops by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopRule {
    /// Stop when the sequence excludes 0 (or lies beyond the margin).
    Resolved,
    /// Stop when the sequence is as narrow as a fixed-n interval of the target SE.
    Se,
}

/// The sequential analysis of a panel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequentialReport {
    /// The outcome monitored: a contrast `B-A`, an arm, or the metric.
    pub outcome: String,
    /// The score column.
    pub metric: String,
    /// The sequence's level, simultaneous over every look.
    pub confidence: f64,
    /// `prpl-eb` (bounded scores) or `normal-mixture` (a sub-Gaussian scale).
    pub method: &'static str,
    /// What bounds the question means.
    pub bound: Bound,
    /// How the strata are combined: `rounds` (one sequence on the rounds' weighted means)
    /// or `union` (each stratum's sequence at α/D).
    pub strata_rule: StrataRule,
    /// In rounds: K, the rounds the panel's strata complete; `null` with the union bound.
    pub rounds: Option<u64>,
    /// The arrival order: `file`, or the column the questions were ordered by.
    pub order: String,
    /// Questions between looks.
    pub look_every: u64,
    /// The margin a difference must exceed to be resolved (0: excludes 0).
    pub margin: f64,
    /// The target SE of the width rule, when given.
    pub until_se: Option<f64>,
    /// What stopped_at stops for.
    pub rule: StopRule,
    /// The strata, their weights and questions.
    pub strata: Vec<SequenceStratum>,
    /// Questions in the panel.
    pub questions: u64,
    /// Every look, in order.
    pub looks: Vec<Look>,
    /// `resolved` when the interval at the stop (or, never stopped, at the last look)
    /// excludes 0 or lies beyond the margin, else `unresolved`.
    pub decision: &'static str,
    /// The questions at the first look where the rule held; `null` if it never did.
    pub stopped_at: Option<u64>,
    /// The first look at which the sequence resolved the comparison.
    pub resolved_at: Option<u64>,
    /// The first look at which the sequence was as narrow as a fixed-n interval of SE
    /// `until_se` (half-width ≤ z·until_se).
    pub se_reached_at: Option<u64>,
    /// Questions of the panel stopping at stopped_at saves.
    pub saved: Option<u64>,
    /// The interval at the last look (all questions).
    pub last: Look,
    /// What the user should know (the range assumed, the arrival order).
    pub notes: Vec<String>,
}

impl Report for SequentialReport {}

/// What the analysis needs besides the observations.
#[derive(Debug, Clone)]
pub struct MonitorSpec {
    pub outcome: String,
    pub metric: String,
    pub order: String,
    pub confidence: f64,
    pub bound: Bound,
    pub look_every: u64,
    pub margin: f64,
    pub until_se: Option<f64>,
    /// The rounds, or `None` for the union bound.
    pub rounds: Option<RoundPlan>,
    pub notes: Vec<String>,
}

/// Runs the sequence over `arrivals` ((stratum index, question mean) in arrival order) of
/// the strata `strata` (name, weight), looking every `spec.look_every` questions and at the
/// last.
///
/// # Errors
/// Those of [`Sequence::new`] and [`Sequence::observe`].
pub fn monitor(
    strata: &[(String, f64)],
    arrivals: &[(usize, f64)],
    spec: MonitorSpec,
) -> Result<SequentialReport> {
    let mut seq = match &spec.rounds {
        Some(plan) => Sequence::in_rounds(
            strata,
            spec.bound,
            spec.confidence,
            &plan.sizes,
            plan.rounds,
        )?,
        None => Sequence::new(strata, spec.bound, spec.confidence)?,
    };
    let z = normal_quantile(1.0 - tail_probability(spec.confidence));
    let n = arrivals.len() as u64;
    let mut looks = Vec::new();
    let (mut resolved_at, mut se_reached_at) = (None, None);
    for (i, &(d, x)) in arrivals.iter().enumerate() {
        seq.observe(d, x)?;
        let t = i as u64 + 1;
        if t.is_multiple_of(spec.look_every) || t == n {
            let look = Look::of(&seq.interval(), spec.margin);
            if look.resolved && resolved_at.is_none() {
                resolved_at = Some(t);
            }
            if let (Some(se), Some(h), None) = (spec.until_se, look.half_width, se_reached_at) {
                if h <= z * se {
                    se_reached_at = Some(t);
                }
            }
            looks.push(look);
        }
    }
    let rule = if spec.until_se.is_some() {
        StopRule::Se
    } else {
        StopRule::Resolved
    };
    let stopped_at = match rule {
        StopRule::Resolved => resolved_at,
        StopRule::Se => se_reached_at,
    };
    let last = Look::of(&seq.interval(), spec.margin);
    let at_stop = stopped_at
        .and_then(|s| looks.iter().find(|l| l.questions == s))
        .unwrap_or(&last);
    let mut counts = vec![0u64; strata.len()];
    for &(d, _) in arrivals {
        counts[d] += 1;
    }
    Ok(SequentialReport {
        outcome: spec.outcome,
        metric: spec.metric,
        confidence: spec.confidence,
        method: match spec.bound {
            Bound::Range { .. } => "prpl-eb",
            Bound::SubGaussian { .. } => "normal-mixture",
        },
        bound: spec.bound,
        strata_rule: if spec.rounds.is_some() {
            StrataRule::Rounds
        } else {
            StrataRule::Union
        },
        rounds: spec.rounds.as_ref().map(|p| p.rounds),
        order: spec.order,
        look_every: spec.look_every,
        margin: spec.margin,
        until_se: spec.until_se,
        rule,
        strata: strata
            .iter()
            .zip(counts)
            .enumerate()
            .map(|(d, ((name, weight), questions))| SequenceStratum {
                name: name.clone(),
                weight: *weight,
                questions,
                round_size: spec.rounds.as_ref().map(|p| p.sizes[d]),
                left_out: spec.rounds.as_ref().map_or(0, |p| {
                    let counted = seq.rounds.as_ref().map_or(0, |r| r.complete) * p.sizes[d];
                    questions.saturating_sub(counted)
                }),
            })
            .collect(),
        questions: n,
        decision: if at_stop.resolved {
            "resolved"
        } else {
            "unresolved"
        },
        stopped_at,
        resolved_at,
        se_reached_at,
        saved: stopped_at.map(|s| n - s),
        looks,
        last,
        notes: spec.notes,
    })
}

/// An interval's ends as text: `[lower, upper]`, an unbounded end `-inf`/`inf`.
pub fn interval_text(i: &[Option<f64>; 2]) -> String {
    let end = |v: Option<f64>, inf: &str| v.map_or(inf.to_string(), crate::table::number);
    format!("[{}, {}]", end(i[0], "-inf"), end(i[1], "inf"))
}

impl SequentialReport {
    /// The sentence saying what the sequence decided and where.
    pub fn verdict_line(&self) -> String {
        let beyond = if self.margin > 0.0 {
            format!("the margin ±{}", crate::table::number(self.margin))
        } else {
            "0".to_string()
        };
        let rule = match self.rule {
            StopRule::Resolved => format!("excludes {beyond}"),
            StopRule::Se => format!(
                "is as narrow as a fixed-n interval of SE {}",
                crate::table::number(self.until_se.unwrap_or(0.0))
            ),
        };
        match self.stopped_at {
            Some(s) => format!(
                "stop: at {s} of {} questions the sequence {rule}; decision {}; {} questions \
                 saved",
                self.questions,
                self.decision,
                self.saved.unwrap_or(0)
            ),
            None => format!(
                "stop: none; at all {} questions the sequence never {rule}; decision {}",
                self.questions, self.decision
            ),
        }
    }
}

impl ToView for SequentialReport {
    fn to_view(&self) -> View {
        let mut table = Table::new(&[
            "questions",
            "estimate",
            "lower",
            "upper",
            "half_width",
            "resolved",
        ]);
        for l in &self.looks {
            table.row([
                Cell::Count(l.questions),
                Cell::opt_num(l.estimate),
                Cell::opt_num(l.interval[0]),
                Cell::opt_num(l.interval[1]),
                Cell::opt_num(l.half_width),
                Cell::text(if l.resolved { "yes" } else { "no" }),
            ]);
        }
        let bound = match self.bound {
            Bound::Range { lo, hi } => format!("question means in [{lo}, {hi}]"),
            Bound::SubGaussian { sigma, .. } => {
                format!("sub-Gaussian scale {}", crate::table::number(sigma))
            }
        };
        let order = if self.order == "file" {
            "in file order".to_string()
        } else {
            format!("ordered by {}", self.order)
        };
        let strata: Vec<String> = self
            .strata
            .iter()
            .map(|s| {
                format!(
                    "{} (weight {}, {} questions{})",
                    s.name,
                    crate::table::number(s.weight),
                    s.questions,
                    match (self.strata.len(), s.round_size) {
                        (2.., Some(m)) => format!(", {m} a round"),
                        _ => String::new(),
                    }
                )
            })
            .collect();
        let combined = match (self.strata.len(), self.rounds) {
            (0 | 1, _) => String::new(),
            (_, Some(k)) => format!("; combined in {k} rounds (one sequence on the rounds' means)"),
            (_, None) => {
                "; combined by the union bound (each stratum's sequence at alpha/D)".into()
            }
        };
        let mut view = View::new(table.clone());
        view.text(format!(
            "sequential: {}, {} confidence sequence ({}, {bound}), a look every {} \
             questions {order}\nstrata: {}{combined}\n\n",
            self.outcome,
            percent(self.confidence),
            self.method,
            self.look_every,
            strata.join(", ")
        ));
        view.table("looks", table);
        view.text(format!(
            "\n{}\nlast look: estimate {}, {} at {} questions\n",
            self.verdict_line(),
            self.last
                .estimate
                .map_or("-".to_string(), crate::table::number),
            interval_text(&self.last.interval),
            self.last.questions
        ));
        view
    }
}
