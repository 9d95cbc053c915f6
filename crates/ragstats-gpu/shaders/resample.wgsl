// Resample-and-sum kernel: one workgroup of 64 invocations per (replicate, stratum) pair,
// for one data chunk and one window of blocks. Implements the accumulation contract of
// src/resample/engine.rs: lane l walks blocks l, l+64, ...; adds the rows that fall in this
// chunk into its own f32 accumulators; a shared-memory tree reduction (stride 32..1) gives
// the chunk total, which is added to the output sum. Dispatched once per (chunk, window),
// in that order. Appended to philox.wgsl.
//
// One pipeline per column count: `K` is a pipeline-overridable constant, so every loop over
// columns has a constant bound and the accumulators are a fixed-size function-local array
// that the driver keeps in registers (with K = 1 only acc[0] is live). For K a multiple of
// 4 a row is read with K/4 vector loads.
//
// Pairs: the dispatch grid is flattened, g = wg.y * num_workgroups.x + wg.x, and pair g is
// (replicate rep_base + g / seg_strata, segment stratum g % seg_strata), so one dispatch
// covers every replicate of a batch whatever its size (65535 workgroups per dimension
// would otherwise cap it); workgroups past n_pairs return at once.
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

// Columns per row, 1..=16 (set per pipeline).
override K: u32;

