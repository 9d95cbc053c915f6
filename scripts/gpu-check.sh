#!/usr/bin/env bash
# The device check for a machine with a hardware GPU (the lent H200): sets up the Vulkan
# (or GL/EGL) loaders on a bare machine without network, proves the engine runs on the
# NVIDIA hardware, checks CPU/GPU parity, and measures the workloads of issue #19. Nothing
# is compiled or downloaded there.
#
# On the build machine first (see its header):
#   flock /work/cargo.lock scripts/gpu-prepare.sh     # .gl/ (loader .debs), .device/stats
#
# Then ONE device call (the device tool's `run`), carrying both ignored folders:
#   run(command="bash scripts/gpu-check.sh", carry=[".gl", ".device"], timeout_s=420)
# Everything it learns goes to $OUT (at most 8 files come back): check.log (every step,
# every command's output, so a failed run still says what failed), results.json (the
# adapter, each benchmark's JSON, the parity flags) and summary.md (rows for
# docs/BENCHMARKS.md). Expected to take 1-2 minutes on an H200 with 16 cores; each
# benchmark is cut off after 90 s and timeout_s caps the call at 7 minutes, so a rerun
# still fits in the session's 15 minutes of device time (a cut-off run's check.log still
# comes back). The device tool sends the checkout the session was started in: run
# gpu-prepare.sh in that checkout.
#
# Here, without a GPU, the same script runs as a dry run on Mesa lavapipe:
#   scripts/gpu-check.sh --dry-run [OUTDIR]
# --dry-run: accept a software adapter, shrink the workloads (same commands, fewer
#            replicates) and use the carried loaders even where the system has its own,
#            so every setup step is exercised.
# --allow-software: accept a non-NVIDIA or software adapter at full size (slow!).
# Loaders the system lacks and no .gl/*.deb supplies are a NOTE, not a failure: what counts
# is whether an adapter is found (a machine with lavapipe and no .gl/ runs on Vulkan without
# the GL fallback). The notes are repeated at the end and go into results.json and summary.md.
# The coverage study of the demo panel (issue #45) and `allocate`'s exact-size paired walk
# (its own kernel, walk.wgsl) run on each backend; their wall time per backend and their
# parity are in the summary.
# Exit status: 0 all good; 1 a parity mismatch or a failed step (no adapter at all
# included); 3 the engine's adapter is not the NVIDIA hardware (and neither flag was given).
set -uo pipefail

dry_run=0
allow_software=0
out="${OUT:-/tmp/gpu-check}"
for a in "$@"; do
    case "$a" in
        --dry-run) dry_run=1; allow_software=1 ;;
        --allow-software) allow_software=1 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
        -*) echo "unknown flag $a" >&2; exit 2 ;;
        *) out="$a" ;;
    esac
done

cd "$(dirname "$0")/.." || exit 1
mkdir -p "$out" || exit 1
out="$(cd "$out" && pwd)"
log="$out/check.log"
: > "$log"
# Every line from here on goes to the terminal and to $OUT/check.log; on exit, wait for
# tee to write the last of it (the device tool kills what a command leaves running).
exec > >(tee -a "$log") 2>&1
tee_pid=$!
trap 'exec >&- 2>&-; wait "$tee_pid" 2>/dev/null' EXIT

work="$(mktemp -d /tmp/gpu-check.XXXXXX)"
stats="${STATS:-$PWD/.device/stats}"
failures=0
notes=()
started=$SECONDS

step() { echo; echo "=== [$(date -u +%H:%M:%S) +$((SECONDS - started))s] $*"; }
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
note() { echo "NOTE: $*"; notes+=("$*"); }

# Runs a command with a time limit, logging it (to stderr, so the command's stdout can be
# redirected on its own); its exit status is returned.
run_logged() {
    local limit=$1; shift
    echo "\$ $*" >&2
    timeout --kill-after=10 "$limit" "$@"
    local rc=$?
    [ "$rc" -eq 124 ] && echo "(timed out after ${limit}s)" >&2
    return "$rc"
}

