//! `compare`: every system of a panel (its arms, or the values of another column) against
//! every other or against one reference — each system's estimate and interval, each pair's
//! paired difference with raw, Holm and BH p-values and simultaneous intervals, rank
//! intervals, best shares, and what the next study needs, priced with a cost ledger
//! ([`crate::compare::prepare`] and its run).

use std::sync::Arc;

use serde::{Deserialize, Deserializer};

use super::label_plan::{check_label_pricing, ppi_next_step};
use super::{judged_compare, LabelSettings};
use super::{source_input, source_input_opt, CostUnit, Draw, Engines, Progress, SearchBounds};
use crate::compare::{prepare, CompareJob, CompareReport, NextCosts};
use crate::document::{Figure, Finished, Inputs};
use crate::import::{is_log_input, Balance, PanelSettings};
use crate::inference::IntervalRule;
use crate::io::from_text::{number_opt, parsed, parsed_opt};
use crate::ledger::{check_price, read_ledger_from, Prices};
use crate::panel::{LoadOptions, Source};
use crate::resample::ResampleSettings;
use crate::{Error, Result};

/// The settings of [`compare`].
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct CompareSettings {
    /// How the panel is read; its `arm` is, with `by`, the arm whose systems are compared,
    /// and its failure score scores the cell one system of a pair lacks.
    #[serde(flatten)]
    pub panel: PanelSettings,
    /// The column whose values are the systems compared (default: `arm`), e.g. `selector`
    /// or `model`.
    pub by: Option<String>,
    /// Compare only these systems (a list, or text `a,b,c`); the others' rows are left out
    /// before anything is checked.
    #[serde(deserialize_with = "names")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::io::from_text::TextOrList")
    )]
    pub arms: Vec<String>,
    /// Compare every system with this one only (a Dunnett-style family) instead of every
    /// pair.
    pub reference: Option<String>,
    /// The power the next study's question count is planned for, strictly between 0 and 1.
    pub power: f64,
    /// Intervals and tests: `auto`, `t`, `score` or `clopper-pearson`.
    #[serde(deserialize_with = "parsed")]
    pub interval: IntervalRule,
    /// The bootstrap's replicates, seed, backend and confidence level.
    #[serde(flatten)]
    pub resample: ResampleSettings,
    /// Show every pair in the text output (past 10 systems it shows by default the leader
    /// against the top group and each system against the next).
    pub all_pairs: bool,
    /// With a ledger: what the next step's cost is counted in (default: tokens).
    #[serde(deserialize_with = "parsed_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<CostUnit>"))]
    pub currency: Option<CostUnit>,
    /// With a ledger, in dollars: the search price in USD per 1,000 requests (default: the
    /// prices').
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub search_price: Option<f64>,
    /// With a ledger: a cost per question in the next step's unit (judging, annotation).
    pub question_cost: f64,
    /// With a ledger: the bounds of the next step's least-cost search.
    #[serde(flatten)]
    pub bounds: SearchBounds,
    /// With labels: their score column and the judge's weight λ.
    #[serde(flatten)]
    pub judged: LabelSettings,
    /// With labels and a ledger: the cost of one label (one labelled question's human
    /// score) in the next step's unit; the next step then names the cheapest labels and
    /// Q:T:R that resolve the closest unresolved pair.
    #[serde(deserialize_with = "number_opt")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub label_cost: Option<f64>,
    /// With labels and a ledger: the fewest labels the next step gives a stratum (at
    /// least 2).
    pub min_labels: usize,
}

impl Default for CompareSettings {
    fn default() -> Self {
        CompareSettings {
            panel: PanelSettings::default(),
            by: None,
            arms: Vec::new(),
            reference: None,
            power: 0.8,
            interval: IntervalRule::Auto,
            resample: ResampleSettings::default(),
            all_pairs: false,
            currency: None,
            search_price: None,
            question_cost: 0.0,
            bounds: SearchBounds::default(),
            judged: LabelSettings::default(),
            label_cost: None,
            min_labels: crate::judges::plan::FEW_LABELS,
        }
    }
}

