#!/bin/sh
# python.sh BUILD - the Python module's figures in `make bench`: Index with
# numpy arrays against the command line (bench/python_arrays.py, generated
# data; PY_INDEX_N sets the stored count), then bench/python_bench.py (which
# says what is measured against what). Skips what needs the corpus, the
# original package or Debian's python3 with numpy when they are absent.
set -eu
BUILD=${1:-build}
SHARED=${SIMHASH_SHARED:-../shared}
CORPUS=${SIMHASH_CORPUS:-$SHARED/corpus}
ORIG=$SHARED/compat/python-simhash-2.1.2
PY=/usr/bin/python3
# Index with numpy arrays in and out against the command line (no corpus needed)
if $PY -c 'import numpy' 2>/dev/null && [ -d "$BUILD/python/simhash" ]; then
	echo "== python Index: numpy arrays against simhash index query (10M stored, 300,000 queries)"
	$PY bench/python_arrays.py "$BUILD/python" "$BUILD/simhash" "${PY_INDEX_N:-10000000}" 300000
	echo
fi
if [ ! -f "$CORPUS/en.jsonl" ] || [ ! -d "$ORIG" ]; then
	echo "bench python: $CORPUS or $ORIG not found, skipped"
	exit 0
fi
if ! $PY -c 'import numpy' 2>/dev/null; then
	echo "bench python: $PY without numpy, skipped"
	exit 0
fi
if [ ! -d "$BUILD/python/simhash" ]; then
	echo "bench python: $BUILD/python not built (make python), skipped"
	exit 0
fi
$PY bench/python_bench.py "$BUILD/python" "$ORIG" "$CORPUS"
