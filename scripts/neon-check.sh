#!/usr/bin/env bash
# Runs the unit tests of the RNG module (crates/ragstats-core/src/rng: Philox, the Lemire streams and the block
# generators, NEON included) as an aarch64 program under qemu-user, so the NEON generator is
# checked word for word against the scalar one on an x86_64 machine.
#
# Only crates/ragstats-core/src/rng is compiled (it needs nothing but std and the crate's error type, stubbed
# below), so no dependency has to be cross-built. Needs: the Rust target
# aarch64-unknown-linux-gnu (`rustup target add aarch64-unknown-linux-gnu`) and, on Debian,
# `apt-get install qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross`.
#
# usage: scripts/neon-check.sh [test-name-filter]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/rng_check.rs" <<EOF
//! Test harness: the crate's crates/ragstats-core/src/rng module with a stand-in for crate::Error.
#[derive(Debug)]
pub enum Error {
    Usage(String),
}
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(m) => f.write_str(m),
        }
    }
}
pub type Result<T> = std::result::Result<T, Error>;
pub mod rng {
    #[path = "$root/crates/ragstats-core/src/rng/blocks/mod.rs"]
    pub mod blocks;
    #[path = "$root/crates/ragstats-core/src/rng/domain.rs"]
    pub mod domain;
    #[path = "$root/crates/ragstats-core/src/rng/philox.rs"]
    pub mod philox;
    #[path = "$root/crates/ragstats-core/src/rng/stream.rs"]
    pub mod stream;
}
EOF

rustc --edition 2021 --test -O --target aarch64-unknown-linux-gnu \
    -C linker=aarch64-linux-gnu-gcc -o "$work/rng_check" "$work/rng_check.rs"
echo "aarch64 build of crates/ragstats-core/src/rng: ok; running its tests under qemu-aarch64"
# --nocapture shows which vector generators the emulated CPU reports.
qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/rng_check" --nocapture "$@"
