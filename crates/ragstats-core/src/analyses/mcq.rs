//! The MCQ analyses: `mcq validate` (every format rule of an items file), `mcq agree`
//! (annotator agreement and majority-vote gold) and `mcq score` (EM and F1 of a results
//! file with bootstrap intervals) and `mcq compare` (two files' paired deltas, or a
//! leaderboard of three or more).

use std::path::PathBuf;

use serde::Deserialize;

use super::{source_input, source_input_opt, Draw, Engines, Progress};
use crate::document::{Figure, Finished, Inputs};
use crate::ledger::{read_ledger_from, Prices};
use crate::mcq::agree::{agree, read_annotations_from, AgreeSettings};
use crate::mcq::cluster::{item_clusters, ClusterBy, Clusters};
use crate::mcq::compare::{
    compare_results_clustered, paired_items, CompareJob as McqCompareJob,
    CompareReport as McqCompareReport,
};
use crate::mcq::filter::{filter_items, FilterRun};
use crate::mcq::leaderboard::leaderboard_clustered;
use crate::mcq::ledger_costs::{mcq_ledger_costs, McqPricing};
use crate::mcq::results::{read_one_configuration_from, read_results_lines_from};
use crate::mcq::score::{
    score_results_clustered, scored_items, BootSettings, FailurePolicy, ScoreReport,
};
use crate::mcq::validate::{
    load_items_from, load_items_lines_from, read_items_from, validation_report,
};
use crate::mcq::Item;
use crate::panel::Source;
use crate::resample::ResampleSettings;
use crate::Result;

/// Every format rule of the items `items` holds, all violations reported (the result's
/// exit code is 2 when there are any), with a summary line after the output.
///
/// # Errors
/// Those of reading the items (rule violations are the report, not errors).
pub fn mcq_validate(items: &Source) -> Result<Finished> {
    let file = read_items_from(items)?;
    let report = validation_report(items.name(), &file);
    let notes = match report.violations.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "{}: {} violation(s) on {} line(s); {} of {} line(s) valid",
            items.name().display(),
            report.violations.len(),
            report.lines_with_violations(),
            report.valid_items,
            report.lines
        )],
    };
    let inputs = source_input(Inputs::new(), "items", items);
    Ok(Finished::new("mcq validate", inputs, report).with_notes_after(notes))
}

/// The settings of [`mcq_agree`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct McqAgreeSettings {
    /// Gold by option instead of the majority answer set.
    pub per_option: bool,
    /// Write the majority-vote gold answers (JSON lines) to this file.
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub gold_out: Option<PathBuf>,
}

/// Annotator agreement (pairwise Jaccard) of the annotations `annotations` holds and their
/// majority-vote gold, checked against `items` when given; the gold goes to `gold_out`
/// (atomically; never over an input).
///
/// # Errors
/// Those of reading the inputs and writing the gold; an input error when `gold_out` names
/// an input.
pub fn mcq_agree(
    annotations: &Source,
    items: Option<&Source>,
    settings: &McqAgreeSettings,
) -> Result<Finished> {
    if let Some(gold) = &settings.gold_out {
        let mut inputs: Vec<(&str, &std::path::Path)> = annotations
            .paths()
            .iter()
            .map(|p| ("annotations file", p.as_path()))
            .collect();
        inputs.extend(
            items
                .iter()
                .flat_map(|s| s.paths())
                .map(|p| ("items file", p.as_path())),
        );
        crate::io::refuse_overwriting_inputs(&[("gold output", gold)], &inputs)?;
    }
    let items_read = items.map(load_items_from).transpose()?;
    let anns = read_annotations_from(annotations, items_read.as_deref())?;
    let report = agree(
        &anns,
        items_read.as_deref(),
        &AgreeSettings {
            per_option: settings.per_option,
        },
    );
    if let Some(p) = &settings.gold_out {
        let mut s = String::new();
        for g in &report.gold {
            // Through a `Value`: its keys are sorted, as the file has always had them.
            let v = serde_json::to_value(g).map_err(|e| crate::Error::Data(e.to_string()))?;
            s.push_str(&v.to_string());
            s.push('\n');
        }
        crate::io::write_atomic(p, |w| std::io::Write::write_all(w, s.as_bytes()))?;
    }
    let inputs = source_input_opt(
        source_input(Inputs::new(), "annotations", annotations),
        "items",
        items,
    );
    Ok(Finished::new("mcq agree", inputs, report))
}

