# shards.sh - sourced by pg/shard-check.sh and bench/pg_shard.sh: a
# coordinator and N shard servers, each a scratch cluster of pg/cluster.sh (a
# temporary folder, a free port, the socket in the folder; as root the servers
# run as `postgres`), set up as docs/postgresql.md ("Sharding") shows:
#   shard i     a table docs (id bigint PRIMARY KEY, fp simhash) and, once
#               loaded (shards_index), a simhash_scan index on fp
#   coordinator postgres_fdw servers shard1..shardN (extensions 'simhash',
#               async_capable 'true'), and docs partitioned by hash of id over
#               the foreign tables docs_1..docs_N, one per shard
# Node 0 is the coordinator, nodes 1..N the shards. shards_stop stops every
# server started and removes its folder (call it from a trap).
# shellcheck shell=sh

SHARD_DIRS=
SHARD_N=0

# shards_start N [SETTING=VALUE...]: starts the coordinator and N shards.
shards_start() {
	SHARD_N=$1
	shift
	i=0
	while [ "$i" -le "$SHARD_N" ]; do
		pg_cluster_start "$@" || return 1
		SHARD_DIRS="$SHARD_DIRS $PG_TMP"
		eval "node_dir_$i=\$PG_TMP node_port_$i=\$PGPORT"
		i=$((i + 1))
	done
	PG_TMP= # each folder is stopped by shards_stop
}

shards_stop() {
	for d in $SHARD_DIRS; do
		PG_TMP=$d
		pg_cluster_stop
	done
	SHARD_DIRS=
}

node_dir() { eval "echo \$node_dir_$1"; }
node_port() { eval "echo \$node_port_$1"; }

# node_psql I [psql arguments...]: psql on node I, quiet, stopping at an error.
node_psql() {
	n=$1
	shift
	psql -X -q -v ON_ERROR_STOP=1 -h "$(node_dir "$n")" -p "$(node_port "$n")" -U postgres \
		-d postgres "$@"
}

# shards_setup: the shards' tables and the coordinator's partitioned table.
shards_setup() {
	i=1
	parts=
	while [ "$i" -le "$SHARD_N" ]; do
		node_psql "$i" -c "CREATE EXTENSION simhash" \
			-c "CREATE TABLE docs (id bigint PRIMARY KEY, fp simhash)" || return 1
		parts="$parts
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$(node_dir "$i")', port '$(node_port "$i")', dbname 'postgres',
		 extensions 'simhash', async_capable 'true', batch_size '1000', fetch_size '1000');
CREATE USER MAPPING FOR postgres SERVER shard$i OPTIONS (user 'postgres');
CREATE FOREIGN TABLE docs_$i PARTITION OF docs FOR VALUES WITH (MODULUS $SHARD_N, REMAINDER $((i - 1)))
	SERVER shard$i OPTIONS (schema_name 'public', table_name 'docs');"
		i=$((i + 1))
	done
	node_psql 0 <<SQL
CREATE EXTENSION simhash;
CREATE EXTENSION postgres_fdw;
CREATE TABLE docs (id bigint NOT NULL, fp simhash) PARTITION BY HASH (id);
$parts
SQL
}

# shards_index: each shard's simhash_scan index, built once its rows are in
# (rows inserted later go to the index's tail), and its statistics.
shards_index() {
	i=1
	while [ "$i" -le "$SHARD_N" ]; do
		node_psql "$i" -c "CREATE INDEX docs_fp ON docs USING simhash_scan (fp)" \
			-c "ANALYZE docs" || return 1
		i=$((i + 1))
	done
}
