//! The one-read analysis of a panel with its costs: the fitted efficiency loss at fixed T
//! (the paper's headline, [`super::fixed_t`]) per stratum and combined over strata, the loss
//! at fixed Q ([`super::efficiency`], appendix D) per stratum and pooled, each with a
//! bootstrap that refits components and unit costs in every replicate, and the direct check
//! that needs no components.
//!
//! Direct check (R ≥ 2; appendix D, no components): every one of the C(R, 2) pairs of reads
//! a < b, in the order (0, 1), (0, 2), (1, 2), (0, 3), … ([`pair_reads`]). For pair (a, b), with SE²_a and
//! SE²_b the measured SE² of the estimate using read a alone and read b alone (all T
//! trajectories) and SE²_ab using both, the variance × cost ratio of one read against two is
//! ρ_ab = ((SE²_a + SE²_b)/2 · C₁) / (SE²_ab · C₂), and the check is the mean of ρ over the
//! pairs: below 1, one read buys more precision per unit cost. The costs are those of a
//! one-read and a two-read panel as billed: C₁ = the trajectory costs plus the cost of
//! read 0, C₂ = the trajectory costs plus the cost of reads 0 and 1 (with caching the first
//! read of a packet is billed uncached and the second cached, so an average c_R over all
//! reads would mix them). The paired question bootstrap resamples every term together.
//!
//! Both panel shapes reduce each question to one row of sufficient statistics (its costs,
//! trajectory and read counts, the direct check's read costs and pair means, and for a
//! balanced panel the ANOVA sums its components are refitted from), and one routine turns
//! a replicate's per-stratum column sums into every loss and ratio. A balanced panel is the
//! case where every question has T trajectories of R reads; the shapes differ only in how
//! the sums are resampled (the f32 column engine, or the question-draw weights of the
//! unbalanced bootstrap) and where each replicate's components come from (ANOVA from the
//! sums, or the REML refits of that bootstrap).

use std::collections::BTreeMap;

use serde::Serialize;

use super::efficiency::{efficiency, Efficiency, UnitCosts};
use super::fixed_t::{self, FixedTLoss, Part};
use crate::bootstrap::stratified::{Bootstrap, BootstrapSpec};
use crate::components::reml::{Shape, Spread};
use crate::components::variance::{fit, nested_stratum, AnovaSums, Method, PerLevel};
use crate::costs::panel_costs::{QuestionCost, TrajectoryCost};
use crate::panel::{Panel, QuestionStats, Stratum, StratumStats};
use crate::resample::clusters::ClusterDraw;
use crate::resample::columns::CenteredColumns;
use crate::resample::engine::ResampleBackend;
use crate::resample::engine::MAX_K;
use crate::resample::summary::{percentile_interval, Interval};
use crate::resample::Resampling;
use crate::{Error, Result};

/// The analysis of one scope (a stratum, or the pooled fit).
#[derive(Debug, Clone, Serialize)]
pub struct ScopeResult {
    pub name: String,
    pub questions: usize,
    pub trajectories: usize,
    pub reads: usize,
    /// Raw components.
    pub components: PerLevel,
    pub unit_costs: UnitCosts,
    /// Fixed-Q loss (appendix D); `None` when the costs cannot support the analysis
    /// (e.g. c_R = 0).
    pub efficiency: Option<Efficiency>,
    /// Central bootstrap interval (at the requested confidence) of the fixed-Q loss (percent)
    /// and of R*.
    pub loss_ci: Option<Interval>,
    pub r_star_ci: Option<Interval>,
    /// Fixed-T loss at the scope's T (`None` for the pooled fit, which the fixed-T analysis
    /// replaces by the equal-weight combination).
    pub fixed_t: Option<FixedTLoss>,
    /// Central bootstrap intervals of the fixed-T loss (percent) and of R*_T.
    pub fixed_t_loss_ci: Option<Interval>,
    pub fixed_t_r_star_ci: Option<Interval>,
    /// How the components were fitted; present only when the panel is unbalanced (then
    /// `trajectories` and `reads` are the rounded mean design and `shape` has the spread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// Why each of the scope's undefined (`null` or absent) values is undefined, by field
    /// (`fixed_t`, `efficiency.r_star` …; [`OneReadReport::undefined`]); absent when none is.
    #[serde(skip_serializing_if = "Undefined::is_empty")]
    pub undefined: Undefined,
}

/// Reasons by the field they explain (`fixed_t.r_star` → why R*_T is not finite).
pub type Undefined = BTreeMap<&'static str, String>;

/// The fixed-T loss of the equal-weight estimate over strata (question shares as in the
/// panel).
#[derive(Debug, Clone, Serialize)]
pub struct CombinedFixedT {
    pub questions: usize,
    /// J_T(R) = (a + b/R)(c + d R) at the data.
    pub product: Option<fixed_t::Product>,
    pub fixed_t: Option<FixedTLoss>,
    pub loss_ci: Option<Interval>,
    pub r_star_ci: Option<Interval>,
    /// Why the combination's loss is undefined (field `fixed_t`), if it is.
    #[serde(skip_serializing_if = "Undefined::is_empty")]
    pub undefined: Undefined,
}

pub use crate::costs::panel_costs::ReadCosts;

/// The direct check of one pair of reads.
#[derive(Debug, Clone, Serialize)]
pub struct PairCheck {
    pub reads: [usize; 2],
    pub ratio: f64,
    pub ci: Option<Interval>,
}

/// The direct one-read versus two-read check.
#[derive(Debug, Clone, Serialize)]
pub struct DirectCheck {
    /// Mean over the single reads of the pairs of the one-read SE.
    pub se_one_read: f64,
    /// Mean over the pairs of the two-read SE.
    pub se_two_reads: f64,
    /// Panel costs C₁ (one read) and C₂ (two reads), as billed.
    pub cost_one_read: f64,
    pub cost_two_reads: f64,
    /// Mean of the pairs' ratios, and its bootstrap interval.
    pub ratio: f64,
    pub ci: Option<Interval>,
    pub pairs: Vec<PairCheck>,
    /// Why the mean ratio is undefined (field `ratio`), if it is.
    #[serde(skip_serializing_if = "Undefined::is_empty")]
    pub undefined: Undefined,
}

/// An interval over the replicates of a function of one replicate's pair ratios.
type RatioInterval<'a> = dyn Fn(&dyn Fn(&[f64]) -> f64) -> Option<Interval> + 'a;

