//! `gate`: a release gate for CI pipelines — is the candidate arm no worse than the baseline
//! beyond a margin? The interval for CAND − BASE is `compare`'s (fixed n), or with
//! `sequential` the anytime-valid confidence sequence at all the panel's questions (safe for
//! a pipeline that re-runs the gate as data accumulate); the verdict is
//! [`crate::sequential::gate::Verdict`]. The library returns the verdict; the command line
//! turns it into exit 0 (pass), 3 (fail) or 4 (inconclusive).

use serde::Deserialize;

use super::sequential::{sequential_report, SequenceShape, SequentialSettings};
use super::{compare_report, source_input, CompareSettings, Engines, Progress};
use crate::document::{Finished, Inputs};
use crate::import::PanelSettings;
use crate::inference::IntervalRule;
use crate::io::from_text::parsed;
use crate::panel::Source;
use crate::resample::ResampleSettings;
use crate::sequential::gate::GateReport;
use crate::{Error, Result};

/// The settings of [`gate`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct GateSettings {
    /// How the panel is read; its contrast `CAND-BASE` (needed) is the candidate against
    /// the baseline.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The regression tolerated, in score units (≥ 0): pass when the interval's lower end
    /// is above −margin, fail when its upper end is below it.
    pub margin: f64,
    /// The interval's confidence level.
    pub confidence: f64,
    /// Use the anytime-valid confidence sequence (for a pipeline that re-runs the gate as
    /// data accumulate) instead of compare's fixed-n interval.
    pub sequential: bool,
    /// Fixed-n intervals: `auto`, `t`, `score` or `clopper-pearson` (as compare).
    #[serde(deserialize_with = "parsed")]
    pub interval: IntervalRule,
    /// With sequential: the questions' arrival order and what bounds their scores.
    #[serde(flatten)]
    pub shape: SequenceShape,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            panel: PanelSettings::default(),
            margin: 0.0,
            confidence: 0.95,
            sequential: false,
            interval: IntervalRule::Auto,
            shape: SequenceShape::default(),
        }
    }
}

impl GateSettings {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::Setting`]: no contrast, a margin that is negative or not finite, a
    /// confidence outside (0, 1), order_by / range / sigma without sequential, and the
    /// panel settings' errors.
    pub fn check(&self) -> Result<()> {
        self.panel.check()?;
        if self.panel.contrast.is_none() {
            return Err(Error::setting(
                "contrast",
                "the gate needs the contrast CAND-BASE: the candidate arm, then the baseline",
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
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::setting(
                "confidence",
                format!(
                    "{} must be between 0 and 1 (exclusive), e.g. 0.95",
                    self.confidence
                ),
            ));
        }
        if !self.sequential {
            self.shape.refuse_without_sequence()?;
        }
        self.shape.check()
    }
}

/// The gate of the panel `panel` holds: its verdict, the numbers behind it and, when
/// inconclusive, the questions a decision needs.
///
/// # Errors
/// Those of [`GateSettings::check`], of loading the panel and of the interval (compare's or
/// the sequence's).
pub fn gate(
    panel: &Source,
    settings: &GateSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<Finished> {
    let (report, notes) = gate_report(panel, settings, engines, progress)?;
    let inputs = source_input(Inputs::new(), "panel", panel);
    Ok(Finished::new("gate", inputs, report).with_notes_after(notes))
}

/// The report of [`gate`] and the notes to show after it (for a front end that shows the
/// report its own way: the command line's Markdown).
///
/// # Errors
/// As [`gate`].
pub fn gate_report(
    panel: &Source,
    settings: &GateSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<(GateReport, Vec<String>)> {
    let s = settings;
    s.check()?;
    let contrast = s.panel.contrast.clone().unwrap_or_default();
    let (candidate, baseline) = split_contrast(panel, s, &contrast)?;
    if s.sequential {
        let seq = sequential_report(
            panel,
            &SequentialSettings {
                panel: s.panel.clone(),
                shape: s.shape.clone(),
                confidence: s.confidence,
                margin: s.margin,
                ..Default::default()
            },
        )?;
        let last = seq.last;
        let (Some(estimate), Some(lower), Some(upper)) =
            (last.estimate, last.interval[0], last.interval[1])
        else {
            return Err(Error::Data(format!(
                "the sequence for {contrast} has no bounded interval: every stratum needs a \
                 question"
            )));
        };
        let report = GateReport::new(
            (candidate, baseline),
            seq.metric.clone(),
            (estimate, lower, upper),
            seq.questions,
            s.margin,
            s.confidence,
            (true, seq.method.to_string()),
            seq.notes.clone(),
        );
        return Ok((report, Vec::new()));
    }
    // Fixed n: compare's interval for the pair (baseline, candidate), exactly as `stats
    // compare --reference BASE` reports it. Its bootstrap (rank intervals, best shares) is
    // not used here, so it is kept small.
    let compare = CompareSettings {
        panel: PanelSettings {
            contrast: None,
            failure_score: None,
            ..s.panel.clone()
        },
        arms: vec![baseline.clone(), candidate.clone()],
        reference: Some(baseline.clone()),
        interval: s.interval,
        resample: ResampleSettings {
            replicates: 200,
            confidence: s.confidence,
            ..Default::default()
        },
        ..Default::default()
    };
    if s.panel.failure_score.is_some() {
        return Err(Error::setting(
            "failure_score",
            "the fixed-n gate pairs the arms as compare does, which drops unpaired cells; \
             use it with sequential",
        ));
    }
    let report = compare_report(panel, None, None, &compare, engines, progress)?;
    // compare lists a pair as b − a in the panel's arm order: turned round when the
    // candidate comes first.
    let (estimate, lower, upper) = report
        .pairs
        .iter()
        .find_map(|p| {
            if p.a == baseline && p.b == candidate {
                Some((p.estimate, p.ci.lower(), p.ci.upper()))
            } else if p.a == candidate && p.b == baseline {
                Some((-p.estimate, -p.ci.upper(), -p.ci.lower()))
            } else {
                None
            }
        })
        .ok_or_else(|| Error::Data(format!("compare gave no pair {contrast}")))?;
    let questions: usize = report.strata.iter().map(|st| st.questions).sum();
    let gate = GateReport::new(
        (candidate, baseline),
        report.metric.clone(),
        (estimate, lower, upper),
        questions as u64,
        s.margin,
        s.confidence,
        (false, report.methods.ci.to_string()),
        report.notes.clone(),
    );
    Ok((gate, Vec::new()))
}

