#!/bin/sh
# adversarial.sh BUILD - the cost of adversarial Unicode, part of `make bench`:
# 4 MiB of "a" followed by alternating U+0301 U+0316 (and other families of
# long combining runs) fingerprinted by the command, and through the service's
# POST /v1/fingerprint, against 4 MiB of plain English text from
# ../shared/corpus in the same run. Target: under 2x the CPU time of the
# English text. Before lib/normalize/reorder.c, 1 MiB of alternating marks
# took about 220 s (quadratic canonical reordering in ICU).
#
# The command: best CPU time (user + system) of RUNS runs each, via timeit.
# The service: its own CPU time (/proc/PID/stat) over REQS requests of each.
# Environment: SIMHASH_CORPUS (default ../shared/corpus), RUNS (5), REQS (10).
set -eu
BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
RUNS=${RUNS:-5}
REQS=${REQS:-10}
SH=$BUILD/simhash

if [ ! -f "$CORPUS/en.jsonl" ]; then
	echo "adversarial: $CORPUS not found, skipped"
	exit 0
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

python3 - "$CORPUS/en.jsonl" "$tmp" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
size = 4 << 20
texts, n = [], 0
for line in open(src, encoding="utf-8"):
    t = json.loads(line)["text"]
    texts.append(t)
    n += len(t.encode())
    if n > size:
        break
english = "\n".join(texts).encode()[:size].decode("utf-8", "ignore")
families = {
    "english": english,
    "alternating": "a" + "\u0301\u0316" * (size // 4),
    "hidden": "a" + "\u0301\uff9e" * (size // 5),        # U+FF9E maps to a class-8 mark
    "decomposing": "a" + "\u0f73\u0f80" * (size // 6),   # U+0F73: two marks, class 0 itself
    "selectors": "a" + "\u0301\ufe0f\u0316\ufe00" * (size // 10),
}
for name, text in families.items():
    open(f"{out}/{name}.txt", "w", encoding="utf-8").write(text)
    json.dump({"text": text}, open(f"{out}/{name}.json", "w", encoding="utf-8"), ensure_ascii=False)
PY

echo "adversarial Unicode: 4 MiB texts, CPU seconds, ratio to the English text (target < 2)"
[ -r /proc/loadavg ] && echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %10s %7s  %10s %7s\n' text command ratio service ratio

# The service's CPU ticks so far.
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

"$SH" store create "$tmp/store" >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$SH" serve --store "$tmp/store" --listen "127.0.0.1:$port" --max-text 8388608 >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
	sleep 0.5
done
hz=$(getconf CLK_TCK)

# service NAME: CPU seconds of the service for one request of NAME.json.
service() {
	t0=$(ticks)
	i=0
	while [ "$i" -lt "$REQS" ]; do
		curl -sf -o /dev/null -H 'Content-Type: application/json' \
			--data-binary "@$tmp/$1.json" "http://127.0.0.1:$port/v1/fingerprint"
		i=$((i + 1))
	done
	t1=$(ticks)
	awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$REQS" 'BEGIN { printf "%.4f", (b - a) / hz / n }'
}

en_cmd=$("$BUILD/bench/timeit" "$RUNS" "$SH" fingerprint "$tmp/english.txt" | cut -d' ' -f2)
en_svc=$(service english)
printf '%-14s %10.4f %7s  %10.4f %7s\n' english "$en_cmd" 1 "$en_svc" 1
for name in alternating hidden decomposing selectors; do
	cmd=$("$BUILD/bench/timeit" "$RUNS" "$SH" fingerprint "$tmp/$name.txt" | cut -d' ' -f2)
	svc=$(service "$name")
	awk -v n="$name" -v c="$cmd" -v ec="$en_cmd" -v s="$svc" -v es="$en_svc" 'BEGIN {
		rc = c / ec; rs = s / es
		printf "%-14s %10.4f %7.2f  %10.4f %7.2f  %s\n", n, c, rc, s, rs,
			(rc < 2 && rs < 2) ? "ok" : "MISSED"
	}'
done
