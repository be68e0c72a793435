# simhash - one Makefile for the library, the command, tests, sanitizers and benchmarks.
#   make            build build/simhash, build/simhash-serve (the HTTP service that
#                   `simhash serve` runs), build/libsimhash.a and build/libsimhash.so
#   make check      unit tests, CLI end-to-end tests, fuzz corpora replayed
#   make asan       the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      throughput and quality figures (needs ../shared/corpus, skips without)
#   make install    PREFIX=/usr/local: program, library, header, simhash.pc, man page;
#                   simhash-serve goes to $(PREFIX)/libexec/simhash, where simhash finds it

PREFIX  ?= /usr/local
BUILD   ?= build
CC      ?= cc
CFLAGS  ?= -O2 -g
LIB_PKGS := icu-uc icu-i18n libxxhash libcrypto lmdb
PKGS    := $(LIB_PKGS) jansson libmicrohttpd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) opencc 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# The command links no libmicrohttpd: its GnuTLS chain costs every run ~2 ms of
# CPU to load; only simhash-serve (and what tests server/) links it.
CMD_PKG_LIBS := $(shell pkg-config --libs $(LIB_PKGS) jansson 2>/dev/null)
ALL_CFLAGS  = -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter -fPIC \
              -fvisibility=hidden -Ilib $(PKG_CFLAGS) $(CFLAGS)
LDLIBS  = $(PKG_LIBS) -lpthread -lm
CMD_LDLIBS = $(CMD_PKG_LIBS) -lpthread -lm
SOMAJOR = 0

