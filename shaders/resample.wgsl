// Resample-and-sum kernel: one workgroup of 64 invocations per (replicate, stratum) pair,
// for one data chunk. Implements the accumulation contract of src/resample/engine.rs:
// lane l walks blocks l, l+64, ...; adds the rows that fall in this chunk into its own
// f32 accumulators; a shared-memory tree reduction (stride 32..1) gives the chunk total,
// which is added to the output sum. Dispatched once per chunk, in chunk order.
// Appended to philox.wgsl.

const LANES: u32 = 64u;
const MAX_K: u32 = 16u;
const CHUNK_ROWS: u32 = 1048576u;

struct StratumInfo {
    q: u32,           // rows of the stratum (all chunks)
    stratum: u32,     // absolute stratum index: the Philox counter word and output column
    base: u32,        // f32 offset of this stratum's chunk rows within `data`
    threshold: u32,   // 2^32 mod q
}

struct Params {
    seed_lo: u32,
    seed_hi: u32,
    rep_base: u32,    // absolute replicate of workgroup_id.x == 0
    chunk: u32,       // data chunk index c
    k: u32,
    n_strata: u32,    // S of the whole job (output stride)
    _pad0: u32,
    _pad1: u32,
    strata: array<StratumInfo>, // indexed by workgroup_id.y
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> data: array<f32>;
@group(0) @binding(2) var<storage, read_write> sums: array<f32>;

var<workgroup> shared_acc: array<f32, 1024>; // LANES * MAX_K

@compute @workgroup_size(64)
fn resample_sums(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let info = params.strata[wg.y];
    let k = params.k;
    let r = params.rep_base + wg.x;
    let q = info.q;
    let key = vec2<u32>(params.seed_lo, params.seed_hi);
    let chunk_lo = params.chunk * CHUNK_ROWS;
    let chunk_hi = chunk_lo + min(CHUNK_ROWS, q - chunk_lo);

    var acc: array<f32, 16>;
    for (var c = 0u; c < MAX_K; c = c + 1u) {
        acc[c] = 0.0;
    }
    let n_blocks = (q >> 2u) + select(0u, 1u, (q & 3u) != 0u);
    for (var j = lane; j < n_blocks; j = j + LANES) {
        let block = philox4x32_10(vec4<u32>(r, info.stratum, j, 0u), key);
        for (var w = 0u; w < 4u; w = w + 1u) {
            let i = j * 4u + w;
            if (i >= q) {
                break;
            }
            let row = lemire_draw(block[w], q, info.threshold, key, r, info.stratum, j, w);
            if (row >= chunk_lo && row < chunk_hi) {
                let src = info.base + (row - chunk_lo) * k;
                for (var c = 0u; c < k; c = c + 1u) {
                    acc[c] = acc[c] + data[src + c];
                }
            }
        }
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
        let out = (wg.x * params.n_strata + info.stratum) * k;
        for (var c = 0u; c < k; c = c + 1u) {
            sums[out + c] = sums[out + c] + shared_acc[c];
        }
    }
}
