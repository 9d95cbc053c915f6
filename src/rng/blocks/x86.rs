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
//! hide the latency of the other.

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
    let ks = round_keys(key).map(|k| {
        [
            _mm256_set1_epi64x(k[0] as i64),
            _mm256_set1_epi64x(k[1] as i64),
        ]
    });
    let n = out.len() / 4;
    let mut g = 0;
    while g + G2 <= n {
        let dst: &mut [u32; 4 * G2] = (&mut out[4 * g..4 * (g + G2)]).try_into().unwrap();
        let j = first.wrapping_add(g as u32);
        if group_avx2(&ks, addr, j, q, t, dst) {
            fix_rejected(key, addr, j, q, t, dst);
        }
        g += G2;
    }
    if g < n {
        // A partial last step: compute a whole one and keep the blocks asked for.
        let mut tmp = [0u32; 4 * G2];
        let j = first.wrapping_add(g as u32);
        let rejected = group_avx2(&ks, addr, j, q, t, &mut tmp);
        let dst = &mut out[4 * g..];
        dst.copy_from_slice(&tmp[..dst.len()]);
        if rejected {
            fix_rejected(key, addr, j, q, t, dst);
        }
    }
}

/// Bounded words of blocks `j .. j + 8` into `dst` (block-major); returns whether any
/// word was rejected (those words in `dst` are then wrong and must be fixed).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn group_avx2(
    ks: &[[__m256i; 2]; 10],
    addr: [u32; 2],
    j: u32,
    q: u32,
    t: u32,
    dst: &mut [u32; 4 * G2],
) -> bool {
    const V: usize = G2 / 4;
    let m0 = _mm256_set1_epi64x(PHILOX_M0 as i64);
    let m1 = _mm256_set1_epi64x(PHILOX_M1 as i64);
    let iota = _mm256_set_epi64x(3, 2, 1, 0);
    let mut c0 = [_mm256_set1_epi64x(addr[0] as i64); V];
    let mut c1 = [_mm256_set1_epi64x(addr[1] as i64); V];
    let mut c2 = [_mm256_setzero_si256(); V];
    let mut c3 = [_mm256_setzero_si256(); V];
    for (v, c) in c2.iter_mut().enumerate() {
        // Block numbers wrap at 2^32 in the low halves; the high halves are never read.
        *c = _mm256_add_epi64(_mm256_set1_epi64x(j as i64 + 4 * v as i64), iota);
    }
    for k in ks {
        for v in 0..V {
            let p0 = _mm256_mul_epu32(c0[v], m0);
            let p1 = _mm256_mul_epu32(c2[v], m1);
            c0[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[v]), k[0]);
            c2[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]), k[1]);
            c1[v] = p1;
            c3[v] = p0;
        }
    }
    let qv = _mm256_set1_epi64x(q as i64);
    let tv = _mm256_set1_epi64x(t as i64);
    let low = _mm256_set1_epi64x(0xFFFF_FFFF);
    let high = _mm256_set1_epi64x(!0xFFFF_FFFFi64);
    let mut rejected = _mm256_setzero_si256();
    for v in 0..V {
        let m = [
            _mm256_mul_epu32(c0[v], qv),
            _mm256_mul_epu32(c1[v], qv),
            _mm256_mul_epu32(c2[v], qv),
            _mm256_mul_epu32(c3[v], qv),
        ];
        for mw in m {
            // Low halves and t are below 2^32, so the signed 64-bit compare is unsigned.
            let lo = _mm256_and_si256(mw, low);
            rejected = _mm256_or_si256(rejected, _mm256_cmpgt_epi64(tv, lo));
        }
        // Lane i of `a`: indices of words 0 and 1 of block i; of `b`: words 2 and 3.
        let a = _mm256_or_si256(_mm256_srli_epi64(m[0], 32), _mm256_and_si256(m[1], high));
        let b = _mm256_or_si256(_mm256_srli_epi64(m[2], 32), _mm256_and_si256(m[3], high));
        let even = _mm256_unpacklo_epi64(a, b); // blocks 0 | 2
        let odd = _mm256_unpackhi_epi64(a, b); // blocks 1 | 3
        let p = dst.as_mut_ptr().add(16 * v) as *mut __m256i;
        _mm256_storeu_si256(p, _mm256_permute2x128_si256(even, odd, 0x20));
        _mm256_storeu_si256(p.add(1), _mm256_permute2x128_si256(even, odd, 0x31));
    }
    _mm256_testz_si256(rejected, rejected) == 0
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
