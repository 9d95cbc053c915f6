//! Allocation comparison on one master panel: each allocation `NAME=Q:T:R` is the nested
//! sub-panel of the first Q questions of each stratum (shares as in the master panel),
//! trajectories 0..T−1 and reads 0..R−1. Each gets its measured SE, model tokens, fees over
//! a search-price sweep, and variance × cost; each pair gets the relative SE reduction
//! 1 − SE_A/SE_B and the ratio of variance × cost (A over B), with bootstrap intervals, and
//! the replicate correlation of the two SEs.
//!
//! The bootstrap is paired and keeps every sub-panel at its design's size: replicate b
//! walks one sequence of draws of the **master panel's** questions per stratum d (the
//! engine's Philox stream of seed, b and d, uniform over the master's Q_d questions,
//! continued past draw Q_d as long as needed), and allocation a takes the first n_ad draws
//! that land in its own sub-panel, n_ad its questions with scores in stratum d. So every
//! replicate's sub-panel has exactly n_ad draws, each uniform over the sub-panel (the
//! ordinary bootstrap of that sub-panel), and nested sub-panels share almost all their
//! draws (a draw that lands in the smaller one counts in both until one is full); an
//! allocation holding every master question takes the first Q_d draws, the engine's own
//! bootstrap. Until issue #45 every allocation took *all* its draws among the master's
//! Q_d, a Binomial(Q_d, n_ad/Q_d) count that widened the replicate SEs' spread by 6–10%
//! on the demo (`exact_size_replicates`; docs/METHODS.md, "Paired allocation
//! bootstrap"). The walk is an engine job of its own ([`super::walk`]): the resample
//! engine sums whole strata and cannot stop an allocation at its size, so the walk has a
//! CPU backend and a GPU twin (`--backend gpu`) that draw and add exactly alike.
//!
//! With clusters (`--cluster`) the walk's units are the master stratum's clusters instead of
//! its questions ([`super::walk`], "Units"): allocation a takes as many cluster draws as its
//! sub-panel touches clusters, a drawn cluster brings its sub-panel questions along, and the
//! replicate's SE is the cluster-level SE of the drawn clusters (`measure_clustered`;
//! docs/METHODS.md, "Clustered allocations").
//!
//! In an unbalanced stratum the sub-panel takes trajectories and reads by label: the
//! stratum's first T trajectory labels and first R read labels (in label order), as each
//! question has them. A question lacking one (a failed trajectory 0 is not replaced by
//! trajectory 1) keeps what it has and is counted in [`AllocationResult::short`]; one with
//! no kept read has no score and is left out of the SE. Where labels are unique per question
//! they cannot name a failure, and each question's first T (first R) are taken instead
//! ([`MasterStratum::trajectories_by`]; docs/METHODS.md, "Unbalanced panels (`allocate`)").

use serde::Serialize;

use super::walk::{
    WalkBackend, WalkJob, WalkStratum, CLUSTER_WALK_COLUMNS, MAX_ALLOCATIONS, WALK_COLUMNS,
};
use crate::bootstrap::analysis::{cluster_draw_note, panel_clusters};
use crate::bootstrap::report::few_clusters_note;
use crate::components::forecast::split_questions;
use crate::components::reml::Shape;
use crate::components::variance::nested_stratum;
use crate::costs::accounting::{CellCosts, Currency, PricedLedger};
use crate::costs::panel_costs::question_costs;
use crate::document::{Engine, Report};
use crate::panel::{Design, Panel, Stratum, StratumStats};
use crate::resample::clusters::ClusterDraw;
use crate::resample::columns::CenteredColumns;
use crate::resample::summary::{percentile_interval, Interval, NO_SPREAD_NOTE};
use crate::resample::Resampling;
use crate::rng::domain;
use crate::rng::philox::philox4x32_10;
use crate::rng::stream::seed_key;
use crate::{Error, Result};

/// One allocation as asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocationSpec {
    pub name: String,
    pub design: Design,
}

impl std::str::FromStr for AllocationSpec {
    type Err = Error;
    /// Parses `NAME=Q:T:R`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::Usage(format!(
                "bad allocation '{s}': expected NAME=Q:T:R with positive integers, e.g. A=446:2:1"
            ))
        };
        let (name, rest) = s.split_once('=').ok_or_else(bad)?;
        let design: Design = rest.parse().map_err(|_| bad())?;
        if name.trim().is_empty() {
            return Err(bad());
        }
        Ok(AllocationSpec {
            name: name.trim().to_string(),
            design,
        })
    }
}

/// Question order within each stratum: file order, or a seeded shuffle.
///
/// The shuffle sorts questions by words 0 and 1 of the Philox block at counter
/// [`domain::allocation_order`]`(index, stratum)` = (index, stratum, 0, 0xA110C) under the
/// key of `seed`: deterministic, and independent of the bootstrap streams (whose fourth
/// counter word is a retry count, never this large).
pub fn question_order(strata: &[Stratum], seed: Option<u64>) -> Vec<Vec<usize>> {
    strata
        .iter()
        .enumerate()
        .map(|(d, s)| {
            let mut idx: Vec<usize> = (0..s.q()).collect();
            if let Some(seed) = seed {
                let key = seed_key(seed);
                idx.sort_by_key(|&i| {
                    let w = philox4x32_10(domain::allocation_order(i as u32, d as u32), key);
                    ((w[0] as u64) << 32 | w[1] as u64, i)
                });
            }
            idx
        })
        .collect()
}

/// Measured quantities of one allocation.
#[derive(Debug, Clone, Serialize)]
pub struct AllocationResult {
    pub name: String,
    pub questions: usize,
    pub per_stratum: Vec<(String, usize)>,
    pub trajectories: usize,
    pub reads: usize,
    /// With clusters (`--cluster`): per stratum, the clusters the sub-panel's questions
    /// belong to (the units its SE and its bootstrap count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<(String, usize)>>,
    pub estimate: f64,
    pub se: f64,
    pub model_tokens: f64,
    /// Model fees plus search fees at each sweep price.
    pub fees_usd: Vec<f64>,
    pub var_x_tokens: f64,
    pub var_x_fees: Vec<f64>,
    /// Unbalanced master panel only: per stratum, the questions of this sub-panel with
    /// fewer than T trajectories, or a trajectory among its first T with fewer than R
    /// reads (kept with what they have).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short: Option<Vec<(String, usize)>>,
}

/// A ratio or reduction with its interval and whether the interval excludes the null.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Compared {
    pub value: f64,
    pub ci: Interval,
    /// The interval excludes the null value (0 for reductions, 1 for ratios).
    pub resolved: bool,
}

/// A pair comparison, A against B.
#[derive(Debug, Clone, Serialize)]
pub struct PairResult {
    pub a: String,
    pub b: String,
    /// 1 − SE_A/SE_B.
    pub se_reduction: Compared,
    /// (SE²_A · tokens_A) / (SE²_B · tokens_B).
    pub var_x_tokens_ratio: Compared,
    /// The same with fees, at each sweep price.
    pub var_x_fees_ratio: Vec<Compared>,
    /// Pearson correlation of the replicate SEs of A and B over the paired bootstrap
    /// (replicates where both are finite): how much the pairing removes from the
    /// comparisons' spread.
    pub se_correlation: f64,
    /// Why the pair's comparisons are undefined (`null`), if any is: B's measured SE is 0
    /// (its scores do not vary), or an SE or a cost is not positive and finite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined: Option<String>,
}

/// One stratum of an unbalanced master panel: whether it is balanced, and its design
/// (questions, and min/mean/max trajectories per question and reads per trajectory).
#[derive(Debug, Clone, Serialize)]
pub struct MasterStratum {
    pub name: String,
    /// How the allocations are compared: `measured SE (no components)`.
    pub method: &'static str,
    pub balanced: bool,
    /// `None` where the stratum's design cannot be read (no nested fit).
    pub shape: Option<Shape>,
    /// How an allocation's T trajectories are taken: `label` (the stratum's first T
    /// trajectory labels; a question without one of them is short) or `position` (each
    /// question's first T, where labels are unique per question and cannot say which
    /// trajectory failed).
    pub trajectories_by: &'static str,
    /// The same for reads.
    pub reads_by: &'static str,
}

