#!/bin/bash
# Usage: make release && bash scripts/watch-crash-loop.sh   (ROUNDS=20 for more kills; needs ffprobe)
# Kill -9 a watcher at random moments, restart, repeat; then finish with --once and check.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
B=${B:-$ROOT/.build/release/vmerge}; F=$ROOT/fixtures
D=$(mktemp -d); rm -rf $D; mkdir -p $D/in $D/out
for j in $(seq 1 10); do mkdir -p $D/in/job$j; for c in 1 2 3 4 5 6; do cp $F/b_*.mov $D/in/job$j/c$c.mov; done; touch $D/in/job$j/.ready; done
for c in 1 2 3; do cp $F/a_*.mov $D/in/loose$c.mov; touch -d '1 min ago' $D/in/loose$c.mov; done
kills=0
for round in $(seq 1 ${ROUNDS:-12}); do
  $B watch $D/in --out $D/out --settle 0 --delete-sources 2>>$D/log & pid=$!
  sleep $(python3 -c "import random; print(round(random.uniform(0.05, 2.5), 2))")
  kill -9 $pid 2>/dev/null && kills=$((kills+1)); wait $pid 2>/dev/null
  # a second worker sometimes, killed too
  if (( round % 3 == 0 )); then
    $B watch $D/in --out $D/out --settle 0 -q --delete-sources 2>>$D/log & p2=$!; sleep 0.3; kill -9 $p2; wait $p2 2>/dev/null; kills=$((kills+1))
  fi
done
$B watch $D/in --out $D/out --once --settle 0 -q --delete-sources 2>>$D/log; rc=$?
echo "kills=$kills final rc=$rc"
echo "outbox: $(ls $D/out | grep -c '\.mp4$') mp4, $(ls $D/out | grep -c '\.mp4\.json$') reports, $(ls -a $D/out | grep -c 'tmp') tmp"
echo "inbox: $(ls $D/in | wc -l) left; .processing: $(ls -a $D/in/.processing | grep -vc '^\.\.\?$'); .done: $(ls $D/in/.done | wc -l); .failed: $(ls $D/in/.failed | wc -l)"
ls $D/out | grep '\.mp4$' | tr '\n' ' '; echo
bad=0; for f in $D/out/*.mp4; do n=$(ffprobe -v error -count_frames -select_streams v -show_entries stream=nb_read_frames -of csv=p=0 $f); case $(basename $f) in job*) want=450;; loose*) want=90;; esac; [ "$n" = "$want" ] || { echo "BAD $f $n"; bad=1; }; done; echo "frames check bad=$bad"
