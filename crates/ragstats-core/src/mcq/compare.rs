//! Paired comparison of two result files on (id, run): per-item differences for the
//! bootstrap, the test of the printed ΔEM at every level ([`super::delta_test`]), and, when
//! asked for, McNemar's exact test on EM over (id, run) pairs taken as independent.

use std::collections::HashMap;

use serde::{Serialize, Serializer};

use super::cluster::Clusters;
use super::delta_test::{delta_tests, DeltaTest};
use super::item::{Group, Task};
use super::paired_tests::{mcnemar_exact, mcnemar_mid_p, obuchowski, ClusterTest};
use super::results::RunResult;
use super::score::{
    bootstrap_group_means, group_means, level_rows, levels, line_score, BootSettings,
    FailurePolicy, GroupMeans, LevelRow, Levels, MeanRange, Stat,
};
use crate::document::{Engine, Report};
use crate::error::{Error, Result};
use crate::resample::engine::ResampleBackend;

/// One (id, run) pair scored in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Item id.
    pub id: String,
    /// Run index.
    pub run: u32,
    /// Group.
    pub group: Group,
    /// [EM, F1] of A.
    pub a: [f64; 2],
    /// [EM, F1] of B.
    pub b: [f64; 2],
}

/// Pairs and what could not be paired.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairing {
    /// Pairs in A's order.
    pub pairs: Vec<Pair>,
    /// Lines of A without a scored partner in B (or left out by the policy).
    pub unpaired_a: usize,
    /// Lines of B without a scored partner in A.
    pub unpaired_b: usize,
}

/// Pairs `a` and `b` on (id, run).
///
/// # Errors
/// [`Error::Data`] when one id has different groups or gold answers in the two files
/// (they were run on different items files), or when nothing pairs.
pub fn pair(a: &[RunResult], b: &[RunResult], policy: FailurePolicy) -> Result<Pairing> {
    let by: HashMap<(&str, u32), &RunResult> =
        b.iter().map(|r| ((r.id.as_str(), r.run), r)).collect();
    let mut pairs = Vec::new();
    let mut used = 0usize;
    for x in a {
        let Some(y) = by.get(&(x.id.as_str(), x.run)) else {
            continue;
        };
        if x.group != y.group || {
            let (mut g1, mut g2) = (x.gold.clone(), y.gold.clone());
            g1.sort();
            g2.sort();
            g1 != g2
        } {
            return Err(Error::Data(format!(
                "item {:?} has a different group or gold answer in the two files; compare runs of the same items (or read both with the same items file)",
                x.id
            )));
        }
        if let (Some(sa), Some(sb)) = (line_score(x, policy), line_score(y, policy)) {
            used += 1;
            pairs.push(Pair {
                id: x.id.clone(),
                run: x.run,
                group: x.group,
                a: sa,
                b: sb,
            });
        }
    }
    if pairs.is_empty() {
        return Err(Error::Data(
            "no (id, run) pair is scored in both files".into(),
        ));
    }
    Ok(Pairing {
        unpaired_a: a.len() - used,
        unpaired_b: b.len() - used,
        pairs,
    })
}

/// Per-item mean over paired runs of B − A: the bootstrap rows.
pub fn item_differences(pairs: &[Pair]) -> Vec<(Group, [f64; 2])> {
    let mut idx: HashMap<&str, usize> = HashMap::new();
    let mut acc: Vec<(Group, [f64; 2], f64)> = Vec::new();
    for p in pairs {
        let i = *idx.entry(p.id.as_str()).or_insert_with(|| {
            acc.push((p.group, [0.0, 0.0], 0.0));
            acc.len() - 1
        });
        acc[i].1[0] += p.b[0] - p.a[0];
        acc[i].1[1] += p.b[1] - p.a[1];
        acc[i].2 += 1.0;
    }
    acc.into_iter()
        .map(|(g, s, n)| (g, [s[0] / n, s[1] / n]))
        .collect()
}

/// The ids of [`item_differences`]' rows, in the same order (first appearance).
pub fn item_ids(pairs: &[Pair]) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    pairs
        .iter()
        .map(|p| p.id.as_str())
        .filter(|id| seen.insert(*id))
        .collect()
}

