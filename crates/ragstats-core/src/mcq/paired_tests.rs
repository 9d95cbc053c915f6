//! Tests of paired binary outcomes (EM of two systems on the same items): McNemar's exact
//! test on the discordant pairs, and, when items come in clusters from one source, the
//! cluster-adjusted test of Obuchowski (1998) with the exact sign test over clusters where
//! that test is not to be trusted.

use serde::Serialize;

/// McNemar's exact and mid-p tests: the one implementation, in [`crate::inference::binary`].
pub use crate::inference::binary::{mcnemar_exact, mcnemar_mid_p};

/// Fewer clusters than this and Obuchowski's χ²(1) reference is not trusted: its variance
/// is estimated from the clusters, and with 2 clusters 1 A-only against 6 B-only pairs gave
/// X² = 25, p = 6e-7. The exact sign test over clusters decides instead.
pub const MIN_CLUSTERS_CHI2: usize = 20;

/// The cluster-adjusted test of one McNemar row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterTest {
    /// The test whose p decides: `obuchowski`, or `cluster-sign` (the exact sign test over
    /// clusters) with fewer than [`MIN_CLUSTERS_CHI2`] clusters or where Obuchowski's
    /// variance estimate is 0.
    pub cluster_test: &'static str,
    /// Clusters with a pair in this row.
    pub clusters: usize,
    /// Obuchowski's X² (1 degree of freedom); absent where its variance is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chi2: Option<f64>,
    /// Obuchowski's p on χ²(1), whether or not it decides; absent with `chi2`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obuchowski_p: Option<f64>,
    /// The p-value of `cluster_test`: the one that decides (and that Holm and BH adjust).
    pub cluster_p: f64,
}

