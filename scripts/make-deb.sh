#!/usr/bin/env bash
# Packs a staged `make install DESTDIR=STAGE PREFIX=/usr` into a Debian package.
#   scripts/make-deb.sh STAGE OUTDIR      prints the .deb's path
# Depends is what the binary really links, found by dpkg-shlibdeps from the libraries' own shlibs
# and symbols files (libavcodec59 (>= 7:5.1), libpq5, libc6, ...), so a package built against
# another FFmpeg depends on that one. The man page is compressed as Debian policy asks; the
# version is the binary's own (`vmerge --version`); the binary is stripped.
# The package also carries the systemd template units (packaging/systemd; they run as the system
# user vmerge that its postinst makes), /etc/vmerge's conf files (conffiles), the copyright file
# (Apache-2.0, and what the linked libraries bring) and lintian overrides (packaging/lintian).
# Who made it and when come from packaging/debian/changelog (its newest entry, which must be the
# binary's version), not from git: `docker build` sends no .git, and the same source gives the same
# package either way. DEB_MAINTAINER ("Name <address>") names another maintainer (a distributor's own).
set -euo pipefail
umask 022   # the package's files and DEBIAN/ are 0644/0755 whatever the caller's umask
fail() { echo "make-deb: $*" >&2; exit 1; }
[[ $# -eq 2 ]] || fail "usage: $0 STAGE OUTDIR"
stage=$(cd "$1" && pwd)
mkdir -p "$2"
outdir=$(cd "$2" && pwd)
bin=$stage/usr/bin/vmerge
[[ -x "$bin" ]] || fail "$bin is missing: run make install DESTDIR=$stage PREFIX=/usr first"
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture dpkg-parsechangelog strip; do command -v "$tool" >/dev/null || fail "$tool is needed (Debian's dpkg-dev)"; done

version=$("$bin" --version | sed -n '1s/^vmerge //p') || fail "$bin --version failed"
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || fail "'$version' from $bin --version is not a package version"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

root=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$root" "$work"' EXIT
cp -a "$stage/." "$root/"
# Stripped, as Debian's packages are (dh_strip, with its .comment and .note removal): 82 MB -> 61 MB.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/vmerge"
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
# The README's pages by reader (its links point at them as docs/NAME.md).
mkdir -p "$doc/docs"
for page in "$here"/docs/*.md ; do gzip -9nc "$page" > "$doc/docs/$(basename "$page").gz"; done
changelog=$here/packaging/debian/changelog
[[ -f "$changelog" ]] || fail "$changelog is missing"
newest=$(dpkg-parsechangelog -l "$changelog" -S Version) || fail "$changelog cannot be read"
[[ "$newest" == "$version" ]] ||
    fail "$changelog's newest entry is $newest, the binary is $version: add an entry for $version"
when=$(dpkg-parsechangelog -l "$changelog" -S Timestamp)
maintainer=${DEB_MAINTAINER:-$(dpkg-parsechangelog -l "$changelog" -S Maintainer)}
[[ "$maintainer" =~ ^[^\<\>]+\ \<[^@\<\>\ ]+@[^@\<\>\ ]+\>$ && "$maintainer" != *@localhost\> ]] ||
    fail "no usable maintainer ('$maintainer'): set DEB_MAINTAINER='Name <address>'"
year=$(LC_ALL=C date -u -d "@$when" +%Y)
first=$(LC_ALL=C date -u -d "@$(dpkg-parsechangelog -l "$changelog" --all -S Timestamp | sort -n | head -1)" +%Y)
years=$first
[[ "$years" == "$year" ]] || years="$years-$year"
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vmerge
Upstream-Contact: $maintainer
Source: vmerge has no public homepage; this package was built by make deb from its source,
 version $version.
Comment: vmerge's own source is under the Apache License 2.0. The binary in this package is linked
 with other works, and their licences apply to it as distributed:
 .
 FFmpeg's libraries (libavcodec, libavformat, libavfilter, libavutil, libswscale, libswresample),
 linked dynamically: Debian builds FFmpeg with --enable-gpl, with GPL-only parts (libpostproc) and
 libx264, so its libraries are under the GPL (version 2 or later), and the vmerge binary as linked
 to them is distributed under the terms of the GNU General Public License as a whole. As
 Apache-2.0 code combines with GPL version 3 but not with version 2, that is the GPL version 3 or
 later (/usr/share/common-licenses/GPL-3; the libav* packages' copyright files say more).
 vmerge's source on its own stays Apache-2.0.
 .
 The Swift runtime, standard library and Foundation, linked statically into the binary:
 Apache-2.0 with the Runtime Library Exception (the Swift project's licence); the ICU data in
 Foundation: the Unicode licence.
 .
 libpq (PostgreSQL's client library), linked dynamically: the PostgreSQL Licence (see the libpq5
 package's copyright file).
 .
 libmicrohttpd (the HTTP server of vmerge dashboard), linked dynamically: the GNU Lesser General
 Public License, version 2.1 or later (see the libmicrohttpd12 package's copyright file).
 .
 libcurl (the HTTP and S3 client of remote inputs and outputs), linked dynamically: the curl
 licence, an MIT/X derivative (see the libcurl4 package's copyright file).
 .
 libxml2 (the XML parser under Foundation's XMLParser, which reads object storage's answers),
 linked dynamically: the MIT licence (see the libxml2 package's copyright file).

Files: *
Copyright: $years the vmerge developers
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 in compliance with the License. You may obtain a copy of the License at
 .
 https://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software distributed under the License
 is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 or implied. See the License for the specific language governing permissions and limitations
 under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can be found in
 "/usr/share/common-licenses/Apache-2.0".
EOF
# A native package's changelog is its source's own (dated entries, so building the same source
# twice gives the same package).
gzip -9nc "$changelog" > "$doc/changelog.gz"
# The systemd template units (not in `make install`: they run /usr/bin/vmerge as the user the
# package makes), the conf files in /etc/vmerge (conffiles: dpkg keeps an administrator's edits),
# and the lintian overrides, each with its reason.
install -D -m 644 -t "$root/usr/lib/systemd/system" "$here"/packaging/systemd/*.service
install -D -m 644 "$here/packaging/etc/worker.conf" "$root/etc/vmerge/worker.conf"
install -D -m 644 "$here/packaging/etc/watch.conf.example" "$root/etc/vmerge/watch.conf.example"
install -D -m 644 "$here/packaging/etc/dashboard.conf.example" "$root/etc/vmerge/dashboard.conf.example"
install -D -m 644 "$here/packaging/lintian/vmerge" "$root/usr/share/lintian/overrides/vmerge"

# dpkg-shlibdeps reads a source package's debian/control: a minimal one of our own.
mkdir -p "$work/debian"
printf 'Source: vmerge\n\nPackage: vmerge\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "$root/usr/bin/vmerge" 2>"$work/shlibdeps.err" | sed -n 's/^shlibs:Depends=//p') ||
    { cat "$work/shlibdeps.err" >&2; fail "dpkg-shlibdeps failed"; }
[[ "$depends" == *libavcodec* && "$depends" == *libpq* && "$depends" == *libmicrohttpd* && "$depends" == *libcurl* ]] ||
    fail "dpkg-shlibdeps found no FFmpeg, libpq, libmicrohttpd or libcurl dependency: '$depends'"

mkdir -p "$root/DEBIAN"
install -m 755 "$here/packaging/debian/postinst" "$here/packaging/debian/postrm" "$root/DEBIAN/"
(cd "$root" && find etc -type f | LC_ALL=C sort | sed 's|^|/|') > "$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: vmerge
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends, adduser
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
