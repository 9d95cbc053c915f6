//! Kendall's τ-b in O(n log n), with the per-row concordance scores the linearised
//! bootstrap needs and the tie sums of the normal approximation.
//!
//! For rows i ≠ j let s_ij = sign(x_i − x_j) · sign(y_i − y_j). The concordance score of
//! row i is c_i = Σ_j s_ij, so S = n_c − n_d = ½ Σ_i c_i. With t_i the number of other rows
//! tied with row i in x (u_i in y), n₁ = ½ Σ t_i and n₂ = ½ Σ u_i are the tied pairs and
//! τ_b = S / √((n₀ − n₁)(n₀ − n₂)), n₀ = n(n − 1)/2.

/// Counts of one (x, y) pair of columns.
#[derive(Debug, Clone, PartialEq)]
pub struct KendallScores {
    /// c_i = Σ_j sign(x_i − x_j) sign(y_i − y_j) per row.
    pub concordance: Vec<i64>,
    /// S = n_c − n_d.
    pub s: i64,
    /// Pairs tied in x, n₁ = Σ_groups t(t − 1)/2.
    pub ties_x: i64,
    /// Pairs tied in y, n₂.
    pub ties_y: i64,
}

/// Tie sums of one column: Σ t(t−1)/2, Σ t(t−1)(t−2) and Σ t(t−1)(2t+5) over groups of
/// equal values of size t.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TieSums {
    pub pairs: f64,
    pub cubic: f64,
    pub var: f64,
}

/// Tie sums of `x` (no NaN).
pub fn tie_sums(x: &[f64]) -> TieSums {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let mut out = TieSums::default();
    let mut i = 0;
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j] == v[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        out.pairs += t * (t - 1.0) / 2.0;
        out.cubic += t * (t - 1.0) * (t - 2.0);
        out.var += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j;
    }
    out
}

/// For each row, the number of other rows with an equal value.
pub fn tie_counts(x: &[f64]) -> Vec<i64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut out = vec![0i64; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && x[idx[j]] == x[idx[i]] {
            j += 1;
        }
        for &k in &idx[i..j] {
            out[k] = (j - i - 1) as i64;
        }
        i = j;
    }
    out
}

/// Dense ranks 0..m of `y` (equal values share a rank) and m.
fn dense_ranks(y: &[f64]) -> (Vec<usize>, usize) {
    let mut idx: Vec<usize> = (0..y.len()).collect();
    idx.sort_by(|&a, &b| y[a].total_cmp(&y[b]));
    let mut out = vec![0usize; y.len()];
    let mut m = 0;
    for (p, &k) in idx.iter().enumerate() {
        if p > 0 && y[k] != y[idx[p - 1]] {
            m += 1;
        }
        out[k] = m;
    }
    (out, if y.is_empty() { 0 } else { m + 1 })
}

