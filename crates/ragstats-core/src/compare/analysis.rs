//! `compare`: k systems (the arms of one panel) on the same questions.
//!
//! Each system's estimate and SE are `variance --arm NAME`'s, each pair's `variance
//! --contrast B-A`'s (nested components per stratum, REML when a stratum is unbalanced):
//! the panel is read once and assembled once per arm and per pair. One stratified bootstrap
//! of the questions — the same draws for every column, as every engine job with one seed
//! draws the same questions — gives every system's and every pair's replicates, from which
//! come the simultaneous critical value (the quantile of the maximum studentized
//! difference), each system's best share (the share of replicates it tops) and, through the simultaneous intervals, the rank intervals.
//!
//! The systems are the values of the `arm` column, or of another column
//! ([`LoadOptions::arm_column`], `stats compare --by COLUMN`), which then plays the arm's
//! part in every panel assembled here.
//!
//! With a cost ledger ([`CompareJob::costs`]) the next step is priced: the closest
//! unresolved pair's components and the ledger's unit costs go to `stats plan`'s planner
//! ([`crate::allocation::planner_report::planner`]), which finds the cheapest Q:T:R whose SE
//! resolves the pair with the chosen power under the test the next step is planned for
//! ([`PlannedTest`]: Holm over the family at its first step, Bonferroni).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::allocation::planner::{power_at, predictive_power, Bounds, Goal, Planner};
use crate::allocation::planner_report::{planner, unmet_goal, PlanCosts};
use crate::bootstrap::analysis::{cluster_draw_note, panel_cluster_draw};
use crate::bootstrap::report::few_clusters_note;
use crate::components::forecast::Audit;
use crate::components::variance::{analyse_panel, question_mean, VarianceReport};
use crate::costs::accounting::{Budget, PricedLedger};
use crate::import::ImportOptions;
use crate::inference::binary::{clopper_pearson, wilson, PairedCounts};
use crate::inference::max_t::{family_laws, Combination, MaxAbs};
use crate::inference::measured::{small_sample_notes, Analysis, Design};
use crate::inference::t::{t_quantile, two_sided_p};
use crate::inference::IntervalRule;
use crate::ledger::{Entry, Prices};
use crate::panel::{LoadOptions, Nested, Panel, Source, Stratum};
use crate::resample::clusters::ClusterDraw;
use crate::resample::columns::CenteredColumns;
use crate::resample::summary::Interval;
use crate::resample::summary::{normal_quantile, tail_probability};
use crate::resample::{ResampleBackend, Resampling, MAX_K};
use crate::table::{format_number, Precision};
use crate::{Error, Result};

use super::multiplicity::{benjamini_hochberg, holm};
use super::ranks::{best_share, rank_intervals};
use super::report::*;

/// What to compare and how (checked; the front door's settings are
/// [`crate::analyses::CompareSettings`]).
#[derive(Debug, Clone)]
pub struct CompareJob {
    /// Compare every arm with this one only (Dunnett's family) instead of every pair.
    pub reference: Option<String>,
    pub resampling: Resampling,
    /// Power the next study's question count is planned for, in (0, 1).
    pub power: f64,
    /// Score methods (Wilson, Newcombe, exact McNemar) or t intervals: see [`IntervalRule`].
    pub intervals: IntervalRule,
    /// A cost ledger to price the next study with: the cheapest (Q, T, R) that resolves the
    /// closest unresolved pair. `None`: only the questions needed at today's T and R.
    pub costs: Option<NextCosts>,
}

/// The ledger (and prices) the next study is priced from, as `stats plan --ledger` prices
/// an audit: the cost of a cell is everything the ledger bills for it (every system's
/// rows), so the allocation is what running all the compared systems again costs.
#[derive(Debug, Clone)]
pub struct NextCosts {
    /// The ledger's entries, read.
    pub ledger: Arc<Vec<Entry>>,
    /// What messages call the ledger (its file, or its table's name).
    pub ledger_name: PathBuf,
    /// The prices, read, and what messages call them; needed for dollars.
    pub prices: Option<(Arc<Prices>, PathBuf)>,
    pub budget: Budget,
    /// c_Q, a cost per question whatever its T and R (judging, annotation).
    pub question_cost: f64,
    /// The planner's search bounds.
    pub bounds: Bounds,
}

/// A panel read for `compare`: the systems' and pairs' analyses and the bootstrap columns,
/// ready for an engine.
pub struct PreparedComparison {
    metric: String,
    arms: Vec<String>,
    settings: CompareJob,
    arm_reports: Vec<VarianceReport>,
    /// (a, b) arm indices, a < b, in order (0,1), (0,2) … (1,2) …
    pairs: Vec<(usize, usize)>,
    pair_reports: Vec<VarianceReport>,
    /// With a ledger, each pair's planner (its components and the ledger's unit costs).
    pair_planners: Vec<Planner>,
    unpaired: Vec<usize>,
    /// Pairs whose replicates are the difference of their arms' (every cell paired), else
    /// the index of the pair's own bootstrap column.
    pair_column: Vec<Option<usize>>,
    /// Per bootstrap column, per stratum, per question: the question's mean (arms first,
    /// then the pairs with unpaired cells).
    columns: Vec<Vec<Vec<f64>>>,
    questions: Vec<usize>,
    /// With a cluster column, the clusters of the first system's questions (the master
    /// order of `columns`): the bootstrap then draws whole clusters within strata.
    clusters: Option<ClusterDraw>,
    /// Every system's outcome is constant (then every SE and interval is 0 by arithmetic).
    constant: bool,
}

/// Cells of a panel: every outcome of every stratum.
fn cells(p: &Panel) -> usize {
    p.strata
        .iter()
        .map(|s| s.nested.as_ref().map_or(s.y.len(), |n| n.y.len()))
        .sum()
}

