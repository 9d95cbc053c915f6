//! How a panel input is read ([`PanelSettings`]): the score column and outcome (an arm, a
//! contrast, a selector), the shape of a table not written for ragstats, the strata's
//! weights, and how evaluation logs map onto a panel. Every panel analysis takes these
//! settings; the command line fills them from its flags, the Python bindings from keywords
//! (serde: a field's name is the keyword, text values take the command line's words).

use serde::Deserialize;

use super::{ArmFrom, DatasetFrom, ImportOptions};
use crate::io::from_text::{number_opt, parsed, parsed_opt};
use crate::panel::{ColumnMap, Duplicates, LoadOptions, Panel, SelectorChoice, Source, Weights};
use crate::{Error, Result};

/// How a panel input is read into the outcome an analysis works on.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct PanelSettings {
    /// Score column to analyse (default: `f1` if present, else the only non-key column).
    pub metric: Option<String>,
    /// The paired contrast score(B) − score(A), written `B-A`.
    pub contrast: Option<String>,
    /// One arm of a multi-arm panel.
    pub arm: Option<String>,
    /// Drop questions that differ from their stratum's design instead of fitting them by
    /// REML or failing.
    pub drop_incomplete: bool,
    /// With a contrast: the score of a cell's missing arm, instead of dropping the cell.
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub failure_score: Option<f64>,
    /// One selector's rows, or `average`: their mean per cell.
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub selector: Option<SelectorChoice>,
    /// The table's columns that play the panel's roles.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<crate::io::from_text::TextOrMap<String>>")
    )]
    pub columns: Option<ColumnMap>,
    /// Keep, in each stratum, only the questions every arm has.
    pub common_questions: bool,
    /// Several rows for one cell: an error, their mean, or the first.
    #[serde(deserialize_with = "parsed")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::DuplicatesWord")
    )]
    pub duplicates: Duplicates,
    /// Weights of the strata in the combined estimate (default: equal).
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<crate::io::from_text::TextOrMap<f64>>")
    )]
    pub weights: Option<Weights>,
    /// The column naming each question's cluster (an article, a document): questions are
    /// then nested in clusters within strata, and the cluster is the unit sampled.
    pub cluster: Option<String>,
    /// How evaluation logs map onto the panel (for a panel read from logs).
    #[serde(flatten)]
    pub logs: LogMapping,
}

/// How evaluation logs map onto a panel: where `dataset` and `arm` come from, which score
/// columns are kept, the `cluster` column, the score of samples without one, lm-eval's
/// filter (`docs/import.md`). The settings of `import`, and of every panel analysis reading
/// logs directly.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct LogMapping {
    /// Where `dataset` comes from.
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub dataset_from: Option<DatasetFrom>,
    /// Where `arm` comes from (default: the model).
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub arm_from: Option<ArmFrom>,
    /// Keep only these scorers' score columns (default: every score).
    pub score: Vec<String>,
    /// Write a `cluster` column from this metadata key.
    pub cluster_from: Option<String>,
    /// The score of samples with an error or no score, instead of leaving them out.
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub missing_as: Option<f64>,
    /// lm-eval: the filter whose rows are read.
    pub filter: Option<String>,
}

impl LogMapping {
    /// Checks the mapping's domain.
    ///
    /// # Errors
    /// [`Error::Setting`] naming `missing_as` when it is not a finite number (a score of
    /// infinity or NaN would poison every mean).
    pub fn check(&self) -> Result<()> {
        match self.missing_as {
            Some(v) if !v.is_finite() => Err(Error::setting(
                "missing_as",
                format!("{v} is not a score: give a finite number, e.g. 0"),
            )),
            _ => Ok(()),
        }
    }

    /// The importer's options for this mapping, every row's arm labelled `arm` when given
    /// (in place of [`LogMapping::arm_from`]).
    pub fn import_options(&self, arm: Option<String>) -> ImportOptions {
        ImportOptions {
            dataset_from: self.dataset_from.clone(),
            arm_from: self.arm_from.clone().unwrap_or_default(),
            arm,
            scores: self.score.clone(),
            cluster_from: self.cluster_from.clone(),
            missing_as: self.missing_as,
            filter: self.filter.clone(),
        }
    }
}