/// Splits the contrast `CAND-BASE` at the dash that leaves two of the panel's arms (arm
/// names may hold dashes); when none does, loading the panel with the contrast names what is
/// wrong.
fn split_contrast(panel: &Source, s: &GateSettings, contrast: &str) -> Result<(String, String)> {
    let opts = PanelSettings {
        contrast: None,
        failure_score: None,
        ..s.panel.clone()
    }
    .load_options(crate::import::Balance::Fitted);
    let arms = crate::import::panel_rows(panel, &opts, &s.panel.import_options())?.arms();
    for (i, _) in contrast.match_indices('-') {
        let (b, a) = (&contrast[..i], &contrast[i + 1..]);
        if b != a && arms.iter().any(|x| x == b) && arms.iter().any(|x| x == a) {
            return Ok((b.to_string(), a.to_string()));
        }
    }
    s.panel.load(panel, crate::import::Balance::Fitted)?;
    Err(Error::setting(
        "contrast",
        format!("expected CAND-BASE with two of the panel's arms; got '{contrast}'"),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::demo;
    use super::super::CpuEngines;
    use super::*;
    use crate::sequential::gate::Verdict;

    fn settings(contrast: &str, margin: f64) -> GateSettings {
        GateSettings {
            panel: PanelSettings {
                contrast: Some(contrast.into()),
                metric: Some("f1".into()),
                ..Default::default()
            },
            margin,
            ..Default::default()
        }
    }

    /// The fixed-n gate's interval is compare's for the same pair (baseline as reference).
    #[test]
    fn the_fixed_n_interval_is_compares() {
        let s = settings("adaptive-open", 0.02);
        let (g, _) = gate_report(&demo("panel.csv"), &s, &CpuEngines, &|_, _, _| {}).unwrap();
        let c = compare_report(
            &demo("panel.csv"),
            None,
            None,
            &CompareSettings {
                panel: PanelSettings {
                    metric: Some("f1".into()),
                    ..Default::default()
                },
                reference: Some("open".into()),
                resample: ResampleSettings {
                    replicates: 200,
                    ..Default::default()
                },
                ..Default::default()
            },
            &CpuEngines,
            &|_, _, _| {},
        )
        .unwrap();
        let pair = &c.pairs[0];
        assert_eq!((pair.a.as_str(), pair.b.as_str()), ("open", "adaptive"));
        assert_eq!(g.estimate, pair.estimate);
        assert_eq!(g.interval, pair.ci.0);
        assert_eq!(
            (g.candidate.as_str(), g.baseline.as_str()),
            ("adaptive", "open")
        );
        assert_eq!(g.questions, 446);
        assert_eq!(g.verdict, Verdict::of(g.interval[0], g.interval[1], 0.02));
        // The reverse contrast turns the interval round.
        let (r, _) = gate_report(
            &demo("panel.csv"),
            &settings("open-adaptive", 0.02),
            &CpuEngines,
            &|_, _, _| {},
        )
        .unwrap();
        assert!((r.estimate + g.estimate).abs() < 1e-12);
        // The sequential gate on the same panel: the same estimate (the fixed-n one), inside
        // an interval never narrower than compare's.
        let (q, _) = gate_report(
            &demo("panel.csv"),
            &GateSettings {
                sequential: true,
                ..settings("adaptive-open", 0.02)
            },
            &CpuEngines,
            &|_, _, _| {},
        )
        .unwrap();
        assert!((q.estimate - g.estimate).abs() < 1e-12);
        assert!(q.interval[0] <= q.estimate && q.estimate <= q.interval[1]);
        assert!(q.interval[1] - q.interval[0] >= g.interval[1] - g.interval[0]);
        assert!(q.sequential && q.method == "prpl-eb");
    }

    #[test]
    fn a_gate_needs_a_contrast_and_sequential_settings_need_sequential() {
        let mut s = GateSettings::default();
        assert_eq!(
            s.check().unwrap_err().to_string(),
            "contrast: the gate needs the contrast CAND-BASE: the candidate arm, then the baseline"
        );
        s = settings("adaptive-open", 0.0);
        s.shape.order_by = Some("t".into());
        assert_eq!(
            s.check().unwrap_err().to_string(),
            "order_by: sets up the confidence sequence, which needs sequential"
        );
        s = settings("adaptive-open", -1.0);
        assert_eq!(
            s.check().unwrap_err().to_string(),
            "margin: -1: expected a difference of 0 or more in score units, e.g. 0.02"
        );
    }
}
