//! WGSL sources (in `shaders/`), embedded with `include_str!`. WGSL has no includes, so the
//! kernels are appended to the Philox library at compile time. Devices with 64-bit integers
//! get a variant whose `mulhi32` is one widening multiply ([`native_mulhi`]).

use std::borrow::Cow;

/// Philox4x32-10 and Lemire bounded draws (a library: no entry points).
pub const PHILOX: &str = include_str!("../shaders/philox.wgsl");

/// The resample-and-sum kernel (entry point `resample_sums`), with the Philox library.
pub const RESAMPLE: &str = concat!(
    include_str!("../shaders/philox.wgsl"),
    include_str!("../shaders/resample.wgsl")
);

/// The permutation kernels (`permute_shuffle`, `permute_cross`), with the Philox library.
pub const PERMUTE: &str = concat!(
    include_str!("../shaders/philox.wgsl"),
    include_str!("../shaders/permute.wgsl")
);

/// The allocation walk kernel (`walk_sums`), with the Philox library.
pub const WALK: &str = concat!(
    include_str!("../shaders/philox.wgsl"),
    include_str!("../shaders/walk.wgsl")
);

/// Diagnostic kernels `philox_kat` and `draw_indices`, with the Philox library.
pub const PHILOX_TEST: &str = concat!(
    include_str!("../shaders/philox.wgsl"),
    include_str!("../shaders/philox_test.wgsl")
);

/// The source of `shaders/<file>` as compiled: kernels get the Philox library prepended.
pub fn composed_source(file: &str) -> Option<&'static str> {
    match file {
        "philox.wgsl" => Some(PHILOX),
        "resample.wgsl" => Some(RESAMPLE),
        "philox_test.wgsl" => Some(PHILOX_TEST),
        "permute.wgsl" => Some(PERMUTE),
        "walk.wgsl" => Some(WALK),
        _ => None,
    }
}

/// Philox's `mulhi32` for devices with 64-bit integers (`wgpu::Features::SHADER_INT64`):
/// one widening multiply instead of four 16 x 16 partial products and their carries. It
/// lives here rather than in `shaders/` because WGSL cannot select a function at pipeline
/// creation and a module that merely mentions `u64` fails validation on devices without
/// the feature, so the 64-bit variant is a different source, made by [`native_mulhi`].
pub const MULHI32_INT64: &str = "fn mulhi32(a: u32, b: u32) -> u32 {
    return u32((u64(a) * u64(b)) >> 32u);
}
";

/// `src` (a composed source, see [`composed_source`]) with its `mulhi32` (the 16-bit-halves
/// definition of `shaders/philox.wgsl`) replaced by [`MULHI32_INT64`]. Nothing else
/// changes, so both variants compute the same words.
///
/// # Panics
/// If `src` does not contain exactly one `fn mulhi32(` definition ending at a line `}`
/// (a broken `shaders/philox.wgsl`; the unit tests catch it).
pub fn native_mulhi(src: &str) -> String {
    const DEF: &str = "fn mulhi32(";
    let start = src.find(DEF).expect("philox.wgsl defines mulhi32");
    assert!(
        src[start + 1..].find(DEF).is_none(),
        "mulhi32 is defined more than once"
    );
    let len = src[start..]
        .find("\n}\n")
        .expect("mulhi32 ends with a line `}`")
        + 3;
    let mut out = String::with_capacity(src.len());
    out.push_str(&src[..start]);
    out.push_str(MULHI32_INT64);
    out.push_str(&src[start + len..]);
    out
}

