#!/bin/sh
# venv_check.sh BUILD - `make dask-venv-check` (part of make check-all): the
# documented install path. Makes a virtual environment that sees Debian's
# packages (python3 -m venv --system-site-packages) in a temporary folder,
# installs ./python into it offline (pip --no-build-isolation --no-index),
# which builds libsimhash from source, then runs `simhash-dask --help` and a
# tiny job whose pairs must equal `simhash pairs`. Prints
# `dask-venv: N passed, N failed`.
set -u
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() { # NAME STATUS
	if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "ok   $1"
	else failed=$((failed + 1)); echo "FAIL $1"; fi
}
/usr/bin/python3 -m venv --system-site-packages "$tmp/env"
# a copy of the tree, so that the install leaves nothing in the repository
mkdir "$tmp/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard 2>/dev/null | xargs -0 tar cf - 2>/dev/null || \
	tar cf - --exclude=./build --exclude=./build-asan --exclude=./build-pyasan --exclude=./build-fuzz .) \
	| tar xf - -C "$tmp/src"
(cd "$tmp" && env -u PYTHONPATH "$tmp/env/bin/pip" install -q --no-build-isolation --no-index \
	"$tmp/src/python") >"$tmp/pip.log" 2>&1
st=$?
[ $st = 0 ] || tail -20 "$tmp/pip.log"
check "pip install --no-build-isolation --no-index ./python in a venv" $st
(cd "$tmp" && env -u PYTHONPATH "$tmp/env/bin/simhash-dask" dedup --help) >"$tmp/help" 2>&1
st=$?
grep -q -- '--scheduler ADDRESS' "$tmp/help" || st=1
check "simhash-dask dedup --help from the venv" $st
# the venv's module, not the tree's: its file must be under the venv
where=$(cd "$tmp" && env -u PYTHONPATH "$tmp/env/bin/python" -c 'import simhash; print(simhash.__file__)')
case $where in "$tmp/env/"*) st=0 ;; *) st=1; echo "module from $where" ;; esac
check "the venv imports its own simhash" $st
printf '0123456789abcdef\ta\n0123456789abcdee\tb\nfedcba9876543210\tc\n0123456789abcd00\td\n' \
	>"$tmp/fp.tsv"
(cd "$tmp" && env -u PYTHONPATH "$tmp/env/bin/simhash-dask" dedup -q --workers 1 --fingerprints \
	-k 3 -o "$tmp/out" fp.tsv) >"$tmp/job.log" 2>&1
st=$?
[ $st = 0 ] || cat "$tmp/job.log"
cat "$tmp"/out/part-* 2>/dev/null | awk -F'\t' '{ if ($1 > $2) print $2 "\t" $1 "\t" $3; else print }' \
	| sort >"$tmp/got"
"$build/simhash" pairs -q -k 3 "$tmp/fp.tsv" | sort >"$tmp/want"
[ -s "$tmp/want" ] && cmp -s "$tmp/got" "$tmp/want" && [ -f "$tmp/out/_SUCCESS" ] || st=1
check "a tiny job from the venv equals simhash pairs" $st
echo "dask-venv: $passed passed, $failed failed"
[ $failed = 0 ]