/// Obuchowski's (1998) test of two correlated proportions from clustered data. Per cluster
/// i of I: n_i pairs, x_i pairs right under A, y_i under B; N = Σ n_i, p̂_A = Σ x_i / N,
/// p̂_B = Σ y_i / N,
///
/// - var(p̂_A) = I / (I − 1) · Σ (x_i − n_i p̂_A)² / N², likewise for B,
/// - cov = I / (I − 1) · Σ (x_i − n_i p̂_A)(y_i − n_i p̂_B) / N²,
/// - X² = (p̂_A − p̂_B)² / (var_A + var_B − 2 cov), referred to χ²(1): p = erfc(√(X²/2)).
///
/// Where the denominator is 0 (one cluster, or every cluster has the same share of
/// A-only minus B-only pairs, e.g. every discordant pair one way) X² is undefined, and with
/// fewer than [`MIN_CLUSTERS_CHI2`] clusters its χ² reference is too optimistic; the test
/// that decides is then the exact sign test over clusters: clusters with more A-only than
/// B-only pairs against the reverse ([`mcnemar_exact`] on those counts; p = 1 when no
/// cluster leans). `cells` are (n_i, x_i, y_i).
pub fn obuchowski(cells: &[(f64, f64, f64)]) -> ClusterTest {
    let k = cells.len();
    let n: f64 = cells.iter().map(|c| c.0).sum();
    let (sx, sy): (f64, f64) = cells.iter().fold((0.0, 0.0), |a, c| (a.0 + c.1, a.1 + c.2));
    let (pa, pb) = (sx / n, sy / n);
    // var_A + var_B − 2 cov = I/(I−1) Σ (d_i − n_i (p̂_A − p̂_B))² / N², d_i = x_i − y_i;
    // written per proportion, as the paper has it.
    let (mut va, mut vb, mut cv) = (0.0, 0.0, 0.0);
    for &(ni, xi, yi) in cells {
        let (ea, eb) = (xi - ni * pa, yi - ni * pb);
        va += ea * ea;
        vb += eb * eb;
        cv += ea * eb;
    }
    let den = if k > 1 {
        (k as f64 / (k as f64 - 1.0)) * (va + vb - 2.0 * cv) / (n * n)
    } else {
        0.0
    };
    // Relative to the scale of the terms: an exact 0 can come out as 1e-17.
    let scale = (va + vb).max(f64::MIN_POSITIVE) / (n * n);
    let chi2 = (den > 1e-12 * scale && den > 0.0).then(|| (pa - pb).powi(2) / den);
    let obuchowski_p = chi2.map(|x| libm::erfc((x / 2.0).sqrt()));
    match obuchowski_p {
        Some(p) if k >= MIN_CLUSTERS_CHI2 => ClusterTest {
            cluster_test: "obuchowski",
            clusters: k,
            chi2,
            obuchowski_p,
            cluster_p: p,
        },
        _ => {
            let a_lean = cells.iter().filter(|c| c.1 > c.2).count() as u64;
            let b_lean = cells.iter().filter(|c| c.2 > c.1).count() as u64;
            ClusterTest {
                cluster_test: "cluster-sign",
                clusters: k,
                chi2,
                obuchowski_p,
                cluster_p: mcnemar_exact(a_lean, b_lean),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_exact_hand_values() {
        // b = 1, c = 6, n = 7: 2·(C(7,0) + C(7,1))/128 = 2·8/128 = 0.125.
        assert!((mcnemar_exact(1, 6) - 0.125).abs() < 1e-15);
        assert!((mcnemar_exact(6, 1) - 0.125).abs() < 1e-15);
        // b = 2, c = 8, n = 10: 2·(1 + 10 + 45)/1024 = 112/1024 = 0.109375.
        assert!((mcnemar_exact(2, 8) - 0.109375).abs() < 1e-15);
        // Balanced: capped at 1.
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b = 0, c = 5: 2/32.
        assert!((mcnemar_exact(0, 5) - 0.0625).abs() < 1e-15);
        // Large n stays finite: b = 400, c = 600.
        let p = mcnemar_exact(400, 600);
        assert!(p > 0.0 && p < 1e-9, "{p}");
    }

    /// Against tests/reference/mcq_delta_test.py (statsmodels 0.15.0
    /// `mcnemar([[5, b], [c, 7]], exact=True).pvalue`, equal to scipy 1.17.1's
    /// `binomtest(min(b, c), b + c, 0.5).pvalue` in every case; mid-p
    /// `2 * binom.cdf(k - 1, n, .5) + binom.pmf(k, n, .5)`).
    #[test]
    fn mcnemar_exact_and_mid_p_match_statsmodels_and_scipy() {
        let cases = [
            (1, 6, 0.125, 0.070_312_499_999_999_99),
            (2, 8, 0.109_375, 0.065_429_687_500_000_04),
            (0, 5, 0.0625, 0.031_249_999_999_999_976),
            (13, 30, 0.013_718_185_058_678_5, 0.009_559_878_856_634_906),
            (
                40,
                69,
                0.007_040_750_835_507_648_4,
                0.005_447_429_511_444_473,
            ),
            (300, 280, 0.430_176_897_984_850_7, 0.406_707_037_049_494_46),
            (7, 2, 0.179_687_5, 0.109_375_000_000_000_01),
            (3, 3, 1.0, 0.999_999_999_999_999_8),
        ];
        for (b, c, exact, mid) in cases {
            let (p, m) = (mcnemar_exact(b, c), mcnemar_mid_p(b, c));
            assert!(
                (p - exact).abs() < 1e-12 * exact,
                "({b}, {c}): {p} vs {exact}"
            );
            assert!(
                (m - mid).abs() < 1e-12 * mid,
                "({b}, {c}): mid {m} vs {mid}"
            );
            assert!(m < p || b == c, "({b}, {c})");
        }
        assert_eq!(mcnemar_mid_p(0, 0), 1.0);
        // By hand: b = 1, c = 6: 2·C(7,0)/128 + C(7,1)/128 = 2/128 + 7/128 = 9/128.
        assert!((mcnemar_mid_p(1, 6) - 9.0 / 128.0).abs() < 1e-15);
    }

    /// The hand-made case of tests/reference/mcq_cluster.py (numpy/scipy; the command and
    /// its output are there): 6 clusters of 1 to 4 pairs.
    #[test]
    fn obuchowski_matches_the_numpy_reference() {
        let cells = [
            (3.0, 3.0, 1.0),
            (2.0, 1.0, 0.0),
            (4.0, 2.0, 2.0),
            (1.0, 1.0, 0.0),
            (3.0, 1.0, 2.0),
            (2.0, 2.0, 0.0),
        ];
        let t = obuchowski(&cells);
        let (chi2, p) = (t.chi2.unwrap(), t.obuchowski_p.unwrap());
        assert!((chi2 - REF_CHI2).abs() < 1e-12 * REF_CHI2, "{chi2}");
        assert!((p - REF_P).abs() < 1e-12 * REF_P, "{p}");
        // 6 clusters are too few for the χ² reference: the sign test over clusters decides.
        // Clusters leaning A: c1, c2, c4, c6; B: c5; c3 ties. 2·(1 + 5)/32 = 0.375.
        assert_eq!((t.cluster_test, t.clusters), ("cluster-sign", 6));
        assert!((t.cluster_p - 0.375).abs() < 1e-15, "{t:?}");
        // The same cells 4 times over (24 clusters): Obuchowski decides. Reference (the
        // script's `x4` line): chi2 = 10.518292682926829, p = 0.0011819863616809355.
        let many: Vec<(f64, f64, f64)> = (0..4).flat_map(|_| cells).collect();
        let t = obuchowski(&many);
        assert_eq!((t.cluster_test, t.clusters), ("obuchowski", 24));
        assert_eq!(Some(t.cluster_p), t.obuchowski_p);
        assert!(
            (t.chi2.unwrap() - 10.518_292_682_926_829).abs() < 1e-11,
            "{t:?}"
        );
        assert!(
            (t.cluster_p - 0.001_181_986_361_680_935_5).abs() < 1e-15,
            "{t:?}"
        );
    }

    // `python tests/reference/mcq_cluster.py` (numpy 2.4.6, scipy 1.17.1):
    // chi2 = 2.2865853658536586, p = 0.13049673824162555.
    const REF_CHI2: f64 = 2.286_585_365_853_658_6;
    const REF_P: f64 = 0.130_496_738_241_625_55;

    #[test]
    fn a_zero_variance_falls_back_to_the_sign_test_over_clusters() {
        // Every pair B-only: every cluster has d_i = −n_i, the variance estimate is 0.
        let t = obuchowski(&[(2.0, 0.0, 2.0), (3.0, 0.0, 3.0), (1.0, 0.0, 1.0)]);
        assert_eq!(
            (t.cluster_test, t.chi2, t.obuchowski_p),
            ("cluster-sign", None, None)
        );
        // 3 clusters lean B, none A: 2 · 1/8.
        assert!((t.cluster_p - 0.25).abs() < 1e-15, "{t:?}");
        // One cluster: undefined variance, sign test on one cluster, p = 1.
        let t = obuchowski(&[(4.0, 1.0, 3.0)]);
        assert_eq!((t.cluster_test, t.cluster_p), ("cluster-sign", 1.0));
        // Nothing discordant: p = 1.
        let t = obuchowski(&[(2.0, 1.0, 1.0), (1.0, 0.0, 0.0)]);
        assert_eq!((t.cluster_test, t.cluster_p), ("cluster-sign", 1.0));
    }
}
