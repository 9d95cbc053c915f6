//! The x86_64 vector generators of [`super::Generator`]: AVX2 and AVX-512F.
//!
//! Layout: one Philox counter per 64-bit lane, its 32-bit word in the low half. Vector
//! `c_w` holds counter word `w` of 4 (AVX2) or 8 (AVX-512) consecutive blocks.
//! `vpmuludq` multiplies the low halves of two lanes into a full 64-bit product, which is
//! Philox's `mulhilo` in one instruction: the high word is the product shifted right by 32
//! and the low word is the product itself (its high half is never read again, because
//! the next multiply only reads low halves and the outputs are taken from low halves).
//! One round is then, per vector, two multiplies, two shifts and four xors:
//!
//! ```text
//! p0 = c0 * M0;  p1 = c2 * M1
//! c0' = (p1 >> 32) ^ c1 ^ k0;  c1' = p1;  c2' = (p0 >> 32) ^ c3 ^ k1;  c3' = p0
//! ```
//!
//! Lemire: `m = x * q` (again `vpmuludq`), index `m >> 32`, rejected when the low half of
//! `m` is below `t`; any rejection in a group sends the group to the scalar
//! [`super::fix_rejected`]. Two vectors are in flight per step so the multiplies of one
//! hide the latency of the other (four measured no faster in [`fill_avx2`]).
//!
//! [`indices8_avx2`] gives a step's indices word-major, as vectors, for the engine's fused
//! walk (`crate::resample::fused_avx2`), which adds rows straight from them.

use std::arch::x86_64::*;

use super::{fix_rejected, round_keys};
use crate::rng::philox::{PHILOX_M0, PHILOX_M1};

/// Blocks per AVX2 step: two vectors of four.
const G2: usize = 8;
/// Blocks per AVX-512 step: two vectors of eight.
const G5: usize = 16;

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
    let plan = Avx2Plan::new(key, addr, q, t);
    let n = out.len() / 4;
    let mut g = 0;
    while g + G2 <= n {
        let dst: &mut [u32; 4 * G2] = (&mut out[4 * g..4 * (g + G2)]).try_into().unwrap();
        let j = first.wrapping_add(g as u32);
        if group_avx2::<{ G2 / 4 }>(&plan, j, dst) {
            fix_rejected(key, addr, j, q, t, dst);
        }
        g += G2;
    }
    if g < n {
        // A partial last step: compute a whole one and keep the blocks asked for.
        let mut tmp = [0u32; 4 * G2];
        let j = first.wrapping_add(g as u32);
        let rejected = group_avx2::<{ G2 / 4 }>(&plan, j, &mut tmp);
        let dst = &mut out[4 * g..];
        dst.copy_from_slice(&tmp[..dst.len()]);
        if rejected {
            fix_rejected(key, addr, j, q, t, dst);
        }
    }
}

/// What every AVX2 step of one call shares: broadcast round keys, and the parts of the
/// first three rounds that do not depend on the block number.
///
/// Counter words 0, 1 and 3 (`a0`, `a1`, retry 0) are the same for every block of a call;
/// only word 2 (the block) varies. So in round 0 the product `a0 · M0`, and with it the
/// new words 2 and 3, are constants; in round 1 the product of that constant word 2 with
/// M1, and the new word 1, are constants too; round 2 xors that constant word 1. Folding
/// them leaves round 0 one multiply, round 1 one multiply and round 2 one xor fewer: the
/// words are the same, and 10 of the 80 vector operations of the ten rounds are gone.
pub(crate) struct Avx2Plan {
    /// Round 0: `a1 ^ k0[0]`, xored into the high word of `block · M1`.
    r0_c0: __m256i,
    /// Round 1: `hi(C2 · M1) ^ k1[0]` for word 0 and `C3 ^ k1[1]` for word 2.
    r1_c0: __m256i,
    r1_c2: __m256i,
    /// Round 2: `lo(C2 · M1) ^ k2[0]` for word 0 (word 1 is that constant low word).
    r2_c0: __m256i,
    /// The ten round keys, broadcast (rounds 0 and 1 only through the constants above).
    ks: [[__m256i; 2]; 10],
    q: __m256i,
    /// `t - 1` broadcast to 32-bit lanes; `None` when `t = 0` (nothing is ever rejected).
    t_minus_1: Option<__m256i>,
}

