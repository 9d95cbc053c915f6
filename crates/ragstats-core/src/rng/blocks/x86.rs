//! The x86_64 vector generators of [`super::Generator`]: AVX2 and AVX-512F, as the
//! primitives of the generic generator [`super::lanes`].
//!
//! Layout: one Philox counter per 64-bit lane, its 32-bit word in the low half. A vector
//! holds one counter word of 4 (AVX2) or 8 (AVX-512) consecutive blocks. `vpmuludq`
//! multiplies the low halves of two lanes into a full 64-bit product, which is Philox's
//! `mulhilo` in one instruction: the high word is the product shifted right by 32 and the
//! low word is the product itself (its high half is never read again, because the next
//! multiply only reads low halves and the outputs are taken from low halves). Two vectors
//! are in flight per step so the multiplies of one hide the latency of the other (four
//! measured no faster with AVX2).
//!
//! [`indices8_avx2`] gives a step's indices word-major, as vectors, for the engine's fused
//! walk (`crate::resample::fused_avx2`), which adds rows straight from them.

use std::arch::x86_64::*;

use super::lanes::{self, Lanes, Plan};

/// Vectors per AVX2 step: two of four blocks.
const V2: usize = 2;
/// Vectors per AVX-512 step: two of eight blocks.
const V5: usize = 2;

/// An AVX2 vector of four blocks' words, one per 64-bit lane (the low half).
#[derive(Clone, Copy)]
pub(crate) struct Avx2(__m256i);

impl Lanes for Avx2 {
    const BLOCKS: usize = 4;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        Avx2(_mm256_set1_epi64x(x as i64))
    }

    #[inline(always)]
    unsafe fn blocks(j: u32) -> Self {
        // The low halves wrap at 2^32 as the scalar counter does; the high halves are
        // never read.
        Avx2(_mm256_add_epi64(
            _mm256_set1_epi64x(j as i64),
            _mm256_set_epi64x(3, 2, 1, 0),
        ))
    }

    #[inline(always)]
    unsafe fn mulhilo(a: Self, b: Self) -> (Self, Self) {
        let p = _mm256_mul_epu32(a.0, b.0);
        (Avx2(_mm256_srli_epi64(p, 32)), Avx2(p))
    }

    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Avx2(_mm256_xor_si256(a.0, b.0))
    }

    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        Avx2(_mm256_min_epu32(a.0, b.0))
    }

    #[inline(always)]
    unsafe fn any_below(least: Self, t: u32) -> bool {
        any_below_avx2(least.0, t)
    }

    #[inline(always)]
    unsafe fn store4(w: [Self; 4], dst: *mut u32) {
        // The low halves of words 0 and 2, then 1 and 3, of blocks 0 1 | 2 3:
        // [w0b0 w0b1 w2b0 w2b1 | w0b2 w0b3 w2b2 w2b3] and the same for words 1 and 3.
        let s02 = even_halves(w[0].0, w[2].0);
        let s13 = even_halves(w[1].0, w[3].0);
        let lo = _mm256_unpacklo_epi32(s02, s13); // w0b0 w1b0 w0b1 w1b1 | b2, b3
        let hi = _mm256_unpackhi_epi32(s02, s13); // w2b0 w3b0 w2b1 w3b1 | b2, b3
        let even = _mm256_unpacklo_epi64(lo, hi); // blocks 0 | 2
        let odd = _mm256_unpackhi_epi64(lo, hi); // blocks 1 | 3
        let p = dst as *mut __m256i;
        _mm256_storeu_si256(p, _mm256_permute2x128_si256(even, odd, 0x20));
        _mm256_storeu_si256(p.add(1), _mm256_permute2x128_si256(even, odd, 0x31));
    }
}

/// The low halves of the 64-bit lanes of `a` and `b`, 128-bit lane by 128-bit lane:
/// `[a0 a2 b0 b2 | a4 a6 b4 b6]` in 32-bit words (`vshufps`).
#[inline(always)]
unsafe fn even_halves(a: __m256i, b: __m256i) -> __m256i {
    _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(
        _mm256_castsi256_ps(a),
        _mm256_castsi256_ps(b),
    ))
}

/// Lane `i` (64 bits) of the result is `[lo(x_i), lo(y_i)]`: the low halves of `x` and
/// `y` paired, `x`'s in the low half.
#[inline(always)]
unsafe fn pair_low_halves(x: __m512i, y: __m512i) -> __m512i {
    let low = _mm512_set1_epi64(0xFFFF_FFFF);
    _mm512_or_si512(_mm512_and_si512(x, low), _mm512_slli_epi64::<32>(y))
}

/// Whether a low half of `least` (an unsigned minimum of Lemire's low words, lane by lane)
/// is below `t`: whether Lemire's test rejected any word of the step.
#[inline(always)]
unsafe fn any_below_avx2(least: __m256i, t: u32) -> bool {
    if t == 0 {
        return false; // nothing is below 0
    }
    // Set the high halves to all ones, so that only a low half can be <= t - 1.
    let low_halves = _mm256_or_si256(least, _mm256_set1_epi64x(!0xFFFF_FFFFi64));
    let tm1 = _mm256_set1_epi32(t.wrapping_sub(1) as i32);
    let below = _mm256_cmpeq_epi32(_mm256_min_epu32(low_halves, tm1), low_halves);
    _mm256_movemask_epi8(below) != 0
}