/// Names as a list, or as text `a,b,c`.
fn names<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Text(String),
        List(Vec<String>),
    }
    Ok(match Form::deserialize(d)? {
        Form::Text(t) => t.split(',').map(str::to_string).collect(),
        Form::List(l) => l,
    })
}

impl CompareSettings {
    /// The column whose values are the systems: `by`, trimmed.
    fn column(&self) -> Option<&str> {
        self.by.as_deref().map(str::trim)
    }

    /// Checks the settings against each other and against the panel `panel` (evaluation
    /// logs have no column to compare by) and whether a ledger is given.
    ///
    /// # Errors
    /// [`Error::Setting`] naming the setting: a power outside (0, 1), an empty `by`, `by`
    /// selector with a selector, `by` a column of evaluation logs, an arm without `by`, a
    /// contrast, an empty system name in `arms`, the next step's cost settings or bounds
    /// without a ledger, a bound outside its range, a bad price, and the resampling's.
    pub fn check(&self, panel: &Source, ledger: bool) -> Result<()> {
        if !(self.power > 0.0 && self.power < 1.0) {
            return Err(Error::setting(
                "power",
                format!(
                    "{} must be between 0 and 1 (exclusive), e.g. 0.8",
                    self.power
                ),
            ));
        }
        let by = self.column();
        if by == Some("") {
            return Err(Error::setting(
                "by",
                "expected a column name, e.g. model or selector",
            ));
        }
        if by == Some("selector") && self.panel.selector.is_some() {
            return Err(Error::setting(
                "by",
                "selector compares the selectors, and the selector setting picks one of \
                 them: give one or the other",
            ));
        }
        if by.is_none() && self.panel.arm.is_some() {
            return Err(Error::setting(
                "arm",
                "picks the arm whose systems are compared, which needs by (the column whose \
                 values are the systems)",
            ));
        }
        if self.panel.contrast.is_some() {
            return Err(Error::setting(
                "contrast",
                "compare contrasts every pair of systems; leave it out (reference compares \
                 every system with one)",
            ));
        }
        if let (Some(column), Source::Files(paths)) = (by, panel) {
            if column != "arm" && is_log_input(&paths[0]) {
                return Err(Error::setting(
                    "by",
                    format!(
                        "reads a column of a panel, and {} holds evaluation logs: choose what \
                         the systems are with arm_from (model, task, solver or metadata:KEY)",
                        paths[0].display()
                    ),
                ));
            }
        }
        if !ledger {
            let d = SearchBounds::default();
            let b = &self.bounds;
            let unpriced = [
                ("max_questions", b.max_questions != d.max_questions),
                ("max_trajectories", b.max_trajectories != d.max_trajectories),
                ("max_reads", b.max_reads != d.max_reads),
                ("currency", self.currency.is_some()),
                ("search_price", self.search_price.is_some()),
                ("question_cost", self.question_cost != 0.0),
                ("label_cost", self.label_cost.is_some()),
                (
                    "min_labels",
                    self.min_labels != crate::judges::plan::FEW_LABELS,
                ),
            ];
            if let Some((name, _)) = unpriced.iter().find(|(_, set)| *set) {
                return Err(Error::setting(
                    name,
                    "prices or bounds the next step's least-cost search, which needs a ledger",
                ));
            }
        }
        self.bounds.bounds()?;
        for (name, price) in [
            ("search_price", self.search_price),
            ("question_cost", Some(self.question_cost)),
        ] {
            if let Some(v) = price {
                check_price("the price", v).map_err(|m| Error::setting(name, m))?;
            }
        }
        check_label_pricing(self.label_cost, self.min_labels)?;
        self.resample.resampling()?;
        if self.arms.iter().any(|a| a.trim().is_empty()) {
            return Err(Error::setting(
                "arms",
                format!(
                    "{}: expected the names of two or more systems separated by commas, e.g. \
                     a,b,c",
                    self.arms.join(",")
                ),
            ));
        }
        Ok(())
    }

