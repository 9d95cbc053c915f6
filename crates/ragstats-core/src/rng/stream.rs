//! The stream layout contract: which Philox block and word every bounded draw uses.
//!
//! ```text
//! key     = [seed as u32, (seed >> 32) as u32]
//! counter = [replicate, stratum, draw_index / 4, retry]      (retry starts at 0)
//!           (the bootstrap domain, domain::bootstrap)
//! draw i of (replicate, stratum) uses word i % 4 of its block.
//! ```
//!
//! A uniform 32-bit word `x` becomes an index in `[0, q)` by Lemire's multiply-shift with
//! rejection (Lemire 2019, "Fast random integer generation in an interval"):
//!
//! ```text
//! m = x as u64 * q as u64;  l = m as u32
//! if l < q { t = q.wrapping_neg() % q  (= 2^32 mod q);  if l < t { reject } }
//! result = (m >> 32) as u32
//! ```
//!
//! On rejection the block is recomputed with `retry + 1` (then `+ 2`, ...) and the same word
//! is taken, so every draw has a fixed address in the counter space independent of every
//! other draw. The counter never contains a thread, lane or workgroup id: a draw depends
//! only on (seed, replicate, stratum, draw index), which is what makes results independent
//! of backend, thread count, batching and replicate-range splits. The result is exactly
//! uniform on `[0, q)`.

use super::domain;
use super::philox::philox4x32_10;

/// The Philox key for a 64-bit user seed: low word first.
#[inline(always)]
pub fn seed_key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// The rejection threshold `2^32 mod q` of Lemire's method, for `q >= 1`.
#[inline(always)]
pub fn lemire_threshold(q: u32) -> u32 {
    q.wrapping_neg() % q
}

/// Lemire's multiply-shift of one word: `Some(floor(x * q / 2^32))`, or `None` when the
/// low half of the product falls in the biased zone `[0, 2^32 mod q)` and the word must
/// be redrawn. `t` must be [`lemire_threshold`]`(q)`.
#[inline(always)]
pub fn lemire_accept(x: u32, q: u32, t: u32) -> Option<u32> {
    let m = x as u64 * q as u64;
    let l = m as u32;
    // `l < q` is a cheap pre-test: `t < q`, so `l >= q` can never be rejected.
    if l < q && l < t {
        None
    } else {
        Some((m >> 32) as u32)
    }
}

/// Resolves a rejected draw: recomputes the block at address `addr` (counter words 0 to 2 of
/// a stream domain, [`domain::counter`]) with retry 1, 2, ... and takes word `word` until it
/// is accepted. Kept out of line: rejections are rare for small `q`.
#[cold]
#[inline(never)]
pub fn redraw(key: [u32; 2], addr: [u32; 3], word: usize, q: u32, t: u32) -> u32 {
    let mut retry: u32 = 1;
    loop {
        let x = philox4x32_10(domain::counter(addr, retry), key)[word];
        if let Some(v) = lemire_accept(x, q, t) {
            return v;
        }
        retry = retry.wrapping_add(1);
    }
}

/// Index in `[0, q)` of draw `i` of (`replicate`, `stratum`) under `seed`, per the stream
/// contract above. `q` must be at least 1 and `i` below `4 * 2^32`.
///
/// # Panics
/// Panics if `q == 0` (an empty range has no index to draw).
pub fn draw_index(seed: u64, replicate: u32, stratum: u32, i: u64, q: u32) -> u32 {
    assert!(q > 0, "draw_index: q must be at least 1");
    let key = seed_key(seed);
    let addr = domain::bootstrap(replicate, stratum, (i / 4) as u32);
    let word = (i % 4) as usize;
    let t = lemire_threshold(q);
    let x = philox4x32_10(domain::counter(addr, 0), key)[word];
    match lemire_accept(x, q, t) {
        Some(v) => v,
        None => redraw(key, addr, word, q, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_two_to_the_32_mod_q() {
        for q in [1u32, 2, 3, 7, 1000, 0x8000_0001, u32::MAX] {
            assert_eq!(lemire_threshold(q) as u64, (1u64 << 32) % q as u64, "q={q}");
        }
    }

    #[test]
    fn q_one_always_draws_zero() {
        for i in 0..100 {
            assert_eq!(draw_index(9, 3, 1, i, 1), 0);
        }
    }

    #[test]
    fn draws_use_the_documented_block_and_word() {
        // Independent recomputation of the contract for a q where rejections never occur
        // (q a power of two divides 2^32, so t = 0).
        let seed = 0x0123_4567_89ab_cdefu64;
        for i in 0..40u64 {
            let block = philox4x32_10([5, 2, (i / 4) as u32, 0], [0x89ab_cdef, 0x0123_4567]);
            let want = ((block[(i % 4) as usize] as u64 * 8) >> 32) as u32;
            assert_eq!(draw_index(seed, 5, 2, i, 8), want);
        }
    }

    #[test]
    fn rejected_words_are_redrawn_with_the_next_retry_word() {
        // q = 2^31 + 1 rejects about half of all words (t = 2^31 - 1). Find a rejected
        // draw and check that the result comes from the retry>=1 blocks, same word.
        let q = 0x8000_0001u32;
        let t = lemire_threshold(q);
        let key = seed_key(77);
        let mut found = 0;
        for i in 0..64u64 {
            let ctr = [0u32, 0, (i / 4) as u32];
            let w = (i % 4) as usize;
            let x0 = philox4x32_10([ctr[0], ctr[1], ctr[2], 0], key)[w];
            if lemire_accept(x0, q, t).is_some() {
                continue;
            }
            found += 1;
            let mut retry = 1;
            let want = loop {
                let x = philox4x32_10([ctr[0], ctr[1], ctr[2], retry], key)[w];
                let m = x as u64 * q as u64;
                if (m as u32) >= t {
                    break (m >> 32) as u32;
                }
                retry += 1;
            };
            assert_eq!(draw_index(77, 0, 0, i, q), want);
        }
        assert!(
            found > 10,
            "expected many rejections at q = 2^31 + 1, got {found}"
        );
    }
}
