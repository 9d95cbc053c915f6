//! Critical values of the maximum of correlated |t| statistics: the c with
//! P(maxᵢ |Zᵢ| / S ≤ c) = confidence, Z ~ N(0, R) and S = √(χ²_ν / ν) independent of Z
//! (the multivariate t of Hothorn, Bretz & Westfall 2008, `multcomp`'s single-step
//! simultaneous intervals).
//!
//! Z is drawn (a fixed number of draws from a fixed key, so c depends only on R, ν and the
//! level: the same on every run and every engine), and the law of S is integrated exactly:
//! P(M/S ≤ c) = ∫₀¹ F_M(c · s(u)) du with s(u) = √(F⁻¹_χ²ν(u) / ν), by the midpoint rule
//! over u. With ν = ∞ it is the `confidence` quantile of M. With R the correlations of the
//! differences of k independent equal-variance arms it is Tukey's studentized range
//! quantile / √2 (all pairs) or Dunnett's (against one arm).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use nalgebra::{DMatrix, SymmetricEigen};
use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::t::t_quantile;
use crate::rng::domain::MAX_T_KEY;
use crate::rng::keyed::KeyedStream;

/// Draws of Z: the quantile's Monte Carlo SE is about 0.005 at c ≈ 2 to 3.
pub const DRAWS: usize = 100_000;

/// Nodes of the midpoint rule over the law of S.
const NODES: usize = 2_000;

/// Above this many degrees of freedom S is taken as 1 (t and z agree to 1e-6 there).
const DF_NORMAL: f64 = 1e7;

/// A member of the family: the statistic Σⱼ wⱼ Xⱼ, a linear combination of the columns X.
pub type Combination = Vec<(usize, f64)>;

/// The `confidence` quantile of maxᵢ |cᵢ·X| / sd(cᵢ·X) / S over the combinations `family`
/// of X ~ N(0, `cov`), S = √(χ²_df / df) (S = 1 for `df` infinite).
///
/// Combinations with zero variance are left out (their statistic is undefined). With one
/// combination left the answer is t's quantile, computed exactly. `None` when none is left.
pub fn max_abs_t_quantile(
    cov: &[Vec<f64>],
    family: &[Combination],
    df: f64,
    confidence: f64,
) -> Option<f64> {
    MaxAbs::draw(cov, family).map(|m| m.quantile(df, confidence))
}

/// The law of M = maxᵢ |cᵢ·X| / sd(cᵢ·X) for X ~ N(0, cov), as [`DRAWS`] sorted draws, from
/// which the quantile of M / S on any degrees of freedom follows ([`MaxAbs::quantile`]).
#[derive(Debug, Clone)]
pub struct MaxAbs {
    /// Sorted draws of M; empty when one member is left (M is then |Z|, exactly).
    maxima: Vec<f64>,
}

/// A member w₁X_i + w₂X_j with its SD: (i, w₁, j, w₂, sd).
type TwoTerms = (usize, f64, usize, f64, f64);

/// Draws per stream: the draws are made in chunks, each from its own keyed stream, in
/// parallel and concatenated in chunk order (the same draws on any number of threads).
const CHUNK: usize = 10_000;

/// The statistic M = maxᵢ |cᵢ·X| / sd(cᵢ·X) of [`MaxAbs::draw`], set up for X = root·g from
/// n standard normals g.
struct Correlated<'a> {
    /// Columns of X (n).
    n: usize,
    /// The members with positive variance, each with its SD.
    members: Vec<(&'a Combination, f64)>,
    /// A square root of cov by columns (`root[j * n + i]` = root_ij); empty when cov is
    /// diagonal (then X_i = g_i·sd_i).
    root: Vec<f64>,
    sd: Vec<f64>,
    /// Every member as w₁X_i + w₂X_j, when all have two terms (compare's pairs).
    two: Option<Vec<TwoTerms>>,
}

/// What [`Members::of`] finds among the members of a family.
enum Members<'a> {
    /// No member with positive variance.
    None,
    /// One: M is |Z| exactly.
    One,
    /// Several: M is drawn.
    Several(Correlated<'a>),
}

