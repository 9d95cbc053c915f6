//! The one-read analysis of a panel with its costs: the fitted efficiency loss at fixed T
//! (the paper's headline, [`super::fixed_t`]) per stratum and combined over strata, the loss
//! at fixed Q ([`super::efficiency`], appendix D) per stratum and pooled, each with a
//! bootstrap that refits components and unit costs in every replicate, and the direct check
//! that needs no components.
//!
//! Direct check (R ≥ 2; appendix D, no components): the reads are split into the disjoint
//! pairs (0, 1), (2, 3), … (a last odd read is left out). For pair (a, b), with SE²_a and
//! SE²_b the measured SE² of the estimate using read a alone and read b alone (all T
//! trajectories) and SE²_ab using both, the variance × cost ratio of one read against two is
//! ρ_ab = ((SE²_a + SE²_b)/2 · C₁) / (SE²_ab · C₂), and the check is the mean of ρ over the
//! pairs: below 1, one read buys more precision per unit cost. The costs are those of a
//! one-read and a two-read panel as billed: C₁ = the trajectory costs plus the cost of
//! read 0, C₂ = the trajectory costs plus the cost of reads 0 and 1 (with caching the first
//! read of a packet is billed uncached and the second cached, so an average c_R over all
//! reads would mix them). The paired question bootstrap resamples every term together.

use serde::Serialize;

use super::efficiency::{efficiency, Efficiency, UnitCosts};
use super::fixed_t::{self, FixedTLoss, Part};
use crate::bootstrap::plan::{Bootstrap, BootstrapSpec};
use crate::components::reml::Shape;
use crate::components::variance::{fit, nested_stratum, AnovaSums, Method, PerLevel};
use crate::costs::panel_costs::{QuestionCost, TrajectoryCost};
use crate::panel::{Panel, QuestionStats, Stratum, StratumStats};
use crate::resample::columns::CenteredColumns;
use crate::resample::engine::ResampleBackend;
use crate::resample::engine::MAX_K;
use crate::resample::summary::percentile_interval;
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
    pub loss_ci: Option<[f64; 2]>,
    pub r_star_ci: Option<[f64; 2]>,
    /// Fixed-T loss at the scope's T (`None` for the pooled fit, which the fixed-T analysis
    /// replaces by the equal-weight combination).
    pub fixed_t: Option<FixedTLoss>,
    /// Central bootstrap intervals of the fixed-T loss (percent) and of R*_T.
    pub fixed_t_loss_ci: Option<[f64; 2]>,
    pub fixed_t_r_star_ci: Option<[f64; 2]>,
    /// How the components were fitted; present only when the panel is unbalanced (then
    /// `trajectories` and `reads` are the rounded mean design and `shape` has the spread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
}

/// The fixed-T loss of the equal-weight estimate over strata (question shares as in the
/// panel).
#[derive(Debug, Clone, Serialize)]
pub struct CombinedFixedT {
    pub questions: usize,
    /// J_T(R) = (a + b/R)(c + d R) at the data.
    pub product: Option<fixed_t::Product>,
    pub fixed_t: Option<FixedTLoss>,
    pub loss_ci: Option<[f64; 2]>,
    pub r_star_ci: Option<[f64; 2]>,
}

/// Reader cost of one question in a one-read panel (read 0 as billed) and in a two-read
/// panel (reads 0 and 1 as billed), all trajectories.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReadCosts {
    pub one: f64,
    pub two: f64,
}

/// The direct check of one pair of reads.
#[derive(Debug, Clone, Serialize)]
pub struct PairCheck {
    pub reads: [usize; 2],
    pub ratio: f64,
    pub ci: Option<[f64; 2]>,
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
    pub ci: Option<[f64; 2]>,
    pub pairs: Vec<PairCheck>,
}

