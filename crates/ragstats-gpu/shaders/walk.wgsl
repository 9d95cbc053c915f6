// The exact-size paired walk of `stats allocate`: one invocation per (replicate, stratum)
// pair walks that pair's bootstrap draws in order and adds each draw's row into every open
// allocation whose sub-panel holds it, until every allocation has its size. Implements the
// contract of crates/ragstats-core/src/allocation/walk.rs, whose CpuWalk is the twin:
// the same draws (the bootstrap stream domain, Lemire with retries), the same f32 adds in
// the same order. Appended to philox.wgsl.
//
// Windows: one dispatch walks blocks [blk_lo, blk_hi) of every unfinished pair; between
// windows a pair's counts are parked in `state` and its sums stay in `sums` (f32 stored
// and reloaded unchanged), so the split changes no result. This bounds the loop iterations
// of one invocation (Mesa's llvmpipe stops any invocation after 65535 in total). A pair
// still open at the end of a window adds 1 to state[0]; the host dispatches windows until
// a window ends with none open.

// Columns per unit and allocation: header.columns, 1 to 8 (5 for questions, 8 for
// clusters). The adds are written out, each behind its column test, rather than looped:
// a loop would spend llvmpipe's per-invocation iteration budget per column.

struct Header {
    seed_lo: u32,
    seed_hi: u32,
    rep_base: u32,    // absolute replicate of pair 0
    n_strata: u32,
    n_alloc: u32,
    n_pairs: u32,     // replicates of the batch x n_strata
    blk_lo: u32,      // this window: blocks [blk_lo, blk_hi)
    blk_hi: u32,
    columns: u32,     // per unit and allocation, 1 to 8
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> header: Header;
// Per stratum 4 words (q, 2^32 mod q, offset of its members in `info`, offset of its rows
// in `rows` in f32), then n_strata x n_alloc needs, then every stratum's member masks.
@group(0) @binding(1) var<storage, read> info: array<u32>;
// Per stratum, per unit (question or cluster), per allocation: `columns` centred f32 values.
@group(0) @binding(2) var<storage, read> rows: array<f32>;
// Per pair, per allocation: `columns` sums.
@group(0) @binding(3) var<storage, read_write> sums: array<f32>;
// Word 0: pairs still open after this window; then per pair, per allocation: draws taken.
@group(0) @binding(4) var<storage, read_write> state: array<atomic<u32>>;

@compute @workgroup_size(64)
fn walk_sums(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let pair = (wg.y * groups.x + wg.x) * 64u + lane;
    if (pair >= header.n_pairs) {
        return;
    }
    let n_alloc = header.n_alloc;
    let d = pair % header.n_strata;
    let r = header.rep_base + pair / header.n_strata;
    let q = info[d * 4u];
    let threshold = info[d * 4u + 1u];
    let member_base = info[d * 4u + 2u];
    let row_base = info[d * 4u + 3u];
    let need_base = header.n_strata * 4u + d * n_alloc;
    let key = vec2<u32>(header.seed_lo, header.seed_hi);
    var taken: array<u32, 32>;
    var open = 0u;
    for (var a = 0u; a < n_alloc; a = a + 1u) {
        taken[a] = atomicLoad(&state[1u + pair * n_alloc + a]);
        if (taken[a] < info[need_base + a]) {
            open = open | (1u << a);
        }
    }
    if (open == 0u) {
        return; // finished in an earlier window
    }
    let k = header.columns;
    let out = pair * n_alloc * k;
    for (var j = header.blk_lo; j < header.blk_hi; j = j + 1u) {
        // The bootstrap stream domain: rng::domain::bootstrap in src/rng/domain.rs.
        let b = philox4x32_10(vec4<u32>(r, d, j, 0u), key);
        for (var w = 0u; w < 4u; w = w + 1u) {
            var x: u32;
            let word = b[w];
            if (word * q < q && word * q < threshold) {
                x = lemire_draw(word, q, threshold, key, r, d, j, w);
            } else {
                x = mulhi32(word, q);
            }
            var hit = info[member_base + x] & open;
            loop {
                if (hit == 0u) {
                    break;
                }
                let a = firstTrailingBit(hit);
                hit = hit & (hit - 1u);
                let src = row_base + (x * n_alloc + a) * k;
                let dst = out + a * k;
                sums[dst] = sums[dst] + rows[src];
                if (k > 1u) { sums[dst + 1u] = sums[dst + 1u] + rows[src + 1u]; }
                if (k > 2u) { sums[dst + 2u] = sums[dst + 2u] + rows[src + 2u]; }
                if (k > 3u) { sums[dst + 3u] = sums[dst + 3u] + rows[src + 3u]; }
                if (k > 4u) { sums[dst + 4u] = sums[dst + 4u] + rows[src + 4u]; }
                if (k > 5u) { sums[dst + 5u] = sums[dst + 5u] + rows[src + 5u]; }
                if (k > 6u) { sums[dst + 6u] = sums[dst + 6u] + rows[src + 6u]; }
                if (k > 7u) { sums[dst + 7u] = sums[dst + 7u] + rows[src + 7u]; }
                taken[a] = taken[a] + 1u;
                if (taken[a] == info[need_base + a]) {
                    open = open & ~(1u << a);
                }
            }
            if (open == 0u) {
                break;
            }
        }
        if (open == 0u) {
            break;
        }
    }
    for (var a = 0u; a < n_alloc; a = a + 1u) {
        atomicStore(&state[1u + pair * n_alloc + a], taken[a]);
    }
    if (open != 0u) {
        atomicAdd(&state[0], 1u);
    }
}
