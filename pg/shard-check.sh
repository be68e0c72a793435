#!/bin/sh
# shard-check.sh - `make pg-shard-check`: the sharded set-up of
# docs/postgresql.md ("Sharding") on scratch servers: a coordinator and 3 shards
# (pg/shards.sh), a table partitioned by hash of id over postgres_fdw foreign
# tables, and the same rows in one local table. Checks:
#   routing    every row went to the shard its hash partition names
#   pushdown   EXPLAIN VERBOSE: every shard's Remote SQL holds simhash_within
#              and its scan is asynchronous (the shards queried at once),
#              for a constant and for a `simhash` parameter of a generic plan;
#              a `text` parameter cast in the query is not pushed (the trap
#              the docs describe), so that the docs stay true
#   answers    simhash_within through the shards equals a sequential scan of
#              the one table, for 1,800 query/k pairs (rows of the table,
#              near copies, fresh uniform and biased queries; k 0..12) with
#              parameters, and 400 more (k = 3 and 10) with constants
#   indexes    each shard answered through its simhash_scan index (the
#              index's scan count covers every query)
# The servers are stopped and their folders removed at the end, also on
# failure. Prints "pg shards: N passed, N failed", as tests/run.sh expects.
# Needs the extension installed (make pg-install) and postgres_fdw
# (postgresql-15's contrib).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pg/cluster.sh"
. "$root/pg/shards.sh"

passed=0
failed=0
# check NAME EXPECTED GOT
check() {
	if [ "$2" = "$3" ]; then
		echo "ok: $1"
		passed=$((passed + 1))
	else
		echo "FAILED: $1: expected '$2', got '$3'"
		failed=$((failed + 1))
	fi
}
finish() {
	echo "pg shards: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if ! pg_available || [ ! -f "$(pg_config --sharedir)/extension/postgres_fdw.control" ]; then
	echo "pg-shard-check: PostgreSQL 15 with postgres_fdw (postgresql-15) not found" >&2
	failed=1
	finish
fi
trap shards_stop EXIT
trap 'exit 1' INT TERM
if ! shards_start 3 || ! shards_setup; then
	failed=1
	finish
fi
q0() { node_psql 0 -t -A "$@"; }

# The rows: 8,000 uniform, 8,000 biased (each bit 1 with p = 0.72), 4,000
# near copies of earlier rows (0 to 10 bits flipped), 50 exact copies.
q0 >/dev/null <<'SQL' || { failed=1; finish; }
SELECT setseed(0.16);
CREATE FUNCTION rand_fp(p float8) RETURNS simhash LANGUAGE sql VOLATILE AS $$
	SELECT bit_or(((random() < p)::int::bigint) << b)::simhash FROM generate_series(0, 63) b
$$;
CREATE FUNCTION flip(fp simhash, n int) RETURNS simhash LANGUAGE sql VOLATILE AS $$
	SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << floor(random() * 64)::int)
				       FROM generate_series(1, n)), 0))::simhash
$$;
CREATE TABLE single (id bigint PRIMARY KEY, fp simhash);
INSERT INTO single SELECT i, rand_fp(0.5) FROM generate_series(1, 8000) i;
INSERT INTO single SELECT i, rand_fp(0.72) FROM generate_series(8001, 16000) i;
INSERT INTO single SELECT 16000 + i, flip((SELECT fp FROM single WHERE id = 1 + (i * 7919) % 16000), i % 11)
FROM generate_series(1, 4000) i;
INSERT INTO single SELECT 20000 + i, (SELECT fp FROM single WHERE id = i * 97) FROM generate_series(1, 50) i;
ANALYZE single;
-- Inserts into the partitioned table go to the shards by the hash of id.
INSERT INTO docs SELECT * FROM single;
SQL
shards_index || { failed=1; finish; }

total=$(q0 -c "SELECT count(*) FROM single")
check "all rows on the shards" "$total" "$(q0 -c "SELECT count(*) FROM docs")"
i=1
while [ $i -le 3 ]; do
	want=$(q0 -c "SELECT count(*) FROM single WHERE satisfies_hash_partition('docs'::regclass, 3, $((i - 1)), id)")
	got=$(node_psql $i -t -A -c "SELECT count(*) FROM docs")
	check "shard $i holds its hash partition ($want rows)" "$want" "$got"
	i=$((i + 1))
done

