//! The release gate's verdict from an interval for CAND − BASE and a margin M ≥ 0: `pass`
//! when the interval's lower end is above −M (no regression beyond the margin), `fail` when
//! its upper end is below −M (a regression beyond the margin shown), else `inconclusive`,
//! with the questions a decision would need.

use serde::Serialize;

use crate::document::Report;
use crate::table::{number, percent, Cell, Table, ToView, View};

/// The gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No regression beyond the margin: the interval's lower end is above −M.
    Pass,
    /// A regression beyond the margin: the interval's upper end is below −M.
    Fail,
    /// The interval straddles −M: not enough data to say.
    Inconclusive,
}

impl Verdict {
    /// The verdict of the interval [lower, upper] for CAND − BASE at margin `margin`.
    pub fn of(lower: f64, upper: f64, margin: f64) -> Verdict {
        if lower > -margin {
            Verdict::Pass
        } else if upper < -margin {
            Verdict::Fail
        } else {
            Verdict::Inconclusive
        }
    }

    /// The verdict's word: `pass`, `fail` or `inconclusive`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The questions a decision needs, as a D-study forecasts them: an interval of half-width h
/// at n questions shrinks as 1/√n, so it clears the threshold −M at distance
/// d = |estimate + M| from the estimate once h·√(n/n') ≤ d, i.e. at
/// n' = ⌈n (h/d)²⌉ questions (the estimate assumed to stay where it is). `None` when the
/// estimate sits on the threshold (d = 0) or the interval is degenerate.
pub fn questions_needed(n: u64, estimate: f64, half_width: f64, margin: f64) -> Option<u64> {
    let d = (estimate + margin).abs();
    if d <= 0.0 || !(half_width.is_finite() && half_width > 0.0) {
        return None;
    }
    let needed = (n as f64 * (half_width / d).powi(2)).ceil();
    (needed.is_finite() && needed < 1e15).then_some(needed as u64)
}

/// The gate's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateReport {
    /// The candidate arm (B of the contrast B-A).
    pub candidate: String,
    /// The baseline arm (A).
    pub baseline: String,
    /// The score column.
    pub metric: String,
    /// `pass`, `fail` or `inconclusive`.
    pub verdict: Verdict,
    /// The margin M: a regression smaller than M is tolerated.
    pub margin: f64,
    /// The interval's level.
    pub confidence: f64,
    /// Whether the interval is the anytime-valid sequence (safe to re-run as data arrive)
    /// rather than the fixed-n interval of `compare`.
    pub sequential: bool,
    /// The interval's method: compare's (`t`, `newcombe`, …) or the sequence's (`prpl-eb`,
    /// `normal-mixture`).
    pub method: String,
    /// CAND − BASE, the equal-weight (or weighted) mean over strata.
    pub estimate: f64,
    /// The interval for CAND − BASE.
    pub interval: [f64; 2],
    /// Questions in the panel.
    pub questions: u64,
    /// Inconclusive: the questions in all a decision is forecast to need
    /// ([`questions_needed`]); `null` otherwise or when undefined.
    pub questions_needed: Option<u64>,
    /// Inconclusive: how many more than the panel has.
    pub more_questions: Option<u64>,
    /// The verdict in a sentence.
    pub reason: String,
    /// What the user should know.
    pub notes: Vec<String>,
}

impl Report for GateReport {}

