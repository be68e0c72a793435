#!/bin/sh
# run.sh BUILD - `make bench`: the speed figures (speed.sh), peak memory on one
# large document (memory.sh), then the quality
# figures (quality.sh), both on ../shared/corpus (or $SIMHASH_CORPUS). Without
# the corpus it says so and succeeds: the benchmark is optional, the tests are not.
set -eu
BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
sh bench/index.sh "$BUILD"
echo
if [ ! -d "$CORPUS" ]; then
	echo "bench: $CORPUS not found, skipped"
	exit 0
fi
sh bench/speed.sh "$BUILD"
echo
sh bench/memory.sh "$BUILD"
echo
sh bench/quality.sh "$BUILD"
echo
sh bench/python.sh "$BUILD"
