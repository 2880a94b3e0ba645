#!/usr/bin/env bash
# Checks an installed vmerge the way a user's machine runs it: no Swift toolchain.
#   scripts/test-installed.sh BINARY TOOLCHAIN_DIR FIXTURE...
# 1. The binary needs only system libraries: ldd finds every one, none inside the toolchain.
# 2. With the toolchain's folder hidden (a private mount namespace with an empty tmpfs over it), it
#    prints its version and merges the fixtures into an MP4 that ffprobe reads back.
# Step 2 needs root (or sudo) for the mount namespace; without them it fails, unless
# VMERGE_ALLOW_SKIP=1 (then it says so and stops after step 1).
set -euo pipefail
bin=$1 toolchain=$2
shift 2
fail() { echo "test-installed: $*" >&2; exit 1; }
skip() {
    [[ "${VMERGE_ALLOW_SKIP:-}" == 1 ]] || fail "$* (VMERGE_ALLOW_SKIP=1 skips this step instead of failing)"
    echo "test-installed: skipped: $*"
    exit 0
}
[ -x "$bin" ] || fail "$bin: not an executable"
if [ "$(uname -s)" = Darwin ]; then
    otool -L "$bin" | grep -q "$toolchain" && fail "$bin links a library inside $toolchain"
    echo "test-installed: $bin links no library of the toolchain (macOS: the Swift runtime is the system's)"
    exit 0
fi
libs=$(ldd "$bin")
if grep -q "not found" <<<"$libs"; then fail "$bin needs libraries this machine lacks: $(grep 'not found' <<<"$libs" | tr -s ' \t' ' ')"; fi
if grep -q "$toolchain" <<<"$libs"; then fail "$bin loads libraries from the toolchain ($toolchain): $(grep "$toolchain" <<<"$libs" | tr -s ' \t' ' ')"; fi
if grep -Eq "libswift|libFoundation|libdispatch|libBlocksRuntime" <<<"$libs"; then
    fail "$bin links the Swift runtime dynamically: $(grep -E 'libswift|libFoundation|libdispatch' <<<"$libs" | tr -s ' \t' ' ')"
fi
echo "test-installed: $bin links only: $(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | paste -sd' ')"
run_hidden=(unshare --mount)
if [ "$(id -u)" != 0 ]; then
    if sudo -n true 2>/dev/null; then run_hidden=(sudo -n unshare --mount); else
        skip "not root and no sudo: the run with the toolchain hidden cannot be made"
    fi
fi
# A container without the right to mount cannot hide anything: said, not failed (step 1 stands).
if ! "${run_hidden[@]}" bash -c 'mount -t tmpfs -o size=1m none "$1"' probe "$toolchain" 2>/dev/null; then
    skip "no private mount namespace here (no CAP_SYS_ADMIN?): the run with the toolchain hidden cannot be made"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Absolute paths: the namespace's shell starts in the same folder, but say it plainly.
inputs=()
for f in "$@"; do inputs+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
"${run_hidden[@]}" bash -c '
    set -euo pipefail
    mount -t tmpfs -o size=1m none "$1"
    [ -z "$(ls -A "$1")" ] || { echo "test-installed: could not hide $1" >&2; exit 1; }
    bin=$2 out=$3; shift 3
    "$bin" --version | head -1
    "$bin" -q "$@" -o "$out/demo.mp4"
' hide "$toolchain" "$bin" "$out" "${inputs[@]}"
probe=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$out/demo.mp4" | paste -sd' ')
[ "$probe" = "h264,320,240 aac" ] || fail "the merge made something else: $probe"
echo "test-installed: with $toolchain hidden, merged $# fixtures into $probe"