impl GateReport {
    /// The report from an interval: its verdict, reason and questions needed.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        (candidate, baseline): (String, String),
        metric: String,
        (estimate, lower, upper): (f64, f64, f64),
        questions: u64,
        margin: f64,
        confidence: f64,
        (sequential, method): (bool, String),
        notes: Vec<String>,
    ) -> GateReport {
        let verdict = Verdict::of(lower, upper, margin);
        // 0 − M, not −M: a margin of 0 is the threshold 0, never −0.
        let threshold = number(0.0 - margin);
        let diff = format!("{candidate} - {baseline}");
        let level = percent(confidence);
        let needed = match verdict {
            Verdict::Inconclusive => {
                questions_needed(questions, estimate, (upper - lower) / 2.0, margin)
            }
            _ => None,
        };
        let reason = match verdict {
            Verdict::Pass => format!(
                "pass: the {level} interval for {diff} lies above {threshold}: no regression \
                 beyond the margin"
            ),
            Verdict::Fail => format!(
                "fail: the {level} interval for {diff} lies below {threshold}: a regression \
                 beyond the margin"
            ),
            Verdict::Inconclusive => format!(
                "inconclusive: the {level} interval for {diff} contains {threshold}; {}",
                match needed {
                    Some(n) => format!(
                        "about {n} questions in all ({} more) would decide, if the estimate \
                         holds",
                        n.saturating_sub(questions)
                    ),
                    None => "the estimate sits on the threshold: no number of questions is \
                             forecast to decide"
                        .to_string(),
                }
            ),
        };
        GateReport {
            candidate,
            baseline,
            metric,
            verdict,
            margin,
            confidence,
            sequential,
            method,
            estimate,
            interval: [lower, upper],
            questions,
            questions_needed: needed,
            more_questions: needed.map(|n| n.saturating_sub(questions)),
            reason,
            notes,
        }
    }

    /// The gate as a Markdown summary for a pull-request comment.
    pub fn markdown(&self) -> String {
        let icon = match self.verdict {
            Verdict::Pass => "✅",
            Verdict::Fail => "❌",
            Verdict::Inconclusive => "⚠️",
        };
        let mut out = format!(
            "### {icon} ragstats gate: **{}**\n\n{}\n\n",
            self.verdict.word(),
            self.reason
        );
        out.push_str("| | |\n|---|---|\n");
        let rows = [
            (
                "contrast".to_string(),
                format!("`{} - {}` ({})", self.candidate, self.baseline, self.metric),
            ),
            ("estimate".into(), number(self.estimate)),
            (
                format!("{} interval", percent(self.confidence)),
                format!(
                    "[{}, {}]",
                    number(self.interval[0]),
                    number(self.interval[1])
                ),
            ),
            ("margin".into(), number(self.margin)),
            ("questions".into(), self.questions.to_string()),
            (
                "method".into(),
                format!(
                    "{}{}",
                    self.method,
                    if self.sequential {
                        " (anytime-valid)"
                    } else {
                        " (fixed-n)"
                    }
                ),
            ),
        ];
        for (k, v) in rows {
            out.push_str(&format!("| {k} | {v} |\n"));
        }
        if let Some(n) = self.questions_needed {
            out.push_str(&format!("| questions needed | about {n} |\n"));
        }
        out
    }
}

impl ToView for GateReport {
    fn to_view(&self) -> View {
        let mut table = Table::new(&[
            "verdict",
            "candidate",
            "baseline",
            "estimate",
            "lower",
            "upper",
            "margin",
            "questions",
            "questions_needed",
        ]);
        table.row([
            Cell::text(self.verdict.word()),
            Cell::text(&self.candidate),
            Cell::text(&self.baseline),
            Cell::num(self.estimate),
            Cell::num(self.interval[0]),
            Cell::num(self.interval[1]),
            Cell::num(self.margin),
            Cell::Count(self.questions),
            self.questions_needed.map_or(Cell::Missing, Cell::Count),
        ]);
        let mut view = View::new(table);
        view.text(format!(
            "gate: {} - {} ({}), margin {}, {} {} interval ({})\n",
            self.candidate,
            self.baseline,
            self.metric,
            number(self.margin),
            percent(self.confidence),
            if self.sequential {
                "anytime-valid"
            } else {
                "fixed-n"
            },
            self.method
        ));
        view.text(format!(
            "estimate {} [{}, {}] on {} questions\n{}\n",
            number(self.estimate),
            number(self.interval[0]),
            number(self.interval[1]),
            self.questions,
            self.reason
        ));
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_follows_the_interval_and_the_margin() {
        assert_eq!(Verdict::of(-0.01, 0.05, 0.02), Verdict::Pass);
        assert_eq!(Verdict::of(-0.03, 0.05, 0.02), Verdict::Inconclusive);
        assert_eq!(Verdict::of(-0.09, -0.03, 0.02), Verdict::Fail);
        assert_eq!(Verdict::of(0.001, 0.02, 0.0), Verdict::Pass);
        assert_eq!(Verdict::of(-0.001, 0.02, 0.0), Verdict::Inconclusive);
    }

    /// n (h/d)²: 100 questions, half-width 0.05, the estimate 0.01 above −0.02 (d = 0.03):
    /// 100 · (5/3)² = 277.8 → 278.
    #[test]
    fn the_questions_needed_are_the_d_study_forecast() {
        assert_eq!(questions_needed(100, 0.01, 0.05, 0.02), Some(278));
        assert_eq!(questions_needed(100, -0.02, 0.05, 0.02), None);
        assert_eq!(questions_needed(100, 0.1, 0.0, 0.0), None);
    }
}
