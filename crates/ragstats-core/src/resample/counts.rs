//! Question draw counts of a replicate: how many times replicate `r` of the stratified
//! bootstrap draws each row of stratum `s`. These are the draws the engine sums (the same
//! Philox words through the same batch walk as the CPU backend, [`super::cpu`]), counted
//! instead of summed, for statistics that are not sums of per-row columns (a REML refit
//! on the drawn question multiset).

use super::cpu::walk_batches;
use crate::rng::blocks::Generator;
use crate::rng::stream::seed_key;

/// Sets `counts[i]` to the number of draws of row `i` among the `counts.len()` draws of
/// replicate `replicate`, stratum `stratum` under `seed`: `Σ counts = counts.len()`, and
/// `counts[i] = #{j < q : draw_index(seed, replicate, stratum, j, q) = i}` with
/// `q = counts.len()` (every generator gives the same counts).
///
/// # Panics
/// When `counts` is empty or longer than `u32::MAX` (the engine refuses such strata).
pub fn draw_counts(
    generator: Generator,
    seed: u64,
    replicate: u32,
    stratum: u32,
    counts: &mut [u32],
) {
    let q = u32::try_from(counts.len()).expect("at most 2^32 - 1 rows per stratum");
    assert!(q > 0, "draw_counts: a stratum needs at least one row");
    counts.fill(0);
    walk_batches(
        generator,
        seed_key(seed),
        replicate,
        stratum,
        q,
        |_, rows| {
            for &row in rows {
                counts[row as usize] += 1;
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resample::engine::{ResampleBackend, ResampleJob};
    use crate::resample::CpuBackend;
    use crate::rng::draw_index;

    #[test]
    fn counts_are_the_draws_of_draw_index() {
        for q in [1u32, 5, 223, 1027] {
            let (seed, r, s) = (0xABCD_u64, 7u32, 2u32);
            let mut want = vec![0u32; q as usize];
            for i in 0..u64::from(q) {
                want[draw_index(seed, r, s, i, q) as usize] += 1;
            }
            for g in Generator::supported() {
                let mut got = vec![99u32; q as usize];
                draw_counts(g, seed, r, s, &mut got);
                assert_eq!(got, want, "{g}, q = {q}");
            }
        }
    }

    #[test]
    fn counts_weight_the_rows_the_engine_sums() {
        // Small integers are exact in f32, so the engine's sums equal Σ_i counts_i · row_i
        // exactly whatever the order of its adds.
        let strata: Vec<Vec<f32>> = [13usize, 300]
            .iter()
            .map(|&q| (0..q).map(|i| ((i * 7) % 11) as f32 - 5.0).collect())
            .collect();
        let job = ResampleJob {
            strata: strata.iter().map(Vec::as_slice).collect(),
            k: 1,
            seed: 42,
            replicates: 3..8,
        };
        let sums = CpuBackend::new().resample_sums(&job, &|_| {}).unwrap();
        for (i, r) in (3..8u32).enumerate() {
            for (s, rows) in strata.iter().enumerate() {
                let mut c = vec![0u32; rows.len()];
                draw_counts(Generator::Scalar, 42, r, s as u32, &mut c);
                let want: f64 = c
                    .iter()
                    .zip(rows)
                    .map(|(&k, &v)| f64::from(k) * f64::from(v))
                    .sum();
                assert_eq!(
                    f64::from(sums[i * 2 + s]),
                    want,
                    "replicate {r}, stratum {s}"
                );
            }
        }
    }
}