/// The whole comparison: the `stats allocate` report. Its serialization is the
/// document's body (`docs/json.md`, `allocate`).
#[derive(Debug, Clone, Serialize)]
pub struct AllocateReport {
    pub search_prices: Vec<f64>,
    pub allocations: Vec<AllocationResult>,
    pub pairs: Vec<PairResult>,
    /// An unbalanced master panel's design per stratum (absent when it is balanced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master_design: Option<Vec<MasterStratum>>,
    /// What a reader should know before the numbers: [`NO_SPREAD_NOTE`] when the master
    /// panel's outcome is constant (every measured SE and interval is then 0 by arithmetic).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The paired bootstrap's backend (the walk's: `cpu` or `gpu`), adapter,
    /// replicates, seed and confidence (in the document's `run`, not its body).
    #[serde(skip)]
    pub engine: Engine,
}

impl Report for AllocateReport {
    fn engine(&self) -> Engine {
        self.engine.clone()
    }
}

/// Per-question columns of every allocation (one row per master question, zeros outside
/// its sub-panel), summed over each replicate's draws.
const DEV: usize = 0;
const DEV2: usize = 1;
const TOKENS: usize = 2;
const MODEL_USD: usize = 3;
const SEARCHES: usize = 4;
/// 1 for a master question in the allocation's sub-panel, else 0 (then every column is 0).
const MEMBER: usize = 5;
const COLUMNS: usize = 6;

/// Per-cluster columns of every allocation with clusters (one row per master cluster,
/// zeros for a cluster without a question of the sub-panel), summed over each replicate's
/// cluster draws: S_g = Σ_{q ∈ g} (ȳ_q − m_ad) over the sub-panel's questions of cluster g,
/// S_g², M_g (those questions), S_g·M_g, M_g², and the questions' tokens, model dollars and
/// searches.
const C_S: usize = 0;
const C_S2: usize = 1;
const C_M: usize = 2;
const C_SM: usize = 3;
const C_M2: usize = 4;
const C_TOKENS: usize = 5;
const C_MODEL_USD: usize = 6;
const C_SEARCHES: usize = 7;
/// 1 for a cluster holding a question of the sub-panel (summed: the clusters drawn).
const C_MEMBER: usize = 8;
const CLUSTER_COLUMNS: usize = 9;

/// The cluster rows of one allocation in one stratum from its question rows: cluster
/// `of[q]` of every master question q (numbered `0..g` as the shared cluster draw numbers
/// them, [`ClusterDraw`]); a cluster's row sums its member questions' columns.
fn cluster_rows(question_rows: &[Vec<f64>], of: &[u32], g: usize) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; CLUSTER_COLUMNS]; g];
    for (row, &c) in question_rows.iter().zip(of) {
        if row[MEMBER] == 1.0 {
            let o = &mut out[c as usize];
            o[C_S] += row[DEV];
            o[C_M] += 1.0;
            o[C_TOKENS] += row[TOKENS];
            o[C_MODEL_USD] += row[MODEL_USD];
            o[C_SEARCHES] += row[SEARCHES];
        }
    }
    for o in &mut out {
        if o[C_M] > 0.0 {
            o[C_S2] = o[C_S] * o[C_S];
            o[C_SM] = o[C_S] * o[C_M];
            o[C_M2] = o[C_M] * o[C_M];
            o[C_MEMBER] = 1.0;
        }
    }
    out
}

/// SE, tokens, model dollars and searches of an allocation from its per-stratum sums
/// ([`measure`] for questions, [`measure_clustered`] for clusters).
type Measure = fn(&[Vec<f64>], &[f64]) -> (f64, f64, f64, f64);

/// Fewest clusters per stratum of a clustered master panel at which allocate's pair
/// intervals held their level in the simulation of docs/COVERAGE.md ("Cluster
/// bootstrap": 0.937 and 0.948 at 12 clusters, 0.925 and 0.931 at 6); below it the output
/// says they undercover.
pub const FEW_MASTER_CLUSTERS: usize = 12;

/// SE, tokens and fee parts of one allocation from per-stratum sums of its cluster rows
/// ([`cluster_rows`]) over g_d drawn clusters (the C_MEMBER sum; at the data each of the
/// sub-panel's clusters once): with Q*_d = Σ M_g questions and ē = Σ S_g / Q*_d,
/// SE²_d = g_d/(g_d − 1) · Σ (S_g − M_g ē)² / Q*_d², the cluster-robust SE of the
/// stratum's mean of question means (as `variance --cluster` gives it; the square expanded
/// as Σ S² − 2ē Σ S·M + ē² Σ M²), combined as SE² = Σ_d w_d² SE²_d.
fn measure_clustered(sums: &[Vec<f64>], weights: &[f64]) -> (f64, f64, f64, f64) {
    let d2 = (sums.len() * sums.len()) as f64;
    let mut se2 = 0.0;
    let (mut tok, mut usd, mut searches) = (0.0, 0.0, 0.0);
    for (d, s) in sums.iter().enumerate() {
        // Counts are sums of integers: round them (exact in f64, kept as a guard).
        let (g, q) = (s[C_MEMBER].round(), s[C_M].round());
        let e = s[C_S] / q;
        let ss = (s[C_S2] - 2.0 * e * s[C_SM] + e * e * s[C_M2]).max(0.0);
        let v = g / (g - 1.0) * ss / (q * q);
        se2 += weights.get(d).map_or(v, |w| w * w * v);
        tok += s[C_TOKENS];
        usd += s[C_MODEL_USD];
        searches += s[C_SEARCHES];
    }
    let se2 = if weights.is_empty() { se2 / d2 } else { se2 };
    (se2.sqrt(), tok, usd, searches)
}

/// SE, tokens and fee parts of one allocation from per-stratum sums: per stratum d with
/// n_d sub-panel questions (in a replicate: its n_d draws, the MEMBER column's sum),
/// SE² = Σ_d w_d² s²_d/n_d with s²_d = (Σ dev² − (Σ dev)²/n_d)/(n_d − 1) and the strata's
/// `weights` w_d (empty: equal, SE² = Σ_d s²_d/n_d / D²).
fn measure(sums: &[Vec<f64>], weights: &[f64]) -> (f64, f64, f64, f64) {
    let d2 = (sums.len() * sums.len()) as f64;
    let mut se2 = 0.0;
    let (mut tok, mut usd, mut searches) = (0.0, 0.0, 0.0);
    for (d, s) in sums.iter().enumerate() {
        // The count is a sum of 0/1 values: round it (exact in f64, kept as a guard).
        let n = s[MEMBER].round();
        let v = (s[DEV2] - s[DEV] * s[DEV] / n) / (n - 1.0) / n;
        se2 += weights.get(d).map_or(v, |w| w * w * v);
        tok += s[TOKENS];
        usd += s[MODEL_USD];
        searches += s[SEARCHES];
    }
    let se2 = if weights.is_empty() { se2 / d2 } else { se2 };
    (se2.sqrt(), tok, usd, searches)
}

/// How an unbalanced stratum's cells are taken for an allocation: by label (the stratum's
/// first T trajectory labels and first R read labels, in label order) where labels are
/// shared across questions, else by position in each question's own label order.
#[derive(Debug, Clone)]
struct Pick {
    /// Trajectory label ids kept; `None`: each question's first T trajectories.
    trajectories: Option<Vec<u32>>,
    /// Read label ids kept; `None`: each trajectory's first R reads.
    reads: Option<Vec<u32>>,
}

