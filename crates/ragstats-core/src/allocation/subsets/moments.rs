//! Per-question moment columns of a stratum, and their sums: exact (every question once)
//! or resampled on the engine.
//!
//! Each question q of a stratum becomes one engine row of K = TR + TR(TR+1)/2 columns: the
//! centred cells ỹ_qc = y_qc − ȳ_c (ȳ_c the cell's mean over questions; every subset SE is
//! unchanged by this shift) followed by the products ỹ_qc ỹ_qc′ for c ≤ c′ (upper triangle,
//! row-major). The column sums of a bootstrap replicate's Q drawn rows are exactly the
//! moments Y and Z of [`super::eval`] with w_q = the draw counts.
//!
//! The engine takes at most [`MAX_K`] columns, so the columns go in groups of 16, one engine
//! call each (T = R = 8: 2,144 columns, 134 calls). The engine's draws depend only on
//! (seed, replicate, stratum, draw index), never on the columns, so every group sees the
//! same resample. Each column is centred again on its mean over questions (kept in f64)
//! before it is sent as f32, and the f64 total is S + Q·centre. The backends return
//! bit-identical f32 sums, so everything computed from them is identical too.

use std::ops::Range;

use super::eval::{Layout, Moments};
use crate::resample::engine::{ResampleBackend, ResampleJob, MAX_K};
use crate::Result;

/// The moment columns of every stratum, ready for the engine.
#[derive(Debug, Clone)]
pub struct MomentColumns {
    layout: Layout,
    /// Questions per stratum.
    q: Vec<usize>,
    /// Per stratum, the exact moments (w_q = 1).
    exact: Vec<Moments>,
    /// Per stratum, the K column centres.
    centres: Vec<Vec<f64>>,
    /// Per group, per stratum, Q × (group width) centred f32 rows.
    groups: Vec<Vec<Vec<f32>>>,
}

/// Columns per question row: TR + TR(TR+1)/2.
pub fn n_columns(layout: Layout) -> usize {
    let c = layout.t * layout.r;
    c + c * (c + 1) / 2
}

/// The upper-triangle pairs (c, c′), c ≤ c′, in column order.
fn pairs(cells: usize) -> Vec<(usize, usize)> {
    (0..cells)
        .flat_map(|c| (c..cells).map(move |c2| (c, c2)))
        .collect()
}

impl MomentColumns {
    /// Builds the columns of each stratum from its outcomes `y[(q·T + t)·R + r]`
    /// (`strata[s]` holds Q_s·T·R values).
    pub fn new(layout: Layout, strata: &[&[f64]]) -> Self {
        let cells = layout.t * layout.r;
        let k_all = n_columns(layout);
        let pr = pairs(cells);
        let mut q_all = Vec::new();
        let mut exact = Vec::new();
        let mut centres = Vec::new();
        let mut tables = Vec::new();
        for y in strata {
            let q = y.len() / cells;
            let mean: Vec<f64> = (0..cells)
                .map(|c| (0..q).map(|i| y[i * cells + c]).sum::<f64>() / q as f64)
                .collect();
            let mut table = vec![0f64; q * k_all];
            for i in 0..q {
                let row = &mut table[i * k_all..(i + 1) * k_all];
                let yc: Vec<f64> = (0..cells).map(|c| y[i * cells + c] - mean[c]).collect();
                row[..cells].copy_from_slice(&yc);
                for (j, &(c, c2)) in pr.iter().enumerate() {
                    row[cells + j] = yc[c] * yc[c2];
                }
            }
            let mut sums = vec![0f64; k_all];
            for row in table.chunks_exact(k_all) {
                for (s, v) in sums.iter_mut().zip(row) {
                    *s += v;
                }
            }
            exact.push(moments_from_totals(layout, q as f64, &sums, &pr));
            centres.push(sums.iter().map(|s| s / q as f64).collect::<Vec<f64>>());
            q_all.push(q);
            tables.push(table);
        }
        let groups = (0..k_all.div_ceil(MAX_K))
            .map(|g| {
                let lo = g * MAX_K;
                let hi = (lo + MAX_K).min(k_all);
                tables
                    .iter()
                    .zip(&centres)
                    .map(|(table, centre)| {
                        table
                            .chunks_exact(k_all)
                            .flat_map(|row| (lo..hi).map(|j| (row[j] - centre[j]) as f32))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        MomentColumns {
            layout,
            q: q_all,
            exact,
            centres,
            groups,
        }
    }

    /// Engine calls per replicate range (groups of at most 16 columns).
    pub fn engine_calls(&self) -> usize {
        self.groups.len()
    }

    /// Exact moments (every question once), per stratum.
    pub fn exact(&self) -> &[Moments] {
        &self.exact
    }

    /// Resampled moments of `replicates`, `[replicate][stratum]`. `progress` receives the
    /// replicates finished summed over the engine calls (total: replicates × calls).
    ///
    /// # Errors
    /// Whatever the engine reports.
    pub fn resample(
        &self,
        engine: &dyn ResampleBackend,
        seed: u64,
        replicates: Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Vec<Moments>>> {
        let n_reps = (replicates.end - replicates.start) as usize;
        let n_strata = self.q.len();
        let k_all = n_columns(self.layout);
        // totals[(rep · S + s) · K + j]
        let mut totals = vec![0f64; n_reps * n_strata * k_all];
        for (g, group) in self.groups.iter().enumerate() {
            let lo = g * MAX_K;
            let k = (k_all - lo).min(MAX_K);
            let job = ResampleJob {
                strata: group.iter().map(Vec::as_slice).collect(),
                k,
                seed,
                replicates: replicates.clone(),
            };
            let base = (g * n_reps) as u64;
            let sums = engine.resample_sums(&job, &|d| progress(base + d))?;
            for (pair, chunk) in sums.chunks_exact(k).enumerate() {
                let s = pair % n_strata;
                let out = &mut totals[pair * k_all + lo..pair * k_all + lo + k];
                for (j, (o, &v)) in out.iter_mut().zip(chunk).enumerate() {
                    *o = v as f64 + self.q[s] as f64 * self.centres[s][lo + j];
                }
            }
        }
        let pr = pairs(self.layout.t * self.layout.r);
        Ok(totals
            .chunks_exact(n_strata * k_all)
            .map(|rep| {
                rep.chunks_exact(k_all)
                    .enumerate()
                    .map(|(s, t)| moments_from_totals(self.layout, self.q[s] as f64, t, &pr))
                    .collect()
            })
            .collect())
    }
}

/// Moments from column totals: Y = the first TR, Z filled symmetrically from the triangle.
fn moments_from_totals(layout: Layout, q: f64, totals: &[f64], pr: &[(usize, usize)]) -> Moments {
    let cells = layout.t * layout.r;
    let mut z = vec![0f64; cells * cells];
    for (j, &(c, c2)) in pr.iter().enumerate() {
        z[c * cells + c2] = totals[cells + j];
        z[c2 * cells + c] = totals[cells + j];
    }
    Moments {
        q,
        y: totals[..cells].to_vec(),
        z,
    }
}
