#!/usr/bin/env bash
# Builds an upstream FFmpeg release into a cached prefix, for `make test-ffmpeg FFMPEG_VERSION=X`, and
# prints the prefix on stdout.
#
#   scripts/ffmpeg-prefix.sh VERSION CACHE    e.g. 9.0.2 ~/.cache/vmerge/ffmpeg  ->  ~/.cache/vmerge/ffmpeg/9.0.2
#
# CACHE is outside the clone (the Makefile's FFMPEG_CACHE), shared by the user's clones on the machine.
#
# The source is Debian's: the .orig tarball of the ffmpeg source package whose upstream version is X.
# - A release listed in scripts/ffmpeg-releases.txt must have that size and SHA-256 (pinned from
#   Debian's Sources index), wherever it comes from.
# - It is found in the Sources indices of sid, experimental, trixie and trixie-security through an
#   apt configuration wholly of this script's own (sources list, lists, cache, conf parts and
#   preferences under CACHE/apt; apt checks the indices' signatures and dates against Debian's
#   keyring): the system's apt state and its FFmpeg are never touched.
# - A pinned release the archive has dropped is fetched from snapshot.debian.org by its SHA-1.
# Built with what Debian's own builds have that vmerge uses: shared libraries, GPL, libx264 (the
# encoder) and libzimg (zscale, for HDR tone mapping). A finished prefix carries a stamp (tarball
# hash, configure line, the x264/zimg/compiler versions it was built with); with a matching stamp
# the prefix is printed at once, with no network. A run that finds its prefix built shares it (with
# the suites running on it, which make test-ffmpeg holds a shared lock for); a run that may build it
# holds it alone, waiting for those; every run holds the apt folder alone while it uses it (flock).
set -euo pipefail

log() { echo "ffmpeg-prefix: $*" >&2; }
die() { log "$*"; exit 1; }