/// The bootstrap settings `mcq score` and `mcq compare` share.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct McqBootSettings {
    /// The stratified item bootstrap: replicates, seed, backend, confidence.
    #[serde(flatten)]
    pub resample: ResampleSettings,
    /// What a parse failure or API error scores: zero (the default) or left out.
    pub failures: FailurePolicy,
    /// Which provenance makes items one cluster of the bootstrap (needs the items).
    pub cluster_by: ClusterBy,
}

/// The items of a results file (named by their source), checked, with their clusters under
/// `cluster_by`.
type ItemsAndClusters = (Option<(PathBuf, Vec<Item>)>, Option<Clusters>);

/// The items as the results readers take them: their source's name and the items.
fn named(items: &Option<(PathBuf, Vec<Item>)>) -> Option<(&std::path::Path, &[Item])> {
    items.as_ref().map(|(p, its)| (p.as_path(), its.as_slice()))
}

impl McqBootSettings {
    /// The engine's job: the failure policy and the checked resampling.
    ///
    /// # Errors
    /// Those of [`ResampleSettings::resampling`].
    fn job(&self) -> Result<BootSettings> {
        Ok(BootSettings {
            failures: self.failures,
            resampling: self.resample.resampling()?,
        })
    }

    /// The items `items` holds and their clusters.
    ///
    /// # Errors
    /// [`crate::Error::Setting`] naming `cluster_by` when a provenance rule is asked for
    /// without items; those of reading them.
    fn items(&self, items: Option<&Source>) -> Result<ItemsAndClusters> {
        let Some(source) = items else {
            if matches!(self.cluster_by, ClusterBy::Question | ClusterBy::Trajectory) {
                return Err(crate::Error::setting(
                    "cluster_by",
                    "needs the items: the results files carry no provenance; the items \
                     file's meta.provenance does",
                ));
            }
            return Ok((None, None));
        };
        let loaded = load_items_lines_from(source)?;
        let clusters = item_clusters(source.name(), &loaded, self.cluster_by)?;
        let items = loaded.into_iter().map(|l| l.item).collect();
        Ok((Some((source.name().to_path_buf(), items)), clusters))
    }
}

/// The settings of [`mcq_score`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct McqScoreSettings {
    /// The item bootstrap.
    #[serde(flatten)]
    pub boot: McqBootSettings,
    /// Also the positional bias: scores by the gold option's position.
    pub positions: bool,
}

/// EM and F1 per group, task and overall of the results `results` holds (one model and
/// prompt), with run SDs, stratified (clustered, with `items`) bootstrap intervals, failure
/// rates and, with `positions`, positional bias (against `shuffled` results when given).
///
/// # Errors
/// [`crate::Error::Setting`] naming `shuffled` without `positions`; those of reading the
/// inputs and of the scoring.
pub fn mcq_score(
    results: &Source,
    items: Option<&Source>,
    shuffled: Option<&Source>,
    settings: &McqScoreSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: Draw<'_, ScoreReport>,
) -> Result<Finished> {
    let report = mcq_score_report(results, items, shuffled, settings, engines, progress)?;
    let figure = match draw {
        Some(draw) => Some(Figure::new(draw(&report)?, results.paths())),
        None => None,
    };
    let inputs = source_input_opt(
        source_input(Inputs::new(), "results", results),
        "shuffled",
        shuffled,
    );
    Ok(Finished::new("mcq score", inputs, report).with_figure(figure))
}

