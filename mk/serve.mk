# serve.mk - `simhash serve`: the embedded web page, the HTTP and browser
# tests (make check-all), the load benchmark (make bench).

WEB_FILES := $(sort $(wildcard web/*))

$(BUILD)/gen/web_files.h: tools/embed_web.sh $(WEB_FILES)
	@mkdir -p $(dir $@)
	sh tools/embed_web.sh $(WEB_FILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/server/static.o: server/static.c $(BUILD)/gen/web_files.h server/api_internal.h \
  server/api.h lib/simhash.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(BUILD)/gen -c $< -o $@