/// Group means of B − A for each run separately.
pub fn per_run_differences(pairs: &[Pair]) -> Vec<GroupMeans> {
    let mut runs: Vec<u32> = pairs.iter().map(|p| p.run).collect();
    runs.sort_unstable();
    runs.dedup();
    runs.iter()
        .map(|&k| {
            let rows: Vec<(Group, [f64; 2])> = pairs
                .iter()
                .filter(|p| p.run == k)
                .map(|p| (p.group, [p.b[0] - p.a[0], p.b[1] - p.a[1]]))
                .collect();
            group_means(&rows)
        })
        .collect()
}

/// What McNemar's test on (id, run) pairs assumes: every pair independent. The runs of one
/// item are not, so with several runs its p is too small (at 5 runs per item it rejected a
/// true null at 0.19 for a nominal 0.05), and it weights every pair alike, not as the
/// printed Δ does; it is shown only when asked for ([`CompareJob::independent_pairs`]).
pub const INDEPENDENT_PAIRS: &str = "independent pairs";

/// McNemar counts and exact p of one group (or overall), on (id, run) pairs taken as
/// independent ([`INDEPENDENT_PAIRS`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McNemar {
    /// Group name or `overall`.
    pub group: String,
    /// (id, run) pairs.
    pub pairs: usize,
    /// Pairs with A exactly right and B not.
    pub a_only: u64,
    /// Pairs with B exactly right and A not.
    pub b_only: u64,
    /// Exact two-sided p ([`mcnemar_exact`]).
    pub p: f64,
    /// Mid-p ([`mcnemar_mid_p`]).
    pub p_mid: f64,
    /// What the test assumes: [`INDEPENDENT_PAIRS`].
    pub assumes: &'static str,
    /// The cluster-adjusted test, when clusters are in force: the p that decides.
    #[serde(flatten)]
    pub cluster: Option<ClusterTest>,
}

impl McNemar {
    /// The p-value that decides (and that Holm and BH adjust): the cluster-adjusted one when
    /// clusters are in force, else the exact one.
    pub fn decision_p(&self) -> f64 {
        self.cluster.as_ref().map_or(self.p, |c| c.cluster_p)
    }
}

/// McNemar rows per group present and overall, on EM of the pairs; with `clusters`, each
/// row also has the cluster-adjusted test ([`obuchowski`]) over the clusters with a pair in
/// it (per group the items of a cluster in that group; at `overall` whole clusters), every
/// run of an item in its item's cluster.
pub fn mcnemar_table(pairs: &[Pair], clusters: Option<&Clusters>) -> Vec<McNemar> {
    let row = |name: String, ps: &[&Pair]| {
        let a_only = ps.iter().filter(|p| p.a[0] == 1.0 && p.b[0] != 1.0).count() as u64;
        let b_only = ps.iter().filter(|p| p.b[0] == 1.0 && p.a[0] != 1.0).count() as u64;
        let cluster = clusters.map(|c| {
            let idx = c.indices(ps.iter().map(|p| p.id.as_str()));
            let k = idx.iter().copied().max().map_or(0, |m| m + 1);
            let mut cells = vec![(0.0, 0.0, 0.0); k];
            for (p, &i) in ps.iter().zip(&idx) {
                cells[i].0 += 1.0;
                cells[i].1 += f64::from(u8::from(p.a[0] == 1.0));
                cells[i].2 += f64::from(u8::from(p.b[0] == 1.0));
            }
            obuchowski(&cells)
        });
        McNemar {
            group: name,
            pairs: ps.len(),
            a_only,
            b_only,
            p: mcnemar_exact(a_only, b_only),
            p_mid: mcnemar_mid_p(a_only, b_only),
            assumes: INDEPENDENT_PAIRS,
            cluster,
        }
    };
    let mut out = Vec::new();
    for g in Group::ALL {
        let ps: Vec<&Pair> = pairs.iter().filter(|p| p.group == g).collect();
        if !ps.is_empty() {
            out.push(row(g.as_str().into(), &ps));
        }
    }
    let all: Vec<&Pair> = pairs.iter().collect();
    out.push(row("overall".into(), &all));
    out
}