/// The report of [`mcq_score`], for a front end that shows it its own way (`stats report`).
///
/// # Errors
/// As [`mcq_score`].
pub fn mcq_score_report(
    results: &Source,
    items: Option<&Source>,
    shuffled: Option<&Source>,
    settings: &McqScoreSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<ScoreReport> {
    let boot = settings.boot.job()?;
    if shuffled.is_some() && !settings.positions {
        return Err(crate::Error::setting(
            "shuffled",
            "needs positions: shuffled results are compared by the gold option's position",
        ));
    }
    let (items_read, clusters) = settings.boot.items(items)?;
    let with_items = named(&items_read);
    let read = read_one_configuration_from(results, with_items)?;
    let rows = scored_items(&read, boot.failures, &results.name().display().to_string())?;
    let replicates = u64::from(boot.resampling.replicates);
    let engine = engines.resampler(settings.boot.resample.backend, replicates * rows as u64)?;
    let shuffled_read = shuffled
        .map(|s| read_one_configuration_from(s, with_items))
        .transpose()?;
    let report = score_results_clustered(
        &read,
        settings.positions,
        shuffled_read.as_deref(),
        &boot,
        clusters.as_ref(),
        engine.as_ref(),
        &|d| progress("bootstrap", d, replicates),
    )?;
    Ok(ScoreReport {
        source: results.name().display().to_string(),
        ..report
    })
}

/// The settings of [`mcq_compare`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct McqCompareSettings {
    /// The paired item bootstrap.
    #[serde(flatten)]
    pub boot: McqBootSettings,
    /// Also McNemar's exact test on EM over (id, run) pairs taken as independent.
    pub mcnemar: bool,
}

/// Two results files compared (paired deltas B − A with intervals, each level's test of
/// ΔEM), or three or more as a leaderboard (each file's scores, every pair's deltas, the
/// tests adjusted over the pairs); items (and their clusters) when given. `draw` draws the
/// comparison of two files.
///
/// # Errors
/// [`crate::Error::Usage`] for fewer than two files; [`crate::Error::Setting`] for a figure
/// of three or more; those of reading the inputs and of the comparison.
pub fn mcq_compare(
    files: &[Source],
    items: Option<&Source>,
    settings: &McqCompareSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
    draw: Draw<'_, McqCompareReport>,
) -> Result<Finished> {
    let job = McqCompareJob {
        boot: settings.boot.job()?,
        independent_pairs: settings.mcnemar,
    };
    if files.len() < 2 {
        return Err(crate::Error::Usage(
            "mcq compare needs two results files or more".into(),
        ));
    }
    if files.len() > 2 && draw.is_some() {
        return Err(crate::Error::setting(
            "plot",
            "draws two files' comparison; with three or more files read the JSON document",
        ));
    }
    if let [a, b] = files {
        let report = mcq_compare_report(a, b, items, settings, engines, progress)?;
        let figure = match draw {
            Some(draw) => {
                let paths: Vec<_> = a.paths().iter().chain(b.paths()).cloned().collect();
                Some(Figure::new(draw(&report)?, &paths))
            }
            None => None,
        };
        let inputs = source_input(source_input(Inputs::new(), "a", a), "b", b);
        return Ok(Finished::new("mcq compare", inputs, report).with_figure(figure));
    }
    let (items_read, clusters) = settings.boot.items(items)?;
    let with_items = named(&items_read);
    let replicates = u64::from(job.boot.resampling.replicates);
    let bar = |d: u64| progress("bootstrap", d, replicates);
    let mut read = Vec::with_capacity(files.len());
    let mut rows = 0;
    for f in files {
        let results = read_one_configuration_from(f, with_items)?;
        let name = f.name().display().to_string();
        rows = rows.max(scored_items(&results, job.boot.failures, &name)?);
        read.push((name, results));
    }
    // The engine is sized by the largest bootstrap; every one of the k + k(k-1)/2 runs on it.
    let engine = engines.resampler(settings.boot.resample.backend, replicates * rows as u64)?;
    let report = leaderboard_clustered(&read, &job, clusters.as_ref(), engine.as_ref(), &bar)?;
    let inputs = Inputs::new().with_all("results", files.iter().flat_map(Source::names));
    Ok(Finished::new("mcq compare", inputs, report))
}

/// The report of [`mcq_compare`] of two files, for a front end that shows it its own way
/// (`stats report`).
///
/// # Errors
/// As [`mcq_compare`].
pub fn mcq_compare_report(
    a: &Source,
    b: &Source,
    items: Option<&Source>,
    settings: &McqCompareSettings,
    engines: &dyn Engines,
    progress: Progress<'_>,
) -> Result<McqCompareReport> {
    let job = McqCompareJob {
        boot: settings.boot.job()?,
        independent_pairs: settings.mcnemar,
    };
    let (items_read, clusters) = settings.boot.items(items)?;
    let with_items = named(&items_read);
    let replicates = u64::from(job.boot.resampling.replicates);
    let ra = read_one_configuration_from(a, with_items)?;
    let rb = read_one_configuration_from(b, with_items)?;
    let rows = paired_items(&ra, &rb, job.boot.failures)?;
    let engine = engines.resampler(settings.boot.resample.backend, replicates * rows as u64)?;
    let mut report =
        compare_results_clustered(&ra, &rb, &job, clusters.as_ref(), engine.as_ref(), &|d| {
            progress("bootstrap", d, replicates)
        })?;
    report.files = [a.name().to_path_buf(), b.name().to_path_buf()];
    Ok(report)
}

