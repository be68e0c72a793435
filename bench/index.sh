#!/bin/sh
# index.sh BUILD - online query speed of the exact Hamming index (bench/index_query.c):
# 10 million stored 64-bit fingerprints, uniform and biased (each bit 1 with
# probability 0.72, like default-mode English fingerprints) and clustered
# (half of them within 8 bits of one of 10,000 centres), k = 3, 6 and 10,
# each against the popcount scan of the same set in the same run (AVX-512
# VPOPCNTQ where the CPU has it, else AVX2).
# Targets (issue 8): k=3 >= 300,000 queries/s per core; k=6 >= 100x the scan;
# k=10 >= 20x. Needs no corpus. SIMHASH_INDEX_N overrides the size.
set -eu
BUILD=${1:-build}
N=${SIMHASH_INDEX_N:-10000000}
echo "== index queries (one thread, thread CPU time)"
for p in 0.5 0.72 clustered; do
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "index peak memory p=$p: %M KB" "$BUILD/bench/index_query" "$N" "$p" 3 6 10
	else
		"$BUILD/bench/index_query" "$N" "$p" 3 6 10
	fi
done
