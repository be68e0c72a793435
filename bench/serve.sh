#!/bin/sh
# serve.sh BUILD - the load benchmark of `simhash serve` (make bench), with
# wrk from a separate process on loopback:
#   1. loads N documents (default 1,000,000; SERVE_DOCS=N) through the batch
#      route (bench/serve_load.py);
#   2. baseline: GET /healthz, the HTTP floor of this machine in this run;
#   3. query by fingerprint, k = 3 (bench/serve_query.lua): requests/s and p99;
#   4. durable check-and-insert of short texts, 64 connections
#      (bench/serve_insert.lua): documents/s, each acknowledged after its
#      group commit's fsync.
# Targets (issue 10): query >= 20,000 requests/s with p99 <= 10 ms; inserts
# >= 5,000 documents/s. Skips without wrk or python3. The store lives in a
# temporary folder and is deleted afterwards.
set -eu
BUILD=${1:-build}
BIN=${SIMHASH:-$BUILD/simhash}
N=${SERVE_DOCS:-1000000}
DUR=${SERVE_SECONDS:-10}
for tool in wrk python3; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "bench serve: no $tool, skipped"
		exit 0
	fi
done
if ! "$BIN" store --help >/dev/null 2>&1; then
	echo "bench serve: no 'simhash store' command, skipped"
	exit 0
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
"$BIN" store create "$tmp/store" >/dev/null
"$BIN" serve --store "$tmp/store" --listen 127.0.0.1:0 --writers 256 \
	--max-connections 2000 >"$tmp/out" 2>&1 &
pid=$!
i=0
while ! grep -q '^listening on' "$tmp/out" && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
url=$(sed -n 's/^listening on //p' "$tmp/out")
[ -n "$url" ] || { cat "$tmp/out"; exit 1; }
port=${url##*:}
echo "bench serve: $N documents, wrk ${DUR}s per run, 2 threads"
python3 bench/serve_load.py "$port" "$N" "$tmp/probes"

# figures FILE: requests/s, p99 in ms, non-2xx count from wrk --latency output.
figures() {
	rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1")
	p99=$(awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 }
		else if (v ~ /ms$/) { sub(/ms/, "", v) } else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 }
		print v }' "$1")
	bad=$(sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$1")
	bad=${bad:-0}
}

wrk -t2 -c32 -d"$DUR"s --latency "$url/healthz" >"$tmp/base" 2>&1
figures "$tmp/base"
base=$rps
echo "baseline GET /healthz:          $(printf '%8.0f' "$rps") requests/s, p99 $p99 ms"

PROBES=$tmp/probes wrk -t2 -c32 -d"$DUR"s --latency -s bench/serve_query.lua "$url" \
	>"$tmp/query" 2>&1
figures "$tmp/query"
qrps=$rps
echo "query by fingerprint, k=3:      $(printf '%8.0f' "$rps") requests/s, p99 $p99 ms," \
	"$(awk -v a="$rps" -v b="$base" 'BEGIN { printf "%.2f", a / b }')x baseline, non-2xx $bad" \
	"(target >= 20000/s, p99 <= 10 ms)"

wrk -t2 -c64 -d"$DUR"s --latency -s bench/serve_insert.lua "$url" >"$tmp/insert" 2>&1
figures "$tmp/insert"
echo "durable check-and-insert:       $(printf '%8.0f' "$rps") documents/s, p99 $p99 ms," \
	"non-2xx $bad (target >= 5000/s)"
curl -s "$url/metrics" 2>/dev/null | grep -E '^simhash_store_(commits_total|committed_writes_total|commit_batch_max|documents) ' |
	awk '{ v[$1] = $2 } END { if (v["simhash_store_commits_total"] > 0)
		printf "commits: %d for %d writes (mean batch %.1f, largest %d), %d documents stored\n",
		v["simhash_store_commits_total"], v["simhash_store_committed_writes_total"],
		v["simhash_store_committed_writes_total"] / v["simhash_store_commits_total"],
		v["simhash_store_commit_batch_max"], v["simhash_store_documents"] }' || true
kill -TERM $pid
wait $pid
pid=
