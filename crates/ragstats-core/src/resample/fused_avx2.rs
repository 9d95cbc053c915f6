//! The lane sums of a table walked in steps, with AVX2: drawing and adding fused.
//!
//! The general steps walk in [`super::cpu`] has the generator transpose each step's
//! indices into block order and store them, then hands the blocks on one at a time. Here
//! the generator's word-major vectors ([`indices8_avx2`]: one vector per word, eight
//! consecutive blocks) are stored as they are, and each of the eight blocks' lanes is
//! summed straight from them: the lane's `k` accumulators stay in registers for its four
//! rows, and nothing is shuffled. Measured on the Zen 4 VM (`docs/BENCHMARKS.md`), 2 x
//! 20,000 rows: +15 % draws/s with k = 1 and +8 % with k = 4; the paper's 2 x 223 rows
//! within +3 %. (A `vgatherdps` per word, adding eight lanes at once, gained only about
//! a third as much there: AMD's gathers are microcoded, about 40 micro-ops each.)
//!
//! The additions are the accumulation contract's ([`super::engine`]): block `j` goes to
//! lane `j mod 64`, each lane takes its blocks in increasing `j` and a block's words
//! 0..3 in order. So the lane sums, and every result, are bit-identical to the scalar
//! generator's.

use std::arch::x86_64::*;

use super::engine::LANES;
use crate::rng::blocks::x86::{indices8_avx2, Avx2Plan, SLOT_BLOCK};
use crate::rng::blocks::Generator;
use crate::rng::stream::lemire_threshold;

/// Blocks per step: two vectors of four. Eight divides [`LANES`], so a step's blocks
/// `j .. j + 8` (j a multiple of 8) are the lanes `j mod 64 .. j mod 64 + 8`.
const STEP: usize = 8;

/// The 64 lane sums of the accumulation contract for the `q` draws of stream `addr` under
/// `key` from the one-column `table` of `q` rows: lane `l` is `((0 + x₁) + x₂) + …` over
/// the rows of draws `4 j + w` for the blocks `j ≡ l (mod 64)` in increasing order, words
/// `w = 0..3` within a block.
///
/// # Panics
/// If the CPU lacks AVX2, `q == 0` or `table` does not have `q` rows.
pub(super) fn lane_sums<const K: usize>(
    key: [u32; 2],
    addr: [u32; 2],
    q: u32,
    table: &[[f32; K]],
) -> [[f32; K]; LANES] {
    assert!(Generator::Avx2.is_supported(), "this CPU has no AVX2");
    assert!(q > 0, "lane_sums: q must be at least 1");
    assert_eq!(
        table.len(),
        q as usize,
        "lane_sums: the table must have q rows"
    );
    // SAFETY: AVX2 is supported (checked above) and the table is not empty.
    unsafe { lane_sums_avx2(key, addr, q, table) }
}

/// [`lane_sums`] once its conditions hold.
///
/// # Safety
/// The CPU must support AVX2 and `table` must not be empty.
#[target_feature(enable = "avx2")]
unsafe fn lane_sums_avx2<const K: usize>(
    key: [u32; 2],
    addr: [u32; 2],
    q: u32,
    table: &[[f32; K]],
) -> [[f32; K]; LANES] {
    let plan = Avx2Plan::new(key, addr, q, lemire_threshold(q));
    // Every index is hi(x · q) < q = table.len() already; clamping to the last row never
    // changes one, costs one vector op per eight draws, and makes the unchecked row reads
    // below sound by this line alone. (`q - 1` fits in 32 bits; the comparison is unsigned,
    // so the cast to i32 keeps its bits.)
    let last = _mm256_set1_epi32((table.len() - 1) as i32);
    let mut out = [[0f32; K]; LANES];
    // Whole steps (eight blocks of four draws), then one last step, cut at block
    // ceil(q / 4) and draw q, if q is not a multiple of 32. The last step stays out of the
    // loop: one loop testing every step for the cut measured 20 % slower (k = 1, 2 x 20,000).
    let steps = q as usize / (4 * STEP);
    for step in 0..steps {
        let j = step * STEP;
        let lanes: &mut [[f32; K]; STEP] = (&mut out[j % LANES..][..STEP]).try_into().unwrap();
        let (idx, rejected) = indices8_avx2(&plan, j as u32);
        if rejected {
            redo_step(key, addr, j as u32, q, table, lanes);
            continue;
        }
        // Every row index below is clamped to the last row: `add_row`'s condition.
        let rows = clamped_rows(idx, last);
        for (i, &b) in SLOT_BLOCK.iter().enumerate() {
            let mut x = lanes[b];
            for word in &rows {
                add_row(&mut x, table, word[i]);
            }
            lanes[b] = x;
        }
    }
    let j = steps * STEP;
    if 4 * j < q as usize {
        let lanes: &mut [[f32; K]; STEP] = (&mut out[j % LANES..][..STEP]).try_into().unwrap();
        let (idx, rejected) = indices8_avx2(&plan, j as u32);
        if rejected {
            redo_step(key, addr, j as u32, q, table, lanes);
        } else {
            let rows = clamped_rows(idx, last);
            for (i, &b) in SLOT_BLOCK.iter().enumerate() {
                let draws = (q as usize).saturating_sub(4 * (j + b)).min(4);
                for word in &rows[..draws] {
                    add_row(&mut lanes[b], table, word[i]);
                }
            }
        }
    }
    out
}

