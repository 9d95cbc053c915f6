//! `sequential`: the panel's questions taken as they arrived (file order, or by a column),
//! an anytime-valid confidence sequence for the contrast (or an arm's mean) at every look,
//! when it resolves the comparison or reaches a target width, and the questions stopping
//! there saves ([`crate::sequential`]).

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::source_input;
use crate::components::levels::question_mean;
use crate::document::{Finished, Inputs};
use crate::import::{Balance, PanelSettings};
use crate::io::from_text::{number_opt, parsed_opt};
use crate::panel::{Panel, Source};
use crate::sequential::report::{monitor, MonitorSpec, SequentialReport};
use crate::sequential::{Bound, RoundPlan, StrataRule, MIN_ROUNDS};
use crate::{Error, Result};

/// The range [LO, HI] every score lies in, written `LO,HI`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreRange(pub f64, pub f64);

impl std::str::FromStr for ScoreRange {
    type Err = String;

    /// Parses `LO,HI` (finite, LO < HI).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = || format!("{s}: expected LO,HI with finite LO < HI, e.g. 0,1");
        let (a, b) = s.split_once(',').ok_or_else(bad)?;
        let (lo, hi): (f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(bad());
        }
        Ok(ScoreRange(lo, hi))
    }
}

/// The settings of [`sequential`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct SequentialSettings {
    /// How the panel is read; a contrast `B-A` (or one arm) is the outcome monitored.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The questions' arrival order and what bounds their scores.
    #[serde(flatten)]
    pub shape: SequenceShape,
    /// Questions between looks.
    pub look_every: u64,
    /// The sequence's confidence level, simultaneous over every look.
    pub confidence: f64,
    /// Resolved means a difference larger than this (in score units) is shown: the
    /// sequence lies wholly above the margin or wholly below minus it (0: excludes 0).
    pub margin: f64,
    /// Stop when the sequence is as narrow as a fixed-n interval with this standard error
    /// (instead of when it resolves the comparison).
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub until_se: Option<f64>,
}

/// How a confidence sequence is set up beyond its level: the order the questions arrive in
/// and what bounds their scores (the settings `sequential` and `gate`'s sequence share).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct SequenceShape {
    /// The numeric column giving the questions' arrival order (a time or an index; a
    /// question arrives at its smallest value); default: the order of the questions' first
    /// rows in the file.
    pub order_by: Option<String>,
    /// The range `LO,HI` every score lies in (default: 0,1, a contrast's −1,1, when the
    /// question means lie there); the betting sequence needs bounded scores.
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub range: Option<ScoreRange>,
    /// For unbounded scores: a sub-Gaussian scale σ of the question means (a bound on
    /// their SD for roughly normal scores); the normal-mixture sequence instead.
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub sigma: Option<f64>,
    /// How the strata are combined: `rounds` (one sequence on rounds of m_d questions of
    /// every stratum, m_d in proportion to the strata's sizes) or `union` (each stratum's
    /// own sequence at α/D, the ends added). Default: rounds when the strata's sizes give
    /// at least 20 rounds, else union.
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub strata: Option<StrataRule>,
}

impl SequenceShape {
    /// Refuses any of these settings for an interval that is not a sequence (`gate`
    /// without `sequential`).
    ///
    /// # Errors
    /// [`Error::Setting`] naming the first setting given.
    pub fn refuse_without_sequence(&self) -> Result<()> {
        for (name, set) in [
            ("order_by", self.order_by.is_some()),
            ("range", self.range.is_some()),
            ("sigma", self.sigma.is_some()),
            ("strata", self.strata.is_some()),
        ] {
            if set {
                return Err(Error::setting(
                    name,
                    "sets up the confidence sequence, which needs sequential",
                ));
            }
        }
        Ok(())
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::Setting`] naming the setting: both a range and a sigma, a sigma that is not
    /// positive, an empty `order_by`.
    pub fn check(&self) -> Result<()> {
        if let Some(sigma) = self.sigma {
            if self.range.is_some() {
                return Err(Error::setting(
                    "sigma",
                    "bounds unbounded scores, and range bounds them: give one or the other",
                ));
            }
            if !(sigma.is_finite() && sigma > 0.0) {
                return Err(Error::setting(
                    "sigma",
                    format!("{sigma}: expected a positive sub-Gaussian scale, e.g. 0.5"),
                ));
            }
        }
        if self
            .order_by
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(Error::setting(
                "order_by",
                "expected a numeric column, e.g. timestamp",
            ));
        }
        Ok(())
    }
}

impl Default for SequentialSettings {
    fn default() -> Self {
        SequentialSettings {
            panel: PanelSettings::default(),
            shape: SequenceShape::default(),
            look_every: 25,
            confidence: 0.95,
            margin: 0.0,
            until_se: None,
        }
    }
}

impl SequentialSettings {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::Setting`] naming the setting: a look spacing of 0, a confidence outside
    /// (0, 1), a negative or non-finite margin, a target SE that is not positive, both a
    /// range and a sigma, a sigma that is not positive, an empty `order_by`, and the panel
    /// settings' errors.
    pub fn check(&self) -> Result<()> {
        self.panel.check()?;
        if self.look_every == 0 {
            return Err(Error::setting(
                "look_every",
                "must be at least 1 question, e.g. 25",
            ));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::setting(
                "confidence",
                format!(
                    "{} must be between 0 and 1 (exclusive), e.g. 0.95",
                    self.confidence
                ),
            ));
        }
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return Err(Error::setting(
                "margin",
                format!(
                    "{}: expected a difference of 0 or more in score units, e.g. 0.02",
                    self.margin
                ),
            ));
        }
        if let Some(se) = self.until_se {
            if !(se.is_finite() && se > 0.0) {
                return Err(Error::setting(
                    "until_se",
                    format!("{se}: expected a positive standard error, e.g. 0.01"),
                ));
            }
        }
        self.shape.check()
    }
}

