# The store's benchmark (bench/store.sh), run by `make bench` before the
# corpus figures: it needs no corpus.
.PHONY: bench-store
bench: bench-store
bench-store: all $(BUILD)/bench/store
	@sh bench/store.sh $(BUILD)
