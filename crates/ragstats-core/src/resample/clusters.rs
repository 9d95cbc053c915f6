//! The cluster draw: the one definition of how a bootstrap replicate draws whole clusters
//! of units (questions, items, rows) within strata, shared by the panel bootstrap
//! (`bootstrap`, `compare`), the MCQ scorer's cluster bootstrap and `correlate --cluster`.
//!
//! # Definition
//!
//! In stratum `s`, the units' clusters are numbered `0 .. G_s` **in order of first
//! appearance** among the stratum's units ([`ClusterDraw::new`]). Replicate `r` draws `G_s`
//! clusters with replacement: draw `i` (`0 ≤ i < G_s`) is cluster
//!
//! ```text
//! c_i = draw_index(seed, r, s, i, G_s)
//! ```
//!
//! the engine's own row draw ([`crate::rng::draw_index`], counter `[r, s, i / 4, retry]`,
//! word `i % 4`) with the clusters in place of the rows. Every unit of a drawn cluster comes
//! along, as often as its cluster is drawn. With every unit its own cluster this is the
//! stratified unit bootstrap, draw for draw.
//!
//! # On the engine
//!
//! A statistic that is a function of per-stratum column sums is resampled by handing the
//! engine one row per cluster, the sums of the cluster's units' columns
//! ([`ClusterDraw::cluster_rows`], added in f64 in unit order), so the engine's `q_s` is
//! `G_s`. The engine's CPU and GPU backends draw rows by the same Philox words and add them
//! in the same order ([`super::engine`]), so both draw the same clusters and return the same
//! bits: the GPU twin of the cluster draw is the engine's WGSL kernel itself, with no
//! cluster-specific shader to keep in step. A statistic that is not such a sum (a REML refit,
//! a re-ranked correlation) takes the replicate's draw counts per cluster
//! ([`ClusterDraw::draw_counts`], the same Philox words counted instead of summed) and
//! expands them to unit weights ([`ClusterDraw::unit_weights`]).

use std::collections::HashMap;
use std::hash::Hash;

use super::counts;
use crate::rng::blocks::Generator;
use crate::{Error, Result};

/// Dense cluster indices of `keys`, numbered in order of first appearance, and the distinct
/// keys in that order: `(ids, names)` with `names[ids[i]] == keys[i]`.
pub fn number_by_first_appearance<K: Eq + Hash + Clone>(
    keys: impl IntoIterator<Item = K>,
) -> (Vec<u32>, Vec<K>) {
    let mut seen: HashMap<K, u32> = HashMap::new();
    let mut names = Vec::new();
    let ids = keys
        .into_iter()
        .map(|k| {
            *seen.entry(k.clone()).or_insert_with(|| {
                names.push(k);
                (names.len() - 1) as u32
            })
        })
        .collect();
    (ids, names)
}

/// The clusters of one stratum's units: unit `i` is in cluster `of[i]`, clusters numbered by
/// first appearance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StratumClusters {
    of: Vec<u32>,
    sizes: Vec<u32>,
}

impl StratumClusters {
    /// Cluster of every unit, in unit order.
    pub fn of(&self) -> &[u32] {
        &self.of
    }

    /// Units per cluster, `M_c`.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// Number of clusters, `G_s`.
    pub fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Units, `Σ_c M_c`.
    pub fn units(&self) -> usize {
        self.of.len()
    }

    /// Per cluster, its units in unit order.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut m: Vec<Vec<usize>> = self
            .sizes
            .iter()
            .map(|&n| Vec::with_capacity(n as usize))
            .collect();
        for (i, &c) in self.of.iter().enumerate() {
            m[c as usize].push(i);
        }
        m
    }
}

/// Units nested in clusters within strata, and the cluster draw of the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDraw {
    strata: Vec<StratumClusters>,
}

