# mk/center.mk - the centering table of the v2 default (lib/fingerprint/center_table.h,
# docs/quality.md):
#   (every build)     the committed table is checked against tools/center_table.sha256
#   make center-table regenerate it from the general corpus (SIMHASH_CORPUS, default
#                     ../shared/corpus: en.jsonl, zh.jsonl) into $(BUILD)/gen/ and
#                     check that it is the committed one, byte for byte
SIMHASH_CORPUS ?= ../shared/corpus
.PHONY: center-table

$(BUILD)/gen/center_table.ok: lib/fingerprint/center_table.h tools/center_table.sha256 \
		tools/check_center.sh
	@mkdir -p $(dir $@)
	sh tools/check_center.sh lib/fingerprint/center_table.h && touch $@

$(BUILD)/lib/fingerprint/auto.o: $(BUILD)/gen/center_table.ok

$(BUILD)/gen/gen_center: tools/gen_center.c $(BUILD)/libsimhash.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libsimhash.a $(LDLIBS)

center-table: $(BUILD)/gen/gen_center
	$(BUILD)/gen/gen_center $(SIMHASH_CORPUS)/en.jsonl $(SIMHASH_CORPUS)/zh.jsonl \
	  > $(BUILD)/gen/center_table.h
	sh tools/check_center.sh $(BUILD)/gen/center_table.h
	@echo "center-table: $(BUILD)/gen/center_table.h is the committed table"
