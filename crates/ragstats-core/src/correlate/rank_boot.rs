//! The exact bootstrap of the rank correlations (Spearman's ρ, Kendall's τ-b): every
//! replicate re-ranks its own resample.
//!
//! A rank is not a sum of per-row columns, so these replicates do not come from the
//! engine's column sums. Each replicate's draw counts k_u of the units (rows, or whole
//! clusters) are recovered from the engine's own Philox stream
//! ([`crate::resample::counts::draw_counts`], stratum 0: the draws every engine, CPU or GPU,
//! makes for a one-stratum job), so the resamples are exactly those the CPU and GPU engines
//! sum for Pearson's r, and row i enters the replicate w_i = k_{unit(i)} times. Then, with
//! n* = Σ w_i:
//!
//! * Spearman: the average ranks of the resample, where a tie group (equal values) of
//!   total weight M after C smaller copies has rank C + (M + 1)/2, and
//!   ρ* = Σ w (a − μ)(b − μ) / √(Σ w (a − μ)² Σ w (b − μ)²), μ = (n* + 1)/2: Pearson's r of the
//!   resample's ranks, as if its rows were written out and ranked
//!   (`scipy.stats.spearmanr` of the resample).
//! * Kendall: S* = Σ_{i,j: x_i < x_j} w_i w_j sign(y_j − y_i) (copies of one row tie in both
//!   columns and add nothing), ties n₁* = Σ_groups C(M, 2) in x and n₂* in y, n₀* = C(n*, 2),
//!   τ* = S* / √((n₀* − n₁*)(n₀* − n₂*)), in O(n log n) with a weighted Fenwick tree
//!   (`scipy.stats.kendalltau` of the resample).
//!
//! A resample whose x or y is constant gives NaN (left out of the summaries). The
//! arithmetic is exact (integer weights, half-integer ranks in f64), so the replicates do
//! not depend on the order of the work, and the CPU and GPU runs of `correlate` agree bit
//! for bit (the rank bootstrap runs on the CPU under either backend).

use rayon::prelude::*;

use super::estimate::Method;
use super::Prepared;
use crate::resample::clusters::ClusterDraw;
use crate::resample::counts::draw_counts;
use crate::resample::Resampling;
use crate::rng::blocks::Generator;
use crate::Result;