impl DirectCheck {
    /// The check from the pairs' one-read SEs (two per pair), two-read SEs, the panel
    /// costs (C₁, C₂), each pair's ratio, and `rep_ci`: the mean ratio's interval and each
    /// pair's come from the same replicates.
    fn assemble(
        singles: &[f64],
        doubles: &[f64],
        (c1, c2): (f64, f64),
        ratios: &[f64],
        rep_ci: &RatioInterval<'_>,
    ) -> Self {
        DirectCheck {
            se_one_read: mean(singles),
            se_two_reads: mean(doubles),
            cost_one_read: c1,
            cost_two_reads: c2,
            ratio: mean(ratios),
            ci: rep_ci(&|r| mean(r)),
            pairs: ratios
                .iter()
                .enumerate()
                .map(|(p, &ratio)| PairCheck {
                    reads: {
                        let (a, b) = pair_reads(p);
                        [a, b]
                    },
                    ratio,
                    ci: rep_ci(&|r| r[p]),
                })
                .collect(),
            undefined: Undefined::new(),
        }
    }
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct OneReadReport {
    /// The largest read count the fixed-T minimum runs over (from 1).
    pub max_reads: u32,
    pub strata: Vec<ScopeResult>,
    /// Fixed-T loss of the equal-weight estimate over strata.
    pub combined: CombinedFixedT,
    pub pooled: Option<ScopeResult>,
    pub direct: Option<DirectCheck>,
    /// Present when the panel is unbalanced: the direct check then uses, for each pair of
    /// reads, only the trajectories that have both reads (see [`analyse_unbalanced`]).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub unbalanced: bool,
    /// With clusters (`--cluster`): each stratum's clusters G_d, the units the bootstrap
    /// drew ([`analyse_clustered`]); absent without.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clusters: Option<Vec<usize>>,
    /// Ledger rows billed to cells of the panel's questions that the panel does not hold
    /// (failed trajectories and reads); their cost is in the unit costs
    /// ([`crate::costs::panel_costs::absent_cells`]).
    pub absent_rows: u64,
    /// Cautions on reading the report: a best R beyond the panel's own R (the forecast
    /// extrapolates), a stratum with fewer than 30 questions (the normal approximation is
    /// rough); see [`OneReadReport::note_warnings`].
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
}

/// Fewer questions than this in a stratum make the normal approximation behind the
/// forecasts rough.
pub const FEW_QUESTIONS: usize = 30;

impl OneReadReport {
    /// Fills [`OneReadReport::warnings`]: each scope whose best R (fixed T or fixed Q)
    /// exceeds the reads its panel has, and each stratum with fewer than
    /// [`FEW_QUESTIONS`] questions.
    pub fn note_warnings(&mut self) {
        let mut w = Vec::new();
        let beyond = |name: &str, what: &str, r: u32, audit: usize| {
            (r as usize > audit).then(|| {
                format!(
                    "{name}: the {what} best R = {r} exceeds the panel's {audit} read(s), so that loss extrapolates the components beyond the audit"
                )
            })
        };
        for s in &self.strata {
            if let Some(e) = &s.fixed_t {
                w.extend(beyond(&s.name, "fixed-T", e.r_best, s.reads));
            }
        }
        if let Some(e) = &self.combined.fixed_t {
            let audit = self.strata.iter().map(|s| s.reads).min().unwrap_or(0);
            w.extend(beyond("combined", "fixed-T", e.r_best, audit));
        }
        for s in self.strata.iter().chain(self.pooled.iter()) {
            if let Some(e) = &s.efficiency {
                w.extend(beyond(&s.name, "fixed-Q", e.r_best, s.reads));
            }
        }
        for s in &self.strata {
            if s.questions < FEW_QUESTIONS {
                w.push(format!(
                    "{}: {} questions (fewer than {FEW_QUESTIONS}), so the normal approximation behind SE-based comparisons is rough",
                    s.name, s.questions
                ));
            }
        }
        self.warnings = w;
    }
}

// ---------------------------------------------------------------------------------------
// The sufficient statistics of a question, shared by both panel shapes
// ---------------------------------------------------------------------------------------

/// A question's sufficient statistics after the ANOVA block, in row order. Every analysis
/// below is a function of their per-stratum sums (in a replicate, weighted by the
/// question's draw count).
#[derive(Debug, Clone, Copy)]
enum Col {
    /// TC_q, the cost of the question's trajectories.
    TrajectoryCost,
    /// RC_q, the cost of its reads.
    ReadCost,
    /// T_q, its trajectories.
    Trajectories,
    /// N_q, its reads.
    Reads,
    /// RC1_q, the cost of the first read of each of its trajectories (so RC_q − RC1_q is
    /// the cost of the later reads, N_q − T_q of them).
    FirstReadCost,
    /// Direct check (present when there are pairs): the cost of its trajectories with at
    /// least 2 reads,
    PairedTrajectoryCost,
    /// of their read 0,
    OneReadCost,
    /// and of their reads 0 and 1.
    TwoReadCost,
}

/// The ANOVA block of a balanced panel's row, from which every replicate refits the
/// components: ȳ_q − ȳ, its square, and the question's SS_trajectory and SS_read.
#[derive(Debug, Clone, Copy)]
enum Anova {
    Dev,
    Dev2,
    SsTrajectory,
    SsRead,
}

/// The three question means of pair (a, b) of the direct check: over read a alone, read b
/// alone, and both. Each is a deviation column from the stratum's centre, then its square.
#[derive(Debug, Clone, Copy)]
enum PairMean {
    A,
    B,
    Both,
}

/// Where each statistic sits in a question's row: the ANOVA block (balanced panel only),
/// the [`Col`] block (its direct-check costs only with pairs), then per pair of reads the
/// pair's question indicator (1 when the question has a trajectory with both reads) and
/// its three [`PairMean`]s.
///
/// With clusters (`clustered`) a row is a cluster's, the sums of its questions' rows, and
/// each pair's block is wider, for the cluster-robust SE of its means: the indicator H
/// that the cluster has a question with the pair (1 or 0), its questions with the pair M,
/// M², then per mean S (the sum of its questions' deviations), S² and S·M (squares of the
/// cluster's sums, not sums of squares).
#[derive(Debug, Clone, Copy)]
struct Layout {
    anova: bool,
    pairs: usize,
    clustered: bool,
}

impl Layout {
    fn base(self) -> usize {
        if self.anova {
            Anova::SsRead as usize + 1
        } else {
            0
        }
    }
    fn anova(self, c: Anova) -> usize {
        debug_assert!(self.anova);
        c as usize
    }
    fn at(self, c: Col) -> usize {
        debug_assert!(self.pairs > 0 || (c as usize) < Col::PairedTrajectoryCost as usize);
        self.base() + c as usize
    }
    /// Columns of one pair's block: the indicator and three (deviation, square) means, or
    /// with clusters H, M, M² and three (S, S², S·M).
    fn pair_width(self) -> usize {
        if self.clustered {
            12
        } else {
            7
        }
    }
    /// The first column of pair p's block.
    fn pair_start(self, p: usize) -> usize {
        self.base() + Col::TwoReadCost as usize + 1 + self.pair_width() * p
    }
    /// Pair p's question indicator (its three means follow, each deviation then square);
    /// with clusters its question count M (after H, before M²).
    fn pair_questions(self, p: usize) -> usize {
        debug_assert!(p < self.pairs);
        self.pair_start(p) + usize::from(self.clustered)
    }
    /// With clusters: pair p's cluster indicator H (1 for a cluster with the pair).
    fn pair_clusters(self, p: usize) -> usize {
        debug_assert!(self.clustered && p < self.pairs);
        self.pair_start(p)
    }
    /// The deviation column of pair p's mean `m` (its square follows; with clusters the
    /// cluster's S, then S², then S·M).
    fn pair_mean(self, p: usize, m: PairMean) -> usize {
        if self.clustered {
            self.pair_start(p) + 3 + 3 * m as usize
        } else {
            self.pair_questions(p) + 1 + 2 * m as usize
        }
    }
    /// Columns per row.
    fn k(self) -> usize {
        match self.pairs {
            0 => self.base() + Col::FirstReadCost as usize + 1,
            p => self.pair_start(p),
        }
    }
    /// The columns a balanced panel resamples on the engine, in row order: all but those
    /// that are the same for every question (T_q = T, N_q = T·R, every pair's indicator 1)
    /// or repeat another (with pairs every trajectory has R ≥ 2 reads, so the paired
    /// trajectory cost is the trajectory cost).
    /// With clusters every column goes: a cluster's sizes, and so its trajectory and read
    /// counts, differ.
    fn balanced_engine_columns(self) -> Vec<usize> {
        if self.clustered {
            return (0..self.k()).collect();
        }
        let derived = |j: usize| {
            j == self.at(Col::Trajectories)
                || j == self.at(Col::Reads)
                || (self.pairs > 0
                    && (j == self.at(Col::PairedTrajectoryCost)
                        || (0..self.pairs).any(|p| j == self.pair_questions(p))))
        };
        (0..self.k()).filter(|&j| !derived(j)).collect()
    }
}

/// Column sums `[stratum][column]`.
type ColumnSums = Vec<Vec<f64>>;

/// One stratum's column sums (of the data or of a replicate) read through the layout.
#[derive(Clone, Copy)]
struct ScopeSums<'a> {
    layout: Layout,
    s: &'a [f64],
}

