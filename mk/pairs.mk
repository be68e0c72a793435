# simhash pairs and dedup: their benchmarks run first in `make bench`
# (bench/pairs.sh; PAIRS_100M=0 skips the 100-million case).
.PHONY: bench-pairs
bench: bench-pairs
bench-pairs: all $(BENCH_BIN)
	@sh bench/pairs.sh $(BUILD)
