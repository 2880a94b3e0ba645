#!/usr/bin/env bash
# The suite in two processes side by side: the queue's and the remote files' tests (PostgreSQL
# servers, workers and dashboards, an S3 and an https server, which mostly wait on leases, sockets
# and a browser) beside everything else (which mostly encodes). On 2 cores the two overlap instead
# of taking turns. The waiting side's output is printed whole after the rest's, not interleaved.
#
#   scripts/run-tests.sh SWIFT [swift test options...]    (make test, make test-asan)
set -uo pipefail
swift=$1
shift
# The tests reach only loopback: no credential lookup may fall through to the EC2 metadata address.
export AWS_EC2_METADATA_DISABLED=true
log=$(mktemp "${TMPDIR:-/tmp}/vmerge-queue-tests.XXXXXX")
# The waiting side also takes some encoding suites, so the two sides end nearer together (under
# AddressSanitizer the rest took 714 s and the waiting side 463 s; with two suites moved the
# plain run's waiting side became the longer, 546 s beside 495 s; with one, 452 s beside 495 s,
# and the renditions' two suites, 34 s, went to it; with the remote renditions' tests the waiting
# side took 582 s beside 499 s, so RenditionDoorTests, 18 s, came back; then 521 s beside 461 s,
# and RenditionMergeTests, 27 s, too).
side='^(QueueTests|RemoteTests)\.|^[A-Za-z]+\.(CropEdgeChromaTests)/'

# --ignore-lock: neither builds (--skip-build), and SwiftPM's lock on .build would otherwise make the
# second wait for the first to finish, one after the other instead of side by side.
"$swift" test --skip-build --ignore-lock --disable-swift-testing "$@" --filter "$side" >"$log" 2>&1 &
queue=$!
# An interrupted run stops both.
trap 'kill "$queue" 2>/dev/null; rm -f "$log"; exit 130' INT TERM
"$swift" test --skip-build --ignore-lock --disable-swift-testing "$@" --skip "$side"
rest=$?
wait "$queue"
queued=$?
trap - INT TERM
echo "==== QueueTests, RemoteTests and CropEdgeChromaTests, run beside the rest (exit $queued) ===="
cat "$log"
rm -f "$log"
((rest != 0)) && exit "$rest"
exit "$queued"
