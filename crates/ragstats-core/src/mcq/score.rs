//! Scoring: per-item EM and F1, the two-level group → task → overall average, run means and
//! SDs, and stratified item-bootstrap intervals on the resample engine.
//!
//! Definitions (one model, items i, runs r):
//!
//! - `em_ir`, `f1_ir`: [`super::metrics::exact_match`] and [`super::metrics::f1`] of the
//!   parsed answer against gold. A parse failure or API error scores 0 on both (policy
//!   `zero`, the default: a failure is never right, not even on an item whose gold is
//!   empty) or is left out (policy `exclude`).
//! - item value `x_i` = mean over its scored runs.
//! - group mean `G_g` = mean of `x_i` over the items of group g; task `T_t` = mean of its
//!   groups present; overall = mean of the tasks present. The same for EM and F1.
//! - run scores: the same averages computed from run r alone; reported as mean and SD
//!   (ddof 1) over runs. With every run of every item scored, their mean equals the estimate.
//! - interval: stratified item bootstrap. One engine row per item, `[x_i^EM, x_i^F1]`
//!   (all runs of an item stay together), strata = groups; each replicate's group means are
//!   `c_g + sum_g / q_g` (rows centred on `c_g` before the f32 sums; clamped to the range
//!   the rows' mean lies in, [0, 1] for scores and [−1, 1] for paired differences B − A,
//!   which only undoes rounding: [`MeanRange`]), and its task and
//!   overall scores are the host arithmetic above. Percentile interval, type-7 quantiles.

use std::collections::HashMap;

use serde::Serialize;

use super::cluster::Clusters;
use super::item::{Group, Task};
use super::metrics::{exact_match, f1};
use super::results::{Outcome, RunResult};
use crate::document::{Engine, Report};
use crate::error::{Error, Result};
use crate::resample::clusters::ClusterDraw;
use crate::resample::engine::{ResampleBackend, ResampleJob};
use crate::resample::summary::{sd, summarize, Interval, Method};
use crate::resample::Resampling;

/// What a parse failure or API error scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FailurePolicy {
    /// EM = F1 = 0.
    #[default]
    Zero,
    /// Left out of the averages (an item with no scored run is left out).
    Exclude,
}

/// (EM, F1) of one result line, or `None` when the policy leaves it out.
pub fn line_score(r: &RunResult, policy: FailurePolicy) -> Option<[f64; 2]> {
    match (&r.outcome, &r.answer, policy) {
        (Outcome::Ok, Some(a), _) => Some([exact_match(a, &r.gold), f1(a, &r.gold)]),
        (_, _, FailurePolicy::Zero) => Some([0.0, 0.0]),
        _ => None,
    }
}

/// One item's scored runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemRow {
    /// Item id.
    pub id: String,
    /// Group.
    pub group: Group,
    /// (run, [EM, F1]) of every scored run.
    pub runs: Vec<(u32, [f64; 2])>,
}

impl ItemRow {
    /// Mean over runs of [EM, F1].
    pub fn mean(&self) -> [f64; 2] {
        let n = self.runs.len() as f64;
        let s = self
            .runs
            .iter()
            .fold([0.0, 0.0], |a, (_, v)| [a[0] + v[0], a[1] + v[1]]);
        [s[0] / n, s[1] / n]
    }
}

/// Items with at least one scored run, in order of first appearance.
pub fn item_rows(results: &[RunResult], policy: FailurePolicy) -> Vec<ItemRow> {
    let mut idx: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<ItemRow> = Vec::new();
    for r in results {
        let Some(s) = line_score(r, policy) else {
            continue;
        };
        let i = *idx.entry(r.id.as_str()).or_insert_with(|| {
            out.push(ItemRow {
                id: r.id.clone(),
                group: r.group,
                runs: vec![],
            });
            out.len() - 1
        });
        out[i].runs.push((r.run, s));
    }
    for row in &mut out {
        row.runs.sort_by_key(|(k, _)| *k);
    }
    out
}

/// Per group [EM, F1] means (`None` for a group without items).
pub type GroupMeans = [Option<[f64; 2]>; 6];

/// Group, task and overall scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Levels {
    /// Per group, in [`Group::ALL`] order.
    pub groups: GroupMeans,
    /// Per task, in [`Task::ALL`] order: mean of its groups present.
    pub tasks: [Option<[f64; 2]>; 4],
    /// Mean of the tasks present.
    pub overall: Option<[f64; 2]>,
}

fn mean2(v: &[[f64; 2]]) -> Option<[f64; 2]> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let s = v.iter().fold([0.0, 0.0], |a, x| [a[0] + x[0], a[1] + x[1]]);
    Some([s[0] / n, s[1] / n])
}

/// Tasks = mean of their groups present; overall = mean of the tasks present.
pub fn levels(groups: &GroupMeans) -> Levels {
    let mut tasks = [None; 4];
    for (t, task) in Task::ALL.iter().enumerate() {
        let v: Vec<[f64; 2]> = task
            .groups()
            .iter()
            .filter_map(|g| groups[g.index()])
            .collect();
        tasks[t] = mean2(&v);
    }
    let present: Vec<[f64; 2]> = tasks.iter().flatten().copied().collect();
    Levels {
        groups: *groups,
        tasks,
        overall: mean2(&present),
    }
}

/// Group means of (group, value) rows.
pub fn group_means(rows: &[(Group, [f64; 2])]) -> GroupMeans {
    let mut acc: [Vec<[f64; 2]>; 6] = Default::default();
    for (g, v) in rows {
        acc[g.index()].push(*v);
    }
    let mut out = [None; 6];
    for (i, a) in acc.iter().enumerate() {
        out[i] = mean2(a);
    }
    out
}

/// The range every value of a bootstrapped row, and so every resampled group mean, lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeanRange {
    /// EM and F1 scores: [0, 1].
    Scores,
    /// Paired differences B − A of two scores: [−1, 1].
    Differences,
}

impl MeanRange {
    /// The closed interval `[lo, hi]`.
    pub fn bounds(self) -> [f64; 2] {
        match self {
            MeanRange::Scores => [0.0, 1.0],
            MeanRange::Differences => [-1.0, 1.0],
        }
    }
}