/// Whether an analysis fits strata whose questions differ from their design (by REML) or
/// needs every stratum balanced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balance {
    /// Every question of a stratum has its T trajectories of R reads.
    Required,
    /// Unbalanced strata are kept nested as they are.
    Fitted,
}

impl PanelSettings {
    /// Checks the settings against each other, and the log mapping ([`LogMapping::check`]).
    ///
    /// # Errors
    /// [`Error::Setting`] for an arm given with a contrast, a failure score without one, or a
    /// `missing_as` that is not finite.
    pub fn check(&self) -> Result<()> {
        self.logs.check()?;
        if self.contrast.is_some() && self.arm.is_some() {
            return Err(Error::setting(
                "arm",
                "cannot be used with contrast: a contrast is the difference of two arms; \
                 give one or the other",
            ));
        }
        if self.failure_score.is_some() && self.contrast.is_none() {
            return Err(Error::setting(
                "failure_score",
                "scores a contrast's missing arm, so it needs a contrast B-A",
            ));
        }
        Ok(())
    }

    /// The panel loader's options for these settings.
    pub fn load_options(&self, balance: Balance) -> LoadOptions {
        LoadOptions {
            metric: self.metric.clone(),
            contrast: self.contrast.clone(),
            arm: self.arm.clone(),
            drop_incomplete: self.drop_incomplete,
            allow_unbalanced: balance == Balance::Fitted,
            selector: self.selector.clone(),
            failure_score: self.failure_score,
            columns: self.columns.clone().unwrap_or_default(),
            common_questions: self.common_questions,
            duplicates: self.duplicates,
            weights: self.weights.clone().unwrap_or_default(),
            cluster: self.cluster.clone(),
            ..LoadOptions::default()
        }
    }

    /// How evaluation logs map onto a panel under these settings.
    pub fn import_options(&self) -> ImportOptions {
        self.logs.import_options(None)
    }

    /// What loading `panel` with these settings did that its user should hear of, one line
    /// each, in the order the command line notes them: the loader's notes, the contrast's
    /// unpaired cells (dropped or scored), the selector average chosen because no selector
    /// was, the questions dropped as incomplete, and (for analyses that fit unbalanced
    /// strata, `stratum_notes`) the questions that differ from their stratum's design.
    pub fn loading_notes(&self, panel: &Panel, stratum_notes: bool) -> Vec<String> {
        let mut out: Vec<String> = panel.notes.iter().map(|n| format!("note: {n}")).collect();
        for s in &panel.strata {
            out.extend(
                s.unpaired_cells
                    .iter()
                    .map(|m| format!("note: {}: {m}", s.name)),
            );
        }
        if self.selector.is_none() && panel.selectors.len() > 1 {
            out.push(format!(
                "note: the panel has {} selectors ({}); analysing their mean per cell \
                 (selector average); selector NAME analyses one, by selector each",
                panel.selectors.len(),
                panel.selectors.join(", ")
            ));
        }
        out.extend(dropped_notes(panel));
        if stratum_notes {
            for s in &panel.strata {
                out.extend(s.notes.iter().map(|n| format!("note: {n}")));
            }
        }
        out
    }

    /// Checks the settings and loads the panel `source` holds ([`super::load_source`]).
    ///
    /// # Errors
    /// Those of [`PanelSettings::check`] and of loading; with [`Balance::Required`], an
    /// unbalanced stratum is refused naming the first question that differs and the
    /// analyses that fit unbalanced panels.
    pub fn load(&self, source: &Source, balance: Balance) -> Result<Panel> {
        self.check()?;
        let loaded =
            super::load_source(source, &self.load_options(balance), &self.import_options());
        loaded.map_err(|e| match e {
            Error::Input { file, line, msg }
                if balance == Balance::Required && msg.starts_with("unbalanced design") =>
            {
                Error::Input {
                    file,
                    line,
                    msg: format!(
                        "{msg}; this command needs every question to have the same numbers \
                         of trajectories and reads (`stats variance`, `stats forecast` and \
                         `stats bootstrap` fit unbalanced panels by REML)"
                    ),
                }
            }
            e => e,
        })
    }
}

