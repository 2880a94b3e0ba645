#!/usr/bin/env bash
# vmerge's package and container image, tried the way users get them, in a clean minimal Debian 12
# root (debootstrap --variant=minbase, with the apt sources debian:bookworm-slim has).
#   scripts/test-rootfs.sh deb   CACHE DEB FIXTURE...        apt-get install ./vmerge.deb, merge, remove
#   scripts/test-rootfs.sh image CACHE TOOLCHAIN FIXTURE...  the Dockerfile, both stages, line by line:
#       the build stage in a root of what the Swift image has (its packages, and TOOLCHAIN, the folder
#       holding usr/bin/swift, laid over / as that image unpacks its toolchain) from the build context
#       docker would send (scripts/docker-context.py), ending in the .deb; then the last stage in a
#       root with slim's dpkg excludes, its COPY --from=build taking that .deb, and its ENTRYPOINT
#       as its USER in its WORKDIR, and as a uid the image does not know (docker run --user)
# CACHE keeps the debootstrapped roots (made once, a few minutes) and apt's downloaded packages; each
# run works on a fresh copy and removes it. CACHE is outside the clone (the Makefile's ROOTFS_CACHE,
# ~/.cache/vmerge/rootfs), shared by the user's clones on the machine: runs take CACHE's lock in turn
# (a whole run, so the roots, logs and image-dist are one run's at a time), and work in a private
# mount namespace, so a killed run leaves no mount behind (its copy is removed by the next run).
# Needs root (or sudo) for debootstrap, chroot and mounts; without them it fails, unless
# VMERGE_ALLOW_SKIP=1 (then it says what it skipped).
set -euo pipefail
say() { echo "test-rootfs: $*" >&2; }
fail() { say "$*"; exit 1; }
skip() {
    [[ "${VMERGE_ALLOW_SKIP:-}" == 1 ]] || fail "$* (VMERGE_ALLOW_SKIP=1 skips this test instead of failing)"
    say "skipped: $*"
    exit 0
}
[[ $# -ge 4 ]] || fail "usage: $0 deb CACHE DEB FIXTURE... | image CACHE TOOLCHAIN FIXTURE..."
args=("$@")
mode=$1 cache_arg=$2 deb= toolchain=
case "$mode" in
    deb) deb=$3; [[ -f "$deb" ]] || fail "$deb: no such package (make deb)" ;;
    image)
        toolchain=$(cd "$3" && pwd) || fail "$3: no such folder"
        # Laid over /, so only a toolchain of its own folder will do (not the system's /usr).
        [[ -x "$toolchain/usr/bin/swift" && "$toolchain" != / ]] ||
            fail "$3 is not a Swift toolchain's own folder (one holding usr/bin/swift, as the toolchain's tarball has it)" ;;
    *) fail "mode is deb or image, not '$mode'" ;;
esac
shift 3
for tool in python3 ffprobe chroot unshare; do command -v "$tool" >/dev/null || fail "$tool is needed (make test-deb installs it)"; done
here=$(cd "$(dirname "$0")/.." && pwd)
# Made as the user who runs make, before sudo: a CACHE under ~/.cache that root made (with the
# folders above it) would shut that user out of their own cache, make test-ffmpeg's FFmpeg beside it.
mkdir -p "$cache_arg"
if [[ "$(id -u)" != 0 ]]; then
    if sudo -n true 2>/dev/null; then exec sudo -n -E bash "$0" "${args[@]}"; fi
    skip "not root and no sudo: no clean root can be made"
fi
if [[ "${VMERGE_ROOTFS_NAMESPACE:-}" != 1 ]]; then
    unshare --mount --propagation private true 2>/dev/null || skip "no private mount namespace here (no CAP_SYS_ADMIN?)"
    VMERGE_ROOTFS_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "${args[@]}"
fi
mkdir -p "$cache_arg"
cache=$(cd "$cache_arg" && pwd)
suite=bookworm mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=$cache/$suite-minbase
exec 9>"$cache/lock"
flock 9
# Copies left by killed runs (their mounts died with their namespaces).
for stale in "$cache"/run-*; do
    [[ -d "$stale" ]] && ! findmnt -rn -o TARGET | grep -qF "$stale" && rm -rf --one-file-system "$stale"
