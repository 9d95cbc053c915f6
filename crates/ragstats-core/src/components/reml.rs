//! Nested variance components of unbalanced panels by restricted maximum likelihood (REML),
//! the fit of `lme4::lmer(y ~ 1 + (1|q) + (1|q:t), REML = TRUE)`.
//!
//! Model, per stratum d: y_qtr = β_d + a_q + b_qt + e_qtr with a_q ~ N(0, σ²_q),
//! b_qt ~ N(0, σ²_t), e_qtr ~ N(0, σ²_r), any number of trajectories per question and of reads
//! per trajectory. One stratum is fitted alone; several are fitted together with one fixed mean
//! per stratum and common components (`y ~ stratum + (1|q) + (1|q:t)`).
//!
//! With σ² = σ²_r, a = σ²_t/σ², c = σ²_q/σ² (lme4's θ = (√a, √c), relative standard
//! deviations), question q's rows have covariance σ² H_q, H_q = I + a blockdiag(J_{m_t}) +
//! c J_{n_q} (m_t reads in trajectory t, n_q rows). Nested compound symmetry gives, with
//! d_t = 1/(1 + a m_t), w_q = Σ_t m_t d_t and e_q = 1/(1 + c w_q):
//!
//! * log|H_q| = Σ_t log(1 + a m_t) + log(1 + c w_q)
//! * 1'H_q⁻¹1 = w_q e_q, 1'H_q⁻¹y = s_q e_q with s_q = Σ_t m_t ȳ_t d_t
//! * y'H_q⁻¹y = W_q + P_q − c s_q² e_q with W_q = Σ_t Σ_r (y − ȳ_t)², P_q = Σ_t m_t ȳ_t² d_t
//!
//! With A_d = Σ_{q∈d} w_q e_q and b_d = Σ_{q∈d} s_q e_q the generalised residual sum of squares is
//! RSS = Σ_q (W_q + P_q − c s_q² e_q) − Σ_d b_d²/A_d, β̂_d = b_d/A_d, and σ² is profiled out
//! (σ̂² = RSS/(n − p), p strata) leaving lme4's REML criterion (−2 × restricted log-likelihood)
//!
//! > L(a, c) = Σ_q log|H_q| + Σ_d log A_d + (n − p)(1 + log(2π RSS/(n − p))).
//!
//! Questions with the same design (multiset of read counts m_t) share w_q, e_q and log|H_q|,
//! and Σ_q s_q² = md'·M·md with md_g = m_g/(1 + a m_g) and M the sum over those questions of
//! Sy Sy' (Sy_g the sum of the question's trajectory means with m_g reads): one pass over the
//! trajectories collects these sums, after which an evaluation costs O(designs), not O(rows),
//! and a resample (question counts) only redoes that pass.
//!
//! It is minimised over a, c ≥ 0 by projected Newton steps (exact gradient, Hessian by central
//! differences of the gradient, made positive definite by its eigenvalues) with a backtracking
//! line search; a bound variable whose derivative points outwards is held at exactly 0, which
//! is lme4's boundary (singular) fit. See `docs/METHODS.md` ("REML") for the rules on levels
//! that are not estimable and on exactly agreeing reads.

use nalgebra::{Matrix2, SymmetricEigen, Vector2};
use serde::{Deserialize, Serialize};

use super::levels::{Level, PerLevel};
use crate::{Error, Result};

/// One stratum's outcomes grouped as questions → trajectories → reads, reduced to what the
/// REML criterion needs: reads per trajectory, trajectory means (centred on the stratum
/// mean) and per-question within-trajectory sums of squares. Labels play no part: only the
/// grouping and the counts do.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedStratum {
    /// Question q's trajectories are `traj_start[q]..traj_start[q + 1]`.
    traj_start: Vec<usize>,
    /// Reads m_t of each trajectory.
    reads: Vec<u32>,
    /// Trajectory means ȳ_t − `centre`.
    mean: Vec<f64>,
    /// Σ_t Σ_r (y_qtr − ȳ_qt)² per question (exactly 0 where every trajectory's reads agree).
    within: Vec<f64>,
    /// The stratum's mean over all rows, subtracted from the trajectory means.
    centre: f64,
    /// Question q's design: an index into `designs`.
    design: Vec<u32>,
    /// The distinct designs: (m, trajectories with m reads), m ascending.
    designs: Vec<Vec<(u32, u32)>>,
    /// Trajectory t's group in its question's design (the position of m_t there).
    group: Vec<u32>,
}

/// Builds a [`NestedStratum`] one trajectory at a time, so a 100,000-question stratum needs no
/// nested vectors.
#[derive(Debug, Clone)]
pub struct NestedBuilder {
    s: NestedStratum,
    open_within: f64,
    design_index: std::collections::HashMap<Vec<(u32, u32)>, u32>,
}

