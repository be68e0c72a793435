#!/bin/sh
# run.sh BUILD - `make bench`: the speed figures (speed.sh), then the quality
# figures (quality.sh), both on ../shared/corpus (or $SIMHASH_CORPUS), then the
# PostgreSQL extension's index (pg.sh, generated data). Without the corpus or
# PostgreSQL each part says so and succeeds: the benchmark is optional, the tests
# are not.
set -eu
BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
sh bench/index.sh "$BUILD"
echo
if [ ! -d "$CORPUS" ]; then
	echo "bench: $CORPUS not found, skipped"
else
	sh bench/speed.sh "$BUILD"
	echo
	sh bench/quality.sh "$BUILD"
fi
echo
sh bench/pg.sh "$BUILD"
