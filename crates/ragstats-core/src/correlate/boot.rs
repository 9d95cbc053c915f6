//! Bootstrap of every (x, y) pair's product-moment correlation (Pearson, point-biserial)
//! on the resample engine. (Spearman and Kendall re-rank every resample, which no column
//! sum expresses: [`super::rank_boot`].)
//!
//! Each resampling unit (a row, or with clusters a whole cluster) becomes one engine row of
//! *moment columns*, so that one replicate's column sums determine every pair's statistic:
//! with x̃, ỹ the standardised columns (x − x̄)/s_x, per x column Σx̃ and Σx̃², per y column
//! Σỹ and Σỹ², per pair Σx̃ỹ, and with clusters the unit's row count n_c. From the resampled
//! totals, r* = (Sxy − Sx Sy/n*) / √((Sxx − Sx²/n*)(Syy − Sy²/n*)).
//!
//! Every column is centred on its mean over the units (kept in f64 on the host) before it
//! goes to the engine as f32, so the f32 sums do not cancel; the total is then
//! S + U·centre. The columns are sent in groups of at most [`MAX_K`]: the engine's draws
//! depend only on (seed, replicate, stratum, draw index), never on which columns a call
//! carries, so every group sees exactly the same resamples and the statistics of all pairs
//! come from one bootstrap sample per replicate.

use std::ops::Range;

use crate::resample::clusters::ClusterDraw;
use crate::resample::engine::{ResampleBackend, ResampleJob, MAX_K};
use crate::resample::table::table_from;
use crate::Result;

/// One moment column of a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    Count,
    X(usize),
    Xsq(usize),
    Y(usize),
    Ysq(usize),
    /// Pair index (x * n_y + y).
    Xy(usize),
}

/// The inputs of a pair bootstrap.
pub struct PairBootstrap<'a> {
    pub xs: &'a [Vec<f64>],
    pub ys: &'a [Vec<f64>],
    /// Cluster index of every row, and the number of clusters.
    pub clusters: Option<(&'a [u32], usize)>,
}