    /// The panel loader's options: the systems are the values of `by` (within `arm`), only
    /// `arms` kept, and every system and pair combines the strata with `weights` (equal
    /// without).
    fn load_options(&self) -> LoadOptions {
        let panel = PanelSettings {
            arm: None,
            ..self.panel.clone()
        };
        LoadOptions {
            arm_column: self.column().map(str::to_string),
            within_arm: self.panel.arm.clone(),
            keep_arms: self.arms.iter().map(|a| a.trim().to_string()).collect(),
            ..panel.load_options(Balance::Fitted)
        }
    }
}

/// The comparison of the systems of the panel `panel` holds (a file, evaluation logs read as
/// one set, or a table), on `engines`. With a cost `ledger` of the panel (and `prices`, for
/// dollars) the next step names the cheapest Q:T:R that resolves the closest unresolved pair
/// and its cost. `draw` adds the figure of the systems' intervals and the pairs' adjusted
/// p-values. The report's notes follow a CSV.
///
/// With `labels` (human scores of some of the panel's cells, the metric being a judge's)
/// every system's estimate and every pair's difference is the PPI++ estimate
/// ([`crate::judges::compare`]), with normal intervals and Wald tests adjusted by Holm and
/// BH, and simultaneous and rank intervals from the PPI++ bootstrap of every pair on one
/// shared draw of questions ([`crate::judges::simultaneous`]); `by` and the ledger's next
/// step are not made with labels (refused).
///
/// # Errors
/// Those of [`CompareSettings::check`], of reading the ledger and the prices, of loading
/// the panel (fewer than two systems, an unknown reference, systems not on the same
/// questions) and of the comparison; with labels, [`Error::Setting`] for `by`, a ledger or a
/// figure, and those of reading and pairing the labels.
#[allow(clippy::too_many_arguments)]
pub fn compare(
    panel: &Source,
    labels: Option<&Source>,
    ledger: Option<&Source>,
    prices: Option<&Source>,
    settings: &CompareSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: Draw<'_, CompareReport>,
) -> Result<Finished> {
    if let Some(labels) = labels {
        settings.check(panel, ledger.is_some())?;
        for (name, given) in [("by", settings.by.is_some()), ("plot", draw.is_some())] {
            if given {
                return Err(Error::setting(
                    name,
                    "cannot be used with labels yet: with labels, compare reports each \
                     system's and pair's PPI++ estimate of the arms (docs/judges.md)",
                ));
            }
        }
        if prices.is_some() && ledger.is_none() {
            return Err(Error::Usage(
                "prices price the next step from a cost ledger: give the ledger with them".into(),
            ));
        }
        // Refused before the PPI++ bootstrap, which takes a while.
        if ledger.is_some() && settings.label_cost.is_none() {
            return Err(Error::setting(
                "label_cost",
                "with labels, the ledger's next step prices the labels too: give the \
                 cost of one label (one labelled question's human score)",
            ));
        }
        let mut report = judged_compare(
            panel,
            labels,
            &settings.panel,
            &settings.judged,
            &settings.arms,
            settings.reference.as_deref(),
        )?;
        super::ppi_family::add_simultaneous(
            &mut report,
            panel,
            labels,
            &settings.panel,
            &settings.judged,
            &settings.resample,
            engines,
            progress,
        )?;
        if let (Some(ledger), Some(label_cost)) = (ledger, settings.label_cost) {
            let (next, why) =
                ppi_next_step(&report, panel, labels, ledger, prices, settings, label_cost)?;
            report.next = next;
            report.next_undefined = why;
        }
        let inputs = source_input(Inputs::new(), "panel", panel)
            .with_opt("arm", settings.panel.arm.as_deref());
        let inputs = source_input(inputs, "labels", labels);
        let inputs = source_input_opt(source_input_opt(inputs, "ledger", ledger), "prices", prices);
        return Ok(Finished::new("compare", inputs, report));
    }
    if settings.label_cost.is_some() {
        return Err(Error::setting(
            "label_cost",
            "prices human labels in the next step: give labels",
        ));
    }
    settings.judged.check_without_labels(false)?;
    let report = compare_report(panel, ledger, prices, settings, engines, progress)?;
    let figure = match draw {
        Some(draw) => Some(Figure::new(draw(&report)?, panel.paths())),
        None => None,
    };
    let inputs = source_input(Inputs::new(), "panel", panel)
        .with_opt("by", settings.by.as_deref())
        .with_opt("arm", settings.panel.arm.as_deref());
    let inputs = source_input_opt(source_input_opt(inputs, "ledger", ledger), "prices", prices);
    let notes = report.notes.clone();
    Ok(Finished::new("compare", inputs, report)
        .with_figure(figure)
        .with_csv_notes(&notes))
}