/// Fenwick tree of counts.
struct Fenwick(Vec<i64>);
impl Fenwick {
    fn add(&mut self, i: usize) {
        let mut i = i + 1;
        while i < self.0.len() {
            self.0[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    /// Count of inserted values with rank < i.
    fn below(&self, i: usize) -> i64 {
        let mut s = 0;
        let mut i = i;
        while i > 0 {
            s += self.0[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// Concordance scores and tie counts of (x, y) (equal lengths, no NaN), in O(n log n):
/// rows are visited in groups of equal x in increasing order; a Fenwick tree over the dense
/// ranks of y holds the rows of smaller x, and the rows of larger x follow from the totals.
pub fn kendall_scores(x: &[f64], y: &[f64]) -> KendallScores {
    let n = x.len();
    let (yd, m) = dense_ranks(y);
    // below_all[v] = rows with y rank < v.
    let mut below_all = vec![0i64; m + 1];
    for &v in &yd {
        below_all[v + 1] += 1;
    }
    for v in 0..m {
        below_all[v + 1] += below_all[v];
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(yd[a].cmp(&yd[b])));
    let mut tree = Fenwick(vec![0; m + 1]);
    let mut conc = vec![0i64; n];
    let (mut ties_x, mut inserted) = (0i64, 0i64);
    let mut g = 0;
    while g < n {
        let mut e = g + 1;
        while e < n && x[idx[e]] == x[idx[g]] {
            e += 1;
        }
        let group = &idx[g..e];
        ties_x += ((e - g) * (e - g - 1) / 2) as i64;
        // Within the group rows are sorted by y rank: counts below/above by position.
        let mut p = 0;
        while p < group.len() {
            let mut q = p + 1;
            while q < group.len() && yd[group[q]] == yd[group[p]] {
                q += 1;
            }
            let eq_less = p as i64;
            let eq_greater = (group.len() - q) as i64;
            for &i in &group[p..q] {
                let v = yd[i];
                let lo_less = tree.below(v);
                let lo_greater = inserted - tree.below(v + 1);
                let all_less = below_all[v];
                let all_greater = n as i64 - below_all[v + 1];
                let hi_less = all_less - lo_less - eq_less;
                let hi_greater = all_greater - lo_greater - eq_greater;
                conc[i] = (lo_less - lo_greater) + (hi_greater - hi_less);
            }
            p = q;
        }
        for &i in group {
            tree.add(yd[i]);
        }
        inserted += group.len() as i64;
        g = e;
    }
    let ties_y = (0..m)
        .map(|v| {
            let t = below_all[v + 1] - below_all[v];
            t * (t - 1) / 2
        })
        .sum();
    let s = conc.iter().sum::<i64>() / 2;
    KendallScores {
        concordance: conc,
        s,
        ties_x,
        ties_y,
    }
}

/// τ_b = S / √((n₀ − n₁)(n₀ − n₂)); NaN when a column is constant.
pub fn tau_b(k: &KendallScores, n: usize) -> f64 {
    let n0 = (n as f64) * (n as f64 - 1.0) / 2.0;
    k.s as f64 / ((n0 - k.ties_x as f64) * (n0 - k.ties_y as f64)).sqrt()
}

/// Variance of S under independence with the tie corrections (Kendall 1970, eq. 4.3;
/// `scipy.stats.kendalltau(method='asymptotic')`), m = n(n − 1):
/// Var S = [m(2n+5) − Σt(t−1)(2t+5) − Σu(u−1)(2u+5)]/18
///       + Σt(t−1)(t−2) Σu(u−1)(u−2) / (9m(n−2)) + 2 n₁ n₂ / m.
pub fn var_s(n: usize, tx: &TieSums, ty: &TieSums) -> f64 {
    let nf = n as f64;
    let m = nf * (nf - 1.0);
    (m * (2.0 * nf + 5.0) - tx.var - ty.var) / 18.0
        + tx.cubic * ty.cubic / (9.0 * m * (nf - 2.0))
        + 2.0 * tx.pairs * ty.pairs / m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(v: f64) -> i64 {
        (v > 0.0) as i64 - (v < 0.0) as i64
    }

    /// The O(n²) definition, written independently.
    fn brute(x: &[f64], y: &[f64]) -> KendallScores {
        let n = x.len();
        let mut conc = vec![0; n];
        let (mut tx, mut ty) = (0, 0);
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    conc[i] += sign(x[i] - x[j]) * sign(y[i] - y[j]);
                    if i < j {
                        tx += (x[i] == x[j]) as i64;
                        ty += (y[i] == y[j]) as i64;
                    }
                }
            }
        }
        let s = conc.iter().sum::<i64>() / 2;
        KendallScores {
            concordance: conc,
            s,
            ties_x: tx,
            ties_y: ty,
        }
    }

    #[test]
    fn fast_scores_equal_the_pairwise_definition_with_heavy_ties() {
        let mut state = 12345u64;
        for n in [1usize, 2, 3, 7, 50, 301] {
            for levels in [2u64, 5, 1000] {
                let mut next = || {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) % levels) as f64
                };
                let x: Vec<f64> = (0..n).map(|_| next()).collect();
                let y: Vec<f64> = (0..n).map(|_| next()).collect();
                assert_eq!(
                    kendall_scores(&x, &y),
                    brute(&x, &y),
                    "n={n} levels={levels}"
                );
            }
        }
    }

    #[test]
    fn tie_helpers() {
        let x = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0];
        assert_eq!(tie_counts(&x), vec![0, 1, 1, 2, 2, 2]);
        let t = tie_sums(&x);
        assert_eq!(t.pairs, 1.0 + 3.0);
        assert_eq!(t.cubic, 6.0);
        assert_eq!(t.var, 2.0 * 9.0 + 6.0 * 11.0);
    }
}
