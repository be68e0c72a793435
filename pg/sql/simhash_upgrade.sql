-- The update path: a 0.1 install with a GIN index, ALTER EXTENSION simhash
-- UPDATE to the current version, then the objects of a fresh install, and a
-- working simhash_scan index. Runs last: it drops the extension (and the
-- tables of the other tests with it).
SET client_min_messages = warning;
-- The other tests' tables first, one by one: a table's lock comes before its
-- indexes', as in autovacuum's ANALYZE, whereas DROP EXTENSION ... CASCADE may
-- reach an index before its table and deadlock with an ANALYZE under way.
DO $$
DECLARE t text;
BEGIN
	FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.oid LOOP
		EXECUTE format('DROP TABLE IF EXISTS public.%I CASCADE', t);
	END LOOP;
END
$$;
DROP EXTENSION IF EXISTS simhash CASCADE;
RESET client_min_messages;
CREATE EXTENSION simhash VERSION '0.1';
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
CREATE TABLE up (id serial PRIMARY KEY, fp simhash);
INSERT INTO up (fp) SELECT ((i::bigint * 2654435761) # (i::bigint << 40))::simhash
FROM generate_series(1, 3000) i;
INSERT INTO up (fp) SELECT (fp::bigint # 5)::simhash FROM up WHERE id % 10 = 0;
CREATE INDEX up_gin ON up USING gin (fp simhash_ops);
SELECT count(*) AS scan_am_before FROM pg_am WHERE amname = 'simhash_scan';

ALTER EXTENSION simhash UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
CREATE INDEX up_scan ON up USING simhash_scan (fp);
DROP INDEX up_gin;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM up WHERE simhash_within(fp, '0000000000000abc', 9);
SELECT k, (SELECT count(*) FROM up WHERE simhash_within(fp, (SELECT fp FROM up WHERE id = 30), k)) AS by_index
FROM generate_series(0, 20, 4) k;
RESET enable_seqscan;
SET enable_bitmapscan = off;
SELECT k, (SELECT count(*) FROM up WHERE simhash_within(fp, (SELECT fp FROM up WHERE id = 30), k)) AS by_scan
FROM generate_series(0, 20, 4) k;
RESET enable_bitmapscan;

-- The updated extension has exactly the objects of a fresh install.
CREATE TEMP TABLE updated AS
SELECT pg_describe_object(classid, objid, 0) AS object FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash');
SET client_min_messages = warning;
DROP EXTENSION simhash CASCADE;
RESET client_min_messages;
CREATE EXTENSION simhash;
CREATE TEMP TABLE fresh AS
SELECT pg_describe_object(classid, objid, 0) AS object FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash');
SELECT count(*) AS objects, (SELECT count(*) FROM fresh) = count(*) AS same_count FROM updated;
(SELECT 'only updated' AS side, object FROM updated EXCEPT SELECT 'only updated', object FROM fresh)
UNION ALL
(SELECT 'only fresh', object FROM fresh EXCEPT SELECT 'only fresh', object FROM updated);
