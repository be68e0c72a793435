#!/bin/sh
# near.sh BUILD - `make bench` figures of `simhash dedup` with no options (the
# exact per-pair decision, simhash_near_*, on banded MinHash candidates):
#
#   case                                   simhash run                         baseline (same run)
#   en.jsonl, zh.jsonl                     dedup --jsonl (pairs)               fingerprint --jsonl
#   300,000 short lines (near_data.py)     dedup --lines --output keep         fingerprint --lines
#   100,000 lines of one template          dedup --lines --output keep         fingerprint --lines
#   quality: eval short_zh + short_en +    dedup --jsonl, scored set by set    -
#   natural in one file                    by set by score.py
#   the lines' sketches alone (sketch.c)   vector paths                        portable paths
#
# Each figure is the least CPU time of RUNS (3) interleaved runs of the two,
# to the microsecond (bench/timeit.c; /usr/bin/time gives hundredths, 7 % of
# a 0.15 s run).
# Targets (printed as MISSED when missed, never failing the run): CPU time
# (user + system) within 2x of fingerprint alone; peak memory on the lines
# under 1 GB; F1 short_zh >= 0.88, short_en >= 0.95, natural >= 0.97; pairs
# across sets under 0.5% of the pairs printed. Environment: SIMHASH_CORPUS
# (../shared/corpus); without it, skipped.
set -eu
BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
SH=$BUILD/simhash
if [ ! -f "$CORPUS/en.jsonl" ] || [ ! -f "$CORPUS/eval/natural.jsonl" ]; then
	echo "bench: $CORPUS not found, near-duplicate figures skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
python3 bench/near_data.py "$CORPUS" "$tmp"

echo "== dedup, no options (exact similarity of banded MinHash candidates), against fingerprint alone, CPU time (user + system)"
echo "   machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# timed CMD...: one run of CMD, its output to /dev/null; sets wall, cpu (user
# + system, seconds) and rss (peak, MB).
timed() {
	# shellcheck disable=SC2046 # "WALL CPU RSS" splits into three words on purpose
	set -- $("$BUILD/bench/timeit" 1 "$@")
	wall=$1 cpu=$2 rss=$3
}
# best_pair FILE MODE DEDUP_ARGS...: RUNS interleaved runs of fingerprint and
# dedup on FILE; fcpu, frss: fingerprint's least CPU time and its peak; cpu,
# wall, rss: dedup's least CPU time, and the wall time and peak of that run.
best_pair() {
	file=$1 mode=$2
	shift 2
	fcpu= bcpu=
	for r in $(seq "${RUNS:-3}"); do
		timed "$SH" fingerprint "$mode" "$file"
		if [ -z "$fcpu" ] || awk -v a="$cpu" -v b="$fcpu" 'BEGIN { exit !(a < b) }'; then
			fcpu=$cpu frss=$rss
		fi
		timed "$SH" dedup -q "$mode" "$@" "$file"
		if [ -z "$bcpu" ] || awk -v a="$cpu" -v b="$bcpu" 'BEGIN { exit !(a < b) }'; then
			bcpu=$cpu bwall=$wall brss=$rss
		fi
	done
	cpu=$bcpu wall=$bwall rss=$brss
}
run_case() { # run_case NAME MODE FILE DEDUP_ARGS...
	name=$1 mode=$2 file=$3
	shift 3
	best_pair "$file" "$mode" "$@"
	printf '%-12s dedup %6.3f s cpu (%5.3f s wall, %4s MB)  fingerprint %5.3f s cpu (%4s MB)  ratio %sx %s\n' \
		"$name" "$cpu" "$wall" "$rss" "$fcpu" "$frss" \
		"$(awk -v a="$cpu" -v b="$fcpu" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')" \
		"$(awk -v a="$cpu" -v b="$fcpu" 'BEGIN { print (a <= 2 * b) ? "ok (<= 2x)" : "MISSED (<= 2x)" }')"
}
run_case en.jsonl --jsonl "$CORPUS/en.jsonl"
run_case zh.jsonl --jsonl "$CORPUS/zh.jsonl"
run_case "300k lines" --lines "$tmp/lines.txt" --output keep
printf '300k lines   peak memory %s MB %s\n' "$rss" \
	"$(awk -v m="$rss" 'BEGIN { print (m < 1024) ? "ok (< 1 GB)" : "MISSED (< 1 GB)" }')"
# one template: every pair near, the buckets up to the whole input (no target:
# the merges that join it are the work; quadratic before buckets were grouped)
best_pair "$tmp/template.txt" --lines --output keep
printf '%-12s dedup %6.3f s cpu (%4s MB)  fingerprint %5.3f s cpu  ratio %sx (no target)\n' \
	"template" "$cpu" "$rss" "$fcpu" "$(awk -v a="$cpu" -v b="$fcpu" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')"

echo
echo "== the lines' sketches alone (simhash_near_sketch, one thread): vector paths against the portable ones, same keys"
"$BUILD/bench/sketch" "$tmp/lines.txt" || echo "sketch: the two paths gave different keys"

echo
echo "== quality: one run of dedup --jsonl (no other option) on short_zh + short_en + natural, scored set by set"
"$SH" dedup -q --jsonl "$tmp/mix.jsonl" -o "$tmp/mix.pairs"
awk -F'\t' -v d="$tmp" '{ a = substr($1, 1, 3); b = substr($2, 1, 3)
	sa = a == "zh-" ? "short_zh" : a == "en-" ? "short_en" : "natural"
	sb = b == "zh-" ? "short_zh" : b == "en-" ? "short_en" : "natural"
	if (sa != sb) cross++; else print > (d "/" sa ".pairs") }
	END { printf "pairs %d, across sets %d (%.3f%%) %s\n", NR, cross, NR ? 100 * cross / NR : 0,
		(cross < 0.005 * NR) ? "ok (< 0.5%)" : "MISSED (< 0.5%)" }' "$tmp/mix.pairs"
for s in short_zh:0.88 short_en:0.95 natural:0.97; do
	set=${s%%:*} target=${s##*:}
	touch "$tmp/$set.pairs"
	python3 "$CORPUS/score.py" "$set" "$tmp/$set.pairs" --kmax 20 --json | python3 -c '
import json, sys
d = json.load(sys.stdin); r = d["rows"][-1]; t = float(sys.argv[2])
print("%-9s F1 %.4f  precision %.4f  recall %.4f  (%d pairs)  %s" % (sys.argv[1], r["f1"],
      r["precision"] or 0, r["recall"] or 0, r["predicted"], "ok (>= %s)" % t if r["f1"] >= t
      else "MISSED (>= %s)" % t))' "$set" "$target"
done