struct Header {
    seed_lo: u32,
    seed_hi: u32,
    rep_base: u32,    // absolute replicate of output row 0 (the batch's first replicate)
    chunk: u32,       // data chunk index c
    n_strata: u32,    // S of the whole job (output stride)
    m_lo: u32,        // this window: lane-steps [m_lo, m_hi)
    m_hi: u32,
    seg_strata: u32,  // strata in this segment (entries of `strata`)
    n_pairs: u32,     // replicates of the batch x seg_strata
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

struct StratumInfo {
    q: u32,           // rows of the stratum (all chunks)
    stratum: u32,     // absolute stratum index: the Philox counter word and output column
    base: u32,        // f32 offset of this stratum's chunk rows within `data`
    threshold: u32,   // 2^32 mod q
}

@group(0) @binding(0) var<uniform> header: Header;
@group(0) @binding(1) var<storage, read> strata: array<StratumInfo>;
// The segment's rows, K f32 per row; bound as vec4 so that rows of K = 4, 8, ... are
// whole vector loads (other K index single components, which are scalar loads).
@group(0) @binding(2) var<storage, read> data: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> sums: array<f32>;
@group(0) @binding(4) var<storage, read_write> scratch: array<f32>;

var<workgroup> shared_acc: array<f32, 1024>; // LANES * MAX_K

fn at(i: u32) -> f32 {
    return data[i >> 2u][i & 3u];
}

fn add_vec(acc: ptr<function, array<f32, 16>>, c: u32, v: vec4<f32>) {
    (*acc)[c] = (*acc)[c] + v.x;
    (*acc)[c + 1u] = (*acc)[c + 1u] + v.y;
    (*acc)[c + 2u] = (*acc)[c + 2u] + v.z;
    (*acc)[c + 3u] = (*acc)[c + 3u] + v.w;
}

// acc[c] += row[c] for c < K; `src` is the row's first f32 in `data`. The branches fold away
// once K is known.
fn add_row(acc: ptr<function, array<f32, 16>>, src: u32) {
    if (K % 4u == 0u) {
        let v = src >> 2u;
        add_vec(acc, 0u, data[v]);
        if (K > 4u) { add_vec(acc, 4u, data[v + 1u]); }
        if (K > 8u) { add_vec(acc, 8u, data[v + 2u]); }
        if (K > 12u) { add_vec(acc, 12u, data[v + 3u]); }
        return;
    }
    (*acc)[0] = (*acc)[0] + at(src);
    if (K > 1u) { (*acc)[1] = (*acc)[1] + at(src + 1u); }
    if (K > 2u) { (*acc)[2] = (*acc)[2] + at(src + 2u); }
    if (K > 3u) { (*acc)[3] = (*acc)[3] + at(src + 3u); }
    if (K > 4u) { (*acc)[4] = (*acc)[4] + at(src + 4u); }
    if (K > 5u) { (*acc)[5] = (*acc)[5] + at(src + 5u); }
    if (K > 6u) { (*acc)[6] = (*acc)[6] + at(src + 6u); }
    if (K > 7u) { (*acc)[7] = (*acc)[7] + at(src + 7u); }
    if (K > 8u) { (*acc)[8] = (*acc)[8] + at(src + 8u); }
    if (K > 9u) { (*acc)[9] = (*acc)[9] + at(src + 9u); }
    if (K > 10u) { (*acc)[10] = (*acc)[10] + at(src + 10u); }
    if (K > 11u) { (*acc)[11] = (*acc)[11] + at(src + 11u); }
    if (K > 12u) { (*acc)[12] = (*acc)[12] + at(src + 12u); }
    if (K > 13u) { (*acc)[13] = (*acc)[13] + at(src + 13u); }
    if (K > 14u) { (*acc)[14] = (*acc)[14] + at(src + 14u); }
    if (K > 15u) { (*acc)[15] = (*acc)[15] + at(src + 15u); }
}

// Draw `w` of block `j` (word w of `block`): adds its row if it falls in this chunk.
fn take(
    acc: ptr<function, array<f32, 16>>,
    x: u32, w: u32, j: u32, r: u32,
    info: StratumInfo, key: vec2<u32>, lo: u32, hi: u32,
) {
    var row: u32;
    let l = x * info.q;
    if (l < info.q && l < info.threshold) {
        row = lemire_draw(x, info.q, info.threshold, key, r, info.stratum, j, w);
    } else {
        row = mulhi32(x, info.q);
    }
    if (row >= lo && row < hi) {
        add_row(acc, info.base + (row - lo) * K);
    }
}

@compute @workgroup_size(64)
fn resample_sums(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let g = wg.y * groups.x + wg.x;
    if (g >= header.n_pairs) {
        return; // past the last pair (uniform across the workgroup)
    }
    let r_off = g / header.seg_strata;
    let info = strata[g % header.seg_strata];
    let r = header.rep_base + r_off;
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
    let pair = r_off * header.n_strata + info.stratum;
    let slot = (pair * LANES + lane) * K;
    var acc: array<f32, 16>;
    for (var c = 0u; c < MAX_K; c = c + 1u) {
        acc[c] = 0.0;
    }
    if (header.m_lo > 0u) {
        for (var c = 0u; c < K; c = c + 1u) {
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
        take(&acc, b.x, 0u, j, r, info, key, lo, hi);
        if (i + 1u < q) { take(&acc, b.y, 1u, j, r, info, key, lo, hi); }
        if (i + 2u < q) { take(&acc, b.z, 2u, j, r, info, key, lo, hi); }
        if (i + 3u < q) { take(&acc, b.w, 3u, j, r, info, key, lo, hi); }
    }
    if (header.m_hi < steps) {
        // More windows follow: park the accumulators.
        for (var c = 0u; c < K; c = c + 1u) {
            scratch[slot + c] = acc[c];
        }
        return;
    }
    for (var c = 0u; c < K; c = c + 1u) {
        shared_acc[lane * K + c] = acc[c];
    }
    workgroupBarrier();
    for (var stride = LANES / 2u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) {
            for (var c = 0u; c < K; c = c + 1u) {
                shared_acc[lane * K + c] = shared_acc[lane * K + c]
                    + shared_acc[(lane + stride) * K + c];
            }
        }
        workgroupBarrier();
    }
    if (lane == 0u) {
        let out = pair * K;
        for (var c = 0u; c < K; c = c + 1u) {
            sums[out + c] = sums[out + c] + shared_acc[c];
        }
    }
}
