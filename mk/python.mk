# mk/python.mk - the Python module `simhash` (python/), on Debian's python3-cffi.
#   make python         build it into build/python/ (PYTHONPATH=build/python)
#   make python-check   its pytest suite (part of `make check`)
#   make python-asan    the suite under ASan, library and module built for it
#   make install        also installs it for Debian's python3
# Debian's own interpreter: the python3 first on PATH may lack its modules.
PYTHON ?= /usr/bin/python3
PY_SRC := $(wildcard python/simhash/*.py python/simhash/*.pyi) python/simhash/py.typed
PY_PURELIB = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("purelib", vars={"base": "$(PREFIX)"}))' 2>/dev/null)

.PHONY: python python-check python-asan python-install

python: $(BUILD)/python/simhash/.built

$(BUILD)/python/simhash/.built: python/build_ffi.py python/native.c lib/simhash.h \
		$(BUILD)/libsimhash.a $(PY_SRC)
	@mkdir -p $(BUILD)/python/simhash
	cp $(PY_SRC) $(BUILD)/python/simhash/
	$(PYTHON) python/build_ffi.py $(BUILD)/python $(BUILD)/libsimhash.a "$(PY_EXTRA_CFLAGS)"
	@touch $@

python-check: python
	@sh python/run_tests.sh $(PYTHON) $(BUILD)/python

check: python-check

# The suite once under AddressSanitizer: the library, and the module's own C,
# built with it (gcc's, as Debian's python3 is), the runtime preloaded.
python-asan:
	$(MAKE) BUILD=build-pyasan CC=gcc \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  PY_EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
	  build-pyasan/libsimhash.a
	$(MAKE) BUILD=build-pyasan CC=gcc \
	  PY_EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" python
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  sh python/run_tests.sh $(PYTHON) build-pyasan/python

install: python-install

python-install: python
	install -d $(DESTDIR)$(PY_PURELIB)/simhash
	install -m 644 $(BUILD)/python/simhash/*.py $(BUILD)/python/simhash/py.typed \
	  $(DESTDIR)$(PY_PURELIB)/simhash/
	install -m 644 $(wildcard $(BUILD)/python/simhash/*.pyi) $(DESTDIR)$(PY_PURELIB)/simhash/ 2>/dev/null || true
	install -m 755 $(BUILD)/python/simhash/_native*.so $(DESTDIR)$(PY_PURELIB)/simhash/
bench: python
