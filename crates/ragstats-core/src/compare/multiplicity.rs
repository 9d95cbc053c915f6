//! Multiple-comparison adjustments of a family of p-values: Holm's step-down (family-wise
//! error rate) and Benjamini–Hochberg's step-up (false discovery rate).

/// Holm's step-down adjusted p-values, in the order of `p`.
///
/// With p sorted ascending, p_(1) ≤ … ≤ p_(m): p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)).
/// Rejecting every p̃ ≤ α controls the family-wise error rate at α under any dependence.
/// Ties keep their input order (the adjusted values of tied p-values are equal anyway).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (j, &i) in order.iter().enumerate() {
        running = running.max(((m - j) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the order of `p`.
///
/// With p sorted ascending: q_(i) = min_{j ≥ i} min(1, m p_(j) / j). Rejecting every
/// q ≤ α controls the false discovery rate at α for independent or positively dependent
/// tests (Benjamini & Hochberg 1995; Benjamini & Yekutieli 2001).
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 1.0;
    for (j, &i) in order.iter().enumerate().rev() {
        running = running.min((m as f64 * p[i] / (j + 1) as f64).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: statsmodels 0.14 on the same p-values,
    /// `python3 -c "from statsmodels.stats.multitest import multipletests as m;
    /// p=[0.01,0.04,0.03,0.005,0.2,0.04]; print(m(p,method='holm')[1]);
    /// print(m(p,method='fdr_bh')[1])"` printed
    /// holm   [0.05 0.12 0.12 0.03 0.2 0.12] and
    /// fdr_bh [0.03 0.048 0.048 0.03 0.2 0.048]
    /// (recorded in tests/reference/multiplicity.py).
    #[test]
    fn holm_and_bh_equal_statsmodels() {
        let p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04];
        let h = holm(&p);
        let want_h = [0.05, 0.12, 0.12, 0.03, 0.2, 0.12];
        let q = benjamini_hochberg(&p);
        let want_q = [0.03, 0.048, 0.048, 0.03, 0.2, 0.048];
        for i in 0..p.len() {
            assert!((h[i] - want_h[i]).abs() < 1e-15, "holm {i}: {}", h[i]);
            assert!((q[i] - want_q[i]).abs() < 1e-15, "bh {i}: {}", q[i]);
        }
    }

    #[test]
    fn adjustments_are_capped_at_one_and_keep_one_test_as_it_is() {
        assert_eq!(holm(&[0.3]), [0.3]);
        assert_eq!(benjamini_hochberg(&[0.3]), [0.3]);
        assert_eq!(holm(&[0.6, 0.7]), [1.0, 1.0]);
        assert_eq!(benjamini_hochberg(&[0.6, 0.7]), [0.7, 0.7]);
        assert!(holm(&[]).is_empty());
    }
}