impl Default for NestedBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl NestedBuilder {
    /// An empty stratum.
    pub fn new() -> Self {
        NestedBuilder {
            s: NestedStratum {
                traj_start: vec![0],
                reads: Vec::new(),
                mean: Vec::new(),
                within: Vec::new(),
                centre: 0.0,
                design: Vec::new(),
                designs: Vec::new(),
                group: Vec::new(),
            },
            open_within: 0.0,
            design_index: Default::default(),
        }
    }

    /// Adds a trajectory with these reads to the current question.
    ///
    /// # Errors
    /// [`Error::Data`] when `reads` is empty or holds a value that is not finite.
    pub fn trajectory(&mut self, reads: &[f64]) -> Result<()> {
        let question = self.s.traj_start.len();
        if reads.is_empty() {
            return Err(Error::Data(format!(
                "question {question}: a trajectory without reads"
            )));
        }
        if let Some(v) = reads.iter().find(|v| !v.is_finite()) {
            return Err(Error::Data(format!(
                "question {question}: outcome {v} is not a finite number"
            )));
        }
        // Reads that agree give exactly their value and exactly zero spread, so "every read
        // agrees" can be recognised exactly later (a sum divided by m need not round back).
        let first = reads[0];
        let (mean, ss) = if reads.iter().all(|&v| v == first) {
            (first, 0.0)
        } else {
            let m = reads.iter().sum::<f64>() / reads.len() as f64;
            (m, reads.iter().map(|v| (v - m) * (v - m)).sum::<f64>())
        };
        let m = u32::try_from(reads.len())
            .map_err(|_| Error::Data(format!("question {question}: too many reads")))?;
        self.s.reads.push(m);
        self.s.mean.push(mean);
        self.open_within += ss;
        Ok(())
    }

    /// Closes the current question.
    ///
    /// # Errors
    /// [`Error::Data`] when the question has no trajectory.
    pub fn end_question(&mut self) -> Result<()> {
        let start = *self.s.traj_start.last().expect("starts with 0");
        if self.s.reads.len() == start {
            return Err(Error::Data(format!(
                "question {}: no trajectories",
                self.s.traj_start.len()
            )));
        }
        // The question's design: its read counts with their multiplicities.
        let mut ms = self.s.reads[start..].to_vec();
        ms.sort_unstable();
        let mut key: Vec<(u32, u32)> = Vec::new();
        for m in ms {
            match key.last_mut() {
                Some((last, c)) if *last == m => *c += 1,
                _ => key.push((m, 1)),
            }
        }
        for t in start..self.s.reads.len() {
            let m = self.s.reads[t];
            let g = key.partition_point(|&(v, _)| v < m);
            self.s.group.push(g as u32);
        }
        let next = self.s.designs.len() as u32;
        let id = *self.design_index.entry(key).or_insert_with_key(|key| {
            self.s.designs.push(key.clone());
            next
        });
        self.s.design.push(id);
        self.s.traj_start.push(self.s.reads.len());
        self.s.within.push(self.open_within);
        self.open_within = 0.0;
        Ok(())
    }

    /// The finished stratum (a question still open is closed first).
    ///
    /// # Errors
    /// [`Error::Data`] when the stratum has no question.
    pub fn finish(mut self) -> Result<NestedStratum> {
        if self.s.reads.len() > *self.s.traj_start.last().expect("starts with 0") {
            self.end_question()?;
        }
        let mut s = self.s;
        if s.within.is_empty() {
            return Err(Error::Data("a stratum without questions".into()));
        }
        let n: f64 = s.reads.iter().map(|&m| f64::from(m)).sum();
        let total: f64 = s
            .reads
            .iter()
            .zip(&s.mean)
            .map(|(&m, &y)| f64::from(m) * y)
            .sum();
        s.centre = total / n;
        for y in &mut s.mean {
            *y -= s.centre;
        }
        Ok(s)
    }
}

/// Count statistics of one level: total, and min / mean / max per parent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub total: usize,
    pub min: usize,
    pub mean: f64,
    pub max: usize,
}

impl Spread {
    fn of(counts: impl Iterator<Item = usize>) -> Self {
        let (mut total, mut min, mut max, mut k) = (0, usize::MAX, 0, 0usize);
        for c in counts {
            total += c;
            min = min.min(c);
            max = max.max(c);
            k += 1;
        }
        Spread {
            total,
            min: if k == 0 { 0 } else { min },
            mean: total as f64 / k.max(1) as f64,
            max,
        }
    }
}

