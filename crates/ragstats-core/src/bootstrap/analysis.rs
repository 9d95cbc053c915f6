//! The stratified question bootstrap as one library call: a loaded panel and
//! [`BootstrapJob`] in, the replicates and their [`BootstrapReport`] out
//! ([`bootstrap`]); and the merge of sharded runs into the single run's result ([`merge`]).
//!
//! A front end that picks its resampling engine by the size of the job (the CLI's `auto`
//! rule) prepares the run first ([`prepare`]), which checks the designs against the panel,
//! asks [`PreparedBootstrap::draws`], and then runs it on the engine it chose.

use std::ops::Range;

use serde::Serialize;

use super::replicates::{Replicates, ReplicatesHeader};
use super::report::{build_report, BootstrapReport};
use super::stratified::{Bootstrap, BootstrapSpec};
use crate::document::{Engine, Report};
use crate::inference::measured::{small_sample_notes, Analysis, Design};
use crate::panel::Panel;
use crate::resample::clusters::ClusterDraw;
use crate::resample::engine::ResampleBackend;
use crate::resample::summary::Method;
use crate::{Error, Result};

/// What one bootstrap run computes and how it draws.
#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapJob {
    /// The statistics of every replicate besides the estimate and stratum means (refitted
    /// components, forecast designs).
    pub spec: BootstrapSpec,
    /// Seed of the Philox streams: the same seed draws the same questions on every engine.
    pub seed: u64,
    /// Replicates `start..end` of the run (all of it, or one shard of it).
    pub replicates: Range<u32>,
    /// Interval method of the report.
    pub method: Method,
    /// Confidence level of the intervals, strictly between 0 and 1.
    pub confidence: f64,
}

/// A bootstrap run's result: every replicate's statistics (what `--replicates-out` writes
/// and [`merge`] combines), their summary, and the engine that drew them. Serialises as
/// the report alone; the engine and the settings are its [`Report::engine`].
#[derive(Debug, Clone, Serialize)]
pub struct BootstrapRun {
    /// Point estimates, standard errors and intervals of every statistic.
    #[serde(flatten)]
    pub report: BootstrapReport,
    /// The replicates file's content: header (plan, point statistics, accelerations) and
    /// the `B × n_statistics` replicate values.
    #[serde(skip)]
    pub replicates: Replicates,
    /// The engine's short name (`cpu`, `gpu`; `merged` for [`merge`]).
    #[serde(skip)]
    pub backend: String,
    /// What it ran on (`rayon, 2 threads`, the GPU adapter; for [`merge`], how many
    /// replicates files were merged).
    #[serde(skip)]
    pub adapter: String,
}

impl Report for BootstrapRun {
    /// The engine, and the report's replicates, seed and confidence.
    fn engine(&self) -> Engine {
        Engine::resampled(
            self.backend.clone(),
            self.adapter.clone(),
            u64::from(self.report.replicates),
            self.report.seed,
            self.report.confidence,
        )
    }
}

/// A bootstrap checked against its panel and ready to run on an engine.
#[derive(Debug, Clone)]
pub struct PreparedBootstrap {
    boot: Bootstrap,
    settings: BootstrapJob,
    /// The panel's design, for the small-sample note.
    design: Design,
}

/// Prepares the bootstrap of `panel`: the engine rows and the statistics' layout
/// ([`Bootstrap::from_panel`]; unbalanced strata keep their nesting and are refitted by
/// REML in every replicate). A panel read with a cluster column draws whole clusters of
/// questions within strata instead ([`Bootstrap::clustered`]).
///
/// # Errors
/// [`Error::Usage`] for an empty replicate range, a design that does not parse or fit the
/// strata, or a bad `STATS_CPU_RNG`; [`Error::Data`] for a stratum without questions.
pub fn prepare(panel: &Panel, settings: &BootstrapJob) -> Result<PreparedBootstrap> {
    match panel_clusters(panel) {
        Some(c) => prepare_clustered(panel, Some(&c), settings),
        None => prepare_clustered::<u32>(panel, None, settings),
    }
}

/// The shared cluster draw ([`crate::resample::clusters`]) of a panel read with a cluster
/// column, its units the questions of each stratum in panel order; `None` without clusters.
///
/// # Errors
/// [`Error::Data`] for a stratum without questions.
pub fn panel_cluster_draw(panel: &Panel) -> Result<Option<ClusterDraw>> {
    panel_clusters(panel)
        .map(|c| ClusterDraw::new(&c))
        .transpose()
}

