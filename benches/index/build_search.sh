#!/usr/bin/env bash
# The local BM25 index (tantivy) at a size a user's corpus has: the shipped 2,884-passage
# corpus copied COPIES times (default 50: 144,200 passages, ids made unique), indexed by
# `stats index build`, then the shipped 200 questions searched (`stats index search`, one
# process per query, k = 10). Prints the wall time and peak memory of the build, and the
# wall time of the 200 searches (process start included; it is the same for any build).
#
#   cargo build --release --bin stats
#   benches/index/build_search.sh target/release/stats [COPIES]
set -euo pipefail
stats="${1:-target/release/stats}"
copies="${2:-50}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 - "$root/data/qa/corpus.jsonl" "$dir/corpus.jsonl" "$copies" <<'PY'
import json, sys
src, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = [json.loads(l) for l in open(src)]
with open(out, "w") as f:
    for c in range(copies):
        for d in docs:
            f.write(json.dumps({**d, "id": f"{d['id']}#{c}"}) + "\n")
PY
echo "corpus: $(wc -l < "$dir/corpus.jsonl") passages, $(du -h "$dir/corpus.jsonl" | cut -f1)"
/usr/bin/time -f "build: %e s wall, %U s user, %M KB peak" \
    "$stats" index build "$dir/corpus.jsonl" --out "$dir/idx" >/dev/null
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    print(json.loads(l)["question"])' "$root/data/qa/questions.jsonl" > "$dir/queries.txt"
start=$(date +%s.%N)
while IFS= read -r q; do
    "$stats" index search "local:$dir/idx" "$q" --k 10 >/dev/null
done < "$dir/queries.txt"
end=$(date +%s.%N)
python3 -c "print(f'search: 200 queries in {$end - $start:.2f} s wall')"