done

# The base root's marker names what made it; another recipe makes it again.
recipe="$suite $mirror minbase slim-sources v2"
if [[ ! -f "$base/.vmerge-rootfs" || "$(cat "$base/.vmerge-rootfs")" != "$recipe" ]]; then
    command -v debootstrap >/dev/null || fail "debootstrap is needed (make test-deb installs it)"
    say "making a minimal Debian 12 root in $base (once; cached)"
    rm -rf --one-file-system "$base.tmp"
    start=$(date +%s)
    debootstrap --variant=minbase "$suite" "$base.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 ||
        { tail -20 "$cache/debootstrap.log" >&2; fail "debootstrap failed (log: $cache/debootstrap.log)"; }
    # The sources debian:bookworm-slim has: the release, its updates and its security archive.
    rm -f "$base.tmp/etc/apt/sources.list"
    cat > "$base.tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    echo "$recipe" > "$base.tmp/.vmerge-rootfs"
    rm -rf --one-file-system "$base"
    mv "$base.tmp" "$base"
    say "root made in $(( $(date +%s) - start )) s ($(du -sh "$base" | cut -f1))"
fi

mkdir -p "$cache/apt-archives/partial"
# A root made ready to chroot into: /proc, apt's shared cache of packages, the host's resolver.
enter_root() {   # $1: the root
    mount -t proc proc "$1/proc" || fail "could not mount /proc in $1"
    mount --bind "$cache/apt-archives" "$1/var/cache/apt/archives" || fail "could not mount apt's cache in $1"
    cp /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null || true
}
leave_root() {   # $1: the root; its mounts undone, then the root's own if it is one (an overlay)
    local target
    for target in "$1/var/cache/apt/archives" "$1/proc" "$1"; do
        if mountpoint -q "$target" 2>/dev/null; then umount "$target" || umount -l "$target" || true; fi
    done
}
roots=() made=()   # the roots this run entered and the folders it made under CACHE
cleanup() {
    local r f
    for r in "${roots[@]}"; do leave_root "$r"; done
    # Nothing may be mounted under a copy when it is removed.
    for f in "${made[@]}"; do
        if ! findmnt -rn -o TARGET | grep -qF "$f/"; then rm -rf --one-file-system "$f"; fi
    done
}
trap cleanup EXIT
root=$(mktemp -d "$cache/run-$mode-XXXXXX")
made+=("$root") roots+=("$root")
cp -a "$base/." "$root/"
enter_root "$root"

docker_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
in_root() { chroot "$root" /usr/bin/env -i PATH=$docker_path HOME=/root LANG=C.UTF-8 "$@"; }
in_root test ! -e /usr/bin/vmerge || fail "the base root already holds vmerge"

mkdir -p "$root/tmp/fixtures"
cp "$@" "$root/tmp/fixtures/"
names=()
for f in "$@"; do names+=("$(basename "$f")"); done