impl<'a> Members<'a> {
    /// The members of `family` with positive variance under `cov`, and with several their
    /// statistic.
    fn of(cov: &[Vec<f64>], family: &'a [Combination]) -> Members<'a> {
        let n = cov.len();
        let var = |c: &Combination| -> f64 {
            c.iter()
                .flat_map(|&(i, wi)| c.iter().map(move |&(j, wj)| wi * wj * cov[i][j]))
                .sum()
        };
        let scale = (0..n).map(|i| cov[i][i].abs()).fold(0.0, f64::max);
        let members: Vec<(&Combination, f64)> = family
            .iter()
            .map(|c| (c, var(c)))
            .filter(|&(_, v)| v > 1e-12 * scale && v.is_finite())
            .map(|(c, v)| (c, v.sqrt()))
            .collect();
        match members.len() {
            0 => return Members::None,
            1 => return Members::One,
            _ => {}
        }
        let diagonal = (0..n).all(|i| (0..n).all(|j| i == j || cov[i][j] == 0.0));
        // X = V √Λ g with g standard normal: a square root of cov that tolerates the rank
        // deficiency of differences (k arms give k(k−1)/2 pairs of rank k − 1). A diagonal
        // cov (independent systems) is its own square root.
        let root: Vec<f64> = if diagonal {
            Vec::new()
        } else {
            let eig = SymmetricEigen::new(DMatrix::from_fn(n, n, |i, j| cov[i][j]));
            (0..n * n)
                .map(|at| {
                    let (j, i) = (at / n, at % n);
                    eig.eigenvectors[(i, j)] * eig.eigenvalues[j].max(0.0).sqrt()
                })
                .collect()
        };
        let sd: Vec<f64> = (0..n).map(|i| cov[i][i].max(0.0).sqrt()).collect();
        // Pairwise differences (every member w₁X_i + w₂X_j, compare's pairs): the same sum,
        // w₁x_i + w₂x_j, from flat arrays instead of a walk over each member's terms.
        let two: Option<Vec<TwoTerms>> = members
            .iter()
            .map(|(c, sd)| match c[..] {
                [(i, wi), (j, wj)] => Some((i, wi, j, wj, *sd)),
                _ => None,
            })
            .collect();
        Members::Several(Correlated {
            n,
            members,
            root,
            sd,
            two,
        })
    }
}

impl Correlated<'_> {
    /// M for the normals `g`, with `x` (length n) as scratch for X.
    fn max(&self, g: &[f64], x: &mut [f64]) -> f64 {
        if self.root.is_empty() {
            for ((xi, gi), si) in x.iter_mut().zip(g).zip(&self.sd) {
                *xi = gi * si;
            }
        } else {
            multiply(&self.root, g, x);
        }
        match &self.two {
            Some(two) => two
                .iter()
                .map(|&(i, wi, j, wj, sd)| ((wi * x[i] + wj * x[j]) / sd).abs())
                .fold(0.0, f64::max),
            None => self
                .members
                .iter()
                .map(|(c, sd)| (c.iter().map(|&(j, w)| w * x[j]).sum::<f64>() / sd).abs())
                .fold(0.0, f64::max),
        }
    }
}

/// x = root·g for `root` stored by columns (`root[j * n + i]` = root_ij): each x_i is
/// Σⱼ root_ij·g_j summed in j order from −0.0, as `Iterator::sum` sums a row, so the same
/// bits; with j outer the n sums advance side by side, which the compiler vectorises
/// (summing row by row is a chain of dependent additions per row).
fn multiply(root: &[f64], g: &[f64], x: &mut [f64]) {
    x.fill(-0.0);
    for (column, &gj) in root.chunks_exact(x.len()).zip(g) {
        for (xi, &r) in x.iter_mut().zip(column) {
            *xi += r * gj;
        }
    }
}

/// The draws' statistic, as [`MaxAbs::from_draws`] takes it: M of the normals g, with
/// scratch x of length n.
type Statistic<'a> = &'a (dyn Fn(&[f64], &mut [f64]) -> f64 + Sync);