/// The sequential analysis of the panel `panel` holds (a file, logs read as one set, or a
/// table): its questions in arrival order, the sequence at every look, the stop and the
/// questions saved.
///
/// # Errors
/// Those of [`SequentialSettings::check`], of loading the panel, a question mean outside
/// the range, and a panel whose question means leave [0, 1] (or a contrast's [−1, 1]) without
/// a range or sigma.
pub fn sequential(panel: &Source, settings: &SequentialSettings) -> Result<Finished> {
    let (report, mut notes) = sequential_run(panel, settings, None)?;
    notes.extend(report.notes.iter().cloned());
    let inputs = source_input(Inputs::new(), "panel", panel);
    Ok(Finished::new("sequential", inputs, report).with_notes_after(notes))
}

/// The report of [`sequential`] alone (the gate's sequential interval).
///
/// # Errors
/// As [`sequential`].
pub fn sequential_report(
    panel: &Source,
    settings: &SequentialSettings,
) -> Result<SequentialReport> {
    sequential_run(panel, settings, None).map(|(r, _)| r)
}

/// The report of [`sequential`] for a panel that grows towards a planned design (`stats run
/// --until`'s panel after each wave): the rounds are those of `planned`, the questions each
/// stratum (by name) will have at most, fixed before monitoring, so that every look takes
/// the same rounds. A stratum `planned` does not name is planned at its panel's size.
///
/// # Errors
/// As [`sequential`].
pub fn sequential_report_planned(
    panel: &Source,
    settings: &SequentialSettings,
    planned: &BTreeMap<String, u64>,
) -> Result<SequentialReport> {
    sequential_run(panel, settings, Some(planned)).map(|(r, _)| r)
}

/// The report and the panel's loading notes.
fn sequential_run(
    panel: &Source,
    settings: &SequentialSettings,
    planned: Option<&BTreeMap<String, u64>>,
) -> Result<(SequentialReport, Vec<String>)> {
    let s = settings;
    s.check()?;
    let loaded = s.panel.load(panel, Balance::Fitted)?;
    let loading_notes = s.panel.loading_notes(&loaded, true);
    let run = || -> Result<SequentialReport> {
        let arrivals = arrivals(panel, s, &loaded)?;
        let mut notes = Vec::new();
        let bound = bound(s, &loaded, &arrivals, &mut notes)?;
        let weights = loaded.stratum_weights();
        let strata: Vec<(String, f64)> = loaded
            .strata
            .iter()
            .zip(weights)
            .map(|(st, w)| (st.name.clone(), w))
            .collect();
        let sizes: Vec<u64> = loaded
            .strata
            .iter()
            .map(|st| {
                planned
                    .and_then(|p| p.get(&st.name).copied())
                    .unwrap_or(st.q() as u64)
            })
            .collect();
        let rounds = round_plan(
            s.shape.strata,
            &strata,
            &sizes,
            (
                planned.is_some(),
                matches!(bound, Bound::Range { .. }),
                1.0 - s.confidence,
            ),
            &mut notes,
        );
        monitor(
            &strata,
            &arrivals,
            MonitorSpec {
                outcome: loaded.outcome.clone(),
                metric: loaded.metric.clone(),
                order: s.shape.order_by.clone().unwrap_or_else(|| "file".into()),
                confidence: s.confidence,
                bound,
                look_every: s.look_every,
                margin: s.margin,
                until_se: s.until_se,
                rounds,
                notes,
            },
        )
    };
    let report = run().map_err(|e| e.noted(loading_notes.clone()))?;
    Ok((report, loading_notes))
}

