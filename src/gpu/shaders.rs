//! WGSL sources (in `shaders/`), embedded with `include_str!`. WGSL has no includes, so the
//! kernels are appended to the Philox library at compile time.

/// Philox4x32-10 and Lemire bounded draws (a library: no entry points).
pub const PHILOX: &str = include_str!("../../shaders/philox.wgsl");

/// The resample-and-sum kernel (entry point `resample_sums`), with the Philox library.
pub const RESAMPLE: &str = concat!(
    include_str!("../../shaders/philox.wgsl"),
    include_str!("../../shaders/resample.wgsl")
);

/// The permutation kernels (`permute_shuffle`, `permute_cross`), with the Philox library.
pub const PERMUTE: &str = concat!(
    include_str!("../../shaders/philox.wgsl"),
    include_str!("../../shaders/permute.wgsl")
);

/// Diagnostic kernels `philox_kat` and `draw_indices`, with the Philox library.
pub const PHILOX_TEST: &str = concat!(
    include_str!("../../shaders/philox.wgsl"),
    include_str!("../../shaders/philox_test.wgsl")
);

/// The source of `shaders/<file>` as compiled: kernels get the Philox library prepended.
pub fn composed_source(file: &str) -> Option<&'static str> {
    match file {
        "philox.wgsl" => Some(PHILOX),
        "resample.wgsl" => Some(RESAMPLE),
        "philox_test.wgsl" => Some(PHILOX_TEST),
        "permute.wgsl" => Some(PERMUTE),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::composed_source;

    /// Every file in `shaders/` is known to [`composed_source`] and passes naga's WGSL
    /// front end and validator.
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
            let module = naga::front::wgsl::parse_str(src)
                .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
            let mut validator = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            );
            validator
                .validate(&module)
                .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
            n += 1;
        }
        assert_eq!(
            n, 4,
            "expected philox, resample, philox_test and permute shaders"
        );
    }
}