impl ClusterDraw {
    /// The clusters of every stratum from each unit's cluster key (any key: a label, an
    /// index), numbered by first appearance within the stratum.
    ///
    /// # Errors
    /// [`Error::Data`] for a stratum without units, or with 2^32 or more clusters.
    pub fn new<K: Eq + Hash + Clone>(strata: &[Vec<K>]) -> Result<Self> {
        let mut out = Vec::with_capacity(strata.len());
        for (s, keys) in strata.iter().enumerate() {
            if keys.is_empty() {
                return Err(Error::Data(format!(
                    "cluster draw: stratum {s} has no units; every stratum needs at least one"
                )));
            }
            if keys.len() > u32::MAX as usize {
                return Err(Error::Data(format!(
                    "cluster draw: stratum {s} has {} units; at most 2^32 - 1 are supported",
                    keys.len()
                )));
            }
            let (of, names) = number_by_first_appearance(keys.iter().cloned());
            let mut sizes = vec![0u32; names.len()];
            for &c in &of {
                sizes[c as usize] += 1;
            }
            out.push(StratumClusters { of, sizes });
        }
        Ok(ClusterDraw { strata: out })
    }

    /// Every unit its own cluster: the stratified unit bootstrap, draw for draw.
    pub fn singletons(units: &[usize]) -> Self {
        ClusterDraw {
            strata: units
                .iter()
                .map(|&n| StratumClusters {
                    of: (0..n as u32).collect(),
                    sizes: vec![1; n],
                })
                .collect(),
        }
    }

    /// The strata's clusters.
    pub fn strata(&self) -> &[StratumClusters] {
        &self.strata
    }

    /// Clusters per stratum, `G_s`: the engine's rows per stratum.
    pub fn counts(&self) -> Vec<usize> {
        self.strata.iter().map(StratumClusters::count).collect()
    }

    /// The engine rows of stratum `s`: per cluster (in number order) the `k` sums
    /// `Σ_{i ∈ c} value(i, j)` over its units, added in f64 in unit order; `G_s × k` values,
    /// row-major.
    pub fn cluster_rows(
        &self,
        s: usize,
        k: usize,
        value: impl Fn(usize, usize) -> f64,
    ) -> Vec<f64> {
        let st = &self.strata[s];
        let mut rows = vec![0f64; st.count() * k];
        for (i, &c) in st.of.iter().enumerate() {
            let row = &mut rows[c as usize * k..(c as usize + 1) * k];
            for (j, v) in row.iter_mut().enumerate() {
                *v += value(i, j);
            }
        }
        rows
    }

    /// How often replicate `replicate` draws each cluster of stratum `stratum` under `seed`:
    /// `counts[c] = #{i < G_s : draw_index(seed, r, s, i, G_s) = c}` (every generator gives
    /// the same counts), `counts.len() = G_s`.
    pub fn draw_counts(
        &self,
        generator: Generator,
        seed: u64,
        replicate: u32,
        stratum: u32,
        counts: &mut Vec<u32>,
    ) {
        counts.resize(self.strata[stratum as usize].count(), 0);
        counts::draw_counts(generator, seed, replicate, stratum, counts);
    }