/// Sorts label ids as the loader orders a stratum's labels: numerically when every one is
/// an integer, else by text.
fn sort_labels(ids: &mut [u32], names: &[String]) {
    let name = |i: u32| names.get(i as usize).map_or("", String::as_str);
    if ids.iter().all(|&i| name(i).parse::<i64>().is_ok()) {
        ids.sort_by_key(|&i| name(i).parse::<i64>().unwrap_or(0));
    } else {
        ids.sort_by(|&a, &b| name(a).cmp(name(b)));
    }
}

impl Pick {
    /// The pick of `t` trajectories and `r` reads in unbalanced stratum `s`. Labels are
    /// shared when their union in the stratum is no larger than the largest question (or
    /// trajectory), as the loader decides; labels unique per question (uuids) cannot say
    /// which trajectory failed, so those are taken by position.
    fn new(s: &Stratum, t: usize, r: usize) -> Pick {
        let (Some(n), Some(l)) = (&s.nested, &s.labels) else {
            return Pick {
                trajectories: None,
                reads: None,
            };
        };
        let union = |ids: &[u32]| {
            let mut v = ids.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        };
        let max_t = n
            .traj_start
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        let max_r = n
            .read_start
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        let pick = |mut ids: Vec<u32>, max: usize, names: &[String], k: usize| {
            (ids.len() <= max).then(|| {
                sort_labels(&mut ids, names);
                ids.truncate(k);
                ids
            })
        };
        Pick {
            trajectories: pick(union(&l.trajectory), max_t, &l.trajectory_names, t),
            reads: pick(union(&l.read), max_r, &l.read_names, r),
        }
    }

    /// How trajectories and reads are taken: `label` or `position`.
    fn taken_by(&self) -> (&'static str, &'static str) {
        let by = |p: bool| if p { "position" } else { "label" };
        (by(self.trajectories.is_none()), by(self.reads.is_none()))
    }

    /// Question `q`'s kept cells: per kept trajectory, its index in the question's own order
    /// with the indices of its kept reads.
    fn kept(&self, s: &Stratum, q: usize, t: usize, r: usize) -> Vec<(usize, Vec<usize>)> {
        let trajs = s.trajectories_of(q);
        let (Some(n), Some(l)) = (&s.nested, &s.labels) else {
            return (0..trajs.len().min(t))
                .map(|k| (k, (0..trajs[k].len().min(r)).collect()))
                .collect();
        };
        let first = n.traj_start[q];
        trajs
            .iter()
            .enumerate()
            .filter(|&(k, _)| match &self.trajectories {
                Some(ids) => ids.contains(&l.trajectory[first + k]),
                None => k < t,
            })
            .map(|(k, reads)| {
                let r0 = n.read_start[first + k];
                let kept = (0..reads.len())
                    .filter(|&j| match &self.reads {
                        Some(ids) => ids.contains(&l.read[r0 + j]),
                        None => j < r,
                    })
                    .collect();
                (k, kept)
            })
            .collect()
    }
}

/// One sub-panel question of an unbalanced stratum: its mean over the kept cells (`None`
/// when it has none) and its cost in each currency.
type Member = (Option<f64>, [f64; 3]);

