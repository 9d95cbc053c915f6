//! Bootstrap of arbitrary per-unit columns: centre on the host in f64, resample-and-sum on
//! the engine in f32, and hand back uncentred f64 sums per replicate and stratum.
//!
//! With column centre c_j (the stratum mean of column j) and the engine's sum S_j of the
//! centred values over the Q_s drawn units, the resampled sum is Σ x_j = S_j + Q_s c_j.
//! Every analysis that is a function of per-stratum column sums (means, mean squares,
//! costs) is then host arithmetic on these.

use std::ops::Range;

use super::engine::{ResampleBackend, ResampleJob, MAX_K};
use super::table::table_from;
use crate::{Error, Result};

/// Per-stratum unit rows of K columns, centred for the engine.
#[derive(Debug, Clone)]
pub struct CenteredColumns {
    k: usize,
    /// Per stratum, the K column means.
    centres: Vec<Vec<f64>>,
    /// Per stratum, the exact f64 column sums.
    sums: Vec<Vec<f64>>,
    rows32: Vec<Vec<f32>>,
    units: Vec<usize>,
}

impl CenteredColumns {
    /// `strata[s][i]` is unit i's K values in stratum s.
    ///
    /// # Errors
    /// [`Error::Data`] for an empty stratum, rows of different lengths, or more than
    /// [`MAX_K`] columns.
    pub fn new(strata: &[Vec<Vec<f64>>]) -> Result<Self> {
        let k = strata
            .first()
            .and_then(|s| s.first())
            .map(Vec::len)
            .unwrap_or(0);
        if k == 0 || k > MAX_K {
            return Err(Error::Data(format!(
                "resampling needs 1 to {MAX_K} columns per unit, got {k}"
            )));
        }
        let mut centres = Vec::with_capacity(strata.len());
        let mut sums = Vec::with_capacity(strata.len());
        let mut rows32 = Vec::with_capacity(strata.len());
        for (s, rows) in strata.iter().enumerate() {
            if rows.is_empty() {
                return Err(Error::Data(format!("stratum {s} has no units to resample")));
            }
            if rows.iter().any(|r| r.len() != k) {
                return Err(Error::Data(format!(
                    "stratum {s}: every unit needs {k} columns"
                )));
            }
            let n = rows.len() as f64;
            let sum: Vec<f64> = (0..k)
                .map(|j| rows.iter().map(|r| r[j]).sum::<f64>())
                .collect();
            let c: Vec<f64> = sum.iter().map(|v| v / n).collect();
            rows32.push(table_from(
                rows.len() * k,
                rows.iter()
                    .flat_map(|r| r.iter().zip(&c).map(|(x, m)| (x - m) as f32)),
            ));
            centres.push(c);
            sums.push(sum);
        }
        Ok(CenteredColumns {
            k,
            centres,
            sums,
            rows32,
            units: strata.iter().map(Vec::len).collect(),
        })
    }

    /// Columns per unit.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Units per stratum.
    pub fn units(&self) -> &[usize] {
        &self.units
    }

    /// Exact column sums of the data, per stratum.
    pub fn exact_sums(&self) -> &[Vec<f64>] {
        &self.sums
    }

    /// The engine job for a replicate range.
    pub fn job(&self, seed: u64, replicates: Range<u32>) -> ResampleJob<'_> {
        ResampleJob {
            strata: self.rows32.iter().map(Vec::as_slice).collect(),
            k: self.k,
            seed,
            replicates,
        }
    }

    /// Resampled column sums, `[replicate][stratum][column]`, uncentred (S_j + Q_s c_j).
    ///
    /// # Errors
    /// Whatever the backend reports.
    pub fn resample(
        &self,
        backend: &dyn ResampleBackend,
        seed: u64,
        replicates: Range<u32>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Vec<Vec<f64>>>> {
        let raw = backend.resample_sums(&self.job(seed, replicates), progress)?;
        let s_n = self.units.len();
        Ok(raw
            .chunks_exact(s_n * self.k)
            .map(|rep| {
                (0..s_n)
                    .map(|s| {
                        (0..self.k)
                            .map(|j| {
                                rep[s * self.k + j] as f64
                                    + self.units[s] as f64 * self.centres[s][j]
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect())
    }
}