/// The rows of a column grouped by equal value, groups in increasing order.
fn tie_groups(x: &[f64]) -> Vec<Vec<u32>> {
    let mut idx: Vec<u32> = (0..x.len() as u32).collect();
    idx.sort_by(|&a, &b| x[a as usize].total_cmp(&x[b as usize]));
    let mut out: Vec<Vec<u32>> = Vec::new();
    for &i in &idx {
        match out.last_mut() {
            Some(g) if x[g[0] as usize] == x[i as usize] => g.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

/// Average ranks of the resample with row weights `w` (module docs), written into `ranks`
/// (rows with weight 0 get whatever their group's rank would be; they carry no weight).
fn weighted_ranks(groups: &[Vec<u32>], w: &[u32], ranks: &mut [f64]) {
    let mut before = 0u64;
    for g in groups {
        let m: u64 = g.iter().map(|&i| u64::from(w[i as usize])).sum();
        let r = before as f64 + (m as f64 + 1.0) / 2.0;
        for &i in g {
            ranks[i as usize] = r;
        }
        before += m;
    }
}

/// Pearson's r of ranks `a`, `b` with weights `w` and total weight `n`, whose weighted mean
/// is (n + 1)/2 exactly; NaN when either is constant on the resample.
fn weighted_rank_r(a: &[f64], b: &[f64], w: &[u32], n: f64) -> f64 {
    let mu = (n + 1.0) / 2.0;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for ((&x, &y), &k) in a.iter().zip(b).zip(w) {
        if k == 0 {
            continue;
        }
        let (dx, dy, k) = (x - mu, y - mu, f64::from(k));
        sab += k * dx * dy;
        saa += k * dx * dx;
        sbb += k * dy * dy;
    }
    if saa <= 0.0 || sbb <= 0.0 {
        return f64::NAN;
    }
    (sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0)
}

/// Σ_groups C(M, 2) of the weights `w` over tie groups.
fn tied_pairs(groups: &[Vec<u32>], w: &[u32]) -> f64 {
    groups
        .iter()
        .map(|g| {
            let m: u64 = g.iter().map(|&i| u64::from(w[i as usize])).sum();
            (m * m.saturating_sub(1) / 2) as f64
        })
        .sum()
}

/// Dense ranks 0..m of `y` (equal values share one).
fn dense(y: &[f64]) -> (Vec<usize>, usize) {
    let groups = tie_groups(y);
    let mut out = vec![0usize; y.len()];
    for (r, g) in groups.iter().enumerate() {
        for &i in g {
            out[i as usize] = r;
        }
    }
    (out, groups.len())
}

/// S* = Σ_{x_i < x_j} w_i w_j sign(y_j − y_i) of the resample (module docs): the x groups
/// in increasing order, each row against the weight of earlier rows below and above its y
/// in a Fenwick tree over the dense ranks `yd` (m of them).
fn weighted_s(xgroups: &[Vec<u32>], yd: &[usize], m: usize, w: &[u32], tree: &mut Vec<i64>) -> i64 {
    tree.clear();
    tree.resize(m + 1, 0);
    let prefix = |tree: &[i64], i: usize| -> i64 {
        // Weight of inserted rows with dense rank < i.
        let (mut s, mut i) = (0, i);
        while i > 0 {
            s += tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    };
    let (mut s, mut inserted) = (0i64, 0i64);
    for g in xgroups {
        for &i in g {
            let k = i64::from(w[i as usize]);
            if k == 0 {
                continue;
            }
            let v = yd[i as usize];
            let less = prefix(tree, v);
            let greater = inserted - prefix(tree, v + 1);
            s += k * (less - greater);
        }
        for &i in g {
            let k = i64::from(w[i as usize]);
            if k == 0 {
                continue;
            }
            let mut j = yd[i as usize] + 1;
            while j <= m {
                tree[j] += k;
                j += j & j.wrapping_neg();
            }
            inserted += k;
        }
    }
    s
}

/// Replicates `0..resampling.replicates` of every pair's Spearman ρ or Kendall τ-b,
/// re-ranked in each resample (module docs): `out[r * pairs + pair]`, pair x * n_y + y.
/// Units are the rows, or with `clusters` (cluster of every row, count) whole clusters.
/// `progress` receives the replicates done.
///
/// # Errors
/// [`crate::Error::Usage`] for a bad `STATS_CPU_RNG`.
///
/// # Panics
/// When `prep.method` is not a rank method.
pub fn rank_bootstrap(
    prep: &Prepared,
    clusters: Option<(&[u32], usize)>,
    resampling: &Resampling,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<f64>> {
    assert!(matches!(prep.method, Method::Spearman | Method::Kendall));
    let generator = Generator::from_env()?;
    let n = prep.n();
    let units = clusters.map_or(n, |c| c.1);
    let draw = match clusters {
        Some((ids, _)) => Some(ClusterDraw::new(&[ids.to_vec()])?),
        None => None,
    };
    let np = prep.n_pairs();
    let xg: Vec<Vec<Vec<u32>>> = prep.xs.iter().map(|c| tie_groups(c)).collect();
    let yg: Vec<Vec<Vec<u32>>> = prep.ys.iter().map(|c| tie_groups(c)).collect();
    let yd: Vec<(Vec<usize>, usize)> = prep.ys.iter().map(|c| dense(c)).collect();
    let reps = resampling.replicates as usize;
    let mut out = vec![0f64; reps * np];
    let seed = resampling.seed;
    let spearman = prep.method == Method::Spearman;
    let per_batch = 256usize;
    let mut done = 0usize;
    for batch in out.chunks_mut(per_batch * np.max(1)) {
        let first = done;
        batch.par_chunks_mut(np.max(1)).enumerate().for_each_init(
            || {
                (
                    vec![0u32; units],
                    vec![0u32; n],
                    vec![vec![0f64; n]; prep.xs.len()],
                    vec![vec![0f64; n]; prep.ys.len()],
                    Vec::new(),
                )
            },
            |(counts, w, rx, ry, tree), (j, row)| {
                let r = (first + j) as u32;
                match &draw {
                    None => draw_counts(generator, seed, r, 0, w),
                    // The shared cluster draw: counts per cluster, repeated over its rows.
                    Some(d) => {
                        d.draw_counts(generator, seed, r, 0, counts);
                        d.unit_weights(0, counts, w);
                    }
                }
                let total: u64 = w.iter().map(|&k| u64::from(k)).sum();
                let nf = total as f64;
                let ny = prep.ys.len();
                if spearman {
                    for (g, rk) in xg.iter().zip(rx.iter_mut()) {
                        weighted_ranks(g, w, rk);
                    }
                    for (g, rk) in yg.iter().zip(ry.iter_mut()) {
                        weighted_ranks(g, w, rk);
                    }
                    for (p, v) in row.iter_mut().enumerate() {
                        *v = weighted_rank_r(&rx[p / ny], &ry[p % ny], w, nf);
                    }
                } else {
                    let n0 = nf * (nf - 1.0) / 2.0;
                    let tx: Vec<f64> = xg.iter().map(|g| tied_pairs(g, w)).collect();
                    let ty: Vec<f64> = yg.iter().map(|g| tied_pairs(g, w)).collect();
                    for (p, v) in row.iter_mut().enumerate() {
                        let (a, b) = (p / ny, p % ny);
                        let (dx, dy) = (n0 - tx[a], n0 - ty[b]);
                        *v = if dx <= 0.0 || dy <= 0.0 {
                            f64::NAN
                        } else {
                            let s = weighted_s(&xg[a], &yd[b].0, yd[b].1, w, tree);
                            (s as f64 / (dx * dy).sqrt()).clamp(-1.0, 1.0)
                        };
                    }
                }
            },
        );
        done += batch.len() / np.max(1);
        progress(done as u64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::estimate::pearson;
    use crate::correlate::kendall::{kendall_scores, tau_b};
    use crate::correlate::rank::average_ranks;

    /// Writes the resample out row by row.
    fn expand(x: &[f64], w: &[u32]) -> Vec<f64> {
        x.iter()
            .zip(w)
            .flat_map(|(&v, &k)| std::iter::repeat_n(v, k as usize))
            .collect()
    }

    /// The weighted ranks, ρ and τ-b equal those of the written-out resample (ranked from
    /// scratch with `average_ranks`, τ-b from the O(n log n) scores checked against the
    /// pairwise definition in `kendall`), on data with heavy ties and rows drawn 0 times.
    #[test]
    fn weighted_statistics_equal_those_of_the_written_out_resample() {
        let mut state = 99u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        for trial in 0..200 {
            let n = 2 + (trial % 17);
            let x: Vec<f64> = (0..n).map(|_| next(5) as f64).collect();
            let y: Vec<f64> = (0..n).map(|_| next(1 + trial as u64 % 7) as f64).collect();
            let w: Vec<u32> = (0..n).map(|_| next(3) as u32).collect();
            let total: u32 = w.iter().sum();
            let (xe, ye) = (expand(&x, &w), expand(&y, &w));
            let (gx, gy) = (tie_groups(&x), tie_groups(&y));
            let (mut rx, mut ry) = (vec![0.0; n], vec![0.0; n]);
            weighted_ranks(&gx, &w, &mut rx);
            weighted_ranks(&gy, &w, &mut ry);
            if total >= 2 {
                let want = pearson(&average_ranks(&xe), &average_ranks(&ye));
                let got = weighted_rank_r(&rx, &ry, &w, f64::from(total));
                assert!(
                    (want.is_nan() && got.is_nan()) || (want - got).abs() < 1e-12,
                    "trial {trial}: rho {got} vs {want}"
                );
                let k = kendall_scores(&xe, &ye);
                let (yd, m) = dense(&y);
                let s = weighted_s(&gx, &yd, m, &w, &mut Vec::new());
                assert_eq!(s, k.s, "trial {trial}: S");
                assert_eq!(tied_pairs(&gx, &w), k.ties_x as f64);
                assert_eq!(tied_pairs(&gy, &w), k.ties_y as f64);
                let nf = f64::from(total);
                let n0 = nf * (nf - 1.0) / 2.0;
                let t = s as f64 / ((n0 - k.ties_x as f64) * (n0 - k.ties_y as f64)).sqrt();
                let want = tau_b(&k, total as usize);
                assert!(
                    (want.is_nan() && t.is_nan()) || (want - t).abs() < 1e-12,
                    "trial {trial}: tau {t} vs {want}"
                );
            }
        }
    }
}
