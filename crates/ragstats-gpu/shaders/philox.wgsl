// Philox4x32-10 (Salmon et al. 2011, Random123) and Lemire bounded draws, the WGSL port of
// src/rng/philox.rs and src/rng/stream.rs. Core WGSL has no 64-bit integers, so the high
// word of a 32x32 product is built from 16-bit halves here; on devices with
// wgpu::Features::SHADER_INT64, src/gpu/shaders.rs swaps `mulhi32` for the one-multiply
// `u32((u64(a) * u64(b)) >> 32u)` (the rest of this file is the same in both variants).
// This file is a library: kernels are appended to it (see src/gpu/shaders.rs).

const PHILOX_M0: u32 = 0xD2511F53u;
const PHILOX_M1: u32 = 0xCD9E8D57u;
const PHILOX_W0: u32 = 0x9E3779B9u;
const PHILOX_W1: u32 = 0xBB67AE85u;

// High 32 bits of the 64-bit product a * b. The four 16x16 partial products each fit in
// 32 bits; `mid` collects the carries into bit 32 (it is below 3 * 2^16, no overflow).
fn mulhi32(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xFFFFu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xFFFFu;
    let b_hi = b >> 16u;
    let ll = a_lo * b_lo;
    let lh = a_lo * b_hi;
    let hl = a_hi * b_lo;
    let hh = a_hi * b_hi;
    let mid = (ll >> 16u) + (lh & 0xFFFFu) + (hl & 0xFFFFu);
    return hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}

fn philox_round(c: vec4<u32>, k: vec2<u32>) -> vec4<u32> {
    let hi0 = mulhi32(PHILOX_M0, c.x);
    let lo0 = PHILOX_M0 * c.x;
    let hi1 = mulhi32(PHILOX_M1, c.z);
    let lo1 = PHILOX_M1 * c.z;
    return vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
}

fn philox4x32_10(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = ctr;
    var k = key;
    c = philox_round(c, k);
    for (var i = 1u; i < 10u; i = i + 1u) {
        k = k + vec2<u32>(PHILOX_W0, PHILOX_W1);
        c = philox_round(c, k);
    }
    return c;
}

// Index in [0, q) from word `word` of the block at counter (r, s, j, retry = 0), redrawing
// with retry + 1, + 2, ... on Lemire rejection. `t` = 2^32 mod q; `x0` = the retry-0 word.
// (r, s, j) is a block address of a stream domain, retry its word 3: rng::domain::counter
// in src/rng/domain.rs.
fn lemire_draw(x0: u32, q: u32, t: u32, key: vec2<u32>, r: u32, s: u32, j: u32, word: u32) -> u32 {
    var x = x0;
    var retry = 0u;
    loop {
        let l = x * q;
        if (l >= q || l >= t) {
            break;
        }
        retry = retry + 1u;
        x = philox4x32_10(vec4<u32>(r, s, j, retry), key)[word];
    }
    return mulhi32(x, q);
}