/// The design of a stratum: questions, trajectories per question, reads per trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    pub questions: usize,
    /// Trajectories per question (`total` = all trajectories).
    pub trajectories: Spread,
    /// Reads per trajectory (`total` = all rows).
    pub reads: Spread,
}

impl NestedStratum {
    /// Builds a stratum from `groups[q][t][r]`.
    ///
    /// # Errors
    /// As [`NestedBuilder`]: an empty question or trajectory, a value that is not finite.
    pub fn from_groups(groups: &[Vec<Vec<f64>>]) -> Result<Self> {
        let mut b = NestedBuilder::new();
        for q in groups {
            for t in q {
                b.trajectory(t)?;
            }
            b.end_question()?;
        }
        b.finish()
    }

    /// Number of questions.
    pub fn questions(&self) -> usize {
        self.within.len()
    }

    /// Number of trajectories.
    pub fn trajectories(&self) -> usize {
        self.reads.len()
    }

    /// Number of rows (reads).
    pub fn rows(&self) -> usize {
        self.reads.iter().map(|&m| m as usize).sum()
    }

    /// The mean of all rows.
    pub fn mean(&self) -> f64 {
        self.centre
    }

    /// Questions, and min / mean / max trajectories per question and reads per trajectory.
    pub fn shape(&self) -> Shape {
        Shape {
            questions: self.questions(),
            trajectories: Spread::of(self.traj_start.windows(2).map(|w| w[1] - w[0])),
            reads: Spread::of(self.reads.iter().map(|&m| m as usize)),
        }
    }

    /// `Some((T, R))` when every question has T trajectories and every trajectory R reads: the
    /// balanced case, where the closed-form ANOVA fit applies (and equals REML whenever all its
    /// components are positive).
    pub fn balanced(&self) -> Option<(usize, usize)> {
        let shape = self.shape();
        (shape.trajectories.min == shape.trajectories.max && shape.reads.min == shape.reads.max)
            .then_some((shape.trajectories.max, shape.reads.max))
    }

    fn trajectories_of(&self, q: usize) -> std::ops::Range<usize> {
        self.traj_start[q]..self.traj_start[q + 1]
    }
}

/// Relative standard deviations θ = σ/σ_r of the two random effects (lme4's θ, which lists
/// the trajectory term first).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Theta {
    pub question: f64,
    pub trajectory: f64,
}

/// A REML fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemlFit {
    /// σ²_q, σ²_t, σ²_r; `None` where a level is not estimable (see `notes`).
    pub components: PerLevel,
    /// The optimum in lme4's parameters.
    pub theta: Theta,
    /// Fixed effects: the estimated mean β̂_d of each stratum, in input order.
    pub means: Vec<f64>,
    /// lme4's REML criterion at the optimum (−2 × restricted log-likelihood); −∞ when a
    /// component is 0 because outcomes agree exactly (the likelihood is unbounded there).
    pub criterion: f64,
    /// Newton iterations.
    pub iterations: usize,
    /// Evaluations of the criterion and its gradient (line search and Hessian included).
    pub evaluations: usize,
    /// Estimable levels whose component is exactly 0 (a boundary fit, lme4's "singular").
    pub boundary: Vec<Level>,
    /// Levels not estimable or set to 0 by exact agreement, and which level absorbed them.
    pub notes: Vec<String>,
}

/// Fits one stratum, or several pooled with a fixed mean per stratum, from lme4's start θ = 1.
///
/// # Errors
/// [`Error::Data`] when there is nothing to fit (no stratum, fewer than p + 1 questions) or the
/// optimiser does not converge.
pub fn fit(strata: &[&NestedStratum]) -> Result<RemlFit> {
    fit_counts(strata, None, None)
}

/// [`fit`] started from `start` (typically the full-sample fit, for bootstrap refits).
///
/// # Errors
/// As [`fit`].
pub fn fit_from(strata: &[&NestedStratum], start: Theta) -> Result<RemlFit> {
    fit_counts(strata, None, Some(start))
}

/// Fits a resample: question q of stratum d taken `counts[d][q]` times (each copy an
/// independent question), as a question bootstrap draws them, from `start` (lme4's θ = 1 when
/// `None`). The criterion is summed over the drawn questions without copying any data.
///
/// # Errors
/// As [`fit`]; [`Error::Data`] when `counts` does not match the strata.
pub fn fit_resampled(
    strata: &[&NestedStratum],
    counts: &[&[u32]],
    start: Option<Theta>,
) -> Result<RemlFit> {
    if counts.len() != strata.len()
        || strata
            .iter()
            .zip(counts)
            .any(|(s, c)| c.len() != s.questions())
    {
        return Err(Error::Data(
            "resample counts must give one count per question of every stratum".into(),
        ));
    }
    fit_counts(strata, Some(counts), start)
}

