//! Validates every WGSL shader in `shaders/` with naga (parse, then validate) at build time,
//! so a broken shader fails `cargo build` with the shader's name and naga's message instead
//! of failing at pipeline creation on some user's GPU.
//!
//! Shaders are checked as `src/gpu/shaders.rs` compiles them: `philox.wgsl` (a library
//! without entry points) on its own, every other file with `philox.wgsl` prepended. They are
//! validated with no optional capabilities, the baseline every adapter offers (the 64-bit
//! `mulhi32` variant is made in Rust and checked by the unit tests of `gpu::shaders`).

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use naga::valid::{Capabilities, ValidationFlags, Validator};

const DIR: &str = "shaders";
const LIBRARY: &str = "philox.wgsl";

fn main() -> ExitCode {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed={DIR}");
    let library = read(&Path::new(DIR).join(LIBRARY));
    let mut names: Vec<String> = fs::read_dir(DIR)
        .unwrap_or_else(|e| panic!("cannot read {DIR}/: {e}"))
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    names.sort();
    let mut failed = false;
    for name in &names {
        let (source, note) = if name == LIBRARY {
            (library.clone(), String::new())
        } else {
            let n = library.lines().count();
            (
                library.clone() + &read(&Path::new(DIR).join(name)),
                format!(" (checked after {DIR}/{LIBRARY}: lines 1-{n} are that file's)"),
            )
        };
        if let Err(message) = check(&format!("{DIR}/{name}"), &source) {
            eprintln!("error: shader {DIR}/{name} does not validate{note}:\n{message}");
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// naga's WGSL front end and validator on `source`; the error as naga renders it.
fn check(path: &str, source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| e.emit_to_string_with_path(source, path))?;
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .map_err(|e| e.emit_to_string_with_path(source, path))?;
    Ok(())
}