impl Avx2Plan {
    /// The plan of draws below `q` (Lemire threshold `t`) from stream `addr` under `key`.
    #[target_feature(enable = "avx2")]
    pub(crate) fn new(key: [u32; 2], addr: [u32; 2], q: u32, t: u32) -> Self {
        let k = round_keys(key);
        let mul = |a: u32, m: u32| {
            let p = a as u64 * m as u64;
            ((p >> 32) as u32, p as u32)
        };
        // Round 0 on [a0, a1, j, 0]: word 2 := hi(a0 M0) ^ 0 ^ k0[1], word 3 := lo(a0 M0).
        let (hi0, lo0) = mul(addr[0], PHILOX_M0);
        let c2 = hi0 ^ k[0][1];
        let c3 = lo0;
        // Round 1: word 0 := hi(c2 M1) ^ c1 ^ k1[0], word 1 := lo(c2 M1) (constant),
        // word 2 := hi(c0 M0) ^ c3 ^ k1[1].
        let (hi1, lo1) = mul(c2, PHILOX_M1);
        let b = |x: u32| _mm256_set1_epi64x(x as i64);
        Avx2Plan {
            r0_c0: b(addr[1] ^ k[0][0]),
            r1_c0: b(hi1 ^ k[1][0]),
            r1_c2: b(c3 ^ k[1][1]),
            r2_c0: b(lo1 ^ k[2][0]),
            ks: k.map(|k| [b(k[0]), b(k[1])]),
            q: b(q),
            t_minus_1: (t > 0).then(|| _mm256_set1_epi32(t.wrapping_sub(1) as i32)),
        }
    }
}

/// The ten Philox rounds on blocks `j .. j + 4 V`: counter word `w` of the result is
/// `[c0, c1, c2, c3][w][v]`, block `j + 4 v + i` in 64-bit lane `i` (the low half).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn rounds_avx2<const V: usize>(plan: &Avx2Plan, j: u32) -> [[__m256i; V]; 4] {
    let m0 = _mm256_set1_epi64x(PHILOX_M0 as i64);
    let m1 = _mm256_set1_epi64x(PHILOX_M1 as i64);
    let iota = _mm256_set_epi64x(3, 2, 1, 0);
    let mut c0 = [_mm256_setzero_si256(); V];
    let mut c1 = [_mm256_setzero_si256(); V];
    let mut c2 = [_mm256_setzero_si256(); V];
    let mut c3 = [_mm256_setzero_si256(); V];
    for v in 0..V {
        // Block numbers wrap at 2^32 in the low halves; the high halves are never read.
        let block = _mm256_add_epi64(_mm256_set1_epi64x(j as i64 + 4 * v as i64), iota);
        // Round 0: only block · M1 varies.
        let p1 = _mm256_mul_epu32(block, m1);
        let r0 = _mm256_xor_si256(_mm256_srli_epi64(p1, 32), plan.r0_c0);
        // Round 1: words 1 and 3 of round 0 (p1, and the constant folded into r1_c2).
        let p0 = _mm256_mul_epu32(r0, m0);
        c0[v] = _mm256_xor_si256(p1, plan.r1_c0);
        c2[v] = _mm256_xor_si256(_mm256_srli_epi64(p0, 32), plan.r1_c2);
        c3[v] = p0;
        // Round 2: word 1 is the constant folded into r2_c0.
        let p0 = _mm256_mul_epu32(c0[v], m0);
        let p1 = _mm256_mul_epu32(c2[v], m1);
        c0[v] = _mm256_xor_si256(_mm256_srli_epi64(p1, 32), plan.r2_c0);
        c2[v] = _mm256_xor_si256(
            _mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]),
            plan.ks[2][1],
        );
        c1[v] = p1;
        c3[v] = p0;
    }
    for k in &plan.ks[3..] {
        for v in 0..V {
            let p0 = _mm256_mul_epu32(c0[v], m0);
            let p1 = _mm256_mul_epu32(c2[v], m1);
            c0[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[v]), k[0]);
            c2[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]), k[1]);
            c1[v] = p1;
            c3[v] = p0;
        }
    }
    [c0, c1, c2, c3]
}