/// lme4's REML criterion L (−2 × restricted log-likelihood, σ² profiled out) at `theta`, for
/// one stratum or several pooled: what [`fit`] minimises, for profiles and checks.
///
/// # Errors
/// As [`fit`]; [`Error::Data`] when no trajectory has two reads or they all agree exactly
/// (the criterion of the full model is then not defined).
pub fn criterion(strata: &[&NestedStratum], theta: Theta) -> Result<f64> {
    let prep = prepare(strata, None)?;
    if prep.problem.rows != Rows::Reads {
        return Err(Error::Data(
            "the REML criterion of the full model needs reads that differ within a trajectory"
                .into(),
        ));
    }
    Ok(prep
        .problem
        .eval(
            theta.trajectory * theta.trajectory,
            theta.question * theta.question,
        )
        .f)
}

/// Which rows the criterion is built from: the reads, one row per trajectory (its mean), or one
/// row per question (its mean). The coarser ones are used when the finer level is not
/// estimable or when its outcomes agree exactly (component 0 on the boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rows {
    Reads,
    Trajectories,
    Questions,
}

/// The sums of one design (a multiset of rows per trajectory) over the questions that have
/// it, with their resample counts k: everything the criterion needs from those questions.
/// With Sy_qg = Σ ȳ_t and Syy_qg = Σ ȳ_t² over question q's trajectories in group g (the
/// trajectories with m_g rows): u_g = Σ k Sy_qg, y_g = Σ k Syy_qg, mm_gh = Σ k Sy_qg Sy_qh.
#[derive(Debug, Clone)]
struct Design {
    /// (m_g, number of trajectories with m_g rows), one entry per group.
    groups: Vec<(f64, f64)>,
    /// Σ k: questions with this design.
    k: f64,
    u: Vec<f64>,
    y: Vec<f64>,
    /// Row-major G × G.
    mm: Vec<f64>,
}

impl Design {
    fn new(groups: Vec<(f64, f64)>) -> Self {
        let g = groups.len();
        Design {
            groups,
            k: 0.0,
            u: vec![0.0; g],
            y: vec![0.0; g],
            mm: vec![0.0; g * g],
        }
    }

    fn add(&mut self, k: f64, sy: &[f64], syy: &[f64]) {
        let g = self.groups.len();
        self.k += k;
        for i in 0..g {
            self.u[i] += k * sy[i];
            self.y[i] += k * syy[i];
            for j in 0..g {
                self.mm[i * g + j] += k * sy[i] * sy[j];
            }
        }
    }
}

/// The criterion's data: per stratum, the sums of each design present.
#[derive(Debug, Clone)]
struct Problem {
    designs: Vec<Vec<Design>>,
    rows: Rows,
    /// Σ k_q W_q (0 unless rows are reads).
    within: f64,
    /// n − p.
    dof: f64,
}

/// Criterion, gradient in (a, c), and the pieces the fit reports.
#[derive(Debug, Clone)]
struct Eval {
    f: f64,
    g: [f64; 2],
    rss: f64,
    /// b_d/A_d per stratum.
    beta: Vec<f64>,
}