/// Reads the panel `source` holds once ([`crate::import::panel_rows`]: Parquet and
/// evaluation logs with `import`'s mapping are read once into memory) and analyses every
/// arm and every pair of arms.
///
/// The rows are read once and each arm's panel assembled once; each pair's panel is then
/// the cell-by-cell difference of its arms' panels ([`pair_panel`]) when the two arms have
/// the same cells (balanced strata with the same questions, trajectories and reads: what
/// assembling the contrast from the rows would give, value for value). Only a pair whose
/// arms differ in their cells (unpaired cells, dropped or unbalanced questions) is
/// assembled from the rows as `stats variance --contrast B-A` assembles it.
///
/// # Errors
/// [`Error::Input`] for a panel with fewer than two arms, an unknown reference, arm names
/// that make a contrast ambiguous, or an arm without a cell on some question (the systems
/// must answer the same questions); the errors of loading each arm and pair panel.
pub fn prepare(
    source: &Source,
    opts: &LoadOptions,
    import: &ImportOptions,
    settings: &CompareJob,
) -> Result<PreparedComparison> {
    let path = source.name();
    let column = opts.arm_column.as_deref().unwrap_or("arm");
    // The systems' names as messages call them: arms, or the values of the --by column.
    let (systems, system) = if column == "arm" {
        ("arms", "arm".to_string())
    } else {
        ("systems", format!("'{column}' value"))
    };
    // Every system must answer the same questions: the loader lists every one that does not,
    // at once, before the arms are assembled.
    let opts = &LoadOptions {
        same_questions: true,
        ..opts.clone()
    };
    let rows = crate::import::panel_rows(source, opts, import)?;
    let arms = rows.arms();
    if arms.len() < 2 {
        return Err(Error::input(
            path,
            None,
            format!(
                "compare needs at least two {systems} in the '{column}' column; the panel has {}",
                if arms.is_empty() {
                    format!("no '{column}' column")
                } else {
                    format!("only '{}'", arms[0])
                }
            ),
        ));
    }
    if let Some(r) = &settings.reference {
        if !arms.contains(r) {
            return Err(Error::setting(
                "reference",
                format!(
                    "no {system} '{r}' in the panel; its {systems} are: {}",
                    arms.join(", ")
                ),
            ));
        }
    }
    let pairs = all_pairs(&arms, |a, b, spec| {
        Error::input(
            path,
            None,
            format!(
                "{systems} '{b}' and '{a}' cannot be contrasted unambiguously: '{spec}' splits into other {systems}' names; rename one"
            ),
        )
    })?;
    let arm_opts: Vec<LoadOptions> = arms
        .iter()
        .map(|a| LoadOptions {
            arm: Some(a.clone()),
            contrast: None,
            // A failure score belongs to a contrast: an arm alone has no missing partner.
            failure_score: None,
            ..opts.clone()
        })
        .collect();
    let arm_panels = rows.assemble(&arm_opts)?;
    if let Some(x) = opts.failure_score.filter(|x| !x.is_finite()) {
        return Err(Error::setting(
            "failure_score",
            format!("{x} is not a finite score"),
        ));
    }
    // Pairs whose arms have the same cells are their arms' difference; the others are
    // assembled from the rows (in one parallel pass, in pair order).
    let contrast = |a: usize, b: usize| format!("{}-{}", arms[b], arms[a]);
    let costs = settings.costs.is_some();
    let derived: Vec<Option<Pair>> = {
        use rayon::prelude::*;
        // Two arms derivable with the first are derivable with each other (`derivable` is
        // an equality), so k − 1 comparisons of the arms' cells settle most of the pairs
        // instead of k(k − 1)/2 comparisons of 10,000s of question ids each.
        let like_first: Vec<bool> = arm_panels
            .par_iter()
            .map(|p| derivable(&arm_panels[0], p))
            .collect();
        pairs
            .par_iter()
            .map(|&(a, b)| {
                let (pa, pb) = (&arm_panels[a], &arm_panels[b]);
                let panel =
                    ((like_first[a] && like_first[b]) || derivable(pa, pb)).then(|| {
                        derived_pair(pa, pb, (&arms[a], &arms[b]), &contrast(a, b), costs)
                    })??;
                Some(Pair::analysed_unless(panel, costs))
            })
            .collect()
    };
    let assembled_opts: Vec<LoadOptions> = pairs
        .iter()
        .zip(&derived)
        .filter(|(_, d)| d.is_none())
        .map(|(&(a, b), _)| LoadOptions {
            arm: None,
            contrast: Some(contrast(a, b)),
            ..opts.clone()
        })
        .collect();
    let mut assembled = rows.assemble(&assembled_opts)?.into_iter();
    let pair_panels: Vec<Pair> = derived
        .into_iter()
        .map(|d| {
            d.unwrap_or_else(|| {
                Pair::Panel(assembled.next().expect("one assembled per missing pair"))
            })
        })
        .collect();
    analyse_prepared(
        path,
        &system,
        arms,
        pairs,
        arm_panels,
        pair_panels,
        settings,
    )
}

/// Every pair (a, b), a < b, of `arms` in order (0,1), (0,2) … (1,2) …, after checking
/// that each contrast `B-A` splits back into its own two arms (the loader splits B-A at the
/// first '-' that leaves two arm names); `ambiguous(a, b, spec)` is the error otherwise.
fn all_pairs(
    arms: &[String],
    ambiguous: impl Fn(&str, &str, &str) -> Error,
) -> Result<Vec<(usize, usize)>> {
    let mut pairs = Vec::new();
    for a in 0..arms.len() {
        for b in a + 1..arms.len() {
            let spec = format!("{}-{}", arms[b], arms[a]);
            let first = spec.match_indices('-').map(|(i, _)| i).find(|&i| {
                arms.contains(&spec[..i].to_string()) && arms.contains(&spec[i + 1..].to_string())
            });
            if first != Some(arms[b].len()) {
                return Err(ambiguous(&arms[a], &arms[b], &spec));
            }
            pairs.push((a, b));
        }
    }
    Ok(pairs)
}

/// Whether the contrast `b − a` can be derived from the two arms' panels ([`pair_panel`]):
/// the same metric and selector, every stratum of both as read from the file (balanced,
/// none dropped, no notes, no unpaired cells) and the same cells ([`same_cells`]). It is
/// an equality of those properties, so two arms derivable with a third are derivable with
/// each other.
pub fn derivable(a: &Panel, b: &Panel) -> bool {
    let from_file = |p: &Panel| {
        p.strata.iter().all(|s| {
            s.dropped == 0 && s.notes.is_empty() && s.unpaired_cells.is_empty() && s.is_balanced()
        })
    };
    a.metric == b.metric
        && a.selector == b.selector
        && from_file(a)
        && from_file(b)
        && same_cells(a, b)
}

/// The contrast panel `b − a` (named `spec`, `B-A`) as the difference of the arms' panels,
/// when both have the same cells: the same strata and questions in the same order, every
/// stratum balanced with the same trajectory and read labels (and cell labels), none
/// dropped. Then assembling the contrast from the rows gives exactly this panel: its cells
/// pair one to one, each outcome is score(B) − score(A) (the same subtraction of the same
/// scores, or selector means), and questions and strata are ordered by the first line of
/// their rows, an order on which both arms agree. `None` when the cells differ (the caller
/// assembles the contrast from the rows). Without `ids` the pair's question ids are empty
/// strings and its cell labels dropped (what the variance analysis of the pair needs is the
/// counts and outcomes; a ledger's costs need the ids and labels).
pub fn pair_panel(
    a: &Panel,
    b: &Panel,
    names: (&str, &str),
    spec: &str,
    ids: bool,
) -> Option<Panel> {
    derivable(a, b).then(|| derived_pair(a, b, names, spec, ids))?
}

/// [`pair_panel`] for arms already known to be [`derivable`]; `None` only when the arm's
/// outcome name is not the loader's "metric (A)…".
fn derived_pair(a: &Panel, b: &Panel, names: (&str, &str), spec: &str, ids: bool) -> Option<Panel> {
    // The outcome's name as the loader writes it: "metric: B-A" and the selector's suffix,
    // which follows "metric (A)" in the arm's.
    let suffix = a
        .outcome
        .strip_prefix(&format!("{} ({})", a.metric, names.0))?;
    Some(Panel {
        notes: Vec::new(),
        weights: a.weights.clone(),
        source: a.source.clone(),
        metric: a.metric.clone(),
        outcome: format!("{}: {spec}{suffix}", a.metric),
        selectors: a.selectors.clone(),
        selector: a.selector.clone(),
        strata: difference(a, b, ids),
    })
}

