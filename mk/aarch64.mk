# aarch64.mk - the library outside x86 (tests/aarch64.sh says what each part needs):
#   make check-aarch64-syntax  every C file of lib/ cli/ server/ tests/ fuzz/ compiles for
#                              aarch64 (aarch64-linux-gnu-gcc -fsyntax-only); part of
#                              check-all, about 10 s; skips without the cross compiler
#   make check-aarch64         that, then the library and the unit tests built for
#                              aarch64 in $(BUILD)-aarch64 and run under qemu-aarch64
#                              (needs qemu-user and the arm64 libraries; skips without)
.PHONY: check-aarch64 check-aarch64-syntax

check-aarch64-syntax: $(BUILD)/gen/t2s_table.h $(BUILD)/gen/web_files.h
	@sh tests/aarch64.sh syntax $(BUILD)

check-aarch64: check-aarch64-syntax
	@sh tests/aarch64.sh run $(BUILD) $(BUILD)-aarch64

check-all: check-aarch64-syntax

.PHONY: clean-aarch64
clean-aarch64:
	rm -rf build-aarch64
clean: clean-aarch64