impl Problem {
    /// The REML criterion L(a, c) and its gradient (see the module docs). Every question of a
    /// design shares w, e and log|H_q|, and Σ_q k s_q² = md'·mm·md with md_g = m_g/(1 + a m_g),
    /// so one evaluation costs O(designs), whatever the number of questions.
    fn eval(&self, a: f64, c: f64) -> Eval {
        let (mut ld, mut ld_a, mut ld_c) = (0.0, 0.0, 0.0);
        let (mut rss, mut rss_a, mut rss_c) = (self.within, 0.0, 0.0);
        let (mut la, mut la_a, mut la_c) = (0.0, 0.0, 0.0);
        let mut beta = Vec::with_capacity(self.designs.len());
        let mut md = Vec::new();
        for designs in &self.designs {
            let (mut sa, mut sa_a, mut sa_c) = (0.0, 0.0, 0.0);
            let (mut sb, mut sb_a, mut sb_c) = (0.0, 0.0, 0.0);
            for dz in designs {
                if dz.k == 0.0 {
                    continue;
                }
                let g = dz.groups.len();
                md.clear();
                md.extend(dz.groups.iter().map(|&(m, _)| m / (1.0 + a * m)));
                let (mut w, mut w1, mut l1) = (0.0, 0.0, 0.0);
                let (mut su, mut su1, mut py, mut py1) = (0.0, 0.0, 0.0, 0.0);
                let (mut ss, mut ss1) = (0.0, 0.0);
                for i in 0..g {
                    let (m, count) = dz.groups[i];
                    let (d, d2) = (md[i], md[i] * md[i]);
                    w += count * d;
                    w1 -= count * d2;
                    l1 += count * (a * m).ln_1p();
                    su += d * dz.u[i];
                    su1 -= d2 * dz.u[i];
                    py += d * dz.y[i];
                    py1 -= d2 * dz.y[i];
                    let row = &dz.mm[i * g..(i + 1) * g];
                    let (mut r0, mut r1) = (0.0, 0.0);
                    for j in 0..g {
                        r0 += row[j] * md[j];
                        r1 += row[j] * md[j] * md[j];
                    }
                    ss += d * r0;
                    ss1 -= d * r1;
                }
                let k = dz.k;
                let e = 1.0 / (1.0 + c * w);
                let e2 = e * e;
                ld += k * (l1 + (c * w).ln_1p());
                ld_a += k * (w + c * w1 * e);
                ld_c += k * w * e;
                rss += py - c * ss * e;
                rss_a += py1 - c * (2.0 * ss1 * e - ss * c * w1 * e2);
                rss_c -= ss * e2;
                sa += k * w * e;
                sa_a += k * w1 * e2;
                sa_c -= k * w * w * e2;
                sb += su * e;
                sb_a += su1 * e - su * c * w1 * e2;
                sb_c -= su * w * e2;
            }
            la += sa.ln();
            la_a += sa_a / sa;
            la_c += sa_c / sa;
            let r = sb / sa;
            rss -= sb * r;
            rss_a -= 2.0 * r * sb_a - r * r * sa_a;
            rss_c -= 2.0 * r * sb_c - r * r * sa_c;
            beta.push(r);
        }
        let nu = self.dof;
        let f = ld + la + nu * (1.0 + (2.0 * std::f64::consts::PI * rss / nu).ln());
        Eval {
            f,
            g: [
                ld_a + la_a + nu * rss_a / rss,
                ld_c + la_c + nu * rss_c / rss,
            ],
            rss,
            beta,
        }
    }
}

/// Newton iterations at most.
const MAX_ITERATIONS: usize = 200;
/// Converged when a full Newton step moves every ratio by at most this, relative to
/// max(ratio, its scale).
const STEP_TOL: f64 = 1e-11;

/// The optimum of the criterion over the free ratios (a, c) ≥ 0.
struct Optimum {
    x: [f64; 2],
    at: Eval,
    iterations: usize,
    evaluations: usize,
}

fn minimise(p: &Problem, start: [f64; 2], free: [bool; 2], scale: [f64; 2]) -> Result<Optimum> {
    let mut evaluations = 0usize;
    let mut eval = |x: [f64; 2]| {
        evaluations += 1;
        p.eval(x[0], x[1])
    };
    let mut x = [
        if free[0] { start[0].max(0.0) } else { 0.0 },
        if free[1] { start[1].max(0.0) } else { 0.0 },
    ];
    let mut cur = eval(x);
    if !free[0] && !free[1] {
        return Ok(Optimum {
            x,
            at: cur,
            iterations: 0,
            evaluations,
        });
    }
    for iteration in 1..=MAX_ITERATIONS {
        // A ratio at its bound whose derivative points outwards stays at exactly 0.
        let active = [0, 1].map(|j| free[j] && !(x[j] == 0.0 && cur.g[j] > 0.0));
        if !active[0] && !active[1] {
            return Ok(Optimum {
                x,
                at: cur,
                iterations: iteration - 1,
                evaluations,
            });
        }
        // Hessian of the active ratios by central differences of the exact gradient (forward
        // at the bound); inactive rows and columns are the identity.
        let mut h = Matrix2::<f64>::identity();
        for j in 0..2 {
            if !active[j] {
                continue;
            }
            let step = 1e-5 * x[j].max(scale[j]);
            let (mut lo, mut hi) = (x, x);
            hi[j] += step;
            let (gl, width) = if x[j] >= step {
                lo[j] -= step;
                (eval(lo).g, 2.0 * step)
            } else {
                (cur.g, step)
            };
            let gh = eval(hi).g;
            for i in 0..2 {
                if active[i] {
                    h[(i, j)] = (gh[i] - gl[i]) / width;
                }
            }
        }
        h = (h + h.transpose()) * 0.5;
        let g = Vector2::new(
            if active[0] { cur.g[0] } else { 0.0 },
            if active[1] { cur.g[1] } else { 0.0 },
        );
        // Newton direction with the Hessian's eigenvalues made positive (a descent direction
        // where the criterion is not convex).
        let eig = SymmetricEigen::new(h);
        let top = eig.eigenvalues.abs().max().max(f64::MIN_POSITIVE);
        let inv = eig.eigenvalues.map(|l| 1.0 / l.abs().max(1e-10 * top));
        let dir =
            -(eig.eigenvectors * Matrix2::from_diagonal(&inv) * eig.eigenvectors.transpose()) * g;
        // A projected Newton step this small is the optimum to rounding: take it if it does
        // not increase L and stop.
        let converged = (0..2)
            .all(|j| ((x[j] + dir[j]).max(0.0) - x[j]).abs() <= STEP_TOL * x[j].max(scale[j]));
        // Projected backtracking along the Newton direction; should projection spoil it
        // (a bound ratio pushed outwards through the other's coupling), along the diagonally
        // scaled gradient instead.
        let gradient_dir = Vector2::new(-g[0] / h[(0, 0)].abs(), -g[1] / h[(1, 1)].abs());
        let mut accepted = None;
        for (d, halvings) in [(dir, if converged { 1 } else { 60 }), (gradient_dir, 60)] {
            let mut t = 1.0;
            for _ in 0..halvings {
                let trial = [0, 1].map(|j| {
                    if active[j] {
                        (x[j] + t * d[j]).max(0.0)
                    } else {
                        x[j]
                    }
                });
                let next = eval(trial);
                let descent = cur.g[0] * (trial[0] - x[0]) + cur.g[1] * (trial[1] - x[1]);
                // Sufficient decrease, allowing for rounding in L once steps are tiny.
                if next.f.is_finite()
                    && next.f <= cur.f + 1e-4 * descent + 8.0 * f64::EPSILON * cur.f.abs()
                {
                    accepted = Some((trial, next));
                    break;
                }
                t *= 0.5;
            }
            if accepted.is_some() || converged {
                break;
            }
        }
        let Some((trial, next)) = accepted else {
            // No decrease in either direction: at the rounding floor of L.
            return Ok(Optimum {
                x,
                at: cur,
                iterations: iteration,
                evaluations,
            });
        };
        x = trial;
        cur = next;
        if converged {
            return Ok(Optimum {
                x,
                at: cur,
                iterations: iteration,
                evaluations,
            });
        }
    }
    Err(Error::Data(format!(
        "REML did not converge in {MAX_ITERATIONS} Newton iterations"
    )))
}