/// Whether two panels have the same cells: the same strata, questions, trajectory and read
/// labels (and cell labels) in the same order, and the same nesting of an unbalanced
/// stratum.
pub fn same_cells(a: &Panel, b: &Panel) -> bool {
    fn layout(s: &Stratum) -> Option<(&[usize], &[usize])> {
        s.nested
            .as_ref()
            .map(|n| (&n.traj_start[..], &n.read_start[..]))
    }
    a.strata.len() == b.strata.len()
        && a.strata.iter().zip(&b.strata).all(|(x, y)| {
            x.name == y.name
                && x.questions == y.questions
                && x.trajectories == y.trajectories
                && x.reads == y.reads
                && x.y.len() == y.y.len()
                && layout(x) == layout(y)
                && x.labels == y.labels
        })
}

/// The strata of `b − a`, cell by cell, when the two panels have the same cells: the same
/// strata, questions, trajectory and read labels (and cell labels) in the same order, and
/// the same nesting of an unbalanced stratum. `None` when they differ anywhere.
pub fn cell_difference(a: &Panel, b: &Panel) -> Option<Vec<Stratum>> {
    same_cells(a, b).then(|| difference(a, b, true))
}

/// The strata of `b − a` for panels with the same cells ([`same_cells`]), outcome by
/// outcome. Without `ids` the question ids are empty strings and the cell labels dropped:
/// a comparison of k systems derives k(k − 1)/2 pairs, and copying 10,000s of ids into each
/// (to be dropped unread by the variance analysis) was a sixth of its time.
fn difference(a: &Panel, b: &Panel, ids: bool) -> Vec<Stratum> {
    let diff =
        |vb: &[f64], va: &[f64]| -> Vec<f64> { vb.iter().zip(va).map(|(b, a)| b - a).collect() };
    a.strata
        .iter()
        .zip(&b.strata)
        .map(|(x, y)| Stratum {
            name: x.name.clone(),
            questions: if ids {
                x.questions.clone()
            } else {
                vec![String::new(); x.questions.len()]
            },
            trajectories: x.trajectories.clone(),
            reads: x.reads.clone(),
            y: diff(&y.y, &x.y),
            dropped: x.dropped,
            dropped_questions: x.dropped_questions.clone(),
            nested: x
                .nested
                .as_ref()
                .zip(y.nested.as_ref())
                .map(|(nx, ny)| Nested {
                    traj_start: nx.traj_start.clone(),
                    read_start: nx.read_start.clone(),
                    y: diff(&ny.y, &nx.y),
                }),
            notes: x.notes.clone(),
            unpaired_cells: x.unpaired_cells.clone(),
            labels: if ids { x.labels.clone() } else { None },
            clusters: x.clusters.clone(),
        })
        .collect()
}

/// A comparison of arm panels built in memory (the coverage study's simulated panels): the
/// arms `arms` with their panels `arm_panels`, in the same order. Every pair's panel is the
/// difference of its arms' ([`cell_difference`]), so the arms must have the same cells.
///
/// # Errors
/// [`Error::Input`] (naming the first panel's source) for fewer than two arms, panels that
/// do not match the names, an unknown reference, or two arms whose cells differ; the errors
/// of the analyses.
pub fn prepare_panels(
    arms: Vec<String>,
    arm_panels: Vec<Panel>,
    settings: &CompareJob,
) -> Result<PreparedComparison> {
    let source = arm_panels
        .first()
        .map(|p| p.source.clone())
        .unwrap_or_default();
    let path = source.as_path();
    if arms.len() < 2 || arms.len() != arm_panels.len() {
        return Err(Error::input(
            path,
            None,
            format!(
                "compare needs two or more arms, each with its panel; got {} names and {} panels",
                arms.len(),
                arm_panels.len()
            ),
        ));
    }
    if let Some(r) = settings.reference.as_ref().filter(|r| !arms.contains(r)) {
        return Err(Error::setting(
            "reference",
            format!(
                "no arm '{r}' in the panel; its arms are: {}",
                arms.join(", ")
            ),
        ));
    }
    let pairs = all_pairs(&arms, |a, b, spec| {
        Error::input(
            path,
            None,
            format!("arms '{b}' and '{a}' cannot be contrasted unambiguously: '{spec}' splits into other arms' names"),
        )
    })?;
    let mut pair_panels = Vec::with_capacity(pairs.len());
    for &(a, b) in &pairs {
        let (pa, pb) = (&arm_panels[a], &arm_panels[b]);
        let strata = cell_difference(pa, pb).ok_or_else(|| {
            Error::input(
                path,
                None,
                format!("arms '{}' and '{}' do not have the same cells (the same questions, trajectories and reads); compare in memory needs paired arms", arms[a], arms[b]),
            )
        })?;
        pair_panels.push(Panel {
            notes: Vec::new(),
            weights: pa.weights.clone(),
            source: pa.source.clone(),
            metric: pa.metric.clone(),
            outcome: format!("{}: {}-{}", pa.metric, arms[b], arms[a]),
            selectors: pa.selectors.clone(),
            selector: pa.selector.clone(),
            strata,
        });
    }
    let pair_panels = pair_panels.into_iter().map(Pair::Panel).collect();
    analyse_prepared(path, "arm", arms, pairs, arm_panels, pair_panels, settings)
}

/// A pair for [`analyse_prepared`]: its panel, or the analysis of a panel derived from
/// its arms' that nothing else reads (its cells are its arms', every one paired).
enum Pair {
    Panel(Panel),
    Analysed(VarianceReport),
}

impl Pair {
    /// A pair derived from its arms ([`derived_pair`]), analysed as soon as it is derived
    /// and its panel dropped, unless `keep` (a ledger prices it) or its analysis fails
    /// (then [`analyse_prepared`] reports the error in its order). The k(k − 1)/2 derived
    /// panels were most of compare's memory, and their faults and frees a tenth of its time.
    fn analysed_unless(panel: Panel, keep: bool) -> Pair {
        if keep {
            return Pair::Panel(panel);
        }
        match analyse_panel(&panel) {
            Ok(report) => Pair::Analysed(report),
            Err(_) => Pair::Panel(panel),
        }
    }
}

