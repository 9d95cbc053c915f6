//! `mcq compare` of k ≥ 3 result files: each file's scores per group, task and overall
//! (exactly `mcq score`'s), and every pair's paired deltas with bootstrap intervals and the
//! test of each level's ΔEM (exactly the two-file `mcq compare`'s), the tests' p adjusted
//! over the family of all pairs by Holm (family-wise error) and Benjamini–Hochberg (false
//! discovery rate), level by level; when asked for, McNemar's exact test on EM over (id, run)
//! pairs taken as independent, adjusted the same way.

use serde::Serialize;

use super::cluster::Clusters;
use super::compare::{compare_results_clustered, CompareJob, DeltaRow, McNemar, Side};
use super::delta_test::DeltaTest;
use super::results::RunResult;
use super::score::{score_results_clustered, BootSettings, LevelRow};
use crate::compare::multiplicity::{benjamini_hochberg, holm};
use crate::document::{Engine, Report};
use crate::error::{Error, Result};
use crate::resample::engine::ResampleBackend;

/// One results file of the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct System {
    /// The file, as the caller named it.
    pub file: String,
    #[serde(flatten)]
    pub side: Side,
    /// Items with a scored run.
    pub items: usize,
    /// EM and F1 per group, task and overall, as `mcq score` reports them.
    pub scores: Vec<LevelRow>,
}

/// McNemar's exact test of one pair at one level, with the family's adjusted p-values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdjustedMcNemar {
    #[serde(flatten)]
    pub test: McNemar,
    /// Holm over every pair's test at this level, on [`McNemar::decision_p`].
    pub p_holm: f64,
    /// Benjamini–Hochberg over every pair's test at this level, on [`McNemar::decision_p`].
    pub q_bh: f64,
    /// With clusters: `cluster_p`, the p the adjustments are of (absent without: `p`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<&'static str>,
}

/// The test of one pair's ΔEM at one level ([`super::delta_test`]), with the family's
/// adjusted p-values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdjustedDeltaTest {
    #[serde(flatten)]
    pub test: DeltaTest,
    /// Holm over every pair's test at this level.
    pub p_holm: f64,
    /// Benjamini–Hochberg over every pair's test at this level.
    pub q_bh: f64,
    /// `A` or `B` (the pair's a or b), the file the difference favours, when `p_holm` < α:
    /// significant in the family of all pairs; else `None`.
    pub favours_holm: Option<&'static str>,
}

/// One pair b − a of files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub a: String,
    pub b: String,
    /// (id, run) pairs scored in both files.
    pub pairs: usize,
    pub unpaired_a: usize,
    pub unpaired_b: usize,
    /// Deltas b − a per group, task and overall with paired bootstrap intervals.
    pub deltas: Vec<DeltaRow>,
    /// The test of each level's ΔEM, adjusted over the pairs.
    pub tests: Vec<AdjustedDeltaTest>,
    /// What the reader should know about `tests` ([`super::compare::CompareReport::test_notes`]).
    pub test_notes: Vec<String>,
    /// McNemar on (id, run) pairs taken as independent, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcnemar: Option<Vec<AdjustedMcNemar>>,
}

/// What `mcq compare` reports for three or more files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeaderboardReport {
    /// `all-pairs`: the family the adjustments cover.
    pub family: &'static str,
    #[serde(flatten)]
    pub settings: BootSettings,
    pub systems: Vec<System>,
    /// Every pair (a before b in the order the files were given).
    pub pairs: Vec<Pair>,
    #[serde(skip)]
    pub backend: String,
    #[serde(skip)]
    pub adapter: String,
    /// The clusters every bootstrap resampled and the cluster-adjusted tests used
    /// (`--items` with provenance); absent when items were resampled one by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Clusters>,
}

impl Report for LeaderboardReport {
    fn engine(&self) -> Engine {
        self.settings.engine(&self.backend, &self.adapter)
    }
}