LIB_SRC  := $(sort $(wildcard lib/*/*.c))
# simhash-serve: server/ and its front, cli/cmd_serve.c (with its main)
SERVE_MAIN := cli/cmd_serve.c
SERVER_SRC := $(sort $(wildcard server/*.c))
CLI_SRC  := $(sort $(filter-out $(SERVE_MAIN),$(wildcard cli/*.c)))
TEST_SRC := $(sort $(wildcard tests/*/test_*.c))
FUZZ_SRC := $(sort $(filter-out fuzz/driver.c,$(wildcard fuzz/*.c)))
BENCH_SRC := $(sort $(wildcard bench/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
CLI_LIBOBJ := $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o)
SERVE_OBJ := $(SERVE_MAIN:%.c=$(BUILD)/%.o) $(SERVER_OBJ)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
FUZZ_BIN := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all check check-all asan bench install uninstall clean tests fuzz-replay
all: $(BUILD)/simhash $(BUILD)/simhash-serve $(BUILD)/libsimhash.a $(BUILD)/libsimhash.so

$(BUILD)/%.o: %.c lib/simhash.h $(wildcard lib/*/*.h) $(wildcard cli/*.h) $(wildcard server/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The traditional -> simplified table, generated from OpenCC's data.
$(BUILD)/gen/gen_t2s: tools/gen_t2s.c lib/common/utf8.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(shell pkg-config --libs opencc)

$(BUILD)/gen/t2s_table.h: $(BUILD)/gen/gen_t2s tools/t2s_table.sha256 tools/check_t2s.sh
	$(BUILD)/gen/gen_t2s > $@.tmp && sh tools/check_t2s.sh $@.tmp && mv $@.tmp $@

$(BUILD)/lib/normalize/t2s.o: lib/normalize/t2s.c $(BUILD)/gen/t2s_table.h lib/common/internal.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(BUILD)/gen -c $< -o $@

$(BUILD)/libsimhash.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libsimhash.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libsimhash.so.$(SOMAJOR) $(CFLAGS) -o $@ $^ \
	  $(shell pkg-config --libs $(LIB_PKGS)) -lpthread -lm

$(BUILD)/simhash: $(CLI_OBJ) $(BUILD)/libsimhash.a
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libsimhash.a $(CMD_LDLIBS)

# The command's helpers as an archive, so that simhash-serve takes only those it uses.
$(BUILD)/cli/libcli.a: $(CLI_LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/simhash-serve: $(SERVE_OBJ) $(BUILD)/cli/libcli.a $(BUILD)/libsimhash.a
	$(CC) $(CFLAGS) -o $@ $(SERVE_OBJ) $(BUILD)/cli/libcli.a $(BUILD)/libsimhash.a $(LDLIBS)

$(BUILD)/tests/%: tests/%.c tests/test.h $(BUILD)/libsimhash.a $(CLI_LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -Icli -o $@ $< $(CLI_LIBOBJ) $(BUILD)/libsimhash.a $(CMD_LDLIBS)

$(BUILD)/fuzz/%: fuzz/%.c fuzz/driver.c $(BUILD)/libsimhash.a $(CLI_LIBOBJ) $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Icli -o $@ $< fuzz/driver.c $(CLI_LIBOBJ) $(SERVER_OBJ) \
	  $(BUILD)/libsimhash.a $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libsimhash.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< $(BUILD)/libsimhash.a $(LDLIBS)

tests: $(TEST_BIN) $(FUZZ_BIN) $(BUILD)/simhash $(BUILD)/simhash-serve

check: tests
	@sh tests/run.sh $(BUILD)

# check plus the suites that need a server, a database or a browser; each
# mk/<part>.mk adds its suite as a prerequisite (`check-all: pg-check`).
check-all: check

# The same tests, built again with the sanitizers, in their own build folder.
asan:
	$(MAKE) BUILD=build-asan CC=clang \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" check

bench: all $(BENCH_BIN)
	@sh bench/run.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/simhash $(DESTDIR)$(PREFIX)/bin/simhash
	install -d $(DESTDIR)$(PREFIX)/libexec/simhash
	install -m 755 $(BUILD)/simhash-serve $(DESTDIR)$(PREFIX)/libexec/simhash/simhash-serve
	install -m 644 $(BUILD)/libsimhash.a $(DESTDIR)$(PREFIX)/lib/libsimhash.a
	install -m 755 $(BUILD)/libsimhash.so $(DESTDIR)$(PREFIX)/lib/libsimhash.so.$(SOMAJOR)
	ln -sf libsimhash.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libsimhash.so
	install -m 644 lib/simhash.h $(DESTDIR)$(PREFIX)/include/simhash.h
	install -m 644 docs/simhash.1 $(DESTDIR)$(PREFIX)/share/man/man1/simhash.1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@PKGS@|$(LIB_PKGS)|' simhash.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/simhash.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/simhash $(DESTDIR)$(PREFIX)/libexec/simhash/simhash-serve \
	  $(DESTDIR)$(PREFIX)/lib/libsimhash.* \
	  $(DESTDIR)$(PREFIX)/include/simhash.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/simhash.pc \
	  $(DESTDIR)$(PREFIX)/share/man/man1/simhash.1
	-rmdir $(DESTDIR)$(PREFIX)/libexec/simhash 2>/dev/null

clean:
	rm -rf build build-asan build-fuzz

# libFuzzer builds: `make fuzz` makes one fuzzer per fuzz/<t>.c as build-fuzz/<t>, with
# the library and the CLI objects compiled again in build-fuzz/ with coverage and the
# sanitizers; fuzz/driver.c compiles to nothing there (libFuzzer brings main). Run one:
#   build-fuzz/normalize -max_total_time=60 fuzz/corpus/normalize
FUZZ_TARGETS := $(FUZZ_SRC:fuzz/%.c=build-fuzz/%)
.PHONY: fuzz
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang CFLAGS="-O1 -g -fno-omit-frame-pointer \
	  -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" $(FUZZ_TARGETS)

$(FUZZ_TARGETS): build-fuzz/%: fuzz/%.c fuzz/driver.c build-fuzz/libsimhash.a $(CLI_LIBOBJ) \
		$(SERVER_OBJ)
	$(CC) $(ALL_CFLAGS) -DSIMHASH_LIBFUZZER -fsanitize=fuzzer -Icli -o $@ $< fuzz/driver.c \
	  $(CLI_LIBOBJ) $(SERVER_OBJ) build-fuzz/libsimhash.a $(LDLIBS)

# Parts with their own targets (the PostgreSQL extension, the Python module,
# the service's browser tests) keep them in mk/<part>.mk.
include $(sort $(wildcard mk/*.mk))