/// The settings of `mcq compare`: the bootstrap's, and whether McNemar's test on (id, run)
/// pairs taken as independent is added to the report (`--mcnemar`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareJob {
    /// How failures score, and the bootstrap's seed, replicates and confidence (whose
    /// 1 − confidence is the tests' α).
    pub boot: BootSettings,
    /// Add [`mcnemar_table`] (it assumes independent pairs: [`INDEPENDENT_PAIRS`]).
    pub independent_pairs: bool,
}

impl CompareJob {
    /// The bootstrap's settings without McNemar's table.
    pub fn new(boot: BootSettings) -> CompareJob {
        CompareJob {
            boot,
            independent_pairs: false,
        }
    }
}

/// One side of a comparison: the configuration of its results file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// The model.
    pub model: String,
    /// The prompt.
    pub prompt: String,
    /// The shuffle seed (`None`: options as written).
    pub shuffle_seed: Option<u64>,
}

impl Side {
    fn of(r: &RunResult) -> Side {
        Side {
            model: r.model.clone(),
            prompt: r.prompt.clone(),
            shuffle_seed: r.shuffle_seed,
        }
    }
}

/// One row of the comparison: the delta B − A of one level ([`LevelRow`], EM and F1 with
/// intervals) and each side's own `[EM, F1]` over the paired (id, run) set (NaN where the
/// level has no value on that side). Serialized flat: `level`, `name`, `items`, `a` and
/// `b` as `{"em", "f1"}` (`null` for NaN), `delta_em`, `delta_f1`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaRow {
    /// The deltas B − A.
    pub delta: LevelRow,
    /// A's `[EM, F1]`.
    pub a: [f64; 2],
    /// B's `[EM, F1]`.
    pub b: [f64; 2],
}

/// A side's `[EM, F1]` as the document writes it.
#[derive(Serialize)]
struct EmF1 {
    em: f64,
    f1: f64,
}

impl EmF1 {
    fn of(v: [f64; 2]) -> EmF1 {
        EmF1 { em: v[0], f1: v[1] }
    }
}

/// The document's form of a [`DeltaRow`]: the level's keys beside each side's scores,
/// the deltas named for what they are (a [`LevelRow`]'s `em`, `f1` here are B − A).
#[derive(Serialize)]
struct DeltaRowDoc<'a> {
    level: &'static str,
    name: &'a str,
    items: usize,
    a: EmF1,
    b: EmF1,
    delta_em: &'a Stat,
    delta_f1: &'a Stat,
}

impl Serialize for DeltaRow {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let d = &self.delta;
        DeltaRowDoc {
            level: d.level,
            name: &d.name,
            items: d.items,
            a: EmF1::of(self.a),
            b: EmF1::of(self.b),
            delta_em: &d.em,
            delta_f1: &d.f1,
        }
        .serialize(s)
    }
}

/// What `mcq compare` reports for two results files. Its document (docs/json.md) is its
/// fields with `settings` flattened (`failures`); the engine and the bootstrap settings
/// are in the `run` envelope ([`Report::engine`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// Model A (the baseline).
    pub a: Side,
    /// Model B.
    pub b: Side,
    /// (id, run) pairs scored in both files.
    pub pairs: usize,
    /// Scored lines of A without a partner in B.
    pub unpaired_a: usize,
    /// Scored lines of B without a partner in A.
    pub unpaired_b: usize,
    /// The settings the analysis ran with.
    #[serde(flatten)]
    pub settings: BootSettings,
    /// The engine that resampled (`cpu` or `gpu`).
    #[serde(skip)]
    pub backend: String,
    /// The engine's description (threads, adapter).
    #[serde(skip)]
    pub adapter: String,
    /// Deltas per group, task and overall.
    pub deltas: Vec<DeltaRow>,
    /// The test of each level's ΔEM, in the order of `deltas` ([`delta_tests`]).
    pub tests: Vec<DeltaTest>,
    /// What the reader should know about `tests`: groups without a variance estimate, levels
    /// where the sign test decides, and levels where the bootstrap interval and the test
    /// disagree about 0.
    pub test_notes: Vec<String>,
    /// McNemar's exact test on EM per group and overall over (id, run) pairs taken as
    /// independent ([`mcnemar_table`]), when asked for; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcnemar: Option<Vec<McNemar>>,
    /// The clusters the bootstrap resampled and the cluster-adjusted test used (`--items`
    /// with provenance); absent when items were resampled one by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Clusters>,
    /// The results files of A and B as the caller names them (the text says so; not in the
    /// body); set by the caller, which read them.
    #[serde(skip)]
    pub files: [std::path::PathBuf; 2],
}

