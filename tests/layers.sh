#!/bin/sh
# layers.sh BUILD - the layers of lib/ call one way (hash -> normalize ->
# features -> fingerprint -> index -> store, common below all): no object of
# a layer may use a symbol defined by a layer after it. Checked on the
# compiled objects with nm, so a call through any header is caught.
# Prints "layers: N passed, N failed".
build=${1:-build}
order="common hash normalize features fingerprint index store"
passed=0
failed=0
later=""
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for layer in $order; do
	ls "$build/lib/$layer"/*.o >/dev/null 2>&1 || continue
	nm -g --defined-only "$build/lib/$layer"/*.o 2>/dev/null |
		awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$layer"
done
rev=""
for layer in $order; do rev="$layer $rev"; done
# Walk from the top: each layer against the layers above it.
above=""
for layer in $rev; do
	[ -f "$tmp/def.$layer" ] || continue
	if [ -n "$above" ]; then
		for o in "$build/lib/$layer"/*.o; do
			nm -u "$o" | awk '{ print $2 }' | sort -u >"$tmp/undef"
			for up in $above; do
				bad=$(comm -12 "$tmp/undef" "$tmp/def.$up")
				if [ -n "$bad" ]; then
					echo "FAIL: $o ($layer) uses $up: $(echo $bad)"
					failed=$((failed + 1))
				else
					passed=$((passed + 1))
				fi
			done
		done
	fi
	above="$above $layer"
done
echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