step "machine"
echo "dry run: $dry_run; allow software: $allow_software; output: $out"
uname -a
grep -E '^(PRETTY_NAME|VERSION_ID)=' /etc/os-release 2>/dev/null
echo "cpus: $(nproc); user: $(id -un)"
ldd --version 2>/dev/null | head -n1
if [ ! -x "$stats" ]; then
    echo "no binary at $stats: run scripts/gpu-prepare.sh on the build machine and carry .device"
    exit 1
fi
cat .device/BUILD 2>/dev/null || echo "(no .device/BUILD)"
ldd "$stats"

step "nvidia-smi"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,pcie.link.gen.current --format=csv
else
    echo "nvidia-smi: not found"
fi

# --- Loaders -----------------------------------------------------------------------------
# wgpu opens libvulkan.so.1 (Vulkan) and libEGL.so.1 (GL) at run time. Sonames the system
# lacks are taken from the carried .gl/*.deb, unpacked into a prefix (never over /, where
# they could replace the system's files), and put on LD_LIBRARY_PATH; only the missing
# ones are linked in, so the system's own libraries keep precedence.
step "loaders"
prefix=/tmp/gpu-check-gl
libdir="$prefix/lib"
sonames=(libvulkan.so.1 libEGL.so.1 libGLdispatch.so.0 libGLESv2.so.2 libOpenGL.so.0 libGL.so.1 libGLX.so.0)
missing=()
# Read once: `ldconfig -p | grep -q` fails under pipefail when grep stops early and a
# cache listing longer than a pipe's buffer gets SIGPIPE, so a soname that is there would
# read as missing.
cache="$(ldconfig -p 2>/dev/null)"
for so in "${sonames[@]}"; do
    if grep -q "^[[:space:]]*$so " <<< "$cache"; then
        echo "system has $so"
    else
        missing+=("$so")
    fi
done
debs=(.gl/*.deb)
if [ ! -e "${debs[0]}" ]; then
    # Nothing to unpack: the system's loaders are all there is. A soname it lacks only
    # rules out the backend that needs it; the adapter probes below decide.
    if [ "${#missing[@]}" -gt 0 ]; then
        note "the system lacks ${missing[*]} and no .gl/*.deb is carried (scripts/gpu-prepare.sh gl): a backend that needs them cannot be tried (Vulkan needs libvulkan.so.1, the GL fallback libEGL.so.1 and glvnd)"
    else
        note "no .gl/*.deb carried: the system's own loaders are used"
    fi
    if [ "$dry_run" = 1 ]; then
        note "dry run without .gl/: the carried-loader setup is not exercised"
    fi
    missing=()
elif [ "$dry_run" = 1 ]; then
    echo "dry run: using the carried loaders for every soname"
    missing=("${sonames[@]}")
fi

unpack_deb() { # unpack_deb FILE DIR: dpkg-deb, or Python's ar + tar readers without it
    if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$1" "$2"
    else
        python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"!<arch>\n", "not a .deb"
i = 8
while i < len(data):
    name = data[i:i + 16].decode().strip().rstrip("/")
    size = int(data[i + 48:i + 58])
    body = data[i + 60:i + 60 + size]
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    i += 60 + size + (size & 1)
PY
    fi
}

if [ "${#missing[@]}" -gt 0 ]; then
    rm -rf "$prefix"
    mkdir -p "$libdir"
    for f in "${debs[@]}"; do
        echo "unpacking $f"
        unpack_deb "$f" "$prefix" || fail "unpacking $f"
    done
    for so in "${missing[@]}"; do
        src="$(find "$prefix/usr/lib" -name "$so" 2>/dev/null | head -n1)"
        if [ -n "$src" ]; then
            ln -sf "$src" "$libdir/$so"
            echo "carried $so -> $src"
        else
            note "not in the carried packages: $so"
        fi
    done
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# The NVIDIA driver's user-space libraries (libGLX_nvidia, libEGL_nvidia, libnvidia-*) that
# its ICD files name by soname; container images mount them under /usr/local/nvidia.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    if [ -d "$d" ]; then
        case ":${LD_LIBRARY_PATH:-}:" in
            *":$d:"*) ;;
            *) export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d" ;;
        esac
    fi
done
if [ -d "$libdir" ]; then
    if [ "$dry_run" = 1 ]; then
        echo "dry run: leaving the linker cache alone (LD_LIBRARY_PATH only)"
    elif [ "$(id -u)" = 0 ]; then
        # Root on a throwaway machine: also put the carried loaders in the linker cache,
        # for any tool started outside this script's environment.
        ldconfig "$libdir" && echo "ldconfig: added $libdir"
    fi
fi
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
ldconfig -p 2>/dev/null | grep -E 'libvulkan|libEGL|libGLX_nvidia|libnvidia-gl' || true

# --- Adapter -----------------------------------------------------------------------------
# probe NAME: `stats bench --adapter-info` under the current environment, into
# $work/NAME.json, with the dynamic linker's trace of which loader it opened.
probe() {
    local name=$1
    echo "WGPU_BACKEND=${WGPU_BACKEND:-} VK_DRIVER_FILES=${VK_DRIVER_FILES:-} __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-}"
    LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/$name.ld" \
        run_logged 120 "$stats" bench --adapter-info --format json > "$work/$name.json"
    local rc=$?
    cat "$work/$name.json"
    grep -h -E 'calling init: .*(libvulkan|libEGL)' "$work/$name".ld.* 2>/dev/null | sed 's/^ *[0-9]*: *//' | sort -u
    return "$rc"
}

