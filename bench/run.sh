#!/bin/sh
# run.sh BUILD - `make bench`: the index (index.sh, generated data), all pairs
# and dedup (pairs.sh: generated data, then the corpus), the store (store.sh)
# and the HTTP service under load (serve.sh, with wrk), the speed
# figures (speed.sh), peak memory on one large document (memory.sh), the cost
# of adversarial Unicode (adversarial.sh), the interrupt hook's cost and how
# soon it stops a call (interrupt.sh), the quality figures (quality.sh) and
# those of the exact near-duplicate decision (near.sh) on
# ../shared/corpus (or $SIMHASH_CORPUS), then the
# PostgreSQL extension's index (pg.sh, generated data) and its shards over
# postgres_fdw against one table (pg_shard.sh), and how soon a timeout stops
# a long fingerprint in SQL (pg_cancel.sh). Without the corpus or
# PostgreSQL each part says so and succeeds: the benchmark is optional, the tests
# are not.
set -eu
BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
sh bench/index.sh "$BUILD"
echo
sh bench/pairs.sh "$BUILD"
echo
sh bench/store.sh "$BUILD"
echo
sh bench/serve.sh "$BUILD"
echo
if [ ! -d "$CORPUS" ]; then
	echo "bench: $CORPUS not found, skipped"
else
	sh bench/speed.sh "$BUILD"
	echo
	sh bench/memory.sh "$BUILD"
	echo
	sh bench/adversarial.sh "$BUILD"
	echo
	sh bench/interrupt.sh "$BUILD"
	echo
	sh bench/quality.sh "$BUILD"
	echo
	sh bench/near.sh "$BUILD"
fi
echo
sh bench/pg.sh "$BUILD"
echo
sh bench/pg_cancel.sh "$BUILD"
echo
sh bench/pg_shard.sh "$BUILD"
echo
sh bench/python.sh "$BUILD"
