#!/bin/sh
# order.sh BUILD - the files of lib/store call one way: each object uses only
# symbols of the files listed below its own in the list at the top of
# lib/store/store.c ("The store's files, each calling only files listed below
# it"), so the list a reader follows is the one checked. Every lib/store/*.c
# must be listed. Checked with nm on the compiled objects, as tests/layers.sh
# checks the layers of lib/. Prints "store order: N passed, N failed".
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
passed=0
failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

order=$(sed -n "/The store's files, each calling only files listed below it:/,/^ \* (/p" \
	"$root/lib/store/store.c" | sed -nE 's/^ \*   ([a-z_0-9]+)\.c .*/\1/p')
if [ -z "$order" ]; then
	echo "FAIL: no list of files in lib/store/store.c"
	echo "store order: 0 passed, 1 failed"
	exit 1
fi
for c in "$root"/lib/store/*.c; do
	name=$(basename "$c" .c)
	if printf '%s\n' $order | grep -qx "$name"; then
		passed=$((passed + 1))
	else
		echo "FAIL: lib/store/$name.c is not in store.c's list of files"
		failed=$((failed + 1))
	fi
done
# Walk the list from the top: each file against those above it.
above=""
for name in $order; do
	o="$build/lib/store/$name.o"
	if [ ! -f "$o" ]; then
		echo "FAIL: $o missing (listed in store.c)"
		failed=$((failed + 1))
		continue
	fi
	nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$name"
	nm -u "$o" | awk '{ print $2 }' | sort -u >"$tmp/undef"
	for up in $above; do
		bad=$(comm -12 "$tmp/undef" "$tmp/def.$up")
		if [ -n "$bad" ]; then
			echo "FAIL: lib/store/$name.o uses $up.o, listed above it: $(echo $bad)"
			failed=$((failed + 1))
		else
			passed=$((passed + 1))
		fi
	done
	above="$above $name"
done
echo "store order: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