/// Analyses every arm's and every pair's panel and lays out the bootstrap columns.
fn analyse_prepared(
    path: &Path,
    system: &str,
    arms: Vec<String>,
    pairs: Vec<(usize, usize)>,
    arm_panels: Vec<Panel>,
    pair_panels: Vec<Pair>,
    settings: &CompareJob,
) -> Result<PreparedComparison> {
    let k = arms.len();
    let panels: Vec<&Panel> = arm_panels
        .iter()
        .chain(pair_panels.iter().filter_map(|p| match p {
            Pair::Panel(p) => Some(p),
            Pair::Analysed(_) => None,
        }))
        .collect();
    use rayon::prelude::*;
    let reports: Vec<Result<VarianceReport>> =
        panels.par_iter().map(|p| analyse_panel(p)).collect();
    let mut reports = reports.into_iter().collect::<Result<Vec<_>>>()?;
    let mut analysed = reports.split_off(k).into_iter();
    let arm_reports = reports;
    let arm_panels = &arm_panels[..];
    // Each pair's report, and its panel unless it was analysed as it was derived.
    let (pair_reports, pair_panels): (Vec<VarianceReport>, Vec<Option<Panel>>) = pair_panels
        .into_iter()
        .map(|p| match p {
            Pair::Analysed(report) => (report, None),
            Pair::Panel(panel) => (analysed.next().expect("one report per panel"), Some(panel)),
        })
        .unzip();
    let pair_planners = match &settings.costs {
        Some(nc) => {
            let panels: Vec<&Panel> = pair_panels
                .iter()
                .map(|p| p.as_ref().expect("every pair keeps its panel for a ledger"))
                .collect();
            pair_planners(nc, &panels, &pair_reports)?
        }
        None => Vec::new(),
    };

    // The master questions: every stratum and question of the first arm, which every arm
    // must have (and no other).
    let master: Vec<(&str, Vec<&str>)> = arm_panels[0]
        .strata
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.questions.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let positions = |p: &Panel, what: &str| -> Result<Vec<(usize, Vec<usize>)>> {
        let mut out = Vec::with_capacity(master.len());
        for (name, qs) in &master {
            let si = p.strata.iter().position(|s| s.name == *name).ok_or_else(|| {
                Error::input(path, None, format!("{what} has no cells in dataset '{name}'; compare needs every {system} on the same questions"))
            })?;
            let s = &p.strata[si];
            // Most systems list the stratum's questions in the first one's order.
            if s.questions.len() == qs.len() && s.questions.iter().zip(qs).all(|(a, b)| a == b) {
                out.push((si, (0..qs.len()).collect()));
                continue;
            }
            let index: std::collections::HashMap<&str, usize> = s
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| (q.as_str(), i))
                .collect();
            let mut at = Vec::with_capacity(qs.len());
            for q in qs {
                at.push(*index.get(q).ok_or_else(|| {
                    Error::input(path, None, format!("{what} has no cell for question '{q}' of dataset '{name}'; compare needs every {system} on the same questions"))
                })?);
            }
            if s.questions.len() != qs.len() {
                let extra = s
                    .questions
                    .iter()
                    .find(|q| !qs.contains(&q.as_str()))
                    .expect("a question not in the master list");
                return Err(Error::input(path, None, format!("{what} has question '{extra}' of dataset '{name}', which {system} '{}' lacks; compare needs every {system} on the same questions", arms[0])));
            }
            out.push((si, at));
        }
        if p.strata.len() != master.len() {
            let extra = p
                .strata
                .iter()
                .find(|s| !master.iter().any(|(n, _)| *n == s.name))
                .expect("an extra stratum");
            return Err(Error::input(
                path,
                None,
                format!(
                    "{what} has dataset '{}', which {system} '{}' lacks",
                    extra.name, arms[0]
                ),
            ));
        }
        Ok(out)
    };
    let column_of = |p: &Panel, what: &str| -> Result<Vec<Vec<f64>>> {
        Ok(positions(p, what)?
            .into_iter()
            .map(|(si, at)| {
                at.into_iter()
                    .map(|q| question_mean(&p.strata[si], q))
                    .collect()
            })
            .collect())
    };
    // The systems' columns side by side, the first error in system order.
    let columns: Vec<Result<Vec<Vec<f64>>>> = arms
        .par_iter()
        .zip(arm_panels)
        .map(|(a, p)| column_of(p, &format!("{system} '{a}'")))
        .collect();
    let mut columns = columns.into_iter().collect::<Result<Vec<_>>>()?;
    let mut pair_column = Vec::with_capacity(pairs.len());
    let mut unpaired = Vec::with_capacity(pairs.len());
    for (&(a, b), p) in pairs.iter().zip(&pair_panels) {
        let Some(p) = p else {
            // Derived from its arms: their cells, every one paired.
            unpaired.push(0);
            pair_column.push(None);
            continue;
        };
        let n = cells(p);
        unpaired.push(p.strata.iter().map(|s| s.unpaired_cells.len()).sum());
        if n == cells(&arm_panels[a]) && n == cells(&arm_panels[b]) {
            pair_column.push(None);
        } else {
            pair_column.push(Some(columns.len()));
            columns.push(column_of(p, &format!("contrast {}-{}", arms[b], arms[a]))?);
        }
    }
    Ok(PreparedComparison {
        constant: arm_panels.iter().all(Panel::outcome_is_constant),
        metric: arm_panels[0].metric.clone(),
        questions: master.iter().map(|(_, q)| q.len()).collect(),
        clusters: panel_cluster_draw(&arm_panels[0])?,
        arms,
        settings: settings.clone(),
        arm_reports,
        pairs,
        pair_reports,
        pair_planners,
        unpaired,
        pair_column,
        columns,
    })
}

/// Every pair's planner: the pair's components (its `stats variance --contrast` fit) with
/// the unit costs the ledger gives its cells, as `stats plan --audit PANEL --contrast B-A
/// --ledger L` builds it.
fn pair_planners(
    nc: &NextCosts,
    panels: &[&Panel],
    reports: &[VarianceReport],
) -> Result<Vec<Planner>> {
    let priced = PricedLedger {
        entries: &nc.ledger,
        path: &nc.ledger_name,
        prices: nc.prices.as_ref().map(|(p, _)| p.as_ref()),
        prices_path: nc.prices.as_ref().map(|(_, name)| name.as_path()),
    };
    // Every pair panel is of the same selector choice.
    let selector = panels.first().and_then(|p| p.selector.as_deref());
    let cells = priced.cell_costs(selector, nc.budget)?;
    panels
        .iter()
        .zip(reports)
        .map(|(p, r)| {
            let costs = PlanCosts::of_panel(p, &cells, &nc.ledger_name)?;
            planner(
                &Audit::from_report(r),
                Some(p),
                &costs,
                nc.question_cost,
                None,
                nc.bounds,
            )
        })
        .collect()
}

/// The Wald t statistic estimate/SE and its two-sided p on `df` degrees of freedom (the
/// normal reference when `df` is `None`); with SE 0, no statistic and p = 1 for a zero
/// estimate, 0 otherwise.
fn wald_p(estimate: f64, se: f64, df: Option<f64>) -> (Option<f64>, f64) {
    if se > 0.0 {
        let t = estimate / se;
        (Some(t), two_sided_p(t, df.unwrap_or(f64::INFINITY)))
    } else {
        (None, if estimate == 0.0 { 1.0 } else { 0.0 })
    }
}

/// The p quantile of t on `df` degrees of freedom, the normal's when `df` is `None` (an SE of
/// 0, where the quantile multiplies nothing).
fn t_or_z(p: f64, df: Option<f64>) -> f64 {
    t_quantile(p, df.unwrap_or(f64::INFINITY))
}

impl PreparedComparison {
    /// Columns per engine job: 16, or with clusters 15 and the clusters' question counts.
    fn group_width(&self) -> usize {
        if self.clusters.is_some() {
            MAX_K - 1
        } else {
            MAX_K
        }
    }

