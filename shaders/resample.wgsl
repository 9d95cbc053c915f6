// Resample-and-sum kernel: one workgroup of 64 invocations per (replicate, stratum) pair,
// for one data chunk and one window of blocks. Implements the accumulation contract of
// src/resample/engine.rs: lane l walks blocks l, l+64, ...; adds the rows that fall in this
// chunk into its own f32 accumulators; a shared-memory tree reduction (stride 32..1) gives
// the chunk total, which is added to the output sum. Dispatched once per (chunk, window),
// in that order. Appended to philox.wgsl.
//
// Windows: a lane's walk is split into windows of WINDOW blocks (block m*64 + lane for m in
// [m_lo, m_hi)); between windows the lane's accumulators are parked, exactly, in `scratch`.
// This bounds the loop iterations of one invocation (Mesa's llvmpipe stops any invocation
// after 65535 loop iterations in total) and the length of one dispatch, and changes no
// result: every lane still adds its draws in the same order. For the same reason the
// columns and the four words of a block are unrolled instead of looped.

const LANES: u32 = 64u;
const MAX_K: u32 = 16u;
const CHUNK_ROWS: u32 = 1048576u;

struct Header {
    seed_lo: u32,
    seed_hi: u32,
    rep_base: u32,    // absolute replicate of workgroup_id.x == 0
    chunk: u32,       // data chunk index c
    k: u32,
    n_strata: u32,    // S of the whole job (output stride)
    m_lo: u32,        // this window: lane-steps [m_lo, m_hi)
    m_hi: u32,
}

struct StratumInfo {
    q: u32,           // rows of the stratum (all chunks)
    stratum: u32,     // absolute stratum index: the Philox counter word and output column
    base: u32,        // f32 offset of this stratum's chunk rows within `data`
    threshold: u32,   // 2^32 mod q
}

@group(0) @binding(0) var<uniform> header: Header;
@group(0) @binding(1) var<storage, read> strata: array<StratumInfo>; // by workgroup_id.y
@group(0) @binding(2) var<storage, read> data: array<f32>;
@group(0) @binding(3) var<storage, read_write> sums: array<f32>;
@group(0) @binding(4) var<storage, read_write> scratch: array<f32>;

var<workgroup> shared_acc: array<f32, 1024>; // LANES * MAX_K
var<private> acc: array<f32, 16>;

fn add_row(src: u32, k: u32) {
    acc[0] = acc[0] + data[src];
    if (k > 1u) { acc[1] = acc[1] + data[src + 1u]; }
    if (k > 2u) { acc[2] = acc[2] + data[src + 2u]; }
    if (k > 3u) { acc[3] = acc[3] + data[src + 3u]; }
    if (k > 4u) { acc[4] = acc[4] + data[src + 4u]; }
    if (k > 5u) { acc[5] = acc[5] + data[src + 5u]; }
    if (k > 6u) { acc[6] = acc[6] + data[src + 6u]; }
    if (k > 7u) { acc[7] = acc[7] + data[src + 7u]; }
    if (k > 8u) { acc[8] = acc[8] + data[src + 8u]; }
    if (k > 9u) { acc[9] = acc[9] + data[src + 9u]; }
    if (k > 10u) { acc[10] = acc[10] + data[src + 10u]; }
    if (k > 11u) { acc[11] = acc[11] + data[src + 11u]; }
    if (k > 12u) { acc[12] = acc[12] + data[src + 12u]; }
    if (k > 13u) { acc[13] = acc[13] + data[src + 13u]; }
    if (k > 14u) { acc[14] = acc[14] + data[src + 14u]; }
    if (k > 15u) { acc[15] = acc[15] + data[src + 15u]; }
}

// Draw `w` of block `j` (word w of `block`): adds its row if it falls in this chunk.
fn take(x: u32, w: u32, j: u32, r: u32, info: StratumInfo, key: vec2<u32>, lo: u32, hi: u32, k: u32) {
    var row: u32;
    let l = x * info.q;
    if (l < info.q && l < info.threshold) {
        row = lemire_draw(x, info.q, info.threshold, key, r, info.stratum, j, w);
    } else {
        row = mulhi32(x, info.q);
    }
    if (row >= lo && row < hi) {
        add_row(info.base + (row - lo) * k, k);
    }
}

@compute @workgroup_size(64)
fn resample_sums(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let info = strata[wg.y];
    let k = header.k;
    let r = header.rep_base + wg.x;
    let q = info.q;
    let key = vec2<u32>(header.seed_lo, header.seed_hi);
    let lo = header.chunk * CHUNK_ROWS;
    let hi = lo + min(CHUNK_ROWS, q - lo);
    let n_blocks = (q >> 2u) + select(0u, 1u, (q & 3u) != 0u);
    // Lane-steps this stratum needs: ceil(n_blocks / 64).
    let steps = (n_blocks + LANES - 1u) / LANES;
    if (header.m_lo >= steps) {
        return; // finished in an earlier window (uniform across the workgroup)
    }
    let slot = ((wg.x * header.n_strata + info.stratum) * LANES + lane) * k;
    for (var c = 0u; c < MAX_K; c = c + 1u) {
        acc[c] = 0.0;
    }
    if (header.m_lo > 0u) {
        for (var c = 0u; c < k; c = c + 1u) {
            acc[c] = scratch[slot + c];
        }
    }
    let m_end = min(header.m_hi, steps);
    for (var m = header.m_lo; m < m_end; m = m + 1u) {
        let j = m * LANES + lane;
        if (j >= n_blocks) {
            break;
        }
        // The bootstrap stream domain: rng::domain::bootstrap in src/rng/domain.rs.
        let b = philox4x32_10(vec4<u32>(r, info.stratum, j, 0u), key);
        let i = j * 4u;
        take(b.x, 0u, j, r, info, key, lo, hi, k);
        if (i + 1u < q) { take(b.y, 1u, j, r, info, key, lo, hi, k); }
        if (i + 2u < q) { take(b.z, 2u, j, r, info, key, lo, hi, k); }
        if (i + 3u < q) { take(b.w, 3u, j, r, info, key, lo, hi, k); }
    }
    if (header.m_hi < steps) {
        // More windows follow: park the accumulators.
        for (var c = 0u; c < k; c = c + 1u) {
            scratch[slot + c] = acc[c];
        }
        return;
    }
    for (var c = 0u; c < k; c = c + 1u) {
        shared_acc[lane * MAX_K + c] = acc[c];
    }
    workgroupBarrier();
    for (var stride = LANES / 2u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) {
            for (var c = 0u; c < k; c = c + 1u) {
                shared_acc[lane * MAX_K + c] = shared_acc[lane * MAX_K + c]
                    + shared_acc[(lane + stride) * MAX_K + c];
            }
        }
        workgroupBarrier();
    }
    if (lane == 0u) {
        let out = (wg.x * header.n_strata + info.stratum) * k;
        for (var c = 0u; c < k; c = c + 1u) {
            sums[out + c] = sums[out + c] + shared_acc[c];
        }
    }
}