/// Scores every file and compares every pair (each bootstrap on `backend` with the same
/// seed), then adjusts each level's test p-values (and McNemar's, when asked for) over the
/// pairs. `progress` gets the
/// replicates done over all the bootstraps (k + k(k − 1)/2 of them).
///
/// # Errors
/// [`Error::Usage`] for fewer than two files; those of [`super::score::score_results`] and
/// [`super::compare::compare_results`], with the file or pair named.
pub fn leaderboard(
    files: &[(String, Vec<RunResult>)],
    settings: &CompareJob,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<LeaderboardReport> {
    leaderboard_clustered(files, settings, None, backend, progress)
}

/// [`leaderboard`] with `clusters` of items: every score and pair bootstrap resamples
/// clusters, drawn once per replicate jointly across groups ([`score_results_clustered`],
/// [`compare_results_clustered`]; replicates that drew no cluster of a group are counted in
/// the notes, named by file or pair),
/// the tests of ΔEM are the delete-one-cluster jackknife t, and every McNemar row (when
/// asked for) has the cluster-adjusted test, whose p Holm and BH adjust.
///
/// # Errors
/// Those of [`leaderboard`].
pub fn leaderboard_clustered(
    files: &[(String, Vec<RunResult>)],
    settings: &CompareJob,
    clusters: Option<&Clusters>,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<LeaderboardReport> {
    if files.len() < 2 {
        return Err(Error::Usage(
            "mcq compare needs at least two results files".into(),
        ));
    }
    let boot: &BootSettings = &settings.boot;
    let alpha = 1.0 - boot.resampling.confidence;
    let b = u64::from(boot.resampling.replicates);
    let mut done = 0u64;
    let mut systems = Vec::with_capacity(files.len());
    // What each bootstrap adds to the clusters' own notes, named by its file or pair.
    let own = clusters.map_or(0, |c| c.notes.len());
    let mut notes: Vec<String> = Vec::new();
    let mut keep = |name: &str, c: Option<&Clusters>| {
        if let Some(c) = c {
            notes.extend(c.notes[own..].iter().map(|n| format!("{name}: {n}")));
        }
    };
    for (name, results) in files {
        let r = score_results_clustered(results, false, None, boot, clusters, backend, &|n| {
            progress(done + n)
        })
        .map_err(|e| Error::Data(format!("{name}: {e}")))?;
        done += b;
        keep(name, r.clusters.as_ref());
        systems.push(System {
            file: name.clone(),
            side: Side {
                model: r.model,
                prompt: r.prompt,
                shuffle_seed: r.shuffle_seed,
            },
            items: r.items,
            scores: r.scores,
        });
    }
    let mut pairs = Vec::new();
    for i in 0..files.len() {
        for j in i + 1..files.len() {
            let (a, b_) = (&files[i], &files[j]);
            let r = compare_results_clustered(&a.1, &b_.1, settings, clusters, backend, &|n| {
                progress(done + n)
            })
            .map_err(|e| Error::Data(format!("{} vs {}: {e}", a.0, b_.0)))?;
            done += b;
            keep(&format!("{} vs {}", a.0, b_.0), r.clusters.as_ref());
            pairs.push(Pair {
                a: a.0.clone(),
                b: b_.0.clone(),
                pairs: r.pairs,
                unpaired_a: r.unpaired_a,
                unpaired_b: r.unpaired_b,
                deltas: r.deltas,
                tests: r
                    .tests
                    .into_iter()
                    .map(|test| AdjustedDeltaTest {
                        test,
                        p_holm: f64::NAN,
                        q_bh: f64::NAN,
                        favours_holm: None,
                    })
                    .collect(),
                test_notes: r.test_notes,
                mcnemar: r.mcnemar.map(|m| {
                    m.into_iter()
                        .map(|test| AdjustedMcNemar {
                            test,
                            p_holm: f64::NAN,
                            q_bh: f64::NAN,
                            adjusted: clusters.map(|_| "cluster_p"),
                        })
                        .collect()
                }),
            });
        }
    }
    // Adjust each level over the pairs that have a test there: the tests of ΔEM by (level,
    // name) (a group and a task can share a name), McNemar's by group.
    adjust(
        &mut pairs,
        |p| {
            p.tests
                .iter()
                .map(|t| (t.test.level, t.test.name.clone()))
                .collect()
        },
        |p, j| p.tests[j].test.p,
        |p, j, h, q| {
            let t = &mut p.tests[j];
            t.p_holm = h;
            t.q_bh = q;
            t.favours_holm = (h < alpha && t.test.estimate != 0.0)
                .then_some(if t.test.estimate > 0.0 { "B" } else { "A" });
        },
    );
    adjust(
        &mut pairs,
        |p| {
            p.mcnemar
                .iter()
                .flatten()
                .map(|m| ("", m.test.group.clone()))
                .collect()
        },
        |p, j| {
            p.mcnemar
                .as_ref()
                .map_or(f64::NAN, |m| m[j].test.decision_p())
        },
        |p, j, h, q| {
            if let Some(m) = p.mcnemar.as_mut() {
                m[j].p_holm = h;
                m[j].q_bh = q;
            }
        },
    );
    Ok(LeaderboardReport {
        family: "all-pairs",
        settings: *boot,
        systems,
        pairs,
        backend: backend.name().into(),
        adapter: backend.description(),
        clusters: clusters.map(|c| c.with_notes(notes)),
    })
}

/// Holm and BH over the pairs at each level: `keys(pair)` names a pair's tests (by level),
/// `p(pair, j)` is the p of its j-th test and `set(pair, j, holm, bh)` stores the adjusted ones.
fn adjust(
    pairs: &mut [Pair],
    keys: impl Fn(&Pair) -> Vec<(&'static str, String)>,
    p: impl Fn(&Pair, usize) -> f64,
    set: impl Fn(&mut Pair, usize, f64, f64),
) {
    let keyed: Vec<Vec<(&'static str, String)>> = pairs.iter().map(&keys).collect();
    let mut levels: Vec<&(&'static str, String)> = Vec::new();
    for k in keyed.iter().flatten() {
        if !levels.contains(&k) {
            levels.push(k);
        }
    }
    for level in levels {
        let at: Vec<(usize, usize)> = keyed
            .iter()
            .enumerate()
            .filter_map(|(i, ks)| ks.iter().position(|k| k == level).map(|j| (i, j)))
            .collect();
        let ps: Vec<f64> = at.iter().map(|&(i, j)| p(&pairs[i], j)).collect();
        let (h, q) = (holm(&ps), benjamini_hochberg(&ps));
        for (n, &(i, j)) in at.iter().enumerate() {
            set(&mut pairs[i], j, h[n], q[n]);
        }
    }
}
