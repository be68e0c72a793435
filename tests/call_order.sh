#!/bin/sh
# call_order.sh LABEL BUILD DIR NAME... - the objects of DIR (lib/store,
# server) call one way: NAME... lists them from the top (the callers) down,
# and no object may use a symbol defined by one listed before it, so there
# is no circle of use. Checked with nm on BUILD/DIR/NAME.o, so a call through
# any header is caught; a listed object that is missing fails, and so does a
# DIR/*.c that is not listed, so that a new file takes its place in the list.
# tests/layers.sh checks the layers of lib/ the same way, directory by
# directory. Prints "LABEL: N passed, N failed".
label=$1
build=$2
dir=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

for c in "$root/$dir"/*.c; do
	name=$(basename "$c" .c)
	case " $* " in
	*" $name "*) passed=$((passed + 1)) ;;
	*)
		echo "FAIL: $dir/$name.c is not in the list of $label"
		failed=$((failed + 1))
		;;
	esac
done
above=""
for name in "$@"; do
	o="$build/$dir/$name.o"
	if [ ! -f "$o" ]; then
		echo "FAIL: $o is missing (it is listed)"
		failed=$((failed + 1))
		continue
	fi
	nm -g --defined-only "$o" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$name"
	nm -u "$o" | awk '{ print $2 }' | sort -u >"$tmp/undef"
	for up in $above; do
		bad=$(comm -12 "$tmp/undef" "$tmp/def.$up")
		if [ -n "$bad" ]; then
			echo "FAIL: $dir/$name.o uses $up.o, listed above it: $(echo $bad)"
			failed=$((failed + 1))
		else
			passed=$((passed + 1))
		fi
	done
	above="$above $name"
done
echo "$label: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
