// Permutation kernels (appended to philox.wgsl); the CPU mirror is
// src/correlate/permute.rs, whose header documents the stream layout.
//
// permute_shuffle: one invocation per permutation writes its Fisher–Yates permutation of
//   0..n into `perm` (n words per permutation of the batch).
// permute_cross: one workgroup of 64 lanes per (permutation, group of up to 16 pairs); lane
//   l walks rows l, l+64, ... and accumulates x[i] * y[perm[i]] (exact i32 products of
//   16-bit values) into 64-bit two's-complement sums held as two u32 words; a shared-memory
//   tree gives the totals. Integer adds are exact, so the result equals the CPU's i64 sums
//   whatever the order.

// Counter word 1 of the permutation streams: rng::domain::PERMUTE in src/rng/domain.rs.
const PERMUTE_STREAM: u32 = 0xFFFFFFFEu;
const PLANES: u32 = 64u;
const MAX_PAIRS: u32 = 16u;

struct PermParams {
    seed_lo: u32,
    seed_hi: u32,
    perm_base: u32,   // absolute index of the batch's first permutation
    n: u32,           // rows
    n_perms: u32,     // permutations in this batch
    n_pairs: u32,     // pairs in the whole job (output stride)
    _pad0: u32,
    _pad1: u32,
    // (x offset, y offset) of every pair into `cols`, in i32 elements
    pairs: array<vec2<u32>>,
}

@group(0) @binding(0) var<storage, read> pp: PermParams;
@group(0) @binding(1) var<storage, read_write> perm: array<u32>;
// The quantised x columns, then the y columns, n values each (one binding: downlevel
// devices allow only 4 storage buffers per stage).
@group(0) @binding(2) var<storage, read> cols: array<i32>;
@group(0) @binding(3) var<storage, read_write> cross: array<u32>;

@compute @workgroup_size(64)
fn permute_shuffle(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if (p >= pp.n_perms) {
        return;
    }
    let n = pp.n;
    let base = p * n;
    let r = pp.perm_base + p;
    let key = vec2<u32>(pp.seed_lo, pp.seed_hi);
    for (var i = 0u; i < n; i = i + 1u) {
        perm[base + i] = i;
    }
    var block = vec4<u32>(0u);
    for (var d = 0u; d + 1u < n; d = d + 1u) {
        let i = n - 1u - d;
        let q = i + 1u;
        let jb = d >> 2u;
        let w = d & 3u;
        if (w == 0u) {
            block = philox4x32_10(vec4<u32>(r, PERMUTE_STREAM, jb, 0u), key);
        }
        let t = (~q + 1u) % q; // 2^32 mod q
        let j = lemire_draw(block[w], q, t, key, r, PERMUTE_STREAM, jb, w);
        let a = perm[base + i];
        perm[base + i] = perm[base + j];
        perm[base + j] = a;
    }
}

var<workgroup> wlo: array<u32, 1024>; // PLANES * MAX_PAIRS
var<workgroup> whi: array<u32, 1024>;

@compute @workgroup_size(64)
fn permute_cross(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let p = wg.x;
    let first = wg.y * MAX_PAIRS;
    let m = min(MAX_PAIRS, pp.n_pairs - first);
    let n = pp.n;
    let base = p * n;
    var lo: array<u32, 16>;
    var hi: array<u32, 16>;
    for (var k = 0u; k < MAX_PAIRS; k = k + 1u) {
        lo[k] = 0u;
        hi[k] = 0u;
    }
    for (var i = lane; i < n; i = i + PLANES) {
        let j = perm[base + i];
        for (var k = 0u; k < m; k = k + 1u) {
            let off = pp.pairs[first + k];
            let v = cols[off.x + i] * cols[off.y + j];
            let u = bitcast<u32>(v);
            let nlo = lo[k] + u;
            hi[k] = hi[k] + select(0u, 0xFFFFFFFFu, v < 0) + select(0u, 1u, nlo < lo[k]);
            lo[k] = nlo;
        }
    }
    for (var k = 0u; k < m; k = k + 1u) {
        wlo[lane * MAX_PAIRS + k] = lo[k];
        whi[lane * MAX_PAIRS + k] = hi[k];
    }
    workgroupBarrier();
    for (var stride = PLANES / 2u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) {
            for (var k = 0u; k < m; k = k + 1u) {
                let a = lane * MAX_PAIRS + k;
                let b = (lane + stride) * MAX_PAIRS + k;
                let nlo = wlo[a] + wlo[b];
                whi[a] = whi[a] + whi[b] + select(0u, 1u, nlo < wlo[a]);
                wlo[a] = nlo;
            }
        }
        workgroupBarrier();
    }
    if (lane == 0u) {
        for (var k = 0u; k < m; k = k + 1u) {
            let o = 2u * (p * pp.n_pairs + first + k);
            cross[o] = wlo[k];
            cross[o + 1u] = whi[k];
        }
    }
}
