# mk/dask.mk - simhash-dask, `simhash dedup` as a Dask job (python/simhash/dask.py).
#   make dask-check        against simhash dedup / pairs on a LocalCluster and a
#                          hand-started cluster (part of `make check`)
#   make dask-fault-check  a worker killed during the shuffle (part of check-all)
#   make dask-venv-check   pip install ./python into a --system-site-packages
#                          venv, offline, then a tiny job (part of check-all)
#   make bench-dask        bench/dask.sh (part of `make bench`)
#   make install           also installs the simhash-dask command
.PHONY: dask-check dask-fault-check dask-venv-check bench-dask dask-install dask-uninstall

ifneq (,$(findstring sanitize,$(CFLAGS)))
dask-check:
	@echo "dask: skipped in a sanitizer build (the module is tested under ASan by python-asan)"
else
dask-check: python all
	@$(PYTHON) python/dask_tests/check_dask.py $(BUILD)
endif
check: dask-check

dask-fault-check: python all
	@$(PYTHON) python/dask_tests/check_dask.py $(BUILD) --fault
dask-venv-check: all
	@sh python/dask_tests/venv_check.sh $(BUILD)
check-all: dask-fault-check dask-venv-check

bench-dask: python all $(BENCH_BIN)
	@sh bench/dask.sh $(BUILD)
bench: bench-dask

install: dask-install
dask-install: python-install
	install -d $(DESTDIR)$(PREFIX)/bin
	printf '#!%s\nimport sys\nfrom simhash.dask import main\nsys.exit(main())\n' "$(PYTHON)" \
	  > $(DESTDIR)$(PREFIX)/bin/simhash-dask
	chmod 755 $(DESTDIR)$(PREFIX)/bin/simhash-dask
uninstall: dask-uninstall
dask-uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/simhash-dask