/// The loaded panel's questions as (stratum index, question mean) in arrival order: the
/// order of each question's first row in the rows read, or by its smallest value of
/// `order_by` (ties by the first row). Questions the rows do not name (none, normally)
/// follow in the panel's order.
fn arrivals(panel: &Source, s: &SequentialSettings, loaded: &Panel) -> Result<Vec<(usize, f64)>> {
    let mut opts = s.panel.load_options(Balance::Fitted);
    if let Some(column) = &s.shape.order_by {
        opts.metric = Some(column.trim().to_string());
    }
    let rows = crate::import::panel_rows(panel, &opts, &s.panel.import_options())?;
    let mut order = rows.question_arrival();
    if s.shape.order_by.is_some() {
        order.sort_by(|a, b| a.3.total_cmp(&b.3).then(a.2.cmp(&b.2)));
    }
    let mut index: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
    for (d, st) in loaded.strata.iter().enumerate() {
        for (q, name) in st.questions.iter().enumerate() {
            index.insert((st.name.as_str(), name.as_str()), (d, q));
        }
    }
    let mut seen: Vec<Vec<bool>> = loaded.strata.iter().map(|st| vec![false; st.q()]).collect();
    let mut out = Vec::with_capacity(index.len());
    let mut push = |d: usize, q: usize, out: &mut Vec<(usize, f64)>| {
        if !seen[d][q] {
            seen[d][q] = true;
            out.push((d, question_mean(&loaded.strata[d], q)));
        }
    };
    for (stratum, question, _, _) in &order {
        if let Some(&(d, q)) = index.get(&(stratum.as_str(), question.as_str())) {
            push(d, q, &mut out);
        }
    }
    for (d, st) in loaded.strata.iter().enumerate() {
        for q in 0..st.q() {
            push(d, q, &mut out);
        }
    }
    Ok(out)
}

/// The rounds the strata are combined in (`None`: the union bound), by the `strata` setting
/// or, without it, by the design alone: rounds when the sizes `sizes` give at least
/// [`MIN_ROUNDS`] and, for the betting sequence (`range`), [`RoundPlan::beats_union`]. The
/// notes say which and what it leaves out (`planned`: the sizes are a run's plan, and the
/// questions left out are only known at the end).
fn round_plan(
    rule: Option<StrataRule>,
    strata: &[(String, f64)],
    sizes: &[u64],
    (planned, range, alpha): (bool, bool, f64),
    notes: &mut Vec<String>,
) -> Option<RoundPlan> {
    let plan = RoundPlan::of_sizes(sizes)?;
    let several = strata.len() > 1;
    let weights: Vec<f64> = strata.iter().map(|s| s.1).collect();
    let chosen = match rule {
        Some(StrataRule::Union) => return None,
        Some(StrataRule::Rounds) => true,
        None => plan.rounds >= MIN_ROUNDS && (!range || plan.beats_union(sizes, &weights, alpha)),
    };
    if !chosen {
        if several {
            let why = if plan.rounds < MIN_ROUNDS {
                format!("give only {} rounds (fewer than {MIN_ROUNDS})", plan.rounds)
            } else {
                format!(
                    "give {} rounds, fewer observations than the large strata's questions, so \
                     rounds would be wider",
                    plan.rounds
                )
            };
            notes.push(format!(
                "note: the strata's sizes {why}: each stratum keeps its own sequence at \
                 alpha/{} and the ends are added (the union bound); strata rounds asks for \
                 rounds anyway",
                strata.len()
            ));
        }
        return None;
    }
    if several {
        let per: Vec<String> = strata
            .iter()
            .zip(&plan.sizes)
            .map(|((name, _), m)| format!("{m} from {name}"))
            .collect();
        notes.push(format!(
            "note: the strata are combined in {} rounds of {} (questions): one sequence on the \
             rounds' weighted means at the full level (no union bound); a look mid-round \
             shows the last complete round",
            plan.rounds,
            per.join(" + ")
        ));
        let left: Vec<String> = strata
            .iter()
            .zip(&plan.left_out)
            .filter(|(_, &n)| n > 0)
            .map(|((name, _), n)| format!("{n} of {name}"))
            .collect();
        if !left.is_empty() && !planned {
            notes.push(format!(
                "note: the last {} questions complete no round and are left out of the \
                 sequence (strata union counts every question)",
                left.join(", ")
            ));
        }
    }
    Some(plan)
}