    /// Draws the engine makes: Σ Q_s (with clusters Σ G_s) per replicate, per group of
    /// columns.
    pub fn draws(&self) -> u64 {
        let groups = self.columns.len().div_ceil(self.group_width()) as u64;
        let units: usize = match &self.clusters {
            Some(d) => d.counts().iter().sum(),
            None => self.questions.iter().sum(),
        };
        groups * u64::from(self.settings.resampling.replicates) * units as u64
    }

    /// Replicates of every column: the mean over strata of the mean of the drawn questions'
    /// values, with the panel's stratum weights (Σₛ wₛ·ȳ*ₛ; equal weights 1/D unless
    /// `--weights`), `[column][replicate]`.
    fn replicates(
        &self,
        backend: &dyn ResampleBackend,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Vec<f64>>> {
        let rs = &self.settings.resampling;
        let b = rs.replicates;
        let weights = &self.arm_reports[0].weights;
        let groups: Vec<&[Vec<Vec<f64>>]> = self.columns.chunks(self.group_width()).collect();
        let mut out = Vec::with_capacity(self.columns.len());
        for (g, cols) in groups.iter().enumerate() {
            let n = cols.len();
            let strata: Vec<Vec<Vec<f64>>> = (0..self.questions.len())
                .map(|s| match &self.clusters {
                    None => (0..self.questions[s])
                        .map(|q| cols.iter().map(|c| c[s][q]).collect())
                        .collect(),
                    // One row per cluster (the shared cluster draw): its questions' sums of
                    // every column, and last its question count M_c.
                    Some(d) => d
                        .cluster_rows(s, n + 1, |q, j| if j < n { cols[j][s][q] } else { 1.0 })
                        .chunks_exact(n + 1)
                        .map(<[f64]>::to_vec)
                        .collect(),
                })
                .collect();
            let centred = CenteredColumns::new(&strata)?;
            let done = u64::from(b) * g as u64;
            let sums = centred.resample(backend, rs.seed, 0..b, &|n| progress(done + n))?;
            for j in 0..cols.len() {
                out.push(
                    sums.iter()
                        .map(|rep| {
                            // With clusters the drawn questions Σ M_c: the ratio mean.
                            let means = rep.iter().zip(&self.questions).map(|(s, &q)| {
                                s[j] / if self.clusters.is_some() {
                                    s[n]
                                } else {
                                    q as f64
                                }
                            });
                            crate::panel::combine_strata(means, weights)
                        })
                        .collect(),
                );
            }
        }
        Ok(out)
    }

    /// Total replicate work for a progress bar: replicates × column groups.
    pub fn work(&self) -> u64 {
        u64::from(self.settings.resampling.replicates)
            * self.columns.len().div_ceil(self.group_width()) as u64
    }

    /// Runs the bootstrap on `backend` and builds the report.
    ///
    /// # Errors
    /// Whatever the backend reports.
    pub fn run(
        &self,
        backend: &dyn ResampleBackend,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<CompareReport> {
        let rs = &self.settings.resampling;
        let k = self.arms.len();
        let reps = self.replicates(backend, progress)?;
        let tail = tail_probability(rs.confidence);
        let alpha = 2.0 * tail;
        let family: Vec<usize> = match &self.settings.reference {
            Some(r) => {
                let ri = self
                    .arms
                    .iter()
                    .position(|a| a == r)
                    .expect("reference checked");
                (0..self.pairs.len())
                    .filter(|&p| self.pairs[p].0 == ri || self.pairs[p].1 == ri)
                    .collect()
            }
            None => (0..self.pairs.len()).collect(),
        };
        let all: Vec<usize> = (0..self.pairs.len()).collect();
        let pair_df: Vec<Option<f64>> = self.pair_reports.iter().map(VarianceReport::df).collect();
        let cov = covariance(&reps);
        let combination = |p: usize| -> Combination {
            match self.pair_column[p] {
                Some(c) => vec![(c, 1.0)],
                None => vec![(self.pairs[p].1, 1.0), (self.pairs[p].0, -1.0)],
            }
        };
        // The family's critical values on its smallest Satterthwaite df: the max-|t| quantile
        // under the bootstrap's correlations of the pairs, never below the value for
        // independent equal-variance systems (Tukey's or Dunnett's), kept between the
        // marginal t and Bonferroni's t.
        // The laws of the family's maximum |t| (under the bootstrap's correlations, and for
        // independent equal-variance systems): drawn once, integrated on each df.
        let laws = |members: &[usize]| -> (Option<MaxAbs>, Option<Arc<MaxAbs>>) {
            let fam: Vec<Combination> = members.iter().map(|&p| combination(p)).collect();
            let arms_pairs: Vec<(usize, usize)> = members.iter().map(|&p| self.pairs[p]).collect();
            family_laws(&cov, &fam, self.arms.len(), &arms_pairs)
        };
        let critical = |members: &[usize],
                        (max_t, independent): &(Option<MaxAbs>, Option<Arc<MaxAbs>>),
                        large_sample: bool|
         -> CriticalValues {
            let m = members.len().max(1) as f64;
            let df = if large_sample {
                f64::INFINITY
            } else {
                members
                    .iter()
                    .filter_map(|&p| pair_df[p])
                    .fold(f64::INFINITY, f64::min)
            };
            let marginal = t_quantile(1.0 - tail, df);
            let bonferroni = t_quantile(1.0 - tail / m, df);
            let max_t = max_t.as_ref().map(|l| l.quantile(df, rs.confidence));
            let independent = independent
                .as_ref()
                .map_or(marginal, |l| l.quantile(df, rs.confidence));
            let simultaneous = match max_t {
                Some(c) => c.max(independent).clamp(marginal, bonferroni),
                None => marginal,
            };
            CriticalValues {
                df: df.is_finite().then_some(df),
                marginal,
                max_t,
                independent,
                simultaneous,
                bonferroni,
                ranks_simultaneous: simultaneous,
            }
        };
        let family_laws = laws(&family);
        let mut critical_values = critical(&family, &family_laws, false);
        let c = critical_values.simultaneous;
        let c_all = if family.len() == all.len() {
            c
        } else {
            critical(&all, &laws(&all), false).simultaneous
        };
        critical_values.ranks_simultaneous = c_all;
        let t_interval = |est: f64, se: f64, c: f64| Interval::new(est - c * se, est + c * se);
        // Read once: whether the score methods apply, and the design the notes speak of.
        let (single_cell, binary) = (self.single_cell(), self.binary());
        let score = self.score_methods(single_cell, binary)?;
        let exact = self.settings.intervals == IntervalRule::ClopperPearson;
        // A pair's interval at critical value `c`: Newcombe's score interval when the score
        // methods apply to it, else estimate ± c·SE.
        let pair_interval = |p: usize, c: f64| -> Interval {
            let r = &self.pair_reports[p];
            match self.paired_counts(p, score) {
                Some(counts) => counts.newcombe(c),
                None => t_interval(r.estimate, r.se, c),
            }
        };

        // Ranks from the all-pairs simultaneous intervals; best shares from the arm replicates.
        let mut diff = vec![vec![[0.0; 2]; k]; k];
        for (p, &(a, b)) in self.pairs.iter().enumerate() {
            let i = pair_interval(p, c_all);
            diff[b][a] = i.0;
            diff[a][b] = [-i.upper(), -i.lower()];
        }
        let ranks = rank_intervals(k, |j, i| diff[j][i]);
        let best = best_share(
            k,
            (0..rs.replicates as usize).map(|r| (0..k).map(|a| reps[a][r]).collect::<Vec<_>>()),
        );
        let systems: Vec<System> = (0..k)
            .map(|a| {
                let r = &self.arm_reports[a];
                let df = r.df();
                let ci = if score {
                    self.proportion_interval(a, exact, rs.confidence)
                } else {
                    t_interval(r.estimate, r.se, t_or_z(1.0 - tail, df))
                };
                System {
                    name: self.arms[a].clone(),
                    estimate: r.estimate,
                    se: r.se,
                    df,
                    ci,
                    rank_ci: ranks[a],
                    best_share: best[a],
                    top_group: ranks[a][0] == 1,
                    questions: r.strata.iter().map(|s| s.questions).sum(),
                }
            })
            .collect();

        let raw_p: Vec<(Option<f64>, f64)> = family
            .iter()
            .map(|&p| {
                let r = &self.pair_reports[p];
                let (t, wald) = wald_p(r.estimate, r.se, pair_df[p]);
                let p = self
                    .paired_counts(p, score)
                    .map_or(wald, |counts| counts.mcnemar_exact());
                (t, p)
            })
            .collect();
        let ps: Vec<f64> = raw_p.iter().map(|x| x.1).collect();
        let (p_holm, q_bh) = (holm(&ps), benjamini_hochberg(&ps));
        let pairs: Vec<PairResult> = family
            .iter()
            .enumerate()
            .map(|(f, &p)| {
                let (a, b) = self.pairs[p];
                let r = &self.pair_reports[p];
                PairResult {
                    a: self.arms[a].clone(),
                    b: self.arms[b].clone(),
                    estimate: r.estimate,
                    se: r.se,
                    df: pair_df[p],
                    ci: pair_interval(p, t_or_z(1.0 - tail, if score { None } else { pair_df[p] })),
                    ci_simultaneous: pair_interval(p, c),
                    t: raw_p[f].0,
                    p: raw_p[f].1,
                    p_holm: p_holm[f],
                    q_bh: q_bh[f],
                    resolved: p_holm[f] <= alpha,
                    unpaired_cells: self.unpaired[p],
                }
            })
            .collect();

        let strata = self.strata(&family, score);
        // The next study is planned as `stats plan` plans one, on the normal reference (its
        // questions, not today's, set its degrees of freedom), for the test that resolves a
        // pair: Holm, whose first step is Bonferroni's.
        let planned = PlannedTest::holm_first_step(
            family.len(),
            alpha,
            normal_quantile(1.0 - tail / family.len().max(1) as f64),
        );
        let (next, next_undefined) = self.next_step(&pairs, &planned);
        Ok(CompareReport {
            metric: self.metric.clone(),
            family: Family {
                kind: if self.settings.reference.is_some() {
                    "vs-reference"
                } else {
                    "all-pairs"
                },
                reference: self.settings.reference.clone(),
                size: family.len(),
            },
            methods: {
                let mut m = match (score, exact) {
                    (true, true) => CLOPPER_PEARSON_METHODS,
                    (true, false) => SCORE_METHODS,
                    (false, _) => METHODS,
                };
                if !self.arm_reports[0].weights.is_empty() {
                    m.se = SE_METHOD_WEIGHTED;
                }
                m
            },
            weights: self.arm_reports[0].weights.clone(),
            critical_values,
            top_group: systems
                .iter()
                .filter(|s| s.top_group)
                .map(|s| s.name.clone())
                .collect(),
            systems,
            pairs,
            strata,
            next,
            next_undefined,
            notes: {
                let mut notes = crate::resample::summary::no_spread_notes(self.constant);
                let design = Design {
                    questions: self.questions.clone(),
                    binary_single_cell: single_cell && binary,
                };
                notes.extend(small_sample_notes(Analysis::Compare, &design));
                if let Some(d) = &self.clusters {
                    notes.push(cluster_draw_note(&d.counts()));
                    notes.extend(few_clusters_note(&d.counts()));
                }
                notes
            },
            engine: crate::document::Engine::resampled(
                backend.name().to_string(),
                backend.description(),
                u64::from(rs.replicates),
                rs.seed,
                rs.confidence,
            ),
            all_pairs: false,
        })
    }

    /// Whether the score methods apply: by the settings' rule, every system's outcome is 0 or
    /// 1 (`binary`) with one cell per question (`single_cell`: T = R = 1).
    ///
    /// # Errors
    /// [`Error::Data`] when [`IntervalRule::Score`] or [`IntervalRule::ClopperPearson`] is
    /// asked for and they do not apply.
    fn score_methods(&self, single_cell: bool, binary: bool) -> Result<bool> {
        match self.settings.intervals {
            IntervalRule::T => Ok(false),
            IntervalRule::Auto => Ok(single_cell && binary),
            IntervalRule::Score | IntervalRule::ClopperPearson if single_cell && binary => Ok(true),
            IntervalRule::Score | IntervalRule::ClopperPearson => Err(Error::Data(format!(
                    "{} intervals need a binary outcome (every {} 0 or 1) with one cell per question (T = R = 1); {}",
                    if self.settings.intervals == IntervalRule::Score {
                        "score (Wilson, Newcombe, exact McNemar)"
                    } else {
                        "Clopper-Pearson"
                    },
                    self.metric,
                    if binary {
                        "some question has several trajectories or reads"
                    } else {
                        "some score is neither 0 nor 1"
                    }
                ))),
        }
    }

    /// Whether every system has one cell per question (T = R = 1, balanced).
    fn single_cell(&self) -> bool {
        self.arm_reports.iter().all(|r| {
            r.strata
                .iter()
                .all(|s| s.trajectories == 1 && s.reads == 1 && s.shape.is_none())
        })
    }

    /// Whether every system's question means are 0 or 1.
    fn binary(&self) -> bool {
        self.columns[..self.arms.len()]
            .iter()
            .flatten()
            .flatten()
            .all(|&v| v == 0.0 || v == 1.0)
    }

    /// The paired counts of pair `p` when its interval and test are the score methods: the
    /// score methods apply (`score`), the panel has one stratum and every cell is paired.
    fn paired_counts(&self, p: usize, score: bool) -> Option<PairedCounts> {
        if self.questions.len() != 1 {
            return None;
        }
        self.stratum_counts(p, 0, score)
    }

    /// The paired counts of pair `p` in stratum `s` when the score methods apply and every
    /// cell of the pair is paired.
    fn stratum_counts(&self, p: usize, s: usize, score: bool) -> Option<PairedCounts> {
        if !score || self.pair_column[p].is_some() {
            return None;
        }
        let (a, b) = self.pairs[p];
        let mut c = PairedCounts {
            both: 0,
            only_a: 0,
            only_b: 0,
            neither: 0,
        };
        for (&x, &y) in self.columns[a][s].iter().zip(&self.columns[b][s]) {
            match (x == 1.0, y == 1.0) {
                (true, true) => c.both += 1,
                (true, false) => c.only_a += 1,
                (false, true) => c.only_b += 1,
                (false, false) => c.neither += 1,
            }
        }
        Some(c)
    }

    /// System `a`'s interval at `confidence` when the score methods apply: Clopper–Pearson's
    /// exact interval with `exact`, else Wilson's, on its effective number of questions
    /// ([`Self::effective_questions`]).
    fn proportion_interval(&self, a: usize, exact: bool, confidence: f64) -> Interval {
        let (p, n) = (self.arm_reports[a].estimate, self.effective_questions(a));
        if exact {
            clopper_pearson(p, n, confidence)
        } else {
            wilson(p, n, normal_quantile(1.0 - tail_probability(confidence)))
        }
    }

    /// Every system's Clopper–Pearson interval at `confidence`, what `--interval
    /// clopper-pearson` prints; `None` when the score methods do not fit the panel (an outcome
    /// not 0 or 1, or several cells per question). The coverage study measures it beside the
    /// interval the rule chose.
    pub fn clopper_pearson_systems(&self, confidence: f64) -> Option<Vec<Interval>> {
        (self.single_cell() && self.binary()).then(|| {
            (0..self.arms.len())
                .map(|a| self.proportion_interval(a, true, confidence))
                .collect()
        })
    }

    /// System `a`'s effective number of questions for Wilson's interval (Kish): p̂(1 − p̂) / V
    /// with V = Σₛ wₛ² pₛ(1 − pₛ) / nₛ the binomial variance of the weighted estimate
    /// (wₛ = 1/D unless `--weights`); 1 / Σₛ wₛ² / nₛ when every stratum mean is 0 or 1.
    /// One stratum: n.
    fn effective_questions(&self, a: usize) -> f64 {
        let r = &self.arm_reports[a];
        let equal = (1.0 / r.strata.len() as f64).powi(2);
        let w2 = |i: usize| r.weights.get(i).map_or(equal, |w| w * w);
        let v: f64 = r
            .strata
            .iter()
            .enumerate()
            .map(|(i, s)| w2(i) * s.mean * (1.0 - s.mean) / s.questions as f64)
            .sum();
        let p = r.estimate;
        if v > 0.0 && p > 0.0 && p < 1.0 {
            p * (1.0 - p) / v
        } else {
            1.0 / r
                .strata
                .iter()
                .enumerate()
                .map(|(i, s)| w2(i) / s.questions as f64)
                .sum::<f64>()
        }
    }

    /// Each stratum's systems and the family's pairs in it, Holm within the stratum.
    fn strata(&self, family: &[usize], score: bool) -> Vec<StratumComparison> {
        let alpha_free = |r: &VarianceReport, name: &str| {
            r.strata
                .iter()
                .find(|s| s.name == name)
                .map(|s| (s.mean, s.se, s.questions))
        };
        self.arm_reports[0]
            .strata
            .iter()
            .enumerate()
            .map(|(si, s0)| {
                let systems = self
                    .arms
                    .iter()
                    .zip(&self.arm_reports)
                    .map(|(a, r)| {
                        let (mean, se, _) =
                            alpha_free(r, &s0.name).expect("every arm has every stratum");
                        StratumSystem {
                            name: a.clone(),
                            mean,
                            se,
                        }
                    })
                    .collect();
                let est: Vec<(f64, f64, usize)> = family
                    .iter()
                    .map(|&p| {
                        alpha_free(&self.pair_reports[p], &s0.name)
                            .expect("every pair has every stratum")
                    })
                    .collect();
                // Within a stratum the SE rests on its Q − 1 question degrees of freedom; a
                // binary outcome gets the exact McNemar test, as the overall pairs do.
                let ps: Vec<f64> = family
                    .iter()
                    .zip(&est)
                    .map(
                        |(&p, &(m, se, q))| match self.stratum_counts(p, si, score) {
                            Some(counts) => counts.mcnemar_exact(),
                            None => wald_p(m, se, Some(q as f64 - 1.0)).1,
                        },
                    )
                    .collect();
                let adjusted = holm(&ps);
                let pairs = family
                    .iter()
                    .enumerate()
                    .map(|(f, &p)| {
                        let (a, b) = self.pairs[p];
                        StratumPair {
                            a: self.arms[a].clone(),
                            b: self.arms[b].clone(),
                            estimate: est[f].0,
                            se: est[f].1,
                            p: ps[f],
                            p_holm: adjusted[f],
                        }
                    })
                    .collect();
                StratumComparison {
                    name: s0.name.clone(),
                    questions: s0.questions,
                    systems,
                    pairs,
                }
            })
            .collect()
    }

    /// The unresolved pair of the family closest to resolution (largest |z|) and the
    /// questions that would resolve it with the settings' power under the `planned` test
    /// (its critical value c), beside the power at today's estimate and the predictive power
    /// over its uncertainty ([`crate::allocation::planner::predictive_power`]).
    fn next_step(
        &self,
        pairs: &[PairResult],
        planned: &PlannedTest,
    ) -> (Option<NextStep>, Option<String>) {
        let open: Vec<&PairResult> = pairs.iter().filter(|p| !p.resolved).collect();
        if open.is_empty() {
            return (None, Some("every pair of the family is resolved".into()));
        }
        let Some(p) = open
            .iter()
            .filter(|p| p.t.is_some_and(|t| t != 0.0))
            .max_by(|x, y| x.t.unwrap().abs().total_cmp(&y.t.unwrap().abs()))
        else {
            return (
                None,
                Some("every unresolved pair has a zero difference or a zero SE".into()),
            );
        };
        let power = self.settings.power;
        let c = planned.critical_value;
        let z = p.t.expect("filtered").abs();
        let q: usize = self.questions.iter().sum();
        // Resolved with `power`: |d| / SE ≥ c + z_power.
        let reach = c + normal_quantile(power);
        let factor = (reach / z).powi(2);
        let needed = (q as f64 * factor).ceil() as u64;
        let target_se = p.estimate.abs() / reach;
        let power_at_estimate = power_at(p.estimate, target_se, c);
        let predictive = predictive_power(p.estimate, p.se, target_se, c);
        let mut text = format!(
            "The closest unresolved pair is {b} − {a}: {est:.4} (SE {se:.4}, z = {z:.2}; Holm-adjusted p = {ph:.3}). \
             Planned for {test}, critical value {c:.3}: if the difference is really {est:.4}, resolving it \
             with {pw:.0}% power needs SE {target_se:.4}, about {needed} questions ({factor:.1} × the {q} questions \
             now), in today's strata proportions and with the same trajectories and reads per question. \
             That power takes today's estimate for the truth; over its uncertainty (SE {se:.4}) a new study \
             of that size resolves the pair with predictive power {predictive:.3}.",
            a = p.a,
            b = p.b,
            est = p.estimate,
            se = p.se,
            ph = p.p_holm,
            test = planned.name,
            pw = 100.0 * power,
        );
        let (allocation, allocation_undefined) = match &self.settings.costs {
            None => (None, None),
            Some(nc) => {
                let at = self
                    .pairs
                    .iter()
                    .position(|&(a, b)| self.arms[a] == p.a && self.arms[b] == p.b)
                    .expect("a pair of the panel");
                let planner = &self.pair_planners[at];
                let unit = nc.budget.unit();
                let goal = Goal::TargetSe(target_se);
                let cheapest = planner
                    .search(goal)
                    .map_err(|e| e.to_string())
                    .and_then(|found| {
                        found
                            .into_iter()
                            .next()
                            .ok_or_else(|| unmet_goal(planner, goal, unit))
                    });
                match cheapest {
                    Ok(a) => {
                        let strata: Vec<String> =
                            planner.strata.iter().map(|s| s.name.clone()).collect();
                        let cost = a.cost.expect("a ledger prices every stratum");
                        text.push(' ');
                        text.push_str(&allocation_text(
                            &a,
                            &strata,
                            target_se,
                            cost,
                            unit,
                            planner.bounds,
                        ));
                        (
                            Some(NextAllocation {
                                questions: a.questions,
                                per_stratum: a.per_stratum,
                                strata,
                                trajectories: a.trajectories,
                                reads: a.reads,
                                se: a.se,
                                cost,
                                currency: unit.to_string(),
                            }),
                            None,
                        )
                    }
                    Err(why) => {
                        text.push_str(&format!(" With the ledger's costs: {why}."));
                        (None, Some(why))
                    }
                }
            }
        };
        (
            Some(NextStep {
                a: p.a.clone(),
                b: p.b.clone(),
                estimate: p.estimate,
                se: p.se,
                questions: q,
                questions_needed: needed,
                power,
                test: planned.name.clone(),
                critical_value: c,
                target_se,
                power_at_estimate,
                predictive_power: predictive,
                allocation,
                allocation_undefined,
                text,
            }),
            None,
        )
    }
}

/// The priced half of the next-step paragraph: the cheapest allocation `a` (strata named
/// `strata`) reaching `target` SE, its `cost` in `unit`, found within `bounds`.
fn allocation_text(
    a: &crate::allocation::planner::Allocation,
    strata: &[String],
    target: f64,
    cost: f64,
    unit: &str,
    bounds: Bounds,
) -> String {
    let num = |v: f64| format_number(v, Precision::Auto);
    let split = if strata.len() > 1 {
        let parts: Vec<String> = strata
            .iter()
            .zip(&a.per_stratum)
            .map(|(s, q)| format!("{s} {q}"))
            .collect();
        format!(" ({})", parts.join(", "))
    } else {
        String::new()
    };
    let b = bounds;
    format!(
        "With the ledger's unit costs, the cheapest design that does it is Q:T:R = {q}:{t}:{r}: \
         {q} questions{split}, {t} {traj} per question, {r} {reads} per trajectory (SE \
         {se:.4} ≤ the target {target:.4} = |difference| / (critical value + z_power)), \
         costing {cost} {unit} (`stats plan`'s least-cost search over Q ≤ {mq}, T ≤ {mt}, \
         R ≤ {mr}).",
        q = a.questions,
        t = a.trajectories,
        traj = if a.trajectories == 1 {
            "trajectory"
        } else {
            "trajectories"
        },
        r = a.reads,
        reads = if a.reads == 1 { "read" } else { "reads" },
        se = a.se,
        cost = num(cost),
        mq = b.max_questions,
        mt = b.max_trajectories,
        mr = b.max_reads,
    )
}

/// The covariance matrix of the bootstrap columns (`reps[column][replicate]`), divisor B − 1.
pub(crate) fn covariance(reps: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let b = reps.first().map_or(0, Vec::len);
    let means: Vec<f64> = reps
        .iter()
        .map(|c| c.iter().sum::<f64>() / b.max(1) as f64)
        .collect();
    let n = reps.len();
    let mut cov = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let v = reps[i]
                .iter()
                .zip(&reps[j])
                .map(|(x, y)| (x - means[i]) * (y - means[j]))
                .sum::<f64>()
                / (b.max(2) - 1) as f64;
            cov[i][j] = v;
            cov[j][i] = v;
        }
    }
    cov
}