/// An AVX-512F vector of eight blocks' words, one per 64-bit lane (the low half).
#[derive(Clone, Copy)]
struct Avx512(__m512i);

impl Lanes for Avx512 {
    const BLOCKS: usize = 8;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        Avx512(_mm512_set1_epi64(x as i64))
    }

    #[inline(always)]
    unsafe fn blocks(j: u32) -> Self {
        // As for AVX2: only the low halves, which wrap at 2^32, are read.
        Avx512(_mm512_add_epi64(
            _mm512_set1_epi64(j as i64),
            _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
        ))
    }

    #[inline(always)]
    unsafe fn mulhilo(a: Self, b: Self) -> (Self, Self) {
        let p = _mm512_mul_epu32(a.0, b.0);
        (Avx512(_mm512_srli_epi64::<32>(p)), Avx512(p))
    }

    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Avx512(_mm512_xor_si512(a.0, b.0))
    }

    #[inline(always)]
    unsafe fn xor3(a: Self, b: Self, c: Self) -> Self {
        // Truth table 0x96 is a ^ b ^ c.
        Avx512(_mm512_ternarylogic_epi64::<0x96>(a.0, b.0, c.0))
    }

    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        Avx512(_mm512_min_epu32(a.0, b.0))
    }

    #[inline(always)]
    unsafe fn any_below(least: Self, t: u32) -> bool {
        // Set the high halves to all ones, so that only a low half can be below t.
        let low_halves = _mm512_or_si512(least.0, _mm512_set1_epi64(!0xFFFF_FFFFi64));
        _mm512_cmplt_epu32_mask(low_halves, _mm512_set1_epi32(t as i32)) != 0
    }

    #[inline(always)]
    unsafe fn store4(w: [Self; 4], dst: *mut u32) {
        // Pairs of 32-bit words in each 64-bit lane i: a = [w0 w1] and b = [w2 w3] of
        // block i; then a and b interleaved lane by lane, blocks 0..3 and 4..7.
        let a = pair_low_halves(w[0].0, w[1].0);
        let b = pair_low_halves(w[2].0, w[3].0);
        let first_half = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
        let second_half = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
        _mm512_storeu_si512(dst as *mut _, _mm512_permutex2var_epi64(a, first_half, b));
        _mm512_storeu_si512(
            dst.add(16) as *mut _,
            _mm512_permutex2var_epi64(a, second_half, b),
        );
    }
}

/// [`super::Generator::fill_bounded`] with AVX2. `out.len()` is a multiple of 4.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn fill_avx2(
    key: [u32; 2],
    addr: [u32; 2],
    first: u32,
    q: u32,
    t: u32,
    out: &mut [u32],
) {
    lanes::fill::<Avx2, V2>(key, addr, first, q, t, out)
}

/// [`super::Generator::fill_bounded`] with AVX-512F. `out.len()` is a multiple of 4.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn fill_avx512(
    key: [u32; 2],
    addr: [u32; 2],
    first: u32,
    q: u32,
    t: u32,
    out: &mut [u32],
) {
    lanes::fill::<Avx512, V5>(key, addr, first, q, t, out)
}

/// The shared part of the AVX2 steps of one stream ([`Plan`]), for [`indices8_avx2`].
pub(crate) struct Avx2Plan(Plan<Avx2>);

impl Avx2Plan {
    /// The plan of draws below `q` (Lemire threshold `t`) from stream `addr` under `key`.
    #[target_feature(enable = "avx2")]
    pub(crate) fn new(key: [u32; 2], addr: [u32; 2], q: u32, t: u32) -> Self {
        // SAFETY: AVX2 is enabled in this function, which is all `Plan::new` needs.
        Avx2Plan(unsafe { Plan::new(key, addr, q, t) })
    }
}

/// Which block of a step of [`indices8_avx2`] each 32-bit lane of its vectors holds: lane
/// `i` is block `j + SLOT_BLOCK[i]`. The order is what one `vshufps` of two vectors of
/// four blocks gives; consumers keep their per-block state in the same order instead of
/// paying a permute per vector.
pub(crate) const SLOT_BLOCK: [usize; 8] = [0, 1, 4, 5, 2, 3, 6, 7];

/// The bounded draws of blocks `j .. j + 8`, word-major: lane `i` of `idx[w]` is word `w`
/// of block `j + SLOT_BLOCK[i]`, the same index [`fill_avx2`] writes. Returns whether any
/// word was rejected by Lemire's test; the lanes of a rejected word then hold `hi(x · q)`
/// for the rejected `x`, which is wrong but, like every `hi(x · q)`, below `q`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn indices8_avx2(plan: &Avx2Plan, j: u32) -> ([__m256i; 4], bool) {
    let plan = &plan.0;
    let c = lanes::rounds::<Avx2, 2>(plan, j);
    let mut least = _mm256_set1_epi32(-1);
    let idx = c.map(|cw| {
        let m0 = _mm256_mul_epu32(cw[0].0, plan.q.0);
        let m1 = _mm256_mul_epu32(cw[1].0, plan.q.0);
        least = _mm256_min_epu32(least, _mm256_min_epu32(m0, m1));
        // The high halves: [b0 b1 b4 b5 | b2 b3 b6 b7] (SLOT_BLOCK).
        _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(
            _mm256_castsi256_ps(m0),
            _mm256_castsi256_ps(m1),
        ))
    });
    (idx, any_below_avx2(least, plan.t))
}