/// The replicates of [`bootstrap_group_means`]: every replicate's group means, and with
/// clusters how many replicates drew no cluster with an item of each group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupReplicates {
    /// Group means of replicates `0..B`, in replicate order.
    pub means: Vec<GroupMeans>,
    /// Per group ([`Group::index`]): replicates in which no drawn cluster has an item of the
    /// group, whose group mean is then the estimate `c_g`. Always 0 without clusters (every
    /// group is a stratum of its own and draws its rows).
    pub empty: [u32; 6],
}

impl GroupReplicates {
    /// The note a report gives for [`Self::empty`] when any is counted, `what` naming the
    /// scores (e.g. `ΔEM and ΔF1`): the groups and their counts of such replicates.
    pub fn notes(&self, what: &str) -> Option<String> {
        let counts: Vec<String> = Group::ALL
            .iter()
            .filter(|g| self.empty[g.index()] > 0)
            .map(|g| format!("{} {}", g.as_str(), self.empty[g.index()]))
            .collect();
        (!counts.is_empty()).then(|| {
            format!(
                "{what}: bootstrap replicates (of {}) that drew no cluster with an item of the \
                 group, whose group mean there is the estimate: {}",
                self.means.len(),
                counts.join(", ")
            )
        })
    }
}

/// The group means of every replicate of the bootstrap of `rows`, each clamped to `range`:
/// replicates `0..resampling.replicates` drawn from `resampling.seed` (its confidence is
/// the caller's, for [`level_rows`]).
///
/// Without `clusters` it is the stratified item bootstrap: strata = the groups present, one
/// engine row per item, `[x − c_g]` of EM and F1, resampled within its group; a replicate's
/// group mean is `c_g + Σ / q_g`.
///
/// With `clusters` (a cluster index per row, [`super::cluster::Clusters::indices`]) the
/// units are the clusters, and they are drawn **once per replicate, jointly across groups**:
/// one engine stratum holding every cluster (numbered in order of first appearance), so a
/// cluster with items in several groups brings all of them into the replicate together and
/// task and overall intervals carry the covariance between groups of one source. A
/// cluster's row holds, per group present, its centred sum and its item count there; with
/// 6 groups × (EM, F1, n) = 18 columns more than the engine's
/// [`crate::resample::engine::MAX_K`], it runs two jobs
/// with the same seed, replicates and stratum size, EM `[Σ(x − c_g)^EM, n_g]` per group and
/// F1 `[Σ(x − c_g)^F1, n_g]`: the engine's draws depend only on (seed, replicate, stratum,
/// stratum size), never on `k` (the accumulation contract of
/// [`crate::resample::engine`]; the shader's Philox counter is `[r, s, j, retry]`), so both
/// draw the same clusters, and the two jobs' n sums are checked to agree bit for bit. A
/// replicate's group mean is `c_g + Σ sums_g / Σ n_g` over the drawn clusters (the ratio
/// estimator of the cluster bootstrap; the estimate itself stays the item mean); a
/// replicate in which no drawn cluster has an item of group g (Σ n_g = 0, possible for a
/// group of few clusters) takes the estimate `c_g` as its group mean, and
/// [`GroupReplicates::empty`] counts them. The clusters take the place of the engine's rows,
/// so the CPU and GPU backends draw the same clusters. With one group present and every
/// row its own cluster the stratum is the item bootstrap's, its sums are the same f32 adds
/// in the same order and Σ n = q exactly, so the replicates are bit-for-bit those of the
/// item bootstrap; with several groups they are not (the joint draw does not stratify).
///
/// # Errors
/// [`Error::Usage`] for fewer than 2 replicates; engine errors.
pub fn bootstrap_group_means(
    rows: &[(Group, [f64; 2])],
    clusters: Option<&[usize]>,
    range: MeanRange,
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<GroupReplicates> {
    let Resampling {
        seed, replicates, ..
    } = *resampling;
    if replicates < 2 {
        return Err(Error::setting("replicates", "must be at least 2"));
    }
    if clusters.is_some_and(|c| c.len() != rows.len()) {
        return Err(Error::Data(
            "cluster bootstrap: one cluster index per row is needed".into(),
        ));
    }
    let present: Vec<Group> = Group::ALL
        .into_iter()
        .filter(|g| rows.iter().any(|(h, _)| h == g))
        .collect();
    if present.is_empty() {
        return Err(Error::Data("no scored items to resample".into()));
    }
    let centres = group_means(rows);
    if let Some(cl) = clusters {
        return joint_cluster_means(
            rows, cl, &present, &centres, range, resampling, backend, progress,
        );
    }
    let k = 2;
    let data: Vec<Vec<f32>> = present
        .iter()
        .map(|g| {
            let c = centres[g.index()].unwrap_or([0.0, 0.0]);
            rows.iter()
                .filter(|(h, _)| h == g)
                .flat_map(|(_, v)| [(v[0] - c[0]) as f32, (v[1] - c[1]) as f32])
                .collect()
        })
        .collect();
    let job = ResampleJob {
        strata: data.iter().map(|d| d.as_slice()).collect(),
        k,
        seed,
        replicates: 0..replicates,
    };
    let sums = backend.resample_sums(&job, progress)?;
    let s = present.len();
    let q: Vec<f64> = data.iter().map(|d| (d.len() / k) as f64).collect();
    let [lo, hi] = range.bounds();
    let means = (0..replicates as usize)
        .map(|r| {
            let mut gm: GroupMeans = [None; 6];
            for (si, g) in present.iter().enumerate() {
                let c = centres[g.index()].unwrap_or([0.0, 0.0]);
                let base = (r * s + si) * k;
                // A mean of values in [lo, hi] lies in [lo, hi]; the f32 sums of centred rows
                // can leave it by a rounding error (−9.9e-9 was printed as an interval end of
                // a score), so the replicate is clamped back. Differences have their own
                // range: clamping them to a score's [0, 1] cut every negative delta to 0.
                gm[g.index()] = Some([
                    (c[0] + f64::from(sums[base]) / q[si]).clamp(lo, hi),
                    (c[1] + f64::from(sums[base + 1]) / q[si]).clamp(lo, hi),
                ]);
            }
            gm
        })
        .collect();
    Ok(GroupReplicates {
        means,
        empty: [0; 6],
    })
}

/// The joint cluster bootstrap of [`bootstrap_group_means`]: one stratum of every cluster,
/// an EM job and an F1 job of `[Σ centred, n]` per group present.
#[allow(clippy::too_many_arguments)]
fn joint_cluster_means(
    rows: &[(Group, [f64; 2])],
    clusters: &[usize],
    present: &[Group],
    centres: &GroupMeans,
    range: MeanRange,
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<GroupReplicates> {
    let p = present.len();
    let k = 2 * p;
    // Column of each group present; per cluster (first appearance) and group present,
    // [Σ centred EM, Σ centred F1, n].
    let mut col = [usize::MAX; 6];
    for (j, g) in present.iter().enumerate() {
        col[g.index()] = j;
    }
    // The clusters numbered by first appearance, one engine row each: the shared cluster
    // draw (crate::resample::clusters), in its single stratum.
    let draw = ClusterDraw::new(std::slice::from_ref(&clusters.to_vec()))?;
    let cells = draw.cluster_rows(0, 3 * p, |i, j| {
        let (g, v) = &rows[i];
        if col[g.index()] != j / 3 {
            return 0.0;
        }
        let c = centres[g.index()].unwrap_or([0.0, 0.0]);
        match j % 3 {
            0 => v[0] - c[0],
            1 => v[1] - c[1],
            _ => 1.0,
        }
    });
    let table = |m: usize| -> Vec<f32> {
        cells
            .chunks_exact(3)
            .flat_map(|cell| [cell[m] as f32, cell[2] as f32])
            .collect()
    };
    let (em, f1) = (table(0), table(1));
    let b = u64::from(resampling.replicates);
    let run = |data: &[f32], done: u64| {
        let job = ResampleJob {
            strata: vec![data],
            k,
            seed: resampling.seed,
            replicates: 0..resampling.replicates,
        };
        // Two jobs of B replicates each report half of them.
        backend.resample_sums(&job, &|n| progress((done + n) / 2))
    };
    let sums_em = run(&em, 0)?;
    let sums_f1 = run(&f1, b)?;
    let [lo, hi] = range.bounds();
    let mut empty = [0u32; 6];
    let mut means = Vec::with_capacity(resampling.replicates as usize);
    for r in 0..resampling.replicates as usize {
        let mut gm: GroupMeans = [None; 6];
        for (j, g) in present.iter().enumerate() {
            let base = r * k + 2 * j;
            // The drawn clusters' item counts in the group: an integer sum, exact in f32
            // below 2^24 items, and the same in both jobs when they drew the same clusters.
            let (n, n_f1) = (sums_em[base + 1], sums_f1[base + 1]);
            if n.to_bits() != n_f1.to_bits() {
                return Err(Error::Data(format!(
                    "cluster bootstrap: the EM and F1 jobs drew different clusters in \
                     replicate {r} ({n} and {n_f1} items of {}); the engine's draws must \
                     not depend on the number of columns",
                    g.as_str()
                )));
            }
            let c = centres[g.index()].unwrap_or([0.0, 0.0]);
            gm[g.index()] = Some(if n == 0.0 {
                empty[g.index()] += 1;
                c
            } else {
                let n = f64::from(n);
                // Clamped back into the rows' range, which only undoes rounding (as above).
                [
                    (c[0] + f64::from(sums_em[base]) / n).clamp(lo, hi),
                    (c[1] + f64::from(sums_f1[base]) / n).clamp(lo, hi),
                ]
            });
        }
        means.push(gm);
    }
    Ok(GroupReplicates { means, empty })
}

/// Estimate, run mean and SD, bootstrap SE and percentile interval of one score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stat {
    /// Two-level average of the per-item run means.
    pub estimate: f64,
    /// Mean over runs of the per-run scores.
    pub run_mean: f64,
    /// SD (ddof 1) over runs of the per-run scores; NaN with one run.
    pub run_sd: f64,
    /// Bootstrap standard error.
    pub se: f64,
    /// Percentile interval.
    pub ci: Interval,
    /// `mcq score`: the interval has zero width although the runs disagree (run SD > 0),
    /// so it is not a precise result but a blind spot of the item bootstrap
    /// ([`unreliable_interval`]). Serialised only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub ci_unreliable: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Groups with fewer items than this get a warning in `mcq score`: a percentile interval
/// of a mean resampled from a handful of items is rough (it cannot be wider than the range
/// of those items' values, and with 4 items it takes at most 35 distinct values).
pub const MIN_GROUP_ITEMS: usize = 10;

/// True when `stat`'s interval has zero width while its runs disagree (run SD > 0). The
/// item bootstrap resamples item means x_i with every run of an item kept together, so it
/// sees only the spread between items: when every item has the same mean (4 items each
/// right in 1 of 3 runs) every replicate repeats the estimate, while the runs, which are
/// right on different items, differ. A zero-width interval then says nothing about the
/// precision of the score.
pub fn unreliable_interval(stat: &Stat) -> bool {
    stat.ci.upper() - stat.ci.lower() == 0.0 && stat.run_sd.is_finite() && stat.run_sd > 0.0
}

/// One row of a score or compare table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelRow {
    /// `group`, `task` or `overall`.
    pub level: &'static str,
    /// Group or task name, or `overall`.
    pub name: String,
    /// Items contributing.
    pub items: usize,
    /// Exact match.
    pub em: Stat,
    /// Instance F1.
    pub f1: Stat,
}

/// The table rows (groups present, tasks present, overall) from item values `rows`,
/// per-run group means `per_run` and bootstrap replicates `reps`.
pub fn level_rows(
    rows: &[(Group, [f64; 2])],
    per_run: &[GroupMeans],
    reps: &[GroupMeans],
    confidence: f64,
) -> Vec<LevelRow> {
    let point = levels(&group_means(rows));
    let run_levels: Vec<Levels> = per_run.iter().map(levels).collect();
    let rep_levels: Vec<Levels> = reps.iter().map(levels).collect();
    let stat = |get: &dyn Fn(&Levels) -> Option<[f64; 2]>, m: usize| -> Option<Stat> {
        let est = get(&point)?[m];
        let runs: Vec<f64> = run_levels.iter().filter_map(get).map(|v| v[m]).collect();
        let boot: Vec<f64> = rep_levels.iter().filter_map(get).map(|v| v[m]).collect();
        let s = summarize(est, &boot, Method::Percentile, confidence, 0.0);
        Some(Stat {
            estimate: est,
            run_mean: if runs.is_empty() {
                f64::NAN
            } else {
                runs.iter().sum::<f64>() / runs.len() as f64
            },
            run_sd: sd(&runs),
            se: s.se,
            ci: s.ci,
            ci_unreliable: false,
        })
    };
    let count = |gs: &[Group]| rows.iter().filter(|(g, _)| gs.contains(g)).count();
    let mut out = Vec::new();
    let mut push = |level: &'static str,
                    name: String,
                    items: usize,
                    get: &dyn Fn(&Levels) -> Option<[f64; 2]>| {
        if let (Some(em), Some(f1)) = (stat(get, 0), stat(get, 1)) {
            out.push(LevelRow {
                level,
                name,
                items,
                em,
                f1,
            });
        }
    };
    for g in Group::ALL {
        push("group", g.as_str().into(), count(&[g]), &|l: &Levels| {
            l.groups[g.index()]
        });
    }
    for (t, task) in Task::ALL.iter().enumerate() {
        push(
            "task",
            task.as_str().into(),
            count(task.groups()),
            &|l: &Levels| l.tasks[t],
        );
    }
    push("overall", "overall".into(), rows.len(), &|l: &Levels| {
        l.overall
    });
    out
}

/// Group means of each run separately: `(run, means)` in run order.
pub fn per_run_group_means(items: &[ItemRow]) -> Vec<(u32, GroupMeans)> {
    let mut runs: Vec<u32> = items
        .iter()
        .flat_map(|i| i.runs.iter().map(|(k, _)| *k))
        .collect();
    runs.sort_unstable();
    runs.dedup();
    runs.into_iter()
        .map(|k| {
            let rows: Vec<(Group, [f64; 2])> = items
                .iter()
                .filter_map(|i| {
                    i.runs
                        .iter()
                        .find(|(r, _)| *r == k)
                        .map(|(_, v)| (i.group, *v))
                })
                .collect();
            (k, group_means(&rows))
        })
        .collect()
}

/// Outcome counts of one group (or `overall`), each with its rate: a fraction of **all**
/// the group's result lines, so that the four rates sum to 1 (a truncation is neither
/// parsed nor a parse failure, and 1 parsed line of 75 reads as 1.3 % parsed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateRow {
    /// Group name or `overall`.
    pub group: String,
    /// Result lines.
    pub records: usize,
    /// Lines whose answer was read (`ok`).
    pub parsed: usize,
    /// Lines whose text could not be parsed (truncations not included).
    pub parse_failed: usize,
    /// Lines cut off by the token limit (`finish_reason` `length`; never read).
    pub truncated: usize,
    /// Lines whose call failed.
    pub errors: usize,
    /// parsed / records.
    pub parsed_rate: f64,
    /// parse_failed / records.
    pub parse_failure_rate: f64,
    /// truncated / records.
    pub truncated_rate: f64,
    /// errors / records.
    pub error_rate: f64,
}