impl Report for CompareReport {
    /// The engine that resampled, and the stratified item bootstrap's settings.
    fn engine(&self) -> Engine {
        self.settings.engine(&self.backend, &self.adapter)
    }
}

/// The paired items of `a` and `b` (distinct ids with a pair): the rows
/// [`compare_results`] resamples (a caller sizes its engine by `items × replicates`).
///
/// # Errors
/// Those of [`pair`].
pub fn paired_items(a: &[RunResult], b: &[RunResult], policy: FailurePolicy) -> Result<usize> {
    Ok(item_differences(&pair(a, b, policy)?.pairs).len())
}

/// Each side's `[EM, F1]` at every level, from the per-item means over the paired runs.
fn side_levels(pairs: &[Pair], b_side: bool) -> Levels {
    let mut idx: HashMap<&str, usize> = HashMap::new();
    let mut acc: Vec<(Group, [f64; 2], f64)> = Vec::new();
    for p in pairs {
        let i = *idx.entry(p.id.as_str()).or_insert_with(|| {
            acc.push((p.group, [0.0, 0.0], 0.0));
            acc.len() - 1
        });
        let v = if b_side { p.b } else { p.a };
        acc[i].1[0] += v[0];
        acc[i].1[1] += v[1];
        acc[i].2 += 1.0;
    }
    let rows: Vec<(Group, [f64; 2])> = acc
        .into_iter()
        .map(|(g, s, n)| (g, [s[0] / n, s[1] / n]))
        .collect();
    levels(&group_means(&rows))
}

/// The value of `l` at the level of table row `r` (NaN where it has none).
fn at_level(l: &Levels, r: &LevelRow) -> [f64; 2] {
    let v = match r.level {
        "group" => Group::ALL
            .iter()
            .find(|g| g.as_str() == r.name)
            .and_then(|g| l.groups[g.index()]),
        "task" => Task::ALL
            .iter()
            .position(|t| t.as_str() == r.name)
            .and_then(|t| l.tasks[t]),
        _ => l.overall,
    };
    v.unwrap_or([f64::NAN, f64::NAN])
}

