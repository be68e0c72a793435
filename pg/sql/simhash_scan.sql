-- The index access method simhash_scan answers simhash_within(fp, q, k)
-- exactly as a sequential scan does: k = 0..16 at 64 bits and 0..32 at 128
-- bits, uniform and biased bits (each 1 with p = 0.72), clustered near-copies,
-- after inserts, updates, deletes and VACUUM, through both of its paths
-- (probing the sorted tables, forced with max_probes, and scanning, forced
-- with max_probes = 0); its popcount kernels agree; the planner uses it, and
-- picks between it and GIN by cost. Uses the helper
-- functions of simhash_index.sql (rand_fp, flip, fill, churn,
-- compare_with_scan), which runs before it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.1959);

-- Every popcount kernel of this CPU (scalar, POPCNT, AVX-512) gives the
-- portable kernel's slots, uniform and biased, both widths, every k.
CREATE FUNCTION scan_kernels_agree(int, bigint) RETURNS int
	AS '$libdir/simhash', 'simhash_scan_kernels_agree' LANGUAGE C STRICT;
SELECT scan_kernels_agree(1000, 42) AS kernel_mismatches, scan_kernels_agree(13, 7) AS tail_mismatches;
-- The interpolated search of a table page finds what a binary search finds.
CREATE FUNCTION scan_search_agrees(int, bigint) RETURNS int
	AS '$libdir/simhash', 'simhash_scan_search_agrees' LANGUAGE C STRICT;
SELECT scan_search_agrees(400, 11) AS search_mismatches;

-- Several pages per table (582 entries of 64 bits, 370 of 128 per page).
CREATE TABLE s64 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE sb64 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE s128 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE sb128 (id serial PRIMARY KEY, fp simhash);
SELECT fill('s64', 64, 0.5, 1200), fill('sb64', 64, 0.72, 1200),
       fill('s128', 128, 0.5, 700), fill('sb128', 128, 0.72, 700);
INSERT INTO s64 (fp) VALUES (NULL);
CREATE INDEX s64_fp ON s64 USING simhash_scan (fp);
CREATE INDEX sb64_fp ON sb64 USING simhash_scan (fp simhash_ops);
CREATE INDEX s128_fp ON s128 USING simhash_scan (fp);
CREATE INDEX sb128_fp ON sb128 USING simhash_scan (fp);
ANALYZE s64, sb64, s128, sb128;
SELECT c.relname, pg_relation_size(c.oid) / 8192 AS pages
FROM pg_class c WHERE c.relname IN ('s64_fp', 'sb64_fp', 's128_fp', 'sb128_fp') ORDER BY 1;

-- By cost (small tables: the scan, but probing for k = 0, 1).
SELECT 's64' AS t, * FROM compare_with_scan('s64', 16, 8);
SELECT 'sb128' AS t, * FROM compare_with_scan('sb128', 32, 4);
-- Probing the tables wherever a query needs at most 20000 probes (k <= 7 at
-- 64 bits, k <= 14 at 128), then scanning everything.
ALTER INDEX s64_fp SET (max_probes = 20000);
ALTER INDEX sb64_fp SET (max_probes = 20000);
ALTER INDEX s128_fp SET (max_probes = 20000);
ALTER INDEX sb128_fp SET (max_probes = 20000);
SELECT 's64 probe' AS t, * FROM compare_with_scan('s64', 16, 10);
SELECT 'sb64 probe' AS t, * FROM compare_with_scan('sb64', 16, 10);
SELECT 's128 probe' AS t, * FROM compare_with_scan('s128', 32, 5);
SELECT 'sb128 probe' AS t, * FROM compare_with_scan('sb128', 32, 5);
ALTER INDEX s64_fp SET (max_probes = 0);
ALTER INDEX sb128_fp SET (max_probes = 0);
SELECT 's64 scan' AS t, * FROM compare_with_scan('s64', 16, 6);
SELECT 'sb128 scan' AS t, * FROM compare_with_scan('sb128', 32, 4);

-- After inserts (into the tail), updates, deletes (marked in the sorted
-- region, holes filled from the end in the tail), VACUUM (tail pages with
-- room reused by later inserts), and inserts again; both paths.
SELECT churn('s64', 64, 0.5), churn('sb64', 64, 0.72), churn('s128', 128, 0.5),
       churn('sb128', 128, 0.72);
SELECT 's64 scan' AS t, * FROM compare_with_scan('s64', 16, 6);
SELECT 'sb64 probe' AS t, * FROM compare_with_scan('sb64', 16, 6);
VACUUM s64, sb64, s128, sb128;
SELECT 's64 scan' AS t, * FROM compare_with_scan('s64', 16, 6);
SELECT 'sb64 probe' AS t, * FROM compare_with_scan('sb64', 16, 6);
SELECT 's128 probe' AS t, * FROM compare_with_scan('s128', 32, 4);
SELECT 'sb128 scan' AS t, * FROM compare_with_scan('sb128', 32, 4);
SELECT pg_relation_size('s64_fp') AS before_size \gset
SELECT fill('s64', 64, 0.5, 150), fill('s128', 128, 0.5, 150), churn('s64', 64, 0.5);
VACUUM s64;
SELECT fill('s64', 64, 0.5, 50);
SELECT pg_relation_size('s64_fp') <= :before_size + 3 * 8192 AS vacuumed_room_reused;
ALTER INDEX s64_fp SET (max_probes = 20000);
ALTER INDEX sb128_fp RESET (max_probes);
SELECT 's64 probe' AS t, * FROM compare_with_scan('s64', 16, 6);
SELECT 's128 probe' AS t, * FROM compare_with_scan('s128', 32, 4);
SELECT 'sb128' AS t, * FROM compare_with_scan('sb128', 32, 4);
DELETE FROM sb64;
VACUUM sb64;
SELECT fill('sb64', 64, 0.72, 100);
SELECT 'sb64 refilled' AS t, * FROM compare_with_scan('sb64', 16, 6);

