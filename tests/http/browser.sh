#!/bin/sh
# browser.sh BUILD - runs tests/http/browser.js against `simhash serve` (on a
# fresh store when the program has `simhash store`) in Debian's headless
# chromium, with playwright-core from npm installed into BUILD/node. Skips
# with a message, and a count line of 0 failed, when chromium or npm is
# missing. Keeps the screenshot in BUILD/http/page.png.
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SIMHASH:-$root/$build/simhash}
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
	echo "browser: no chromium at $chromium: skipped"
	echo "browser: 0 passed, 0 failed"
	exit 0
fi
if [ ! -d "$root/$build/node/node_modules/playwright-core" ]; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "browser: no npm to install playwright-core: skipped"
		echo "browser: 0 passed, 0 failed"
		exit 0
	fi
	mkdir -p "$root/$build/node"
	(cd "$root/$build/node" && npm install --no-audit --no-fund --silent playwright-core@1) ||
		{ echo "browser: npm install playwright-core failed"; echo "browser: 0 passed, 1 failed"; exit 1; }
fi
mkdir -p "$root/$build/http"
tmp=$(mktemp -d) || exit 1
out=$tmp/serve.out
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
store_arg=
with_store=
if "$bin" store --help >/dev/null 2>&1; then
	"$bin" store create "$tmp/store" >/dev/null || exit 1
	store_arg="--store $tmp/store"
	with_store=1
else
	echo "browser: no 'simhash store' command: search and add are not tested"
fi
"$bin" serve --listen 127.0.0.1:0 $store_arg >"$out" 2>&1 &
pid=$!
i=0
while ! grep -q '^listening on' "$out" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
url=$(sed -n 's/^listening on //p' "$out")
if [ -z "$url" ]; then
	echo "browser: the server did not start:"; cat "$out"
	echo "browser: 0 passed, 1 failed"
	exit 1
fi
NODE_PATH=$root/$build/node/node_modules CHROMIUM=$chromium \
	node "$root/tests/http/browser.js" "$url" "$root/$build/http/page.png" $with_store