/// Bounded words of blocks `j .. j + 4 V` (V vectors of four) into `dst` (block-major);
/// returns whether any word was rejected (those words in `dst` are then wrong and must be
/// fixed).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn group_avx2<const V: usize>(plan: &Avx2Plan, j: u32, dst: &mut [u32]) -> bool {
    assert_eq!(dst.len(), 16 * V);
    let [c0, c1, c2, c3] = rounds_avx2::<V>(plan, j);
    // Lemire: m = x · q per word; the index is its high half, and the word is rejected
    // when its low half is below t. The unsigned minimum over all 32-bit halves is kept,
    // and the low halves are tested against t once per step.
    let mut least = _mm256_set1_epi32(-1);
    for v in 0..V {
        let m = [
            _mm256_mul_epu32(c0[v], plan.q),
            _mm256_mul_epu32(c1[v], plan.q),
            _mm256_mul_epu32(c2[v], plan.q),
            _mm256_mul_epu32(c3[v], plan.q),
        ];
        for mw in m {
            least = _mm256_min_epu32(least, mw);
        }
        // The high halves (indices) of words 0 and 2, then 1 and 3, of blocks 0 1 | 2 3:
        // [w0b0 w0b1 w2b0 w2b1 | w0b2 w0b3 w2b2 w2b3] and the same for words 1 and 3.
        let f = |a: __m256i, b: __m256i| {
            _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(
                _mm256_castsi256_ps(a),
                _mm256_castsi256_ps(b),
            ))
        };
        let s02 = f(m[0], m[2]);
        let s13 = f(m[1], m[3]);
        let lo = _mm256_unpacklo_epi32(s02, s13); // w0b0 w1b0 w0b1 w1b1 | b2, b3
        let hi = _mm256_unpackhi_epi32(s02, s13); // w2b0 w3b0 w2b1 w3b1 | b2, b3
        let even = _mm256_unpacklo_epi64(lo, hi); // blocks 0 | 2
        let odd = _mm256_unpackhi_epi64(lo, hi); // blocks 1 | 3
        let p = dst.as_mut_ptr().add(16 * v) as *mut __m256i;
        _mm256_storeu_si256(p, _mm256_permute2x128_si256(even, odd, 0x20));
        _mm256_storeu_si256(p.add(1), _mm256_permute2x128_si256(even, odd, 0x31));
    }
    any_rejected(plan, least)
}

/// Whether a low half of `least` (the unsigned minimum of the products `x · q` of a step,
/// lane by lane) is below `t`: whether Lemire's test rejected any word of the step.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn any_rejected(plan: &Avx2Plan, least: __m256i) -> bool {
    match plan.t_minus_1 {
        None => false,
        Some(tm1) => {
            // Set the high halves to all ones, so that only a low half can be <= t - 1.
            let low_halves = _mm256_or_si256(least, _mm256_set1_epi64x(!0xFFFF_FFFFi64));
            let below = _mm256_cmpeq_epi32(_mm256_min_epu32(low_halves, tm1), low_halves);
            _mm256_movemask_epi8(below) != 0
        }
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
    let c = rounds_avx2::<2>(plan, j);
    let mut least = _mm256_set1_epi32(-1);
    let idx = c.map(|cw| {
        let m0 = _mm256_mul_epu32(cw[0], plan.q);
        let m1 = _mm256_mul_epu32(cw[1], plan.q);
        least = _mm256_min_epu32(least, _mm256_min_epu32(m0, m1));
        // The high halves: [b0 b1 b4 b5 | b2 b3 b6 b7] (SLOT_BLOCK).
        _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(
            _mm256_castsi256_ps(m0),
            _mm256_castsi256_ps(m1),
        ))
    });
    (idx, any_rejected(plan, least))
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
    let ks = round_keys(key).map(|k| {
        [
            _mm512_set1_epi64(k[0] as i64),
            _mm512_set1_epi64(k[1] as i64),
        ]
    });
    let n = out.len() / 4;
    let mut g = 0;
    while g + G5 <= n {
        let dst: &mut [u32; 4 * G5] = (&mut out[4 * g..4 * (g + G5)]).try_into().unwrap();
        let j = first.wrapping_add(g as u32);
        if group_avx512(&ks, addr, j, q, t, dst) {
            fix_rejected(key, addr, j, q, t, dst);
        }
        g += G5;
    }
    if g < n {
        let mut tmp = [0u32; 4 * G5];
        let j = first.wrapping_add(g as u32);
        let rejected = group_avx512(&ks, addr, j, q, t, &mut tmp);
        let dst = &mut out[4 * g..];
        dst.copy_from_slice(&tmp[..dst.len()]);
        if rejected {
            fix_rejected(key, addr, j, q, t, dst);
        }
    }
}

