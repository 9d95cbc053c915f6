//! Average ranks (ties share the mean of the positions they occupy), as Spearman's ρ uses.

/// Ranks 1..=n of `x`, ties given the average of their positions (`scipy.stats.rankdata`
/// with `method='average'`). `x` must not contain NaN.
pub fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && x[idx[j]] == x[idx[i]] {
            j += 1;
        }
        // Positions i+1 ..= j (1-based) share their mean (i + 1 + j) / 2.
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        i = j;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_the_average_position() {
        // scipy.stats.rankdata([0, 2, 3, 2]) = [1, 2.5, 4, 2.5]
        assert_eq!(
            average_ranks(&[0.0, 2.0, 3.0, 2.0]),
            vec![1.0, 2.5, 4.0, 2.5]
        );
        assert_eq!(average_ranks(&[5.0, 5.0, 5.0]), vec![2.0, 2.0, 2.0]);
        assert_eq!(average_ranks(&[-1.0, 7.0, 3.0]), vec![1.0, 3.0, 2.0]);
        assert!(average_ranks(&[]).is_empty());
    }
}