/// Tokens and fees of an `mcq run` ledger per item, group, task and run, priced by
/// `prices` when given ([`crate::mcq::ledger_costs::mcq_ledger_costs`]).
///
/// # Errors
/// Those of reading the ledger and the prices and of the accounting.
pub fn mcq_cost(ledger: &Source, prices: Option<&Source>) -> Result<Finished> {
    let entries = read_ledger_from(ledger)?;
    let prices_read = prices.map(Prices::from_source).transpose()?;
    let pricing = prices_read
        .as_ref()
        .zip(prices)
        .map(|(prices, source)| McqPricing {
            prices,
            path: source.name(),
        });
    let report = mcq_ledger_costs(&entries, ledger.name(), pricing)?;
    let inputs = source_input_opt(
        source_input(Inputs::new(), "ledger", ledger),
        "prices",
        prices,
    );
    Ok(Finished::new("mcq cost", inputs, report))
}

/// The settings of [`mcq_filter`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct McqFilterSettings {
    /// Where the kept items go (their lines copied unchanged).
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub out: PathBuf,
    /// Where the dropped items go, with why (default: beside `out`, `NAME.dropped.jsonl`).
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub report: Option<PathBuf>,
}

/// The difficulty filter (drop items every model answers alike) and the format rules on the
/// items `items` holds, judged by the `predictions` (results of several models): the kept
/// lines go to `out` unchanged, the dropped ones with why to the report file, both written
/// atomically and never over an input.
///
/// # Errors
/// [`crate::Error::Setting`] naming `out` when it is not given; those of reading the inputs,
/// of the filter, and of writing.
pub fn mcq_filter(
    items: &Source,
    predictions: &[Source],
    settings: &McqFilterSettings,
) -> Result<Finished> {
    if settings.out.as_os_str().is_empty() {
        return Err(crate::Error::setting(
            "out",
            "the file the kept items go to is needed",
        ));
    }
    let file = read_items_from(items)?;
    let mut preds = Vec::new();
    for p in predictions {
        preds.extend(read_results_lines_from(p)?.into_iter().map(|(_, r)| r));
    }
    let filtered = filter_items(file, &preds)?;
    let out = &settings.out;
    let report = settings
        .report
        .clone()
        .unwrap_or_else(|| crate::io::output::sidecar(out, "dropped"));
    let mut inputs: Vec<(&str, &std::path::Path)> = items
        .paths()
        .iter()
        .map(|p| ("items file", p.as_path()))
        .collect();
    inputs.extend(
        predictions
            .iter()
            .flat_map(|p| p.paths())
            .map(|p| ("predictions file", p.as_path())),
    );
    crate::io::refuse_overwriting_inputs(
        &[("kept items file", out), ("dropped items file", &report)],
        &inputs,
    )?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
    }
    let kept: String = filtered.kept.iter().map(|l| format!("{l}\n")).collect();
    crate::io::write_atomic(out, |w| w.write_all(kept.as_bytes()))?;
    let mut dropped = String::new();
    for d in &filtered.dropped {
        let line = serde_json::to_string(d).map_err(|e| crate::Error::Data(e.to_string()))?;
        dropped.push_str(&line);
        dropped.push('\n');
    }
    crate::io::write_atomic(&report, |w| w.write_all(dropped.as_bytes()))?;
    let run = FilterRun::new(filtered, out, &report);
    let untested = &run.filter.untested;
    let notes = match untested.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "note: {} kept item(s) lack a parsed answer from some model and were not tested for difficulty: {}",
            untested.len(),
            untested.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        )],
    };
    let doc_inputs = source_input(Inputs::new(), "items", items)
        .with_all("predictions", predictions.iter().flat_map(Source::names));
    Ok(Finished::new("mcq filter", doc_inputs, run).with_notes_after(notes))
}
