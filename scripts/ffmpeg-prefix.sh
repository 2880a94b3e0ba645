#!/usr/bin/env bash
# Builds an upstream FFmpeg release into a cached prefix, for `make test-ffmpeg FFMPEG_VERSION=X`, and
# prints the prefix on stdout. The source is Debian's: the .orig tarball of the ffmpeg source package
# whose upstream version is X, found in the Sources indices of sid, experimental, trixie and
# trixie-security through an apt configuration of this script's own (its own sources list, state
# and cache under the cache folder: the system's apt lists and its FFmpeg are never touched), and
# checked against the index's size and SHA-256. Built with what Debian's own builds have that vmerge
# uses: shared libraries, GPL, libx264 (the encoder) and libzimg (zscale, for HDR tone mapping).
#
#   scripts/ffmpeg-prefix.sh VERSION CACHE    e.g. 9.0.2 .build/ffmpeg  ->  .build/ffmpeg/9.0.2
#
# A finished prefix carries a stamp naming the tarball's hash and the configure line; a second run
# with the same ones prints it at once. Runs of the same version wait for each other (flock).
set -euo pipefail

log() { echo "ffmpeg-prefix: $*" >&2; }
die() { log "$*"; exit 1; }

[[ $# -eq 2 && -n "$1" && -n "$2" ]] || die "usage: $0 VERSION CACHE (e.g. 9.0.2 .build/ffmpeg)"
version=$1
[[ "$version" =~ ^[0-9]+(\.[0-9]+)+$ ]] || die "'$version' is not an FFmpeg release number (e.g. 9.0.2, 7.1.5)"
mkdir -p "$2"
cache=$(cd "$2" && pwd)
prefix=$cache/$version           # the prefix itself: include, lib, and the stamp
here=$cache/work-$version       # the tarball, the build's logs, the lock
mkdir -p "$here"
exec 9>"$here/lock"
flock 9

configure_flags=(--enable-shared --disable-static --enable-gpl --enable-libx264 --enable-libzimg
    --disable-doc --disable-programs --disable-debug)

# apt with everything of its own: sources, lists, cache; no lock on the system's.
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/preferences.d" "$apt_dir/sources.list.d"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r "$keyring" ]] || die "$keyring is missing (Debian's package debian-archive-keyring)"
cat > "$apt_dir/sources.list" <<EOF
deb-src [signed-by=$keyring] http://deb.debian.org/debian sid main
deb-src [signed-by=$keyring] http://deb.debian.org/debian experimental main
deb-src [signed-by=$keyring] http://deb.debian.org/debian trixie main
deb-src [signed-by=$keyring] http://security.debian.org/debian-security trixie-security main
EOF
apt_options=(-o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=/dev/null"
    -o "Dir::Cache=$apt_dir/cache" -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d" -o "Dir::Etc::Preferences=/dev/null"
    -o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")

find_tarball() {
    # The newest Debian revision of upstream $version, then the tarball's URI, size and SHA-256.
    local full
    full=$(apt-cache "${apt_options[@]}" showsrc ffmpeg 2>/dev/null | sed -n 's/^Version: //p' |
        grep -E "^([0-9]+:)?${version//./\\.}-" | sort -V | tail -1 || true)
    [[ -n "$full" ]] || return 1
    apt-get "${apt_options[@]}" source --print-uris "ffmpeg=$full" 2>/dev/null |
        grep -E "^'[^']+' ffmpeg_${version//./\\.}\.orig\.tar\.xz " | head -1
}

stamp_of() { printf '%s\n' "$1" "${configure_flags[*]}"; }

line=$(find_tarball || true)
if [[ -z "$line" ]]; then
    log "updating the Sources indices ($apt_dir)"
    apt-get "${apt_options[@]}" -qq update >&2 || die "apt-get update failed for $apt_dir/sources.list"
    line=$(find_tarball || true)
fi
if [[ -z "$line" ]]; then
    [[ -f "$prefix/.vmerge-built" ]] && { log "FFmpeg $version is no longer in Debian's archive; using the prefix built earlier"; echo "$prefix"; exit 0; }
    available=$(apt-cache "${apt_options[@]}" showsrc ffmpeg 2>/dev/null | sed -n 's/^Version: \([0-9]*:\)\{0,1\}\([^-]*\)-.*/\2/p' | sort -Vu | paste -sd' ')
    die "FFmpeg $version is not in Debian's archive (sid, experimental, trixie, trixie-security); it has: ${available:-nothing}"
fi
read -r uri file size sha <<<"$line"
uri=${uri//\'/}
sha=${sha#SHA256:}
[[ "$sha" =~ ^[0-9a-f]{64}$ ]] || die "the index gives no SHA-256 for $file"

if [[ -f "$prefix/.vmerge-built" && "$(cat "$prefix/.vmerge-built")" == "$(stamp_of "$sha")" ]]; then
    echo "$prefix"
    exit 0
fi

tarball=$here/$file
if [[ ! -f "$tarball" ]] || ! echo "$sha  $tarball" | sha256sum --quiet -c - 2>/dev/null; then
    log "downloading $uri"
    rm -f "$tarball.part"
    curl -fsSL --retry 3 -o "$tarball.part" "$uri" || die "could not download $uri"
    [[ "$(stat -c %s "$tarball.part")" == "$size" ]] || die "$file: $(stat -c %s "$tarball.part") bytes, the index says $size"
    echo "$sha  $tarball.part" | sha256sum --quiet -c - 2>/dev/null ||
        die "$file: SHA-256 $(sha256sum "$tarball.part" | cut -d' ' -f1) is not the index's $sha"
    mv "$tarball.part" "$tarball"
fi
log "$file: $size bytes, SHA-256 $sha as in Debian's Sources index"

for tool in nasm make cc pkg-config; do command -v "$tool" >/dev/null || die "$tool is needed to build FFmpeg (make test-ffmpeg installs it)"; done
for lib in x264 zimg; do pkg-config --exists "$lib" || die "lib$lib's development files are needed (make test-ffmpeg installs them)"; done

src=$here/src
rm -rf "$src" "$prefix"
mkdir -p "$src"
tar -xJf "$tarball" -C "$src" --strip-components=1
log "building FFmpeg $version into $prefix ($(nproc) jobs; about 10-20 min on 2 cores)"
start=$(date +%s)
(
    cd "$src"
    ./configure --prefix="$prefix" "${configure_flags[@]}" > "$here/configure.log" 2>&1 ||
        { tail -20 "$here/configure.log" >&2; exit 1; }
    make -j"$(nproc)" > "$here/build.log" 2>&1 || { tail -30 "$here/build.log" >&2; exit 1; }
    make install > "$here/install.log" 2>&1 || { tail -20 "$here/install.log" >&2; exit 1; }
) || die "building FFmpeg $version failed (logs in $here)"
rm -rf "$src"
stamp_of "$sha" > "$prefix/.vmerge-built"
log "built FFmpeg $version in $(( $(date +%s) - start )) s"
echo "$prefix"
