//! The analysis of every x × y pair: validation and transformation of the columns, point
//! estimates, bootstrap summaries and permutation p-values.

use rayon::prelude::*;
use serde::Serialize;

use super::boot::PairBootstrap;
use super::estimate::{self, Estimate, Method};
use super::kendall::{kendall_scores, KendallScores};
use super::permute::{self, centred_cross, quantise, PermuteBackend, PermuteJob};
use super::rank::average_ranks;
use super::table::Dataset;
use crate::resample::engine::ResampleBackend;
use crate::resample::summary::{self, Interval, Method as CiMethod};
use crate::resample::Resampling;
use crate::{Error, Result};

/// Analysis settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub method: Method,
    pub confidence: f64,
}

/// Bootstrap summary of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootSummary {
    /// SD of the defined replicates (ddof 1).
    pub se: f64,
    /// Percentile interval (type-7 quantiles) of the defined replicates.
    pub ci: Interval,
    /// Replicates whose resample had a constant column (left out of se and ci).
    pub undefined: usize,
}

/// Permutation test of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PermSummary {
    /// (1 + exceed) / (permutations + 1).
    pub p: f64,
    /// #{|r*| ≥ |r|}.
    pub exceed: u64,
    pub permutations: u32,
}

/// Everything reported for one pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairResult {
    pub x: String,
    pub y: String,
    #[serde(flatten)]
    pub estimate: Estimate,
    pub bootstrap: Option<BootSummary>,
    pub permutation: Option<PermSummary>,
}

/// The columns as the method uses them.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub method: Method,
    pub x_names: Vec<String>,
    pub y_names: Vec<String>,
    /// Values, ranks (Spearman) or 0/1 codes (point-biserial y).
    pub xs: Vec<Vec<f64>>,
    pub ys: Vec<Vec<f64>>,
    /// Point-biserial: per y column, the (value coded 0, value coded 1).
    pub coding: Vec<(String, [f64; 2])>,
    /// Kendall: scores per pair (x * n_y + y).
    pub kendall: Vec<KendallScores>,
}

impl Prepared {
    pub fn n(&self) -> usize {
        self.xs[0].len()
    }
    pub fn n_pairs(&self) -> usize {
        self.xs.len() * self.ys.len()
    }
}

fn distinct(col: &[f64], limit: usize) -> Vec<f64> {
    let mut v: Vec<f64> = Vec::new();
    for &x in col {
        if !v.contains(&x) {
            v.push(x);
            if v.len() >= limit {
                break;
            }
        }
    }
    v
}

/// Checks the data for `method` and transforms the columns: at least 3 rows, no constant
/// column, for point-biserial a two-valued y (coded 0 for the smaller value, 1 for the
/// larger), for Spearman average ranks.
///
/// # Errors
/// [`Error::Data`] naming the column and what was found.
pub fn prepare(data: &Dataset, method: Method) -> Result<Prepared> {
    let n = data.n();
    if n < 3 {
        return Err(Error::Data(format!(
            "{n} rows left for the analysis; a correlation test needs at least 3"
        )));
    }
    let agg = if data.aggregated_from.is_some() {
        " (after averaging per aggregation unit)"
    } else {
        ""
    };
    let mut coding = Vec::new();
    if method == Method::PointBiserial {
        for (name, col) in data.y_names.iter().zip(&data.y) {
            let d = distinct(col, 3);
            if d.len() != 2 {
                let shown: Vec<String> = d.iter().map(|v| v.to_string()).collect();
                return Err(Error::Data(format!(
                    "point-biserial correlation: column '{name}' must take exactly two values (0/1 or \
                     two distinct values){agg}; found {}{}",
                    if d.len() > 2 {
                        "more than two, e.g. "
                    } else {
                        "only "
                    },
                    shown.join(", ")
                )));
            }
            coding.push((name.clone(), [d[0].min(d[1]), d[0].max(d[1])]));
        }
    }
    for (name, col) in data
        .x_names
        .iter()
        .zip(&data.x)
        .chain(data.y_names.iter().zip(&data.y))
    {
        if col.iter().all(|&v| v == col[0]) {
            return Err(Error::Data(format!(
                "column '{name}' is constant (every one of the {n} values used is {}){agg}; \
                 a correlation with it is undefined",
                col[0]
            )));
        }
    }
    let (xs, ys): (Vec<Vec<f64>>, Vec<Vec<f64>>) = match method {
        Method::Pearson | Method::Kendall => (data.x.clone(), data.y.clone()),
        Method::PointBiserial => (
            data.x.clone(),
            data.y
                .iter()
                .zip(&coding)
                .map(|(c, (_, v))| c.iter().map(|&y| (y == v[1]) as u8 as f64).collect())
                .collect(),
        ),
        Method::Spearman => (
            data.x.iter().map(|c| average_ranks(c)).collect(),
            data.y.iter().map(|c| average_ranks(c)).collect(),
        ),
    };
    let kendall = if method == Method::Kendall {
        xs.iter()
            .flat_map(|x| ys.iter().map(move |y| (x, y)))
            .collect::<Vec<_>>()
            .par_iter()
            .map(|(x, y)| kendall_scores(x, y))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Prepared {
        method,
        x_names: data.x_names.clone(),
        y_names: data.y_names.clone(),
        xs,
        ys,
        coding,
        kendall,
    })
}