# Pushdown: the Remote SQL of every shard's scan holds the condition.
remote_with() { q0 -c "$1" | grep 'Remote SQL:' | grep -c 'simhash_within('; }
remote_all() { q0 -c "$1" | grep -c 'Remote SQL:'; }
explain="EXPLAIN (VERBOSE, COSTS OFF)"
c="$explain SELECT id FROM docs WHERE simhash_within(fp, '0123456789abcdef', 3)"
check "pushdown of a constant query (shards)" 3 "$(remote_with "$c")"
check "the shards are queried at once (Async Foreign Scan)" 3 \
	"$(q0 -c "$c" | grep -c 'Async Foreign Scan on')"
g="SET plan_cache_mode = force_generic_plan;
PREPARE near(simhash, int) AS SELECT id FROM docs WHERE simhash_within(fp, \$1, \$2);
$explain EXECUTE near('0123456789abcdef', 3);"
check "pushdown of a simhash parameter, generic plan (shards)" 3 "$(remote_with "$g")"
t="SET plan_cache_mode = force_generic_plan;
PREPARE near_text(text, int) AS SELECT id FROM docs WHERE simhash_within(fp, \$1::simhash, \$2);
$explain EXECUTE near_text('0123456789abcdef', 3);"
check "the trap: a text parameter is not pushed down (shards pushed)" 0 "$(remote_with "$t")"
check "the trap: a text parameter fetches from every shard" 3 "$(remote_all "$t")"

# Answers: the shards against a sequential scan of the one table.
answers=$(q0 <<'SQL'
SELECT setseed(0.61);
CREATE TABLE queries AS
SELECT q, k FROM (
	(SELECT fp AS q FROM single ORDER BY random() LIMIT 60)
	UNION ALL (SELECT flip(fp, 2) FROM single ORDER BY random() LIMIT 60)
	UNION ALL (SELECT rand_fp(0.5) FROM generate_series(1, 40))
	UNION ALL (SELECT rand_fp(0.72) FROM generate_series(1, 40))) s,
	unnest(ARRAY[0, 1, 2, 3, 4, 6, 8, 10, 12]) k;
CREATE FUNCTION compare(literal bool, OUT cases int, OUT mismatches int, OUT rows_found bigint)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	a bigint[];
	b bigint[];
BEGIN
	cases := 0; mismatches := 0; rows_found := 0;
	FOR r IN SELECT q, k FROM queries WHERE NOT literal OR k = 3 OR k = 10 LOOP
		IF literal THEN
			EXECUTE format('SELECT array_agg(id ORDER BY id) FROM docs WHERE simhash_within(fp, %L, %s)',
				       r.q, r.k) INTO a;
		ELSE
			SELECT array_agg(id ORDER BY id) INTO a FROM docs WHERE simhash_within(fp, r.q, r.k);
		END IF;
		SELECT array_agg(id ORDER BY id) INTO b FROM single WHERE simhash_distance(fp, r.q) <= r.k;
		cases := cases + 1;
		rows_found := rows_found + coalesce(cardinality(b), 0);
		IF a IS DISTINCT FROM b THEN
			mismatches := mismatches + 1;
			RAISE NOTICE 'q=% k=%: shards % rows, one table % rows', r.q, r.k,
				cardinality(a), cardinality(b);
		END IF;
	END LOOP;
END
$$;
SELECT 'params', * FROM compare(false);
SELECT 'literals', * FROM compare(true);
SELECT postgres_fdw_disconnect_all();
SQL
)
echo "$answers" | grep -E '^(params|literals)\|'
params=$(echo "$answers" | grep '^params|')
literals=$(echo "$answers" | grep '^literals|')
check "answers equal one table's, parameters (cases|mismatches)" "1800|0" \
	"$(echo "$params" | cut -d'|' -f2,3)"
check "answers equal one table's, constants (cases|mismatches)" "400|0" \
	"$(echo "$literals" | cut -d'|' -f2,3)"
found=$(echo "$params" | cut -d'|' -f4)
check "the queries found rows (near copies)" yes "$([ "${found:-0}" -gt 1000 ] && echo yes || echo no)"

# Indexes: each shard's simhash_scan index served every query. The
# coordinator closed its connections above; a shard's backend reports its
# counts as it exits, so wait for them (at most 30 s).
i=1
while [ $i -le 3 ]; do
	n=0
	tries=0
	while [ $tries -lt 60 ]; do
		n=$(node_psql $i -t -A -c "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = 'docs_fp'")
		[ "$n" -ge 2200 ] && break
		sleep 0.5
		tries=$((tries + 1))
	done
	check "shard $i answered every query through simhash_scan (>= 2200 index scans)" yes \
		"$([ "$n" -ge 2200 ] && echo yes || echo "no ($n)")"
	i=$((i + 1))
done
finish
