//! Ranks of k systems from their simultaneous pairwise intervals (Mogstad, Romano, Shaikh
//! & Wilhelm, "Inference for Ranks", 2024), and the share of bootstrap replicates in which
//! each is best.

/// Rank confidence intervals `[lower, upper]` (1 = best, higher scores rank first) from
/// simultaneous intervals of every difference θ_b − θ_a.
///
/// `diff(j, i)` is the simultaneous interval of θ_j − θ_i. System i's rank is at least
/// 1 + #{j : interval of θ_j − θ_i lies above 0} (systems certainly better) and at most
/// k − #{j : it lies below 0} (systems certainly worse). When the intervals hold jointly
/// with probability 1 − α, all k rank intervals hold jointly with at least that probability.
pub fn rank_intervals(k: usize, diff: impl Fn(usize, usize) -> [f64; 2]) -> Vec<[usize; 2]> {
    (0..k)
        .map(|i| {
            let (mut better, mut worse) = (0, 0);
            for j in (0..k).filter(|&j| j != i) {
                let [lo, hi] = diff(j, i);
                if lo > 0.0 {
                    better += 1;
                } else if hi < 0.0 {
                    worse += 1;
                }
            }
            [1 + better, k - worse]
        })
        .collect()
}

/// The share of replicates in which each system has the highest estimate, a tie for the
/// highest splitting the replicate equally among the tied systems (so the shares sum to 1):
/// best_share_a = (1/B) Σ_b 1[a ties for the max of replicate b] / #ties_b.
/// `replicates` holds one row of k estimates per replicate.
///
/// It is not the probability that the system is best: with equal true means the observed
/// leader keeps a share near its bootstrap luck (about 0.55 on average for five arms), not
/// 1/k (docs/METHODS.md, "Best share, not P(best)").
pub fn best_share(k: usize, replicates: impl Iterator<Item = impl AsRef<[f64]>>) -> Vec<f64> {
    let mut wins = vec![0.0; k];
    let mut n = 0usize;
    for row in replicates {
        let row = row.as_ref();
        let best = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let tied = row.iter().filter(|&&v| v == best).count() as f64;
        for (w, &v) in wins.iter_mut().zip(row) {
            if v == best {
                *w += 1.0 / tied;
            }
        }
        n += 1;
    }
    wins.iter().map(|w| w / n as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three systems: 2 is certainly better than 0 and 1; 0 and 1 cannot be told apart.
    #[test]
    fn ranks_count_the_systems_certainly_better_and_worse() {
        let mean = [0.30, 0.32, 0.50];
        let diff = |j: usize, i: usize| {
            let d: f64 = mean[j] - mean[i];
            [d - 0.05, d + 0.05]
        };
        assert_eq!(rank_intervals(3, diff), [[2, 3], [2, 3], [1, 1]]);
    }

    #[test]
    fn ties_split_a_replicate_and_the_shares_sum_to_one() {
        let reps = [
            vec![1.0, 2.0, 2.0],
            vec![3.0, 1.0, 0.0],
            vec![0.5, 0.5, 0.5],
        ];
        let p = best_share(3, reps.iter());
        let third = 1.0 / 3.0;
        let want = [
            (1.0 + third) / 3.0,
            (0.5 + third) / 3.0,
            (0.5 + third) / 3.0,
        ];
        for i in 0..3 {
            assert!((p[i] - want[i]).abs() < 1e-15);
        }
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }
}
