#!/usr/bin/env bash
# One prepared device check for a machine with a hardware GPU (e.g. the lent H200):
# CPU/GPU parity on the demo panel and on the large workload, and the benchmark numbers
# docs/BENCHMARKS.md asks for. Uses a `stats` binary built beforehand (the device machine
# has no network, so nothing is compiled there):
#
#   cargo build --release && mkdir -p .device && strip -o .device/stats target/release/stats
#   # (16 MB stripped; the unstripped binary is over 100 MB, too big to carry)
#   # device run, carrying .device (and .gl with the Vulkan loader, see the device tool's
#   # README; add .device/ to .git/info/exclude), then:
#   STATS=.device/stats bash scripts/gpu-check.sh "$OUT"
#
# Writes bench and parity JSON into the output folder and exits non-zero on any mismatch.
set -euo pipefail
out="${1:-/tmp/gpu-check}"
mkdir -p "$out"
stats="${STATS:-./target/release/stats}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt" 2>&1 || true

# Parity: the same seed must give the same report on both backends.
for b in cpu gpu; do
    "$stats" bootstrap data/demo/panel.csv --contrast adaptive-open --components --design 446:2:1 \
        --backend "$b" --format json > "$out/demo-$b.json"
done
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
a, b = (json.load(open(f"{d}/demo-{x}.json")) for x in ("cpu", "gpu"))
for k in ("backend", "adapter"):
    a.pop(k); b.pop(k)
assert a == b, "CPU and GPU bootstrap reports differ"
print("demo bootstrap: CPU and GPU reports identical")
PY

# The issue's target: 1,000,000 questions, 10,000 replicates; and the paper workload.
"$stats" bench --workload large --questions 1000000 --replicates 10000 --format json > "$out/bench-large.json"
"$stats" bench --workload paper --format json > "$out/bench-paper.json"
"$stats" bench --workload large --questions 1000000 --replicates 10000 --k 4 --format json > "$out/bench-large-k4.json"
cat "$out"/bench-*.json
