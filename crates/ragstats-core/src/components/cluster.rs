//! Four nested levels: cluster > question > trajectory > read (`--cluster COLUMN`).
//!
//! Model per stratum d: y_gqtr = β_d + c_g + a_gq + b_gqt + e_gqtr with independent
//! c_g ~ N(0, σ²_c), a_gq ~ N(0, σ²_q), b_gqt ~ N(0, σ²_t), e_gqtr ~ N(0, σ²_r): questions
//! drawn from one article (document, trajectory) share its c_g.
//!
//! **Balanced** (G clusters of M questions, T trajectories, R reads): the nested ANOVA.
//!
//! * SS_c = MTR Σ_g (ȳ_g − ȳ)², df G − 1
//! * SS_q = TR Σ_g Σ_q (ȳ_gq − ȳ_g)², df G(M − 1)
//! * SS_t = R Σ (ȳ_gqt − ȳ_gq)², df GM(T − 1); SS_r = Σ (y − ȳ_gqt)², df GMT(R − 1)
//!
//! E\[MS_c\] = σ²_r + Rσ²_t + TRσ²_q + MTRσ²_c, so σ̂²_c = (MS_c − MS_q)/(MTR) and the
//! lower levels are those of the three-level fit with questions counted within clusters;
//! negative estimates are truncated at zero (reported as such). With M = 1 the question
//! level is not estimable (σ²_q is reported 0 and the cluster component includes it).
//!
//! **Unbalanced** (clusters of different sizes, or questions with different T or R): REML,
//! the fit of lme4's `y ~ 1 + (1|cluster) + (1|cluster:question) +
//! (1|cluster:question:trajectory)` per stratum (and with `dataset` as a fixed effect for the
//! pooled fit). With σ² = σ²_r profiled out, the criterion is lme4's
//! L(θ) = log|H| + Σ_d log(1'_d H⁻¹ 1_d) + (n − p)(1 + log(2π RSS/(n − p))), H = V/σ²_r; the
//! nested compound symmetry of H gives log|H|, 1'H⁻¹1, 1'H⁻¹y and y'H⁻¹y in one pass from
//! the leaves up: a node whose children give (s, u, w, ℓ) and whose own random effect has
//! relative variance λ gives (s/(1 + λs), u/(1 + λs), w − λu²/(1 + λs), ℓ + log(1 + λs)).
//! It is minimised over θ = (σ_c, σ_q, σ_t)/σ_r ≥ 0 by Nelder–Mead, then each θ near 0 is
//! tried at exactly 0 (lme4's boundary fit).
//!
//! **The SE of a stratum mean** ȳ = (1/Q) Σ_q ȳ_q (the equal-weight mean of question means)
//! is the cluster-robust one: SE² = G/(G − 1) · Σ_g (S_g − M_g ȳ)² / Q², S_g the sum of
//! cluster g's question means. Balanced, it is MS_c/(GMTR) = s²(ȳ_g)/G, the variance of the
//! cluster means over G; with T = R = 1 it is inspect_ai's `stderr(cluster=…)`.

use serde::Serialize;

use super::levels::{question_mean, se2_terms, Fit, Level, PerLevel};
use crate::panel::{Clusters, Stratum};
use crate::{Error, Result};

/// What the cluster level adds to a stratum's (or the pooled) fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterLevel {
    /// Clusters G (summed over strata when pooled).
    pub clusters: usize,
    /// Questions per cluster: M when every cluster has M, else the mean.
    pub questions_per_cluster: f64,
    /// Fewest and most questions in a cluster.
    pub min_questions: usize,
    pub max_questions: usize,
    /// MS_c (ANOVA only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    /// df of MS_c, G − 1 (ANOVA only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// The raw (untruncated) estimate of σ²_c.
    pub component: f64,
    /// Whether the raw estimate is negative (used as 0).
    pub truncated: bool,
    /// σ²_c's share of σ²_c + σ²_q + σ²_t + σ²_r (truncated); `None` when that is 0.
    pub share_single: Option<f64>,
    /// σ²_c/G's share of the SE² at the observed design; `None` as `share_single`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_se2: Option<f64>,
    /// REML only: lme4's θ (cluster, question, trajectory), criterion, boundary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reml: Option<Reml4>,
}

impl ClusterLevel {
    /// σ²_c as forecasts use it: truncated at zero.
    pub fn truncated_component(&self) -> f64 {
        self.component.max(0.0)
    }
}

/// Four-level components (σ²_c and the three lower levels, raw).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Components4 {
    pub cluster: f64,
    pub lower: PerLevel,
}

impl Components4 {
    /// SE² terms at (G, Q, T̄, R̄): σ²_c/G, σ²_q/Q, σ²_t/(QT), σ²_r/(QTR), truncated.
    fn se2_terms(&self, g: f64, q: f64, t: f64, r: f64) -> (f64, PerLevel) {
        (
            self.cluster.max(0.0) / g,
            se2_terms(&self.lower.truncated(), q, t, r),
        )
    }
}

/// Shares of the four levels (cluster, lower) of a total; `None` when it is not positive.
fn four_shares(c: f64, lower: &PerLevel) -> Option<(f64, PerLevel)> {
    let tot = c + lower.question + lower.trajectory.unwrap_or(0.0) + lower.read.unwrap_or(0.0);
    if tot.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let f = |v: f64| v / tot;
    Some((
        f(c),
        PerLevel {
            question: f(lower.question),
            trajectory: lower.trajectory.map(f),
            read: lower.read.map(f),
        },
    ))
}