/// The report of [`compare`], for a front end that shows it its own way (`stats report`).
///
/// # Errors
/// As [`compare`].
pub fn compare_report(
    panel: &Source,
    ledger: Option<&Source>,
    prices: Option<&Source>,
    settings: &CompareSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<CompareReport> {
    let s = settings;
    s.check(panel, ledger.is_some())?;
    if prices.is_some() && ledger.is_none() {
        return Err(Error::Usage(
            "prices price the next step from a cost ledger: give the ledger with them".into(),
        ));
    }
    let costs = match ledger {
        Some(ledger) => Some(NextCosts {
            ledger: Arc::new(read_ledger_from(ledger)?),
            ledger_name: ledger.name().to_path_buf(),
            prices: match prices {
                Some(p) => Some((Arc::new(Prices::from_source(p)?), p.name().to_path_buf())),
                None => None,
            },
            budget: s.currency.unwrap_or_default().budget(s.search_price),
            question_cost: s.question_cost,
            bounds: s.bounds.bounds()?,
        }),
        None => None,
    };
    let job = CompareJob {
        reference: s.reference.clone(),
        resampling: s.resample.resampling()?,
        power: s.power,
        intervals: s.interval,
        costs,
    };
    let prepared = prepare(panel, &s.load_options(), &s.panel.import_options(), &job)?;
    let engine = engines.resampler(s.resample.backend, prepared.draws())?;
    let total = prepared.work();
    let mut report = prepared.run(engine.as_ref(), &|d| progress("compare", d, total))?;
    report.all_pairs = s.all_pairs;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arms4() -> Source {
        Source::file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/compare/arms4.csv"
        ))
    }

    fn setting_of(e: Error) -> (&'static str, String) {
        match e {
            Error::Setting { setting, msg } => (setting, msg),
            other => panic!("expected a setting error, got {other:?}"),
        }
    }

    #[test]
    fn settings_read_from_json_take_the_command_lines_words() {
        let s: CompareSettings = serde_json::from_str(
            r#"{"arms": "base,a", "interval": "clopper-pearson", "currency": "usd",
                "reference": "base", "power": 0.9, "max_reads": 4, "replicates": 200}"#,
        )
        .unwrap();
        assert_eq!(s.arms, ["base", "a"]);
        assert_eq!(s.interval, IntervalRule::ClopperPearson);
        assert_eq!(s.currency, Some(CostUnit::Usd));
        assert_eq!(s.reference.as_deref(), Some("base"));
        assert_eq!(
            (s.power, s.bounds.max_reads, s.resample.replicates),
            (0.9, 4, 200)
        );
        let list: CompareSettings = serde_json::from_str(r#"{"arms": ["a", "b"]}"#).unwrap();
        assert_eq!(list.arms, ["a", "b"]);
        let d: CompareSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(
            (d.power, d.interval, d.question_cost),
            (0.8, IntervalRule::Auto, 0.0)
        );
        let e = serde_json::from_str::<CompareSettings>(r#"{"interval": "wald"}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("'wald': expected auto, t, score or clopper-pearson"),
            "{e}"
        );
    }

    /// tests/reference/compare.py's estimates of arms4.csv (the mean of the strata's means):
    /// base 0.492206421875, a − base 0.046549142708; every pair against the reference.
    #[test]
    fn the_systems_and_pairs_are_the_reference_scripts() {
        let s = CompareSettings {
            reference: Some("base".into()),
            resample: ResampleSettings {
                replicates: 200,
                ..Default::default()
            },
            ..Default::default()
        };
        let done = compare(
            &arms4(),
            None,
            None,
            None,
            &s,
            &super::super::CpuEngines,
            &|_, _, _| {},
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let doc = done.document();
        let names: Vec<&str> = doc["systems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["base", "a", "b", "c"]);
        let base = doc["systems"][0]["estimate"].as_f64().unwrap();
        assert!((base - 0.492206421875).abs() < 1e-12, "{base}");
        let pairs = doc["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 3);
        assert_eq!(
            (pairs[0]["a"].as_str(), pairs[0]["b"].as_str()),
            (Some("base"), Some("a"))
        );
        let d = pairs[0]["estimate"].as_f64().unwrap();
        assert!((d - 0.046549142708).abs() < 1e-11, "{d}");
        assert_eq!(
            doc["run"]["inputs"]["panel"].as_str().unwrap(),
            arms4().names()[0]
        );
    }

    #[test]
    fn each_bad_setting_is_named() {
        let panel = arms4();
        let logs = Source::file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/import/logs/eval"
        ));
        let cases: Vec<(CompareSettings, &Source, bool, &str, &str)> = vec![
            (
                CompareSettings { power: 1.0, ..Default::default() },
                &panel,
                false,
                "power",
                "1 must be between 0 and 1 (exclusive), e.g. 0.8",
            ),
            (
                CompareSettings { by: Some(" ".into()), ..Default::default() },
                &panel,
                false,
                "by",
                "expected a column name, e.g. model or selector",
            ),
            (
                CompareSettings {
                    by: Some("selector".into()),
                    panel: PanelSettings {
                        selector: Some("x".parse().unwrap()),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                &panel,
                false,
                "by",
                "selector compares the selectors, and the selector setting picks one of them: give one or the other",
            ),
            (
                CompareSettings {
                    panel: PanelSettings { arm: Some("a".into()), ..Default::default() },
                    ..Default::default()
                },
                &panel,
                false,
                "arm",
                "picks the arm whose systems are compared, which needs by (the column whose values are the systems)",
            ),
            (
                CompareSettings {
                    bounds: SearchBounds { max_reads: 4, ..Default::default() },
                    ..Default::default()
                },
                &panel,
                false,
                "max_reads",
                "prices or bounds the next step's least-cost search, which needs a ledger",
            ),
            (
                CompareSettings { question_cost: 2.0, ..Default::default() },
                &panel,
                false,
                "question_cost",
                "prices or bounds the next step's least-cost search, which needs a ledger",
            ),
            (
                CompareSettings { question_cost: -1.0, ..Default::default() },
                &panel,
                true,
                "question_cost",
                "the price is -1; expected a finite price between 0 and 1e9 USD",
            ),
            (
                CompareSettings { arms: vec!["a".into(), "".into(), "b".into()], ..Default::default() },
                &panel,
                false,
                "arms",
                "a,,b: expected the names of two or more systems separated by commas, e.g. a,b,c",
            ),
            (
                CompareSettings { resample: ResampleSettings { replicates: 1, ..Default::default() }, ..Default::default() },
                &panel,
                false,
                "replicates",
                "must be at least 2",
            ),
        ];
        for (s, source, ledger, name, msg) in cases {
            let (setting, text) = setting_of(s.check(source, ledger).unwrap_err());
            assert_eq!((setting, text.as_str()), (name, msg));
        }
        let by_model = CompareSettings {
            by: Some("model".into()),
            ..Default::default()
        };
        let (setting, text) = setting_of(by_model.check(&logs, false).unwrap_err());
        assert_eq!(setting, "by");
        assert!(text.ends_with("holds evaluation logs: choose what the systems are with arm_from (model, task, solver or metadata:KEY)"), "{text}");
        // The library call checks before it reads anything.
        let e = match compare(
            &panel,
            None,
            None,
            None,
            &CompareSettings {
                power: 2.0,
                ..Default::default()
            },
            &super::super::CpuEngines,
            &|_, _, _| {},
            None,
        ) {
            Err(e) => e,
            Ok(_) => panic!("power 2 was accepted"),
        };
        assert_eq!(
            e.to_string(),
            "power: 2 must be between 0 and 1 (exclusive), e.g. 0.8"
        );
    }
}