[[ $# -eq 2 && -n "$1" && -n "$2" ]] || die "usage: $0 VERSION CACHE (e.g. 9.0.2 ~/.cache/vmerge/ffmpeg)"
version=$1
[[ "$version" =~ ^[0-9]+(\.[0-9]+)+$ ]] || die "'$version' is not an FFmpeg release number (e.g. 9.0.2, 7.1.5)"
mkdir -p "$2"
cache=$(cd "$2" && pwd)
prefix=$cache/$version           # the prefix itself: include, lib, and the stamp
here=$cache/work-$version        # the tarball, the build's logs, the lock
mkdir -p "$here"
exec 9>"$here/lock"
flock -s 9

for tool in nasm make cc pkg-config curl sha256sum; do
    command -v "$tool" >/dev/null || die "$tool is needed to build FFmpeg (make test-ffmpeg installs it)"
done
for lib in x264 zimg; do pkg-config --exists "$lib" || die "lib$lib's development files are needed (make test-ffmpeg installs them)"; done
configure_flags=(--enable-shared --disable-static --enable-gpl --enable-libx264 --enable-libzimg
    --disable-doc --disable-programs --disable-debug)

# The pinned size, SHA-256 and SHA-1, if this release is listed.
pinned_size= pinned_sha= pinned_sha1=
releases=$(dirname "$0")/ffmpeg-releases.txt
if [[ -f "$releases" ]]; then
    read -r _ pinned_size pinned_sha pinned_sha1 _ < <(awk -v v="$version" '$1 == v' "$releases") || true
fi

stamp() {   # $1: the tarball's SHA-256
    printf '%s\n' "$1" "${configure_flags[*]}" "x264 $(pkg-config --modversion x264) zimg $(pkg-config --modversion zimg)" \
        "$(cc --version | head -1)"
}
built() { [[ -f "$prefix/.vmerge-built" && "$(cat "$prefix/.vmerge-built")" == "$(stamp "$1")" ]]; }

# A pinned release already built: no network at all.
pinned_built() { [[ -n "$pinned_sha" ]] && built "$pinned_sha"; }
if pinned_built; then
    echo "$prefix"
    exit 0
fi
# What follows may build the prefix: the lock alone, once no other run or suite uses the prefix
# (flock converts the lock, not atomically, so another run may have built it meanwhile).
flock 9
if pinned_built; then
    echo "$prefix"
    exit 0
fi

apt_dir=$cache/apt
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt_options=(-o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=/dev/null"
    -o "Dir::Cache=$apt_dir/cache" -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d" -o "Dir::Etc::Parts=$apt_dir/apt.conf.d"
    -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d"
    -o "Acquire::Check-Valid-Until=true" -o "APT::Update::Error-Mode=any" -o "APT::Sandbox::User=$(id -un)")

# "URI SIZE SHA256" of the tarball, from the newest Debian revision of upstream $version in the
# indices apt has now; nothing when they lack it.
from_index() {
    local full
    full=$(apt-cache "${apt_options[@]}" showsrc ffmpeg 2>/dev/null | sed -n 's/^Version: //p' |
        grep -E "^([0-9]+:)?${version//./\\.}-" | sort -V | tail -1 || true)
    [[ -n "$full" ]] || return 0
    apt-get "${apt_options[@]}" source --print-uris "ffmpeg=$full" 2>/dev/null |
        sed -n "s/^'\([^']*\)' ffmpeg_${version//./\\.}\.orig\.tar\.xz \([0-9]*\) SHA256:\([0-9a-f]\{64\}\)$/\1 \2 \3/p" | head -1
}

file=ffmpeg_$version.orig.tar.xz
tarball=$here/$file
fetch() {   # $1: URI, $2: size, $3: SHA-256; leaves the checked tarball in place
    log "downloading $1"
    rm -f "$tarball.part"
    curl -fsSL --retry 3 --connect-timeout 20 -o "$tarball.part" "$1" || { log "could not download $1"; return 1; }
    local size sha
    size=$(stat -c %s "$tarball.part") sha=$(sha256sum "$tarball.part" | cut -d' ' -f1)
    [[ "$size" == "$2" && "$sha" == "$3" ]] || { log "$1: $size bytes, SHA-256 $sha; expected $2 bytes, $3"; return 1; }
    mv "$tarball.part" "$tarball"
}

want_size=$pinned_size want_sha=$pinned_sha
if [[ -z "$want_sha" || ! -f "$tarball" ]] || ! echo "$want_sha  $tarball" | sha256sum --quiet -c - >/dev/null 2>&1; then
    exec 8>"$cache/apt.lock"
    flock 8
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/preferences.d" \
        "$apt_dir/sources.list.d" "$apt_dir/apt.conf.d"
    [[ -r "$keyring" ]] || die "$keyring is missing (Debian's package debian-archive-keyring)"
    cat > "$apt_dir/sources.list" <<EOF
deb-src [signed-by=$keyring] http://deb.debian.org/debian sid main
deb-src [signed-by=$keyring] http://deb.debian.org/debian experimental main
deb-src [signed-by=$keyring] http://deb.debian.org/debian trixie main
deb-src [signed-by=$keyring] http://security.debian.org/debian-security trixie-security main
EOF
    # Always updated: lists from an earlier run may name a revision the archive has replaced.
    log "updating Debian's Sources indices ($apt_dir)"
    apt-get "${apt_options[@]}" -qq update >&2 || log "apt-get update failed (no network, or the indices did not verify)"
    found=$(from_index)
    flock -u 8
    got=
    if [[ -n "$found" ]]; then
        read -r uri size sha <<<"$found"
        if [[ -n "$pinned_sha" && ( "$sha" != "$pinned_sha" || "$size" != "$pinned_size" ) ]]; then
            die "$file: Debian's index now gives $size bytes, SHA-256 $sha; scripts/ffmpeg-releases.txt pins $pinned_size bytes, $pinned_sha"
        fi
        want_size=$size want_sha=$sha
        built "$want_sha" && { echo "$prefix"; exit 0; }
        if [[ -f "$tarball" ]] && echo "$sha  $tarball" | sha256sum --quiet -c - >/dev/null 2>&1; then
            got=cached
        else
            fetch "$uri" "$size" "$sha" && got=archive
        fi
    fi
    if [[ -z "$got" && -n "$pinned_sha1" ]]; then
        log "$file is not in Debian's archive now: trying snapshot.debian.org"
        fetch "https://snapshot.debian.org/file/$pinned_sha1" "$pinned_size" "$pinned_sha" && got=snapshot
    fi
    if [[ -z "$got" ]]; then
        available=$(apt-cache "${apt_options[@]}" showsrc ffmpeg 2>/dev/null |
            sed -n 's/^Version: \([0-9]*:\)\{0,1\}\([^-]*\)-.*/\2/p' | sort -Vu | paste -sd' ')
        die "could not get FFmpeg $version's source: not in Debian's archive (sid, experimental, trixie, trixie-security has: ${available:-nothing, or no network})${pinned_sha1:+ nor on snapshot.debian.org}"
    fi
fi
log "$file: $want_size bytes, SHA-256 $want_sha${pinned_sha:+ (pinned in scripts/ffmpeg-releases.txt)}"
built "$want_sha" && { echo "$prefix"; exit 0; }

src=$here/src
rm -rf "$src" "$prefix"
mkdir -p "$src"
tar -xJf "$tarball" -C "$src" --strip-components=1
log "building FFmpeg $version into $prefix ($(nproc) jobs; about 10 min on 2 cores)"
start=$(date +%s)
(
    cd "$src" || exit 1
    ./configure --prefix="$prefix" "${configure_flags[@]}" > "$here/configure.log" 2>&1 ||
        { tail -20 "$here/configure.log" >&2; exit 1; }
    make -j"$(nproc)" > "$here/build.log" 2>&1 || { tail -30 "$here/build.log" >&2; exit 1; }
    make install > "$here/install.log" 2>&1 || { tail -20 "$here/install.log" >&2; exit 1; }
) || die "building FFmpeg $version failed (logs in $here)"
rm -rf "$src"
stamp "$want_sha" > "$prefix/.vmerge-built"
log "built FFmpeg $version in $(( $(date +%s) - start )) s"
echo "$prefix"
