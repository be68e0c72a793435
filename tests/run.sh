#!/bin/sh
# run.sh BUILD - runs everything `make check` tests in one build folder:
#   1. tests/cli/run.sh BUILD/simhash, if it exists ("cli: N passed, N failed"),
#      and tests/cli/brute_force.py and tests/cli/flip.py BUILD/simhash where
#      python3 is; tests/cli/serve_exec.sh BUILD (`simhash serve` runs
#      BUILD/simhash-serve in its place);
#   2. each executable under BUILD/tests (sorted), which prints "NAME: N passed, N failed";
#   3. tests/layers.sh BUILD (no layer of lib/ calls a later one),
#      tests/store/order.sh BUILD (no file of lib/store calls one listed above it)
#      and tests/server_layers.sh BUILD (no object of server/ calls a later one);
#   4. each BUILD/fuzz/<name> on fuzz/corpus/<name> ("fuzz NAME: N passed, 0 failed").
# The runs are independent and go in parallel (TEST_JOBS, default the number
# of processors); their reports come in the order above. Each run adds its
# counts. A run that prints no count line, or exits non-zero while counting 0
# failed (a crash, a sanitizer report), counts one failure.
# The last line is the total, "N passed, N failed", and the exit status is 1 if
# anything failed. Under `make asan` the binaries carry ASan and UBSan: their
# options make any report fatal.
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)

ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

passed=0
failed=0
log=$(mktemp) || exit 1

# The runs are independent: they go TEST_JOBS at a time (default: the number
# of online processors) through xargs -P, each with its own log; the logs are
# then read in the order below, so the report is the same for any TEST_JOBS.
jobs=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
runs=$(mktemp -d) || exit 1
trap 'rm -f "$log"; rm -rf "$runs"' EXIT
n_runs=0

# add NAME CMD...: queues CMD (its words quoted for sh) under NAME.
add() {
	n_runs=$((n_runs + 1))
	printf '%s\n' "$1" >"$runs/$n_runs.name"
	shift
	for w in "$@"; do
		printf "'%s' " "$(printf '%s' "$w" | sed "s/'/'\\\\''/g")"
	done >"$runs/$n_runs.cmd"
}

# count NAME LOG STATUS: shows the count line of a finished run, adds it.
count() {
	name=$1
	status=$3
	cp "$2" "$log"
	line=$(grep -E '(^|[^0-9])[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	p=$(printf '%s\n' "$line" | sed -nE 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*$/\2/p')
	f=$(printf '%s\n' "$line" | sed -nE 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*$/\3/p')
	if [ -z "$p" ]; then
		p=0
		f=1
		echo "$name: no count line (exit status $status); output ends:"
		tail -n 30 "$log" | sed 's/^/    /'
	elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "$line"
		echo "$name: exited with status $status after reporting 0 failed; output ends:"
		tail -n 30 "$log" | sed 's/^/    /'
	elif [ "$f" -ne 0 ]; then
		tail -n 30 "$log" | sed 's/^/    /'
	else
		echo "$line"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

# The CLI cases take longest: queued first, one run per case file, they
# start first.
if [ -f "$root/tests/cli/run.sh" ]; then
	for f in "$root"/tests/cli/*.txt; do
		add "tests/cli/$(basename "$f")" sh "$root/tests/cli/run.sh" "$build/simhash" "$f"
	done
	add "tests/cli/serve_exec.sh" sh "$root/tests/cli/serve_exec.sh" "$build"
fi

# The command's answers against a brute-force scan in Python (pairs, join,
# index build/add/delete/query on random sets of five shapes).
if command -v python3 >/dev/null 2>&1; then
	add "tests/cli/brute_force.py" python3 "$root/tests/cli/brute_force.py" "$build/simhash"
	# one bit flipped in each copy of 25 documents' fingerprints and
	# metadata in a store's file: get and verify refuse every live one
	add "tests/cli/flip.py" python3 "$root/tests/cli/flip.py" "$build/simhash"
fi

if [ -d "$build/tests" ]; then
	for t in $(find "$build/tests" -type f -perm -u+x | sort); do
		add "$t" "$t"
	done
fi

add "tests/layers.sh" sh "$root/tests/layers.sh" "$build"
add "tests/server_layers.sh" sh "$root/tests/server_layers.sh" "$build"
# the files of lib/store in the order store.c lists them (none calls one above it)
add "tests/store/order.sh" sh "$root/tests/store/order.sh" "$build"

for t in "$build"/fuzz/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=$(basename "$t")
	add "fuzz $name" "$t" "$root/fuzz/corpus/$name"
done

i=0
while [ $i -lt $n_runs ]; do
	i=$((i + 1))
	echo $i
done | xargs -P "$jobs" -I '{}' sh -c \
	'sh "$0/{}.cmd" >"$0/{}.log" 2>&1; echo $? >"$0/{}.status"' "$runs"

i=0
while [ $i -lt $n_runs ]; do
	i=$((i + 1))
	count "$(cat "$runs/$i.name")" "$runs/$i.log" "$(cat "$runs/$i.status" 2>/dev/null || echo 1)"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