/// An interval over the replicates of a function of one replicate's pair ratios.
type RatioInterval<'a> = dyn Fn(&dyn Fn(&[f64]) -> f64) -> Option<[f64; 2]> + 'a;

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
                    reads: [2 * p, 2 * p + 1],
                    ratio,
                    ci: rep_ci(&|r| r[p]),
                })
                .collect(),
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
}

/// Column layout of a question row sent to the engine.
const DEV: usize = 0; // ȳ_q − ȳ_d
const DEV2: usize = 1;
const SST: usize = 2;
const SSR: usize = 3;
const TC: usize = 4; // trajectory cost of the question
const RC: usize = 5; // read cost of the question
const A0: usize = 6; // without the direct check the row ends here
const R1C: usize = 6; // read cost of the question with read 0 alone
const R2C: usize = 7; // with reads 0 and 1
/// Pair p of reads (a, b): columns PAIR0 + 6p + (0, 1) read a alone (deviation and its
/// square), + (2, 3) read b alone, + (4, 5) both.
const PAIR0: usize = 8;

/// Per-stratum sums a replicate (or the data) reduces to.
struct ScopeSums<'a> {
    shape: &'a StratumStats,
    q: f64,
    s: &'a [f64],
}

impl ScopeSums<'_> {
    fn anova(&self) -> AnovaSums {
        let (t, r) = (self.shape.t, self.shape.r);
        AnovaSums {
            questions: self.q as usize,
            t,
            r,
            ss_question: (t * r) as f64 * (self.s[DEV2] - self.s[DEV] * self.s[DEV] / self.q),
            ss_trajectory: self.s[SST],
            ss_read: self.s[SSR],
            df_question: self.q - 1.0,
            df_trajectory: self.q * (t as f64 - 1.0),
            df_read: self.q * t as f64 * (r as f64 - 1.0),
        }
    }

    fn costs(&self) -> UnitCosts {
        let qt = self.q * self.shape.t as f64;
        UnitCosts {
            trajectory: self.s[TC] / qt,
            read: self.s[RC] / (qt * self.shape.r as f64),
        }
    }

    /// SE² of the stratum mean from a (deviation, square) column pair.
    fn se2(&self, col: usize) -> f64 {
        (self.s[col + 1] - self.s[col] * self.s[col] / self.q) / (self.q - 1.0) / self.q
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

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Losses and optima of each scope and the direct ratio, from sums.
fn statistics(shapes: &[StratumStats], sums: &[Vec<f64>], pairs: usize, max_reads: u32) -> Stats {
    let scopes: Vec<ScopeSums> = shapes
        .iter()
        .zip(sums)
        .map(|(shape, s)| ScopeSums {
            shape,
            q: shape.q() as f64,
            s,
        })
        .collect();
    let mut out = Vec::with_capacity(scopes.len() + 1);
    let mut fixed_t = Vec::with_capacity(scopes.len() + 1);
    let mut parts = Vec::with_capacity(scopes.len());
    let q_total: f64 = scopes.iter().map(|s| s.q).sum();
    let mut anovas = Vec::new();
    let (mut tc, mut rc, mut qt) = (0.0, 0.0, 0.0);
    for sc in &scopes {
        let a = sc.anova();
        let f = fit(&a).ok();
        let t = sc.shape.t as f64;
        let e = f
            .as_ref()
            .and_then(|f| efficiency(&f.components, sc.costs(), sc.q, t, sc.shape.r as f64));
        out.push(e);
        fixed_t.push(f.as_ref().and_then(|f| {
            fixed_t::loss(&fixed_t::stratum(&f.components, sc.costs(), t), max_reads)
        }));
        // A stratum whose components cannot be fitted leaves the combination undefined.
        parts.push(f.map(|f| Part {
            components: f.components,
            costs: sc.costs(),
            t,
            share: sc.q / q_total,
        }));
        anovas.push(a);
        tc += sc.s[TC];
        rc += sc.s[RC];
        qt += sc.q * sc.shape.t as f64;
    }
    let pooled = AnovaSums::pooled(&anovas).ok().and_then(|p| {
        let f = fit(&p).ok()?;
        let costs = UnitCosts {
            trajectory: tc / qt,
            read: rc / (qt * p.r as f64),
        };
        efficiency(
            &f.components,
            costs,
            p.questions as f64,
            p.t as f64,
            p.r as f64,
        )
    });
    out.push(pooled);
    let product = parts
        .into_iter()
        .collect::<Option<Vec<Part>>>()
        .map(|p| fixed_t::combined(&p));
    fixed_t.push(product.and_then(|p| fixed_t::loss(&p, max_reads)));
    let ratios = (pairs > 0).then(|| {
        let d2 = (scopes.len() * scopes.len()) as f64;
        let se2 = |col: usize| scopes.iter().map(|s| s.se2(col)).sum::<f64>() / d2;
        let (c1, c2) = direct_costs(sums);
        (0..pairs)
            .map(|p| {
                let b = PAIR0 + 6 * p;
                (se2(b) + se2(b + 2)) / 2.0 * c1 / (se2(b + 4) * c2)
            })
            .collect()
    });
    Stats {
        fixed_q: out,
        fixed_t,
        product,
        ratios,
    }
}

/// C₁ and C₂ of the direct check from the sums.
fn direct_costs(sums: &[Vec<f64>]) -> (f64, f64) {
    sums.iter().fold((0.0, 0.0), |(a, b), s| {
        (a + s[TC] + s[R1C], b + s[TC] + s[R2C])
    })
}

/// Column sums `[stratum][column]`.
type Sums = Vec<Vec<f64>>;

/// Exact column sums `[stratum][column]` of `rows` and their resamples
/// `[replicate][stratum][column]`, sent to the engine in groups of at most [`MAX_K`]
/// columns: the draws depend on the seed and the question counts only, not on the columns,
/// so every group sees the same resample and the groups join into one.
fn grouped_sums(
    rows: &[Vec<Vec<f64>>],
    backend: &dyn ResampleBackend,
    seed: u64,
    replicates: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Sums, Vec<Sums>)> {
    let k = rows.first().and_then(|s| s.first()).map_or(0, Vec::len);
    let groups: Vec<std::ops::Range<usize>> = (0..k)
        .step_by(MAX_K)
        .map(|a| a..(a + MAX_K).min(k))
        .collect();
    let n = groups.len() as u64;
    let mut exact: Vec<Vec<f64>> = vec![Vec::with_capacity(k); rows.len()];
    let mut reps: Vec<Vec<Vec<f64>>> = Vec::new();
    for (g, cols) in groups.into_iter().enumerate() {
        let part: Vec<Vec<Vec<f64>>> = rows
            .iter()
            .map(|s| s.iter().map(|r| r[cols.clone()].to_vec()).collect())
            .collect();
        let c = CenteredColumns::new(&part)?;
        for (e, s) in exact.iter_mut().zip(c.exact_sums()) {
            e.extend_from_slice(s);
        }
        let done = g as u64 * u64::from(replicates);
        let r = c.resample(backend, seed, 0..replicates, &|d| progress((done + d) / n))?;
        if reps.is_empty() {
            reps = r;
        } else {
            for (acc, rep) in reps.iter_mut().zip(r) {
                for (a, s) in acc.iter_mut().zip(rep) {
                    a.extend(s);
                }
            }
        }
    }
    Ok((exact, reps))
}

fn ci(mut v: Vec<f64>, confidence: f64) -> Option<[f64; 2]> {
    v.retain(|x| x.is_finite());
    if v.len() < 2 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(percentile_interval(&v, confidence))
}

/// Runs the analysis: `costs[s][q]` are the question costs of stratum s (full panel),
/// `read_costs[s][q]` its one-read and two-read reader costs as billed (used when every
/// stratum has R ≥ 2); the fixed-T minimum runs over R = 1..=`max_reads`.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than 2 questions; backend errors.
#[allow(clippy::too_many_arguments)]
pub fn analyse(
    strata: &[Stratum],
    costs: &[Vec<QuestionCost>],
    read_costs: &[Vec<ReadCosts>],
    backend: &dyn ResampleBackend,
    seed: u64,
    replicates: u32,
    confidence: f64,
    max_reads: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let shapes: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
    let pairs = strata.iter().map(|s| s.r() / 2).min().unwrap_or(0);
    if pairs > 0
        && (read_costs.len() != strata.len()
            || read_costs.iter().zip(strata).any(|(c, s)| c.len() != s.q()))
    {
        return Err(Error::Data(
            "the direct check needs one-read and two-read costs for every question".into(),
        ));
    }
    let k = if pairs > 0 { PAIR0 + 6 * pairs } else { A0 };
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
        let mut cols: Vec<Vec<f64>> = vec![vec![0.0; k]; st.q()];
        for (i, (qs, c)) in shape.questions.iter().zip(cost).enumerate() {
            let d = qs.mean - mean;
            cols[i][..A0].copy_from_slice(&[
                d,
                d * d,
                qs.ss_trajectory,
                qs.ss_read,
                c.trajectories,
                c.reads,
            ]);
        }
        if pairs > 0 {
            for (i, c) in read_costs[d].iter().enumerate() {
                cols[i][R1C] = c.one;
                cols[i][R2C] = c.two;
            }
            for p in 0..pairs {
                let (a, b) = (2 * p, 2 * p + 1);
                for (j, reads) in [vec![a], vec![b], vec![a, b]].iter().enumerate() {
                    let m = sub(reads);
                    let centre = m.iter().sum::<f64>() / m.len() as f64;
                    for (i, v) in m.iter().enumerate() {
                        let c = PAIR0 + 6 * p + 2 * j;
                        cols[i][c] = v - centre;
                        cols[i][c + 1] = (v - centre) * (v - centre);
                    }
                }
            }
        }
        rows.push(cols);
    }
    let (exact, reps) = grouped_sums(&rows, backend, seed, replicates, progress)?;
    let point = statistics(&shapes, &exact, pairs, max_reads);
    let per_rep: Vec<Stats> = reps
        .iter()
        .map(|r| statistics(&shapes, r, pairs, max_reads))
        .collect();
    let scope_ci = |i: usize, f: &dyn Fn(&Efficiency) -> f64| {
        ci(
            per_rep
                .iter()
                .map(|s| s.fixed_q[i].as_ref().map(f).unwrap_or(f64::NAN))
                .collect(),
            confidence,
        )
    };
    let fixed_t_ci = |i: usize, f: &dyn Fn(&FixedTLoss) -> f64| {
        ci(
            per_rep
                .iter()
                .map(|s| s.fixed_t[i].as_ref().map(f).unwrap_or(f64::NAN))
                .collect(),
            confidence,
        )
    };
    let mut results = Vec::new();
    let n = shapes.len();
    let pooled_sums =
        AnovaSums::pooled(&shapes.iter().map(AnovaSums::of_stratum).collect::<Vec<_>>()).ok();
    for i in 0..=n {
        let (name, questions, t, r, comps, costs) = if i < n {
            let sc = ScopeSums {
                shape: &shapes[i],
                q: shapes[i].q() as f64,
                s: &exact[i],
            };
            let f = fit(&sc.anova())?;
            (
                shapes[i].name.clone(),
                shapes[i].q(),
                shapes[i].t,
                shapes[i].r,
                f.components,
                sc.costs(),
            )
        } else {
            let Some(p) = pooled_sums else { continue };
            let f = fit(&p)?;
            let (tc, rc): (f64, f64) = exact
                .iter()
                .fold((0.0, 0.0), |(a, b), s| (a + s[TC], b + s[RC]));
            let qt = (p.questions * p.t) as f64;
            (
                "pooled".to_string(),
                p.questions,
                p.t,
                p.r,
                f.components,
                UnitCosts {
                    trajectory: tc / qt,
                    read: rc / (qt * p.r as f64),
                },
            )
        };
        results.push(ScopeResult {
            name,
            questions,
            trajectories: t,
            reads: r,
            components: comps,
            unit_costs: costs,
            efficiency: point.fixed_q[i],
            loss_ci: scope_ci(i, &|e| e.loss_percent),
            r_star_ci: scope_ci(i, &|e| e.r_star),
            fixed_t: if i < n { point.fixed_t[i] } else { None },
            fixed_t_loss_ci: (i < n)
                .then(|| fixed_t_ci(i, &|e| e.loss_percent))
                .flatten(),
            fixed_t_r_star_ci: (i < n).then(|| fixed_t_ci(i, &|e| e.r_star)).flatten(),
            method: None,
            shape: None,
        });
    }
    let pooled = if results.len() > n {
        results.pop()
    } else {
        None
    };
    let combined = CombinedFixedT {
        questions: shapes.iter().map(StratumStats::q).sum(),
        product: point.product,
        fixed_t: point.fixed_t[n],
        loss_ci: fixed_t_ci(n, &|e| e.loss_percent),
        r_star_ci: fixed_t_ci(n, &|e| e.r_star),
    };
    let direct = point.ratios.map(|ratios| {
        let d2 = (n * n) as f64;
        let se = |col: usize| {
            (shapes
                .iter()
                .zip(&exact)
                .map(|(shape, s)| {
                    ScopeSums {
                        shape,
                        q: shape.q() as f64,
                        s,
                    }
                    .se2(col)
                })
                .sum::<f64>()
                / d2)
                .sqrt()
        };
        let rep_ci = |f: &dyn Fn(&[f64]) -> f64| {
            ci(
                per_rep
                    .iter()
                    .map(|s| s.ratios.as_deref().map(f).unwrap_or(f64::NAN))
                    .collect(),
                confidence,
            )
        };
        let (c1, c2) = direct_costs(&exact);
        let singles: Vec<f64> = (0..pairs)
            .flat_map(|p| [se(PAIR0 + 6 * p), se(PAIR0 + 6 * p + 2)])
            .collect();
        let doubles: Vec<f64> = (0..pairs).map(|p| se(PAIR0 + 6 * p + 4)).collect();
        DirectCheck::assemble(&singles, &doubles, (c1, c2), &ratios, &rep_ci)
    });
    Ok(OneReadReport {
        max_reads,
        strata: results,
        combined,
        pooled,
        direct,
        unbalanced: false,
    })
}

