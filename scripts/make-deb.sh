#!/usr/bin/env bash
# Packs a staged `make install DESTDIR=STAGE PREFIX=/usr` into a Debian package.
#   scripts/make-deb.sh STAGE OUTDIR      prints the .deb's path
# Depends is what the binary really links, found by dpkg-shlibdeps from the libraries' own shlibs
# and symbols files (libavcodec59 (>= 7:5.1), libpq5, libc6, ...), so a package built against
# another FFmpeg depends on that one. The man page is compressed as Debian policy asks; the
# version is the binary's own (`vmerge --version`); the binary is stripped.
set -euo pipefail
umask 022   # the package's files and DEBIAN/ are 0644/0755 whatever the caller's umask
fail() { echo "make-deb: $*" >&2; exit 1; }
[[ $# -eq 2 ]] || fail "usage: $0 STAGE OUTDIR"
stage=$(cd "$1" && pwd)
mkdir -p "$2"
outdir=$(cd "$2" && pwd)
bin=$stage/usr/bin/vmerge
[[ -x "$bin" ]] || fail "$bin is missing: run make install DESTDIR=$stage PREFIX=/usr first"
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture strip; do command -v "$tool" >/dev/null || fail "$tool is needed (Debian's dpkg-dev)"; done

version=$("$bin" --version | sed -n '1s/^vmerge //p') || fail "$bin --version failed"
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || fail "'$version' from $bin --version is not a package version"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

root=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$root" "$work"' EXIT
cp -a "$stage/." "$root/"
# Stripped, as Debian's packages are (dh_strip): 76 MB -> 60 MB.
strip --strip-unneeded "$root/usr/bin/vmerge"
if LC_ALL=C readelf -S "$root/usr/bin/vmerge" | grep -q '\.debug_info\|\.symtab'; then fail "the binary is not stripped"; fi
# No run path: the libraries come from the system's folders (a run path of $ORIGIN would load
# them from /usr/bin first; lintian's custom-library-search-path).
runpath=$(LC_ALL=C readelf -d "$root/usr/bin/vmerge" | grep -o 'R[UN]*PATH.*' || true)
[[ -z "$runpath" ]] || fail "the binary has a run path ($runpath): build it with make release"
man=$root/usr/share/man/man1/vmerge.1
[[ -f "$man" ]] && gzip -9n "$man"
doc=$root/usr/share/doc/vmerge
mkdir -p "$doc"
here=$(cd "$(dirname "$0")/.." && pwd)
gzip -9nc "$here/README.md" > "$doc/README.md.gz"
cat > "$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vmerge
Comment: vmerge links the distribution's FFmpeg libraries (LGPL/GPL as the distribution builds
 them) and libpq (PostgreSQL licence); the Swift runtime and Foundation are linked in (Apache-2.0
 with Runtime Library Exception).

Files: *
Copyright: the vmerge developers
License: none-chosen
 No licence has been chosen for vmerge yet: this package is for the team's own machines and tests.
EOF
# A native package's changelog, one entry for the commit it was built from; its date is the
# commit's, so building the same commit twice gives the same package.
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
when=$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)
{
    echo "vmerge ($version) unstable; urgency=medium"
    echo
    echo "  * Built by make deb from commit $commit."
    echo
    echo " -- vmerge developers <vmerge@localhost>  $(LC_ALL=C date -R -u -d "@$when")"
} | gzip -9n > "$doc/changelog.gz"

# dpkg-shlibdeps reads a source package's debian/control: a minimal one of our own.
mkdir -p "$work/debian"
printf 'Source: vmerge\n\nPackage: vmerge\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "$root/usr/bin/vmerge" 2>"$work/shlibdeps.err" | sed -n 's/^shlibs:Depends=//p') ||
    { cat "$work/shlibdeps.err" >&2; fail "dpkg-shlibdeps failed"; }
[[ "$depends" == *libavcodec* && "$depends" == *libpq* ]] || fail "dpkg-shlibdeps found no FFmpeg or libpq dependency: '$depends'"

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: vmerge
Version: $version
Architecture: $arch
Maintainer: vmerge developers <vmerge@localhost>
Installed-Size: $size
Depends: $depends
Section: video
Priority: optional
Description: merge phone clip segments into one small, upright, web-ready MP4
 vmerge drops clips shorter than a minimum, turns each upright from its own
 display matrix, centre-crops to 4:3 at 320x240, joins picture and sound with
 no drift, and writes an index-first H.264/AAC MP4. Batch, watch folders and a
 PostgreSQL job queue run it unattended.
EOF
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$when" {} +
deb=$outdir/vmerge_${version}_${arch}.deb
SOURCE_DATE_EPOCH=$when dpkg-deb --root-owner-group -Zxz --build "$root" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
echo "$deb"
