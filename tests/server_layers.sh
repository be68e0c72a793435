#!/bin/sh
# server_layers.sh BUILD - the objects of server/ call one way, in the order
# server/api.h lists them (reply at the bottom, http.c on top): no object may
# use a symbol defined by one listed after it, so there is no circle of use
# (a router that is also the helpers' library). Checked on the compiled
# objects with nm, so a call through any header is caught; an object that
# is not in the list fails too, so that a new file takes its place in it
# (an object left from a source file since removed is passed over).
# Prints "server layers: N passed, N failed".
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
order="reply request service_store static routes_stateless routes_documents api deadline head
metrics http"
passed=0
failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! ls "$build"/server/*.o >/dev/null 2>&1; then
	echo "server layers: no objects in $build/server"
	exit 1
fi
for o in "$build"/server/*.o; do
	name=$(basename "$o" .o)
	[ -f "$root/server/$name.c" ] || continue
	case " $(echo $order) " in
	*" $name "*) ;;
	*)
		echo "FAIL: $o is not in the order of tests/server_layers.sh (and server/api.h)"
		failed=$((failed + 1))
		;;
	esac
done
# Walk from the top: each object against the objects above it.
above=""
for name in $(echo $order | tr ' ' '\n' | sed '1!G;h;$!d'); do
	o="$build/server/$name.o"
	if [ ! -f "$o" ]; then
		echo "FAIL: $o is missing"
		failed=$((failed + 1))
		continue
	fi
	nm -u "$o" | awk '{ print $2 }' | sort -u >"$tmp/undef"
	for up in $above; do
		bad=$(comm -12 "$tmp/undef" "$tmp/def.$up")
		if [ -n "$bad" ]; then
			echo "FAIL: server/$name.o uses server/$up.o: $(echo $bad)"
			failed=$((failed + 1))
		else
			passed=$((passed + 1))
		fi
	done
	nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$name"
	above="$above $name"
done
echo "server layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
