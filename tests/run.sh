#!/bin/sh
# run.sh BUILD - runs everything `make check` tests in one build folder:
#   1. each executable under BUILD/tests (sorted), which prints "NAME: N passed, N failed";
#   2. tests/layers.sh BUILD (no layer of lib/ calls a later one), then
#      tests/cli/run.sh BUILD/simhash, if it exists ("cli: N passed, N failed");
#   3. each BUILD/fuzz/<name> on fuzz/corpus/<name> ("fuzz NAME: N passed, 0 failed").
# Each run adds its counts. A run that prints no count line, or exits non-zero
# while counting 0 failed (a crash, a sanitizer report), counts one failure.
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
trap 'rm -f "$log"' EXIT

# run NAME CMD...: runs CMD with its output in $log, shows the count line, adds it.
run() {
	name=$1
	shift
	"$@" >"$log" 2>&1
	status=$?
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

if [ -d "$build/tests" ]; then
	for t in $(find "$build/tests" -type f -perm -u+x | sort); do
		run "$t" "$t"
	done
fi

run "tests/layers.sh" sh "$root/tests/layers.sh" "$build"

if [ -f "$root/tests/cli/run.sh" ]; then
	run "tests/cli/run.sh" sh "$root/tests/cli/run.sh" "$build/simhash"
fi

for t in "$build"/fuzz/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=$(basename "$t")
	run "fuzz $name" "$t" "$root/fuzz/corpus/$name"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
