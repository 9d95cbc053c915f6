//! Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw (2011),
//! "Parallel random numbers: as easy as 1, 2, 3" (the Random123 library).
//!
//! A counter-based generator is a keyed bijection of a 128-bit counter: any draw can be
//! computed directly from its coordinates, which is what lets the CPU and GPU backends
//! draw exactly the same resamples without sharing any state. The WGSL port lives in
//! `crates/ragstats-gpu/shaders/philox.wgsl` and is checked against the same known-answer vectors.

/// Round multipliers of Philox4x32 (Random123 `PHILOX_M4x32_0`, `PHILOX_M4x32_1`).
pub const PHILOX_M0: u32 = 0xD251_1F53;
/// Second round multiplier.
pub const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Key schedule increments (Weyl sequence; golden ratio and sqrt(3) - 1).
pub const PHILOX_W0: u32 = 0x9E37_79B9;
/// Second key schedule increment.
pub const PHILOX_W1: u32 = 0xBB67_AE85;

/// `(hi, lo)` of the 64-bit product of two 32-bit words.
#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    ((p >> 32) as u32, p as u32)
}

/// One Philox round: two 32x32->64 multiplies, the hi words xored with the other counter
/// words and the key, and a fixed word permutation.
#[inline(always)]
fn round(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mulhilo(PHILOX_M0, ctr[0]);
    let (hi1, lo1) = mulhilo(PHILOX_M1, ctr[2]);
    [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]
}

/// Philox4x32-10 (Salmon et al. 2011, Random123): ten rounds of `round` with the key
/// bumped by `(PHILOX_W0, PHILOX_W1)` (wrapping) between rounds. Returns the four output
/// words for counter `ctr` under `key`.
#[inline(always)]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = ctr;
    let mut k = key;
    c = round(c, k);
    for _ in 1..10 {
        k = [k[0].wrapping_add(PHILOX_W0), k[1].wrapping_add(PHILOX_W1)];
        c = round(c, k);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer vectors from Random123's `kat_vectors` file (philox4x32 10 rounds).
    pub(crate) const KAT: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0, 0, 0, 0],
            [0, 0],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [0xffff_ffff; 4],
            [0xffff_ffff; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    #[test]
    fn philox_matches_random123_kat_vectors() {
        for (ctr, key, want) in KAT {
            assert_eq!(
                philox4x32_10(ctr, key),
                want,
                "ctr={ctr:08x?} key={key:08x?}"
            );
        }
    }

    #[test]
    fn mulhilo_matches_u64_product_at_extremes() {
        assert_eq!(mulhilo(0xffff_ffff, 0xffff_ffff), (0xffff_fffe, 1));
        assert_eq!(mulhilo(0x1_0000, 0x1_0000), (1, 0));
        assert_eq!(mulhilo(0, 0xffff_ffff), (0, 0));
    }
}