/// The sub-panel of an unbalanced stratum for allocation `a`: each of questions `qs` with
/// trajectories 0..T−1 and reads 0..R−1 by label ([`Pick`]). A question's mean is the mean
/// of its kept trajectories' means (as `stats variance` averages unbalanced questions);
/// one that lacks any of the T × R cells is short, and one with no kept read at all has no
/// mean (it stays in the count of short questions, out of the SE). Costs are the kept
/// cells' (a kept trajectory without kept reads costs its planner and searches).
fn unbalanced_members(
    s: &Stratum,
    qs: &[usize],
    a: &AllocationSpec,
    cells: &[&CellCosts; 3],
    ledger: &std::path::Path,
) -> Result<(Vec<Member>, usize)> {
    let (t, r) = (a.design.trajectories, a.design.reads);
    let pick = Pick::new(s, t, r);
    let mut short = 0;
    let members = qs
        .iter()
        .map(|&q| {
            let trajs = s.trajectories_of(q);
            let kept = pick.kept(s, q, t, r);
            if kept.len() < t || kept.iter().any(|(_, rs)| rs.len() < r) {
                short += 1;
            }
            let means: Vec<f64> = kept
                .iter()
                .filter(|(_, rs)| !rs.is_empty())
                .map(|(k, rs)| rs.iter().map(|&j| trajs[*k][j]).sum::<f64>() / rs.len() as f64)
                .collect();
            let mean = (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64);
            let mut cost = [0.0; 3];
            for (c, x) in cells.iter().zip(&mut cost) {
                for (k, rs) in &kept {
                    let v = question_costs(s, c, [q], &[*k], rs, ledger)?;
                    *x += v[0].trajectories + v[0].reads;
                }
            }
            Ok((mean, cost))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((members, short))
}

/// What the allocations of [`compare`] are priced with.
#[derive(Debug, Clone, Copy)]
pub struct AllocationCosts<'a> {
    /// The ledger's per-cell costs in tokens, model dollars (search at 0) and search
    /// requests, in that order.
    pub cells: [&'a CellCosts; 3],
    /// Search prices (USD per 1,000 requests) the fees are compared at.
    pub sweep: &'a [f64],
    /// The ledger file, named in mismatch errors.
    pub ledger: &'a std::path::Path,
    /// c_Q, a cost per question (judging, annotation, set-up) in tokens and in model
    /// dollars, added to every question of every allocation (issue #31).
    pub question: [f64; 2],
}

/// Compares allocations (see the module docs), priced with `costs`, over a paired question
/// bootstrap of `resampling.replicates` replicates from `resampling.seed` with central
/// percentile intervals at `resampling.confidence`; every replicate's sub-panel has the
/// allocation's size (`exact_size_replicates`), walked on `walk` (CPU or GPU, the same
/// sums bit for bit). Each allocation's estimate is Σ_d w_d ȳ_d and its SE² Σ_d w_d² SE²_d
/// with the strata's `stratum_weights` ([`crate::panel::Panel::weights`]; empty: equal, 1/D).
///
/// With `clusters` (the master questions' clusters, the shared cluster draw's numbering)
/// each SE is the cluster-level SE of the sub-panel (`measure_clustered`) and the paired
/// bootstrap walks clusters: each allocation takes as many cluster draws as its sub-panel
/// has clusters, a drawn cluster bringing its sub-panel questions along. The estimates and
/// costs are the same with and without clusters.
///
/// # Errors
/// [`Error::Usage`] when an allocation asks for more questions, trajectories or reads than
/// the master panel has, or leaves a stratum with fewer than 2 questions (with clusters,
/// fewer than 2 clusters); ledger mismatches.
#[allow(clippy::too_many_arguments)] // the master panel's strata and their weights go together
pub fn compare(
    strata: &[Stratum],
    stratum_weights: &[f64],
    specs: &[AllocationSpec],
    order: &[Vec<usize>],
    clusters: Option<&ClusterDraw>,
    costs: &AllocationCosts<'_>,
    resampling: &Resampling,
    walk: &dyn WalkBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<AllocateReport> {
    let AllocationCosts {
        ref cells,
        sweep,
        ledger,
        question,
    } = *costs;
    let Resampling {
        seed,
        replicates,
        confidence,
    } = *resampling;
    let weights: Vec<usize> = strata.iter().map(Stratum::q).collect();
    let mut results = Vec::new();
    let mut rows_per_alloc = Vec::with_capacity(specs.len());
    for a in specs {
        let counts = split_questions(a.design.questions, &weights);
        let mut rows = Vec::with_capacity(strata.len());
        let mut estimate = 0.0;
        let mut short = Vec::new();
        let mut touched = Vec::new();
        let mut crows = Vec::new();
        for (d, ((s, &qn), ord)) in strata.iter().zip(&counts).zip(order).enumerate() {
            let (max_t, max_r) = if s.is_balanced() {
                (s.t(), s.r())
            } else {
                // The largest design any question has: an allocation may ask for that much.
                (0..s.q()).fold((0, 0), |(t, r), q| {
                    let tr = s.trajectories_of(q);
                    (
                        t.max(tr.len()),
                        tr.iter().map(|x| x.len()).fold(r, usize::max),
                    )
                })
            };
            if qn > s.q() || a.design.trajectories > max_t || a.design.reads > max_r {
                return Err(Error::Usage(format!(
                    "allocation {} asks for {qn} questions, {} trajectories, {} reads in stratum '{}', which has {}, {}, {}",
                    a.name, a.design.trajectories, a.design.reads, s.name, s.q(), max_t, max_r
                )));
            }
            let qs = &ord[..qn];
            // Sub-panel members by master question index: the mean and the three costs.
            let members: Vec<(usize, Member)> = if s.is_balanced() {
                let traj: Vec<usize> = (0..a.design.trajectories).collect();
                let reads: Vec<usize> = (0..a.design.reads).collect();
                let st = StratumStats::from_subset(s, qs.iter().copied(), &traj, &reads);
                let per_cur: Vec<Vec<f64>> = cells
                    .iter()
                    .map(|c| {
                        question_costs(s, c, qs.iter().copied(), &traj, &reads, ledger)
                            .map(|v| v.iter().map(|x| x.trajectories + x.reads).collect())
                    })
                    .collect::<Result<_>>()?;
                qs.iter()
                    .zip(&st.questions)
                    .enumerate()
                    .map(|(i, (&q, x))| {
                        (
                            q,
                            (Some(x.mean), [per_cur[0][i], per_cur[1][i], per_cur[2][i]]),
                        )
                    })
                    .collect()
            } else {
                let (m, n_short) = unbalanced_members(s, qs, a, cells, ledger)?;
                short.push((s.name.clone(), n_short));
                qs.iter().copied().zip(m).collect()
            };
            let with_data: Vec<f64> = members.iter().filter_map(|(_, (m, _))| *m).collect();
            if with_data.len() < 2 {
                return Err(Error::Usage(format!(
                    "allocation {} leaves stratum '{}' with {} question(s) with scores; need at least 2",
                    a.name,
                    s.name,
                    with_data.len()
                )));
            }
            let mean = with_data.iter().sum::<f64>() / with_data.len() as f64;
            estimate += match stratum_weights.get(d) {
                Some(w) => w * mean,
                None => mean / strata.len() as f64,
            };
            // One row per master question: the sub-panel's members carry their values and a
            // 1, every other question zeros, so one master draw serves every allocation.
            let mut stratum_rows = vec![vec![0.0; COLUMNS]; s.q()];
            for (q, (m, cost)) in &members {
                if let Some(m) = m {
                    let d = m - mean;
                    // c_Q, the cost of each question whatever its cells (tokens, model dollars).
                    stratum_rows[*q] = vec![
                        d,
                        d * d,
                        cost[0] + question[0],
                        cost[1] + question[1],
                        cost[2],
                        1.0,
                    ];
                }
            }
            if let Some(c) = clusters {
                // The units are clusters: those holding a question of the sub-panel.
                let st = &c.strata()[d];
                let r = cluster_rows(&stratum_rows, st.of(), st.count());
                let g = r.iter().filter(|x| x[C_MEMBER] == 1.0).count();
                if g < 2 {
                    return Err(Error::Usage(format!(
                        "allocation {} leaves stratum '{}' with {g} cluster(s) with scores; \
                         the cluster-level SE and the cluster bootstrap need at least 2",
                        a.name, s.name
                    )));
                }
                touched.push((s.name.clone(), g));
                crows.push(r);
            }
            rows.push(stratum_rows);
        }
        let (se, tok, usd, searches) = if clusters.is_some() {
            let cols = CenteredColumns::new(&crows)?;
            measure_clustered(cols.exact_sums(), stratum_weights)
        } else {
            measure(CenteredColumns::new(&rows)?.exact_sums(), stratum_weights)
        };
        let fees: Vec<f64> = sweep.iter().map(|p| usd + searches * p / 1000.0).collect();
        rows_per_alloc.push(if clusters.is_some() { crows } else { rows });
        results.push(AllocationResult {
            name: a.name.clone(),
            questions: counts.iter().sum(),
            per_stratum: strata
                .iter()
                .map(|s| s.name.clone())
                .zip(counts.iter().copied())
                .collect(),
            trajectories: a.design.trajectories,
            reads: a.design.reads,
            clusters: clusters.is_some().then_some(touched),
            estimate,
            se,
            model_tokens: tok,
            var_x_tokens: se * se * tok,
            var_x_fees: fees.iter().map(|f| se * se * f).collect(),
            fees_usd: fees,
            short: strata.iter().any(|s| !s.is_balanced()).then(|| {
                strata
                    .iter()
                    .map(|s| {
                        let n = short.iter().find(|x| x.0 == s.name).map_or(0, |x| x.1);
                        (s.name.clone(), n)
                    })
                    .collect()
            }),
        });
    }
    let (columns, measured): (usize, Measure) = match clusters {
        Some(_) => (CLUSTER_WALK_COLUMNS, measure_clustered),
        None => (WALK_COLUMNS, measure),
    };
    let reps_per_alloc: Vec<Vec<(f64, f64, f64, f64)>> =
        exact_size_replicates(&rows_per_alloc, columns, seed, replicates, walk, progress)?
            .into_iter()
            .map(|reps| reps.iter().map(|r| measured(r, stratum_weights)).collect())
            .collect();
    let interval = |v: Vec<f64>, value: f64, null: f64| {
        let mut v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let ci = percentile_interval(&v, confidence);
        Compared {
            value,
            ci,
            resolved: ci.excludes(null),
        }
    };
    let mut pairs = Vec::new();
    for i in 0..specs.len() {
        for j in i + 1..specs.len() {
            let (a, b) = (&results[i], &results[j]);
            let (ra, rb) = (&reps_per_alloc[i], &reps_per_alloc[j]);
            let fee = |m: &(f64, f64, f64, f64), p: f64| m.2 + m.3 * p / 1000.0;
            pairs.push(PairResult {
                a: a.name.clone(),
                b: b.name.clone(),
                se_reduction: interval(
                    ra.iter().zip(rb).map(|(x, y)| 1.0 - x.0 / y.0).collect(),
                    1.0 - a.se / b.se,
                    0.0,
                ),
                var_x_tokens_ratio: interval(
                    ra.iter()
                        .zip(rb)
                        .map(|(x, y)| (x.0 * x.0 * x.1) / (y.0 * y.0 * y.1))
                        .collect(),
                    a.var_x_tokens / b.var_x_tokens,
                    1.0,
                ),
                var_x_fees_ratio: sweep
                    .iter()
                    .enumerate()
                    .map(|(k, &p)| {
                        interval(
                            ra.iter()
                                .zip(rb)
                                .map(|(x, y)| (x.0 * x.0 * fee(x, p)) / (y.0 * y.0 * fee(y, p)))
                                .collect(),
                            a.var_x_fees[k] / b.var_x_fees[k],
                            1.0,
                        )
                    })
                    .collect(),
                se_correlation: correlation(ra.iter().map(|x| x.0).zip(rb.iter().map(|y| y.0))),
                undefined: None,
            });
        }
    }
    for p in &mut pairs {
        p.undefined = pair_reason(&results, p);
    }
    let master_design = strata.iter().any(|s| !s.is_balanced()).then(|| {
        strata
            .iter()
            .map(|s| {
                let (trajectories_by, reads_by) = Pick::new(s, 0, 0).taken_by();
                MasterStratum {
                    name: s.name.clone(),
                    method: "measured SE (no components)",
                    balanced: s.is_balanced(),
                    shape: nested_stratum(s).map(|n| n.shape()).ok(),
                    trajectories_by,
                    reads_by,
                }
            })
            .collect()
    });
    let mut notes = Vec::new();
    if let Some(c) = clusters {
        notes.push(format!(
            "{}; each allocation's SE is the cluster-level SE of its sub-panel, and its \
             replicates take as many cluster draws as it has clusters",
            cluster_draw_note(&c.counts()).replacen("the bootstrap", "the paired bootstrap", 1)
        ));
        let least: Vec<usize> = results
            .iter()
            .flat_map(|r| r.clusters.iter().flatten().map(|x| x.1))
            .collect();
        notes.extend(few_clusters_note(&least));
        if let Some(g) = c
            .counts()
            .into_iter()
            .min()
            .filter(|&g| g < FEW_MASTER_CLUSTERS)
        {
            notes.push(format!(
                "only {g} clusters in a stratum of the master panel: the clustered pair \
                 intervals undercover below {FEW_MASTER_CLUSTERS} (0.925 and 0.931 at 6; \
                 docs/COVERAGE.md, \"Cluster bootstrap\"); read them as too narrow"
            ));
        }
    }
    Ok(AllocateReport {
        search_prices: sweep.to_vec(),
        allocations: results,
        pairs,
        master_design,
        notes,
        engine: Engine::resampled(
            walk.name(),
            walk.description(),
            u64::from(replicates),
            seed,
            confidence,
        ),
    })
}

/// The exact-size paired bootstrap (issue #45): per replicate, per allocation, per stratum,
/// the column sums over the allocation's draws, `[allocation][replicate][stratum][column]`,
/// walked on `walk` ([`super::walk`], whose contract fixes every draw and every add).
///
/// `rows[a][d][q]` is master unit q's row for allocation a in stratum d: `columns` values
/// walked, then a member flag (1 for a unit of its sub-panel with a score, else a row of
/// zeros). The units are questions ([`WALK_COLUMNS`], the flag MEMBER) or, with clusters,
/// the master stratum's clusters ([`CLUSTER_WALK_COLUMNS`], the flag C_MEMBER; Q_d then
/// reads G_d, the draws are cluster draws and "question" reads "cluster" below). Replicate b walks the
/// draws x_0, x_1, … of stratum d: x_j = draw_index(seed, b, d, j, Q_d), uniform on the
/// master's Q_d questions and, for j < Q_d, exactly the draws every engine job over the
/// master rows makes. Allocation a takes x_j when it is one of its n_ad members and it has
/// taken fewer than n_ad, until every allocation has n_ad. So:
///
/// * every replicate's sub-panel has exactly n_ad draws (MEMBER sums to n_ad);
/// * given the count, draws landing in a set are uniform over it, so they are n_ad
///   independent uniform draws over the sub-panel: its ordinary bootstrap;
/// * a draw landing in sub-panels A ⊂ B counts in both while neither is full, so nested
///   sub-panels share all but about σ·φ(0) = √(n_B p (1 − p))·0.40 of A's draws
///   (p = n_A/n_B), not the fraction n_A/n_B a quantile coupling would share;
/// * an allocation holding every master question takes x_0 … x_{Q_d − 1}.
///
/// The walk sums each column centred on its mean over the allocation's members, in f32 (the
/// arithmetic a WGSL kernel has); the sum is then S_c + n_ad·centre_c in f64, as the resample
/// engine's columns are uncentred ([`CenteredColumns::resample`]).
///
/// # Errors
/// Those of the walk backend (more than [`super::walk::MAX_ALLOCATIONS`] allocations, device
/// failures).
fn exact_size_replicates(
    rows: &[Vec<Vec<Vec<f64>>>],
    columns: usize,
    seed: u64,
    replicates: u32,
    walk: &dyn WalkBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Vec<Vec<Vec<f64>>>>> {
    let n_alloc = rows.len();
    let n_strata = rows.first().map_or(0, Vec::len);
    if n_alloc > MAX_ALLOCATIONS {
        return Err(Error::Usage(format!(
            "allocate compares at most {MAX_ALLOCATIONS} allocations at once, got {n_alloc}"
        )));
    }
    // Per stratum, per allocation: the columns' centres over its members.
    let mut centres = vec![vec![vec![0.0f64; columns]; n_alloc]; n_strata];
    let mut strata = Vec::with_capacity(n_strata);
    for d in 0..n_strata {
        let q = rows[0][d].len();
        let mut members = vec![0u32; q];
        let mut need = vec![0u32; n_alloc];
        for a in 0..n_alloc {
            let mut sum = vec![0.0f64; columns];
            for (x, row) in rows[a][d].iter().enumerate() {
                if row[columns] == 1.0 {
                    members[x] |= 1 << a;
                    need[a] += 1;
                    for (s, v) in sum.iter_mut().zip(row) {
                        *s += v;
                    }
                }
            }
            for (c, s) in centres[d][a].iter_mut().zip(&sum) {
                *c = if need[a] > 0 {
                    s / f64::from(need[a])
                } else {
                    0.0
                };
            }
        }
        let mut values = vec![0.0f32; q * n_alloc * columns];
        for (x, v) in values.chunks_exact_mut(n_alloc * columns).enumerate() {
            for a in 0..n_alloc {
                if members[x] >> a & 1 == 1 {
                    for c in 0..columns {
                        v[a * columns + c] = (rows[a][d][x][c] - centres[d][a][c]) as f32;
                    }
                }
            }
        }
        strata.push(WalkStratum {
            members,
            need,
            rows: values,
        });
    }
    let job = WalkJob {
        strata,
        allocations: n_alloc,
        columns,
        seed,
        replicates: 0..replicates,
    };
    let sums = walk.walk(&job, &|r| progress(r * n_alloc as u64))?;
    let per = n_strata * n_alloc * columns;
    Ok((0..n_alloc)
        .map(|a| {
            sums.chunks_exact(per)
                .map(|rep| {
                    (0..n_strata)
                        .map(|d| {
                            let n = f64::from(job.strata[d].need[a]);
                            let s = &rep[(d * n_alloc + a) * columns..][..columns];
                            let mut v: Vec<f64> = s
                                .iter()
                                .zip(&centres[d][a])
                                .map(|(&x, c)| f64::from(x) + n * c)
                                .collect();
                            v.push(n);
                            v
                        })
                        .collect()
                })
                .collect()
        })
        .collect())
}

/// Pearson correlation of the pairs `xy` where both are finite (NaN with fewer than 2).
fn correlation(xy: impl Iterator<Item = (f64, f64)>) -> f64 {
    let v: Vec<(f64, f64)> = xy.filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    let n = v.len() as f64;
    let (mx, my) = (
        v.iter().map(|p| p.0).sum::<f64>() / n,
        v.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &v {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if v.len() < 2 {
        return f64::NAN;
    }
    sxy / (sxx * syy).sqrt()
}

/// Settings of [`allocate`].
#[derive(Debug, Clone, PartialEq)]
pub struct AllocateJob {
    /// Take questions in a seeded shuffled order ([`question_order`]); `None`: file order.
    pub order_seed: Option<u64>,
    /// Search prices (USD per 1,000 requests) to compare fees at; `None`: the prices file's
    /// sweep, else its point price.
    pub search_prices: Option<Vec<f64>>,
    /// The paired question bootstrap: seed, replicates and the confidence of the central
    /// percentile intervals.
    pub resampling: Resampling,
    /// c_Q per question in tokens and in model dollars ([`AllocationCosts::question`]).
    pub question_cost: [f64; 2],
}

/// `stats allocate` as one call: the allocations `specs` of the master `panel` compared
/// ([`compare`]) with their costs from `ledger` (with one selector analysed, only the rows
/// it pays for): the ledger's rows are billed with its prices and priced per cell in
/// tokens, model dollars (search at 0) and search requests, so the fees at any search
/// price p are model dollars + p/1000 × searches.
///
/// # Errors
/// [`Error::Usage`] without prices; the errors of [`crate::costs::accounting::for_selector`],
/// [`crate::costs::accounting::bill`], [`CellCosts::new`] and [`compare`].
pub fn allocate(
    panel: &Panel,
    specs: &[AllocationSpec],
    ledger: &PricedLedger<'_>,
    settings: &AllocateJob,
    walk: &dyn WalkBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<AllocateReport> {
    let Some(prices) = ledger.prices else {
        return Err(Error::Usage(
            "comparing allocations on fees needs prices".into(),
        ));
    };
    let (entries, bills) = ledger.billed(panel.selector.as_deref())?;
    let sweep = match &settings.search_prices {
        Some(s) => s.clone(),
        None if !prices.search.sweep_usd_per_1000.is_empty() => {
            prices.search.sweep_usd_per_1000.clone()
        }
        None => vec![prices.search.usd_per_1000],
    };
    let cells = |c| CellCosts::new(&entries, &bills, c, ledger.path);
    let (tok, usd, searches) = (
        cells(Currency::Tokens)?,
        cells(Currency::Usd {
            search_usd_per_1000: 0.0,
        })?,
        cells(Currency::Searches)?,
    );
    let order = question_order(&panel.strata, settings.order_seed);
    let clusters = panel_clusters(panel)
        .map(|c| ClusterDraw::new(&c))
        .transpose()?;
    let mut report = compare(
        &panel.strata,
        &panel.weights,
        specs,
        &order,
        clusters.as_ref(),
        &AllocationCosts {
            cells: [&tok, &usd, &searches],
            sweep: &sweep,
            ledger: ledger.path,
            question: settings.question_cost,
        },
        &settings.resampling,
        walk,
        progress,
    )?;
    if panel.outcome_is_constant() {
        // First: a constant panel's intervals have no width to read.
        report.notes.insert(0, NO_SPREAD_NOTE.to_string());
    }
    Ok(report)
}

/// Why a pair's comparisons are undefined (`null`), if any is: a reduction or ratio of SEs
/// that are 0 (the scores of B do not vary), or an SE or cost that is not positive and
/// finite.
fn pair_reason(allocations: &[AllocationResult], p: &PairResult) -> Option<String> {
    let all = std::iter::once(&p.se_reduction)
        .chain(std::iter::once(&p.var_x_tokens_ratio))
        .chain(&p.var_x_fees_ratio);
    if all.clone().all(|c| c.value.is_finite()) {
        return None;
    }
    let se = |n: &str| allocations.iter().find(|a| a.name == n).map(|a| a.se);
    Some(match se(&p.b) {
        Some(0.0) => format!(
            "the measured SE of {} is 0 (the scores do not vary), so reductions and ratios against it are undefined",
            p.b
        ),
        _ => "an SE or a cost is not positive and finite".into(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::allocation::walk::CpuWalk;
    use crate::document::{document, Inputs};
    use crate::rng::blocks::Generator;

    /// Rows of one allocation in one stratum of `q` master questions: its first `n` are
    /// members (value i + 1 in DEV, and 1 in MEMBER), the rest zeros.
    fn member_rows(q: usize, n: usize) -> Vec<Vec<f64>> {
        (0..q)
            .map(|i| {
                let mut r = vec![0.0; COLUMNS];
                if i < n {
                    r[DEV] = (i + 1) as f64;
                    r[MEMBER] = 1.0;
                }
                r
            })
            .collect()
    }

    /// Issue #45: every replicate's sub-panel has exactly the design's size (before, it was
    /// Binomial(Q_d, n_d/Q_d)); an allocation holding every master question draws exactly
    /// what an engine job over the master rows draws; the result does not depend on the
    /// thread count.
    #[test]
    fn every_replicate_sub_panel_has_the_designs_size() {
        let q = [23usize, 40];
        let sizes = [[23usize, 40], [9, 31], [2, 5], [14, 17]];
        let rows: Vec<Vec<Vec<Vec<f64>>>> = sizes
            .iter()
            .map(|n| (0..2).map(|d| member_rows(q[d], n[d])).collect())
            .collect();
        let reps = 300u32;
        let out = exact_size_replicates(&rows, WALK_COLUMNS, 7, reps, &CpuWalk, &|_| {}).unwrap();
        assert_eq!(out.len(), sizes.len());
        for (a, n) in sizes.iter().enumerate() {
            assert_eq!(out[a].len(), reps as usize);
            for rep in &out[a] {
                for d in 0..2 {
                    assert_eq!(rep[d][MEMBER], n[d] as f64, "allocation {a}, stratum {d}");
                }
            }
        }
        // Allocation 0 holds every master question: its draws are the engine's, whose
        // counts draw_counts gives (row i has DEV i + 1, so the sum is Σ counts_i (i + 1)).
        for b in [0u32, 1, 299] {
            for d in 0..2 {
                let mut counts = vec![0u32; q[d]];
                crate::resample::counts::draw_counts(
                    Generator::Scalar,
                    7,
                    b,
                    d as u32,
                    &mut counts,
                );
                let want: f64 = counts
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| f64::from(c) * (i + 1) as f64)
                    .sum();
                assert_eq!(out[0][b as usize][d][DEV], want);
            }
        }
        // The same on one thread; progress is replicates done × allocations, rising.
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| {
                exact_size_replicates(&rows, WALK_COLUMNS, 7, reps, &CpuWalk, &|_| {}).unwrap()
            });
        assert_eq!(one_thread, out);
        let seen = std::sync::atomic::AtomicU64::new(0);
        exact_size_replicates(&rows, WALK_COLUMNS, 7, 1000, &CpuWalk, &|d| {
            let before = seen.swap(d, std::sync::atomic::Ordering::Relaxed);
            assert!(d > before && d <= 1000 * 4);
        })
        .unwrap();
        assert_eq!(seen.into_inner(), 4000);
    }

    /// A cell cost map of stratum `d` (questions q0..q3, one trajectory `0` of one read
    /// `0`): `trajectory` per trajectory, `read` per read.
    fn cells(trajectory: f64, read: f64) -> CellCosts {
        let mut c = CellCosts::default();
        for q in 0..4 {
            let (d, q, t) = ("d".to_string(), format!("q{q}"), "0".to_string());
            c.trajectory
                .insert((d.clone(), q.clone(), t.clone()), trajectory);
            c.read.insert((d, q, t, "0".into()), read);
        }
        c
    }

    /// The document of a comparison (docs/json.md, `allocate`) by hand. Scores 0.5, 0.5,
    /// 0, 1; A = all 4 questions (SE² = 0.5/3/4 = 1/24), B = the first 2 (SE 0: the scores
    /// do not vary), C = the first 3 (mean 1/3, SE² = (1/6)/2/3 = 1/36); tokens 150 a
    /// question, so var × tokens is 25 (A) and 12.5 (C). The pair A–B is undefined, and
    /// says why; the engine is in `run` only.
    #[test]
    fn the_allocate_document_has_its_engine_in_run_and_each_undefined_pair_says_why() {
        let strata = vec![Stratum {
            name: "d".into(),
            questions: (0..4).map(|q| format!("q{q}")).collect(),
            trajectories: vec!["0".into()],
            reads: vec!["0".into()],
            y: vec![0.5, 0.5, 0.0, 1.0],
            ..Stratum::default()
        }];
        let specs: Vec<AllocationSpec> = ["A=4:1:1", "B=2:1:1", "C=3:1:1"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let (tok, usd, searches) = (cells(100.0, 50.0), cells(0.1, 0.05), cells(1.0, 0.0));
        let costs = AllocationCosts {
            cells: [&tok, &usd, &searches],
            sweep: &[0.0],
            ledger: std::path::Path::new("l.jsonl"),
            question: [0.0, 0.0],
        };
        let resampling = Resampling {
            seed: 5,
            replicates: 20,
            confidence: 0.8,
        };
        let cpu = CpuWalk;
        let order = question_order(&strata, None);
        let r = compare(
            &strata,
            &[],
            &specs,
            &order,
            None,
            &costs,
            &resampling,
            &cpu,
            &|_| {},
        )
        .unwrap();
        // A cost per question of 25 tokens and $0.01 adds Q·25 tokens and Q·$0.01 to each
        // allocation (A: 4 questions × (100 + 50) = 600 tokens → 700) and leaves the SEs.
        let with_q = AllocationCosts {
            question: [25.0, 0.01],
            ..costs
        };
        let rq = compare(
            &strata,
            &[],
            &specs,
            &order,
            None,
            &with_q,
            &resampling,
            &cpu,
            &|_| {},
        )
        .unwrap();
        for (a, b) in r.allocations.iter().zip(&rq.allocations) {
            let q = a.questions as f64;
            assert!((b.model_tokens - a.model_tokens - 25.0 * q).abs() < 1e-9);
            assert!((b.fees_usd[0] - a.fees_usd[0] - 0.01 * q).abs() < 1e-9);
            assert_eq!(a.se, b.se);
        }
        assert!((rq.allocations[0].model_tokens - 700.0).abs() < 1e-9);
        let d = document("allocate", Inputs::new(), &r);
        let run = &d["run"];
        assert_eq!(
            (&run["backend"], &run["adapter"]),
            (&json!("cpu"), &json!(cpu.description()))
        );
        assert_eq!(
            (&run["replicates"], &run["seed"], &run["confidence"]),
            (&json!(20), &json!(5), &json!(0.8))
        );
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["allocations", "pairs", "run", "search_prices"]);
        let close = |v: &Value, want: f64| {
            let got = v.as_f64().unwrap();
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        };
        let a = &d["allocations"];
        close(&a[0]["se"], (1.0f64 / 24.0).sqrt());
        assert_eq!(
            (&a[1]["se"], &a[1]["model_tokens"]),
            (&json!(0.0), &json!(300.0))
        );
        close(&a[2]["se"], 1.0 / 6.0);
        close(&a[0]["var_x_tokens"], 25.0);
        close(&a[2]["var_x_tokens"], 12.5);
        let p = &d["pairs"];
        assert_eq!((&p[0]["a"], &p[0]["b"]), (&json!("A"), &json!("B")));
        assert_eq!(p[0]["se_reduction"]["value"], Value::Null);
        assert_eq!(
            p[0]["undefined"],
            "the measured SE of B is 0 (the scores do not vary), so reductions and ratios against it are undefined"
        );
        assert_eq!((&p[1]["a"], &p[1]["b"]), (&json!("A"), &json!("C")));
        close(&p[1]["se_reduction"]["value"], 1.0 - 6.0 / 24.0f64.sqrt());
        close(&p[1]["var_x_tokens_ratio"]["value"], 2.0);
        assert!(p[1].get("undefined").is_none() && p[2].get("undefined").is_none());
    }

    /// The clustered fixture of tests/reference/cluster_anova.py: 2 strata × 24 clusters
    /// (`article`) × 4 questions × T = R = 2, questions in cluster order.
    fn clustered_fixture() -> crate::panel::Panel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/cluster/balanced.csv");
        crate::panel::load_panel(
            &path,
            &crate::panel::LoadOptions {
                metric: Some("f1".into()),
                cluster: Some("article".into()),
                ..Default::default()
            },
        )
        .unwrap()
    }

    /// Cell costs for every cell of `strata`: a trajectory 100 + q mod 3 tokens ($0.01,
    /// 2 searches), a read 50 tokens ($0.005).
    fn every_cell(strata: &[Stratum]) -> [CellCosts; 3] {
        let mut out = [
            CellCosts::default(),
            CellCosts::default(),
            CellCosts::default(),
        ];
        for s in strata {
            for q in 0..s.q() {
                for (t, reads) in s.trajectories_of(q).iter().enumerate() {
                    for r in 0..reads.len() {
                        let (tl, rl) = s.cell_label(q, t, r).unwrap();
                        let key = (s.name.clone(), s.questions[q].clone(), tl.to_string());
                        let per = [(100.0 + (q % 3) as f64, 50.0), (0.01, 0.005), (2.0, 0.0)];
                        for (c, (tc, rc)) in out.iter_mut().zip(per) {
                            c.trajectory.insert(key.clone(), tc);
                            c.read.insert(
                                (key.0.clone(), key.1.clone(), key.2.clone(), rl.into()),
                                rc,
                            );
                        }
                    }
                }
            }
        }
        out
    }

    fn run_compare(
        strata: &[Stratum],
        specs: &[&str],
        clusters: Option<&ClusterDraw>,
        replicates: u32,
        walk: &dyn WalkBackend,
    ) -> AllocateReport {
        let specs: Vec<AllocationSpec> = specs.iter().map(|s| s.parse().unwrap()).collect();
        let [tok, usd, searches] = every_cell(strata);
        let costs = AllocationCosts {
            cells: [&tok, &usd, &searches],
            sweep: &[0.0, 5.0],
            ledger: std::path::Path::new("l.jsonl"),
            question: [0.0, 0.0],
        };
        let resampling = Resampling {
            seed: 48,
            replicates,
            confidence: 0.95,
        };
        compare(
            strata,
            &[],
            &specs,
            &question_order(strata, None),
            clusters,
            &costs,
            &resampling,
            walk,
            &|_| {},
        )
        .unwrap()
    }

    fn cluster_draw(panel: &crate::panel::Panel) -> ClusterDraw {
        ClusterDraw::new(&panel_clusters(panel).unwrap()).unwrap()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    /// Every question its own cluster: the clustered allocation is the question allocation,
    /// number for number (the same draws, the same f32 sums of S and S²; the cluster-robust
    /// formula equals s²/n up to f64 rounding).
    #[test]
    fn singleton_clusters_give_the_question_bootstraps_numbers() {
        let panel = clustered_fixture();
        let specs = ["A=192:2:2", "B=96:2:1", "C=150:1:2"];
        let q = run_compare(&panel.strata, &specs, None, 500, &CpuWalk);
        let units: Vec<usize> = panel.strata.iter().map(Stratum::q).collect();
        let c = run_compare(
            &panel.strata,
            &specs,
            Some(&ClusterDraw::singletons(&units)),
            500,
            &CpuWalk,
        );
        for (a, b) in q.allocations.iter().zip(&c.allocations) {
            assert_eq!(a.estimate, b.estimate);
            assert_eq!((a.model_tokens, &a.fees_usd), (b.model_tokens, &b.fees_usd));
            assert!(rel(a.se, b.se) < 1e-12, "{} {}", a.se, b.se);
        }
        for (a, b) in q.pairs.iter().zip(&c.pairs) {
            for (x, y) in [
                (a.se_reduction, b.se_reduction),
                (a.var_x_tokens_ratio, b.var_x_tokens_ratio),
                (a.var_x_fees_ratio[1], b.var_x_fees_ratio[1]),
            ] {
                assert!(rel(x.value, y.value) < 1e-12);
                assert!(rel(x.ci.0[0], y.ci.0[0]) < 1e-10, "{:?} {:?}", x.ci, y.ci);
                assert!(rel(x.ci.0[1], y.ci.0[1]) < 1e-10, "{:?} {:?}", x.ci, y.ci);
            }
            assert!((a.se_correlation - b.se_correlation).abs() < 1e-10);
        }
    }

    /// The clustered SE of an allocation holding the whole master is `variance --cluster`'s
    /// (numpy, tests/reference/cluster_anova.py: per stratum sd(cluster means, ddof 1)/√G =
    /// 0.11148313505196708 and 0.1208291131069067; combined √(Σ SE²_d)/2); the SD of its
    /// replicate means is the cluster bootstrap's, √((G − 1)/G) times that, within Monte
    /// Carlo error; its draws are the shared cluster draw's.
    #[test]
    fn the_clustered_se_and_bootstrap_are_the_cluster_level_ones() {
        let panel = clustered_fixture();
        let draw = cluster_draw(&panel);
        assert_eq!(draw.counts(), [24, 24]);
        let (se1, se2) = (0.11148313505196708f64, 0.1208291131069067f64);
        let want = (se1 * se1 + se2 * se2).sqrt() / 2.0;
        let r = run_compare(
            &panel.strata,
            &["A=192:2:2", "B=96:2:2"],
            Some(&draw),
            10,
            &CpuWalk,
        );
        assert!(
            rel(r.allocations[0].se, want) < 1e-9,
            "{}",
            r.allocations[0].se
        );
        assert_eq!(
            r.allocations[0].clusters,
            Some(vec![("hotpotqa".into(), 24), ("musique".into(), 24)])
        );
        // B: the first 48 questions of each stratum, the first 12 clusters.
        assert_eq!(r.allocations[1].clusters.as_ref().unwrap()[1].1, 12);
        assert!(r.notes[0].contains("whole clusters"), "{:?}", r.notes);
        // The replicates of A: mean m_d + Σ S / Σ M per stratum, equal weights.
        let rows: Vec<Vec<Vec<Vec<f64>>>> = {
            let specs: Vec<AllocationSpec> =
                ["A=192:2:2"].iter().map(|s| s.parse().unwrap()).collect();
            let _ = specs;
            let a: Vec<Vec<Vec<f64>>> = panel
                .strata
                .iter()
                .enumerate()
                .map(|(d, s)| {
                    let st = StratumStats::from_subset(s, 0..s.q(), &[0, 1], &[0, 1]);
                    let m = st.questions.iter().map(|x| x.mean).sum::<f64>() / s.q() as f64;
                    let q_rows: Vec<Vec<f64>> = st
                        .questions
                        .iter()
                        .map(|x| {
                            let dv = x.mean - m;
                            vec![dv, dv * dv, 0.0, 0.0, 0.0, 1.0]
                        })
                        .collect();
                    let c = &draw.strata()[d];
                    cluster_rows(&q_rows, c.of(), c.count())
                })
                .collect();
            vec![a]
        };
        let b = 4000u32;
        let out =
            exact_size_replicates(&rows, CLUSTER_WALK_COLUMNS, 48, b, &CpuWalk, &|_| {}).unwrap();
        let means: Vec<f64> = out[0]
            .iter()
            .map(|rep| rep.iter().map(|s| s[C_S] / s[C_M]).sum::<f64>() / 2.0)
            .collect();
        let mu = means.iter().sum::<f64>() / f64::from(b);
        let sd = (means.iter().map(|x| (x - mu) * (x - mu)).sum::<f64>() / f64::from(b - 1)).sqrt();
        let target = want * (23.0f64 / 24.0).sqrt();
        let mc = target / (2.0 * f64::from(b - 1)).sqrt();
        assert!(
            (sd - target).abs() < 4.0 * mc,
            "bootstrap SE {sd} vs {target}"
        );
        // The draws are the cluster draw's: C_M sums to Σ_c counts_c · M_c = 4 Σ counts_c.
        for rep in [0u32, 7, 3999] {
            for d in 0..2 {
                let mut counts = Vec::new();
                draw.draw_counts(Generator::Scalar, 48, rep, d as u32, &mut counts);
                let want_s: f64 = counts
                    .iter()
                    .enumerate()
                    .map(|(c, &k)| f64::from(k) * rows[0][d][c][C_S])
                    .sum();
                let got = &out[0][rep as usize][d];
                assert_eq!(got[C_M], 4.0 * 24.0);
                assert!((got[C_S] - want_s).abs() < 1e-4, "{} vs {want_s}", got[C_S]);
            }
        }
    }

    /// Every question copied inside its cluster (the copy next to it): the clustered SEs,
    /// intervals and correlations are the original's (the rows of a cluster double, the
    /// same cluster draws are taken); analysed question by question the SE falls by √2.
    #[test]
    fn copied_questions_inside_clusters_do_not_shrink_the_clustered_se() {
        let panel = clustered_fixture();
        let copied: Vec<Stratum> = panel
            .strata
            .iter()
            .map(|s| {
                let mut c = s.clone();
                let per = s.t() * s.r();
                c.questions = s
                    .questions
                    .iter()
                    .flat_map(|q| [q.clone(), format!("{q}-copy")])
                    .collect();
                c.y =
                    s.y.chunks_exact(per)
                        .flat_map(|y| y.iter().chain(y).copied().collect::<Vec<_>>())
                        .collect();
                c.labels = None;
                let names: Vec<String> =
                    c.questions.iter().map(|q| q.replace("-copy", "")).collect();
                let of = s.clusters.as_ref().unwrap();
                c.clusters = Some(crate::panel::Clusters::from_names(
                    &names
                        .iter()
                        .map(|q| {
                            let i = s.questions.iter().position(|x| x == q).unwrap();
                            of.names[of.of_question[i] as usize].clone()
                        })
                        .collect::<Vec<_>>(),
                ));
                c
            })
            .collect();
        let copied_draw = ClusterDraw::new(
            &copied
                .iter()
                .map(|s| s.clusters.as_ref().unwrap().of_question.clone())
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let strata: Vec<Stratum> = panel
            .strata
            .iter()
            .map(|s| Stratum {
                labels: None,
                ..s.clone()
            })
            .collect();
        let orig = run_compare(
            &strata,
            &["A=192:2:2", "B=96:2:1"],
            Some(&cluster_draw(&panel)),
            800,
            &CpuWalk,
        );
        let copy = run_compare(
            &copied,
            &["A=384:2:2", "B=192:2:1"],
            Some(&copied_draw),
            800,
            &CpuWalk,
        );
        for (a, b) in orig.allocations.iter().zip(&copy.allocations) {
            assert!(rel(a.se, b.se) < 1e-12, "{} vs {}", a.se, b.se);
            assert!(rel(a.estimate, b.estimate) < 1e-12);
        }
        let (a, b) = (&orig.pairs[0], &copy.pairs[0]);
        assert!(rel(a.se_reduction.ci.0[0], b.se_reduction.ci.0[0]) < 1e-9);
        assert!(rel(a.se_reduction.ci.0[1], b.se_reduction.ci.0[1]) < 1e-9);
        assert!((a.se_correlation - b.se_correlation).abs() < 1e-9);
        // Question by question the copies count as new questions: the SE shrinks by about √2.
        let q = run_compare(&copied, &["A=384:2:2", "B=192:2:1"], None, 20, &CpuWalk);
        let ratio = orig.allocations[0].se / q.allocations[0].se;
        assert!(
            ratio > 2.0,
            "cluster SE / question SE of the copies: {ratio}"
        );
    }

    /// An allocation that leaves a stratum with one cluster is refused, naming it.
    #[test]
    fn one_cluster_in_a_stratum_is_refused() {
        let panel = clustered_fixture();
        let [tok, usd, searches] = every_cell(&panel.strata);
        let specs: Vec<AllocationSpec> = ["A=192:2:2", "B=8:1:1"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let e = compare(
            &panel.strata,
            &[],
            &specs,
            &question_order(&panel.strata, None),
            Some(&cluster_draw(&panel)),
            &AllocationCosts {
                cells: [&tok, &usd, &searches],
                sweep: &[0.0],
                ledger: std::path::Path::new("l.jsonl"),
                question: [0.0, 0.0],
            },
            &Resampling {
                seed: 1,
                replicates: 10,
                confidence: 0.95,
            },
            &CpuWalk,
            &|_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("allocation B leaves stratum 'hotpotqa' with 1 cluster(s)"),
            "{e}"
        );
    }
}