/// Outcome counts and rates per group present and overall.
pub fn rates(results: &[RunResult]) -> Vec<RateRow> {
    let row = |name: String, rs: &[&RunResult]| {
        let n = rs.len();
        let count = |o: Outcome| rs.iter().filter(|r| r.outcome == o).count();
        let (ok, pf, tr, er) = (
            count(Outcome::Ok),
            count(Outcome::ParseFailed),
            count(Outcome::Truncated),
            count(Outcome::Error),
        );
        // A group row exists only with lines in it; `overall` of an empty file is 0/1.
        let rate = |k: usize| k as f64 / n.max(1) as f64;
        RateRow {
            group: name,
            records: n,
            parsed: ok,
            parse_failed: pf,
            truncated: tr,
            errors: er,
            parsed_rate: rate(ok),
            parse_failure_rate: rate(pf),
            truncated_rate: rate(tr),
            error_rate: rate(er),
        }
    };
    let mut out = Vec::new();
    for g in Group::ALL {
        let rs: Vec<&RunResult> = results.iter().filter(|r| r.group == g).collect();
        if !rs.is_empty() {
            out.push(row(g.as_str().into(), &rs));
        }
    }
    let all: Vec<&RunResult> = results.iter().collect();
    out.push(row("overall".into(), &all));
    out
}