/// What bounds the question means: the range or sigma given, else [0, 1] (a contrast's
/// [−1, 1]) when every question mean lies there, with a note saying so.
fn bound(
    s: &SequentialSettings,
    loaded: &Panel,
    arrivals: &[(usize, f64)],
    notes: &mut Vec<String>,
) -> Result<Bound> {
    if let Some(ScoreRange(lo, hi)) = s.shape.range {
        let (lo, hi) = if s.panel.contrast.is_some() {
            (lo - hi, hi - lo)
        } else {
            (lo, hi)
        };
        return Ok(Bound::Range { lo, hi });
    }
    if let Some(sigma) = s.shape.sigma {
        let horizon = loaded.strata.iter().map(|st| st.q()).max().unwrap_or(1) as u64;
        return Ok(Bound::SubGaussian {
            sigma,
            horizon: horizon.max(1),
        });
    }
    let (lo, hi) = if s.panel.contrast.is_some() {
        (-1.0, 1.0)
    } else {
        (0.0, 1.0)
    };
    let (min, max) = arrivals
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(_, x)| {
            (a.min(x), b.max(x))
        });
    if min < lo || max > hi {
        return Err(Error::setting(
            "range",
            format!(
                "the question means of {} run from {} to {}, outside [{lo}, {hi}]: give the \
                 scores' range LO,HI (or sigma, a sub-Gaussian scale, for unbounded scores)",
                loaded.outcome,
                crate::table::number(min),
                crate::table::number(max)
            ),
        ));
    }
    notes.push(format!(
        "note: the sequence assumes every score of {} lies in [0, 1]{}; give range LO,HI if \
         it does not",
        loaded.metric,
        if s.panel.contrast.is_some() {
            " (a contrast in [-1, 1])"
        } else {
            ""
        }
    ));
    Ok(Bound::Range { lo, hi })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::demo;
    use super::*;

    fn contrast() -> SequentialSettings {
        SequentialSettings {
            panel: PanelSettings {
                contrast: Some("adaptive-open".into()),
                metric: Some("f1".into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The demo panel's contrast, taken in file order (every hotpotqa question, then every
    /// musique one): looks every 25 questions and at 446; the estimate at the last look is
    /// compare's (tests/reference/compare.py: adaptive − open on f1).
    #[test]
    fn the_demo_contrast_is_monitored_in_file_order() {
        let r =
            sequential_report(&demo("panel.csv"), &contrast()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.questions, 446);
        assert_eq!(r.looks.len(), 446 / 25 + 1);
        assert_eq!(r.looks[0].questions, 25);
        assert_eq!(r.looks.last().unwrap().questions, 446);
        // musique's first question is the 224th: until then the estimate is undefined.
        assert!(r
            .looks
            .iter()
            .take_while(|l| l.questions < 224)
            .all(|l| l.estimate.is_none()));
        assert!(r
            .looks
            .iter()
            .skip_while(|l| l.questions < 224)
            .all(|l| l.estimate.is_some()));
        assert_eq!(
            r.strata.iter().map(|s| s.questions).collect::<Vec<_>>(),
            [223, 223]
        );
        assert_eq!(r.method, "prpl-eb");
        assert_eq!(r.bound, Bound::Range { lo: -1.0, hi: 1.0 });
        let last = r.last;
        let (l, u) = (last.interval[0].unwrap(), last.interval[1].unwrap());
        assert!(l <= last.estimate.unwrap() && last.estimate.unwrap() <= u);
        assert_eq!(r.saved, r.stopped_at.map(|s| 446 - s));
    }

    #[test]
    fn each_bad_setting_is_named() {
        let cases: Vec<(SequentialSettings, &str, &str)> = vec![
            (
                SequentialSettings {
                    look_every: 0,
                    ..contrast()
                },
                "look_every",
                "must be at least 1 question, e.g. 25",
            ),
            (
                SequentialSettings {
                    confidence: 1.0,
                    ..contrast()
                },
                "confidence",
                "1 must be between 0 and 1 (exclusive), e.g. 0.95",
            ),
            (
                SequentialSettings {
                    margin: -0.1,
                    ..contrast()
                },
                "margin",
                "-0.1: expected a difference of 0 or more in score units, e.g. 0.02",
            ),
            (
                SequentialSettings {
                    until_se: Some(0.0),
                    ..contrast()
                },
                "until_se",
                "0: expected a positive standard error, e.g. 0.01",
            ),
            (
                SequentialSettings {
                    shape: SequenceShape {
                        sigma: Some(1.0),
                        range: Some(ScoreRange(0.0, 1.0)),
                        ..Default::default()
                    },
                    ..contrast()
                },
                "sigma",
                "bounds unbounded scores, and range bounds them: give one or the other",
            ),
        ];
        for (s, name, msg) in cases {
            match sequential(&demo("panel.csv"), &s) {
                Err(Error::Setting { setting, msg: m }) => {
                    assert_eq!((setting, m.as_str()), (name, msg))
                }
                other => panic!("expected a setting error, got {:?}", other.map(|_| ())),
            }
        }
        assert_eq!(
            "1,0".parse::<ScoreRange>().unwrap_err(),
            "1,0: expected LO,HI with finite LO < HI, e.g. 0,1"
        );
    }
}