// ---------------------------------------------------------------------------------------
// Unbalanced panels
// ---------------------------------------------------------------------------------------

/// Per-question columns of the unbalanced analysis (count-weighted in each replicate).
const U_TC: usize = 0; // trajectory costs of the question
const U_RC: usize = 1; // read costs
const U_T: usize = 2; // trajectories
const U_R: usize = 3; // reads
/// Direct check: the costs of the trajectories with at least 2 reads, of their read 0 and
/// of their reads 0 and 1.
const U_TC2: usize = 4;
const U_R1C: usize = 5;
const U_R2C: usize = 6;
/// Pair p: columns U_PAIR0 + 7p + 0 the question's indicator (it has a trajectory with
/// reads 2p and 2p + 1), + (1, 2) read 2p alone (deviation, square), + (3, 4) read 2p + 1
/// alone, + (5, 6) both.
const U_PAIR0: usize = 7;

/// One stratum (or the pooled scope) of the unbalanced analysis reduced to its sums.
struct UScope {
    components: Option<PerLevel>,
    q: f64,
    traj: f64,
    reads: f64,
    tc: f64,
    rc: f64,
}

impl UScope {
    fn costs(&self) -> UnitCosts {
        UnitCosts {
            trajectory: self.tc / self.traj,
            read: self.rc / self.reads,
        }
    }
    /// The mean design: T̄ = trajectories / Q, R̄ = reads / trajectories.
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

/// Statistics of the unbalanced analysis from the refitted components and the column sums
/// of one replicate (or the data).
fn unbalanced_statistics(
    comps: &[Option<PerLevel>],
    pooled: Option<PerLevel>,
    q: &[f64],
    sums: &[Vec<f64>],
    pairs: usize,
    max_reads: u32,
) -> Stats {
    let scopes: Vec<UScope> = comps
        .iter()
        .zip(q)
        .zip(sums)
        .map(|((c, &q), s)| UScope {
            components: *c,
            q,
            traj: s[U_T],
            reads: s[U_R],
            tc: s[U_TC],
            rc: s[U_RC],
        })
        .collect();
    let sum = |f: fn(&UScope) -> f64| scopes.iter().map(f).sum::<f64>();
    let all = UScope {
        components: pooled,
        q: sum(|s| s.q),
        traj: sum(|s| s.traj),
        reads: sum(|s| s.reads),
        tc: sum(|s| s.tc),
        rc: sum(|s| s.rc),
    };
    let mut fixed_q: Vec<Option<Efficiency>> = scopes.iter().map(UScope::fixed_q).collect();
    fixed_q.push(all.fixed_q());
    let mut fixed_t: Vec<Option<FixedTLoss>> = scopes
        .iter()
        .map(|s| {
            let c = s.components.as_ref()?;
            fixed_t::loss(&fixed_t::stratum(c, s.costs(), s.t()), max_reads)
        })
        .collect();
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
        .map(|p| fixed_t::combined(&p));
    fixed_t.push(product.and_then(|p| fixed_t::loss(&p, max_reads)));
    let ratios = (pairs > 0).then(|| {
        let d2 = (sums.len() * sums.len()) as f64;
        let (c1, c2) = unbalanced_direct_costs(sums);
        (0..pairs)
            .map(|p| {
                let b = U_PAIR0 + 7 * p;
                let se2 = |col: usize| {
                    sums.iter()
                        .map(|s| {
                            let n = s[b];
                            (s[col + 1] - s[col] * s[col] / n) / (n - 1.0) / n
                        })
                        .sum::<f64>()
                        / d2
                };
                (se2(b + 1) + se2(b + 3)) / 2.0 * c1 / (se2(b + 5) * c2)
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

/// C₁ and C₂ of the unbalanced direct check: the trajectories with at least 2 reads, with
/// their read 0, or their reads 0 and 1.
fn unbalanced_direct_costs(sums: &[Vec<f64>]) -> (f64, f64) {
    sums.iter().fold((0.0, 0.0), |(a, b), s| {
        (a + s[U_TC2] + s[U_R1C], b + s[U_TC2] + s[U_R2C])
    })
}

/// The one-read analysis of a panel with an unbalanced stratum.
///
/// Components are fitted as `stats variance` fits them (an unbalanced stratum and the pooled
/// fit by REML, a balanced stratum by ANOVA) and refitted in every replicate of the question
/// bootstrap of [`crate::bootstrap::plan`] (whole questions resampled, REML warm-started from
/// the full-sample fit). The unit costs are the mean cost per trajectory and per read over
/// the cells that exist, c_T = Σ_q TC_q / Σ_q T_q and c_R = Σ_q RC_q / Σ_q N_q (T_q the
/// question's trajectories, N_q its reads, TC_q and RC_q their ledger costs), and the design
/// is the mean one, T̄ = Σ T_q / Q and R̄ = Σ N_q / Σ T_q, so that the fixed-Q budget
/// Q T̄ (c_T + R̄ c_R) is the panel's measured cost. In a replicate every sum is weighted
/// by the question's draw count.
///
/// The direct check takes pair (2p, 2p + 1) of reads in every trajectory that has both
/// (a trajectory with one read is left out), question means over those trajectories, and
/// only the questions that have one; C₁ and C₂ are the costs of the trajectories with at
/// least 2 reads with their read 0, or reads 0 and 1. Pairs run while every stratum has at
/// least 2 questions with such a trajectory.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than 2 questions or the costs do not match the
/// panel; REML and backend errors.
#[allow(clippy::too_many_arguments)]
pub fn analyse_unbalanced(
    panel: &Panel,
    costs: &[Vec<Vec<TrajectoryCost>>],
    backend: &dyn ResampleBackend,
    seed: u64,
    replicates: u32,
    confidence: f64,
    max_reads: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let strata = &panel.strata;
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
    // Pairs of reads every stratum can check with at least 2 questions.
    let has_pair =
        |s: &Stratum, q: usize, p: usize| s.trajectories_of(q).iter().any(|t| t.len() >= 2 * p + 2);
    let mut pairs = 0;
    while strata
        .iter()
        .all(|s| (0..s.q()).filter(|&q| has_pair(s, q, pairs)).count() >= 2)
    {
        pairs += 1;
    }
    let k = U_PAIR0 + 7 * pairs;
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
                row[U_TC] += tc.trajectory;
                row[U_RC] += tc.reads.iter().sum::<f64>();
                row[U_T] += 1.0;
                row[U_R] += tc.reads.len() as f64;
                if tc.reads.len() >= 2 {
                    row[U_TC2] += tc.trajectory;
                    row[U_R1C] += tc.reads[0];
                    row[U_R2C] += tc.reads[0] + tc.reads[1];
                }
            }
        }
        for p in 0..pairs {
            let (a, b) = (2 * p, 2 * p + 1);
            let base = U_PAIR0 + 7 * p;
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
            for j in 0..3 {
                let centre = means.iter().flatten().map(|m| m[j]).sum::<f64>() / included;
                for (row, m) in cols.iter_mut().zip(&means) {
                    if let Some(m) = m {
                        let d = m[j] - centre;
                        row[base] = 1.0;
                        row[base + 1 + 2 * j] = d;
                        row[base + 2 + 2 * j] = d * d;
                    }
                }
            }
        }
        rows.push(cols);
    }
    let boot = Bootstrap::from_panel(
        panel,
        BootstrapSpec {
            components: true,
            ..BootstrapSpec::default()
        },
    )?;
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
    let point = unbalanced_statistics(&point_comps, point_pooled, &q, &exact, pairs, max_reads);
    let stats = boot.run(backend, seed, 0..replicates, progress)?;
    let sums = boot.weighted_sums(seed, 0..replicates, &rows)?;
    let n_stats = boot.plan.statistics.len();
    let per_rep: Vec<Stats> = stats
        .chunks_exact(n_stats)
        .zip(&sums)
        .map(|(st, s)| {
            let (c, p) = boot.components_of(st);
            unbalanced_statistics(&c, p, &q, s, pairs, max_reads)
        })
        .collect();
    let ci_of = |f: &dyn Fn(&Stats) -> f64| ci(per_rep.iter().map(f).collect(), confidence);
    let n = strata.len();
    let shapes: Vec<Shape> = strata
        .iter()
        .map(|s| nested_stratum(s).map(|n| n.shape()))
        .collect::<Result<_>>()?;
    let mut results = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let (name, shape, comps, method) = if i < n {
            let m = if strata[i].is_balanced() {
                Method::Anova
            } else {
                Method::Reml
            };
            (strata[i].name.clone(), shapes[i], point_comps[i], m)
        } else {
            let total = |f: fn(&Shape) -> usize| shapes.iter().map(f).sum::<usize>();
            let questions = total(|s| s.questions);
            let traj = total(|s| s.trajectories.total);
            let rows = total(|s| s.reads.total);
            let spread =
                |total: usize, parts: usize, f: fn(&Shape) -> &crate::components::reml::Spread| {
                    crate::components::reml::Spread {
                        total,
                        min: shapes.iter().map(|s| f(s).min).min().unwrap_or(0),
                        mean: total as f64 / parts as f64,
                        max: shapes.iter().map(|s| f(s).max).max().unwrap_or(0),
                    }
                };
            let shape = Shape {
                questions,
                trajectories: spread(traj, questions, |s| &s.trajectories),
                reads: spread(rows, traj, |s| &s.reads),
            };
            ("pooled".to_string(), shape, point_pooled, Method::Reml)
        };
        let Some(components) = comps else {
            if i == n {
                // As in `stats variance`: a pooled fit that fails is left out.
                continue;
            }
            return Err(Error::Data(format!(
                "stratum '{name}': the variance components could not be fitted"
            )));
        };
        let ex = if i < n {
            &exact[i]
        } else {
            &exact.iter().fold(vec![0.0; k], |mut a, s| {
                for (x, v) in a.iter_mut().zip(s) {
                    *x += v;
                }
                a
            })
        };
        results.push(ScopeResult {
            name,
            questions: shape.questions,
            trajectories: shape.trajectories.mean.round() as usize,
            reads: shape.reads.mean.round() as usize,
            components,
            unit_costs: UnitCosts {
                trajectory: ex[U_TC] / ex[U_T],
                read: ex[U_RC] / ex[U_R],
            },
            efficiency: point.fixed_q[i],
            loss_ci: ci_of(&|s| s.fixed_q[i].map_or(f64::NAN, |e| e.loss_percent)),
            r_star_ci: ci_of(&|s| s.fixed_q[i].map_or(f64::NAN, |e| e.r_star)),
            fixed_t: if i < n { point.fixed_t[i] } else { None },
            fixed_t_loss_ci: (i < n)
                .then(|| ci_of(&|s| s.fixed_t[i].map_or(f64::NAN, |e| e.loss_percent)))
                .flatten(),
            fixed_t_r_star_ci: (i < n)
                .then(|| ci_of(&|s| s.fixed_t[i].map_or(f64::NAN, |e| e.r_star)))
                .flatten(),
            method: Some(method),
            shape: Some(shape),
        });
    }
    let pooled = if results.len() > n {
        results.pop()
    } else {
        None
    };
    let combined = CombinedFixedT {
        questions: strata.iter().map(Stratum::q).sum(),
        product: point.product,
        fixed_t: point.fixed_t[n],
        loss_ci: ci_of(&|s| s.fixed_t[n].map_or(f64::NAN, |e| e.loss_percent)),
        r_star_ci: ci_of(&|s| s.fixed_t[n].map_or(f64::NAN, |e| e.r_star)),
    };
    let direct = point.ratios.map(|ratios| {
        let d2 = (n * n) as f64;
        let se = |col: usize, b: usize| {
            (exact
                .iter()
                .map(|s| {
                    let m = s[b];
                    (s[col + 1] - s[col] * s[col] / m) / (m - 1.0) / m
                })
                .sum::<f64>()
                / d2)
                .sqrt()
        };
        let (c1, c2) = unbalanced_direct_costs(&exact);
        let singles: Vec<f64> = (0..pairs)
            .flat_map(|p| {
                let b = U_PAIR0 + 7 * p;
                [se(b + 1, b), se(b + 3, b)]
            })
            .collect();
        let doubles: Vec<f64> = (0..pairs)
            .map(|p| {
                let b = U_PAIR0 + 7 * p;
                se(b + 5, b)
            })
            .collect();
        let rep_ci =
            |f: &dyn Fn(&[f64]) -> f64| ci_of(&|s: &Stats| s.ratios.as_deref().map_or(f64::NAN, f));
        DirectCheck::assemble(&singles, &doubles, (c1, c2), &ratios, &rep_ci)
    });
    Ok(OneReadReport {
        max_reads,
        strata: results,
        combined,
        pooled,
        direct,
        unbalanced: true,
    })
}