check_output() {   # $1: the output's path inside the root
    local out=$root$1 streams order
    [[ -s "$out" ]] || fail "no output at $1"
    streams=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$out" | paste -sd' ')
    [[ "$streams" == "h264,320,240 aac" ]] || fail "$1 holds '$streams', not h264 320x240 + aac"
    # Index first: the moov box before the mdat box.
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
    # lintian, as Debian checks its own packages: no error and no warning; the informational tags it
    # still has are overridden in the package (usr/share/lintian/overrides/vmerge), each with why.
    # Run as nobody (lintian unpacks what it is given; root is not needed), on a copy it can read.
    command -v lintian >/dev/null || fail "lintian is needed (make test-deb installs it)"
    lint=$(mktemp -d)
    cp "$deb" "$lint/" && chmod -R a+rX "$lint"
    lintian_out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env -i PATH="$PATH" HOME="$lint" \
        lintian --display-info --fail-on error,warning "$lint/$(basename "$deb")" 2>&1) ||
        { echo "$lintian_out" >&2; rm -rf "$lint"; fail "lintian found errors or warnings in $(basename "$deb")"; }
    overridden=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env -i PATH="$PATH" HOME="$lint" \
        lintian --display-info --show-overrides "$lint/$(basename "$deb")" 2>&1 | grep -c '^O: ' || true)
    rm -rf "$lint"
    [[ -z "$lintian_out" ]] || { echo "$lintian_out" >&2; fail "lintian reported tags not overridden"; }
    say "lintian: no errors, warnings or informational tags ($overridden informational ones overridden, with reasons)"
    cp "$deb" "$root/tmp/"
    pkg=/tmp/$(basename "$deb")
    say "apt-get install $pkg in a clean Debian 12 root"
    in_root apt-get update -qq > "$cache/install.log" 2>&1 || { tail -20 "$cache/install.log" >&2; fail "apt-get update failed in the root"; }
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >> "$cache/install.log" 2>&1 ||
        { tail -20 "$cache/install.log" >&2; fail "apt-get install $pkg failed"; }
    say "installed: $(in_root dpkg-query -W -f='${Package} ${Version}, depends on ${Depends}' vmerge)"
    libs=$(in_root ldd /usr/bin/vmerge) || fail "ldd /usr/bin/vmerge failed in the root"
    if grep -q "not found" <<<"$libs"; then fail "vmerge needs libraries its package does not bring: $(grep 'not found' <<<"$libs" | paste -sd' ')"; fi
    in_root dpkg --verify vmerge || fail "dpkg --verify vmerge: the installed files differ from the package's md5sums"
    in_root vmerge --version | head -2 | paste -sd' ' | sed 's/^/test-rootfs: /' >&2
    for f in /usr/share/man/man1/vmerge.1.gz /usr/share/bash-completion/completions/vmerge \
        /usr/share/zsh/vendor-completions/_vmerge /usr/share/fish/vendor_completions.d/vmerge.fish \
        /usr/share/doc/vmerge/copyright /usr/share/doc/vmerge/changelog.gz; do
        in_root test -s "$f" || fail "the package did not install $f"
    done
    in_root sh -c 'cd /tmp/fixtures && vmerge -q "$@" -o /tmp/demo.mp4' sh "${names[@]}" || fail "vmerge failed on the fixtures in the clean root"
    check_output /tmp/demo.mp4
    # The systemd units, where the package puts them, verified by the root's own systemd-analyze
    # (minbase has no systemd: it is installed for this, after vmerge, which does not need it), and
    # the user postinst made: a system account with no login and the home that holds the worker's .pgpass.
    units=(vmerge-dashboard@.service vmerge-watch@.service vmerge-worker@.service)
    for unit in "${units[@]}"; do
        in_root test -s "/usr/lib/systemd/system/$unit" || fail "the package did not install /usr/lib/systemd/system/$unit"
        cmp -s "$root/usr/lib/systemd/system/$unit" "$here/packaging/systemd/$unit" || fail "$unit differs from packaging/systemd/$unit"
    done
    for f in worker.conf watch.conf.example dashboard.conf.example; do
        in_root test -f "/etc/vmerge/$f" || fail "the package did not install /etc/vmerge/$f"
    done
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >> "$cache/install.log" 2>&1 ||
        { tail -20 "$cache/install.log" >&2; fail "apt-get install systemd failed in the root"; }
    analyze_out=$(in_root systemd-analyze verify --man=no vmerge-watch@phones.service vmerge-worker@1.service \
        vmerge-dashboard@main.service 2>&1) ||
        { echo "$analyze_out" >&2; fail "systemd-analyze verify failed on the packaged units"; }
    [[ -z "$analyze_out" ]] || { echo "$analyze_out" >&2; fail "systemd-analyze verify complained about the packaged units"; }
    IFS=: read -r _ _ vuid vgid _ vhome vshell < <(in_root getent passwd vmerge) || fail "postinst made no user vmerge"
    (( vuid > 0 && vuid < 1000 )) || fail "vmerge's uid $vuid is not a system one"
    [[ "$vhome" == /var/lib/vmerge && "$vshell" == /usr/sbin/nologin ]] || fail "vmerge's home/shell: $vhome $vshell"
    [[ "$(stat -c %u "$root/var/lib/vmerge")" == "$vuid" ]] || fail "/var/lib/vmerge is not vmerge's"
    exposure=$(for unit in vmerge-watch@phones vmerge-worker@1 vmerge-dashboard@main; do
        in_root systemd-analyze security --offline=yes "$unit.service" | sed -n 's/.*Overall exposure level for \(.*\)\.service: \([0-9.]* [A-Z]*\).*/\1 \2/p'
    done | paste -sd, -)
    say "units: ${units[*]} in /usr/lib/systemd/system, systemd-analyze verify clean; exposure: $exposure; user vmerge (uid $vuid, $vshell)"
    # No systemd runs here (no PID 1 of its own, so no systemd-nspawn --boot): each unit's ExecStart=
    # is run as systemd would, with its User=/Group= and EnvironmentFile= (scripts/unit-command.py),
    # NoNewPrivileges= and the empty CapabilityBoundingSet= (setpriv), in a mount namespace where the
    # root is read-only but /srv, the RuntimeDirectory= and a private /tmp (ProtectSystem=strict,
    # ReadWritePaths=, PrivateTmp=). Not emulated: the seccomp filter, RestrictAddressFamilies=,
    # PrivateNetwork= and the Protect*= of /proc, /sys and devices.
    as_unit() {   # $1: unit, $2: instance; the unit's command (with --once from the conf) must exit 0
        local words user group dirs dir count environment
        # Through a file: mapfile returns 0 even when a process substitution fails.
        python3 "$here/scripts/unit-command.py" "$root" "/usr/lib/systemd/system/$1" "$2" "$(uname -n)" > "$cache/unit-words" ||
            fail "could not read $1's command"
        mapfile -d '' -t words < "$cache/unit-words"
        (( ${#words[@]} >= 4 )) || fail "$1's command read as ${#words[@]} words"
        user=${words[0]} group=${words[1]} dirs=${words[2]} count=${words[3]}
        environment=("${words[@]:4:count}")
        words=("${words[@]:4+count}")
        [[ "$user" != root ]] || fail "$1 runs as root"
        for dir in $dirs; do install -d -o "$(in_root id -u "$user")" -g "$(in_root getent group "$group" | cut -d: -f3)" -m 755 "$root/run/$dir"; done
        say "${1/@/@$2}: ${words[*]} (as $user:$group)"
        unshare --mount bash -c 'set -euo pipefail
            root=$1; shift; dirs=$1; shift
            mount --rbind "$root" "$root" && mount -o remount,bind,ro "$root"
            if touch "$root/etc/.rw-probe" 2>/dev/null; then echo "the emulated ProtectSystem=strict is not read-only" >&2; exit 1; fi
            mount --bind "$root/srv" "$root/srv" && mount -o remount,bind,rw "$root/srv"
            mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
            for dir in $dirs; do mount --bind "$root/run/$dir" "$root/run/$dir" && mount -o remount,bind,rw "$root/run/$dir"; done
            user=$1 group=$2; shift 2   # then the environment'"'"'s KEY=value words and the command
            exec chroot "$root" setpriv --reuid="$user" --regid="$group" --init-groups --no-new-privs --bounding-set=-all \
                --inh-caps=-all env -i PATH=/usr/bin:/bin HOME=/var/lib/vmerge USER="$user" LOGNAME="$user" LANG=C.UTF-8 "$@"' \
            _ "$root" "$dirs" "$user" "$group" "${environment[@]}" "${words[@]}"
    }
    # The watch unit over a folder of the fixtures: a job (subfolder with .ready) in the inbox.
    mkdir -p "$root/srv/vmerge/phones/inbox/trip" "$root/srv/vmerge/phones/outbox"
    cp "$root"/tmp/fixtures/* "$root/srv/vmerge/phones/inbox/trip/"
    touch "$root/srv/vmerge/phones/inbox/trip/.ready"
    chown -R "$vuid:$vgid" "$root/srv/vmerge"
    printf '%s\n' VMERGE_INBOX=/srv/vmerge/phones/inbox VMERGE_OUTBOX=/srv/vmerge/phones/outbox \
        'VMERGE_WATCH_OPTIONS=--once --settle 0' > "$root/etc/vmerge/watch-phones.conf"
    as_unit vmerge-watch@.service phones || fail "vmerge-watch@phones's command failed"
    check_output /srv/vmerge/phones/outbox/trip.mp4
    [[ "$(stat -c %u "$root/srv/vmerge/phones/outbox/trip.mp4")" == "$vuid" ]] || fail "trip.mp4 was not written by vmerge"
    in_root test -s /run/vmerge-watch-phones/status.json || fail "vmerge-watch@phones wrote no status file"
    # The worker unit: its command as vmerge, with worker.conf's database (one nobody listens on):
    # it must get as far as the database, exit 1 (cannot be reached at start), not 2 (usage) or a crash.
    printf '%s\n' 'VMERGE_DB=host=/run/no-database dbname=vmerge user=vmerge connect_timeout=2' \
        'VMERGE_WORKER_OPTIONS=-j 2 --once' >> "$root/etc/vmerge/worker.conf"
    status=0
    as_unit vmerge-worker@.service 1 2> "$cache/worker.log" || status=$?
    [[ $status == 1 ]] && grep -q 'no-database' "$cache/worker.log" ||
        { cat "$cache/worker.log" >&2; fail "vmerge-worker@1's command: exit $status, not 1 for an unreachable database"; }
    say "vmerge-worker@1: exit 1 as vmerge: $(grep -m1 'no-database' "$cache/worker.log" | grep -v '^test-rootfs')"
    # The dashboard unit: its command as vmerge over the status file the watch unit wrote and a
    # database nobody listens on, with a token made as the README says (root's, readable by the
    # group vmerge). It must serve /healthz, the page (the watcher's job) and /metrics (the database
    # down) from its read-only root, and exit 0 on SIGTERM. The port is the system's pick (port 0).
    in_root sh -c 'head -c 24 /dev/urandom | base64 | install -m 0640 -o root -g vmerge /dev/stdin /etc/vmerge/dashboard-main.token' ||
        fail "could not make the dashboard's token file as the README says"
    printf '%s\n' 'VMERGE_DB=host=/run/no-database dbname=vmerge user=vmerge connect_timeout=2' \
        'VMERGE_DASHBOARD_OPTIONS=--listen 127.0.0.1:0 --token-file /etc/vmerge/dashboard-main.token --watch /run/vmerge-watch-phones/' \
        > "$root/etc/vmerge/dashboard-main.conf"
    as_unit vmerge-dashboard@.service main 2> "$cache/dashboard.log" &
    unit_job=$!
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's|.*dashboard: serving http://127\.0\.0\.1:\([0-9]*\)/ (metrics at /metrics; actions on[;)].*|\1|p' "$cache/dashboard.log")
        [[ -n "$port" ]] || ! kill -0 "$unit_job" 2>/dev/null && break
        sleep 0.1
    done
    dashboard=$(pgrep -P "$unit_job" || true)
    [[ -n "$port" && -n "$dashboard" && "$(readlink "/proc/$dashboard/exe")" == "$root/usr/bin/vmerge" ]] ||
        { cat "$cache/dashboard.log" >&2; kill "$dashboard" 2>/dev/null; fail "vmerge-dashboard@main did not start serving with its actions on"; }
    [[ "$(stat -c %u "/proc/$dashboard")" == "$vuid" ]] ||
        { kill "$dashboard"; fail "vmerge-dashboard@main does not run as vmerge"; }
    pages=$(python3 - "$port" <<'PYTHON'
import http.client, sys
def get(path):
    connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read().decode("utf-8", "replace")
healthz, page, metrics = get("/healthz"), get("/"), get("/metrics")
problems = []
if healthz != (200, "ok") and healthz != (200, "ok\n"):
    problems.append(f"/healthz: {healthz!r}")
if page[0] != 200 or "/srv/vmerge/phones/inbox" not in page[1] or "trip" not in page[1]:
    problems.append(f"/ ({page[0]}) does not show the watcher's inbox and its job trip")
if metrics[0] != 200 or "vmerge_database_up 0" not in metrics[1].splitlines():
    problems.append(f"/metrics ({metrics[0]}) has no vmerge_database_up 0")
if problems:
    sys.exit("; ".join(problems))
print(f"/healthz ok, / shows the watcher's job trip ({len(page[1])} bytes), /metrics says vmerge_database_up 0")
PYTHON
) || { kill "$dashboard"; cat "$cache/dashboard.log" >&2; fail "vmerge-dashboard@main's pages are wrong"; }
    kill -TERM "$dashboard"
    status=0
    wait "$unit_job" || status=$?
    [[ $status == 0 ]] || { cat "$cache/dashboard.log" >&2; fail "vmerge-dashboard@main's command: exit $status on SIGTERM, not 0"; }
    say "vmerge-dashboard@main: as vmerge on port $port: $pages; exit 0 on SIGTERM"
    # Purged, the package's files and conffiles go; the user, its home and the administrator's conf
    # files stay (they may own outputs and hold a password: see packaging/debian/postrm).
    in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq vmerge > /dev/null 2>&1 || fail "apt-get purge vmerge failed"
    for f in /usr/bin/vmerge /usr/lib/systemd/system/vmerge-watch@.service /usr/lib/systemd/system/vmerge-dashboard@.service \
        /etc/vmerge/worker.conf /etc/vmerge/dashboard.conf.example; do
        in_root test ! -e "$f" || fail "apt-get purge left $f"
    done
    in_root getent passwd vmerge > /dev/null && in_root test -f /etc/vmerge/watch-phones.conf -a -d /var/lib/vmerge ||
        fail "apt-get purge removed the user vmerge, its home or the administrator's watch-phones.conf"
    say "deb: pass"
    exit 0
fi

# image: the Dockerfile's stages in order, each instruction as Docker runs it; any instruction or
# form the replay does not know is refused, so it cannot drift from the file silently.
dockerfile=$here/Dockerfile
[[ -f "$dockerfile" ]] || fail "$dockerfile is missing"
(( $(grep -c '^FROM ' "$dockerfile") == 2 )) || fail "the Dockerfile does not have two stages (build, run)"
stage_text() {   # $1: 1 or 2; the stage's instructions, one a line, comments gone, continuations joined
    awk -v want="$1" '/^FROM /{n++} n == want' "$dockerfile" |
        sed -e '/^[[:space:]]*#/d' | sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' | sed -e '/^[[:space:]]*$/d'
}
json_words() { python3 -c 'import json,sys; print("\0".join(json.loads(sys.argv[1])), end="")' "$1"; }
env_pairs() {   # ENV's arguments ("A=1 B='x y'" or the old "A value") as NUL-separated KEY=VALUE words
    python3 -c '
import shlex, sys
words = shlex.split(sys.argv[1])
pairs = words if all("=" in w for w in words) else [words[0] + "=" + " ".join(words[1:])]
print("\0".join(pairs), end="")' "$1"
}
# As Docker runs a command: `sh -c` in WORKDIR as USER with the stage's ENV.
as_user() {   # $1: user (name, uid or uid:gid), then the command's words
    local who=$1 spec home=/
    shift
    case "$who" in
        root | 0) spec=0:0 home=/root ;;
        *:*) spec=$who ;;   # a uid the image may not know: Docker gives it HOME=/
        *)
            spec=$(in_root id -u "$who"):$(in_root id -g "$who") || fail "USER $who: no such user in the image"
            home=$(in_root getent passwd "$who" | cut -d: -f6) ;;
    esac
    chroot --userspec="$spec" "$root" /usr/bin/env -i HOME="$home" "${envs[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "$@"
}
replay() {   # $1: the stage's number; runs its instructions in $root
    local line instruction rest src dest pairs pair
    user=root workdir=/ entrypoint= cmd=
    envs=(PATH=$docker_path)
    while IFS= read -r line; do
        instruction=${line%% *} rest=${line#* }
        case "$instruction" in
            FROM) ;;
            COPY)
                if [[ "$rest" =~ ^\.\ ([^ ]+)$ ]]; then   # the build context: what docker would send
                    dest=${BASH_REMATCH[1]}
                    [[ "$dest" == . ]] && dest=$workdir
                    [[ "$dest" == /* ]] || dest=${workdir%/}/$dest
                    python3 "$here/scripts/docker-context.py" "$here" "$root$dest" || fail "could not copy the build context"
                    say "COPY . $dest: $(python3 "$here/scripts/docker-context.py" "$here" | wc -l) files of the build context"
                elif [[ "$rest" =~ ^--from=build\ (/[^ ]+)\ (/[^ ]+)$ ]]; then
                    src=${BASH_REMATCH[1]} dest=${BASH_REMATCH[2]}
                    [[ -n "$build_root" && -d "$build_root$src" ]] || fail "COPY --from=build: the build stage has no $src"
                    mkdir -p "$root$dest"
                    cp -a "$build_root${src%/}/." "$root$dest/"
                else
                    fail "COPY '$rest': only '. DEST' and '--from=build SRC DEST' are replayed"
                fi ;;
            RUN)
                say "RUN $rest"
                as_user "$user" /bin/sh -c "$rest" > "$cache/image-run.log" 2>&1 ||
                    { tail -30 "$cache/image-run.log" >&2; fail "RUN failed: $rest (log: $cache/image-run.log)"; } ;;
            ENV)
                mapfile -d '' -t pairs < <(env_pairs "$rest")
                for pair in "${pairs[@]}"; do envs+=("$pair"); done ;;
            USER) user=$rest ;;
            WORKDIR)
                [[ "$rest" == /* ]] && workdir=$rest || workdir=${workdir%/}/$rest
                mkdir -p "$root$workdir" ;;
            ENTRYPOINT) entrypoint=$rest ;;
            CMD) cmd=$rest ;;
            *) fail "Dockerfile instruction '$instruction' is not replayed by this test" ;;
        esac
    done < <(stage_text "$1")
}

# The build stage: FROM the Swift toolchain's image. That is debian:12 with the packages the Swift
# project's Dockerfile installs (swiftlang/swift-docker, 6.x/debian/12; recommends included, as
# there), made once from the minimal root and cached, and the toolchain unpacked over / (here an
# overlay: TOOLCHAIN over that root, and this run's changes above both).
from=$(stage_text 1 | head -1)
swift_image=$(sed -n 's/^ARG SWIFT_IMAGE=//p' "$dockerfile")
[[ "$from" == 'FROM ${SWIFT_IMAGE} AS build' && "$swift_image" =~ ^swift:([0-9.]+)-$suite$ ]] ||
    fail "the build stage is not 'FROM \${SWIFT_IMAGE} AS build' with SWIFT_IMAGE=swift:<version>-$suite"
image_swift=${BASH_REMATCH[1]}
host_swift=$("$toolchain/usr/bin/swift" --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -1)
[[ "$host_swift" == "$image_swift" ]] ||
    say "note: the toolchain here is Swift $host_swift, the image's is $image_swift (the same release series: ${image_swift%.*})"
[[ "${host_swift%.*}" == "${image_swift%.*}" ]] || fail "the toolchain here (Swift $host_swift) is not of the image's series ($image_swift)"
swift_packages=(binutils libicu-dev libcurl4-openssl-dev libedit-dev libsqlite3-dev libncurses-dev libpython3-dev
    libxml2-dev pkg-config uuid-dev tzdata git gcc libstdc++-12-dev)
swift_base=$cache/$suite-swift-image
swift_recipe="$recipe; ${swift_packages[*]}"
if [[ ! -f "$swift_base/.vmerge-rootfs" || "$(cat "$swift_base/.vmerge-rootfs")" != "$swift_recipe" ]]; then
    say "making the Swift image's root (debian:12 and the packages it installs) in $swift_base (once; cached)"
    start=$(date +%s)
    rm -rf --one-file-system "$swift_base.tmp"
    cp -a "$base/." "$swift_base.tmp/"
    made+=("$swift_base.tmp") roots+=("$swift_base.tmp")
    enter_root "$swift_base.tmp"
    chroot "$swift_base.tmp" /usr/bin/env -i PATH=$docker_path HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
        sh -c 'apt-get -q update && apt-get -q install -y "$@" && rm -r /var/lib/apt/lists/*' _ "${swift_packages[@]}" \
        > "$cache/swift-image.log" 2>&1 || { tail -20 "$cache/swift-image.log" >&2; fail "could not install the Swift image's packages"; }
    leave_root "$swift_base.tmp"
    echo "$swift_recipe" > "$swift_base.tmp/.vmerge-rootfs"
    rm -rf --one-file-system "$swift_base"
    mv "$swift_base.tmp" "$swift_base"
    say "Swift image's root made in $(( $(date +%s) - start )) s ($(du -sh "$swift_base" | cut -f1))"
fi
run_root=$root
build=$(mktemp -d "$cache/run-build-XXXXXX")
made+=("$build")
mkdir "$build/changes" "$build/work" "$build/root"
mount -t overlay overlay -o "lowerdir=$toolchain:$swift_base,upperdir=$build/changes,workdir=$build/work" "$build/root" ||
    fail "could not lay the toolchain and the Swift image's root over each other (overlayfs)"
root=$build/root build_root=
roots=("$root" "${roots[@]}")
enter_root "$root"
in_root swift --version > /dev/null 2>&1 || fail "the toolchain does not run in the build stage's root"
start=$(date +%s)
replay 1
debs=("$root"/src/dist/vmerge_*.deb)
[[ -f "${debs[0]}" ]] || fail "the build stage made no /src/dist/vmerge_*.deb"
say "build stage: $(basename "${debs[0]}") ($(stat -c %s "${debs[0]}") bytes; Depends: $(dpkg-deb -f "${debs[0]}" Depends)) in $(( $(date +%s) - start )) s"
say "build stage: release binary $(stat -L -c %s "$root/src/.build/release/vmerge") bytes unstripped, $(dpkg-deb -c "${debs[0]}" | awk '$NF == "./usr/bin/vmerge" {print $3}') in the package"
# The package stays in CACHE/image-dist for a look after the run (this root is removed).
rm -rf "$cache/image-dist" && mkdir -p "$cache/image-dist" && cp "${debs[0]}" "$cache/image-dist/"
build_root=$root root=$run_root

# The run stage: what debian:bookworm-slim adds to a minbase root (its dpkg excludes), then the
# stage in order; COPY --from=build takes the build stage's dist/.
cat > "$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
stage_text 2 | head -1 | grep -qx 'FROM debian:bookworm-slim' || fail "the Dockerfile's run stage is not FROM debian:bookworm-slim"
replay 2
[[ -n "$entrypoint" ]] || fail "the run stage has no ENTRYPOINT"
[[ "$user" != root && "$user" != 0 && "$user" != 0:* ]] || fail "the image runs as root"
[[ -z "$(find "$root/var/lib/apt/lists" -mindepth 1 -maxdepth 1 ! -name partial ! -name lock ! -name auxfiles)" ]] ||
    fail "the image keeps apt's lists"
in_root dpkg-query -W vmerge > /dev/null || fail "the run stage did not install the vmerge package"
mapfile -d '' -t entry < <(json_words "$entrypoint")
default=()
[[ -n "$cmd" ]] && mapfile -d '' -t default < <(json_words "$cmd")
inputs=()
for n in "${names[@]}"; do inputs+=("in/$n"); done
# `docker run IMAGE`: the default command.
as_user "$user" "${entry[@]}" "${default[@]}" > /dev/null || fail "the image's default command (${entry[*]} ${default[*]}) failed"
# `docker run -v "$PWD:/data" IMAGE a.mov ...`: as the image's user on a folder it owns ...
run_in() {   # $1: user spec, $2: folder under WORKDIR, $3: owner uid:gid
    mkdir -p "$root$workdir/$2/in"
    cp "$root"/tmp/fixtures/* "$root$workdir/$2/in/"
    chown -R "$3" "$root$workdir/$2"
    local saved=$workdir
    workdir=$workdir/$2
    as_user "$1" "${entry[@]}" -q "${inputs[@]}" -o out.mp4 || fail "the image's entry point failed on the fixtures as $1"
    workdir=$saved
    check_output "$workdir/$2/out.mp4"
}
uid=$(in_root id -u "$user") gid=$(in_root id -g "$user")
run_in "$user" as-image-user "$uid:$gid"
# ... and with `--user "$(id -u):$(id -g)"` on a host folder: a uid the image has no entry for.
run_in 4242:4242 as-host-user 4242:4242
say "image: pass (user $user, $(du -sh --exclude=proc --exclude=var/cache/apt/archives "$root" 2>/dev/null | cut -f1) on disk)"