impl ScopeSums<'_> {
    fn get(&self, c: Col) -> f64 {
        self.s[self.layout.at(c)]
    }

    /// SE² of the stratum mean of pair p's mean `m` over the n questions that have the
    /// pair: (Σ d² − (Σ d)²/n)/(n − 1)/n. With clusters the cluster-robust SE² over the g
    /// clusters (drawn) with the pair, as `variance --cluster` gives it:
    /// g/(g − 1) · Σ_c (S_c − M_c ē)² / n², ē = Σ S / n, the square expanded as
    /// Σ S² − 2ē Σ S·M + ē² Σ M².
    fn se2(&self, p: usize, m: PairMean) -> f64 {
        let n = self.s[self.layout.pair_questions(p)];
        let c = self.layout.pair_mean(p, m);
        if self.layout.clustered {
            // Counts are sums of integers: round them (exact, kept as a guard).
            let (g, n) = (self.s[self.layout.pair_clusters(p)].round(), n.round());
            let m2 = self.s[self.layout.pair_questions(p) + 1];
            let e = self.s[c] / n;
            let ss = (self.s[c + 1] - 2.0 * e * self.s[c + 2] + e * e * m2).max(0.0);
            return g / (g - 1.0) * ss / (n * n);
        }
        (self.s[c + 1] - self.s[c] * self.s[c] / n) / (n - 1.0) / n
    }

    fn scope(&self, components: Option<PerLevel>, q: f64, question_cost: f64) -> Scope {
        Scope {
            components,
            q,
            traj: self.get(Col::Trajectories),
            reads: self.get(Col::Reads),
            tc: self.get(Col::TrajectoryCost),
            rc: self.get(Col::ReadCost),
            rc1: self.get(Col::FirstReadCost),
            question_cost,
        }
    }
}

/// One stratum (or the pooled scope) reduced to its components and sums.
struct Scope {
    components: Option<PerLevel>,
    q: f64,
    traj: f64,
    reads: f64,
    tc: f64,
    rc: f64,
    rc1: f64,
    /// c_Q, as given.
    question_cost: f64,
}

impl Scope {
    /// The mean cost per trajectory, per first read and per later read over the cells that
    /// exist: c_T = Σ TC_q / Σ T_q, c_R1 = Σ RC1_q / Σ T_q (every trajectory of a panel has
    /// a first read) and c_R+ = Σ (RC_q − RC1_q) / Σ (N_q − T_q); with no later read at all
    /// (R = 1) c_R+ cannot be measured and is taken as c_R1. So
    /// Σ T_q (c_T + c_R1) + Σ (N_q − T_q) c_R+ = Σ (TC_q + RC_q): the unit costs price the
    /// panel at exactly its billed cost.
    fn costs(&self) -> UnitCosts {
        let first_read = self.rc1 / self.traj;
        let later = self.reads - self.traj;
        UnitCosts {
            trajectory: self.tc / self.traj,
            first_read,
            read: if later > 0.0 {
                (self.rc - self.rc1) / later
            } else {
                first_read
            },
            question: self.question_cost,
        }
    }
    /// The mean design: T̄ = trajectories / Q, R̄ = reads / trajectories (in a balanced
    /// stratum T and R exactly).
    fn t(&self) -> f64 {
        self.traj / self.q
    }
    fn r(&self) -> f64 {
        self.reads / self.traj
    }
    fn fixed_q(&self) -> Option<Efficiency> {
        let c = self.components.as_ref()?;
        efficiency(c, self.costs(), self.q, self.t(), self.r())
    }
}

/// What one replicate (or the data) yields.
struct Stats {
    /// Fixed-Q loss of each stratum, then of the pooled fit.
    fixed_q: Vec<Option<Efficiency>>,
    /// Fixed-T loss of each stratum, then of the combination.
    fixed_t: Vec<Option<FixedTLoss>>,
    /// The combination's J_T product (`None` when a stratum cannot be fitted).
    product: Option<fixed_t::Product>,
    /// The direct ratio of each pair of reads.
    ratios: Option<Vec<f64>>,
}

/// The number of pairs a < b of `r` reads, C(r, 2).
fn pair_count(r: usize) -> usize {
    r * r.saturating_sub(1) / 2
}

