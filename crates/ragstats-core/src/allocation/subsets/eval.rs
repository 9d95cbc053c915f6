//! Evaluation of every (trajectory subset, read subset) pair from a stratum's cell moments.
//!
//! Cells are c = (t, r), index `t * R + r`. For question weights w_q (1 for the observed
//! panel, draw counts in a bootstrap replicate) the moments are
//! Y_c = Σ_q w_q y_qc and Z_cc′ = Σ_q w_q y_qc y_qc′. For a subset S = (S_T, S_R) with
//! n = |S_T|·|S_R| cells, the question means m_q(S) = (1/n) Σ_{c∈S} y_qc give
//!
//! ```text
//! A = Σ_q w_q m_q(S)   = (1/n)  Σ_{c∈S} Y_c
//! B = Σ_q w_q m_q(S)²  = (1/n²) Σ_{c,c′∈S} Z_cc′
//! s²(S) = (B − A²/Q) / (Q − 1),   SE²_d(S) = max(s², 0) / Q        (Q = Σ_q w_q)
//! ```
//!
//! which is the measured SE² = s²(question means)/Q of the sub-panel that keeps only the
//! trajectories S_T and reads S_R. All subsets are evaluated incrementally: masks are
//! built by adding their lowest set bit b to the mask `rest` without it, so
//! Σ_{S_R} over reads costs O(T²R) per read mask and Σ over trajectories O(T) per pair.
//! Everything here is f64 and single-threaded per call, so a result depends only on the
//! moments given (the same on every backend).

/// The subset layout of a T × R design: masks, subset indices and configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Trajectories per question T.
    pub t: usize,
    /// Reads per trajectory R.
    pub r: usize,
}

impl Layout {
    /// Non-empty read masks, 2^R − 1.
    pub fn read_masks(&self) -> usize {
        (1 << self.r) - 1
    }

    /// Number of subset pairs (2^T − 1)(2^R − 1).
    pub fn n_subsets(&self) -> usize {
        ((1 << self.t) - 1) * self.read_masks()
    }

    /// Subset index of trajectory mask `mt` and read mask `mr` (both non-zero):
    /// `(mt − 1)(2^R − 1) + (mr − 1)`, i.e. trajectory mask major, both in increasing order.
    pub fn index(&self, mt: usize, mr: usize) -> usize {
        (mt - 1) * self.read_masks() + (mr - 1)
    }

    /// The masks `(mt, mr)` of subset `index`.
    pub fn masks(&self, index: usize) -> (usize, usize) {
        (index / self.read_masks() + 1, index % self.read_masks() + 1)
    }

    /// Number of configurations (t′, r′): T·R.
    pub fn n_configs(&self) -> usize {
        self.t * self.r
    }

    /// Configuration index of sizes (t′, r′), both ≥ 1: `(t′ − 1) R + (r′ − 1)`.
    pub fn config(&self, tp: usize, rp: usize) -> usize {
        (tp - 1) * self.r + (rp - 1)
    }

    /// Configuration index of every subset, in subset order.
    pub fn config_of_subsets(&self) -> Vec<usize> {
        (0..self.n_subsets())
            .map(|i| {
                let (mt, mr) = self.masks(i);
                self.config(mt.count_ones() as usize, mr.count_ones() as usize)
            })
            .collect()
    }

    /// Subsets per configuration: C(T, t′)·C(R, r′), in configuration order.
    pub fn config_sizes(&self) -> Vec<usize> {
        let mut n = vec![0; self.n_configs()];
        for c in self.config_of_subsets() {
            n[c] += 1;
        }
        n
    }
}

/// The moments of one stratum: `q` = Σ w_q, `y` (TR values) and `z` (TR × TR, full and
/// symmetric, row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    pub q: f64,
    pub y: Vec<f64>,
    pub z: Vec<f64>,
}

/// Reusable scratch space of [`add_se2`].
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    yr: Vec<f64>,
    a: Vec<f64>,
    sy: Vec<f64>,
    sz: Vec<f64>,
}

