# mk/python.mk - the Python module `simhash` (python/), on Debian's python3-cffi.
#   make python         build it into build/python/ (PYTHONPATH=build/python)
#   make python-check   its pytest suite (part of `make check`)
#   make python-asan    the suite under ASan, library and module built for it
#                       (part of `make check-all`)
#   make install        also installs it for Debian's python3
# Debian's own interpreter: the python3 first on PATH may lack its modules.
PYTHON ?= /usr/bin/python3
PY_SRC := $(wildcard python/simhash/*.py python/simhash/*.pyi) python/simhash/py.typed
# Where Debian's python3 looks: /usr/lib/python3/dist-packages for PREFIX=/usr,
# else PREFIX/lib/python3.X/dist-packages (on sys.path for /usr/local).
PY_VER = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_SITE ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PY_VER)/dist-packages)

.PHONY: python python-check python-asan python-install python-uninstall

python: $(BUILD)/python/simhash/.built

$(BUILD)/python/simhash/.built: python/build_ffi.py python/native.c python/native_dask.c lib/simhash.h \
		$(BUILD)/libsimhash.a $(PY_SRC)
	@mkdir -p $(BUILD)/python/simhash
	cp $(PY_SRC) $(BUILD)/python/simhash/
	$(PYTHON) python/build_ffi.py $(BUILD)/python $(BUILD)/libsimhash.a "$(PY_EXTRA_CFLAGS)"
	@touch $@

# Under `make asan` (clang's sanitizers) the module could not load without
# their runtime: python-asan runs the suite under ASan instead.
ifneq (,$(findstring sanitize,$(CFLAGS)))
python-check:
	@echo "python: skipped in a sanitizer build; make python-asan runs the suite under ASan"
else
python-check: python
	@sh python/run_tests.sh $(PYTHON) $(BUILD)/python
endif

check: python-check

# The suite once under AddressSanitizer: the library, and the module's own C,
# built with it (gcc's, as Debian's python3 is), the runtime preloaded.
check-all: python-asan

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
	install -d $(DESTDIR)$(PY_SITE)/simhash
	install -m 644 $(BUILD)/python/simhash/*.py $(BUILD)/python/simhash/*.pyi \
	  $(BUILD)/python/simhash/py.typed $(DESTDIR)$(PY_SITE)/simhash/
	install -m 755 $(BUILD)/python/simhash/_native*.so $(DESTDIR)$(PY_SITE)/simhash/

uninstall: python-uninstall
python-uninstall:
	rm -rf $(DESTDIR)$(PY_SITE)/simhash
bench: python