/// Point estimates, p-values and Fisher intervals of every pair (x-major order).
pub fn estimates(prep: &Prepared, confidence: f64) -> Vec<PairResult> {
    let mut out = Vec::with_capacity(prep.n_pairs());
    for (i, x) in prep.xs.iter().enumerate() {
        for (j, y) in prep.ys.iter().enumerate() {
            let estimate = match prep.method {
                Method::Kendall => estimate::kendall(x, y, confidence),
                m => estimate::product_moment(x, y, m, confidence),
            };
            out.push(PairResult {
                x: prep.x_names[i].clone(),
                y: prep.y_names[j].clone(),
                estimate,
                bootstrap: None,
                permutation: None,
            });
        }
    }
    out
}

/// Bootstrap replicates `0..resampling.replicates` of every pair, drawn from
/// `resampling.seed`: rows resampled, or whole clusters when `clusters` is given.
/// Product-moment methods sum moment columns on `engine` ([`super::boot`]); Spearman and
/// Kendall re-rank every resample on the CPU from the same draws
/// ([`super::rank_boot`]; `engine` is not used). Returns `reps[r * pairs + pair]`
/// ([`attach_bootstrap`] summarises them at a confidence level).
///
/// # Errors
/// Engine errors; a bad `STATS_CPU_RNG` for the rank methods.
pub fn bootstrap_replicates(
    prep: &Prepared,
    clusters: Option<(&[u32], usize)>,
    resampling: &Resampling,
    engine: &dyn ResampleBackend,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<f64>> {
    if is_rank(prep.method) {
        return super::rank_boot::rank_bootstrap(prep, clusters, resampling, progress);
    }
    let pb = PairBootstrap {
        xs: &prep.xs,
        ys: &prep.ys,
        clusters,
    };
    pb.run(engine, resampling.seed, 0..resampling.replicates, progress)
}

/// Whether `method` is a rank correlation (its bootstrap re-ranks every resample on the
/// CPU, [`super::rank_boot`]).
pub fn is_rank(method: Method) -> bool {
    matches!(method, Method::Spearman | Method::Kendall)
}

/// Passes over the replicates a bootstrap of `prep` makes (engine calls; 1 for the rank
/// methods), for progress totals.
pub fn bootstrap_calls(prep: &Prepared, clustered: bool) -> usize {
    if is_rank(prep.method) {
        return 1;
    }
    let k = clustered as usize + 2 * (prep.xs.len() + prep.ys.len()) + prep.n_pairs();
    k.div_ceil(crate::resample::MAX_K)
}

/// Summarises replicates `reps` (layout of [`bootstrap_replicates`]) into each result.
pub fn attach_bootstrap(results: &mut [PairResult], reps: &[f64], confidence: f64) {
    let np = results.len();
    for (p, res) in results.iter_mut().enumerate() {
        let vals: Vec<f64> = reps
            .iter()
            .skip(p)
            .step_by(np)
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let total = reps.len() / np;
        let undefined = total - vals.len();
        res.bootstrap = Some(if vals.len() < 2 {
            BootSummary {
                se: f64::NAN,
                ci: Interval::NAN,
                undefined,
            }
        } else {
            let s =
                summary::summarize(res.estimate.r, &vals, CiMethod::Percentile, confidence, 0.0);
            BootSummary {
                se: s.se,
                ci: s.ci,
                undefined,
            }
        });
    }
}

/// Permutation p-values of every pair over permutations `0..count`: the y rows are
/// shuffled jointly (one permutation serves every pair; stream layout in
/// [`super::permute`]). Product-moment methods run on `backend`; Kendall's S is not a sum
/// and is recomputed on the CPU for each permutation (O(n log n) per pair).
///
/// # Errors
/// Backend errors.
pub fn permutation_tests(
    prep: &Prepared,
    backend: &dyn PermuteBackend,
    seed: u64,
    count: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<PermSummary>> {
    let n = prep.n();
    let ny = prep.ys.len();
    let np = prep.n_pairs();
    let mut exceed = vec![0u64; np];
    if prep.method == Method::Kendall {
        let observed: Vec<i64> = prep.kendall.iter().map(|k| k.s.abs()).collect();
        let counts: Vec<Vec<u64>> = (0..count)
            .into_par_iter()
            .map_init(Vec::new, |perm, p| {
                permute::permutation(seed, p, n, perm);
                let mut hit = vec![0u64; np];
                for (d, y) in prep.ys.iter().enumerate() {
                    let yp: Vec<f64> = perm.iter().map(|&j| y[j as usize]).collect();
                    for (c, x) in prep.xs.iter().enumerate() {
                        let s = kendall_scores(x, &yp).s.abs();
                        hit[c * ny + d] = (s >= observed[c * ny + d]) as u64;
                    }
                }
                hit
            })
            .collect();
        for h in counts {
            for (e, v) in exceed.iter_mut().zip(h) {
                *e += v;
            }
        }
        progress(count as u64);
    } else {
        let xq: Vec<Vec<i32>> = prep.xs.iter().map(|c| quantise(c)).collect();
        let yq: Vec<Vec<i32>> = prep.ys.iter().map(|c| quantise(c)).collect();
        let sum = |v: &Vec<i32>| v.iter().map(|&a| a as i64).sum::<i64>();
        let (sx, sy): (Vec<i64>, Vec<i64>) =
            (xq.iter().map(sum).collect(), yq.iter().map(sum).collect());
        let pairs: Vec<(u32, u32)> = (0..np)
            .map(|p| ((p / ny) as u32, (p % ny) as u32))
            .collect();
        let observed: Vec<i128> = pairs
            .iter()
            .map(|&(x, y)| {
                let sxy: i64 = xq[x as usize]
                    .iter()
                    .zip(&yq[y as usize])
                    .map(|(&a, &b)| (a * b) as i64)
                    .sum();
                centred_cross(n, sx[x as usize], sy[y as usize], sxy).abs()
            })
            .collect();
        let job = PermuteJob {
            xq: &xq,
            yq: &yq,
            pairs: pairs.clone(),
            seed,
            permutations: 0..count,
        };
        let sums = backend.cross_sums(&job, progress)?;
        for (i, &s) in sums.iter().enumerate() {
            let p = i % np;
            let (x, y) = pairs[p];
            let d = centred_cross(n, sx[x as usize], sy[y as usize], s).abs();
            exceed[p] += (d >= observed[p]) as u64;
        }
    }
    Ok(exceed
        .into_iter()
        .map(|e| PermSummary {
            p: permute::p_value(e, count as u64),
            exceed: e,
            permutations: count,
        })
        .collect())
}

/// Permuted cross sums of a product-moment analysis (for backend identity checks):
/// the raw output of `backend` for permutations `range`.
///
/// # Errors
/// Backend errors.
pub fn permuted_cross_sums(
    prep: &Prepared,
    backend: &dyn PermuteBackend,
    seed: u64,
    range: std::ops::Range<u32>,
) -> Result<Vec<i64>> {
    let xq: Vec<Vec<i32>> = prep.xs.iter().map(|c| quantise(c)).collect();
    let yq: Vec<Vec<i32>> = prep.ys.iter().map(|c| quantise(c)).collect();
    let ny = prep.ys.len() as u32;
    let job = PermuteJob {
        xq: &xq,
        yq: &yq,
        pairs: (0..prep.n_pairs() as u32)
            .map(|p| (p / ny, p % ny))
            .collect(),
        seed,
        permutations: range,
    };
    backend.cross_sums(&job, &|_| {})
}