/// Adds SE²_d(S) (module docs) of every subset S to `out[index(S)]`.
///
/// Order of operations (fixed, so results are reproducible): for read masks in increasing
/// order, with b the lowest read of `mr` and `rest = mr − {b}`,
/// `yr[mr][t] = yr[rest][t] + Y[t,b]` and
/// `a[mr][t][t′] = a[rest][t][t′] + Z[(t,b),(t′,b)] + Σ_{r′∈rest, increasing} (Z[(t,b),(t′,r′)] + Z[(t,r′),(t′,b)])`;
/// then for each read mask and trajectory masks in increasing order, with b the lowest
/// trajectory, `sy[mt] = sy[rest] + yr[mr][b]`,
/// `sz[mt] = sz[rest] + a[mr][b][b] + 2 Σ_{t′∈rest, increasing} a[mr][b][t′]`.
///
/// # Panics
/// If `m` or `out` do not match `layout` (a programming error; callers build both).
pub fn add_se2(layout: Layout, m: &Moments, scratch: &mut Scratch, out: &mut [f64]) {
    let (tn, rn) = (layout.t, layout.r);
    let cells = tn * rn;
    assert_eq!(m.y.len(), cells);
    assert_eq!(m.z.len(), cells * cells);
    assert_eq!(out.len(), layout.n_subsets());
    let (nt, nr) = (1usize << tn, 1usize << rn);
    let z = |t: usize, r: usize, t2: usize, r2: usize| m.z[(t * rn + r) * cells + t2 * rn + r2];
    scratch.yr.clear();
    scratch.yr.resize(nr * tn, 0.0);
    scratch.a.clear();
    scratch.a.resize(nr * tn * tn, 0.0);
    for mr in 1..nr {
        let b = mr.trailing_zeros() as usize;
        let rest = mr & (mr - 1);
        for t in 0..tn {
            scratch.yr[mr * tn + t] = scratch.yr[rest * tn + t] + m.y[t * rn + b];
        }
        for t in 0..tn {
            for t2 in 0..tn {
                let mut v = scratch.a[(rest * tn + t) * tn + t2] + z(t, b, t2, b);
                let mut bits = rest;
                while bits != 0 {
                    let r2 = bits.trailing_zeros() as usize;
                    v += z(t, b, t2, r2) + z(t, r2, t2, b);
                    bits &= bits - 1;
                }
                scratch.a[(mr * tn + t) * tn + t2] = v;
            }
        }
    }
    scratch.sy.clear();
    scratch.sy.resize(nt, 0.0);
    scratch.sz.clear();
    scratch.sz.resize(nt, 0.0);
    let q = m.q;
    for mr in 1..nr {
        let n_r = mr.count_ones() as f64;
        let yr = &scratch.yr[mr * tn..(mr + 1) * tn];
        let a = &scratch.a[mr * tn * tn..(mr + 1) * tn * tn];
        for mt in 1..nt {
            let b = mt.trailing_zeros() as usize;
            let rest = mt & (mt - 1);
            let mut cross = 0.0;
            let mut bits = rest;
            while bits != 0 {
                cross += a[b * tn + bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
            let sy = scratch.sy[rest] + yr[b];
            let sz = scratch.sz[rest] + a[b * tn + b] + 2.0 * cross;
            scratch.sy[mt] = sy;
            scratch.sz[mt] = sz;
            let n = mt.count_ones() as f64 * n_r;
            let sum_m = sy / n;
            let sum_m2 = sz / (n * n);
            let s2 = (sum_m2 - sum_m * sum_m / q) / (q - 1.0);
            out[layout.index(mt, mr)] += s2.max(0.0) / q;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_counts_subsets_and_configurations() {
        let l = Layout { t: 3, r: 2 };
        assert_eq!(l.n_subsets(), 21);
        // C(3,t')·C(2,r'): t'=1: 3·2, 3·1; t'=2: 3·2, 3·1; t'=3: 1·2, 1·1.
        assert_eq!(l.config_sizes(), vec![6, 3, 6, 3, 2, 1]);
        for i in 0..l.n_subsets() {
            let (mt, mr) = l.masks(i);
            assert_eq!(l.index(mt, mr), i);
        }
        assert_eq!(Layout { t: 8, r: 8 }.n_subsets(), 65_025);
    }
}