    /// Each unit of stratum `s` weighted by its cluster's draw count:
    /// `weights[i] = counts[of[i]]` (`weights.len()` = the stratum's units).
    pub fn unit_weights(&self, s: usize, counts: &[u32], weights: &mut Vec<u32>) {
        weights.clear();
        weights.extend(self.strata[s].of.iter().map(|&c| counts[c as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resample::engine::{ResampleBackend, ResampleJob};
    use crate::resample::CpuBackend;
    use crate::rng::draw_index;

    #[test]
    fn clusters_are_numbered_by_first_appearance() {
        let (ids, names) = number_by_first_appearance(["b", "a", "b", "c", "a"]);
        assert_eq!(ids, [0, 1, 0, 2, 1]);
        assert_eq!(names, ["b", "a", "c"]);
        let d = ClusterDraw::new(&[vec!["x", "y", "x"], vec!["z"]]).unwrap();
        assert_eq!(d.counts(), [2, 1]);
        assert_eq!(d.strata()[0].sizes(), [2, 1]);
        assert_eq!(d.strata()[0].members(), [vec![0, 2], vec![1]]);
        assert!(ClusterDraw::new::<u32>(&[vec![]]).is_err());
    }

    #[test]
    fn a_replicate_draws_the_clusters_draw_index_names() {
        // G = 1, 5 (4 ∤ G) and 37 clusters of unequal sizes; the counts are the draws of
        // draw_index over the clusters, and the unit weights repeat them over members.
        for g in [1u32, 5, 37] {
            let keys: Vec<u32> = (0..3 * g).map(|i| (i * 7 + i / 3) % g).collect();
            let d = ClusterDraw::new(std::slice::from_ref(&keys)).unwrap();
            assert_eq!(d.counts(), [g as usize]);
            let (seed, r) = (0x1234_u64, 9u32);
            let mut want = vec![0u32; g as usize];
            for i in 0..u64::from(g) {
                want[draw_index(seed, r, 0, i, g) as usize] += 1;
            }
            for gen in Generator::supported() {
                let mut c = Vec::new();
                d.draw_counts(gen, seed, r, 0, &mut c);
                assert_eq!(c, want, "{gen}, G = {g}");
                let mut w = Vec::new();
                d.unit_weights(0, &c, &mut w);
                let of = d.strata()[0].of();
                assert!(w.iter().zip(of).all(|(&w, &c)| w == want[c as usize]));
                assert_eq!(
                    w.iter().sum::<u32>(),
                    d.strata()[0]
                        .sizes()
                        .iter()
                        .zip(&want)
                        .map(|(m, k)| m * k)
                        .sum::<u32>()
                );
            }
        }
    }

    #[test]
    fn the_engine_sums_the_drawn_clusters_rows() {
        // Integer values: the engine's f32 sums of cluster rows equal Σ_c counts_c · row_c
        // exactly, so the engine drew the clusters the counts say, in each stratum.
        let keys = vec![
            (0..40u32).map(|i| i / 4).collect::<Vec<_>>(),
            (0..9u32).map(|i| [2, 0, 1][i as usize % 3]).collect(),
        ];
        let d = ClusterDraw::new(&keys).unwrap();
        let rows: Vec<Vec<f64>> = (0..2)
            .map(|s| d.cluster_rows(s, 2, |i, j| ((i * 5 + j) % 7) as f64 - 3.0))
            .collect();
        assert_eq!(rows[0].len(), 10 * 2);
        // Stratum 1: keys 2, 0, 1 repeating, so cluster 0 (key 2) holds units 0, 3, 6:
        // (0 - 3) + (15 % 7 - 3) + (30 % 7 - 3) = -3 - 2 - 1.
        assert_eq!(rows[1][0], -6.0);
        let r32: Vec<Vec<f32>> = rows
            .iter()
            .map(|r| r.iter().map(|&v| v as f32).collect())
            .collect();
        let job = ResampleJob {
            strata: r32.iter().map(Vec::as_slice).collect(),
            k: 2,
            seed: 5,
            replicates: 2..6,
        };
        let sums = CpuBackend::new().resample_sums(&job, &|_| {}).unwrap();
        for (i, r) in (2..6u32).enumerate() {
            for s in 0..2 {
                let mut c = Vec::new();
                d.draw_counts(Generator::Scalar, 5, r, s as u32, &mut c);
                for j in 0..2 {
                    let want: f64 = c
                        .iter()
                        .enumerate()
                        .map(|(g, &k)| f64::from(k) * rows[s][g * 2 + j])
                        .sum();
                    assert_eq!(f64::from(sums[(i * 2 + s) * 2 + j]), want, "r {r}, s {s}");
                }
            }
        }
    }

    #[test]
    fn singletons_are_the_unit_draw() {
        let d = ClusterDraw::singletons(&[3, 6]);
        assert_eq!(d.counts(), [3, 6]);
        assert_eq!(d.strata()[1].of(), [0, 1, 2, 3, 4, 5]);
    }
}