/// The questions dropped as incomplete: a summary line, then one per question.
pub fn dropped_notes(panel: &Panel) -> Vec<String> {
    let parts: Vec<String> = panel
        .strata
        .iter()
        .filter(|s| s.dropped > 0)
        .map(|s| format!("{} in {}", s.dropped, s.name))
        .collect();
    let mut out = Vec::new();
    if !parts.is_empty() {
        out.push(format!(
            "note: dropped incomplete questions: {}",
            parts.join(", ")
        ));
    }
    for s in &panel.strata {
        out.extend(
            s.dropped_questions
                .iter()
                .map(|q| format!("note: dropped from {}: {q}", s.name)),
        );
    }
    out
}

/// A contrast's unpaired cells in `panel`: (dropped, scored with the failure score).
pub fn unpaired_counts(panel: &Panel) -> (usize, usize) {
    let mut counts = (0, 0);
    for m in panel.strata.iter().flat_map(|s| &s.unpaired_cells) {
        if m.ends_with("dropped the cell") {
            counts.0 += 1;
        } else {
            counts.1 += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_score_must_be_a_finite_number() {
        let with = |v: f64| PanelSettings {
            logs: LogMapping {
                missing_as: Some(v),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(with(0.0).check().is_ok());
        for bad in [f64::INFINITY, f64::NAN] {
            match with(bad).check() {
                Err(Error::Setting { setting, msg }) => {
                    assert_eq!(setting, "missing_as");
                    assert_eq!(
                        msg,
                        format!("{bad} is not a score: give a finite number, e.g. 0")
                    );
                }
                other => panic!("expected a setting error, got {other:?}"),
            }
        }
    }

    #[test]
    fn settings_read_from_json_take_the_command_lines_words() {
        let s: PanelSettings = serde_json::from_str(
            r#"{"contrast": "adaptive-open", "selector": "average", "duplicates": "mean",
                "columns": {"question": "qid"}, "weights": {"hotpotqa": 2, "musique": 1},
                "arm_from": "metadata:system", "score": ["match"]}"#,
        )
        .unwrap();
        assert_eq!(s.contrast.as_deref(), Some("adaptive-open"));
        assert_eq!(s.selector, Some(SelectorChoice::Average));
        assert_eq!(s.duplicates, Duplicates::Mean);
        assert_eq!(s.columns, Some("question=qid".parse().unwrap()));
        assert_eq!(
            s.weights,
            Some(Weights::Given {
                source: "the weights given".into(),
                weights: vec![("hotpotqa".into(), 2.0), ("musique".into(), 1.0)]
            })
        );
        assert_eq!(s.logs.arm_from, Some(ArmFrom::Metadata("system".into())));
        assert_eq!(s.import_options().scores, vec!["match".to_string()]);
        // Unset settings are the command line's defaults.
        let d: PanelSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(d.duplicates, Duplicates::Error);
        assert!(d.weights.is_none() && d.selector.is_none() && !d.drop_incomplete);
    }

    #[test]
    fn bad_values_are_refused_in_the_command_lines_words() {
        let e = serde_json::from_str::<PanelSettings>(r#"{"duplicates": "sum"}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("'sum': expected error, mean or first"),
            "{e}"
        );
        let e = serde_json::from_str::<PanelSettings>(r#"{"columns": {"qid": "question"}}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("unknown role 'qid'"), "{e}");
        let e = serde_json::from_str::<PanelSettings>(r#"{"weights": {"a": -1}}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("weight -1 for 'a'; expected a finite number ≥ 0"),
            "{e}"
        );
    }

    #[test]
    fn settings_that_contradict_each_other_are_named() {
        let both = PanelSettings {
            contrast: Some("b-a".into()),
            arm: Some("a".into()),
            ..Default::default()
        };
        assert!(matches!(
            both.check(),
            Err(Error::Setting { setting: "arm", .. })
        ));
        let alone = PanelSettings {
            failure_score: Some(0.0),
            ..Default::default()
        };
        let e = alone.check().unwrap_err();
        assert_eq!(
            e.to_string(),
            "failure_score: scores a contrast's missing arm, so it needs a contrast B-A"
        );
    }
}