/// The four index vectors of a step stored as arrays, each index clamped to `last`.
#[target_feature(enable = "avx2")]
#[inline]
fn clamped_rows(idx: [__m256i; 4], last: __m256i) -> [[u32; STEP]; 4] {
    let mut rows = [[0u32; STEP]; 4];
    for (dst, w) in rows.iter_mut().zip(idx) {
        // SAFETY: `dst` holds eight u32s.
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), _mm256_min_epu32(w, last)) };
    }
    rows
}

/// `x += table[row]`, unchecked.
///
/// # Safety
/// `row < table.len()`.
#[inline(always)]
unsafe fn add_row<const K: usize>(x: &mut [f32; K], table: &[[f32; K]], row: u32) {
    // SAFETY: the caller's.
    let row = unsafe { table.get_unchecked(row as usize) };
    for c in 0..K {
        x[c] += row[c];
    }
}

/// Adds the blocks `j .. j + 8` (those below `ceil(q / 4)`, draws below `q`) into their
/// `lanes` from the block-major words that [`Generator::fill_bounded`] redraws: for a step
/// in which Lemire's test rejected a word, about once in `2^32 / (32 t)` steps.
#[cold]
#[inline(never)]
fn redo_step<const K: usize>(
    key: [u32; 2],
    addr: [u32; 2],
    j: u32,
    q: u32,
    table: &[[f32; K]],
    lanes: &mut [[f32; K]; STEP],
) {
    let blocks = (q.div_ceil(4) - j).min(STEP as u32) as usize;
    let mut words = [0u32; 4 * STEP];
    let words = &mut words[..4 * blocks];
    Generator::Avx2.fill_bounded(key, addr, j, q, words);
    let draws = ((q - 4 * j) as usize).min(words.len());
    for (lane, block) in lanes.iter_mut().zip(words[..draws].chunks(4)) {
        for &row in block {
            for c in 0..K {
                lane[c] += table[row as usize][c];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resample::workload::synthetic_rows;
    use crate::rng::domain;
    use crate::rng::philox::philox4x32_10;
    use crate::rng::stream::{draw_index, lemire_accept, seed_key};

    /// The contract's lane sums, one draw at a time from the scalar `draw_index`.
    fn reference<const K: usize>(seed: u64, r: u32, q: u32, table: &[[f32; K]]) -> Vec<u32> {
        let mut lanes = [[0f32; K]; LANES];
        for i in 0..u64::from(q) {
            let row = draw_index(seed, r, 0, i, q) as usize;
            for c in 0..K {
                lanes[(i / 4) as usize % LANES][c] += table[row][c];
            }
        }
        lanes.as_flattened().iter().map(|x| x.to_bits()).collect()
    }

    /// Asserts that the fused lane sums equal [`reference`]'s bit for bit.
    fn check<const K: usize>(seed: u64, r: u32, q: u32, table: &[[f32; K]]) {
        let lanes = lane_sums(seed_key(seed), domain::bootstrap_stream(r, 0), q, table);
        let got: Vec<u32> = lanes.as_flattened().iter().map(|x| x.to_bits()).collect();
        assert_eq!(
            got,
            reference(seed, r, q, table),
            "k = {K}, q = {q}, r = {r}"
        );
    }

    /// Words of the stream's blocks `0 .. ceil(q / 4)` that Lemire's test rejects (before
    /// the retries), counting the unused words of a last partial step too.
    fn rejected_words(seed: u64, r: u32, q: u32) -> usize {
        let t = lemire_threshold(q);
        let addr = domain::bootstrap_stream(r, 0);
        let blocks = q.div_ceil(4).next_multiple_of(STEP as u32);
        (0..blocks)
            .map(|j| {
                let b = philox4x32_10(domain::counter([addr[0], addr[1], j], 0), seed_key(seed));
                b.iter()
                    .filter(|&&x| lemire_accept(x, q, t).is_none())
                    .count()
            })
            .sum()
    }

    fn table<const K: usize>(seed: u64, q: u32) -> Vec<[f32; K]> {
        let flat = synthetic_rows(seed, q as usize, K);
        flat.as_chunks::<K>().0.to_vec()
    }

    #[test]
    fn lane_sums_equal_the_contract_bit_for_bit() {
        if !Generator::Avx2.is_supported() {
            eprintln!("skipped: no AVX2 on this CPU");
            return;
        }
        // 1 to 33 draws (no whole step, a partial one, exactly one, one and a bit), the
        // paper's 223, and lengths past the 64 lanes with every remainder mod 32.
        for q in [1u32, 2, 3, 4, 5, 31, 32, 33, 223, 2048, 2049, 2077, 4127] {
            let t1 = table::<1>(u64::from(q), q);
            let t4 = table::<4>(u64::from(q) + 1, q);
            let t7 = table::<7>(u64::from(q) + 2, q);
            for r in 0..3 {
                check(9, r, q, &t1);
                check(9, r, q, &t4);
                check(9, r, q, &t7);
            }
        }
    }

    #[test]
    fn lane_sums_redo_rejected_steps_exactly() {
        if !Generator::Avx2.is_supported() {
            eprintln!("skipped: no AVX2 on this CPU");
            return;
        }
        // q = 2^18 + 1 rejects t = 245,761 of 2^32 words: about 15 words in each stream,
        // each sending its step to the redo path. The counts are checked, so the test
        // cannot pass without running that path.
        let q = (1u32 << 18) + 1;
        assert_eq!(lemire_threshold(q), 245_761);
        let t1 = table::<1>(3, q);
        let t4 = table::<4>(4, q);
        let mut rejected = 0;
        for r in 0..2 {
            rejected += rejected_words(21, r, q);
            check(21, r, q, &t1);
            check(21, r, q, &t4);
        }
        assert!(rejected >= 10, "only {rejected} rejected words");
    }

    #[test]
    fn redo_step_adds_only_the_blocks_and_draws_below_q() {
        if !Generator::Avx2.is_supported() {
            eprintln!("skipped: no AVX2 on this CPU");
            return;
        }
        // The redo path on its own, for whole, partial and last steps (including q with
        // 4 ∤ q), against the contract: it adds blocks j .. j + 8 into lanes that already
        // hold earlier sums.
        for (q, j) in [(64u32, 8u32), (35, 8), (33, 0), (30, 0), (1, 0), (223, 48)] {
            let tab = table::<3>(u64::from(q), q);
            let key = seed_key(5);
            let addr = domain::bootstrap_stream(2, 0);
            let start = [[0.25f32, -1.5, 3.0]; STEP];
            let mut lanes = start;
            redo_step(key, addr, j, q, &tab, &mut lanes);
            let mut want = start;
            for i in 4 * j..q.min(4 * (j + STEP as u32)) {
                let row = draw_index(5, 2, 0, u64::from(i), q) as usize;
                for c in 0..3 {
                    want[(i / 4 - j) as usize][c] += tab[row][c];
                }
            }
            assert_eq!(lanes, want, "q = {q}, j = {j}");
        }
    }
}
