#!/bin/sh
# order.sh BUILD - the files of lib/store call one way: each object uses only
# symbols of the files listed below its own in the list at the top of
# lib/store/store.c ("The store's files, each calling only files listed below
# it"), so the list a reader follows is the one checked (tests/call_order.sh).
# Every lib/store/*.c must be listed. Prints "store order: N passed, N failed".
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)

order=$(sed -n "/The store's files, each calling only files listed below it:/,/^ \* (/p" \
	"$root/lib/store/store.c" | sed -nE 's/^ \*   ([a-z_0-9]+)\.c .*/\1/p')
if [ -z "$order" ]; then
	echo "FAIL: no list of files in lib/store/store.c"
	echo "store order: 0 passed, 1 failed"
	exit 1
fi
exec sh "$root/tests/call_order.sh" "store order" "$build" lib/store $order
