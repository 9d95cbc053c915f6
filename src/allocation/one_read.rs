//! The one-read analysis of a panel with its costs: the fitted efficiency loss at fixed T
//! (the paper's headline, [`super::fixed_t`]) per stratum and combined over strata, the loss
//! at fixed Q ([`super::efficiency`], appendix D) per stratum and pooled, each with a
//! bootstrap that refits components and unit costs in every replicate, and the direct check
//! that needs no components.
//!
//! Direct check (R ≥ 2): with SE²₀ and SE²₁ the measured SE² of the estimate using read 0
//! alone and read 1 alone (all T trajectories), SE²₀₁ using both, and panel costs
//! C₁ = Σ_d Q_d T (c_T + c_R), C₂ = Σ_d Q_d T (c_T + 2 c_R), the variance × cost ratio of
//! one read against two is ((SE²₀ + SE²₁)/2 · C₁) / (SE²₀₁ · C₂): below 1, one read buys
//! more precision per unit cost.

use serde::Serialize;

use super::efficiency::{efficiency, Efficiency, UnitCosts};
use super::fixed_t::{self, FixedTLoss, Part};
use crate::components::variance::{fit, AnovaSums, PerLevel};
use crate::costs::panel_costs::QuestionCost;
use crate::panel::{QuestionStats, Stratum, StratumStats};
use crate::resample::columns::CenteredColumns;
use crate::resample::engine::ResampleBackend;
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

/// The direct one-read versus two-read check.
#[derive(Debug, Clone, Serialize)]
pub struct DirectCheck {
    pub se_one_read: f64,
    pub se_two_reads: f64,
    pub ratio: f64,
    pub ci: Option<[f64; 2]>,
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
}

/// Column layout of a question row sent to the engine.
const DEV: usize = 0; // ȳ_q − ȳ_d
const DEV2: usize = 1;
const SST: usize = 2;
const SSR: usize = 3;
const TC: usize = 4; // trajectory cost of the question
const RC: usize = 5; // read cost of the question
const A0: usize = 6; // read 0 only: deviation and its square; then read 1; then reads 0 and 1
const K_DIRECT: usize = 12;

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
    ratio: Option<f64>,
}

/// Losses and optima of each scope and the direct ratio, from sums.
fn statistics(shapes: &[StratumStats], sums: &[Vec<f64>], direct: bool, max_reads: u32) -> Stats {
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
    let ratio = direct.then(|| {
        let d2 = (scopes.len() * scopes.len()) as f64;
        let se2 = |col: usize| scopes.iter().map(|s| s.se2(col)).sum::<f64>() / d2;
        let (c1, c2) = scopes.iter().fold((0.0, 0.0), |(a, b), s| {
            let c = s.costs();
            let n = s.q * s.shape.t as f64;
            (
                a + n * (c.trajectory + c.read),
                b + n * (c.trajectory + 2.0 * c.read),
            )
        });
        (se2(A0) + se2(A0 + 2)) / 2.0 * c1 / (se2(A0 + 4) * c2)
    });
    Stats {
        fixed_q: out,
        fixed_t,
        product,
        ratio,
    }
}

fn ci(mut v: Vec<f64>, confidence: f64) -> Option<[f64; 2]> {
    v.retain(|x| x.is_finite());
    if v.len() < 2 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(percentile_interval(&v, confidence))
}

/// Runs the analysis: `costs[s][q]` are the question costs of stratum s (full panel); the
/// fixed-T minimum runs over R = 1..=`max_reads`.
///
/// # Errors
/// [`Error::Data`] when a stratum has fewer than 2 questions; backend errors.
pub fn analyse(
    strata: &[Stratum],
    costs: &[Vec<QuestionCost>],
    backend: &dyn ResampleBackend,
    seed: u64,
    replicates: u32,
    confidence: f64,
    max_reads: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<OneReadReport> {
    let shapes: Vec<StratumStats> = strata.iter().map(StratumStats::from_stratum).collect();
    let direct = strata.iter().all(|s| s.r() >= 2);
    let k = if direct { K_DIRECT } else { A0 };
    let mut rows = Vec::with_capacity(strata.len());
    for ((st, shape), cost) in strata.iter().zip(&shapes).zip(costs) {
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
        if direct {
            for (j, reads) in [vec![0], vec![1], vec![0, 1]].iter().enumerate() {
                let m = sub(reads);
                let centre = m.iter().sum::<f64>() / m.len() as f64;
                for (i, v) in m.iter().enumerate() {
                    cols[i][A0 + 2 * j] = v - centre;
                    cols[i][A0 + 2 * j + 1] = (v - centre) * (v - centre);
                }
            }
        }
        rows.push(cols);
    }
    let columns = CenteredColumns::new(&rows)?;
    let point = statistics(&shapes, columns.exact_sums(), direct, max_reads);
    let reps = columns.resample(backend, seed, 0..replicates, progress)?;
    let per_rep: Vec<Stats> = reps
        .iter()
        .map(|r| statistics(&shapes, r, direct, max_reads))
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
                s: &columns.exact_sums()[i],
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
            let (tc, rc): (f64, f64) = columns
                .exact_sums()
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
    let direct = point.ratio.map(|ratio| {
        let d2 = (n * n) as f64;
        let se = |col: usize| {
            (shapes
                .iter()
                .zip(columns.exact_sums())
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
        DirectCheck {
            se_one_read: (se(A0) + se(A0 + 2)) / 2.0,
            se_two_reads: se(A0 + 4),
            ratio,
            ci: ci(
                per_rep
                    .iter()
                    .map(|s| s.ratio.unwrap_or(f64::NAN))
                    .collect(),
                confidence,
            ),
        }
    });
    Ok(OneReadReport {
        max_reads,
        strata: results,
        combined,
        pooled,
        direct,
    })
}
