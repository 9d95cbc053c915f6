#!/usr/bin/env bash
# Prepares, on the build machine (which has network and the Rust toolchain), everything
# scripts/gpu-check.sh needs on a bare GPU machine that has neither:
#
#   .gl/      the Vulkan and EGL loader packages (.deb, amd64) the device may lack
#   .device/  the release `stats` binary, stripped (about 16 MB; unstripped it is over
#             100 MB, too big to carry), and BUILD, which says what it was built from
#
# Both folders are ignored by git (.gitignore) and must be named in the device tool's
# `carry`. Usage, from anywhere in the repository:
#
#   scripts/gpu-prepare.sh          # both steps
#   scripts/gpu-prepare.sh gl       # only fetch the loader packages
#   scripts/gpu-prepare.sh bin      # only build and strip the binary
#
# The build honours CARGO_TARGET_DIR. Where several builds share one target dir under a
# lock, run the `bin` step under that lock so the binary stripped is the one just built:
#   flock /work/cargo.lock scripts/gpu-prepare.sh bin
#
# Then see the header of scripts/gpu-check.sh for the device call.
set -euo pipefail
cd "$(dirname "$0")/.."

# The loaders: Vulkan (libvulkan1) and GL through EGL via glvnd (the rest), as the
# device tool's notes list them. wgpu opens libvulkan.so.1 and libEGL.so.1 at run time.
PACKAGES=(libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)

fetch_gl() {
    # Download for amd64 whatever this machine's architecture (the device is x86-64),
    # with package lists of our own so the system's apt state is left alone.
    local lists=/tmp/gpu-prepare-apt-lists
    local o=(-qq -oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
    mkdir -p "$lists/partial" .gl
    echo "gpu-prepare: apt-get update (amd64 lists in $lists)"
    apt-get "${o[@]}" update
    rm -f .gl/*.deb
    echo "gpu-prepare: downloading ${PACKAGES[*]} into .gl/"
    (cd .gl && apt-get "${o[@]}" download "${PACKAGES[@]}")
    local n
    n=$(find .gl -maxdepth 1 -name '*.deb' | wc -l)
    if [ "$n" -ne "${#PACKAGES[@]}" ]; then
        echo "gpu-prepare: expected ${#PACKAGES[@]} packages in .gl/, found $n" >&2
        exit 1
    fi
    for f in .gl/*.deb; do
        # shellcheck disable=SC2016  # dpkg-deb's own ${field} syntax, not the shell's
        dpkg-deb -W --showformat='  ${Package} ${Version} ${Architecture}\n' "$f"
    done
}

build_bin() {
    local target="${CARGO_TARGET_DIR:-target}"
    echo "gpu-prepare: cargo build --release (target dir $target)"
    cargo build --release --bin stats
    mkdir -p .device
    strip -o .device/stats "$target/release/stats"
    # What the device log should say the binary is.
    {
        echo "commit $(git rev-parse HEAD)"
        if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
            echo "working tree: modified (tracked files differ from the commit)"
        else
            echo "working tree: clean"
        fi
        echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
        echo "glibc $(ldd --version | head -n1 | awk '{print $NF}')"
        .device/stats --version
    } > .device/BUILD
    cat .device/BUILD
}

check_size() {
    # The device tool carries the working tree (tracked and untracked-not-ignored files)
    # plus the carried folders, 64 MiB in all.
    local tree carried total
    tree=$( (git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null || true) | tail -n1 | cut -f1)
    carried=$( (du -cb .gl .device 2>/dev/null || true) | tail -n1 | cut -f1)
    total=$((tree + carried))
    echo "gpu-prepare: working tree $((tree / 1024)) KiB + .gl and .device $((carried / 1024)) KiB = $((total / 1048576)) MiB of 64 MiB"
    if [ "$total" -gt $((64 * 1048576)) ]; then
        echo "gpu-prepare: too large for the device tool's 64 MiB" >&2
        exit 1
    fi
}

case "${1:-all}" in
    gl) fetch_gl ;;
    bin) build_bin ;;
    all) fetch_gl; build_bin ;;
    *) echo "usage: $0 [gl|bin|all]" >&2; exit 2 ;;
esac
check_size