/// What the (drawn) data can identify, and the criterion built from it.
struct Prepared {
    problem: Problem,
    /// Some trajectory has two reads or more (σ²_r estimable).
    rep_reads: bool,
    /// Some question has two trajectories or more (σ²_t estimable).
    rep_traj: bool,
    /// Reads agree exactly within every trajectory (σ²_r = 0 when estimable).
    reads_agree: bool,
    /// Which of (a, c) the optimiser moves; the others stay 0.
    free: [bool; 2],
    /// Natural scales of (a, c): 1/(mean reads per trajectory), 1/(mean rows per question).
    scale: [f64; 2],
}

/// One pass over the drawn questions: what is estimable, which rows to use, and the sums of
/// every design.
fn prepare(strata: &[&NestedStratum], counts: Option<&[&[u32]]>) -> Result<Prepared> {
    if strata.is_empty() {
        return Err(Error::Data("no strata to fit".into()));
    }
    let k = |d: usize, q: usize| counts.map_or(1, |c| c[d][q]);
    let (mut questions, mut rows_n, mut traj_n) = (0u64, 0u64, 0u64);
    let (mut rep_reads, mut rep_traj, mut reads_agree, mut traj_agree) = (false, false, true, true);
    for (d, s) in strata.iter().enumerate() {
        let mut drawn = 0u64;
        for q in 0..s.questions() {
            let kq = u64::from(k(d, q));
            if kq == 0 {
                continue;
            }
            drawn += kq;
            let range = s.trajectories_of(q);
            rep_traj |= range.len() > 1;
            traj_n += kq * range.len() as u64;
            for t in range.clone() {
                rep_reads |= s.reads[t] > 1;
                rows_n += kq * u64::from(s.reads[t]);
            }
            reads_agree &= s.within[q] == 0.0;
            traj_agree &= s.mean[range.clone()]
                .iter()
                .all(|&y| y == s.mean[range.start]);
        }
        if drawn == 0 {
            return Err(Error::Data(format!(
                "stratum {}: no questions drawn",
                d + 1
            )));
        }
        questions += drawn;
    }
    let p = strata.len() as u64;
    if questions < p + 1 {
        return Err(Error::Data(format!(
            "need at least {} questions to estimate the question variance with {} stratum mean{} (have {questions})",
            p + 1,
            p,
            if p == 1 { "" } else { "s" }
        )));
    }
    // Rows the criterion is built from: reads unless reads are not replicated (a and σ² are
    // then confounded) or agree exactly (σ²_r = 0); trajectory means likewise one level up.
    let rows = if rep_reads && !reads_agree {
        Rows::Reads
    } else if rep_traj && !traj_agree {
        Rows::Trajectories
    } else {
        Rows::Questions
    };
    let n = match rows {
        Rows::Reads => rows_n,
        Rows::Trajectories => traj_n,
        Rows::Questions => questions,
    } as f64;
    let mut within = 0.0;
    let mut designs = Vec::with_capacity(strata.len());
    let (mut sy, mut syy) = (Vec::new(), Vec::new());
    for (d, s) in strata.iter().enumerate() {
        // Design of each question at this row level: the stratum's own table for reads; for
        // trajectory rows the number of trajectories; for question rows one design.
        let mut table: Vec<Design> = match rows {
            Rows::Reads => s
                .designs
                .iter()
                .map(|g| {
                    Design::new(
                        g.iter()
                            .map(|&(m, c)| (f64::from(m), f64::from(c)))
                            .collect(),
                    )
                })
                .collect(),
            Rows::Trajectories => Vec::new(),
            Rows::Questions => vec![Design::new(vec![(1.0, 1.0)])],
        };
        let mut by_count: std::collections::HashMap<usize, usize> = Default::default();
        for q in 0..s.questions() {
            let kq = f64::from(k(d, q));
            if kq == 0.0 {
                continue;
            }
            let range = s.trajectories_of(q);
            let index = match rows {
                Rows::Reads => s.design[q] as usize,
                Rows::Trajectories => *by_count.entry(range.len()).or_insert_with(|| {
                    table.push(Design::new(vec![(1.0, range.len() as f64)]));
                    table.len() - 1
                }),
                Rows::Questions => 0,
            };
            let g = table[index].groups.len();
            sy.clear();
            sy.resize(g, 0.0);
            syy.clear();
            syy.resize(g, 0.0);
            match rows {
                Rows::Reads => {
                    within += kq * s.within[q];
                    for t in range {
                        let (i, y) = (s.group[t] as usize, s.mean[t]);
                        sy[i] += y;
                        syy[i] += y * y;
                    }
                }
                Rows::Trajectories => {
                    for &y in &s.mean[range] {
                        sy[0] += y;
                        syy[0] += y * y;
                    }
                }
                // Every trajectory mean of the question agrees (that is when this is used).
                Rows::Questions => {
                    let y = s.mean[range.start];
                    sy[0] = y;
                    syy[0] = y * y;
                }
            }
            table[index].add(kq, &sy, &syy);
        }
        designs.push(table);
    }
    Ok(Prepared {
        problem: Problem {
            designs,
            rows,
            within,
            dof: n - p as f64,
        },
        rep_reads,
        rep_traj,
        reads_agree,
        free: [rows == Rows::Reads && rep_traj, rows != Rows::Questions],
        scale: [
            traj_n as f64 / rows_n as f64,
            match rows {
                Rows::Reads => questions as f64 / rows_n as f64,
                _ => questions as f64 / traj_n as f64,
            },
        ],
    })
}

