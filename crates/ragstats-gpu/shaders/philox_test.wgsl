// Diagnostic kernels that expose the WGSL Philox and Lemire code to tests, so the GPU's
// generator can be compared word for word with the Rust one. Appended to philox.wgsl.

struct DrawParams {
    seed_lo: u32,
    seed_hi: u32,
    replicate: u32,
    stratum: u32,
    q: u32,
    threshold: u32,
    n: u32,
    _pad: u32,
}

// philox_kat: input[i] = (ctr.xyzw, key.xy, -, -) as 8 words; output[i] = the 4 words.
@group(0) @binding(0) var<storage, read> kat_in: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> kat_out: array<vec4<u32>>;

@compute @workgroup_size(64)
fn philox_kat(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&kat_out)) {
        return;
    }
    let ctr = kat_in[2u * i];
    let key = kat_in[2u * i + 1u].xy;
    kat_out[i] = philox4x32_10(ctr, key);
}

// draw_indices: out[i] = draw index i of (replicate, stratum) in [0, q).
@group(0) @binding(2) var<storage, read> draw_params: DrawParams;
@group(0) @binding(3) var<storage, read_write> draw_out: array<u32>;

@compute @workgroup_size(64)
fn draw_indices(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= draw_params.n) {
        return;
    }
    let p = draw_params;
    let key = vec2<u32>(p.seed_lo, p.seed_hi);
    let j = i >> 2u;
    let w = i & 3u;
    let x = philox4x32_10(vec4<u32>(p.replicate, p.stratum, j, 0u), key)[w];
    draw_out[i] = lemire_draw(x, p.q, p.threshold, key, p.replicate, p.stratum, j, w);
}