/// What a report says of a bootstrap that drew whole clusters: how many per stratum.
pub fn cluster_draw_note(clusters: &[usize]) -> String {
    format!(
        "the bootstrap drew whole clusters of questions within strata ({} clusters), each \
         with all its questions, trajectories and reads",
        clusters
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" + ")
    )
}

/// The cluster of every question of every stratum (`[d][q]`) of a panel read with a
/// cluster column (`--cluster`); `None` for a panel without clusters.
pub fn panel_clusters(panel: &Panel) -> Option<Vec<Vec<u32>>> {
    panel.is_clustered().then(|| {
        panel
            .strata
            .iter()
            .filter_map(|s| s.clusters.as_ref().map(|c| c.of_question.clone()))
            .collect()
    })
}

/// [`prepare`], drawing whole clusters of questions within strata when `clusters` is given
/// (`clusters[d][q]`: the cluster of question q of stratum d; [`Bootstrap::clustered`]),
/// else questions.
///
/// # Errors
/// Those of [`prepare`], and of [`Bootstrap::clustered`].
pub fn prepare_clustered<K: Eq + std::hash::Hash + Clone>(
    panel: &Panel,
    clusters: Option<&[Vec<K>]>,
    settings: &BootstrapJob,
) -> Result<PreparedBootstrap> {
    if settings.replicates.is_empty() {
        return Err(Error::Usage(format!(
            "replicates {}..{}: the range holds no replicate",
            settings.replicates.start, settings.replicates.end
        )));
    }
    Ok(PreparedBootstrap {
        boot: match clusters {
            None => Bootstrap::from_panel(panel, settings.spec.clone())?,
            Some(c) => Bootstrap::clustered(panel, c, settings.spec.clone())?,
        },
        settings: settings.clone(),
        design: Design::of_panel(panel),
    })
}

impl PreparedBootstrap {
    /// Questions (with clusters, clusters) drawn by the whole run: replicates × Σ_d Q_d
    /// (or Σ_d G_d), the job size an engine choice weighs.
    pub fn draws(&self) -> u64 {
        let plan = &self.boot.plan;
        let questions: u64 = if plan.clusters.is_empty() {
            plan.strata.iter().map(|s| s.questions as u64).sum()
        } else {
            plan.clusters.iter().map(|&g| g as u64).sum()
        };
        self.settings.replicates.len() as u64 * questions
    }

