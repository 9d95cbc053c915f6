#!/usr/bin/env bash
# The build-cost measurements of docs/BENCHMARKS.md (issue #36): a clean `cargo test
# --no-run`, then incremental rebuilds after touching / editing one core and one CLI file,
# then the sizes. usage: scripts/build-cost.sh [CLONE_DIR] [EMPTY_TARGET_DIR]
# Run it on a fresh clone with nothing else running; it edits and restores two files.
set -u
cd "${1:-.}"
export CARGO_TARGET_DIR="${2:-/tmp/build-cost-target}"
rm -rf "$CARGO_TARGET_DIR"
t() { local s=$(date +%s.%N); "$@" >/dev/null 2>&1; local e=$(date +%s.%N); echo "$(echo "$e - $s" | bc)"; }
echo "clean $(t cargo test --no-run -q)"
touch crates/ragstats-core/src/components/variance.rs
echo "touch-core $(t cargo test --no-run -q)"
touch src/cmd/variance.rs
echo "touch-cli $(t cargo test --no-run -q)"
f=crates/ragstats-core/src/components/variance.rs; cp $f /tmp/m.bak
echo 'pub fn measure_probe() -> u32 { 7 }' >> $f
echo "pubfn-core $(t cargo test --no-run -q)"
cp /tmp/m.bak $f
echo "pubfn-core-revert $(t cargo test --no-run -q)"
f=src/cmd/variance.rs; cp $f /tmp/m.bak
echo 'pub fn measure_probe() -> u32 { 7 }' >> $f
echo "pubfn-cli $(t cargo test --no-run -q)"
cp /tmp/m.bak $f
echo "pubfn-cli-revert $(t cargo test --no-run -q)"
ls -l $CARGO_TARGET_DIR/debug/deps/ | awk '$5 > 5000000 && $1 ~ /x/ {print $5, $9}'
ls -l $CARGO_TARGET_DIR/debug/stats
du -sh $CARGO_TARGET_DIR
