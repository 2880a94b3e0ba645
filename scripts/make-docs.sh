#!/bin/bash
# make-docs.sh BIN_PATH OUTPUT [CATALOGUE]: the VMerge API's DocC archive, from the modules the
# build left in BIN_PATH (public symbols only) and the catalogue (Sources/VMerge/VMerge.docc).
# A warning (a broken link, an unknown symbol) is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1 out=$2 catalogue=${3:-Sources/VMerge/VMerge.docc}

# The toolchain's own tools; on macOS they may sit behind xcrun.
tool() { if command -v "$1" >/dev/null; then "$@"; else xcrun "$@"; fi; }

symbols=$(mktemp -d)
trap 'rm -rf "$symbols"' EXIT
flags=(-I "$bin/Modules")
for map in "$bin"/*.build/module.modulemap Sources/C{FFmpeg,AVUtil,LibPQ,Curl}/module.modulemap; do
    [ -f "$map" ] && flags+=(-Xcc "-fmodule-map-file=$map")
done
for flag in $(pkg-config --cflags libavformat libpq libcurl); do flags+=(-Xcc "$flag"); done
triple=$(tool swiftc -print-target-info | sed -n 's/.*"triple": *"\([^"]*\)".*/\1/p' | head -1)
tool swift-symbolgraph-extract -module-name VMerge -target "$triple" -minimum-access-level public \
    -output-dir "$symbols" "${flags[@]}"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
tool docc convert "$catalogue" --fallback-display-name VMerge --fallback-bundle-identifier org.vmerge.VMerge \
    --additional-symbol-graph-dir "$symbols" --output-path "$out" --warnings-as-errors \
    --transform-for-static-hosting
echo "docs: $out"