impl MaxAbs {
    /// Draws M for the members of `family` with positive variance; `None` when none has.
    pub fn draw(cov: &[Vec<f64>], family: &[Combination]) -> Option<MaxAbs> {
        match Members::of(cov, family) {
            Members::None => None,
            Members::One => Some(MaxAbs { maxima: Vec::new() }),
            Members::Several(c) => {
                Some(MaxAbs::from_draws(c.n, c.members.len(), |g, x| c.max(g, x)))
            }
        }
    }

    /// [`DRAWS`] draws of a statistic `m(g, x)` of g, `n` standard normals (x: scratch of
    /// length `n`), sorted. The normals come in chunks of [`CHUNK`], each chunk from its own
    /// keyed stream tagged (n, `members`, chunk), drawn in parallel and concatenated in chunk
    /// order, so the draws depend on neither the thread count nor the statistic.
    fn from_draws(n: usize, members: usize, m: impl Fn(&[f64], &mut [f64]) -> f64 + Sync) -> Self {
        let [law] = MaxAbs::from_same_draws(n, members, [&m]);
        law
    }

    /// [`MaxAbs::from_draws`] of several statistics at once: each draw of the normals (the
    /// same as `from_draws` makes for this n and `members`) gives every statistic its value,
    /// so statistics that share a tag share the cost of drawing the normals.
    fn from_same_draws<const S: usize>(
        n: usize,
        members: usize,
        statistics: [Statistic<'_>; S],
    ) -> [Self; S] {
        use rayon::prelude::*;
        let tag = [n as u64, members as u64];
        let chunks: Vec<Vec<[f64; S]>> = (0..DRAWS.div_ceil(CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let mut rng = KeyedStream::new(MAX_T_KEY, &[tag[0], tag[1], chunk as u64]);
                let (mut g, mut x) = (vec![0.0; n], vec![0.0; n]);
                (0..CHUNK.min(DRAWS - chunk * CHUNK))
                    .map(|_| {
                        g.iter_mut().for_each(|v| *v = rng.normal());
                        statistics.map(|m| m(&g, &mut x))
                    })
                    .collect()
            })
            .collect();
        std::array::from_fn(|i| {
            let mut maxima: Vec<f64> = chunks.iter().flatten().map(|d| d[i]).collect();
            maxima.sort_by(f64::total_cmp);
            MaxAbs { maxima }
        })
    }

    /// The `confidence` quantile of M / S, S = √(χ²_df / df) independent of M:
    /// P(M/S ≤ c) = ∫₀¹ F_M(c · s(u)) du, s(u) = √(F⁻¹_χ²(u) / df), by the midpoint rule
    /// over u and bisection on c; the quantile of M itself for `df` infinite. With one
    /// member, t's quantile exactly.
    pub fn quantile(&self, df: f64, confidence: f64) -> f64 {
        if self.maxima.is_empty() {
            return t_quantile(1.0 - (1.0 - confidence) / 2.0, df);
        }
        let maxima = &self.maxima;
        if df >= DF_NORMAL {
            return crate::resample::summary::quantile_sorted(maxima, confidence);
        }
        let Some(s) = nodes(df) else {
            return f64::NAN;
        };
        let level = |c: f64| -> f64 {
            s.iter()
                .map(|&si| maxima.partition_point(|&v| v <= c * si) as f64)
                .sum::<f64>()
                / (maxima.len() * NODES) as f64
        };
        // Bisection on the monotone level(c); the answer is above the smallest maximum.
        let (mut lo, mut hi) = (0.0, maxima[maxima.len() - 1] * 2.0 / s[0].max(1e-3));
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if level(mid) < confidence {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }
}

/// The midpoint rule's nodes s(u) = √(F⁻¹_χ²(u) / df) for `df`, `None` for a df χ² does
/// not take. The last df's nodes are kept: a family's critical value integrates its two
/// laws on the same df in turn, and the 2,000 χ² quantiles cost as much as the integration.
fn nodes(df: f64) -> Option<Arc<[f64]>> {
    static LAST: Mutex<Option<(u64, Arc<[f64]>)>> = Mutex::new(None);
    if let Some((bits, s)) = &*LAST.lock().expect("no panic while held") {
        if *bits == df.to_bits() {
            return Some(s.clone());
        }
    }
    let chi = ChiSquared::new(df).ok()?;
    // Each node on its own (an iterative χ² quantile), in parallel: the same values.
    use rayon::prelude::*;
    let s: Vec<f64> = (0..NODES)
        .into_par_iter()
        .map(|i| (chi.inverse_cdf((i as f64 + 0.5) / NODES as f64) / df).sqrt())
        .collect();
    let s: Arc<[f64]> = s.into();
    *LAST.lock().expect("no panic while held") = Some((df.to_bits(), s.clone()));
    Some(s)
}

/// The family's critical value when its systems are independent with equal variances:
/// Tukey's studentized range quantile / √2 for every pair of `k` arms, Dunnett's for the
/// pairs with one arm. `pairs` are (a, b) arm indices; the statistic is X_b − X_a.
pub fn independent_arms(
    k: usize,
    pairs: &[(usize, usize)],
    df: f64,
    confidence: f64,
) -> Option<f64> {
    independent_arms_law(k, pairs).map(|m| m.quantile(df, confidence))
}

/// The laws of independent arms drawn so far in this process, by (k, pairs).
type Laws = Mutex<HashMap<(usize, Vec<(usize, usize)>), Option<Arc<MaxAbs>>>>;

/// [`independent_arms_law`]'s laws, drawn once per process.
fn drawn_laws() -> &'static Laws {
    static LAWS: OnceLock<Laws> = OnceLock::new();
    LAWS.get_or_init(Default::default)
}

/// The law of the maximum |X_b − X_a| / √2 over `pairs` of `k` independent standard
/// normal systems ([`independent_arms`] on any df). It depends on `k` and `pairs` alone, so
/// each is drawn once per process (a coverage study runs thousands of comparisons of the
/// same family).
pub fn independent_arms_law(k: usize, pairs: &[(usize, usize)]) -> Option<Arc<MaxAbs>> {
    let key = (k, pairs.to_vec());
    if let Some(law) = drawn_laws().lock().expect("no panic while held").get(&key) {
        return law.clone();
    }
    let law = draw_independent(k, pairs).map(Arc::new);
    drawn_laws()
        .lock()
        .expect("no panic while held")
        .insert(key, law.clone());
    law
}

/// A family's two laws: [`MaxAbs::draw`] of `family` under `cov` and
/// [`independent_arms_law`] of `pairs` among `k` arms, the same as each gives alone. When
/// the second is not drawn yet and both draw their normals under the same tag (k columns
/// and all k(k − 1)/2 pairs, each with positive variance: compare's all-pairs family whose
/// pairs are their arms' differences), one pass over the normals gives both: the normals
/// (a logarithm per draw) were half of the two laws' time.
pub fn family_laws(
    cov: &[Vec<f64>],
    family: &[Combination],
    k: usize,
    pairs: &[(usize, usize)],
) -> (Option<MaxAbs>, Option<Arc<MaxAbs>>) {
    let key = (k, pairs.to_vec());
    let drawn = drawn_laws()
        .lock()
        .expect("no panic while held")
        .get(&key)
        .cloned();
    let shared = drawn.is_none() && k > 2 && pairs == all_pairs(k).as_slice();
    match Members::of(cov, family) {
        Members::Several(c) if shared && c.n == k && c.members.len() == pairs.len() => {
            let [correlated, independent] = MaxAbs::from_same_draws(
                k,
                pairs.len(),
                [&|g, x| c.max(g, x), &|g, _| range_statistic(g)],
            );
            let independent = Some(Arc::new(independent));
            drawn_laws()
                .lock()
                .expect("no panic while held")
                .insert(key, independent.clone());
            (Some(correlated), independent)
        }
        _ => (
            MaxAbs::draw(cov, family),
            drawn.unwrap_or_else(|| independent_arms_law(k, pairs)),
        ),
    }
}

/// [`independent_arms_law`] drawn.
fn draw_independent(k: usize, pairs: &[(usize, usize)]) -> Option<MaxAbs> {
    if k > 2 && pairs == all_pairs(k).as_slice() {
        return Some(MaxAbs::from_draws(k, pairs.len(), |g, _| {
            range_statistic(g)
        }));
    }
    draw_generic_independent(k, pairs)
}

/// The largest |g_b − g_a| / √2 over all pairs of arms of independent unit-variance arms
/// `g`: [`MaxAbs::draw`] takes the largest |x_b − x_a| / √2 over the k(k − 1)/2 pairs, and
/// rounding is monotone, so that is (max g − min g) / √2 to the bit: O(k) per draw instead
/// of O(k²).
fn range_statistic(g: &[f64]) -> f64 {
    let (lo, hi) = g
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    ((hi - lo) / 2.0f64.sqrt()).abs()
}

/// The law of max |x_b − x_a| over `pairs` of `k` independent unit-variance arms, drawn the
/// general way ([`MaxAbs::draw`] with the identity covariance).
fn draw_generic_independent(k: usize, pairs: &[(usize, usize)]) -> Option<MaxAbs> {
    let cov: Vec<Vec<f64>> = (0..k)
        .map(|i| (0..k).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    let family: Vec<Combination> = pairs
        .iter()
        .map(|&(a, b)| vec![(b, 1.0), (a, -1.0)])
        .collect();
    MaxAbs::draw(&cov, &family)
}

/// Every pair (a, b), a < b, of `k` arms.
pub fn all_pairs(k: usize) -> Vec<(usize, usize)> {
    (0..k)
        .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: scipy 1.17.1, `python3 -c "from scipy import stats;
    /// print([stats.studentized_range.ppf(0.95, k, df) / 2**.5 for k, df in ((5, 118),
    /// (5, 10), (3, 19), (10, 40))])"` printed [2.7704109432864956, 3.2910821404120085,
    /// 2.5404500912815995, 3.3478061657696077] (tests/reference/inference.py). Monte Carlo error
    /// with 100 000 draws is about 0.005; the tolerance 0.02 is four of those.
    /// The range shortcut of [`draw_independent`] gives the generic draw's law to the bit.
    #[test]
    fn the_range_of_independent_arms_is_the_generic_law() {
        for k in [3, 5, 20] {
            let pairs = all_pairs(k);
            let fast = draw_independent(k, &pairs).unwrap();
            let generic = draw_generic_independent(k, &pairs).unwrap();
            assert_eq!(fast.maxima.len(), DRAWS);
            assert!(
                fast.maxima
                    .iter()
                    .zip(&generic.maxima)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "k = {k}"
            );
        }
    }

    /// The flat two-term path of [`MaxAbs::draw`] gives the law of the walk over each
    /// member's terms to the bit: the same pairs with a third term of weight 0 (which adds
    /// ±0 to each sum and leaves its variance) take the general path.
    #[test]
    fn two_term_members_are_the_general_law() {
        let k = 6;
        let cov: Vec<Vec<f64>> = (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| if i == j { 1.0 + i as f64 / 3.0 } else { 0.4 })
                    .collect()
            })
            .collect();
        let pairs = all_pairs(k);
        let two: Vec<Combination> = pairs
            .iter()
            .map(|&(a, b)| vec![(b, 1.0), (a, -1.0)])
            .collect();
        let three: Vec<Combination> = pairs
            .iter()
            .map(|&(a, b)| vec![(b, 1.0), (a, -1.0), ((a + 1) % k, 0.0)])
            .collect();
        let (fast, general) = (
            MaxAbs::draw(&cov, &two).unwrap(),
            MaxAbs::draw(&cov, &three).unwrap(),
        );
        assert!(fast
            .maxima
            .iter()
            .zip(&general.maxima)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// X = root·g by columns is the row-by-row `Iterator::sum` to the bit, zeros and
    /// signed zeros included.
    #[test]
    fn the_product_by_columns_is_the_sum_of_each_row() {
        let n = 7;
        let mut rng = KeyedStream::new(3, &[]);
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| match (i + j) % 5 {
                        0 => 0.0,
                        1 => -0.0,
                        _ => rng.normal(),
                    })
                    .collect()
            })
            .collect();
        let by_columns: Vec<f64> = (0..n * n).map(|at| rows[at % n][at / n]).collect();
        for draw in 0..50 {
            let g: Vec<f64> = (0..n)
                .map(|j| {
                    if (draw + j) % 4 == 0 {
                        -0.0
                    } else {
                        rng.normal()
                    }
                })
                .collect();
            let mut x = vec![1.0; n];
            multiply(&by_columns, &g, &mut x);
            for (xi, row) in x.iter().zip(&rows) {
                let sum: f64 = row.iter().zip(&g).map(|(a, b)| a * b).sum();
                assert_eq!(xi.to_bits(), sum.to_bits());
            }
        }
    }