# field FILE EXPR: a value from an --adapter-info document (Python expression on `d`).
field() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# is_nvidia FILE: the engine's adapter is NVIDIA hardware (PCI vendor 0x10de, not software).
is_nvidia() {
    [ "$(field "$1" 'd["engine_adapter"] and d["engine_adapter"]["vendor"] == "0x10de" and not d["engine_adapter"]["software"]')" = True ]
}

first_file() { for f in "$@"; do [ -f "$f" ] && { echo "$f"; return 0; }; done; return 1; }

step "adapter: Vulkan as the loader finds it"
unset WGPU_BACKEND
chosen=""
probe vulkan
if is_nvidia "$work/vulkan.json"; then
    chosen=vulkan
else
    step "adapter: Vulkan with the NVIDIA ICD named explicitly"
    icd="$(first_file /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
        /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json \
        /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.x86_64.json)"
    egl="$(first_file /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
        /usr/share/glvnd/egl_vendor.d/10_nvidia.json)"
    if [ -z "$icd" ]; then
        icd="$(find /usr /etc /opt -maxdepth 6 -name 'nvidia_icd*.json' 2>/dev/null | head -n1)"
    fi
    if [ -n "$icd" ]; then
        echo "NVIDIA ICD: $icd"
        cat "$icd"
        # VK_DRIVER_FILES for loaders >= 1.3.234, VK_ICD_FILENAMES for older ones.
        export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
        [ -n "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$egl"
        probe vulkan-icd
        is_nvidia "$work/vulkan-icd.json" && chosen=vulkan-icd
    else
        echo "no NVIDIA Vulkan ICD file found"
    fi
    if [ -z "$chosen" ]; then
        step "adapter: wgpu's GL backend over EGL"
        [ -n "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$egl"
        export WGPU_BACKEND=gl
        probe gl
        if is_nvidia "$work/gl.json"; then
            chosen=gl
        else
            unset WGPU_BACKEND
        fi
    fi
fi

if [ -z "$chosen" ]; then
    if [ "$allow_software" = 1 ]; then
        # Dry run: the best adapter there is, Vulkan first, with the default environment.
        unset VK_DRIVER_FILES VK_ICD_FILENAMES __EGL_VENDOR_LIBRARY_FILENAMES
        if [ "$(field "$work/vulkan.json" 'd["engine_adapter"] is not None')" = True ]; then
            chosen=vulkan
        elif [ -f "$work/gl.json" ] && [ "$(field "$work/gl.json" 'd["engine_adapter"] is not None')" = True ]; then
            chosen=gl
            export WGPU_BACKEND=gl
        fi
        echo "WARNING: no NVIDIA hardware adapter; continuing on '${chosen:-none}' because of --dry-run/--allow-software"
    else
        step "RESULT: no NVIDIA hardware adapter (see the probes above); stopping before any workload"
        exit 3
    fi
fi
if [ -z "$chosen" ]; then
    fail "no GPU adapter at all"
    for n in "${notes[@]}"; do echo "NOTE: $n"; done
    exit 1
fi
cp "$work/$chosen.json" "$work/adapter.json"
describe='"{name} / {backend} / vendor {vendor} / 64-bit multiply {native_int64}".format(**d["engine_adapter"])'
step "engine adapter ($chosen): $(field "$work/adapter.json" "$describe")"

# parity NAME WHAT: $work/NAME-cpu.json and $work/NAME-gpu.json, compared without the run
# envelope's backend and adapter and without timings (scripts/json-diff.py prints the first
# differing paths); its exit status goes to $work/parity-NAME.rc for the summary.
parity() {
    python3 scripts/json-diff.py --drop /run/backend --drop /run/adapter --drop-key seconds \
        "$work/$1-cpu.json" "$work/$1-gpu.json" > "$work/parity-$1.txt"
    local rc=$?
    echo "$rc" > "$work/parity-$1.rc"
    cat "$work/parity-$1.txt"
    [ "$rc" -eq 0 ] || fail "$2"
}

# --- Parity on the demo panel --------------------------------------------------------------
step "parity: demo bootstrap report, CPU and GPU"
for b in cpu gpu; do
    run_logged 120 "$stats" bootstrap data/demo/panel.csv --contrast adaptive-open --components \
        --design 446:2:1 --backend "$b" --format json > "$work/demo-$b.json" \
        || fail "bootstrap --backend $b"
done
parity demo "demo bootstrap parity"

# --- allocate's exact-size paired walk (walk.wgsl), CPU and GPU -----------------------------
# Its own kernel (the resample engine cannot stop an allocation at its size): the demo's
# three allocations, 10,000 paired replicates; same document on both, and the wall time.
for b in cpu gpu; do
    step "allocate --backend $b: demo panel, A=446:2:1 B=174:2:5 C=298:3:1"
    t0=$(date +%s.%N)
    run_logged 120 "$stats" allocate data/demo/panel.csv --contrast adaptive-open \
        --ledger data/demo/ledger.jsonl --prices data/demo/prices.toml \
        --allocation A=446:2:1 --allocation B=174:2:5 --allocation C=298:3:1 \
        --backend "$b" --format json > "$work/allocate-$b.json" || fail "allocate --backend $b"
    t1=$(date +%s.%N)
    python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$t0" "$t1" \
        > "$work/allocate-$b.seconds"
done
parity allocate "demo allocate parity"

# --- Coverage study, CPU and GPU ----------------------------------------------------------
# `stats coverage` (issue #45) simulates panels of the demo's design and bootstraps each one:
# thousands of small resampling runs rather than one large one. Its speed on each backend
# goes to docs/BENCHMARKS.md; its counts must be the same on both (same keyed resamples).
if [ "$dry_run" = 1 ]; then
    coverage_flags=(--panels 20 --replicates 200)
    coverage_limit=300
else
    coverage_flags=(--panels 1000 --replicates 2000)
    coverage_limit=150
fi
for b in cpu gpu; do
    step "coverage --backend $b: demo panel, ${coverage_flags[*]}"
    t0=$(date +%s.%N)
    run_logged "$coverage_limit" "$stats" coverage data/demo/panel.csv --contrast adaptive-open \
        "${coverage_flags[@]}" --backend "$b" --format json > "$work/coverage-$b.json"
    rc=$?
    t1=$(date +%s.%N)
    python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$t0" "$t1" \
        > "$work/coverage-$b.seconds"
    echo "coverage --backend $b: exit $rc, $(cat "$work/coverage-$b.seconds") s wall"
    [ "$rc" -eq 0 ] || fail "coverage --backend $b (exit $rc)"
done
parity coverage "coverage parity"

# --- Benchmarks ----------------------------------------------------------------------------
# name | flags. draws = B x questions. The L1 diagnostic has the large workload's 10^10
# draws over a table small enough (2 x 10,000 rows, 40 KB at k = 1) to stay in L1, so
# its rate against "large-k1" says whether the kernel is bound by instruction issue (same
# rates) or by random L2 reads (L1 much faster). "large-k1-halves" is the same run with
# the 16-bit-halves multiply (STATS_GPU_INT64=0): the gain of the 64-bit multiply.
if [ "$dry_run" = 1 ]; then
    bench_limit=300
    benches=(
        "paper|--workload paper --replicates 2000 --min-time 0"
        "large-k1|--workload large --questions 1000000 --replicates 4 --min-time 0"
        "large-k4|--workload large --questions 1000000 --replicates 2 --k 4 --min-time 0"
        "l1-diagnostic|--workload large --questions 20000 --replicates 200 --min-time 0"
        "large-k1-halves|--workload large --questions 1000000 --replicates 4 --min-time 0"
    )
else
    bench_limit=90
    benches=(
        "paper|--workload paper --min-time 2"
        "large-k1|--workload large --questions 1000000 --replicates 10000"
        "large-k4|--workload large --questions 1000000 --replicates 10000 --k 4"
        "l1-diagnostic|--workload large --questions 20000 --replicates 500000"
        "large-k1-halves|--workload large --questions 1000000 --replicates 10000"
    )
fi
for entry in "${benches[@]}"; do
    name="${entry%%|*}"
    read -r -a flags <<< "${entry#*|}"
    step "bench $name: ${flags[*]}"
    int64=1
    [ "$name" = large-k1-halves ] && int64=0
    run_logged "$bench_limit" env STATS_GPU_INT64="$int64" "$stats" bench "${flags[@]}" --format json \
        > "$work/bench-$name.json"
    rc=$?
    cat "$work/bench-$name.json"
    # bench exits 1 when CPU and GPU sums differ.
    [ "$rc" -eq 0 ] || fail "bench $name (exit $rc)"
done

# --- Results -----------------------------------------------------------------------------
step "results"
python3 - "$work" "$out" "$chosen" "$dry_run" "${notes[@]}" <<'PY' || fail "writing results"
import json, os, sys
work, out, chosen, dry = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
notes = sys.argv[5:]
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return {"error": f"{os.path.basename(p)}: {e}"}
res = {"dry_run": dry, "loader_path": chosen, "notes": notes, "adapter": load(f"{work}/adapter.json"), "benches": {}}
rows = []
def parity(name):
    """A report pair's parity (scripts/json-diff.py's exit status): 0 identical, 1 differ."""
    try:
        return {"0": True, "1": False}.get(open(f"{work}/parity-{name}.rc").read().strip())
    except OSError:
        return None
demo, cov, alloc = parity("demo"), parity("coverage"), parity("allocate")
res["parity"] = {"demo-bootstrap": demo, "coverage": cov, "allocate": alloc}
flag = {True: "identical", False: "DIFFER", None: "-"}
rows.append("| demo-bootstrap | bootstrap data/demo/panel.csv --design 446:2:1, report minus run.backend/adapter | - | - | - | - | - | {} |".format(flag[demo]))
def secs(b, what="coverage"):
    try:
        return float(open(f"{work}/{what}-{b}.seconds").read())
    except (OSError, ValueError):
        return None
al_cpu, al_gpu = secs("cpu", "allocate"), secs("gpu", "allocate")
res["allocate"] = {"cpu_seconds": al_cpu, "gpu_seconds": al_gpu}
rows.append("| allocate | demo panel, 3 allocations, 10,000 paired replicates (walk.wgsl) | - | CPU {} | {} | - | {} | {} |".format(
    f"{al_cpu:.2f} s" if al_cpu is not None else "-",
    f"{al_gpu:.2f} s" if al_gpu is not None else "-",
    f"{al_cpu / al_gpu:.3g}x" if al_cpu and al_gpu else "-", flag[alloc]))
cov_cpu, cov_gpu = secs("cpu"), secs("gpu")
c = load(f"{work}/coverage-cpu.json")
res["coverage"] = {"cpu_seconds": cov_cpu, "gpu_seconds": cov_gpu,
                   "panels": c.get("panels"), "replicates": c.get("replicates")}
rows.append("| coverage | demo panel, {} panels x B = {} per generator | - | CPU {} | {} | - | {} | {} |".format(
    c.get("panels"), c.get("replicates"),
    f"{cov_cpu:.1f} s" if cov_cpu is not None else "-",
    f"{cov_gpu:.1f} s" if cov_gpu is not None else "-",
    f"{cov_cpu / cov_gpu:.3g}x" if cov_cpu and cov_gpu else "-", flag[cov]))
for name in ("paper", "large-k1", "large-k4", "l1-diagnostic", "large-k1-halves"):
    b = load(f"{work}/bench-{name}.json")
    res["benches"][name] = b
    if "error" in b:
        rows.append(f"| {name} | {b['error']} |")
        continue
    g = b.get("gpu") or {}
    gpu_s = g.get("seconds")
    cpu_s = b["cpu"]["seconds"]
    rate = lambda r: f"{r / 1e9:.2f} G/s" if r >= 1e9 else f"{r / 1e6:.1f} M/s"
    rows.append("| {} | {} x {}, k = {}, B = {:,} | {:.3g} | {} | {} | {} | {} | {} |".format(
        name, len(b["strata_rows"]), b["strata_rows"][0], b["k"], b["replicates"], b["draws"],
        rate(b["cpu"]["draws_per_second"]),
        f"{gpu_s * 1e3:.1f} ms" if gpu_s else "-",
        rate(g["draws_per_second"]) if gpu_s else "-",
        f"{cpu_s / gpu_s:.3g}x" if gpu_s else "-",
        {True: "identical", False: "DIFFER", None: "-"}[b.get("identical")]))
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
a = res["adapter"].get("engine_adapter") or {}
head = [f"Adapter: {a.get('name')} ({a.get('backend')}, {a.get('device_type')}, vendor {a.get('vendor')}, "
        f"driver {a.get('driver')} {a.get('driver_info')}; 64-bit multiply: {a.get('native_int64')}); "
        f"loader path: {chosen}{'; DRY RUN, shrunken workloads' if dry else ''}", "",
        "| run | shape | draws | CPU engine | GPU time | GPU draws/s | GPU / CPU | CPU = GPU bits |",
        "|---|---|---|---|---|---|---|---|"]
tail = [""] + [f"Note: {n}" for n in notes] if notes else []
open(f"{out}/summary.md", "w").write("\n".join(head + rows + tail) + "\n")
print("\n".join(head + rows + tail))
PY

for n in "${notes[@]}"; do echo "NOTE: $n"; done
step "done: $failures failure(s), ${#notes[@]} note(s) in $((SECONDS - started))s; files in $out: $(find "$out" -maxdepth 1 -type f -printf '%f ')"
rm -rf "$work"
[ "$failures" -eq 0 ]