/// Paired comparison of two results files on (id, run): per-item differences
/// `d_i = mean_r (x_ir^B − x_ir^A)` averaged group → task → overall as in scoring, with the
/// mean and SD over runs, the stratified item bootstrap (clamped to [−1, 1]) for SEs and
/// percentile intervals, each side's own scores over the paired set, the test of every
/// level's ΔEM ([`delta_tests`]: stratified t over items, every run of an item together),
/// and with [`CompareJob::independent_pairs`] McNemar's exact test on EM over the
/// (id, run) pairs. `progress` is called with the replicates done.
///
/// # Errors
/// Those of [`pair`]; [`Error::Usage`] for fewer than 2 replicates; engine errors.
pub fn compare_results(
    a: &[RunResult],
    b: &[RunResult],
    settings: &CompareJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CompareReport> {
    compare_results_clustered(a, b, settings, None, backend, progress)
}

/// [`compare_results`] with `clusters` of items: the paired bootstrap resamples clusters,
/// drawn once per replicate jointly across groups, rather than items within groups
/// ([`bootstrap_group_means`] on the per-item differences), the test of each level's ΔEM is
/// the delete-one-cluster jackknife t over the same clusters ([`delta_tests`]), and every
/// McNemar row (when asked for) adds the cluster-adjusted test ([`mcnemar_table`]). With
/// `None` it is [`compare_results`].
///
/// # Errors
/// Those of [`compare_results`].
pub fn compare_results_clustered(
    a: &[RunResult],
    b: &[RunResult],
    settings: &CompareJob,
    clusters: Option<&Clusters>,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CompareReport> {
    let (Some(fa), Some(fb)) = (a.first(), b.first()) else {
        return Err(Error::Usage("no result lines to compare".into()));
    };
    let boot = &settings.boot;
    let pairing = pair(a, b, boot.failures)?;
    let diffs = item_differences(&pairing.pairs);
    let per_run = per_run_differences(&pairing.pairs);
    let units = clusters.map(|c| c.indices(item_ids(&pairing.pairs)));
    let reps = bootstrap_group_means(
        &diffs,
        units.as_deref(),
        MeanRange::Differences,
        &boot.resampling,
        backend,
        progress,
    )?;
    let (la, lb) = (
        side_levels(&pairing.pairs, false),
        side_levels(&pairing.pairs, true),
    );
    let confidence = boot.resampling.confidence;
    let deltas: Vec<DeltaRow> = level_rows(&diffs, &per_run, &reps.means, confidence)
        .into_iter()
        .map(|r| DeltaRow {
            a: at_level(&la, &r),
            b: at_level(&lb, &r),
            delta: r,
        })
        .collect();
    let em: Vec<(Group, f64)> = diffs.iter().map(|(g, v)| (*g, v[0])).collect();
    let (tests, mut test_notes) = delta_tests(&em, units.as_deref(), confidence);
    test_notes.extend(disagreements(&deltas, &tests, 1.0 - confidence));
    Ok(CompareReport {
        a: Side::of(fa),
        b: Side::of(fb),
        pairs: pairing.pairs.len(),
        unpaired_a: pairing.unpaired_a,
        unpaired_b: pairing.unpaired_b,
        settings: *boot,
        backend: backend.name().into(),
        adapter: backend.description(),
        deltas,
        tests,
        test_notes,
        mcnemar: settings
            .independent_pairs
            .then(|| mcnemar_table(&pairing.pairs, clusters)),
        clusters: clusters.map(|c| c.with_notes(reps.notes("ΔEM and ΔF1"))),
        files: Default::default(),
    })
}

/// Notes for the levels where the bootstrap interval of ΔEM and the test disagree about 0
/// (the interval excludes 0 while p ≥ α, or the reverse). Near the boundary they can: the
/// percentile bootstrap of a mean of q units has variance (q − 1)/q of the t test's SE² and
/// no degrees of freedom, so at few items per group it is the narrower; the test is the one
/// whose level was measured (docs/coverage-mcq.md).
fn disagreements(deltas: &[DeltaRow], tests: &[DeltaTest], alpha: f64) -> Vec<String> {
    let mut out = Vec::new();
    for t in tests {
        let Some(d) = deltas
            .iter()
            .find(|d| d.delta.level == t.level && d.delta.name == t.name)
        else {
            continue;
        };
        let ci = d.delta.em.ci;
        let (boot, test) = (ci.excludes(0.0), t.p < alpha);
        if boot != test && ci.is_finite() {
            out.push(format!(
                "{} {}: the bootstrap interval [{}, {}] {} 0, the test's p = {} {} α{}",
                t.level,
                t.name,
                short(ci.lower()),
                short(ci.upper()),
                if boot { "excludes" } else { "covers" },
                short(t.p),
                if test { "<" } else { "≥" },
                t.ci.map_or(String::new(), |c| format!(
                    " (t interval [{}, {}])",
                    short(c.lower()),
                    short(c.upper())
                )),
            ));
        }
    }
    if !out.is_empty() {
        out.push(format!(
            "where the bootstrap interval and the test disagree about 0, the test decides: the percentile bootstrap of a mean of q items (or clusters) has (q − 1)/q of the t test's variance and no degrees of freedom, so at a few per group it is too narrow (α = {})",
            short(alpha)
        ));
    }
    out
}

/// A number of a note: 4 significant digits.
fn short(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if (1e-3..1e4).contains(&x.abs()) {
        let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
        let s = format!("{x:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{x:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resample::Resampling;

    #[test]
    fn mcnemar_exact_matches_exact_rationals() {
        // 2·Σ C(n, i)/2^n in exact rational arithmetic, then rounded (Python 3.11:
        // float(2 * Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n))).
        let cases = [
            (40, 69, 0.007040750835507646),
            (132, 285, 5.130252545068268e-14),
            (400, 600, 2.7284641560660184e-10),
        ];
        for (b, c, want) in cases {
            let p = mcnemar_exact(b, c);
            assert!(
                ((p - want) / want).abs() < 1e-12,
                "b={b} c={c}: {p} vs {want}"
            );
        }
    }

    /// The hand-computed case of tests/it/mcq_cli.rs `compare_deltas_and_mcnemar_by_hand`,
    /// through the library: 8 evidence items, A right only on e0, B right only on e1..e6,
    /// both right on e7: ΔEM = 7/8 − 2/8 = 5/8; McNemar b = 1, c = 6, p = 0.125. The test of
    /// ΔEM is the one-sample t test of d = (−1, 1, 1, 1, 1, 1, 1, 0) on 7 df; scipy 1.17.1
    /// (`/tmp/venv-mcq/bin/python`): `stats.ttest_1samp(d, 0)` gives t = 2.3759548165574578,
    /// p = 0.04917371420480338, `.confidence_interval(0.95)` (0.0029805293659505017,
    /// 1.2470194706340494); `d.std(ddof=1)/sqrt(8)` = 0.2630521404045756.
    #[test]
    fn compare_results_by_hand() {
        use super::super::score::test_line;
        let side = |model: &str, right: &dyn Fn(usize) -> bool| -> Vec<RunResult> {
            (0..8)
                .map(|i| {
                    let ans: &[&str] = if right(i) { &["A"] } else { &["B"] };
                    test_line(
                        &format!("e{i}"),
                        model,
                        "evidence_extraction",
                        &["A"],
                        "ok",
                        Some(ans),
                    )
                })
                .collect()
        };
        let a = side("ma", &|i| i == 0 || i == 7);
        let b = side("mb", &|i| i >= 1);
        let boot = BootSettings {
            failures: FailurePolicy::Zero,
            resampling: Resampling {
                seed: 1,
                replicates: 500,
                confidence: 0.95,
            },
        };
        let settings = CompareJob {
            boot,
            independent_pairs: true,
        };
        let cpu = crate::resample::cpu::CpuBackend::new();
        assert_eq!(paired_items(&a, &b, boot.failures).unwrap(), 8);
        let r = compare_results(&a, &b, &settings, &cpu, &|_| {}).unwrap();
        assert_eq!((r.pairs, r.unpaired_a, r.unpaired_b), (8, 0, 0));
        assert_eq!((r.a.model.as_str(), r.b.model.as_str()), ("ma", "mb"));
        let ov = r.deltas.iter().find(|d| d.delta.name == "overall").unwrap();
        assert!((ov.delta.em.estimate - 5.0 / 8.0).abs() < 1e-12, "{ov:?}");
        assert!((ov.a[0] - 0.25).abs() < 1e-12 && (ov.b[0] - 0.875).abs() < 1e-12);
        let m = r
            .mcnemar
            .as_ref()
            .unwrap()
            .iter()
            .find(|m| m.group == "overall")
            .unwrap();
        assert_eq!((m.a_only, m.b_only), (1, 6));
        assert!((m.p - 0.125).abs() < 1e-15);
        assert_eq!(m.assumes, "independent pairs");
        // The test of ΔEM: one group, so every level is the one-sample t test of d.
        assert_eq!(r.tests.len(), 3);
        for t in &r.tests {
            assert_eq!(
                (t.test, t.items, t.clusters),
                ("stratified-t", 8, 8),
                "{t:?}"
            );
            assert!((t.estimate - 0.625).abs() < 1e-15);
            assert!(
                (t.se.unwrap() - 0.263_052_140_404_575_6).abs() < 1e-15,
                "{t:?}"
            );
            assert_eq!(t.df, Some(7.0));
            assert!(
                (t.t.unwrap() - 2.375_954_816_557_457_8).abs() < 1e-13,
                "{t:?}"
            );
            assert!((t.p - 0.049_173_714_204_803_38).abs() < 1e-13, "{t:?}");
            let ci = t.ci.unwrap();
            assert!(
                (ci.lower() - 0.002_980_529_365_950_501_7).abs() < 1e-12,
                "{t:?}"
            );
            assert!(
                (ci.upper() - 1.247_019_470_634_049_4).abs() < 1e-12,
                "{t:?}"
            );
            assert_eq!(t.favours, Some("B"));
        }
        // Without asking, no McNemar table.
        let plain = compare_results(&a, &b, &CompareJob::new(boot), &cpu, &|_| {}).unwrap();
        assert!(plain.mcnemar.is_none());
        assert_eq!(plain.tests, r.tests);
        // The other order: the delta and its interval are negative.
        let r = compare_results(&b, &a, &settings, &cpu, &|_| {}).unwrap();
        let t = r.tests.iter().find(|t| t.level == "overall").unwrap();
        assert_eq!(t.favours, Some("A"));
        assert!(
            (t.t.unwrap() + 2.375_954_816_557_457_8).abs() < 1e-13,
            "{t:?}"
        );
        let ov = &r
            .deltas
            .iter()
            .find(|d| d.delta.name == "overall")
            .unwrap()
            .delta
            .em;
        assert!((ov.estimate + 5.0 / 8.0).abs() < 1e-12);
        assert!(
            ov.ci[0] < ov.estimate && ov.estimate < ov.ci[1] && ov.ci[1] < 0.0,
            "{ov:?}"
        );
    }

    #[test]
    fn a_compare_document_has_the_engine_in_its_envelope_only() {
        use crate::document::{document, Inputs};
        use serde_json::json;
        let demo = super::super::score::tests::demo_report();
        let side = |model: &str| Side {
            model: model.into(),
            prompt: "bare".into(),
            shuffle_seed: None,
        };
        let r = CompareReport {
            a: side("ma"),
            b: side("mb"),
            pairs: 3,
            unpaired_a: 1,
            unpaired_b: 0,
            settings: demo.settings,
            backend: "cpu".into(),
            adapter: "rayon, 2 threads".into(),
            deltas: vec![DeltaRow {
                delta: demo.scores[0].clone(),
                a: [0.25, 0.5],
                // B has no value at this level.
                b: [f64::NAN, f64::NAN],
            }],
            tests: vec![DeltaTest {
                level: "overall",
                name: "overall".into(),
                items: 3,
                clusters: 3,
                test: "sign",
                estimate: 0.5,
                se: None,
                df: None,
                t: None,
                p: 1.0,
                ci: None,
                favours: None,
            }],
            test_notes: vec!["a note".into()],
            mcnemar: Some(vec![McNemar {
                group: "overall".into(),
                pairs: 3,
                a_only: 0,
                b_only: 1,
                p: 1.0,
                p_mid: 1.0,
                assumes: INDEPENDENT_PAIRS,
                cluster: None,
            }]),
            clusters: None,
            files: Default::default(),
        };
        let d = document(
            "mcq compare",
            Inputs::new().with("a", "a.jsonl").with("b", "b.jsonl"),
            &r,
        );
        let stat = |estimate: f64| {
            json!({"estimate": estimate, "run_mean": 0.5, "run_sd": null, "se": 0.25,
                   "ci": [0.0, 1.0]})
        };
        let side = |m: &str| json!({"model": m, "prompt": "bare", "shuffle_seed": null});
        assert_eq!(
            d,
            json!({
                "a": side("ma"), "b": side("mb"),
                "pairs": 3, "unpaired_a": 1, "unpaired_b": 0, "failures": "exclude",
                "deltas": [{"level": "group", "name": "evidence_extraction", "items": 3,
                            "a": {"em": 0.25, "f1": 0.5}, "b": {"em": null, "f1": null},
                            "delta_em": stat(0.5), "delta_f1": stat(0.75)}],
                "tests": [{"level": "overall", "name": "overall", "items": 3, "clusters": 3,
                           "test": "sign", "estimate": 0.5, "p": 1.0, "favours": null}],
                "test_notes": ["a note"],
                "mcnemar": [{"group": "overall", "pairs": 3, "a_only": 0, "b_only": 1,
                             "p": 1.0, "p_mid": 1.0, "assumes": "independent pairs"}],
                "run": {
                    "command": "mcq compare",
                    "ragstats": env!("CARGO_PKG_VERSION"),
                    "inputs": {"a": "a.jsonl", "b": "b.jsonl"},
                    "backend": "cpu",
                    "adapter": "rayon, 2 threads",
                    "replicates": 400,
                    "seed": 7,
                    "confidence": 0.9,
                }
            })
        );
        let body = crate::document::to_body(&r);
        for k in super::super::score::tests::ENGINE_KEYS {
            assert!(body.get(k).is_none(), "{k} in the body");
        }
    }
}
