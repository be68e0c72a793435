# serve.mk - `simhash serve`: the embedded web page, the HTTP and browser
# tests (make check-all), the load benchmark (make bench).

WEB_FILES := $(sort $(wildcard web/*))

$(BUILD)/gen/web_files.h: tools/embed_web.sh $(WEB_FILES)
	@mkdir -p $(dir $@)
	sh tools/embed_web.sh $(WEB_FILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/server/static.o: server/static.c $(BUILD)/gen/web_files.h server/static.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(BUILD)/gen -c $< -o $@

# The HTTP suites run the real program on 127.0.0.1 and a free port: the API
# end to end, the examples of docs/http.md, the attacks on request heads and
# bodies (about 15 s: smuggling, NUL bytes, Host, slow heads, stalled bodies),
# 20 SIGKILL cycles, and a store that goes wrong (a flipped bit, a full 2 MB
# tmpfs when mounting is permitted).
.PHONY: http-check browser-check
http-check: $(BUILD)/simhash $(BUILD)/simhash-serve
	@python3 tests/http/test_api.py $(BUILD)/simhash
	@python3 tests/http/test_docs.py $(BUILD)/simhash docs/http.md
	@python3 tests/http/test_attacks.py $(BUILD)/simhash
	@python3 tests/http/test_durability.py $(BUILD)/simhash 20
	@python3 tests/http/test_trust_store.py $(BUILD)/simhash

# The page in headless Chromium (Debian's chromium) driven by playwright-core
# from npm, installed into $(BUILD)/node; skipped without chromium or npm.
# The screenshot stays in $(BUILD)/http/page.png.
browser-check: $(BUILD)/simhash $(BUILD)/simhash-serve
	@sh tests/http/browser.sh $(BUILD)

check-all: http-check browser-check

# The load benchmark: 1 million documents, wrk on loopback (skips without wrk).
.PHONY: bench-serve
bench-serve: all
	@sh bench/serve.sh $(BUILD)

bench: bench-serve