    /// Drawing the correlated and the independent law of all pairs in one pass gives each
    /// law as drawn alone, to the bit; [`family_laws`] keeps the independent one.
    #[test]
    fn laws_drawn_together_are_the_laws_drawn_alone() {
        let k = 7;
        let cov: Vec<Vec<f64>> = (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| if i == j { 1.0 + i as f64 / 4.0 } else { 0.3 })
                    .collect()
            })
            .collect();
        let pairs = all_pairs(k);
        let family: Vec<Combination> = pairs
            .iter()
            .map(|&(a, b)| vec![(b, 1.0), (a, -1.0)])
            .collect();
        let (alone, independent) = (
            MaxAbs::draw(&cov, &family).unwrap(),
            draw_independent(k, &pairs).unwrap(),
        );
        let (together, shared) = family_laws(&cov, &family, k, &pairs);
        let bits = |m: &MaxAbs| m.maxima.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&together.unwrap()), bits(&alone));
        let shared = shared.unwrap();
        assert_eq!(bits(&shared), bits(&independent));
        assert!(Arc::ptr_eq(
            &independent_arms_law(k, &pairs).unwrap(),
            &shared
        ));
    }

    #[test]
    fn all_pairs_of_independent_arms_is_tukey() {
        for (k, df, want) in [
            (5, 118.0, 2.7704109432864956),
            (5, 10.0, 3.2910821404120085),
            (3, 19.0, 2.5404500912815995),
            (10, 40.0, 3.3478061657696077),
        ] {
            let c = independent_arms(k, &all_pairs(k), df, 0.95).unwrap();
            assert!((c - want).abs() < 0.02, "k {k} df {df}: {c} vs {want}");
        }
    }

    /// One pair is t's quantile exactly; with df infinite and R = I over m independent
    /// statistics, P(max ≤ c) = (2Φ(c) − 1)^m, so c = Φ⁻¹((1 + 0.95^(1/m)) / 2) (Šidák).
    #[test]
    fn one_statistic_is_t_and_independent_ones_are_sidak() {
        let c = independent_arms(2, &[(0, 1)], 19.0, 0.95).unwrap();
        assert_eq!(c, t_quantile(0.975, 19.0));
        let cov = vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
        ];
        let fam: Vec<Combination> = (0..3).map(|i| vec![(i, 1.0)]).collect();
        let c = max_abs_t_quantile(&cov, &fam, f64::INFINITY, 0.95).unwrap();
        let sidak =
            crate::resample::summary::normal_quantile((1.0 + 0.95f64.powf(1.0 / 3.0)) / 2.0);
        assert!((c - sidak).abs() < 0.02, "{c} vs {sidak}");
        // Fewer df, a larger value; and never below the marginal t.
        let c10 = max_abs_t_quantile(&cov, &fam, 10.0, 0.95).unwrap();
        assert!(c10 > c + 0.2 && c10 > t_quantile(0.975, 10.0), "{c10}");
        // A zero-variance member is left out; none left: None.
        let zero = vec![vec![0.0]];
        assert_eq!(
            max_abs_t_quantile(&zero, &[vec![(0, 1.0)]], 5.0, 0.95),
            None
        );
    }

    /// Perfectly correlated statistics are one statistic: c is t's marginal quantile.
    #[test]
    fn identical_statistics_need_no_correction() {
        let cov = vec![vec![1.0, 1.0], vec![1.0, 1.0]];
        let fam: Vec<Combination> = vec![vec![(0, 1.0)], vec![(1, 1.0)]];
        let c = max_abs_t_quantile(&cov, &fam, 12.0, 0.95).unwrap();
        assert!((c - t_quantile(0.975, 12.0)).abs() < 0.02, "{c}");
    }
}
