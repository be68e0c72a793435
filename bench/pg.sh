#!/bin/sh
# pg.sh BUILD - the PostgreSQL half of `make bench`: the extension's exact
# "within k" indexes on ROWS (1 million) 64-bit fingerprints, uniform and
# biased (each bit 1 with p = 0.72), 10% planted near-copies (pg_gen.c), next
# to two baselines measured in the same run on the same rows:
#   scan    a sequential scan, simhash_distance(fp, q) <= k (default settings)
#   trick   plain SQL: an int4[] column of (block number << 16 | 16-bit block)
#           keys, PostgreSQL's GIN array_ops with &&, and a bit_count recheck
#           (exact at k <= 3 only, so measured at k = 3)
# Both of the extension's indexes exist on fp: the GIN operator class
# simhash_ops and the access method simhash_scan. The "index" figures are
# what the planner picks between them (what a user with both gets); the
# "alone" line measures each with the other dropped (in a subtransaction that
# is rolled back), to show which index suits which k.
# Queries: Q fingerprints of random rows, half of them with one bit flipped,
# run one after another in a PL/pgSQL loop (server side, plans cached with
# parameters, so the support function's index condition is what is timed).
# Prints queries/s, the ratios the issue asks for, index build time and size.
# Skips cleanly without PostgreSQL or the installed extension.
#
# Each figure is the best of ROUNDS rounds, the kinds of query interleaved (the
# machine's load moves). Queries per measurement: Q at k = 3, Q/5 at k = 6,
# Q/40 at k = 10 (Q/5 for simhash_scan alone), SCAN_Q for the scan.
#
# Environment: ROWS (1000000), Q (2000), SCAN_Q (3), ROUNDS (3).
set -eu
BUILD=${1:-build}
ROWS=${ROWS:-1000000}
Q=${Q:-2000}
SCAN_Q=${SCAN_Q:-3}
ROUNDS=${ROUNDS:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pg/cluster.sh"

if ! pg_available; then
	echo "bench pg: PostgreSQL 15 not found, skipped"
	exit 0
fi
if [ ! -f "$(pg_config --sharedir)/extension/simhash.control" ] &&
	! make -s -C "$root" pg-install >/dev/null 2>&1; then
	echo "bench pg: the extension is not installed (make pg-install), skipped"
	exit 0
fi
trap pg_cluster_stop EXIT
trap 'exit 1' INT TERM
pg_cluster_start shared_buffers=1GB maintenance_work_mem=1GB work_mem=64MB \
	max_wal_size=4GB checkpoint_timeout=30min
psql="psql -X -q -v ON_ERROR_STOP=1 -d postgres"
$psql -c "CREATE EXTENSION simhash"

# qps_NAME(kind, k, n): queries/s of one kind of query over the first n
# queries; static SQL, so PL/pgSQL keeps prepared plans with parameters.
# alone_NAME(index, k, n): queries/s of the index kind with only that one of
# the extension's two indexes (the other dropped, then restored by rollback).
make_qps() {
	$psql <<SQL
CREATE FUNCTION qps_$1(kind text, k int, n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz;
	r record;
	c bigint;
BEGIN
	t0 := clock_timestamp();
	FOR r IN SELECT q, qi, qkeys FROM $1_q LIMIT n LOOP
		IF kind = 'index' THEN
			SELECT count(*) INTO c FROM $1 WHERE simhash_within(fp, r.q, k);
		ELSIF kind = 'trick' THEN
			SELECT count(*) INTO c FROM $1 WHERE keys && r.qkeys AND bit_count((fpi # r.qi)::bit(64)) <= k;
		ELSE
			SELECT count(*) INTO c FROM $1 WHERE simhash_distance(fp, r.q) <= k;
		END IF;
	END LOOP;
	RETURN n / extract(epoch FROM clock_timestamp() - t0);
END
\$\$;
CREATE FUNCTION alone_$1(keep text, k int, n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE
	v float8;
BEGIN
	BEGIN
		EXECUTE format('DROP INDEX %I', CASE keep WHEN 'gin' THEN '$1_scan' ELSE '$1_gin' END);
		v := qps_$1('index', k, n);
		RAISE EXCEPTION 'roll back the DROP INDEX';
	EXCEPTION WHEN raise_exception THEN
		NULL;
	END;
	RETURN v;
END
\$\$;
SQL
}

# load NAME P SEED: the table, its queries, the two indexes; prints build figures.
load() {
	name=$1
	$psql -c "CREATE TABLE $name (id int, fp simhash, fpi bigint, keys int4[])"
	"$BUILD/bench/pg_gen" "$ROWS" "$2" "$3" | $psql -c "COPY $name FROM STDIN"
	$psql <<SQL
CREATE TABLE ${name}_q AS
SELECT CASE WHEN random() < 0.5 THEN fp ELSE (fpi # (1::bigint << (random() * 63)::int))::simhash END AS q
FROM $name ORDER BY random() LIMIT $Q;
ALTER TABLE ${name}_q ADD COLUMN qi bigint, ADD COLUMN qkeys int4[];
UPDATE ${name}_q SET qi = q::bigint;
UPDATE ${name}_q SET qkeys = ARRAY[(qi & 65535)::int, (1 << 16) | ((qi >> 16) & 65535)::int,
				   (2 << 16) | ((qi >> 32) & 65535)::int, (3 << 16) | ((qi >> 48) & 65535)::int];
VACUUM ANALYZE $name;
SQL
	for what in "gin:USING gin (fp simhash_ops)" "scan:USING simhash_scan (fp)" \
		"trick:USING gin (keys)"; do
		label=${what%%:*}
		$psql -t -A <<SQL
\\set t0 \`date +%s.%N\`
CREATE INDEX ${name}_${label} ON $name ${what#*:};
\\set t1 \`date +%s.%N\`
SELECT format('%s %s: build %s s (%s us/row), size %s MB (%s bytes/row)',
	'$name', rpad(CASE '$label' WHEN 'gin' THEN 'gin simhash_ops' WHEN 'scan' THEN 'simhash_scan'
		ELSE 'trick' END, 16), round((:t1 - :t0)::numeric, 1),
	round(((:t1 - :t0) * 1e6 / $ROWS)::numeric, 2),
	round(pg_relation_size('${name}_${label}') / 1e6, 1),
	round(pg_relation_size('${name}_${label}')::numeric / $ROWS, 1));
SQL
	done
	$psql -c "ANALYZE $name"
	make_qps "$name"
}

echo "PostgreSQL: $ROWS rows, $Q queries at k=3 (scan: $SCAN_Q), best of $ROUNDS rounds, $(nproc) cores"
load uni 0.5 1
load bia 0.72 2
echo
echo "plans (both indexes; constants, then a generic plan with parameters):"
$psql -t -A <<'SQL' | sed 's/^/  /'
CREATE FUNCTION pg_temp.index_for(tbl text, k int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
	FOR l IN EXECUTE format('EXPLAIN SELECT count(*) FROM %I WHERE simhash_within(fp, %L, %s)',
				tbl, '0123456789abcdef', k) LOOP
		IF l ~ 'Index Scan on' THEN RETURN substring(l FROM 'Index Scan on (\S+ +\(cost=[0-9.]+)'); END IF;
	END LOOP;
	RETURN 'sequential scan';
END
$$;
SELECT format('%s k=%s: %s', t, k, pg_temp.index_for(t, k))
FROM unnest(ARRAY['uni', 'bia']) t, unnest(ARRAY[0, 3, 4, 5, 6, 10]) k;
SQL
$psql -t -A <<'SQL' | sed 's/^/  /'
PREPARE w(simhash, int) AS SELECT count(*) FROM uni WHERE simhash_within(fp, $1, $2);
SET plan_cache_mode = force_generic_plan;
EXPLAIN EXECUTE w('0123456789abcdef', 3);
SQL
echo
$psql -t -A <<SQL
WITH m AS MATERIALIZED (
	-- Each kind of measurement on both tables one after the other, so that
	-- the load of the moment weighs on the uniform and the biased alike.
	SELECT round, kind, t,
	       CASE WHEN t = 'uni' THEN
		       CASE kind WHEN 'scan' THEN qps_uni('scan', 3, $SCAN_Q)
				 WHEN 'trick' THEN qps_uni('trick', 3, $Q)
				 WHEN 'k3' THEN qps_uni('index', 3, $Q)
				 WHEN 'k6' THEN qps_uni('index', 6, $Q / 5)
				 WHEN 'k10' THEN qps_uni('index', 10, $Q / 5)
				 WHEN 'g3' THEN alone_uni('gin', 3, $Q)
				 WHEN 'g6' THEN alone_uni('gin', 6, $Q / 5)
				 WHEN 'g10' THEN alone_uni('gin', 10, $Q / 40)
				 WHEN 's3' THEN alone_uni('scan', 3, $Q / 5)
				 ELSE alone_uni('scan', 10, $Q / 5) END
	       ELSE
		       CASE kind WHEN 'scan' THEN qps_bia('scan', 3, $SCAN_Q)
				 WHEN 'trick' THEN qps_bia('trick', 3, $Q)
				 WHEN 'k3' THEN qps_bia('index', 3, $Q)
				 WHEN 'k6' THEN qps_bia('index', 6, $Q / 5)
				 WHEN 'k10' THEN qps_bia('index', 10, $Q / 5)
				 WHEN 'g3' THEN alone_bia('gin', 3, $Q)
				 WHEN 'g6' THEN alone_bia('gin', 6, $Q / 5)
				 WHEN 'g10' THEN alone_bia('gin', 10, $Q / 40)
				 WHEN 's3' THEN alone_bia('scan', 3, $Q / 5)
				 ELSE alone_bia('scan', 10, $Q / 5) END
	       END AS v
	FROM (SELECT round, kind, ord, t
	      FROM generate_series(1, $ROUNDS) round,
		   unnest(ARRAY['scan', 'trick', 'k3', 'k6', 'k10', 'g3', 'g6', 'g10', 's3', 's10'])
			WITH ORDINALITY k(kind, ord),
		   unnest(ARRAY['uni', 'bia']) t
	      ORDER BY round, ord, t) s
), r AS (
	SELECT t, max(v) FILTER (WHERE kind = 'scan') AS scan, max(v) FILTER (WHERE kind = 'trick') AS trick,
	       max(v) FILTER (WHERE kind = 'k3') AS k3, max(v) FILTER (WHERE kind = 'k6') AS k6,
	       max(v) FILTER (WHERE kind = 'k10') AS k10, max(v) FILTER (WHERE kind = 'g3') AS g3,
	       max(v) FILTER (WHERE kind = 'g6') AS g6, max(v) FILTER (WHERE kind = 'g10') AS g10,
	       max(v) FILTER (WHERE kind = 's3') AS s3, max(v) FILTER (WHERE kind = 's10') AS s10
	FROM m GROUP BY t
)
SELECT * FROM (
SELECT format('%s: scan %s q/s | trick k=3 %s q/s | index k=3 %s q/s (%sx trick, %sx scan) | k=6 %s q/s (%sx scan) | k=10 %s q/s (%sx scan)',
	      t, round(scan::numeric, 1), round(trick::numeric), round(k3::numeric),
	      round((k3 / trick)::numeric, 2), round((k3 / scan)::numeric), round(k6::numeric),
	      round((k6 / scan)::numeric), round(k10::numeric), round((k10 / scan)::numeric))
FROM r
UNION ALL
SELECT format('%s alone: gin k=3 %s, k=6 %s, k=10 %s q/s | simhash_scan k=3 %s, k=10 %s q/s',
	      t, round(g3::numeric), round(g6::numeric), round(g10::numeric), round(s3::numeric),
	      round(s10::numeric))
FROM r
UNION ALL
SELECT format('biased / uniform queries/s: k=3 %s, k=6 %s, k=10 %s (target: at least 0.5)',
	      round((b.k3 / u.k3)::numeric, 2), round((b.k6 / u.k6)::numeric, 2),
	      round((b.k10 / u.k10)::numeric, 2))
FROM r u, r b WHERE u.t = 'uni' AND b.t = 'bia') x;
SQL
