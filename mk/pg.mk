# mk/pg.mk - the PostgreSQL extension in pg/ (PGXS; Debian's postgresql-15 and
# postgresql-server-dev-15):
#   make pg          build pg/simhash.so, libsimhash linked in statically
#   make pg-install  install it into the server's directories (pg_config's)
#   make pg-check    install, then pg_regress against a scratch server that
#                    pg/run-check.sh starts in a temporary folder and stops
#   make pg-shard-check  install, then pg/shard-check.sh: a coordinator and 3
#                    shards (postgres_fdw) against one table, on scratch servers
PG_CONFIG ?= pg_config
.PHONY: pg pg-install pg-check pg-shard-check pg-clean

pg: $(BUILD)/libsimhash.a
	$(MAKE) -C pg PG_CONFIG=$(PG_CONFIG) SIMHASH_BUILD=$(abspath $(BUILD))

pg-install: pg
	$(MAKE) -C pg PG_CONFIG=$(PG_CONFIG) SIMHASH_BUILD=$(abspath $(BUILD)) install

pg-check: pg-install $(BUILD)/simhash
	sh pg/run-check.sh $(BUILD)

pg-shard-check: pg-install
	sh pg/shard-check.sh

pg-clean:
	rm -rf pg/*.o pg/*.so pg/*.bc pg/results pg/regression.diffs pg/regression.out

clean: pg-clean
check-all: pg-check pg-shard-check