/// Bounded words of blocks `j .. j + 16` into `dst` (block-major); returns whether any
/// word was rejected.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn group_avx512(
    ks: &[[__m512i; 2]; 10],
    addr: [u32; 2],
    j: u32,
    q: u32,
    t: u32,
    dst: &mut [u32; 4 * G5],
) -> bool {
    const V: usize = G5 / 8;
    // Truth table 0x96 is a ^ b ^ c.
    const XOR3: i32 = 0x96;
    let m0 = _mm512_set1_epi64(PHILOX_M0 as i64);
    let m1 = _mm512_set1_epi64(PHILOX_M1 as i64);
    let iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let mut c0 = [_mm512_set1_epi64(addr[0] as i64); V];
    let mut c1 = [_mm512_set1_epi64(addr[1] as i64); V];
    let mut c2 = [_mm512_setzero_si512(); V];
    let mut c3 = [_mm512_setzero_si512(); V];
    for (v, c) in c2.iter_mut().enumerate() {
        *c = _mm512_add_epi64(_mm512_set1_epi64(j as i64 + 8 * v as i64), iota);
    }
    for k in ks {
        for v in 0..V {
            let p0 = _mm512_mul_epu32(c0[v], m0);
            let p1 = _mm512_mul_epu32(c2[v], m1);
            c0[v] = _mm512_ternarylogic_epi64::<XOR3>(_mm512_srli_epi64::<32>(p1), c1[v], k[0]);
            c2[v] = _mm512_ternarylogic_epi64::<XOR3>(_mm512_srli_epi64::<32>(p0), c3[v], k[1]);
            c1[v] = p1;
            c3[v] = p0;
        }
    }
    let qv = _mm512_set1_epi64(q as i64);
    let tv = _mm512_set1_epi64(t as i64);
    let low = _mm512_set1_epi64(0xFFFF_FFFF);
    let high = _mm512_set1_epi64(!0xFFFF_FFFFi64);
    // Interleave 64-bit lanes of a and b: [a0 b0 a1 b1 a2 b2 a3 b3], then lanes 4..7.
    let first_half = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    let second_half = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    let mut rejected: __mmask8 = 0;
    for v in 0..V {
        let m = [
            _mm512_mul_epu32(c0[v], qv),
            _mm512_mul_epu32(c1[v], qv),
            _mm512_mul_epu32(c2[v], qv),
            _mm512_mul_epu32(c3[v], qv),
        ];
        for mw in m {
            rejected |= _mm512_cmplt_epu64_mask(_mm512_and_si512(mw, low), tv);
        }
        let a = _mm512_or_si512(_mm512_srli_epi64::<32>(m[0]), _mm512_and_si512(m[1], high));
        let b = _mm512_or_si512(_mm512_srli_epi64::<32>(m[2]), _mm512_and_si512(m[3], high));
        let p = dst.as_mut_ptr().add(32 * v);
        _mm512_storeu_si512(p as *mut _, _mm512_permutex2var_epi64(a, first_half, b));
        _mm512_storeu_si512(
            p.add(16) as *mut _,
            _mm512_permutex2var_epi64(a, second_half, b),
        );
    }
    rejected != 0
}