/// The reads (a, b) of pair `p` in the order (0, 1), (0, 2), (1, 2), (0, 3), (1, 3), …:
/// b is the largest with C(b, 2) ≤ p and a = p − C(b, 2), so the first C(r, 2) pairs are
/// exactly those of reads 0..r.
pub fn pair_reads(p: usize) -> (usize, usize) {
    let mut b = 1;
    while pair_count(b + 1) <= p {
        b += 1;
    }
    (p - pair_count(b), b)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Losses and optima of each scope and the direct ratios, from each stratum's components
/// (`None` where they cannot be fitted), the pooled components, the question counts and the
/// column sums of one replicate (or the data); the combination and the direct check weigh
/// the strata by `weights` (empty: equal).
#[allow(clippy::too_many_arguments)]
fn statistics(
    layout: Layout,
    weights: &[f64],
    comps: &[Option<PerLevel>],
    pooled: Option<PerLevel>,
    q: &[f64],
    sums: &[Vec<f64>],
    max_reads: u32,
    question_cost: f64,
) -> Stats {
    let scopes: Vec<Scope> = comps
        .iter()
        .zip(q)
        .zip(sums)
        .map(|((&c, &q), s)| ScopeSums { layout, s }.scope(c, q, question_cost))
        .collect();
    let sum = |f: fn(&Scope) -> f64| scopes.iter().map(f).sum::<f64>();
    let all = Scope {
        components: pooled,
        q: sum(|s| s.q),
        traj: sum(|s| s.traj),
        reads: sum(|s| s.reads),
        tc: sum(|s| s.tc),
        rc: sum(|s| s.rc),
        rc1: sum(|s| s.rc1),
        question_cost,
    };
    let mut fixed_q: Vec<Option<Efficiency>> = scopes.iter().map(Scope::fixed_q).collect();
    fixed_q.push(all.fixed_q());
    let mut fixed_t: Vec<Option<FixedTLoss>> = scopes
        .iter()
        .map(|s| {
            let c = s.components.as_ref()?;
            fixed_t::loss(&fixed_t::stratum(c, s.costs(), s.t()), max_reads)
        })
        .collect();
    // A stratum whose components cannot be fitted leaves the combination undefined.
    let product = scopes
        .iter()
        .map(|s| {
            s.components.map(|c| Part {
                components: c,
                costs: s.costs(),
                t: s.t(),
                share: s.q / all.q,
            })
        })
        .collect::<Option<Vec<Part>>>()
        .map(|p| fixed_t::combined(&p, weights));
    fixed_t.push(product.and_then(|p| fixed_t::loss(&p, max_reads)));
    let ratios = (layout.pairs > 0).then(|| {
        let (c1, c2) = direct_costs(layout, sums);
        (0..layout.pairs)
            .map(|p| {
                let se2 = |m| combined_se2(layout, weights, sums, p, m);
                (se2(PairMean::A) + se2(PairMean::B)) / 2.0 * c1 / (se2(PairMean::Both) * c2)
            })
            .collect()
    });
    Stats {
        fixed_q,
        fixed_t,
        product,
        ratios,
    }
}

/// SE² of the combined estimate over the D strata from pair p's mean `m`:
/// Σ_d w_d² SE²_d with the strata's `weights` (empty: equal, Σ_d SE²_d / D²).
fn combined_se2(layout: Layout, weights: &[f64], sums: &[Vec<f64>], p: usize, m: PairMean) -> f64 {
    let se2: Vec<f64> = sums
        .iter()
        .map(|s| ScopeSums { layout, s }.se2(p, m))
        .collect();
    crate::components::forecast::combined_se2(&se2, weights)
}

/// C₁ and C₂ of the direct check: the costs of the trajectories with at least 2 reads, with
/// their read 0, or their reads 0 and 1.
fn direct_costs(layout: Layout, sums: &[Vec<f64>]) -> (f64, f64) {
    sums.iter().fold((0.0, 0.0), |(a, b), s| {
        let s = ScopeSums { layout, s };
        (
            a + s.get(Col::PairedTrajectoryCost) + s.get(Col::OneReadCost),
            b + s.get(Col::PairedTrajectoryCost) + s.get(Col::TwoReadCost),
        )
    })
}

fn ci(mut v: Vec<f64>, confidence: f64) -> Option<Interval> {
    v.retain(|x| x.is_finite());
    if v.len() < 2 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(percentile_interval(&v, confidence))
}

/// A scope as the report names it, with its components fitted to the data.
struct Heading {
    name: String,
    questions: usize,
    trajectories: usize,
    reads: usize,
    components: PerLevel,
    method: Option<Method>,
    shape: Option<Shape>,
}

/// The report from the scopes' headings (strata, then the pooled fit where it exists), the
/// exact column sums, the statistics of the data and of every replicate.
#[allow(clippy::too_many_arguments)]
fn report(
    layout: Layout,
    weights: &[f64],
    strata: Vec<Heading>,
    pooled: Option<Heading>,
    exact: &[Vec<f64>],
    point: Stats,
    per_rep: &[Stats],
    confidence: f64,
    max_reads: u32,
    question_cost: f64,
    unbalanced: bool,
) -> OneReadReport {
    let ci_of = |f: &dyn Fn(&Stats) -> f64| ci(per_rep.iter().map(f).collect(), confidence);
    let n = strata.len();
    let questions = strata.iter().map(|h| h.questions).sum();
    let all: Vec<f64> = exact.iter().fold(vec![0.0; layout.k()], |mut a, s| {
        for (x, v) in a.iter_mut().zip(s) {
            *x += v;
        }
        a
    });
    let scope = |i: usize, h: Heading| {
        let s = if i < n { &exact[i] } else { &all };
        let stratum = i < n;
        ScopeResult {
            name: h.name,
            questions: h.questions,
            trajectories: h.trajectories,
            reads: h.reads,
            components: h.components,
            unit_costs: ScopeSums { layout, s }
                .scope(Some(h.components), h.questions as f64, question_cost)
                .costs(),
            efficiency: point.fixed_q[i],
            loss_ci: ci_of(&|s| s.fixed_q[i].map_or(f64::NAN, |e| e.loss_percent)),
            r_star_ci: ci_of(&|s| s.fixed_q[i].map_or(f64::NAN, |e| e.r_star)),
            fixed_t: if stratum { point.fixed_t[i] } else { None },
            fixed_t_loss_ci: stratum
                .then(|| ci_of(&|s| s.fixed_t[i].map_or(f64::NAN, |e| e.loss_percent)))
                .flatten(),
            fixed_t_r_star_ci: stratum
                .then(|| ci_of(&|s| s.fixed_t[i].map_or(f64::NAN, |e| e.r_star)))
                .flatten(),
            method: h.method,
            shape: h.shape,
            undefined: Undefined::new(),
        }
    };
    let strata: Vec<ScopeResult> = strata
        .into_iter()
        .enumerate()
        .map(|(i, h)| scope(i, h))
        .collect();
    let pooled = pooled.map(|h| scope(n, h));
    let combined = CombinedFixedT {
        questions,
        product: point.product,
        fixed_t: point.fixed_t[n],
        loss_ci: ci_of(&|s| s.fixed_t[n].map_or(f64::NAN, |e| e.loss_percent)),
        r_star_ci: ci_of(&|s| s.fixed_t[n].map_or(f64::NAN, |e| e.r_star)),
        undefined: Undefined::new(),
    };
    let direct = point.ratios.as_ref().map(|ratios| {
        let se = |p, m| combined_se2(layout, weights, exact, p, m).sqrt();
        let singles: Vec<f64> = (0..layout.pairs)
            .flat_map(|p| [se(p, PairMean::A), se(p, PairMean::B)])
            .collect();
        let doubles: Vec<f64> = (0..layout.pairs).map(|p| se(p, PairMean::Both)).collect();
        let rep_ci =
            |f: &dyn Fn(&[f64]) -> f64| ci_of(&|s: &Stats| s.ratios.as_deref().map_or(f64::NAN, f));
        DirectCheck::assemble(
            &singles,
            &doubles,
            direct_costs(layout, exact),
            ratios,
            &rep_ci,
        )
    });
    let mut r = OneReadReport {
        max_reads,
        strata,
        combined,
        pooled,
        direct,
        unbalanced,
        clusters: None,
        absent_rows: 0,
        warnings: Vec::new(),
    };
    r.note_undefined();
    r
}

// ---------------------------------------------------------------------------------------
// Balanced panels
// ---------------------------------------------------------------------------------------

/// The questions a balanced stratum's column sums hold: Σ T_q / T, which is Q (exactly:
/// the sum is Q·T) or, with clusters, Q* = Σ M_c over the drawn clusters.
fn drawn_questions(layout: Layout, shape: &StratumStats, s: &[f64]) -> f64 {
    (s[layout.at(Col::Trajectories)] / shape.t as f64).round()
}

/// A balanced stratum's cluster rows from its question rows `cols` (stratum `d` of
/// `draw`): per cluster the sums of its questions' columns ([`ClusterDraw::cluster_rows`]),
/// with each pair's H, M² and the means' S², S·M then set from the cluster's sums.
fn cluster_rows(layout: Layout, draw: &ClusterDraw, d: usize, cols: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let k = layout.k();
    let flat = draw.cluster_rows(d, k, |q, j| cols[q][j]);
    flat.chunks_exact(k)
        .map(|row| {
            let mut row = row.to_vec();
            for p in 0..layout.pairs {
                let m = row[layout.pair_questions(p)];
                row[layout.pair_clusters(p)] = if m > 0.0 { 1.0 } else { 0.0 };
                row[layout.pair_questions(p) + 1] = m * m;
                for pm in [PairMean::A, PairMean::B, PairMean::Both] {
                    let c = layout.pair_mean(p, pm);
                    row[c + 1] = row[c] * row[c];
                    row[c + 2] = row[c] * m;
                }
            }
            row
        })
        .collect()
}

/// The ANOVA sums of a balanced stratum from its column sums (Q from the sums: with
/// clusters a replicate's Q*, every drawn copy of a question counted as a question).
fn anova_sums(layout: Layout, shape: &StratumStats, s: &[f64]) -> AnovaSums {
    let (t, r) = (shape.t, shape.r);
    let q = drawn_questions(layout, shape, s);
    let col = |c| s[layout.anova(c)];
    AnovaSums {
        questions: q as usize,
        t,
        r,
        ss_question: (t * r) as f64 * (col(Anova::Dev2) - col(Anova::Dev) * col(Anova::Dev) / q),
        ss_trajectory: col(Anova::SsTrajectory),
        ss_read: col(Anova::SsRead),
        df_question: q - 1.0,
        df_trajectory: q * (t as f64 - 1.0),
        df_read: q * t as f64 * (r as f64 - 1.0),
    }
}

/// The components of each balanced stratum and of the pooled fit refitted (ANOVA) from the
/// column sums; `None` where a fit fails or the strata cannot be pooled.
fn anova_components(
    layout: Layout,
    shapes: &[StratumStats],
    sums: &[Vec<f64>],
) -> (Vec<Option<PerLevel>>, Option<PerLevel>) {
    let anovas: Vec<AnovaSums> = shapes
        .iter()
        .zip(sums)
        .map(|(shape, s)| anova_sums(layout, shape, s))
        .collect();
    let comps = anovas
        .iter()
        .map(|a| fit(a).ok().map(|f| f.components))
        .collect();
    let pooled = AnovaSums::pooled(&anovas)
        .ok()
        .and_then(|p| fit(&p).ok())
        .map(|f| f.components);
    (comps, pooled)
}

/// Column sums `[stratum][column]` of a balanced panel's rows and of their resamples
/// `[replicate][stratum][column]`. Only [`Layout::balanced_engine_columns`] go to the
/// engine, in groups of at most [`MAX_K`]: the draws depend on the seed and the question
/// counts only, not on the columns, so every group sees the same resample. Every replicate
/// draws Q questions, so the other columns' sums are Q·T, Q·T·R, Q and the trajectory-cost
/// sum there as in the data, exactly. With clusters the rows are clusters and every column
/// goes to the engine (a replicate's questions vary with the drawn clusters' sizes).
fn balanced_sums(
    layout: Layout,
    shapes: &[StratumStats],
    rows: &[Vec<Vec<f64>>],
    resampling: &Resampling,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(ColumnSums, Vec<ColumnSums>)> {
    let Resampling {
        seed, replicates, ..
    } = *resampling;
    let known: ColumnSums = shapes
        .iter()
        .map(|shape| {
            let (q, t, r) = (shape.q(), shape.t, shape.r);
            let mut s = vec![0.0; layout.k()];
            s[layout.at(Col::Trajectories)] = (q * t) as f64;
            s[layout.at(Col::Reads)] = (q * t * r) as f64;
            for p in 0..layout.pairs {
                s[layout.pair_questions(p)] = q as f64;
            }
            s
        })
        .collect();
    let mut exact = known.clone();
    let mut reps = vec![known; replicates as usize];
    let sent = layout.balanced_engine_columns();
    let groups: Vec<&[usize]> = sent.chunks(MAX_K).collect();
    let n = groups.len() as u64;
    for (g, cols) in groups.into_iter().enumerate() {
        let part: Vec<Vec<Vec<f64>>> = rows
            .iter()
            .map(|s| {
                s.iter()
                    .map(|r| cols.iter().map(|&j| r[j]).collect())
                    .collect()
            })
            .collect();
        let c = CenteredColumns::new(&part)?;
        let done = g as u64 * u64::from(replicates);
        let r = c.resample(backend, seed, 0..replicates, &|d| progress((done + d) / n))?;
        let scatter = |to: &mut ColumnSums, from: &[Vec<f64>]| {
            for (to, from) in to.iter_mut().zip(from) {
                for (&j, &x) in cols.iter().zip(from) {
                    to[j] = x;
                }
            }
        };
        scatter(&mut exact, c.exact_sums());
        for (to, from) in reps.iter_mut().zip(&r) {
            scatter(to, from);
        }
    }
    if layout.pairs > 0 {
        for s in exact.iter_mut().chain(reps.iter_mut().flatten()) {
            s[layout.at(Col::PairedTrajectoryCost)] = s[layout.at(Col::TrajectoryCost)];
        }
    }
    Ok((exact, reps))
}

/// Runs the analysis: `costs[s][q]` are the question costs of stratum s (full panel),
/// `read_costs[s][q]` its one-read and two-read reader costs as billed (used when every
/// stratum has R ≥ 2); the fixed-T minimum runs over R = 1..=`max_reads`, with
/// `question_cost` (c_Q) added to each question's cost. The question bootstrap draws `resampling.replicates` replicates from `resampling.seed`; its intervals
/// are at `resampling.confidence`.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than 2 questions; backend errors.
#[allow(clippy::too_many_arguments)]
pub fn analyse(
    strata: &[Stratum],
    weights: &[f64],
    costs: &[Vec<QuestionCost>],
    read_costs: &[Vec<ReadCosts>],
    resampling: &Resampling,
    max_reads: u32,
    question_cost: f64,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    analyse_with(
        strata,
        weights,
        costs,
        read_costs,
        None,
        resampling,
        max_reads,
        question_cost,
        backend,
        progress,
    )
}

/// [`analyse`] of a balanced panel whose questions are nested in `clusters` (the shared
/// cluster draw, [`crate::resample::clusters`]): the bootstrap draws G_d whole clusters
/// per stratum, a cluster bringing its questions (the engine's rows are the clusters' sums
/// of the question rows, so its CPU and GPU backends draw the same clusters), and refits
/// the components by ANOVA from the drawn questions, a question drawn twice counting as two
/// questions (Q*_d = Σ M_c over the draws), as the question bootstrap counts it. The point
/// estimates (components, unit costs, losses) are the question analysis's; the direct
/// check's SEs are cluster-robust (`ScopeSums::se2`), at the data and in every replicate.
///
/// # Errors
/// Those of [`analyse`]; [`Error::Usage`] for a stratum with fewer than 2 clusters;
/// [`Error::Data`] when `clusters` does not have a cluster for every question.
#[allow(clippy::too_many_arguments)]
pub fn analyse_clustered(
    strata: &[Stratum],
    weights: &[f64],
    costs: &[Vec<QuestionCost>],
    read_costs: &[Vec<ReadCosts>],
    clusters: &ClusterDraw,
    resampling: &Resampling,
    max_reads: u32,
    question_cost: f64,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    if clusters.strata().len() != strata.len()
        || clusters
            .strata()
            .iter()
            .zip(strata)
            .any(|(c, s)| c.units() != s.q())
    {
        return Err(Error::Data(
            "efficiency: one cluster per question of every stratum is needed".into(),
        ));
    }
    for (c, s) in clusters.strata().iter().zip(strata) {
        if c.count() < 2 {
            return Err(Error::Usage(format!(
                "stratum '{}' has {} cluster; the cluster bootstrap needs at least 2 clusters \
                 in every stratum",
                s.name,
                c.count()
            )));
        }
    }
    let mut r = analyse_with(
        strata,
        weights,
        costs,
        read_costs,
        Some(clusters),
        resampling,
        max_reads,
        question_cost,
        backend,
        progress,
    )?;
    r.clusters = Some(clusters.counts());
    Ok(r)
}

/// [`analyse`], drawing whole clusters when `clusters` is given ([`analyse_clustered`]).
#[allow(clippy::too_many_arguments)]
fn analyse_with(
    strata: &[Stratum],
    weights: &[f64],
    costs: &[Vec<QuestionCost>],
    read_costs: &[Vec<ReadCosts>],
    clusters: Option<&ClusterDraw>,
    resampling: &Resampling,
    max_reads: u32,
    question_cost: f64,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let confidence = resampling.confidence;
    let shapes: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
    let pairs = pair_count(strata.iter().map(|s| s.r()).min().unwrap_or(0));
    if pairs > 0
        && (read_costs.len() != strata.len()
            || read_costs.iter().zip(strata).any(|(c, s)| c.len() != s.q()))
    {
        return Err(Error::Data(
            "the direct check needs one-read and two-read costs for every question".into(),
        ));
    }
    let layout = Layout {
        anova: true,
        pairs,
        clustered: clusters.is_some(),
    };
    let mut rows = Vec::with_capacity(strata.len());
    for (d, ((st, shape), cost)) in strata.iter().zip(&shapes).zip(costs).enumerate() {
        if shape.q() < 2 {
            return Err(Error::Data(format!(
                "stratum '{}' needs at least 2 questions",
                st.name
            )));
        }
        let traj: Vec<usize> = (0..st.t()).collect();
        let sub = |reads: &[usize]| -> Vec<f64> {
            (0..st.q())
                .map(|q| QuestionStats::from_cells(&traj, reads, |t, r| st.y(q, t, r)).mean)
                .collect()
        };
        let mean = shape.mean();
        let mut cols: Vec<Vec<f64>> = vec![vec![0.0; layout.k()]; st.q()];
        for (row, (qs, c)) in cols.iter_mut().zip(shape.questions.iter().zip(cost)) {
            let d = qs.mean - mean;
            row[layout.anova(Anova::Dev)] = d;
            row[layout.anova(Anova::Dev2)] = d * d;
            row[layout.anova(Anova::SsTrajectory)] = qs.ss_trajectory;
            row[layout.anova(Anova::SsRead)] = qs.ss_read;
            row[layout.at(Col::TrajectoryCost)] = c.trajectories;
            row[layout.at(Col::ReadCost)] = c.reads;
            row[layout.at(Col::Trajectories)] = shape.t as f64;
            row[layout.at(Col::Reads)] = (shape.t * shape.r) as f64;
            row[layout.at(Col::FirstReadCost)] = c.first_reads;
            if pairs > 0 {
                // Every trajectory has R ≥ 2 reads.
                row[layout.at(Col::PairedTrajectoryCost)] = c.trajectories;
            }
        }
        if pairs > 0 {
            for (row, c) in cols.iter_mut().zip(&read_costs[d]) {
                row[layout.at(Col::OneReadCost)] = c.one;
                row[layout.at(Col::TwoReadCost)] = c.two;
            }
            for p in 0..pairs {
                let (a, b) = pair_reads(p);
                for (m, reads) in [
                    (PairMean::A, vec![a]),
                    (PairMean::B, vec![b]),
                    (PairMean::Both, vec![a, b]),
                ] {
                    let means = sub(&reads);
                    let centre = means.iter().sum::<f64>() / means.len() as f64;
                    let c = layout.pair_mean(p, m);
                    for (row, v) in cols.iter_mut().zip(&means) {
                        row[layout.pair_questions(p)] = 1.0;
                        row[c] = v - centre;
                        row[c + 1] = (v - centre) * (v - centre);
                    }
                }
            }
        }
        rows.push(match clusters {
            Some(draw) => cluster_rows(layout, draw, d, &cols),
            None => cols,
        });
    }
    let (exact, reps) = balanced_sums(layout, &shapes, &rows, resampling, backend, progress)?;
    let stats_of = |sums: &[Vec<f64>]| {
        let (comps, pooled) = anova_components(layout, &shapes, sums);
        // The questions of the sample: Q, or with clusters Q* = Σ M_c over the draws.
        let q: Vec<f64> = shapes
            .iter()
            .zip(sums)
            .map(|(shape, s)| drawn_questions(layout, shape, s))
            .collect();
        statistics(
            layout,
            weights,
            &comps,
            pooled,
            &q,
            sums,
            max_reads,
            question_cost,
        )
    };
    let point = stats_of(&exact);
    let per_rep: Vec<Stats> = reps.iter().map(|r| stats_of(r)).collect();
    let mut headings = Vec::with_capacity(shapes.len());
    for (shape, s) in shapes.iter().zip(&exact) {
        headings.push(Heading {
            name: shape.name.clone(),
            questions: shape.q(),
            trajectories: shape.t,
            reads: shape.r,
            components: fit(&anova_sums(layout, shape, s))?.components,
            method: None,
            shape: None,
        });
    }
    let pooled =
        match AnovaSums::pooled(&shapes.iter().map(AnovaSums::of_stratum).collect::<Vec<_>>()) {
            Ok(p) => Some(Heading {
                name: "pooled".to_string(),
                questions: p.questions,
                trajectories: p.t,
                reads: p.r,
                components: fit(&p)?.components,
                method: None,
                shape: None,
            }),
            Err(_) => None,
        };
    Ok(report(
        layout,
        weights,
        headings,
        pooled,
        &exact,
        point,
        &per_rep,
        confidence,
        max_reads,
        question_cost,
        false,
    ))
}

// ---------------------------------------------------------------------------------------
// Unbalanced panels
// ---------------------------------------------------------------------------------------

/// The one-read analysis of a panel with an unbalanced stratum.
///
/// Components are fitted as `stats variance` fits them (an unbalanced stratum and the pooled
/// fit by REML, a balanced stratum by ANOVA) and refitted in every replicate of the question
/// bootstrap of [`crate::bootstrap::stratified`] (whole questions resampled, REML warm-started from
/// the full-sample fit). The unit costs are the mean cost per trajectory and per read over
/// the cells that exist, c_T = Σ_q TC_q / Σ_q T_q and c_R = Σ_q RC_q / Σ_q N_q (T_q the
/// question's trajectories, N_q its reads, TC_q and RC_q their ledger costs), and the design
/// is the mean one, T̄ = Σ T_q / Q and R̄ = Σ N_q / Σ T_q, so that the fixed-Q budget
/// Q T̄ (c_T + R̄ c_R) is the panel's measured cost. In a replicate every sum is weighted
/// by the question's draw count.
///
/// The direct check takes each pair (a, b) of reads ([`pair_reads`]) in every trajectory that has both
/// (a trajectory with one read is left out), question means over those trajectories, and
/// only the questions that have one; C₁ and C₂ are the costs of the trajectories with at
/// least 2 reads with their read 0, or reads 0 and 1. Pairs run while every stratum has at
/// least 2 questions with such a trajectory.
///
/// With `clusters` (`efficiency --cluster`) the bootstrap draws whole clusters
/// ([`Bootstrap::from_panel_clustered`]): each question weighted by its cluster's draw
/// count in the refits, the rows the clusters' sums (the direct check's SEs cluster-robust,
/// as [`analyse_clustered`]'s) with Q*_d = Σ k_c M_c.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than 2 questions or the costs do not match the
/// panel; REML and backend errors.
#[allow(clippy::too_many_arguments)]
pub fn analyse_unbalanced(
    panel: &Panel,
    costs: &[Vec<Vec<TrajectoryCost>>],
    clusters: Option<&ClusterDraw>,
    resampling: &Resampling,
    max_reads: u32,
    question_cost: f64,
    backend: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let Resampling {
        seed,
        replicates,
        confidence,
    } = *resampling;
    let strata = &panel.strata;
    let weights = panel.weights.as_slice();
    if costs.len() != strata.len() || costs.iter().zip(strata).any(|(c, s)| c.len() != s.q()) {
        return Err(Error::Data(
            "the costs do not match the panel's questions".into(),
        ));
    }
    for s in strata {
        if s.q() < 2 {
            return Err(Error::Data(format!(
                "stratum '{}' needs at least 2 questions",
                s.name
            )));
        }
    }
    // Reads 0..n every stratum can check with at least 2 questions: read b's pairs need a
    // trajectory with more than b reads.
    let has_read =
        |s: &Stratum, q: usize, b: usize| s.trajectories_of(q).iter().any(|t| t.len() > b);
    let mut reads = 1;
    while strata
        .iter()
        .all(|s| (0..s.q()).filter(|&q| has_read(s, q, reads)).count() >= 2)
    {
        reads += 1;
    }
    let pairs = pair_count(reads);
    let layout = Layout {
        anova: false,
        pairs,
        clustered: clusters.is_some(),
    };
    let k = layout.k();
    let mut rows: Vec<Vec<Vec<f64>>> = Vec::with_capacity(strata.len());
    for (s, cost) in strata.iter().zip(costs) {
        let mut cols = vec![vec![0.0; k]; s.q()];
        for (q, (row, c)) in cols.iter_mut().zip(cost).enumerate() {
            let t = s.trajectories_of(q);
            if c.len() != t.len() || c.iter().zip(&t).any(|(c, t)| c.reads.len() != t.len()) {
                return Err(Error::Data(format!(
                    "stratum '{}', question '{}': the costs do not match its cells",
                    s.name, s.questions[q]
                )));
            }
            for tc in c {
                row[layout.at(Col::TrajectoryCost)] += tc.trajectory;
                row[layout.at(Col::ReadCost)] += tc.reads.iter().sum::<f64>() + tc.extra_reads;
                row[layout.at(Col::Trajectories)] += 1.0;
                row[layout.at(Col::Reads)] += tc.reads.len() as f64;
                row[layout.at(Col::FirstReadCost)] += tc.reads.first().copied().unwrap_or(0.0);
                if pairs > 0 && tc.reads.len() >= 2 {
                    row[layout.at(Col::PairedTrajectoryCost)] += tc.trajectory;
                    row[layout.at(Col::OneReadCost)] += tc.reads[0];
                    row[layout.at(Col::TwoReadCost)] += tc.reads[0] + tc.reads[1];
                }
            }
        }
        for p in 0..pairs {
            let (a, b) = pair_reads(p);
            // Question means of read a, read b and both over its trajectories with both.
            let means: Vec<Option<[f64; 3]>> = (0..s.q())
                .map(|q| {
                    let t: Vec<&[f64]> = s
                        .trajectories_of(q)
                        .into_iter()
                        .filter(|t| t.len() > b)
                        .collect();
                    let n = t.len() as f64;
                    (n > 0.0).then(|| {
                        [
                            t.iter().map(|t| t[a]).sum::<f64>() / n,
                            t.iter().map(|t| t[b]).sum::<f64>() / n,
                            t.iter().map(|t| (t[a] + t[b]) / 2.0).sum::<f64>() / n,
                        ]
                    })
                })
                .collect();
            let included = means.iter().flatten().count() as f64;
            for (j, m) in [PairMean::A, PairMean::B, PairMean::Both]
                .into_iter()
                .enumerate()
            {
                let centre = means.iter().flatten().map(|m| m[j]).sum::<f64>() / included;
                let c = layout.pair_mean(p, m);
                for (row, m) in cols.iter_mut().zip(&means) {
                    if let Some(m) = m {
                        let d = m[j] - centre;
                        row[layout.pair_questions(p)] = 1.0;
                        row[c] = d;
                        row[c + 1] = d * d;
                    }
                }
            }
        }
        rows.push(cols);
    }
    let spec = BootstrapSpec {
        components: true,
        ..BootstrapSpec::default()
    };
    let boot = match clusters {
        None => Bootstrap::from_panel(panel, spec)?,
        Some(draw) => {
            // Cluster rows (each pair's H, M², S², S·M from the cluster's sums), with the
            // cluster's questions M_c last (beyond the layout) for a replicate's Q*.
            for (d, cols) in rows.iter_mut().enumerate() {
                let sizes = draw.strata()[d].sizes();
                *cols = cluster_rows(layout, draw, d, cols)
                    .into_iter()
                    .zip(sizes)
                    .map(|(mut row, &m)| {
                        row.push(f64::from(m));
                        row
                    })
                    .collect();
            }
            Bootstrap::from_panel_clustered(panel, draw, spec)?
        }
    };
    let point_stats = boot.point();
    let (point_comps, point_pooled) = boot.components_of(&point_stats);
    let q: Vec<f64> = strata.iter().map(|s| s.q() as f64).collect();
    let exact: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| {
            let mut s = vec![0.0; k];
            for row in r {
                for (a, v) in s.iter_mut().zip(row) {
                    *a += v;
                }
            }
            s
        })
        .collect();
    let point = statistics(
        layout,
        weights,
        &point_comps,
        point_pooled,
        &q,
        &exact,
        max_reads,
        question_cost,
    );
    let stats = boot.run(backend, seed, 0..replicates, progress)?;
    let sums = boot.weighted_sums(seed, 0..replicates, &rows)?;
    let n_stats = boot.plan.statistics.len();
    let per_rep: Vec<Stats> = stats
        .chunks_exact(n_stats)
        .zip(&sums)
        .map(|(st, s)| {
            let (c, p) = boot.components_of(st);
            // With clusters the drawn questions Q* = Σ k_c M_c (the column after the layout).
            let q: Vec<f64> = match clusters {
                None => q.clone(),
                Some(_) => s.iter().map(|s| s[k]).collect(),
            };
            statistics(layout, weights, &c, p, &q, s, max_reads, question_cost)
        })
        .collect();
    let shapes: Vec<Shape> = strata
        .iter()
        .map(|s| nested_stratum(s).map(|n| n.shape()))
        .collect::<Result<_>>()?;
    let heading = |name: String, shape: Shape, components, method| Heading {
        name,
        questions: shape.questions,
        trajectories: shape.trajectories.mean.round() as usize,
        reads: shape.reads.mean.round() as usize,
        components,
        method: Some(method),
        shape: Some(shape),
    };
    let mut headings = Vec::with_capacity(strata.len());
    for ((s, &shape), comps) in strata.iter().zip(&shapes).zip(&point_comps) {
        let Some(components) = *comps else {
            return Err(Error::Data(format!(
                "stratum '{}': the variance components could not be fitted",
                s.name
            )));
        };
        let method = if s.is_balanced() {
            Method::Anova
        } else {
            Method::Reml
        };
        headings.push(heading(s.name.clone(), shape, components, method));
    }
    // As in `stats variance`: a pooled fit that fails is left out.
    let pooled = point_pooled.map(|components| {
        let total = |f: fn(&Shape) -> usize| shapes.iter().map(f).sum::<usize>();
        let questions = total(|s| s.questions);
        let traj = total(|s| s.trajectories.total);
        let rows = total(|s| s.reads.total);
        let spread = |total: usize, parts: usize, f: fn(&Shape) -> &Spread| Spread {
            total,
            min: shapes.iter().map(|s| f(s).min).min().unwrap_or(0),
            mean: total as f64 / parts as f64,
            max: shapes.iter().map(|s| f(s).max).max().unwrap_or(0),
        };
        let shape = Shape {
            questions,
            trajectories: spread(traj, questions, |s| &s.trajectories),
            reads: spread(rows, traj, |s| &s.reads),
        };
        heading("pooled".to_string(), shape, components, Method::Reml)
    });
    Ok(report(
        layout,
        weights,
        headings,
        pooled,
        &exact,
        point,
        &per_rep,
        confidence,
        max_reads,
        question_cost,
        true,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A balanced panel resamples its columns in row order (4 ANOVA sums, 2 costs and the
    /// first-read cost, then with pairs 2 read costs and 6 per pair); the draws depend on
    /// the seed and question counts only, so adding a column does not move them. The
    /// unbalanced layout has the same blocks without the ANOVA one.
    #[test]
    fn layouts_and_the_balanced_engine_columns() {
        let b0 = Layout {
            anova: true,
            pairs: 0,
            clustered: false,
        };
        assert_eq!(b0.k(), 9);
        assert_eq!(b0.balanced_engine_columns(), [0, 1, 2, 3, 4, 5, 8]);
        let b2 = Layout {
            anova: true,
            pairs: 2,
            clustered: false,
        };
        assert_eq!(b2.k(), 26);
        let mut want: Vec<usize> = (0..6).chain([8, 10, 11]).collect();
        want.extend((13..19).chain(20..26));
        assert_eq!(b2.balanced_engine_columns(), want);
        let u1 = Layout {
            anova: false,
            pairs: 1,
            clustered: false,
        };
        assert_eq!(u1.k(), 15);
        assert_eq!(u1.at(Col::TrajectoryCost), 0);
        assert_eq!(u1.at(Col::FirstReadCost), 4);
        assert_eq!(u1.at(Col::TwoReadCost), 7);
        assert_eq!(u1.pair_questions(0), 8);
        assert_eq!(u1.pair_mean(0, PairMean::B), 11);
        assert_eq!(u1.pair_mean(0, PairMean::Both), 13);
    }

    /// Pairs run (0, 1), (0, 2), (1, 2), (0, 3), …: the first C(r, 2) are those of reads
    /// 0..r, every pair a < b once.
    #[test]
    fn every_pair_of_reads_once() {
        let got: Vec<(usize, usize)> = (0..pair_count(5)).map(pair_reads).collect();
        let mut want = Vec::new();
        for b in 1..5 {
            for a in 0..b {
                want.push((a, b));
            }
        }
        assert_eq!(got, want);
        assert_eq!(
            (pair_count(0), pair_count(1), pair_count(2), pair_count(5)),
            (0, 0, 1, 10)
        );
    }

    /// SE² of a pair's mean over the questions that have it: deviations −1, 0, 1 over
    /// n = 3 give (2 − 0/3)/2/3 = 1/3.
    #[test]
    fn se2_of_a_pair_mean_uses_the_questions_that_have_it() {
        let layout = Layout {
            anova: false,
            pairs: 1,
            clustered: false,
        };
        let mut s = vec![0.0; layout.k()];
        s[layout.pair_questions(0)] = 3.0;
        s[layout.pair_mean(0, PairMean::A)] = 0.0;
        s[layout.pair_mean(0, PairMean::A) + 1] = 2.0;
        assert_eq!(ScopeSums { layout, s: &s }.se2(0, PairMean::A), 1.0 / 3.0);
    }
}
