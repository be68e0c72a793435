#!/bin/sh
# python.sh BUILD - the Python module's figures in `make bench`
# (bench/python_bench.py says what is measured against what). Skips when the
# corpus, the original package or Debian's python3 with numpy is absent.
set -eu
BUILD=${1:-build}
SHARED=${SIMHASH_SHARED:-../shared}
CORPUS=${SIMHASH_CORPUS:-$SHARED/corpus}
ORIG=$SHARED/compat/python-simhash-2.1.2
PY=/usr/bin/python3
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
