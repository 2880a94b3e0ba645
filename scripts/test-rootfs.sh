#!/usr/bin/env bash
# vmerge's package and container image, tried the way users get them, in a clean minimal Debian 12
# root (debootstrap --variant=minbase: the same package set debian:bookworm-slim starts from).
#   scripts/test-rootfs.sh deb   CACHE DEB FIXTURE...   apt-get install ./vmerge.deb, merge, remove
#   scripts/test-rootfs.sh image CACHE DEB FIXTURE...   the Dockerfile's last stage, line by line,
#                                                       then its ENTRYPOINT as its USER in its WORKDIR
# CACHE keeps the debootstrapped root (made once, a few minutes) and apt's downloaded packages; each
# run works on a fresh copy of the root and removes it. Needs root (or sudo) for debootstrap, chroot
# and mounts; where it has neither, it says so and stops.
set -euo pipefail
say() { echo "test-rootfs: $*" >&2; }
fail() { say "$*"; exit 1; }
[[ $# -ge 4 ]] || fail "usage: $0 deb|image CACHE DEB FIXTURE..."
mode=$1 cache_arg=$2 deb=$3
shift 3
[[ "$mode" == deb || "$mode" == image ]] || fail "mode is deb or image, not '$mode'"
[[ -f "$deb" ]] || fail "$deb: no such package (make deb)"
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ "$(id -u)" != 0 ]]; then
    if sudo -n true 2>/dev/null; then exec sudo -n -E bash "$0" "$mode" "$cache_arg" "$deb" "$@"; fi
    say "not root and no sudo: the clean-root test was skipped"
    exit 0
fi
mkdir -p "$cache_arg"
cache=$(cd "$cache_arg" && pwd)
suite=bookworm mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=$cache/$suite-minbase
exec 9>"$cache/lock"
flock 9

if [[ ! -f "$base/.vmerge-rootfs" ]]; then
    command -v debootstrap >/dev/null || fail "debootstrap is needed (make test-deb installs it)"
    say "making a minimal Debian 12 root in $base (once; cached)"
    rm -rf --one-file-system "$base.tmp"
    start=$(date +%s)
    debootstrap --variant=minbase "$suite" "$base.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 ||
        { tail -20 "$cache/debootstrap.log" >&2; fail "debootstrap failed (log: $cache/debootstrap.log)"; }
    echo "$suite $mirror" > "$base.tmp/.vmerge-rootfs"
    rm -rf --one-file-system "$base"
    mv "$base.tmp" "$base"
    say "root made in $(( $(date +%s) - start )) s ($(du -sh "$base" | cut -f1))"
fi

root=$cache/run-$mode-$$
mounts=()
cleanup() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
    # Nothing may be mounted under the root when it is removed (--one-file-system keeps to it).
    if ! grep -q " $root/" /proc/mounts; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
cp -a "$base" "$root"
mkdir -p "$cache/apt-archives/partial"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives" && mounts+=("$root/var/cache/apt/archives")
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# No toolchain, no FFmpeg, no vmerge: what a fresh machine has.
[[ ! -e "$root/usr/bin/ffmpeg" && ! -e "$root/usr/bin/swift" ]] || fail "the base root is not clean"

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

mkdir -p "$root/tmp/fixtures"
cp "$@" "$root/tmp/fixtures/"
names=()
for f in "$@"; do names+=("$(basename "$f")"); done

check_output() {   # $1: the output's path inside the root
    local out=$root$1
    [[ -s "$out" ]] || fail "no output at $1"
    local streams
    streams=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$out" | paste -sd' ')
    [[ "$streams" == "h264,320,240 aac" ]] || fail "$1 holds '$streams', not h264 320x240 + aac"
    # Index first: the moov box before the mdat box.
    local order
    order=$(python3 - "$out" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
at, names = 0, []
while at + 8 <= len(data):
    size, kind = struct.unpack('>I4s', data[at:at + 8])
    size = struct.unpack('>Q', data[at + 8:at + 16])[0] if size == 1 else size
    names.append(kind.decode('latin-1'))
    if size < 8: break
    at += size
print(' '.join(n for n in names if n in ('moov', 'mdat')))
EOF
)
    [[ "$order" == "moov mdat" ]] || fail "$1: boxes '$order', not moov before mdat"
    say "$1: $streams, moov before mdat, $(stat -c %s "$out") bytes"
}