fn fit_counts(
    strata: &[&NestedStratum],
    counts: Option<&[&[u32]]>,
    start: Option<Theta>,
) -> Result<RemlFit> {
    let Prepared {
        problem,
        rep_reads,
        rep_traj,
        reads_agree,
        free,
        scale,
    } = prepare(strata, counts)?;
    let rows = problem.rows;
    let singular = (rep_reads && reads_agree) || (rows == Rows::Questions && rep_traj);
    let start = start.map_or([1.0, 1.0], |t| {
        [t.trajectory * t.trajectory, t.question * t.question]
    });
    let opt = minimise(&problem, start, free, scale)?;
    let sigma2 = opt.at.rss / problem.dof;
    let [a, c] = opt.x;

    let read = rep_reads.then_some(if rows == Rows::Reads { sigma2 } else { 0.0 });
    let trajectory = rep_traj.then_some(match rows {
        Rows::Reads => a * sigma2,
        Rows::Trajectories => sigma2,
        Rows::Questions => 0.0,
    });
    let question = if rows == Rows::Questions {
        sigma2
    } else {
        c * sigma2
    };
    let components = PerLevel {
        question,
        trajectory,
        read,
    };
    let mut notes = Vec::new();
    match (rep_traj, rep_reads) {
        (true, false) => notes.push(
            "read variance not estimable (every trajectory has one read): the trajectory component includes it".to_string(),
        ),
        (false, true) => notes.push(
            "trajectory variance not estimable (every question has one trajectory): the question component includes it".to_string(),
        ),
        (false, false) => notes.push(
            "trajectory and read variance not estimable (one row per question): the question component includes both".to_string(),
        ),
        (true, true) => {}
    }
    if rep_reads && reads_agree {
        notes.push(
            "every trajectory's reads agree exactly: read component 0, the others fitted to the trajectory means".to_string(),
        );
    }
    if rows == Rows::Questions && rep_traj {
        notes.push(
            "every question's trajectories agree exactly: trajectory component 0, the question component fitted to the question means".to_string(),
        );
    }
    let boundary = Level::ALL
        .into_iter()
        .filter(|&l| components.get(l) == Some(0.0))
        .collect();
    let means = strata
        .iter()
        .zip(&opt.at.beta)
        .map(|(s, b)| s.centre + b)
        .collect();
    Ok(RemlFit {
        components,
        theta: Theta {
            question: c.sqrt(),
            trajectory: a.sqrt(),
        },
        means,
        criterion: if singular {
            f64::NEG_INFINITY
        } else {
            opt.at.f
        },
        iterations: opt.iterations,
        evaluations: opt.evaluations,
        boundary,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stratum() -> NestedStratum {
        NestedStratum::from_groups(&[
            vec![vec![0.1, 0.3], vec![0.5], vec![0.2, 0.2, 0.6]],
            vec![vec![0.9, 0.7, 0.8]],
            vec![vec![0.4, 0.1], vec![0.0, 0.3]],
            vec![vec![0.6], vec![0.65, 0.7]],
        ])
        .unwrap()
    }

    #[test]
    fn gradient_matches_central_differences_of_the_criterion() {
        let s = stratum();
        let strata = [&s];
        let p = prepare(&strata, None).unwrap().problem;
        assert_eq!(p.rows, Rows::Reads);
        assert_eq!(p.dof, 15.0);
        assert_eq!(
            s.designs,
            vec![
                vec![(1, 1), (2, 1), (3, 1)],
                vec![(3, 1)],
                vec![(2, 2)],
                vec![(1, 1), (2, 1)]
            ]
        );
        assert_eq!(s.design, vec![0, 1, 2, 3]);
        assert_eq!(s.group, vec![1, 0, 2, 0, 0, 0, 0, 1]);
        for &(a, c) in &[(0.3, 1.7), (2.0, 0.05), (0.0, 0.4)] {
            let e = p.eval(a, c);
            let h = 1e-6;
            let da = (p.eval(a + h, c).f - p.eval(a - h, c).f) / (2.0 * h);
            let dc = (p.eval(a, c + h).f - p.eval(a, c - h).f) / (2.0 * h);
            assert!(
                (e.g[0] - da).abs() < 1e-7 * (1.0 + da.abs()),
                "{:?} {da}",
                e.g
            );
            assert!(
                (e.g[1] - dc).abs() < 1e-7 * (1.0 + dc.abs()),
                "{:?} {dc}",
                e.g
            );
        }
    }

    #[test]
    fn builder_reduces_to_counts_means_and_within_sums() {
        let s = stratum();
        assert_eq!(s.questions(), 4);
        assert_eq!(s.trajectories(), 8);
        assert_eq!(s.rows(), 16);
        let total = 0.1
            + 0.3
            + 0.5
            + 0.2
            + 0.2
            + 0.6
            + 0.9
            + 0.7
            + 0.8
            + 0.4
            + 0.1
            + 0.0
            + 0.3
            + 0.6
            + 0.65
            + 0.7;
        assert!((s.mean() - total / 16.0).abs() < 1e-15);
        // Question 0: (0.1 − 0.2)² + (0.3 − 0.2)² + 0 + 2(0.2 − 1/3)² + (0.6 − 1/3)².
        let w0 = 0.02 + 2.0 * (0.2f64 - 1.0 / 3.0).powi(2) + (0.6f64 - 1.0 / 3.0).powi(2);
        assert!((s.within[0] - w0).abs() < 1e-15);
        let shape = s.shape();
        assert_eq!((shape.trajectories.min, shape.trajectories.max), (1, 3));
        assert_eq!((shape.reads.min, shape.reads.max), (1, 3));
        assert_eq!(shape.trajectories.mean, 2.0);
        assert_eq!(s.balanced(), None);
        let b = NestedStratum::from_groups(&[vec![vec![1.0, 2.0]; 2], vec![vec![3.0, 0.0]; 2]])
            .unwrap();
        assert_eq!(b.balanced(), Some((2, 2)));
    }

    #[test]
    fn empty_groups_are_refused() {
        assert!(NestedStratum::from_groups(&[vec![]]).is_err());
        assert!(NestedStratum::from_groups(&[vec![vec![]]]).is_err());
        assert!(NestedStratum::from_groups(&[]).is_err());
        assert!(NestedStratum::from_groups(&[vec![vec![f64::NAN]]]).is_err());
    }
}