-- Tables larger than maintenance_work_mem: the build's sorts spill to disk.
CREATE TABLE big (id serial PRIMARY KEY, fp simhash);
INSERT INTO big (fp) SELECT (((random() * 2147483647)::bigint << 32) | (random() * 4294967295)::bigint)::simhash
FROM generate_series(1, 60000);
INSERT INTO big (fp) SELECT (fp::bigint # (1::bigint << (id % 64)) # (1::bigint << (id % 7)))::simhash
FROM big WHERE id % 50 = 0;
SET maintenance_work_mem = '1MB';
CREATE INDEX big_fp ON big USING simhash_scan (fp) WITH (max_probes = 20000);
RESET maintenance_work_mem;
SELECT 'big probe' AS t, * FROM compare_with_scan('big', 7, 5);
DROP TABLE big;

-- Two widths in one column: no tables, only the scan; a query of one width
-- skips the entries of the other, as a sequential scan finds none of them
-- within (simhash_trust tests this path by path).
CREATE TABLE mixed (id serial PRIMARY KEY, fp simhash);
INSERT INTO mixed (fp) SELECT fp FROM s64 WHERE id < 100;
CREATE INDEX mixed_fp ON mixed USING simhash_scan (fp);
SELECT 'mixed' AS t, * FROM compare_with_scan('mixed', 16, 4);
INSERT INTO mixed (fp) SELECT fp FROM s128 WHERE id < 50;
SET enable_seqscan = off;
SELECT count(*) FROM mixed WHERE simhash_within(fp, (SELECT fp FROM s64 WHERE id = 1), 3);
RESET enable_seqscan;
SELECT count(*) FROM mixed WHERE simhash_within(fp, (SELECT fp FROM s64 WHERE id = 1), 3);
DROP TABLE mixed;

-- REINDEX, and the operator class passes amvalidate.
REINDEX INDEX s128_fp;
SELECT 's128 reindexed' AS t, * FROM compare_with_scan('s128', 32, 3);
SELECT opcname, amvalidate(c.oid) FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE amname = 'simhash_scan';

-- A query of another width finds nothing, as in a sequential scan; NULL
-- finds nothing; k above the width takes in every row, k above 128 is an
-- error; the index takes no storage parameters but max_probes.
SET enable_seqscan = off;
SELECT count(*) FROM s64 WHERE simhash_within(fp, '00000000000000000000000000000000', 3);
SELECT count(*) FROM s64 WHERE simhash_within(fp, NULL, 3);
SELECT count(*) FROM s64 WHERE simhash_within(fp, '0123456789abcdef', 65);
SELECT count(*) FROM s64 WHERE simhash_within(fp, '0123456789abcdef', 129);
SELECT count(*) FROM s64 WHERE fp <@ simhash_ball('0123456789abcdef', 64) AND
	simhash_within(fp, 'fedcba9876543210', 64);
RESET enable_seqscan;
CREATE INDEX bad ON s64 USING simhash_scan (fp) WITH (fillfactor = 50);
CREATE INDEX bad ON s64 USING simhash_scan (fp) WITH (max_probes = -2);

-- EXPLAIN: the plain call uses it, with constants and with parameters.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM s64 WHERE simhash_within(fp, '0123456789abcdef', 10);
SET plan_cache_mode = force_generic_plan;
PREPARE near_s(simhash, int) AS SELECT id FROM s64 WHERE simhash_within(fp, $1, $2);
EXPLAIN (COSTS OFF) EXECUTE near_s('0123456789abcdef', 7);
RESET plan_cache_mode;
RESET enable_seqscan;

-- Both indexes on one column: simhash_scan for every k (its probes cost
-- less than GIN's keys for small k, its scan less for large k), and for a k
-- unknown at plan time (GIN would assume a one-key query).
CREATE TABLE both64 (id serial PRIMARY KEY, fp simhash);
INSERT INTO both64 (fp) SELECT fp FROM s64 WHERE fp IS NOT NULL;
INSERT INTO both64 (fp) SELECT flip(fp, 2) FROM both64;
INSERT INTO both64 (fp) SELECT flip(fp, 5) FROM both64;
CREATE INDEX both64_gin ON both64 USING gin (fp simhash_ops);
CREATE INDEX both64_scan ON both64 USING simhash_scan (fp);
ANALYZE both64;
CREATE FUNCTION index_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line LIKE '%Index Scan on%' THEN
			RETURN regexp_replace(line, '.*Index Scan on (\S+).*', '\1');
		END IF;
	END LOOP;
	RETURN 'none';
END
$$;
SELECT k, index_of(format('SELECT id FROM both64 WHERE simhash_within(fp, %L, %s)',
			 '0123456789abcdef', k)) AS index
FROM unnest(ARRAY[0, 2, 3, 8, 12, 20]) k;
SET plan_cache_mode = force_generic_plan;
PREPARE near_both(simhash, int) AS SELECT id FROM both64 WHERE simhash_within(fp, $1, $2);
EXPLAIN (COSTS OFF) EXECUTE near_both('0123456789abcdef', 3);
RESET plan_cache_mode;
SELECT 'both64' AS t, * FROM compare_with_scan('both64', 16, 6);