const SE_METHOD: &str = "nested variance components per stratum (REML where a stratum is unbalanced), as `stats variance`; strata combined with equal weights; Welch-Satterthwaite degrees of freedom from each stratum's Q - 1";
const SE_METHOD_WEIGHTED: &str = "nested variance components per stratum (REML where a stratum is unbalanced), as `stats variance`; strata combined with the weights given (`weights`): SE² = Σ w² SE²; Welch-Satterthwaite degrees of freedom from each stratum's Q - 1";
const ADJUSTED_METHOD: &str = "Holm step-down (family-wise error) and Benjamini-Hochberg (false discovery rate) over the family";
const SIMULTANEOUS_METHOD: &str = "estimate ± c·SE, c the quantile of the maximum |t| over the family: multivariate t on the family's smallest df with the correlations of the stratified question bootstrap's replicates (one draw of questions shared by every pair), never below the value for independent systems (Tukey's or Dunnett's), kept between the marginal t and Bonferroni's t";
const RANKS_METHOD: &str = "simultaneous rank intervals from the all-pairs simultaneous intervals (Mogstad, Romano, Shaikh & Wilhelm 2024)";
const BEST_SHARE_METHOD: &str = "share of bootstrap replicates in which the system has the highest estimate, ties split; not the probability that it is best";