/// A clustered stratum's fit, as [`super::variance::StratumReport`] carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusteredFit {
    /// The three lower levels (questions within clusters).
    pub fit: Fit,
    pub cluster: ClusterLevel,
    /// Shares of the lower levels in the four-level totals.
    pub share_single: Option<PerLevel>,
    pub share_se2: Option<PerLevel>,
}

/// The cluster-robust SE of the equal-weight mean of question means (see the module docs):
/// (mean, sqrt(G/(G − 1) Σ_g (S_g − M_g ȳ)²) / Q). `None` with fewer than two clusters.
pub fn clustered_mean_se(s: &Stratum, c: &Clusters) -> Option<(f64, f64)> {
    let g = c.g();
    if g < 2 {
        return None;
    }
    let means: Vec<f64> = (0..s.q()).map(|q| question_mean(s, q)).collect();
    let q = means.len() as f64;
    let mean = means.iter().sum::<f64>() / q;
    let mut dev = vec![0.0; g];
    for (qi, &m) in means.iter().enumerate() {
        dev[c.of_question[qi] as usize] += m - mean;
    }
    let ss: f64 = dev.iter().map(|d| d * d).sum();
    let gf = g as f64;
    Some((mean, (ss * gf / (gf - 1.0)).sqrt() / q))
}

/// Sums of squares of one balanced clustered stratum (or several pooled).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anova4 {
    pub g: usize,
    pub m: usize,
    pub t: usize,
    pub r: usize,
    pub ss: [f64; 4],
    pub df: [f64; 4],
}

impl Anova4 {
    /// The sums of a balanced stratum whose clusters all have `m` questions.
    pub fn of_stratum(s: &Stratum, c: &Clusters, m: usize) -> Self {
        let (t, r) = (s.t(), s.r());
        let (tf, rf, mf) = (t as f64, r as f64, m as f64);
        let grand = s.y.iter().sum::<f64>() / s.y.len() as f64;
        let mut ss = [0.0; 4];
        for members in c.members() {
            let mut cluster_sum = 0.0;
            let mut qmeans = Vec::with_capacity(members.len());
            for &q in &members {
                let mut qsum = 0.0;
                for tr in 0..t {
                    let reads = &s.y[(q * t + tr) * r..(q * t + tr + 1) * r];
                    let tm = reads.iter().sum::<f64>() / rf;
                    ss[3] += reads.iter().map(|y| (y - tm) * (y - tm)).sum::<f64>();
                    qsum += tm;
                    // Trajectory deviations need the question mean: kept for the pass below.
                }
                let qm = qsum / tf;
                for tr in 0..t {
                    let reads = &s.y[(q * t + tr) * r..(q * t + tr + 1) * r];
                    let tm = reads.iter().sum::<f64>() / rf;
                    ss[2] += rf * (tm - qm) * (tm - qm);
                }
                qmeans.push(qm);
                cluster_sum += qm;
            }
            let cm = cluster_sum / mf;
            ss[1] += tf * rf * qmeans.iter().map(|x| (x - cm) * (x - cm)).sum::<f64>();
            ss[0] += mf * tf * rf * (cm - grand) * (cm - grand);
        }
        let g = c.g();
        Anova4 {
            g,
            m,
            t,
            r,
            ss,
            df: [
                g as f64 - 1.0,
                (g * (m - 1)) as f64,
                (g * m * (t - 1)) as f64,
                (g * m * t * (r - 1)) as f64,
            ],
        }
    }

    /// Sums of squares and df added over strata (a fixed mean per stratum); `None` when
    /// the strata differ in M, T or R.
    pub fn pooled(parts: &[Anova4]) -> Option<Anova4> {
        let first = *parts.first()?;
        if parts
            .iter()
            .any(|p| (p.m, p.t, p.r) != (first.m, first.t, first.r))
        {
            return None;
        }
        Some(parts.iter().skip(1).fold(first, |mut a, p| {
            a.g += p.g;
            for i in 0..4 {
                a.ss[i] += p.ss[i];
                a.df[i] += p.df[i];
            }
            a
        }))
    }

