#!/usr/bin/env bash
# `stats compare` at the size of issue #35's benchmark: k = 20 systems (190 pairs),
# 2 × 5,000 questions, T = 2, R = 1, 10,000 replicates, on the CPU. Prints the wall time and
# peak memory of the comparison (GNU time) and the engine work it did.
#
#   cargo build --release --bin stats
#   benches/compare/k20.sh target/release/stats
set -euo pipefail
stats="${1:-target/release/stats}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
arms="$(printf 's%02d,' $(seq 1 20))"
"$stats" simulate --out "$dir/k20.csv" --datasets d1=5000,d2=5000 --trajectories 2 --reads 1 \
    --arms "${arms%,}" --effect 0.01 --seed 11 >/dev/null
echo "panel: $(wc -l < "$dir/k20.csv") rows, $(du -h "$dir/k20.csv" | cut -f1)"
for run in 1 2; do
    /usr/bin/time -f "run $run: %e s wall, %M KB peak" \
        "$stats" compare "$dir/k20.csv" --backend cpu --replicates 10000 --format json > "$dir/out.json"
done
python3 - "$dir/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{len(d['systems'])} systems, {d['family']['size']} pairs, backend {d['run']['backend']} ({d['run']['adapter']}), "
      f"critical value {d['critical_values']['simultaneous']:.3f}, top group {len(d['top_group'])}")
PY
