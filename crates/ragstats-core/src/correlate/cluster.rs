//! Cluster-aware p-values and intervals of `correlate --cluster`: the delete-one-cluster
//! jackknife of Fisher's z.
//!
//! Rows of one cluster (reads of one question) are not independent, so the t test on
//! n − 2 df and the Fisher interval with SE √(c/(n − d)) overstate the information: a table
//! whose 60 rows are each copied 4 times has the same r but four times the n. With G
//! clusters, leaving cluster g out gives r₍g₎ (computed exactly as r is: Spearman re-ranks the
//! remaining rows, Kendall recounts its pairs), z₍g₎ = atanh r₍g₎, and
//!
//! ```text
//! V = (G − 1)/G · Σ_g (z₍g₎ − z̄)²,   t = atanh(r) / √V   against Student's t on G − 2 df,
//! interval  tanh(atanh r ± t_{G−2, 1−α/2} √V)
//! ```
//!
//! Every quantity depends on the data only through r and the leave-one-cluster-out r₍g₎,
//! and a cluster of identical copies of one row leaves each r₍g₎ as the single row's: copying
//! rows within their clusters changes nothing. With one row per cluster this is the
//! ordinary delete-one jackknife, close to (not equal to) the t test. The p-value and the
//! interval agree: p < α exactly when the interval excludes 0.

use rayon::prelude::*;

use super::estimate::{pearson, Estimate, Method, PValueKind};
use super::kendall::{kendall_scores, tau_b, tie_counts};
use super::Prepared;
use crate::inference::t::{t_quantile, two_sided_p};
use crate::resample::summary::Interval;

/// Per cluster g, the rows it holds.
fn members(ids: &[u32], g: usize) -> Vec<Vec<usize>> {
    let mut m = vec![Vec::new(); g];
    for (i, &c) in ids.iter().enumerate() {
        m[c as usize].push(i);
    }
    m
}

/// Average ranks (ties share their mean position) of the rows of `x` not in `out`, in the
/// order of `order` (the rows sorted by x); rows in `out` get NaN. O(n).
fn ranks_without(x: &[f64], order: &[usize], out: &[bool]) -> Vec<f64> {
    let mut ranks = vec![f64::NAN; x.len()];
    let kept: Vec<usize> = order.iter().copied().filter(|&i| !out[i]).collect();
    let mut i = 0;
    while i < kept.len() {
        let mut j = i + 1;
        while j < kept.len() && x[kept[j]] == x[kept[i]] {
            j += 1;
        }
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &kept[i..j] {
            ranks[k] = r;
        }
        i = j;
    }
    ranks
}

/// r of every pair (x-major) with the rows of cluster `g` left out, computed as the method
/// computes r. `prep` holds values (Pearson, Kendall), 0/1 codes (point-biserial) or the
/// full-sample ranks (Spearman: a monotone transform of the values with the same ties, so
/// re-ranking them re-ranks the values).
pub fn leave_cluster_out(prep: &Prepared, ids: &[u32], clusters: usize) -> Vec<Vec<f64>> {
    let rows = members(ids, clusters);
    let ny = prep.ys.len();
    let n = prep.n();
    match prep.method {
        Method::Pearson | Method::PointBiserial => {
            // From per-cluster moment sums of the centred columns, O(n + G · pairs): leaving
            // g out subtracts its sums. A leave-out variance below 1e-12 of the full one is
            // a constant column (rounding leaves a residue, never an exact 0).
            let centred = |c: &Vec<f64>| {
                let m = c.iter().sum::<f64>() / n as f64;
                c.iter().map(|v| v - m).collect::<Vec<f64>>()
            };
            let xs: Vec<Vec<f64>> = prep.xs.iter().map(centred).collect();
            let ys: Vec<Vec<f64>> = prep.ys.iter().map(centred).collect();
            // sums[g] = [s, s², …] per x column then per y column, then Σxy per pair.
            let (nx, np) = (xs.len(), prep.n_pairs());
            let width = 2 * (nx + ny) + np;
            let mut sums = vec![0f64; clusters * width];
            for (i, &c) in ids.iter().enumerate() {
                let row = &mut sums[c as usize * width..(c as usize + 1) * width];
                for (a, x) in xs.iter().enumerate() {
                    row[2 * a] += x[i];
                    row[2 * a + 1] += x[i] * x[i];
                }
                for (b, y) in ys.iter().enumerate() {
                    row[2 * (nx + b)] += y[i];
                    row[2 * (nx + b) + 1] += y[i] * y[i];
                }
                for p in 0..np {
                    row[2 * (nx + ny) + p] += xs[p / ny][i] * ys[p % ny][i];
                }
            }
            let mut total = vec![0f64; width];
            for row in sums.chunks_exact(width) {
                for (t, v) in total.iter_mut().zip(row) {
                    *t += v;
                }
            }
            (0..clusters)
                .map(|g| {
                    let m = (n - rows[g].len()) as f64;
                    let row = &sums[g * width..(g + 1) * width];
                    let left = |k: usize| total[k] - row[k];
                    let var = |k: usize| left(k + 1) - left(k) * left(k) / m;
                    (0..np)
                        .map(|p| {
                            let (a, b) = (2 * (p / ny), 2 * (nx + p % ny));
                            let (vx, vy) = (var(a), var(b));
                            if m < 2.0 || vx <= 1e-12 * total[a + 1] || vy <= 1e-12 * total[b + 1] {
                                return f64::NAN;
                            }
                            let sxy = left(2 * (nx + ny) + p) - left(a) * left(b) / m;
                            (sxy / (vx * vy).sqrt()).clamp(-1.0, 1.0)
                        })
                        .collect()
                })
                .collect()
        }
        Method::Spearman => {
            let sorted = |c: &Vec<f64>| {
                let mut idx: Vec<usize> = (0..c.len()).collect();
                idx.sort_by(|&a, &b| c[a].total_cmp(&c[b]));
                idx
            };
            let ox: Vec<Vec<usize>> = prep.xs.iter().map(sorted).collect();
            let oy: Vec<Vec<usize>> = prep.ys.iter().map(sorted).collect();
            rows.par_iter()
                .map(|drop| {
                    let mut out = vec![false; n];
                    drop.iter().for_each(|&i| out[i] = true);
                    let kept = |r: Vec<f64>| -> Vec<f64> {
                        r.into_iter().filter(|v| !v.is_nan()).collect()
                    };
                    let rx: Vec<Vec<f64>> = prep
                        .xs
                        .iter()
                        .zip(&ox)
                        .map(|(c, o)| kept(ranks_without(c, o, &out)))
                        .collect();
                    let ry: Vec<Vec<f64>> = prep
                        .ys
                        .iter()
                        .zip(&oy)
                        .map(|(c, o)| kept(ranks_without(c, o, &out)))
                        .collect();
                    rx.iter()
                        .flat_map(|x| ry.iter().map(move |y| pearson(x, y)))
                        .collect()
                })
                .collect()
        }
        Method::Kendall => {
            // Pairs with an end in cluster g: Σ_{i∈g} c_i − S_gg of S (a pair inside g is
            // in two rows' c_i), and likewise Σ_{i∈g} t_i − n₁,gg of the x ties.
            let tx: Vec<Vec<i64>> = prep.xs.iter().map(|c| tie_counts(c)).collect();
            let ty: Vec<Vec<i64>> = prep.ys.iter().map(|c| tie_counts(c)).collect();
            rows.par_iter()
                .map(|drop| {
                    let m = n - drop.len();
                    let mut r = Vec::with_capacity(prep.n_pairs());
                    for (a, x) in prep.xs.iter().enumerate() {
                        for (b, y) in prep.ys.iter().enumerate() {
                            let k = &prep.kendall[a * ny + b];
                            let xg: Vec<f64> = drop.iter().map(|&i| x[i]).collect();
                            let yg: Vec<f64> = drop.iter().map(|&i| y[i]).collect();
                            let within = kendall_scores(&xg, &yg);
                            let sum = |v: &[i64]| drop.iter().map(|&i| v[i]).sum::<i64>();
                            let left = super::kendall::KendallScores {
                                concordance: Vec::new(),
                                s: k.s - (sum(&k.concordance) - within.s),
                                ties_x: k.ties_x - (sum(&tx[a]) - within.ties_x),
                                ties_y: k.ties_y - (sum(&ty[b]) - within.ties_y),
                            };
                            r.push(if m < 2 { f64::NAN } else { tau_b(&left, m) });
                        }
                    }
                    r
                })
                .collect()
        }
    }
}