    /// The four-level ANOVA fit (module docs): (lower levels' fit, MS_c, σ²_c raw).
    ///
    /// # Errors
    /// [`Error::Data`] with fewer than two clusters.
    pub fn fit(&self) -> Result<(Fit, f64, f64)> {
        if self.df[0] < 1.0 {
            return Err(Error::Data(format!(
                "need at least 2 clusters per stratum to estimate the cluster variance (have {})",
                self.g
            )));
        }
        let ms = |i: usize| self.ss[i] / self.df[i];
        let ms_c = ms(0);
        let ms_q = (self.m > 1).then(|| ms(1));
        let ms_t = (self.t > 1).then(|| ms(2));
        let ms_r = (self.r > 1).then(|| ms(3));
        let (r, tr, mtr) = (
            self.r as f64,
            (self.t * self.r) as f64,
            (self.m * self.t * self.r) as f64,
        );
        let read = ms_r;
        let trajectory = ms_t.map(|t| t - ms_r.unwrap_or(0.0)).map(|v| v / r);
        let below_q = ms_t.or(ms_r).unwrap_or(0.0);
        let question = ms_q.map(|q| (q - below_q) / tr);
        let below_c = ms_q.or(ms_t).or(ms_r).unwrap_or(0.0);
        let cluster = (ms_c - below_c) / mtr;
        let mut notes = Vec::new();
        if self.m == 1 {
            notes.push(
                "question variance not estimable with one question per cluster: the cluster \
                 component includes it"
                    .to_string(),
            );
        }
        match (self.t > 1, self.r > 1) {
            (true, false) => notes.push(
                "read variance not estimable with R=1: the trajectory component includes it"
                    .to_string(),
            ),
            (false, true) => notes.push(
                "trajectory variance not estimable with T=1: the question component includes it"
                    .to_string(),
            ),
            (false, false) => notes.push(
                "trajectory and read variance not estimable with T=1, R=1: the question \
                 component includes both"
                    .to_string(),
            ),
            (true, true) => {}
        }
        let components = PerLevel {
            question: question.unwrap_or(0.0),
            trajectory,
            read,
        };
        let mut truncated = Vec::new();
        if components.question < 0.0 {
            truncated.push(Level::Question);
        }
        if trajectory.is_some_and(|v| v < 0.0) {
            truncated.push(Level::Trajectory);
        }
        if read.is_some_and(|v| v < 0.0) {
            truncated.push(Level::Read);
        }
        let fit = Fit {
            ms: PerLevel {
                question: ms_q.unwrap_or(f64::NAN),
                trajectory: ms_t,
                read: ms_r,
            },
            df: PerLevel {
                question: if self.m > 1 { self.df[1] } else { f64::NAN },
                trajectory: (self.t > 1).then_some(self.df[2]),
                read: (self.r > 1).then_some(self.df[3]),
            },
            components,
            truncated,
            notes,
        };
        Ok((fit, ms_c, cluster))
    }
}

/// The cluster level and the lower levels' shares of a four-level fit with `g` clusters,
/// `q` questions and mean design (t, r); `sizes` are the clusters' question counts.
#[allow(clippy::too_many_arguments)]
fn level(
    c4: &Components4,
    sizes: &[usize],
    ms: Option<f64>,
    df: Option<f64>,
    reml: Option<Reml4>,
    t: f64,
    r: f64,
    with_se2: bool,
) -> (ClusterLevel, Option<PerLevel>, Option<PerLevel>) {
    let g = sizes.len();
    let q: usize = sizes.iter().sum();
    let single = four_shares(c4.cluster.max(0.0), &c4.lower.truncated());
    let (ct, lt) = c4.se2_terms(g as f64, q as f64, t, r);
    let se2 = four_shares(ct, &lt);
    (
        ClusterLevel {
            clusters: g,
            questions_per_cluster: q as f64 / g as f64,
            min_questions: sizes.iter().copied().min().unwrap_or(0),
            max_questions: sizes.iter().copied().max().unwrap_or(0),
            ms,
            df,
            component: c4.cluster,
            truncated: c4.cluster < 0.0,
            share_single: single.map(|s| s.0),
            share_se2: if with_se2 { se2.map(|s| s.0) } else { None },
            reml,
        },
        single.map(|s| s.1),
        if with_se2 { se2.map(|s| s.1) } else { None },
    )
}

/// The balanced four-level fit of a stratum whose clusters all have `m` questions.
///
/// # Errors
/// [`Error::Data`] with fewer than two clusters.
pub fn anova_stratum(s: &Stratum, c: &Clusters, m: usize) -> Result<(ClusteredFit, Anova4)> {
    let a = Anova4::of_stratum(s, c, m);
    let (fit, ms_c, sigma_c) = a.fit()?;
    let c4 = Components4 {
        cluster: sigma_c,
        lower: fit.components,
    };
    let (cluster, single, se2) = level(
        &c4,
        &c.sizes(),
        Some(ms_c),
        Some(a.df[0]),
        None,
        s.t() as f64,
        s.r() as f64,
        true,
    );
    Ok((
        ClusteredFit {
            fit,
            cluster,
            share_single: single,
            share_se2: se2,
        },
        a,
    ))
}

/// The pooled four-level ANOVA fit of balanced strata with a common M, T and R.
///
/// # Errors
/// [`Error::Data`] when the strata differ in M, T or R.
pub fn anova_pooled(parts: &[Anova4], sizes: &[usize]) -> Result<ClusteredFit> {
    let p = Anova4::pooled(parts).ok_or_else(|| {
        Error::Data("pooled fit needs equal questions per cluster, T and R in every stratum".into())
    })?;
    let (fit, ms_c, sigma_c) = p.fit()?;
    let c4 = Components4 {
        cluster: sigma_c,
        lower: fit.components,
    };
    let (cluster, single, _) = level(
        &c4,
        sizes,
        Some(ms_c),
        Some(p.df[0]),
        None,
        p.t as f64,
        p.r as f64,
        false,
    );
    Ok(ClusteredFit {
        fit,
        cluster,
        share_single: single,
        share_se2: None,
    })
}

/// A REML fit of the four-level model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reml4 {
    /// lme4's θ: σ/σ_r of the cluster, question and trajectory terms.
    pub theta: [f64; 3],
    /// lme4's REML criterion at the optimum (−2 × restricted log-likelihood).
    pub criterion: f64,
    /// Nelder–Mead iterations.
    pub iterations: usize,
    /// Estimable levels whose component is exactly 0 (lme4's singular fit).
    pub boundary: Vec<&'static str>,
}

