//! The aarch64 vector generator of [`super::Generator`]: NEON, as the primitives of the
//! generic generator [`super::lanes`].
//!
//! Layout: a vector holds one counter word of 4 consecutive blocks, one per 32-bit lane.
//! `umull`/`umull2` (`vmull_u32`, `vmull_high_u32`) give the four 64-bit products of a
//! multiply, and `uzp2`/`uzp1` take their high and low words back into one vector each:
//! Philox's `mulhilo` for four blocks. `vst4q_u32` stores four word vectors interleaved,
//! which is block-major order. Two vectors are in flight per step.

use std::arch::aarch64::*;

use super::lanes::{self, Lanes};

/// Vectors per step: two of four blocks.
const V: usize = 2;

/// A NEON vector of four blocks' words, one per 32-bit lane.
#[derive(Clone, Copy)]
struct Neon(uint32x4_t);

impl Lanes for Neon {
    const BLOCKS: usize = 4;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        Neon(vdupq_n_u32(x))
    }

    #[inline(always)]
    unsafe fn blocks(j: u32) -> Self {
        let iota_words: [u32; 4] = [0, 1, 2, 3];
        // 32-bit lanes: block numbers wrap at 2^32 as the scalar counter does.
        Neon(vaddq_u32(vdupq_n_u32(j), vld1q_u32(iota_words.as_ptr())))
    }

    #[inline(always)]
    unsafe fn mulhilo(a: Self, b: Self) -> (Self, Self) {
        let p01 = vreinterpretq_u32_u64(vmull_u32(vget_low_u32(a.0), vget_low_u32(b.0)));
        let p23 = vreinterpretq_u32_u64(vmull_high_u32(a.0, b.0));
        (Neon(vuzp2q_u32(p01, p23)), Neon(vuzp1q_u32(p01, p23)))
    }

    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        Neon(veorq_u32(a.0, b.0))
    }

    #[inline(always)]
    unsafe fn min(a: Self, b: Self) -> Self {
        Neon(vminq_u32(a.0, b.0))
    }

    #[inline(always)]
    unsafe fn any_below(least: Self, t: u32) -> bool {
        vminvq_u32(least.0) < t
    }

    #[inline(always)]
    unsafe fn store4(w: [Self; 4], dst: *mut u32) {
        vst4q_u32(dst, uint32x4x4_t(w[0].0, w[1].0, w[2].0, w[3].0));
    }
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
    lanes::fill::<Neon, V>(key, addr, first, q, t, out)
}