/// The cluster jackknife test and interval of one pair (module docs) from its estimate r
/// and leave-one-cluster-out values `loo`; `None` when G < 3 (no df) or some r₍g₎ is
/// undefined or ±1 (z infinite).
pub fn jackknife(r: f64, loo: &[f64], confidence: f64) -> Option<(f64, f64, f64, Interval)> {
    let g = loo.len() as f64;
    if loo.len() < 3 || !r.is_finite() {
        return None;
    }
    let z: Vec<f64> = loo.iter().map(|v| v.atanh()).collect();
    if z.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let se = crate::resample::summary::jackknife_variance(&z).sqrt();
    let df = g - 2.0;
    let z0 = r.atanh();
    let t = z0 / se;
    if !se.is_finite() || se <= 0.0 || !z0.is_finite() {
        return None;
    }
    let q = t_quantile(0.5 + confidence / 2.0, df);
    if !q.is_finite() {
        return None;
    }
    Some((
        t,
        two_sided_p(t, df),
        df,
        Interval::new((z0 - q * se).tanh(), (z0 + q * se).tanh()),
    ))
}

/// Replaces every pair's p-value and Fisher interval in `estimates` (x-major) by the
/// cluster jackknife's (module docs). A pair whose jackknife is undefined ([`jackknife`])
/// gets NaN statistic and p and no interval; its name is returned for a note.
pub fn apply(
    prep: &Prepared,
    ids: &[u32],
    clusters: usize,
    confidence: f64,
    estimates: &mut [&mut Estimate],
) -> Vec<usize> {
    let loo = leave_cluster_out(prep, ids, clusters);
    let mut undefined = Vec::new();
    for (p, e) in estimates.iter_mut().enumerate() {
        let vals: Vec<f64> = loo.iter().map(|row| row[p]).collect();
        let df = clusters as f64 - 2.0;
        match jackknife(e.r, &vals, confidence) {
            Some((t, pv, df, ci)) => {
                e.statistic = t;
                e.p = pv;
                e.p_kind = PValueKind::ClusterJackknife { df };
                e.fisher = Some(ci);
            }
            None => {
                e.statistic = f64::NAN;
                e.p = f64::NAN;
                e.p_kind = PValueKind::ClusterJackknife { df };
                e.fisher = None;
                undefined.push(p);
            }
        }
    }
    undefined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_without_rerank_the_rows_kept() {
        let x = [3.0, 1.0, 2.0, 2.0, 5.0];
        let order = [1, 2, 3, 0, 4];
        let r = ranks_without(&x, &order, &[false, true, false, false, false]);
        // Kept 3, 2, 2, 5: ranks 3, 1.5, 1.5, 4.
        assert!(r[1].is_nan());
        assert_eq!([r[0], r[2], r[3], r[4]], [3.0, 1.5, 1.5, 4.0]);
    }
}
