//! The aarch64 vector generator of [`super::Generator`]: NEON.
//!
//! Layout: vector `c_w` holds counter word `w` of 4 consecutive blocks, one per 32-bit
//! lane. `umull`/`umull2` (`vmull_u32`, `vmull_high_u32`) give the four 64-bit products
//! of a multiply, and `uzp2`/`uzp1` take their high and low words back into one vector
//! each: Philox's `mulhilo` for four blocks. A round is then, per vector, four multiplies,
//! four unzips and four xors:
//!
//! ```text
//! (hi0, lo0) = mulhilo(c0, M0);  (hi1, lo1) = mulhilo(c2, M1)
//! c0' = hi1 ^ c1 ^ k0;  c1' = lo1;  c2' = hi0 ^ c3 ^ k1;  c3' = lo0
//! ```
//!
//! Lemire: `(index, low) = mulhilo(x, q)`, rejected when `low < t`; any rejection in a
//! group sends it to the scalar [`super::fix_rejected`]. `vst4q_u32` stores the four word
//! vectors interleaved, which is block-major order.

use std::arch::aarch64::*;

use super::{fix_rejected, round_keys};
use crate::rng::philox::{PHILOX_M0, PHILOX_M1};

/// Blocks per step: two vectors of four.
const G: usize = 8;

/// `(hi, lo)` words of the four products `a[i] * b[i]`.
#[inline(always)]
unsafe fn mulhilo(a: uint32x4_t, b: uint32x4_t) -> (uint32x4_t, uint32x4_t) {
    let p01 = vreinterpretq_u32_u64(vmull_u32(vget_low_u32(a), vget_low_u32(b)));
    let p23 = vreinterpretq_u32_u64(vmull_high_u32(a, b));
    (vuzp2q_u32(p01, p23), vuzp1q_u32(p01, p23))
}

/// [`super::Generator::fill_bounded`] with NEON. `out.len()` is a multiple of 4.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
pub(super) unsafe fn fill_neon(
    key: [u32; 2],
    addr: [u32; 2],
    first: u32,
    q: u32,
    t: u32,
    out: &mut [u32],
) {
    let ks = round_keys(key).map(|k| [vdupq_n_u32(k[0]), vdupq_n_u32(k[1])]);
    let n = out.len() / 4;
    let mut g = 0;
    while g + G <= n {
        let dst: &mut [u32; 4 * G] = (&mut out[4 * g..4 * (g + G)]).try_into().unwrap();
        let j = first.wrapping_add(g as u32);
        if group(&ks, addr, j, q, t, dst) {
            fix_rejected(key, addr, j, q, t, dst);
        }
        g += G;
    }
    if g < n {
        let mut tmp = [0u32; 4 * G];
        let j = first.wrapping_add(g as u32);
        let rejected = group(&ks, addr, j, q, t, &mut tmp);
        let dst = &mut out[4 * g..];
        dst.copy_from_slice(&tmp[..dst.len()]);
        if rejected {
            fix_rejected(key, addr, j, q, t, dst);
        }
    }
}

/// Bounded words of blocks `j .. j + 8` into `dst` (block-major); returns whether any
/// word was rejected.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group(
    ks: &[[uint32x4_t; 2]; 10],
    addr: [u32; 2],
    j: u32,
    q: u32,
    t: u32,
    dst: &mut [u32; 4 * G],
) -> bool {
    const V: usize = G / 4;
    let m0 = vdupq_n_u32(PHILOX_M0);
    let m1 = vdupq_n_u32(PHILOX_M1);
    let iota_words: [u32; 4] = [0, 1, 2, 3];
    let iota = vld1q_u32(iota_words.as_ptr());
    let mut c0 = [vdupq_n_u32(addr[0]); V];
    let mut c1 = [vdupq_n_u32(addr[1]); V];
    let mut c2 = [vdupq_n_u32(0); V];
    let mut c3 = [vdupq_n_u32(0); V];
    for (v, c) in c2.iter_mut().enumerate() {
        // 32-bit lanes: block numbers wrap at 2^32 as the scalar counter does.
        *c = vaddq_u32(vdupq_n_u32(j.wrapping_add(4 * v as u32)), iota);
    }
    for k in ks {
        for v in 0..V {
            let (hi0, lo0) = mulhilo(c0[v], m0);
            let (hi1, lo1) = mulhilo(c2[v], m1);
            c0[v] = veorq_u32(veorq_u32(hi1, c1[v]), k[0]);
            c2[v] = veorq_u32(veorq_u32(hi0, c3[v]), k[1]);
            c1[v] = lo1;
            c3[v] = lo0;
        }
    }
    let qv = vdupq_n_u32(q);
    let tv = vdupq_n_u32(t);
    let mut rejected = vdupq_n_u32(0);
    for v in 0..V {
        let mut idx = [vdupq_n_u32(0); 4];
        for (w, c) in [c0[v], c1[v], c2[v], c3[v]].into_iter().enumerate() {
            let (hi, lo) = mulhilo(c, qv);
            idx[w] = hi;
            rejected = vorrq_u32(rejected, vcltq_u32(lo, tv));
        }
        vst4q_u32(
            dst.as_mut_ptr().add(16 * v),
            uint32x4x4_t(idx[0], idx[1], idx[2], idx[3]),
        );
    }
    vmaxvq_u32(rejected) != 0
}