/// The methods, as the report names them.
const METHODS: Methods = Methods {
    se: SE_METHOD,
    ci: "estimate ± t·SE, t on the system's or pair's Satterthwaite df",
    p: "two-sided Wald t test of estimate / SE on the pair's Satterthwaite df",
    adjusted: ADJUSTED_METHOD,
    simultaneous: SIMULTANEOUS_METHOD,
    ranks: RANKS_METHOD,
    best_share: BEST_SHARE_METHOD,
};

/// The methods of a binary outcome with one cell per question ([`IntervalRule::Auto`]'s
/// score branch).
const SCORE_METHODS: Methods = Methods {
    se: SE_METHOD,
    ci: "systems: Wilson's score interval (on the Kish effective number of questions with several strata); pairs on one stratum: Newcombe's paired score interval (method 10), at c for the simultaneous ones; pairs on several strata: estimate ± t·SE",
    p: "pairs on one stratum: exact McNemar test on the discordant questions; on several strata: Wald t test on the Satterthwaite df",
    adjusted: ADJUSTED_METHOD,
    simultaneous: SIMULTANEOUS_METHOD,
    ranks: RANKS_METHOD,
    best_share: BEST_SHARE_METHOD,
};

/// The methods of `--interval clopper-pearson`: the score methods with Clopper–Pearson's
/// exact interval for a system.
const CLOPPER_PEARSON_METHODS: Methods = Methods {
    ci: "systems: Clopper-Pearson's exact interval (conservative: it covers at least the nominal level, more at tens of questions; on the Kish effective number of questions with several strata); pairs on one stratum: Newcombe's paired score interval (method 10), at c for the simultaneous ones; pairs on several strata: estimate ± t·SE",
    ..SCORE_METHODS
};

/// [`prepare`] then [`PreparedComparison::run`].
///
/// # Errors
/// Those of both.
pub fn compare(
    source: &Source,
    opts: &LoadOptions,
    import: &ImportOptions,
    settings: &CompareJob,
    backend: &dyn ResampleBackend,
) -> Result<CompareReport> {
    prepare(source, opts, import, settings)?.run(backend, &|_| {})
}