if [[ "$mode" == deb ]]; then
    cp "$deb" "$root/tmp/"
    pkg=/tmp/$(basename "$deb")
    say "apt-get install $pkg in a clean Debian 12 root"
    in_root apt-get update -qq
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" > "$cache/install.log" 2>&1 ||
        { tail -20 "$cache/install.log" >&2; fail "apt-get install $pkg failed"; }
    say "installed: $(in_root dpkg-query -W -f='${Package} ${Version}, depends on ${Depends}' vmerge)"
    in_root ldd /usr/bin/vmerge | grep -q "not found" && fail "vmerge needs libraries its package does not bring: $(in_root ldd /usr/bin/vmerge | grep 'not found' | paste -sd' ')"
    in_root vmerge --version | head -2 | paste -sd' ' | sed 's/^/test-rootfs: /' >&2
    for f in /usr/share/man/man1/vmerge.1.gz /usr/share/bash-completion/completions/vmerge; do
        in_root test -s "$f" || fail "the package did not install $f"
    done
    in_root sh -c 'cd /tmp/fixtures && vmerge -q "$@" -o /tmp/demo.mp4' sh "${names[@]}" || fail "vmerge failed on the fixtures in the clean root"
    check_output /tmp/demo.mp4
    in_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq vmerge > /dev/null 2>&1 || fail "apt-get remove vmerge failed"
    in_root test ! -e /usr/bin/vmerge || fail "apt-get remove left /usr/bin/vmerge"
    say "deb: pass"
    exit 0
fi

# image: the Dockerfile's last stage, in order. COPY --from=build takes the package from dist/ (what
# the build stage's `make deb` makes); anything else in it is refused, so the test cannot drift from
# the file silently.
dockerfile=$here/Dockerfile
[[ -f "$dockerfile" ]] || fail "$dockerfile is missing"
stage=$(awk '/^FROM /{n++} {print n "\t" $0}' "$dockerfile" | awk -F'\t' -v last="$(grep -c '^FROM ' "$dockerfile")" '$1 == last {print $2}')
grep -q '^FROM debian:bookworm-slim' <<<"$stage" || fail "the Dockerfile's run stage is not FROM debian:bookworm-slim"
user=root workdir=/ entrypoint= cmd=
envs=()
json_words() { python3 -c 'import json,sys; print("\0".join(json.loads(sys.argv[1])), end="")' "$1"; }
# Join continued lines, drop comments, then take each instruction.
while IFS= read -r line; do
    instruction=${line%% *} rest=${line#* }
    case "$instruction" in
        FROM) ;;
        COPY)
            [[ "$rest" =~ ^--from=build\ /src/dist/\ (/[^ ]+)$ ]] || fail "COPY '$rest': only --from=build /src/dist/ DEST is replayed"
            dest=${BASH_REMATCH[1]}
            mkdir -p "$root$dest"
            cp "$deb" "$root$dest/" ;;
        RUN)
            say "RUN $rest"
            (cd "$root" && chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                HOME=/root "${envs[@]}" /bin/sh -c "cd '$workdir' && $rest") > "$cache/image-run.log" 2>&1 ||
                { tail -20 "$cache/image-run.log" >&2; fail "RUN failed: $rest"; } ;;
        ENV) envs+=("$rest") ;;
        USER) user=$rest ;;
        WORKDIR) workdir=$rest; mkdir -p "$root$workdir" ;;
        ENTRYPOINT) entrypoint=$rest ;;
        CMD) cmd=$rest ;;
        *) fail "Dockerfile instruction '$instruction' is not replayed by this test" ;;
    esac
done < <(sed -e '/^[[:space:]]*#/d' <<<"$stage" | sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' | sed -e '/^[[:space:]]*$/d')
[[ -n "$entrypoint" ]] || fail "the run stage has no ENTRYPOINT"
[[ "$user" != root && "$user" != 0 ]] || fail "the image runs as root"
in_root test ! -e /usr/bin/swift || fail "the image holds a Swift toolchain"
[[ -z "$(ls -A "$root/var/lib/apt/lists" 2>/dev/null | grep -v '^partial$\|^lock$\|^auxfiles$')" ]] || fail "the image keeps apt's lists"
mapfile -d '' -t entry < <(json_words "$entrypoint")
# The entry point as `docker run` starts it: as the image's user, in its WORKDIR, files under it.
mkdir -p "$root$workdir/in"
cp "$root"/tmp/fixtures/* "$root$workdir/in/"
uid=$(in_root id -u "$user") gid=$(in_root id -g "$user")
chown -R "$uid:$gid" "$root$workdir"
inputs=()
for n in "${names[@]}"; do inputs+=("in/$n"); done
if [[ -n "$cmd" ]]; then
    mapfile -d '' -t default < <(json_words "$cmd")
    chroot --userspec="$uid:$gid" "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$workdir" \
        /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "${entry[@]}" "${default[@]}" > /dev/null ||
        fail "the image's default command (${entry[*]} ${default[*]}) failed"
fi
chroot --userspec="$uid:$gid" "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$workdir" \
    /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "${entry[@]}" -q "${inputs[@]}" -o out.mp4 ||
    fail "the image's entry point failed on the fixtures"
check_output "$workdir/out.mp4"
say "image: pass (user $user, $(du -sh --exclude=proc --exclude=var/cache/apt/archives "$root" 2>/dev/null | cut -f1) on disk)"
