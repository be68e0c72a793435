#!/bin/sh
# memory.sh BUILD - peak memory of `simhash fingerprint -j 1` on one large
# document (default 100 MB, MEMORY_MB), built by repeating the texts of
# ../shared/corpus/en.jsonl, then of zh.jsonl (MEMORY_LANGS: "en zh"), with
# the default features, --weight logtf and
# --features shingle -n 3. Peak resident set size from /usr/bin/time -v; the
# ratio is peak / document size, target <= 3 (issue 9). The document is made
# in a temporary folder and deleted afterwards. A missed target is printed as
# MISSED, never fails the run.
set -eu
BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
MB=${MEMORY_MB:-100}
SH=$BUILD/simhash
if [ ! -f "$CORPUS/en.jsonl" ] || [ ! -x /usr/bin/time ]; then
	echo "memory: $CORPUS/en.jsonl or /usr/bin/time not found, skipped"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
for lang in ${MEMORY_LANGS:-en zh}; do
	[ -f "$CORPUS/$lang.jsonl" ] || continue
	python3 - "$CORPUS/$lang.jsonl" "$tmp/doc.txt" "$MB" <<'PY'
import json, sys
src, dst, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = [json.loads(l)["text"] + "\n" for l in open(src, encoding="utf-8")]
want, n = mb * 1000 * 1000, 0
with open(dst, "w", encoding="utf-8") as out:
    while n < want:
        for t in texts:
            out.write(t)
            n += len(t.encode())
            if n >= want:
                break
PY
	bytes=$(wc -c <"$tmp/doc.txt")
	echo "memory: one $lang document of $bytes bytes, -j 1, peak RSS by /usr/bin/time -v"
	printf '%-28s %10s %8s %7s  %s\n' case peak-MB ratio wall-s target
	for opts in "" "--weight logtf" "--features shingle -n 3"; do
		# shellcheck disable=SC2086 # the options split into words on purpose
		/usr/bin/time -v "$SH" fingerprint -j 1 $opts "$tmp/doc.txt" >/dev/null 2>"$tmp/time.txt"
		kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
		wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time.txt")
		awk -v c="$lang ${opts:-default}" -v kb="$kb" -v b="$bytes" -v w="$wall" 'BEGIN {
			r = kb * 1024 / b
			printf "%-28s %10.1f %8.2f %7s  <= 3x  %s\n", c, kb / 1024, r, w, r <= 3 ? "ok" : "MISSED"
		}'
	done
done