/// The settings of the MCQ bootstrap analyses ([`score_results`] and
/// [`super::compare::compare_results`]): how failures score, and the stratified item
/// bootstrap's Philox seed, replicates (at least 2) and interval level. Serialized as
/// `failures` alone: the resampling settings are the document's `run` envelope
/// ([`BootSettings::engine`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootSettings {
    /// How parse failures and API errors score.
    pub failures: FailurePolicy,
    /// The stratified item bootstrap.
    #[serde(skip)]
    pub resampling: Resampling,
}

impl BootSettings {
    /// The engine of an analysis run with these settings on `backend` (`cpu`, `gpu`)
    /// described as `adapter`: the envelope's replicates, seed and confidence are the
    /// stratified item bootstrap's.
    pub fn engine(&self, backend: &str, adapter: &str) -> Engine {
        let r = &self.resampling;
        Engine::resampled(
            backend,
            adapter,
            u64::from(r.replicates),
            r.seed,
            r.confidence,
        )
    }
}

/// What `mcq score` reports for one results file (one model, prompt and shuffle seed).
/// Its document (docs/json.md) is its fields with `settings` flattened (`failures`); the
/// engine and the bootstrap settings are in the `run` envelope ([`Report::engine`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreReport {
    /// The results file as the caller names it, for the text output's first line (the JSON
    /// document names it in its `run.inputs`); empty until the caller sets it.
    #[serde(skip)]
    pub source: String,
    /// The model of the file.
    pub model: String,
    /// The prompt of the file.
    pub prompt: String,
    /// The shuffle seed of the file (`None`: options as written).
    pub shuffle_seed: Option<u64>,
    /// Distinct runs.
    pub runs: usize,
    /// Items with a scored run.
    pub items: usize,
    /// The settings the analysis ran with.
    #[serde(flatten)]
    pub settings: BootSettings,
    /// The engine that resampled (`cpu` or `gpu`).
    #[serde(skip)]
    pub backend: String,
    /// The engine's description (threads, adapter).
    #[serde(skip)]
    pub backend_description: String,
    /// Tasks without an item (overall is the mean of the tasks present).
    pub tasks_missing: Vec<&'static str>,
    /// EM and F1 per group, task and overall ([`level_rows`]).
    pub scores: Vec<LevelRow>,
    /// Outcome counts and rates per group and overall ([`rates`]).
    pub rates: Vec<RateRow>,
    /// Positional bias, when asked for ([`super::positions::position_table`]).
    pub positions: Option<Vec<super::positions::PositionRow>>,
    /// Answer agreement with a shuffled run of the same model, when one is given.
    pub shuffle_agreement: Option<super::positions::ShuffleAgreement>,
    /// What the reader should know about the intervals: groups of fewer than
    /// [`MIN_GROUP_ITEMS`] items, and intervals marked `ci_unreliable` ([`score_warnings`]).
    pub warnings: Vec<String>,
    /// The clusters the bootstrap resampled (`--items` with provenance); absent when items
    /// were resampled one by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Clusters>,
}

