#!/bin/sh
# store.sh BUILD - `make bench` figures of the store (bench/store.c):
#   1. open time of a store of STORE_BENCH_DOCS documents (default 10 million):
#      generated, then opened after a clean close (checkpoint mapped), after a
#      crash (a child makes n/16 - 1 acknowledged changes and is SIGKILLed: the
#      checkpoint is mapped and the changes replayed), and with no usable
#      checkpoint (PATH-index removed: full rebuild); the method is printed;
#   2. durable check-and-put of short texts from 128 and 256 threads (group commit)
#      against 1 thread, on a store of 1 million documents;
#   3. queries by fingerprint (k 3) on that store against the bare index;
#   4. what the records' checksums cost: 200,000 gets on that store and
#      200,000 puts, against the XXH3 passes of the same bytes in the same run.
# The stores live in a temporary folder, deleted at the end.
set -eu
BUILD=${1:-build}
N=${STORE_BENCH_DOCS:-10000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/store-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$BUILD/bench/store" open "$N" "$tmp/big.db"
rm -f "$tmp/big.db" "$tmp/big.db-lock" "$tmp/big.db-index" "$tmp/big.db-index".*
"$BUILD/bench/store" open 1000000 "$tmp/m.db" > /dev/null
"$BUILD/bench/store" query "$tmp/m.db" 2 5
"$BUILD/bench/store" cap "$tmp/m.db" 128 5
"$BUILD/bench/store" cap "$tmp/m.db" 256 5
"$BUILD/bench/store" sum "$tmp/m.db" 200000