/// `src` as compiled on a device with (`int64`) or without native 64-bit integers.
pub fn variant(src: &'static str, int64: bool) -> Cow<'static, str> {
    if int64 {
        Cow::Owned(native_mulhi(src))
    } else {
        Cow::Borrowed(src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naga::valid::{Capabilities, ValidationFlags, Validator};

    fn parse(name: &str, src: &str) -> naga::Module {
        naga::front::wgsl::parse_str(src).unwrap_or_else(|e| {
            panic!(
                "{name}: {}",
                e.emit_to_string_with_path(src, &format!("shaders/{name}"))
            )
        })
    }

    fn validate(
        name: &str,
        src: &str,
        caps: Capabilities,
    ) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
        let module = parse(name, src);
        let info = Validator::new(ValidationFlags::all(), caps)
            .validate(&module)
            .map_err(|e| e.emit_to_string_with_path(src, &format!("shaders/{name}")))?;
        Ok((module, info))
    }

    /// Every file in `shaders/` is known to [`composed_source`] and passes naga's WGSL
    /// front end and validator, in both `mulhi32` variants (the 64-bit one with the
    /// `SHADER_INT64` capability, and only with it). This is the one validation path of the
    /// shaders (`cargo test --lib gpu::shaders`); it checks each file as the engine composes
    /// it, so a broken shader fails here with naga's message naming the file.
    #[test]
    fn every_shader_file_validates_with_naga() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("shaders/ exists") {
            let path = entry.expect("dir entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("wgsl") {
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let src = composed_source(&name)
                .unwrap_or_else(|| panic!("shaders/{name} is not wired into gpu::shaders"));
            validate(&name, src, Capabilities::empty()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let native = native_mulhi(src);
            validate(&name, &native, Capabilities::SHADER_INT64)
                .unwrap_or_else(|e| panic!("{name} (int64): {e}"));
            let err = validate(&name, &native, Capabilities::empty())
                .expect_err("the int64 variant uses u64");
            assert!(err.contains("64"), "{name}: {err}");
            n += 1;
        }
        assert_eq!(
            n, 5,
            "expected philox, resample, philox_test, permute and walk shaders"
        );
    }

    #[test]
    fn native_mulhi_replaces_only_mulhi32() {
        let native = native_mulhi(PHILOX);
        assert_eq!(native.matches("fn mulhi32(").count(), 1);
        assert!(native.contains("u64(a) * u64(b)"));
        assert!(!native.contains("a_lo"), "halves version left behind");
        // Everything before and after the function is untouched.
        let start = PHILOX.find("fn mulhi32(").unwrap();
        assert_eq!(&native[..start], &PHILOX[..start]);
        let tail = &PHILOX[PHILOX.find("fn philox_round").unwrap()..];
        assert!(native.ends_with(tail));
        assert!(matches!(variant(RESAMPLE, false), Cow::Borrowed(s) if s == RESAMPLE));
    }

    /// The resample kernel specialised for every column count (as wgpu does at pipeline
    /// creation, with `K` from the pipeline constants) validates and compiles to SPIR-V, in
    /// both `mulhi32` variants; without `K` it cannot be specialised.
    #[test]
    fn resample_kernel_specialises_for_every_k() {
        use naga::back::{pipeline_constants::process_overrides, PipelineConstants};
        for int64 in [false, true] {
            let caps = if int64 {
                Capabilities::SHADER_INT64
            } else {
                Capabilities::empty()
            };
            let src = variant(RESAMPLE, int64);
            let (module, info) = validate("resample.wgsl", &src, caps).unwrap();
            let entry = Some((naga::ShaderStage::Compute, "resample_sums"));
            assert!(
                process_overrides(&module, &info, entry, &PipelineConstants::default()).is_err()
            );
            for k in 1..=16u32 {
                let consts = PipelineConstants::from([("K".to_string(), k as f64)]);
                let (m, i) = process_overrides(&module, &info, entry, &consts)
                    .unwrap_or_else(|e| panic!("K = {k}: {e:?}"));
                assert!(m.overrides.iter().all(|(_, o)| o.init.is_some()));
                naga::back::spv::write_vec(&m, &i, &Default::default(), None)
                    .unwrap_or_else(|e| panic!("K = {k}, int64 = {int64}: {e:?}"));
            }
        }
    }

    /// The CPU twin of `mulhi32` in `shaders/philox.wgsl` (16-bit halves, wrapping u32
    /// arithmetic as in WGSL), line for line.
    fn mulhi32_halves(a: u32, b: u32) -> u32 {
        let a_lo = a & 0xFFFF;
        let a_hi = a >> 16;
        let b_lo = b & 0xFFFF;
        let b_hi = b >> 16;
        let ll = a_lo.wrapping_mul(b_lo);
        let lh = a_lo.wrapping_mul(b_hi);
        let hl = a_hi.wrapping_mul(b_lo);
        let hh = a_hi.wrapping_mul(b_hi);
        let mid = (ll >> 16) + (lh & 0xFFFF) + (hl & 0xFFFF);
        hh.wrapping_add(lh >> 16)
            .wrapping_add(hl >> 16)
            .wrapping_add(mid >> 16)
    }

    /// The CPU twin of [`MULHI32_INT64`].
    fn mulhi32_int64(a: u32, b: u32) -> u32 {
        ((a as u64 * b as u64) >> 32) as u32
    }

    /// The CPU twin of `philox4x32_10` in `shaders/philox.wgsl` with a given `mulhi32`.
    fn philox_twin(mulhi: fn(u32, u32) -> u32, ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
        let round = |c: [u32; 4], k: [u32; 2]| {
            let hi0 = mulhi(0xD251_1F53, c[0]);
            let lo0 = 0xD251_1F53u32.wrapping_mul(c[0]);
            let hi1 = mulhi(0xCD9E_8D57, c[2]);
            let lo1 = 0xCD9E_8D57u32.wrapping_mul(c[2]);
            [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]
        };
        let mut c = round(ctr, key);
        let mut k = key;
        for _ in 1..10 {
            k = [
                k[0].wrapping_add(0x9E37_79B9),
                k[1].wrapping_add(0xBB67_AE85),
            ];
            c = round(c, k);
        }
        c
    }

    /// Both `mulhi32` variants give the Random123 known answers (philox4x32, 10 rounds,
    /// from its `kat_vectors` file) and agree with each other on edge and spread operands.
    #[test]
    fn both_mulhi_variants_pass_random123_kat_in_the_cpu_twin() {
        let kat: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            (
                [0; 4],
                [0; 2],
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
        for mulhi in [mulhi32_halves as fn(u32, u32) -> u32, mulhi32_int64] {
            for (ctr, key, want) in kat {
                assert_eq!(philox_twin(mulhi, ctr, key), want, "ctr={ctr:08x?}");
            }
        }
        let edges = [
            0u32,
            1,
            2,
            0xFFFF,
            0x1_0000,
            0x1_0001,
            0x7FFF_FFFF,
            0x8000_0000,
            u32::MAX,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(mulhi32_halves(a, b), mulhi32_int64(a, b), "{a:#x} * {b:#x}");
            }
        }
        let mut x = 0x0123_4567u32;
        for _ in 0..100_000 {
            x = x.wrapping_mul(0x9E37_79B9).wrapping_add(0x7F4A_7C15);
            let y = x.rotate_left(13) ^ 0xA5A5_A5A5;
            assert_eq!(mulhi32_halves(x, y), mulhi32_int64(x, y), "{x:#x} * {y:#x}");
        }
    }
}