impl Report for ScoreReport {
    /// The engine that resampled, and the stratified item bootstrap's settings.
    fn engine(&self) -> Engine {
        self.settings
            .engine(&self.backend, &self.backend_description)
    }
}

/// The items of `results` with a scored run under `policy`: the rows [`score_results`]
/// resamples (a caller sizes its engine by `items × replicates`).
///
/// # Errors
/// [`Error::Data`] when no line is scored (every line failed and failures are excluded);
/// `what` names the file in the message.
pub fn scored_items(results: &[RunResult], policy: FailurePolicy, what: &str) -> Result<usize> {
    let n = item_rows(results, policy).len();
    if n == 0 {
        return Err(Error::Usage(format!(
            "{what}: no scored result lines (every line failed, and failed lines are excluded)"
        )));
    }
    Ok(n)
}

/// Scores one results file: per-item values `x_i` (mean over scored runs), the two-level
/// average group → task → overall of EM and F1, the mean and SD over runs of the per-run
/// scores, and the stratified item bootstrap (items resampled within groups, clamped to
/// [0, 1]) for SEs and percentile intervals; plus outcome rates, and with `positions` the
/// positional-bias table, with `shuffled` the answer agreement with a shuffled run.
/// `progress` is called with the replicates done.
///
/// # Errors
/// [`Error::Usage`] for an empty `results` or no scored line, fewer than 2 replicates;
/// engine errors.
pub fn score_results(
    results: &[RunResult],
    positions: bool,
    shuffled: Option<&[RunResult]>,
    settings: &BootSettings,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ScoreReport> {
    score_results_clustered(
        results, positions, shuffled, settings, None, backend, progress,
    )
}

/// [`score_results`] with the bootstrap resampling `clusters` of items, drawn once per
/// replicate jointly across groups, rather than items within groups
/// ([`bootstrap_group_means`]): the intervals and SEs are cluster-robust at every level,
/// the estimates are unchanged. Replicates that drew no cluster with an item of a group
/// are counted in the notes of the report's `clusters`. With `None` it is
/// [`score_results`].
///
/// # Errors
/// Those of [`score_results`].
pub fn score_results_clustered(
    results: &[RunResult],
    positions: bool,
    shuffled: Option<&[RunResult]>,
    settings: &BootSettings,
    clusters: Option<&Clusters>,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ScoreReport> {
    let first = results
        .first()
        .ok_or_else(|| Error::Usage("no result lines to score".into()))?;
    let rows_items = item_rows(results, settings.failures);
    if rows_items.is_empty() {
        return Err(Error::Usage(
            "no scored result lines (every line failed, and failed lines are excluded)".into(),
        ));
    }
    let rows: Vec<(Group, [f64; 2])> = rows_items.iter().map(|i| (i.group, i.mean())).collect();
    let per_run: Vec<GroupMeans> = per_run_group_means(&rows_items)
        .into_iter()
        .map(|(_, g)| g)
        .collect();
    let units = clusters.map(|c| c.indices(rows_items.iter().map(|i| i.id.as_str())));
    let reps = bootstrap_group_means(
        &rows,
        units.as_deref(),
        MeanRange::Scores,
        &settings.resampling,
        backend,
        progress,
    )?;
    let mut scores = level_rows(&rows, &per_run, &reps.means, settings.resampling.confidence);
    let warnings = score_warnings(&mut scores);
    let mut runs: Vec<u32> = results.iter().map(|r| r.run).collect();
    runs.sort_unstable();
    runs.dedup();
    let tasks_missing = Task::ALL
        .iter()
        .filter(|t| !scores.iter().any(|r| r.name == t.as_str()))
        .map(|t| t.as_str())
        .collect();
    Ok(ScoreReport {
        source: String::new(),
        model: first.model.clone(),
        prompt: first.prompt.clone(),
        shuffle_seed: first.shuffle_seed,
        runs: runs.len(),
        items: rows.len(),
        settings: *settings,
        backend: backend.name().into(),
        backend_description: backend.description(),
        tasks_missing,
        scores,
        rates: rates(results),
        positions: positions.then(|| super::positions::position_table(results)),
        shuffle_agreement: shuffled.map(|s| super::positions::shuffle_agreement(results, s)),
        warnings,
        clusters: clusters.map(|c| c.with_notes(reps.notes("EM and F1"))),
    })
}

/// Marks every interval of `scores` that [`unreliable_interval`] finds (`ci_unreliable`)
/// and returns the warnings: one for the groups of fewer than [`MIN_GROUP_ITEMS`] items,
/// one per marked interval (its ends and the run SD).
pub fn score_warnings(scores: &mut [LevelRow]) -> Vec<String> {
    let num = |v: f64| crate::table::format_number(v, crate::table::Precision::Auto);
    let mut out = Vec::new();
    let small: Vec<String> = scores
        .iter()
        .filter(|r| r.level == "group" && r.items < MIN_GROUP_ITEMS)
        .map(|r| format!("{} ({})", r.name, r.items))
        .collect();
    if !small.is_empty() {
        out.push(format!(
            "{} group(s) with fewer than {MIN_GROUP_ITEMS} items: {}; their bootstrap \
             intervals rest on a handful of item means and are rough",
            small.len(),
            small.join(", ")
        ));
    }
    for r in scores.iter_mut() {
        for (metric, st) in [("EM", &mut r.em), ("F1", &mut r.f1)] {
            if unreliable_interval(st) {
                st.ci_unreliable = true;
                out.push(format!(
                    "{} {} {metric}: the interval [{}, {}] has zero width while the runs \
                     disagree (run SD {}); the item bootstrap keeps each item's run mean \
                     fixed and cannot see that spread, so the interval is unreliable, not \
                     precise",
                    r.level,
                    r.name,
                    num(st.ci.lower()),
                    num(st.ci.upper()),
                    num(st.run_sd)
                ));
            }
        }
    }
    out
}

/// Result lines for tests, as `mcq run` writes them (tests/it/mcq_cli.rs `result_line`).
#[cfg(test)]
pub(crate) fn test_line(
    id: &str,
    model: &str,
    group: &str,
    gold: &[&str],
    outcome: &str,
    answer: Option<&[&str]>,
) -> RunResult {
    let (task, subtask) = match group {
        "planning-convergent" => ("planning", Some("convergent")),
        "planning-divergent" => ("planning", Some("divergent")),
        "noise-abstain" => ("noise_robustness", Some("abstain")),
        "noise-reliability" => ("noise_robustness", Some("reliability")),
        g => (g, None),
    };
    serde_json::from_value(serde_json::json!({
        "id": id, "run": 0, "model": model, "prompt": "informative", "shuffle_seed": null,
        "task": task, "subtask": subtask, "group": group,
        "labels": ["A", "B", "C", "D"], "permutation": ["A", "B", "C", "D"],
        "gold": gold, "allow_empty": gold.is_empty(), "outcome": outcome,
        "answer": answer, "answer_shown": answer, "parse_note": null, "text": "x",
        "error": null, "usage": null, "cached": false}))
    .expect("a valid result line")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::resample::cpu::CpuBackend;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// The hand-computed case of tests/it/mcq_cli.rs `score_two_level_average_by_hand`
    /// (one run; the per-item EM and F1 are in the comments there), through the library.
    #[test]
    fn score_results_two_level_average_by_hand() {
        let m = "m1";
        let results = [
            test_line(
                "p1",
                m,
                "planning-convergent",
                &["A", "B"],
                "ok",
                Some(&["A"]),
            ),
            test_line("p2", m, "planning-convergent", &["C"], "ok", Some(&["C"])),
            test_line(
                "d1",
                m,
                "planning-divergent",
                &["A"],
                "ok",
                Some(&["A", "B"]),
            ),
            test_line(
                "e1",
                m,
                "evidence_extraction",
                &["A", "B", "C"],
                "ok",
                Some(&["C", "B", "A"]),
            ),
            test_line("e2", m, "evidence_extraction", &["B"], "ok", Some(&[])),
            test_line(
                "e3",
                m,
                "evidence_extraction",
                &["A", "D"],
                "ok",
                Some(&["A", "B", "D"]),
            ),
            test_line("g1", m, "grounded_reasoning", &[], "ok", Some(&[])),
            test_line("g2", m, "grounded_reasoning", &[], "ok", Some(&["A"])),
            test_line("n1", m, "noise-abstain", &["C"], "parse_failed", None),
            test_line(
                "r1",
                m,
                "noise-reliability",
                &["A", "B"],
                "ok",
                Some(&["B"]),
            ),
            test_line(
                "r2",
                m,
                "noise-reliability",
                &["C", "D"],
                "ok",
                Some(&["C", "D"]),
            ),
        ];
        let settings = BootSettings {
            failures: FailurePolicy::Zero,
            resampling: Resampling {
                seed: 1,
                replicates: 200,
                confidence: 0.95,
            },
        };
        let r = score_results(
            &results,
            false,
            None,
            &settings,
            &CpuBackend::new(),
            &|_| {},
        )
        .unwrap();
        let want = [
            ("planning-convergent", 0.5, 5.0 / 6.0),
            ("planning-divergent", 0.0, 2.0 / 3.0),
            ("evidence_extraction", 1.0 / 3.0, 0.6),
            ("grounded_reasoning", 0.5, 0.5),
            ("noise-abstain", 0.0, 0.0),
            ("noise-reliability", 0.5, 5.0 / 6.0),
            ("planning", 0.25, 0.75),
            ("noise_robustness", 0.25, 5.0 / 12.0),
            ("overall", 1.0 / 3.0, (0.75 + 0.6 + 0.5 + 5.0 / 12.0) / 4.0),
        ];
        for (name, em, f1) in want {
            let row = r.scores.iter().find(|s| s.name == name).unwrap();
            assert!(close(row.em.estimate, em), "{name} EM {row:?}");
            assert!(close(row.f1.estimate, f1), "{name} F1 {row:?}");
            assert!(close(row.em.run_mean, em) && row.em.run_sd.is_nan());
        }
        assert_eq!((r.runs, r.items, r.backend.as_str()), (1, 11, "cpu"));
        assert!(r.tasks_missing.is_empty());
        let overall = r.rates.last().unwrap();
        assert_eq!((overall.records, overall.parse_failed), (11, 1));
        // A group of one item cannot vary under the bootstrap.
        let na = r.scores.iter().find(|s| s.name == "noise-abstain").unwrap();
        assert_eq!(na.em.ci, Interval([0.0, 0.0]));
        let ov = &r.scores.last().unwrap().f1;
        assert!(ov.ci[0] < ov.estimate && ov.estimate < ov.ci[1], "{ov:?}");
        assert!(r.positions.is_none() && r.shuffle_agreement.is_none());

        // Excluding failures drops n1 and with it the noise-abstain group.
        let ex = BootSettings {
            failures: FailurePolicy::Exclude,
            ..settings
        };
        let r = score_results(&results, true, None, &ex, &CpuBackend::new(), &|_| {}).unwrap();
        let ov = r.scores.last().unwrap();
        assert!(close(ov.em.estimate, (0.25 + 1.0 / 3.0 + 0.5 + 0.5) / 4.0));
        assert!(close(ov.f1.estimate, (0.75 + 0.6 + 0.5 + 5.0 / 6.0) / 4.0));
        assert!(r.scores.iter().all(|s| s.name != "noise-abstain"));
        assert_eq!(r.items, 10);
        assert!(r.positions.is_some());
    }

    #[test]
    fn scored_items_refuses_a_file_of_failures_when_they_are_excluded() {
        let results = [test_line(
            "n1",
            "m",
            "noise-abstain",
            &["C"],
            "parse_failed",
            None,
        )];
        assert_eq!(
            scored_items(&results, FailurePolicy::Zero, "r.jsonl").unwrap(),
            1
        );
        let e = scored_items(&results, FailurePolicy::Exclude, "r.jsonl").unwrap_err();
        assert_eq!(
            e.to_string(),
            "r.jsonl: no scored result lines (every line failed, and failed lines are excluded)"
        );
    }

    /// Issue #31, item 10: 4 items of one group, 3 runs, item k right (answer = gold) in
    /// run k % 3 only, wrong in the others. Every item mean is 1/3, so every bootstrap
    /// replicate is 1/3 and the interval [1/3, 1/3] has zero width; the runs score
    /// (2/4, 1/4, 1/4) (items 0 and 3 right in run 0), mean 1/3, SD √(1/48) = 0.144338
    /// (ddof 1: deviations 1/6, −1/12, −1/12, Σ² = 1/24, /2). That interval is marked
    /// unreliable and named in a warning, and the group of 4 items gets the small-group
    /// warning; a group whose items differ keeps its interval unmarked.
    #[test]
    fn zero_width_intervals_of_disagreeing_runs_are_unreliable() {
        let mut results = Vec::new();
        for k in 0..4u32 {
            for run in 0..3u32 {
                let answer: &[&str] = if run == k % 3 { &["A"] } else { &["B"] };
                let mut l = test_line(
                    &format!("q{k}"),
                    "m",
                    "noise-reliability",
                    &["A"],
                    "ok",
                    Some(answer),
                );
                l.run = run;
                results.push(l);
            }
        }
        let settings = BootSettings {
            failures: FailurePolicy::Zero,
            resampling: Resampling {
                seed: 3,
                replicates: 200,
                confidence: 0.95,
            },
        };
        let r = score_results(
            &results,
            false,
            None,
            &settings,
            &CpuBackend::new(),
            &|_| {},
        )
        .unwrap();
        let g = &r.scores[0];
        assert_eq!((g.level, g.items), ("group", 4));
        assert!(close(g.em.estimate, 1.0 / 3.0));
        assert_eq!(g.em.ci.lower(), g.em.ci.upper());
        assert!(close(g.em.run_sd, (1.0f64 / 48.0).sqrt()));
        assert!(g.em.ci_unreliable && g.f1.ci_unreliable);
        assert_eq!(
            r.warnings[0],
            "1 group(s) with fewer than 10 items: noise-reliability (4); their bootstrap \
             intervals rest on a handful of item means and are rough"
        );
        assert!(
            r.warnings[1].starts_with(
                "group noise-reliability EM: the interval [0.333333, 0.333333] has zero width \
                 while the runs disagree (run SD 0.144338)"
            ),
            "{}",
            r.warnings[1]
        );
        let json = serde_json::to_value(g).unwrap();
        assert_eq!(json["em"]["ci_unreliable"], true);
        // Make item 0 right in every run: item means differ, the interval has width.
        for l in results.iter_mut().filter(|l| l.id == "q0") {
            l.answer = Some(vec!["A".into()]);
        }
        let r = score_results(
            &results,
            false,
            None,
            &settings,
            &CpuBackend::new(),
            &|_| {},
        )
        .unwrap();
        let g = &r.scores[0];
        assert!(g.em.ci.upper() > g.em.ci.lower() && !g.em.ci_unreliable);
        assert!(serde_json::to_value(g).unwrap()["em"]
            .get("ci_unreliable")
            .is_none());
        assert_eq!(r.warnings.len(), 1);
    }

    fn cluster_rows(groups: &[Group], n: usize) -> Vec<(Group, [f64; 2])> {
        (0..n)
            .map(|i| {
                (
                    groups[i % groups.len()],
                    [
                        f64::from((i as u32).is_multiple_of(3)),
                        (i as f64 * 0.37) % 1.0,
                    ],
                )
            })
            .collect()
    }

    fn cluster_boot(rows: &[(Group, [f64; 2])], c: Option<&[usize]>, b: u32) -> GroupReplicates {
        let r = Resampling {
            seed: 5,
            replicates: b,
            confidence: 0.95,
        };
        bootstrap_group_means(rows, c, MeanRange::Scores, &r, &CpuBackend::new(), &|_| {}).unwrap()
    }

    /// With one group, clusters of one row each are the item bootstrap's one stratum (the
    /// same rows in the same order, so the same draws), the EM and F1 jobs' sums are the
    /// item bootstrap's columns added in the same order and Σ n = q exactly: the replicates
    /// are bit-for-bit the same. One cluster of everything never moves (every replicate
    /// draws it; to the rounding of its centred sums).
    #[test]
    fn singleton_clusters_of_one_group_are_the_item_bootstrap_bit_for_bit() {
        let rows = cluster_rows(&[Group::NoiseAbstain], 23);
        let own: Vec<usize> = (0..rows.len()).collect();
        let (plain, clus) = (
            cluster_boot(&rows, None, 300),
            cluster_boot(&rows, Some(&own), 300),
        );
        assert_eq!(plain, clus);
        assert_eq!(clus.empty, [0; 6]);
        assert_eq!(clus.notes("EM and F1"), None);
        let rows = cluster_rows(&[Group::EvidenceExtraction, Group::NoiseAbstain], 23);
        let one = vec![0; rows.len()];
        let centres = group_means(&rows);
        for gm in cluster_boot(&rows, Some(&one), 300).means {
            for (a, b) in gm.iter().zip(&centres) {
                let (Some(a), Some(b)) = (a, b) else {
                    assert_eq!(a.is_none(), b.is_none());
                    continue;
                };
                assert!(close(a[0], b[0]) && close(a[1], b[1]), "{a:?} vs {b:?}");
            }
        }
    }

    /// Clusters are drawn once per replicate across groups: a cluster with one item in
    /// each of two groups moves both group means together. With every cluster holding one
    /// item of evidence extraction and one of abstain with the same value, the two groups'
    /// replicate means are equal in every replicate (item by item within groups they would
    /// be independent).
    #[test]
    fn clusters_spanning_groups_move_their_groups_together() {
        let base = cluster_rows(&[Group::EvidenceExtraction], 31);
        let rows: Vec<(Group, [f64; 2])> = base
            .iter()
            .flat_map(|&(_, v)| [(Group::EvidenceExtraction, v), (Group::NoiseAbstain, v)])
            .collect();
        let cl: Vec<usize> = (0..rows.len()).map(|i| i / 2).collect();
        let reps = cluster_boot(&rows, Some(&cl), 400);
        let (ee, na) = (
            Group::EvidenceExtraction.index(),
            Group::NoiseAbstain.index(),
        );
        let mut moved = 0;
        for gm in &reps.means {
            assert_eq!(gm[ee], gm[na]);
            moved += usize::from(gm[ee] != group_means(&rows)[ee]);
        }
        assert!(moved > 300, "{moved}");
        // Item by item the two groups are separate strata with separate draws.
        let plain = cluster_boot(&rows, None, 400);
        assert!(plain.means.iter().any(|gm| gm[ee] != gm[na]));
    }

    /// A group whose only clusters are few can be missed by a replicate: its mean there is
    /// the estimate, and `empty` counts exactly the replicates whose drawn clusters have
    /// no item of the group (recounted here from the engine with a 0/1 indicator column,
    /// the same draws: one stratum of the same size, the same seed).
    #[test]
    fn a_replicate_without_a_group_takes_its_estimate_and_is_counted() {
        // 40 clusters of evidence extraction, then 2 of planning-divergent (0 and 1).
        let mut rows = cluster_rows(&[Group::EvidenceExtraction], 40);
        rows.push((Group::PlanningDivergent, [0.0, 0.0]));
        rows.push((Group::PlanningDivergent, [1.0, 1.0]));
        let cl: Vec<usize> = (0..rows.len()).collect();
        let b = 500;
        let reps = cluster_boot(&rows, Some(&cl), b);
        let pd = Group::PlanningDivergent.index();
        let indicator: Vec<f32> = (0..rows.len())
            .map(|i| f32::from(u8::from(i >= 40)))
            .collect();
        let job = ResampleJob {
            strata: vec![&indicator],
            k: 1,
            seed: 5,
            replicates: 0..b,
        };
        let drawn = CpuBackend::new().resample_sums(&job, &|_| {}).unwrap();
        let missed: Vec<usize> = (0..b as usize).filter(|&r| drawn[r] == 0.0).collect();
        // (40/42)^42 ≈ 0.13 of the replicates.
        assert!(missed.len() > 30 && missed.len() < 110, "{}", missed.len());
        assert_eq!(reps.empty[pd] as usize, missed.len());
        assert_eq!(reps.empty.iter().sum::<u32>(), reps.empty[pd]);
        for &r in &missed {
            assert_eq!(reps.means[r][pd], Some([0.5, 0.5]));
        }
        assert_eq!(
            reps.notes("EM and F1").unwrap(),
            format!(
                "EM and F1: bootstrap replicates (of {b}) that drew no cluster with an item of \
                 the group, whose group mean there is the estimate: planning-divergent {}",
                missed.len()
            )
        );
        assert_eq!(cluster_boot(&rows, None, b).notes("EM and F1"), None);
    }

    /// The engine keys every resampling document has in its envelope, never in its body.
    pub(crate) const ENGINE_KEYS: [&str; 5] =
        ["backend", "adapter", "replicates", "seed", "confidence"];

    /// A hand-made report: one group of 3 items, one run.
    pub(crate) fn demo_report() -> ScoreReport {
        let stat = Stat {
            estimate: 0.5,
            run_mean: 0.5,
            run_sd: f64::NAN,
            se: 0.25,
            ci: Interval([0.0, 1.0]),
            ci_unreliable: false,
        };
        ScoreReport {
            source: "r.jsonl".into(),
            model: "m1".into(),
            prompt: "bare".into(),
            shuffle_seed: Some(11),
            runs: 1,
            items: 3,
            settings: BootSettings {
                failures: FailurePolicy::Exclude,
                resampling: Resampling {
                    seed: 7,
                    replicates: 400,
                    confidence: 0.9,
                },
            },
            backend: "gpu".into(),
            backend_description: "llvmpipe (LLVM 15.0.7, 256 bits)".into(),
            tasks_missing: vec!["planning"],
            scores: vec![LevelRow {
                level: "group",
                name: "evidence_extraction".into(),
                items: 3,
                em: stat,
                f1: Stat {
                    estimate: 0.75,
                    ..stat
                },
            }],
            rates: vec![],
            positions: None,
            shuffle_agreement: None,
            warnings: vec![],
            clusters: None,
        }
    }

    #[test]
    fn a_score_document_has_the_engine_in_its_envelope_only() {
        use crate::document::{document, Inputs};
        use serde_json::json;
        let d = document(
            "mcq score",
            Inputs::new().with("results", "r.jsonl"),
            &demo_report(),
        );
        let stat = |estimate: f64| {
            json!({"estimate": estimate, "run_mean": 0.5, "run_sd": null, "se": 0.25,
                   "ci": [0.0, 1.0]})
        };
        assert_eq!(
            d,
            json!({
                "model": "m1", "prompt": "bare", "shuffle_seed": 11, "runs": 1, "items": 3,
                "failures": "exclude", "tasks_missing": ["planning"],
                "scores": [{"level": "group", "name": "evidence_extraction", "items": 3,
                            "em": stat(0.5), "f1": stat(0.75)}],
                "rates": [], "positions": null, "shuffle_agreement": null, "warnings": [],
                "run": {
                    "command": "mcq score",
                    "ragstats": env!("CARGO_PKG_VERSION"),
                    "inputs": {"results": "r.jsonl"},
                    "backend": "gpu",
                    "adapter": "llvmpipe (LLVM 15.0.7, 256 bits)",
                    "replicates": 400,
                    "seed": 7,
                    "confidence": 0.9,
                }
            })
        );
        let body = crate::document::to_body(&demo_report());
        for k in ENGINE_KEYS
            .iter()
            .chain(&["backend_description", "settings", "file"])
        {
            assert!(body.get(k).is_none(), "{k} in the body");
        }
    }
}
