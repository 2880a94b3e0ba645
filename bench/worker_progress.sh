#!/bin/sh
# What publishing progress costs a worker: the wall and CPU time of `vmerge worker --once` over the same
# jobs with progress published (the default) and without (VMERGE_TEST_NO_PROGRESS=1), runs
# alternating, on a private PostgreSQL (default settings: fsync on). Also counts the row updates
# each run made. Usage: bench/worker_progress.sh [runs] [vmerge binary]   (as root or a normal user)
set -eu
runs=${1:-5}
vmerge=$(realpath "${2:-.build/debug/vmerge}")
fixtures=$(realpath "$(dirname "$0")/../fixtures")
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
dir=$(mktemp -d /tmp/vmpgb.XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$dir"
as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale >/dev/null
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "-k $dir -c listen_addresses=''" start >/dev/null
trap 'as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; rm -rf "$dir"' EXIT
db="host=$dir dbname=postgres user=postgres"
out=$(mktemp -d /tmp/vmpgb-out.XXXXXX)
# The fixtures one job each, and two long jobs: the 640x480 clip 20 times, the 1080p one 5 times.
list="$out.jsonl"
: >"$list"
for f in a_none_640x480_30fps_aac44k_stereo b_rot90_1920x1080_30fps_aac48k_mono c_rot180_640x480_24fps_noaudio \
    d_rot270_638x478_60fps_aac44k_stereo e_hflip_640x480_30fps_aac48k_stereo f_vflip_480x360_25fps_noaudio \
    g_transpose_640x360_30fps_aac44k_mono h_antitranspose_480x640_30fps_aac44k_stereo; do
    printf '{"name":"%s","inputs":["%s/%s.mov"],"output":"%s.mp4"}\n' "$f" "$fixtures" "$f" "$f" >>"$list"
done
long() { i=0; s=""; while [ $i -lt "$2" ]; do s="$s${s:+,}\"$fixtures/$1.mov\""; i=$((i + 1)); done; echo "$s"; }
printf '{"name":"long-a","inputs":[%s],"output":"long-a.mp4"}\n' "$(long a_none_640x480_30fps_aac44k_stereo 20)" >>"$list"
printf '{"name":"long-b","inputs":[%s],"output":"long-b.mp4"}\n' "$(long b_rot90_1920x1080_30fps_aac48k_mono 5)" >>"$list"
psql() { "$bin/psql" -X -q -A -t -d "$db" -c "$1"; }
"$vmerge" queue init --db "$db" >/dev/null
run() {  # $1: label, $2: VMERGE_TEST_NO_PROGRESS
    psql "TRUNCATE vmerge.jobs" >/dev/null
    rm -rf "$out" && mkdir -p "$out"
    "$vmerge" queue add --db "$db" --out "$out" --min-duration 0 "$list" >/dev/null
    before=$(psql "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'jobs'")
    VMERGE_TEST_NO_PROGRESS=$2 /usr/bin/time -f "%e %U %S" -o "$out.time" \
        "$vmerge" worker --once --db "$db" --name bench -j 1 2>/dev/null
    sleep 0.6  # the statistics collector's flush
    after=$(psql "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'jobs'")
    done=$(psql "SELECT count(*) FROM vmerge.jobs WHERE state = 'done'")
    read -r wall user sys <"$out.time"
    echo "$1 wall $wall s, cpu $(echo "$user + $sys" | bc) s, $done jobs done, $((after - before)) row updates"
}
i=0
while [ $i -lt "$runs" ]; do
    run published 0
    run unpublished 1
    i=$((i + 1))
done
rm -rf "$out" "$list" "$out.time"