/// One stratum's outcomes as clusters → questions → trajectories → reads, centred on the
/// stratum's mean (REML does not depend on the centring; it keeps sums small).
type Tree = Vec<Vec<Vec<Vec<f64>>>>;

fn tree(s: &Stratum, c: &Clusters) -> Tree {
    let n: usize = (0..s.q())
        .map(|q| s.trajectories_of(q).iter().map(|t| t.len()).sum::<usize>())
        .sum();
    let sum: f64 = (0..s.q())
        .flat_map(|q| s.trajectories_of(q))
        .flat_map(|t| t.iter())
        .sum();
    let mean = sum / n as f64;
    c.members()
        .into_iter()
        .map(|qs| {
            qs.into_iter()
                .map(|q| {
                    s.trajectories_of(q)
                        .into_iter()
                        .map(|t| t.iter().map(|y| y - mean).collect())
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Which rows the REML criterion uses: reads, trajectory means (no trajectory has two
/// reads: σ²_r is not estimable and the trajectory level absorbs it), or question means
/// (T = 1 and R = 1 everywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rows {
    Reads,
    Trajectories,
    Questions,
}

/// (s, u, w, ℓ) of a node after adding its random effect of relative variance `lambda`.
fn node(s: f64, u: f64, w: f64, l: f64, lambda: f64) -> (f64, f64, f64, f64) {
    let d = 1.0 + lambda * s;
    (s / d, u / d, w - lambda * u * u / d, l + d.ln())
}

/// The profiled REML criterion at relative variances `lam` = (λ_c, λ_q, λ_t), and the RSS.
fn criterion(trees: &[Tree], rows: Rows, lam: [f64; 3]) -> (f64, f64) {
    let (mut ld, mut w_all, mut log_s, mut n) = (0.0, 0.0, 0.0, 0usize);
    let mut rss_fix = 0.0;
    for tree in trees {
        let (mut sd, mut ud) = (0.0, 0.0);
        for cluster in tree {
            let (mut cs, mut cu, mut cw, mut cl) = (0.0, 0.0, 0.0, 0.0);
            for question in cluster {
                let (mut qs, mut qu, mut qw, mut ql) = (0.0, 0.0, 0.0, 0.0);
                match rows {
                    Rows::Questions => {
                        let m = question.iter().flatten().sum::<f64>()
                            / question.iter().flatten().count() as f64;
                        qs += 1.0;
                        qu += m;
                        qw += m * m;
                        n += 1;
                    }
                    _ => {
                        for traj in question {
                            let (ts, tu, tw) = match rows {
                                Rows::Reads => {
                                    n += traj.len();
                                    (
                                        traj.len() as f64,
                                        traj.iter().sum::<f64>(),
                                        traj.iter().map(|y| y * y).sum::<f64>(),
                                    )
                                }
                                _ => {
                                    n += 1;
                                    let m = traj.iter().sum::<f64>() / traj.len() as f64;
                                    (1.0, m, m * m)
                                }
                            };
                            let (ts, tu, tw, tl) = if rows == Rows::Reads {
                                node(ts, tu, tw, 0.0, lam[2])
                            } else {
                                (ts, tu, tw, 0.0)
                            };
                            qs += ts;
                            qu += tu;
                            qw += tw;
                            ql += tl;
                        }
                    }
                }
                let (qs, qu, qw, ql) = if rows == Rows::Questions {
                    (qs, qu, qw, ql)
                } else {
                    node(qs, qu, qw, ql, lam[1])
                };
                cs += qs;
                cu += qu;
                cw += qw;
                cl += ql;
            }
            let (cs, cu, cw, cl) = node(cs, cu, cw, cl, lam[0]);
            sd += cs;
            ud += cu;
            w_all += cw;
            ld += cl;
        }
        log_s += sd.ln();
        rss_fix += ud * ud / sd;
    }
    let p = trees.len() as f64;
    let dof = n as f64 - p;
    let rss = w_all - rss_fix;
    let f = ld + log_s + dof * (1.0 + (2.0 * std::f64::consts::PI * rss / dof).ln());
    (f, rss / dof)
}

/// Nelder–Mead minimisation of `f` over |x| (so every θ stays ≥ 0) from `x0`.
fn nelder_mead(f: &dyn Fn(&[f64]) -> f64, x0: &[f64], iters: &mut usize) -> Vec<f64> {
    let n = x0.len();
    let abs = |x: &[f64]| -> Vec<f64> { x.iter().map(|v| v.abs()).collect() };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    simplex.push((x0.to_vec(), f(&abs(x0))));
    for i in 0..n {
        let mut x = x0.to_vec();
        x[i] += if x[i].abs() > 0.05 { 0.25 * x[i] } else { 0.1 };
        let v = f(&abs(&x));
        simplex.push((x, v));
    }
    for _ in 0..4000 {
        *iters += 1;
        simplex.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal));
        let spread = simplex[n].1 - simplex[0].1;
        let size = simplex
            .iter()
            .skip(1)
            .map(|(x, _)| {
                x.iter()
                    .zip(&simplex[0].0)
                    .map(|(a, b)| (a.abs() - b.abs()).abs())
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max);
        if spread.abs() < 1e-13 && size < 1e-9 {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|(x, _)| x[j]).sum::<f64>() / n as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            (0..n)
                .map(|j| centroid[j] + t * (simplex[n].0[j] - centroid[j]))
                .collect()
        };
        let xr = along(-1.0);
        let fr = f(&abs(&xr));
        if fr < simplex[0].1 {
            let xe = along(-2.0);
            let fe = f(&abs(&xe));
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let (xc, fc) = if fr < simplex[n].1 {
                let x = along(-0.5);
                let v = f(&abs(&x));
                (x, v)
            } else {
                let x = along(0.5);
                let v = f(&abs(&x));
                (x, v)
            };
            if fc < simplex[n].1.min(fr) {
                simplex[n] = (xc, fc);
            } else {
                let best = simplex[0].0.clone();
                for item in simplex.iter_mut().skip(1) {
                    let x: Vec<f64> = item
                        .0
                        .iter()
                        .zip(&best)
                        .map(|(a, b)| b + 0.5 * (a - b))
                        .collect();
                    let v = f(&abs(&x));
                    *item = (x, v);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal));
    abs(&simplex[0].0)
}

/// The four-level REML fit of `strata` (each with its clusters), one fixed mean per stratum:
/// (σ²_c, lower levels), the fit's summary, and notes on levels not estimable.
///
/// # Errors
/// [`Error::Data`] with fewer than two clusters in a stratum, or when the rows used agree
/// exactly within every parent (the residual variance is 0 and the likelihood unbounded).
pub fn reml(strata: &[(&Stratum, &Clusters)]) -> Result<(Components4, Reml4, Vec<String>)> {
    if let Some((s, c)) = strata.iter().find(|(_, c)| c.g() < 2) {
        return Err(Error::Data(format!(
            "stratum '{}': need at least 2 clusters per stratum to estimate the cluster variance \
             (have {})",
            s.name,
            c.g()
        )));
    }
    let trees: Vec<Tree> = strata.iter().map(|(s, c)| tree(s, c)).collect();
    let trajs = || {
        trees
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .collect::<Vec<_>>()
    };
    let two_reads = trajs().iter().any(|t| t.len() > 1);
    let two_trajs = trees.iter().flatten().flatten().any(|q| q.len() > 1);
    let two_questions = trees.iter().flatten().any(|c| c.len() > 1);
    let rows = match (two_reads, two_trajs) {
        (true, _) => Rows::Reads,
        (false, true) => Rows::Trajectories,
        (false, false) => Rows::Questions,
    };
    let mut notes = Vec::new();
    if !two_questions {
        notes.push(
            "question variance not estimable with one question per cluster: the cluster \
             component includes it"
                .to_string(),
        );
    }
    match (two_trajs, two_reads) {
        (true, false) => notes.push(
            "read variance not estimable: no trajectory has two reads; the trajectory \
             component includes it"
                .to_string(),
        ),
        (false, true) => notes.push(
            "trajectory variance not estimable: no question has two trajectories; the \
             question component includes it"
                .to_string(),
        ),
        (false, false) => notes.push(
            "trajectory and read variance not estimable: one trajectory of one read per \
             question; the question component includes both"
                .to_string(),
        ),
        (true, true) => {}
    }
    // The random terms fitted above the residual: (cluster, question, trajectory), each
    // only where its level has a lower level to be told apart from.
    let free = [
        true,
        two_questions && rows != Rows::Questions,
        two_trajs && rows == Rows::Reads,
    ];
    let lam = |x: &[f64]| -> [f64; 3] {
        let mut out = [0.0; 3];
        let mut k = 0;
        for i in 0..3 {
            if free[i] {
                out[i] = x[k] * x[k];
                k += 1;
            }
        }
        out
    };
    let (_, rss0) = criterion(&trees, rows, [0.0; 3]);
    if rss0.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(Error::Data(
            "the outcomes do not vary: no component can be estimated".into(),
        ));
    }
    let f = |x: &[f64]| {
        let (v, rss) = criterion(&trees, rows, lam(x));
        if rss > 0.0 && v.is_finite() {
            v
        } else {
            f64::INFINITY
        }
    };
    let k = free.iter().filter(|&&b| b).count();
    let mut iterations = 0;
    let mut x = nelder_mead(&f, &vec![1.0; k], &mut iterations);
    // A restart from the optimum finds what a collapsed simplex missed.
    x = nelder_mead(&f, &x, &mut iterations);
    // lme4's boundary: a θ that is 0 to the optimiser's precision is tried at exactly 0.
    let mut best = f(&x);
    for i in 0..k {
        if x[i] < 1e-3 {
            let mut z = x.clone();
            z[i] = 0.0;
            let v = f(&z);
            if v <= best + 1e-9 {
                best = v.min(best);
                x = z;
            }
        }
    }
    let l = lam(&x);
    let (crit, sigma2) = criterion(&trees, rows, l);
    if !crit.is_finite() {
        return Err(Error::Data(
            "the REML fit did not converge (the criterion is not finite at the optimum)".into(),
        ));
    }
    let theta = [l[0].sqrt(), l[1].sqrt(), l[2].sqrt()];
    let mut boundary = Vec::new();
    for (i, name) in ["cluster", "question", "trajectory"].iter().enumerate() {
        if free[i] && l[i] == 0.0 {
            boundary.push(*name);
        }
    }
    // The residual is the lowest estimable level.
    let lower = match rows {
        Rows::Reads => PerLevel {
            question: sigma2 * l[1],
            trajectory: two_trajs.then_some(sigma2 * l[2]),
            read: Some(sigma2),
        },
        Rows::Trajectories => PerLevel {
            question: sigma2 * l[1],
            trajectory: Some(sigma2),
            read: None,
        },
        Rows::Questions => PerLevel {
            question: sigma2,
            trajectory: None,
            read: None,
        },
    };
    Ok((
        Components4 {
            cluster: sigma2 * l[0],
            lower,
        },
        Reml4 {
            theta,
            criterion: crit,
            iterations,
            boundary,
        },
        notes,
    ))
}

/// The four-level REML fit as a [`ClusteredFit`] of strata with clusters of sizes `sizes`
/// (all strata's) at mean design (t, r); `with_se2` for one stratum.
///
/// # Errors
/// Those of [`reml`].
pub fn reml_fit(
    strata: &[(&Stratum, &Clusters)],
    t: f64,
    r: f64,
    with_se2: bool,
) -> Result<ClusteredFit> {
    let (c4, summary, mut notes) = reml(strata)?;
    let boundary = summary.boundary.clone();
    for b in &boundary {
        notes.push(format!(
            "{b} component at the boundary 0 (REML, as lme4's singular fit)"
        ));
    }
    let sizes: Vec<usize> = strata.iter().flat_map(|(_, c)| c.sizes()).collect();
    let (cluster, single, se2) = level(&c4, &sizes, None, None, Some(summary), t, r, with_se2);
    Ok(ClusteredFit {
        fit: Fit {
            ms: PerLevel::NONE,
            df: PerLevel::NONE,
            components: c4.lower,
            truncated: Vec::new(),
            notes,
        },
        cluster,
        share_single: single,
        share_se2: se2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::variance::{analyse_panel, Method};
    use crate::panel::{load_panel, LoadOptions, Panel};
    use std::path::Path;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/cluster")
            .join(name)
    }

    fn load(name: &str, cluster: Option<&str>) -> Panel {
        let opts = LoadOptions {
            cluster: cluster.map(str::to_string),
            allow_unbalanced: true,
            ..Default::default()
        };
        load_panel(&fixture(name), &opts).unwrap()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    /// `python tests/reference/cluster_anova.py` (numpy 1.x/2.x alike): per stratum the
    /// mean squares (cluster, question, trajectory, read), the components and the SE as the
    /// SD of the 24 cluster means over √24.
    #[test]
    fn balanced_components_and_se_equal_the_nested_anova_of_numpy() {
        let p = load("balanced.csv", Some("article"));
        let v = analyse_panel(&p).unwrap();
        let want = [
            (
                "hotpotqa",
                0.45849140625,
                0.11148313505196708,
                [
                    4.77253992998981,
                    0.7585255252690972,
                    0.1916423370572917,
                    0.037671151953125,
                ],
                [
                    0.25087590029504453,
                    0.14172079705295137,
                    0.07698559255208334,
                    0.037671151953125,
                ],
            ),
            (
                "musique",
                1.6552268229166665,
                0.1208291131069067,
                [
                    5.6062750364934315,
                    1.0156967287065974,
                    0.25291263388020835,
                    0.04687488695312501,
                ],
                [
                    0.28691114423667713,
                    0.19069602370659727,
                    0.10301887346354167,
                    0.04687488695312501,
                ],
            ),
        ];
        for (s, (name, mean, se, ms, comp)) in v.strata.iter().zip(want) {
            assert_eq!(s.name, name);
            assert_eq!(s.method, Method::Anova);
            let c = s.cluster.as_ref().unwrap();
            assert_eq!((c.clusters, c.min_questions, c.max_questions), (24, 4, 4));
            assert_eq!(c.df, Some(23.0));
            assert_eq!(s.fit.df.question, 72.0);
            let got_ms = [
                c.ms.unwrap(),
                s.fit.ms.question,
                s.fit.ms.trajectory.unwrap(),
                s.fit.ms.read.unwrap(),
            ];
            let got_c = [
                c.component,
                s.fit.components.question,
                s.fit.components.trajectory.unwrap(),
                s.fit.components.read.unwrap(),
            ];
            for i in 0..4 {
                assert!(
                    close(got_ms[i], ms[i], 1e-9),
                    "{name} ms {i}: {}",
                    got_ms[i]
                );
                assert!(close(got_c[i], comp[i], 1e-9), "{name} component {i}");
            }
            assert!(close(s.mean, mean, 1e-12));
            assert!(close(s.se, se, 1e-9), "{name} se {} vs {se}", s.se);
            // The cluster-robust SE over question means is the same number, balanced.
            let st = p.strata.iter().find(|x| x.name == name).unwrap();
            let (_, robust) = clustered_mean_se(st, st.clusters.as_ref().unwrap()).unwrap();
            assert!(close(robust, se, 1e-12));
            // The four shares of the single observation sum to 1.
            let sh = s.share_single.unwrap();
            let total =
                c.share_single.unwrap() + sh.question + sh.trajectory.unwrap() + sh.read.unwrap();
            assert!(close(total, 1.0, 1e-12));
        }
        // Combined: sqrt(SE₁² + SE₂²)/2 on G − 1 df per stratum.
        let se = (0.11148313505196708f64.powi(2) + 0.1208291131069067f64.powi(2)).sqrt() / 2.0;
        assert!(close(v.se, se, 1e-9));
        assert!(v.df().unwrap() < 46.0 + 1e-9);
        // Pooled: a common M, T, R, so ANOVA with sums added (df 46 for clusters).
        let pooled = v.pooled.as_ref().unwrap();
        assert_eq!(pooled.method, Method::Anova);
        assert_eq!(pooled.cluster.as_ref().unwrap().df, Some(46.0));
        // The same file without --cluster: the three-level question SE of numpy.
        let flat = analyse_panel(&load("balanced.csv", None)).unwrap();
        assert!(flat.strata.iter().all(|s| s.cluster.is_none()));
        assert!(close(flat.strata[0].se, 0.0671274351483257, 1e-9));
        assert!(close(flat.strata[1].se, 0.07442662595427903, 1e-9));
    }

    #[test]
    fn copied_questions_do_not_shrink_the_clustered_se() {
        // Each question copied under a new id into its own cluster: twice the questions,
        // no new information. The question-level SE falls by about √2; the cluster SE
        // stays what it was, to the last digits.
        let text = std::fs::read_to_string(fixture("balanced.csv")).unwrap();
        let mut copied = text.clone();
        for line in text.lines().skip(1) {
            let mut f: Vec<String> = line.split(',').map(str::to_string).collect();
            f[1] = format!("{}_copy", f[1]);
            copied.push_str(&f.join(","));
            copied.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("copied.csv");
        std::fs::write(&path, copied).unwrap();
        let se = |path: &Path, cluster: Option<&str>| {
            let opts = LoadOptions {
                cluster: cluster.map(str::to_string),
                ..Default::default()
            };
            analyse_panel(&load_panel(path, &opts).unwrap()).unwrap().se
        };
        let original = fixture("balanced.csv");
        let (flat, flat_copied) = (se(&original, None), se(&path, None));
        let (clustered, clustered_copied) =
            (se(&original, Some("article")), se(&path, Some("article")));
        assert!(flat_copied < 0.75 * flat, "{flat_copied} vs {flat}");
        assert!(close(clustered_copied, clustered, 1e-12));
        assert!(clustered > 1.5 * flat);
    }

    /// `Rscript tests/reference/cluster_lme4.R` (lme4 1.1.31, R 4.2.2; bobyqa to 1e-12):
    /// lme4's `y ~ 1 + (1|cluster) + (1|cluster:question) + (1|cluster:question:trajectory)`
    /// per stratum, and with `dataset` as a fixed effect pooled: σ²_c, σ²_q, σ²_t, σ²_r and
    /// the REML criterion.
    #[test]
    fn unbalanced_clusters_equal_lme4() {
        let p = load("unbalanced.csv", Some("cluster"));
        let v = analyse_panel(&p).unwrap();
        let want = [
            (
                [
                    0.42389071869,
                    0.14205660227,
                    0.139694211822,
                    0.0744934577967,
                ],
                155.3600040707,
            ),
            (
                [
                    0.338248274837,
                    0.0736071384737,
                    0.0536664337805,
                    0.0668644849134,
                ],
                125.4490839009,
            ),
        ];
        let got = |c: &ClusterLevel, f: &Fit| {
            [
                c.component,
                f.components.question,
                f.components.trajectory.unwrap(),
                f.components.read.unwrap(),
            ]
        };
        for (s, (comp, crit)) in v.strata.iter().zip(want) {
            assert_eq!(s.method, Method::Reml);
            let c = s.cluster.as_ref().unwrap();
            let g = got(c, &s.fit);
            for i in 0..4 {
                assert!(
                    close(g[i], comp[i], 2e-6),
                    "{} level {i}: {} vs {}",
                    s.name,
                    g[i],
                    comp[i]
                );
            }
            let crit_got = c.reml.as_ref().unwrap().criterion;
            assert!((crit_got - crit).abs() < 1e-6, "{crit_got} vs {crit}");
        }
        let pooled = v.pooled.as_ref().unwrap();
        let g = got(pooled.cluster.as_ref().unwrap(), &pooled.fit);
        let want = [
            0.376829637496,
            0.107750337497,
            0.0960033800821,
            0.070008288687,
        ];
        for i in 0..4 {
            assert!(
                close(g[i], want[i], 2e-6),
                "pooled level {i}: {} vs {}",
                g[i],
                want[i]
            );
        }
        let crit = pooled
            .cluster
            .as_ref()
            .unwrap()
            .reml
            .as_ref()
            .unwrap()
            .criterion;
        assert!((crit - 286.8000900173).abs() < 1e-6, "{crit}");
    }

    /// `python tests/fixtures/cluster/make_inspect_log.py` (inspect_ai 0.3.285) ran an eval
    /// of 8 articles × 3 questions, one epoch, and printed inspect's own
    /// `stderr(cluster="article")` of its scores, 0.06495190528383289 (mean
    /// 0.3958333333333333). Imported with the article as the cluster, T = R = 1 and equal
    /// cluster sizes, the stratum SE is that number.
    #[cfg(feature = "formats")]
    #[test]
    fn an_inspect_log_clustered_by_article_has_inspects_clustered_stderr() {
        use crate::import::{Balance, LogMapping, PanelSettings};
        let settings = PanelSettings {
            cluster: Some("cluster".into()),
            logs: LogMapping {
                cluster_from: Some("article".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let source = crate::panel::Source::Files(vec![fixture("inspect/clustered.eval")]);
        let p = settings.load(&source, Balance::Fitted).unwrap();
        let v = analyse_panel(&p).unwrap();
        let s = &v.strata[0];
        assert_eq!(s.cluster.as_ref().unwrap().clusters, 8);
        assert!(close(s.mean, 0.3958333333333333, 1e-12));
        assert!(close(s.se, 0.06495190528383289, 1e-12), "{}", s.se);
    }

    /// One clustered stratum's audit: σ²_c, σ²_q, σ²_t, σ²_r = 0.2, 0.1, 0.05, 0.04 with
    /// G = 10 clusters of M = 4 questions, SE 0.15.
    fn audit_stratum(name: &str, g: usize) -> crate::components::forecast::AuditStratum {
        use crate::components::forecast::{AuditCluster, AuditStratum};
        AuditStratum {
            name: name.into(),
            questions: g * 4,
            trajectories: 2,
            reads: 2,
            se: 0.15,
            components: PerLevel {
                question: 0.1,
                trajectory: Some(0.05),
                read: Some(0.04),
            },
            cluster: Some(AuditCluster {
                clusters: g,
                questions_per_cluster: 4.0,
                component: 0.2,
            }),
        }
    }

    #[test]
    fn clustered_designs_are_forecast_by_hand() {
        use crate::components::forecast::{forecast, Audit, DesignSpec};
        let audit = Audit {
            strata: vec![audit_stratum("a", 10), audit_stratum("b", 20)],
            pooled: None,
            pooled_cluster: None,
            weights: Vec::new(),
        };
        let spec: DesignSpec = "30x3:2:2".parse().unwrap();
        assert_eq!(
            spec,
            DesignSpec::Clustered {
                clusters: 30,
                per_cluster: 3,
                t: 2,
                r: 2
            }
        );
        let f = forecast(&audit, &spec, false).unwrap();
        // 30 clusters split 10 : 20 as the audit's. Stratum a, G = 10, M = 3, T = R = 2:
        // 0.2/10 + 0.1/30 + 0.05/60 + 0.04/120 = 0.02 + 0.00333… + 0.000833… + 0.000333…
        // = 0.0245; stratum b, G = 20: 0.01 + 0.001666… + 0.000416… + 0.000166… = 0.01225.
        // Combined (equal weights): sqrt(0.0245 + 0.01225) / 2 = 0.0958514…
        assert_eq!(f.clusters_per_stratum, [("a".into(), 10), ("b".into(), 20)]);
        assert_eq!(f.per_stratum, [("a".into(), 30), ("b".into(), 60)]);
        assert_eq!(f.questions, 90);
        let want = (0.0245f64 + 0.01225).sqrt() / 2.0;
        assert!(close(f.se_nested, want, 1e-12), "{} vs {want}", f.se_nested);
        // Cluster-count scaling of the audit's SE: 0.15² · 10/10 and 0.15² · 20/20.
        assert!(close(f.se_q_only, (2.0f64 * 0.0225).sqrt() / 2.0, 1e-12));
        // More questions per cluster barely help once σ²_c dominates: 30x30:2:2 gives
        // a: 0.02 + 0.1/300 + 0.05/600 + 0.04/1200 = 0.02045, b: 0.010225.
        let f = forecast(&audit, &"30x30:2:2".parse().unwrap(), false).unwrap();
        let want = (0.02045f64 + 0.010225).sqrt() / 2.0;
        assert!(close(f.se_nested, want, 1e-12));
        // Q:T:R with a clustered audit: every question its own cluster, Q = 90 split 30 : 60:
        // a: (0.2 + 0.1)/30 + 0.05/60 + 0.04/120 = 0.011166…, b: 0.3/60 + 0.05/120 + 0.04/240
        // = 0.0055833….
        let f = forecast(&audit, &"90:2:2".parse().unwrap(), false).unwrap();
        let want =
            (0.3f64 / 30.0 + 0.05 / 60.0 + 0.04 / 120.0 + 0.3 / 60.0 + 0.05 / 120.0 + 0.04 / 240.0)
                .sqrt()
                / 2.0;
        assert!(close(f.se_nested, want, 1e-12));
        // Without clusters in the audit, a clustered design is refused by name.
        let mut flat = audit.clone();
        for s in &mut flat.strata {
            s.cluster = None;
        }
        let e = forecast(&flat, &spec, false).unwrap_err();
        assert!(
            e.to_string()
                .contains("read the audit with its cluster column"),
            "{e}"
        );
        // Bad clustered designs.
        for bad in ["0x3:2:2", "3x:2:2", "3x4:0:1"] {
            assert!(bad.parse::<DesignSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_forecast_at_the_audits_own_design_is_the_measured_se() {
        use crate::components::forecast::{forecast, Audit};
        let p = load("balanced.csv", Some("article"));
        let v = analyse_panel(&p).unwrap();
        // Through the JSON the variance report writes, as `stats forecast --components` reads it.
        let json = serde_json::to_string(&v).unwrap();
        let from_json = Audit::from_variance_json(&json, Path::new("v.json")).unwrap();
        let audit = Audit::from_report(&v);
        assert_eq!(audit, from_json);
        assert!(audit.pooled_cluster.is_some());
        // Nothing was truncated, so the components telescope to MS_c/(GMTR) per stratum.
        let f = forecast(&audit, &"48x4:2:2".parse().unwrap(), false).unwrap();
        assert_eq!(f.clusters_per_stratum[0].1, 24);
        assert!(
            close(f.se_nested, v.se, 1e-12),
            "{} vs {}",
            f.se_nested,
            v.se
        );
        assert!(close(f.se_q_only, v.se, 1e-12));
    }
}
