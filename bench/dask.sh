#!/bin/sh
# dask.sh BUILD - `make bench-dask` (part of `make bench`): simhash-dask dedup
# next to the one-machine commands, in the same run on the same data.
#   1. DASK_BENCH_N (default 100,000,000) text-form 64-bit fingerprints, bits 1
#      with probability 0.72, 1 in 100 a planted near-duplicate (gen_fps), in
#      8 shards: `simhash-dask dedup --fingerprints -k 3 --workers 2` against
#      `simhash pairs -k 3 -j 2 --self` on the 8 shards: wall and CPU time, the
#      job's stage times, each worker's peak memory (VmHWM) against the peak of
#      simhash pairs (/usr/bin/time), and that both give the same pairs. The
#      input is generated here and deleted afterwards (DASK_BENCH_N=0 skips).
#   2. the shared corpora (../shared/corpus or $SIMHASH_CORPUS) en.jsonl and
#      zh.jsonl, each cut into 4 shards: the job with --workers 2 against
#      `simhash dedup --jsonl -j 2` on the whole file, pairs equal.
set -eu
BUILD=${1:-build}
N=${DASK_BENCH_N:-100000000}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
PY=/usr/bin/python3
B=$(cd "$BUILD" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PYTHONPATH="$B/python"

echo "dask: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"

# normalized pairs: the two ids in order, sorted
norm() {
	awk -F'\t' 'BEGIN { OFS = "\t" } { if ($1 > $2) { t = $1; $1 = $2; $2 = t } print }' "$@" |
		LC_ALL=C sort
}
field() { # FILE LABEL: a figure of /usr/bin/time -v
	awk -F': ' -v l="$2" '$1 ~ l { print $2 }' "$1"
}
cpu_of() {
	awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.1f", s }' "$1"
}
wall_of() {
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
		for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s }' "$1"
}
stages() { # SUMMARY.json
	"$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
print("  stages (s): " + ", ".join("%s %.1f" % kv for kv in s["seconds"].items()))
peaks = s.get("worker_peak_memory") or {}
print("  worker peaks (MB): " + ", ".join("%.0f" % (v / 2**20) for k, v in sorted(peaks.items())))
print("  sum_of_worker_peaks_mb %.0f" % (sum(peaks.values()) / 2**20))' "$1"
}

if [ "$N" -gt 0 ]; then
	"$B/bench/gen_fps" "$N" 0.72 42 > "$tmp/all.tsv"
	mkdir "$tmp/fps"
	split -n l/8 -d --additional-suffix=.tsv "$tmp/all.tsv" "$tmp/fps/shard-"
	rm "$tmp/all.tsv"
	echo "dask: $N fingerprints (p = 0.72) in 8 shards, k = 3"
	/usr/bin/time -v -o "$tmp/time.pairs" "$B/simhash" pairs -q -k 3 -j 2 --self \
		"$tmp"/fps/shard-*.tsv > "$tmp/pairs.tsv"
	echo "  simhash pairs -j 2: $(wall_of "$tmp/time.pairs") s wall, $(cpu_of "$tmp/time.pairs") s CPU," \
		"peak $(( $(field "$tmp/time.pairs" 'Maximum resident') / 1024 )) MB, $(wc -l < "$tmp/pairs.tsv") pairs"
	/usr/bin/time -v -o "$tmp/time.job" "$PY" -m simhash.dask dedup -q --fingerprints -k 3 \
		--workers 2 -o "$tmp/out" "$tmp"/fps/shard-*.tsv
	echo "  simhash-dask --workers 2: $(wall_of "$tmp/time.job") s wall (CPU of the client, its" \
		"scheduler and workers: $(cpu_of "$tmp/time.job") s), $(cat "$tmp"/out/part-* | wc -l) pairs"
	stages "$tmp/out/summary.json"
	"$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
w, c, pm = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]) * 1024
peaks = sum((s.get("worker_peak_memory") or {}).values())
print("  ratio: job %.2fx the time of simhash pairs -j 2 (goal <= 5x); workers peaks together"
      " %.2fx its peak (goal <= 2x)" % (w / c, peaks / pm))' "$tmp/out/summary.json" \
		"$(wall_of "$tmp/time.job")" "$(wall_of "$tmp/time.pairs")" \
		"$(field "$tmp/time.pairs" 'Maximum resident')"
	if cat "$tmp"/out/part-* | norm > "$tmp/got" && norm "$tmp/pairs.tsv" > "$tmp/want" &&
		cmp -s "$tmp/got" "$tmp/want"; then
		echo "  pairs: equal"
	else
		echo "  pairs: DIFFER"
	fi
	rm -rf "$tmp/fps" "$tmp/out" "$tmp/pairs.tsv" "$tmp/got" "$tmp/want"
fi

for lang in en zh; do
	f=$CORPUS/$lang.jsonl
	if [ ! -f "$f" ]; then
		echo "dask: $f not found, skipped"
		continue
	fi
	mkdir -p "$tmp/$lang"
	split -n l/4 -d --additional-suffix=.jsonl "$f" "$tmp/$lang/shard-"
	/usr/bin/time -v -o "$tmp/time.dedup" "$B/simhash" dedup -q --jsonl -k 5 -j 2 "$f" > "$tmp/want.tsv"
	/usr/bin/time -v -o "$tmp/time.job" "$PY" -m simhash.dask dedup -q --jsonl -k 5 --workers 2 \
		-o "$tmp/out-$lang" "$tmp/$lang"/shard-*.jsonl
	echo "dask: $lang.jsonl ($(wc -l < "$f") documents, 4 shards): simhash dedup -j 2" \
		"$(wall_of "$tmp/time.dedup") s wall; simhash-dask --workers 2 $(wall_of "$tmp/time.job") s wall"
	stages "$tmp/out-$lang/summary.json"
	if cat "$tmp/out-$lang"/part-* | norm > "$tmp/got" && norm "$tmp/want.tsv" > "$tmp/want" &&
		cmp -s "$tmp/got" "$tmp/want"; then
		echo "  pairs: equal ($(wc -l < "$tmp/want"))"
	else
		echo "  pairs: DIFFER"
	fi
	rm -rf "$tmp/$lang" "$tmp/out-$lang"
done