/// Standardised copy (x − x̄)/s with s the population SD (1 if constant, which the
/// analysis rejects before this point).
fn standardise(x: &[f64]) -> Vec<f64> {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let s = (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
    let s = if s > 0.0 { s } else { 1.0 };
    x.iter().map(|v| (v - m) / s).collect()
}

impl PairBootstrap<'_> {
    fn n_pairs(&self) -> usize {
        self.xs.len() * self.ys.len()
    }

    fn columns(&self) -> Vec<Col> {
        let mut cols = Vec::new();
        if self.clusters.is_some() {
            cols.push(Col::Count);
        }
        for c in 0..self.xs.len() {
            cols.extend([Col::X(c), Col::Xsq(c)]);
        }
        for d in 0..self.ys.len() {
            cols.extend([Col::Y(d), Col::Ysq(d)]);
        }
        cols.extend((0..self.n_pairs()).map(Col::Xy));
        cols
    }

    /// Engine calls needed per run (column groups of at most 16).
    pub fn engine_calls(&self) -> usize {
        self.columns().len().div_ceil(MAX_K)
    }

    /// Replicate statistics for `replicates`: `out[(r − start) * pairs + pair]`, pair index
    /// x * n_y + y. A replicate whose resample has a constant column gives NaN.
    /// `progress` receives the replicates completed, summed over the engine calls.
    ///
    /// # Errors
    /// Engine errors (shape, GPU failures).
    pub fn run(
        &self,
        engine: &dyn ResampleBackend,
        seed: u64,
        replicates: Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f64>> {
        let n = self.xs[0].len();
        let cols = self.columns();
        let n_reps = (replicates.end - replicates.start) as usize;
        let units = self.clusters.map_or(n, |(_, c)| c);
        // The clusters (numbered by first appearance, as the table already numbers them).
        let draw = match self.clusters {
            Some((ids, _)) => Some(ClusterDraw::new(&[ids.to_vec()])?),
            None => None,
        };
        // The columns, standardised once.
        let xs: Vec<Vec<f64>> = self.xs.iter().map(|c| standardise(c)).collect();
        let ys: Vec<Vec<f64>> = self.ys.iter().map(|c| standardise(c)).collect();
        let ny = self.ys.len();
        let value = |col: Col, i: usize| -> f64 {
            match col {
                Col::Count => 1.0,
                Col::X(c) => xs[c][i],
                Col::Xsq(c) => xs[c][i] * xs[c][i],
                Col::Y(d) => ys[d][i],
                Col::Ysq(d) => ys[d][i] * ys[d][i],
                Col::Xy(p) => xs[p / ny][i] * ys[p % ny][i],
            }
        };
        // totals[r * K + k]: the resampled total of column k in replicate r, in f64.
        let k_all = cols.len();
        let mut totals = vec![0f64; n_reps * k_all];
        let groups: Vec<&[Col]> = cols.chunks(MAX_K).collect();
        let n_groups = groups.len() as u64;
        for (g, group) in groups.iter().enumerate() {
            let k = group.len();
            let table = match &draw {
                None => {
                    let mut table = vec![0f64; units * k];
                    for i in 0..n {
                        for (j, &c) in group.iter().enumerate() {
                            table[i * k + j] = value(c, i);
                        }
                    }
                    table
                }
                // One engine row per cluster: the shared cluster draw's rows.
                Some(d) => d.cluster_rows(0, k, |i, j| value(group[j], i)),
            };
            let mut centre = vec![0f64; k];
            for row in table.chunks_exact(k) {
                for (c, v) in centre.iter_mut().zip(row) {
                    *c += v;
                }
            }
            for c in &mut centre {
                *c /= units as f64;
            }
            let table32 = table_from(
                units * k,
                table
                    .chunks_exact(k)
                    .flat_map(|row| row.iter().zip(&centre).map(|(v, c)| (v - c) as f32)),
            );
            drop(table);
            let job = ResampleJob {
                strata: vec![&table32],
                k,
                seed,
                replicates: replicates.clone(),
            };
            let base = g as u64 * n_reps as u64;
            let sums = engine.resample_sums(&job, &|d| progress(base + d))?;
            let first = g * MAX_K;
            for r in 0..n_reps {
                for j in 0..k {
                    totals[r * k_all + first + j] =
                        sums[r * k + j] as f64 + units as f64 * centre[j];
                }
            }
        }
        let _ = n_groups;
        Ok(self.statistics(&cols, &totals, n_reps, n))
    }

    /// Per replicate and pair, the statistic from the column totals.
    fn statistics(&self, cols: &[Col], totals: &[f64], n_reps: usize, n: usize) -> Vec<f64> {
        let k_all = cols.len();
        let pos = |want: Col| cols.iter().position(|&c| c == want).expect("column");
        let ny = self.ys.len();
        let n_pairs = self.n_pairs();
        let mut out = Vec::with_capacity(n_reps * n_pairs);
        let count = self.clusters.map(|_| pos(Col::Count));
        let nf = n as f64;
        let idx: Vec<[usize; 5]> = (0..n_pairs)
            .map(|p| {
                let (x, y) = (p / ny, p % ny);
                [
                    pos(Col::X(x)),
                    pos(Col::Xsq(x)),
                    pos(Col::Y(y)),
                    pos(Col::Ysq(y)),
                    pos(Col::Xy(p)),
                ]
            })
            .collect();
        for r in 0..n_reps {
            let t = &totals[r * k_all..(r + 1) * k_all];
            let n_star = count.map_or(nf, |c| t[c]);
            for ix in &idx {
                let (sx, sxx, sy, syy, sxy) = (t[ix[0]], t[ix[1]], t[ix[2]], t[ix[3]], t[ix[4]]);
                let vx = sxx - sx * sx / n_star;
                let vy = syy - sy * sy / n_star;
                // A resample that repeats one value has zero variance; f32 sums leave
                // a residue around 1e-7 n, so anything below 1e-6 n is degenerate.
                out.push(if vx <= 1e-6 * n_star || vy <= 1e-6 * n_star {
                    f64::NAN
                } else {
                    ((sxy - sx * sy / n_star) / (vx * vy).sqrt()).clamp(-1.0, 1.0)
                });
            }
        }
        out
    }
}