    /// Runs the replicates on `backend` and summarises them: for each statistic θ the point
    /// estimate θ̂ at the data, the bootstrap SE sd(θ*) and the interval of the settings'
    /// method (percentile, basic, or BCa with the jackknife acceleration). `progress` counts
    /// finished replicates.
    ///
    /// # Errors
    /// Whatever the backend reports (shape or device errors).
    pub fn run(
        &self,
        backend: &dyn ResampleBackend,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<BootstrapRun> {
        let s = &self.settings;
        let values = self
            .boot
            .run(backend, s.seed, s.replicates.clone(), progress)?;
        let replicates = Replicates {
            header: ReplicatesHeader {
                seed: s.seed,
                range: [s.replicates.start, s.replicates.end],
                method: s.method,
                confidence: s.confidence,
                data_sha256: self.boot.data_sha256(),
                plan: self.boot.plan.clone(),
                point: self.boot.point(),
                acceleration: (s.method == Method::Bca).then(|| self.boot.accelerations()),
            },
            values,
        };
        let mut report = build_report(&replicates);
        report
            .notes
            .extend(small_sample_notes(Analysis::Bootstrap, &self.design));
        Ok(BootstrapRun {
            report,
            replicates,
            backend: backend.name().to_string(),
            adapter: backend.description(),
        })
    }
}

/// The stratified question bootstrap of `panel`'s equal-weight estimate
/// θ̂ = (1/D) Σ_d ȳ_d: each replicate draws Q_d questions with replacement in every
/// stratum d and recomputes θ* (and, with components, the refitted variance components
/// and forecast SEs); see [`PreparedBootstrap::run`] for the summaries. [`prepare`]
/// followed by [`PreparedBootstrap::run`].
///
/// # Errors
/// Those of [`prepare`] and [`PreparedBootstrap::run`].
pub fn bootstrap(
    panel: &Panel,
    settings: &BootstrapJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BootstrapRun> {
    prepare(panel, settings)?.run(backend, progress)
}

/// Merges the replicates of sharded runs (each `(name, replicates)`, in any order) into the
/// single run's replicates — byte for byte the file one run over the whole range writes —
/// and summarises them as [`bootstrap`] does. Its engine is `merged`, on `N replicates
/// files`.
///
/// # Errors
/// [`Error::Usage`] when there is no shard, the shards differ in data, seed or settings, or
/// their ranges leave a gap or overlap ([`Replicates::merge`]).
pub fn merge(shards: Vec<(String, Replicates)>) -> Result<BootstrapRun> {
    let n = shards.len();
    let replicates = Replicates::merge(shards)?;
    Ok(BootstrapRun {
        report: build_report(&replicates),
        replicates,
        backend: "merged".into(),
        adapter: format!("{n} replicates files"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panel::{load_panel, LoadOptions};
    use crate::resample::CpuBackend;

    /// The demo panel's paired contrast adaptive − open (the README's and the golden
    /// files' input).
    fn demo() -> Panel {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/demo/panel.csv");
        load_panel(
            &path,
            &LoadOptions {
                contrast: Some("adaptive-open".into()),
                ..Default::default()
            },
        )
        .unwrap()
    }

    fn settings(replicates: Range<u32>) -> BootstrapJob {
        BootstrapJob {
            spec: BootstrapSpec::default(),
            seed: 1,
            replicates,
            method: Method::Percentile,
            confidence: 0.95,
        }
    }

    /// The numbers of `tests/golden/text/bootstrap.txt` (`stats bootstrap
    /// data/demo/panel.csv --contrast adaptive-open --backend cpu --replicates 2000`), to
    /// the six decimals it prints.
    #[test]
    fn the_demo_bootstrap_gives_the_golden_numbers() {
        let run = bootstrap(&demo(), &settings(0..2000), &CpuBackend::new(), &|_| {}).unwrap();
        let r = &run.report;
        let six = |v: f64| format!("{v:.6}");
        assert_eq!(r.outcome, "f1: adaptive-open");
        assert_eq!((r.replicates, r.range, r.seed), (2000, [0, 2000], 1));
        assert_eq!(six(r.summary.estimate), "0.010276");
        assert_eq!(six(r.summary.se), "0.010181");
        assert_eq!(
            [six(r.summary.ci[0]), six(r.summary.ci[1])],
            ["-0.010073", "0.030266"]
        );
        // The small-sample expansion (issue "honest"): 223 questions per stratum give
        // f = 1.0022 and the tail 0.0244 the golden's header line shows.
        let e = r.expansion.expect("the estimate varies");
        assert_eq!(
            (format!("{:.4}", e.factor), format!("{:.4}", e.tail)),
            ("1.0022".into(), "0.0244".into())
        );
        let s: Vec<_> = r
            .strata
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.questions,
                    six(s.summary.estimate),
                    six(s.summary.se),
                )
            })
            .collect();
        assert_eq!(
            s,
            [
                ("hotpotqa", 223, "0.002653".into(), "0.014072".into()),
                ("musique", 223, "0.017899".into(), "0.014557".into()),
            ]
        );
        assert!(r.se_undefined.is_none() && r.components.is_none());
        assert_eq!(run.replicates.values.len(), 2000 * 3);
    }

    /// One replicate gives no standard error: the report says why, text shows the reason
    /// and JSON writes `null` for the SE (as `stats merge` of a one-replicate shard prints).
    #[test]
    fn one_replicate_leaves_the_se_undefined() {
        use crate::table::Defined;
        let run = bootstrap(&demo(), &settings(0..1), &CpuBackend::new(), &|_| {}).unwrap();
        let r = &run.report;
        let why = "1 replicate(s): a standard error needs at least 2";
        assert_eq!(r.se(), Defined::Undefined(why.into()));
        assert!(r.summary.se.is_nan());
        assert_eq!(
            r.se().text(|_| unreachable!()),
            format!("undefined ({why})")
        );
        let v = serde_json::to_value(r).unwrap();
        assert!(v["se"].is_null() && v["se_undefined"] == why);
        // The point estimate is the same as with 2,000 replicates (docs: 0.010275721225710013
        // from Python's float sums, to 1e-15).
        assert!((r.summary.estimate - 0.010275721225710013).abs() < 1e-15);
        let two = bootstrap(&demo(), &settings(0..2), &CpuBackend::new(), &|_| {}).unwrap();
        assert_eq!(two.report.se(), Defined::Value(two.report.summary.se));
        assert!(two.report.summary.se.is_finite());
    }

    /// Two shards merged in either order are the single run, value for value (the rule of
    /// docs/resample.md that the golden `merge` case checks through the CLI); the report's
    /// SE is the sample SD of the replicates' first column.
    #[test]
    fn merged_shards_are_the_single_run() {
        let panel = demo();
        let cpu = CpuBackend::new();
        let run = |r: Range<u32>| bootstrap(&panel, &settings(r), &cpu, &|_| {}).unwrap();
        let whole = run(0..300);
        let merged = merge(vec![
            ("b".into(), run(120..300).replicates),
            ("a".into(), run(0..120).replicates),
        ])
        .unwrap();
        assert_eq!(merged.replicates, whole.replicates);
        assert_eq!(merged.report.summary.se, whole.report.summary.se);
        let est: Vec<f64> = whole.replicates.values.iter().step_by(3).copied().collect();
        let sd = crate::resample::summary::sd(&est);
        assert!(
            (whole.report.summary.se - sd).abs() < 1e-15,
            "{} {sd}",
            whole.report.summary.se
        );
        let gap = merge(vec![
            ("a".into(), run(0..100).replicates),
            ("c".into(), run(120..300).replicates),
        ])
        .unwrap_err();
        assert!(
            gap.to_string().contains("previous files end at 100 (gap)"),
            "{gap}"
        );
    }

    /// The document of a run: the engine and the settings in the envelope only, the
    /// report's own fields in the body; a merge names the files it merged as its adapter.
    #[test]
    fn the_bootstrap_document_has_the_engine_in_its_envelope_only() {
        use crate::document::{document, Inputs};
        use serde_json::json;
        let panel = demo();
        let cpu = CpuBackend::new();
        let s = BootstrapJob {
            seed: 7,
            confidence: 0.9,
            ..settings(10..60)
        };
        let run = bootstrap(&panel, &s, &cpu, &|_| {}).unwrap();
        let doc = document("bootstrap", Inputs::new().with("panel", "p.csv"), &run);
        assert_eq!(
            doc["run"],
            json!({
                "command": "bootstrap",
                "ragstats": env!("CARGO_PKG_VERSION"),
                "inputs": {"panel": "p.csv"},
                "backend": "cpu",
                "adapter": cpu.description(),
                "replicates": 50,
                "seed": 7,
                "confidence": 0.9,
            })
        );
        let keys = crate::document::keys(&doc);
        assert_eq!(
            keys,
            [
                "ci",
                "estimate",
                "expansion",
                "method",
                "outcome",
                "range",
                "run",
                "se",
                "strata"
            ]
        );
        assert_eq!(doc["range"], json!([10, 60]));
        assert_eq!(doc["method"], "percentile");
        assert_eq!(doc["outcome"], "f1: adaptive-open");
        assert_eq!(doc["estimate"], run.report.summary.estimate);
        assert_eq!(doc["strata"][0]["name"], "hotpotqa");
        assert_eq!(doc["strata"][0]["questions"], 223);

        let merged = merge(vec![
            (
                "b".into(),
                bootstrap(&panel, &settings(5..9), &cpu, &|_| {})
                    .unwrap()
                    .replicates,
            ),
            (
                "a".into(),
                bootstrap(&panel, &settings(0..5), &cpu, &|_| {})
                    .unwrap()
                    .replicates,
            ),
        ])
        .unwrap();
        let e = merged.engine();
        assert_eq!(
            (e.backend.as_deref(), e.adapter.as_deref()),
            (Some("merged"), Some("2 replicates files"))
        );
        assert_eq!(
            (e.replicates, e.seed, e.confidence),
            (Some(9), Some(1), Some(0.95))
        );
    }

    #[test]
    fn an_empty_range_is_refused_and_draws_count_every_question() {
        let panel = demo();
        let e = prepare(&panel, &settings(5..5)).unwrap_err();
        assert!(e.to_string().contains("holds no replicate"), "{e}");
        assert_eq!(prepare(&panel, &settings(0..10)).unwrap().draws(), 10 * 446);
    }
}
