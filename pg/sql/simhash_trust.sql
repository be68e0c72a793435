-- What an attacker or an unlucky operator tries (issue 19, part 4), each
-- answered as a sequential scan answers it, through every path:
--  1. a query with many index conditions (more than INDEX_MAX_KEYS = 32):
--     every one honoured by simhash_scan (both its paths) and GIN;
--  2. one rule for a column of both widths: the order by width then value
--     (btree, sort and hash DISTINCT, ANALYZE), simhash_within false across
--     widths (scan, simhash_scan, GIN), distance an error; a row of the
--     other width that the query cannot see (rolled back, prepared and not
--     committed, deleted and not vacuumed) never makes a query fail;
--  3. a long text is fingerprinted in slices with the interrupts checked
--     between them, and the bits are those of the command line;
--  4. an error on a huge input quotes a short prefix of it.
-- Uses rand_fp, flip and fill of simhash_index.sql, which runs before it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.1919);

-- 1. Many conditions --------------------------------------------------------

CREATE TABLE many (id serial PRIMARY KEY, fp simhash);
SELECT fill('many', 64, 0.5, 1500);
CREATE INDEX many_scan ON many USING simhash_scan (fp);
ANALYZE many;

-- The ids matching n conditions fp <@ simhash_ball(q_i, k_i), by `how`:
-- 'seq' (no index), 'index' (bitmap scans only). The balls are drawn from
-- the table (seeded): the first n - 1 wide (k = 40, around the first row),
-- the last one given by last_q, last_k.
CREATE FUNCTION many_ids(how text, n int, last_q simhash, last_k int, use_within bool)
RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
	conds text[] := '{}';
	c simhash := (SELECT fp FROM many ORDER BY id LIMIT 1);
	i int;
	res int[];
BEGIN
	FOR i IN 1 .. n - 1 LOOP
		conds := conds || CASE WHEN use_within
			THEN format('simhash_within(fp, %L, %s)', flip(c, i % 5), 40)
			ELSE format('fp <@ simhash_ball(%L, %s)', flip(c, i % 5), 40) END;
	END LOOP;
	conds := conds || CASE WHEN use_within
		THEN format('simhash_within(fp, %L, %s)', last_q, last_k)
		ELSE format('fp <@ simhash_ball(%L, %s)', last_q, last_k) END;
	PERFORM set_config('enable_seqscan', (how = 'seq')::text, true);
	PERFORM set_config('enable_bitmapscan', (how <> 'seq')::text, true);
	PERFORM set_config('enable_indexscan', 'off', true);
	EXECUTE 'SELECT array_agg(id ORDER BY id) FROM many WHERE ' || array_to_string(conds, ' AND ')
		INTO res;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	RETURN coalesce(res, '{}');
END
$$;
-- The index conditions of the plan with n conditions (all of them go to the index).
CREATE FUNCTION many_index_conds(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	conds text[] := '{}';
	line text;
	i int;
BEGIN
	FOR i IN 1 .. n LOOP
		conds := conds || format('simhash_within(fp, %L, 40)', '0123456789abcdef');
	END LOOP;
	PERFORM set_config('enable_seqscan', 'off', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM many WHERE '
			|| array_to_string(conds, ' AND ') LOOP
		IF line LIKE '%Index Cond:%' THEN
			PERFORM set_config('enable_seqscan', 'on', true);
			RETURN array_length(regexp_split_to_array(line, ' AND '), 1);
		END IF;
	END LOOP;
	PERFORM set_config('enable_seqscan', 'on', true);
	RETURN 0;
END
$$;
SELECT many_index_conds(40) AS index_conditions_of_40;

-- For n conditions where only the last one is tight (it finds 0 rows, or a
-- few), the index finds what the scan finds: before, conditions after the
-- 32nd were dropped and 1,000 rows came back where the scan found none.
CREATE TABLE many_cases (n int, last_q simhash, last_k int, within bool);
INSERT INTO many_cases
SELECT n, CASE WHEN last = 0 THEN 'ffffffffffffffff'::simhash
	       ELSE (SELECT fp FROM many ORDER BY id LIMIT 1 OFFSET 7) END,
       CASE WHEN last = 0 THEN 0 ELSE 12 END, w
FROM unnest(ARRAY[1, 2, 31, 32, 33, 34, 40, 64, 100]) n, generate_series(0, 1) last,
     (VALUES (true), (false)) v(w);
SELECT 'simhash_scan, by cost' AS path, count(*) AS cases,
       count(*) FILTER (WHERE many_ids('index', n, last_q, last_k, within)
			      IS DISTINCT FROM many_ids('seq', n, last_q, last_k, within)) AS mismatches,
       sum(cardinality(many_ids('seq', n, last_q, last_k, within))) AS rows_found
FROM many_cases;
ALTER INDEX many_scan SET (max_probes = 20000);
SELECT 'simhash_scan, probing' AS path, count(*) AS cases,
       count(*) FILTER (WHERE many_ids('index', n, last_q, last_k, within)
			      IS DISTINCT FROM many_ids('seq', n, last_q, last_k, within)) AS mismatches
FROM many_cases;
ALTER INDEX many_scan SET (max_probes = 0);
SELECT 'simhash_scan, scanning' AS path, count(*) AS cases,
       count(*) FILTER (WHERE many_ids('index', n, last_q, last_k, within)
			      IS DISTINCT FROM many_ids('seq', n, last_q, last_k, within)) AS mismatches
FROM many_cases;
DROP INDEX many_scan;
CREATE INDEX many_gin ON many USING gin (fp simhash_ops);
SELECT 'gin' AS path, count(*) AS cases,
       count(*) FILTER (WHERE many_ids('index', n, last_q, last_k, within)
			      IS DISTINCT FROM many_ids('seq', n, last_q, last_k, within)) AS mismatches
FROM many_cases;
-- The reproduction: 33 wide conditions then a tight one that no row meets.
CREATE INDEX many_scan ON many USING simhash_scan (fp);
DROP INDEX many_gin;
SELECT cardinality(many_ids('index', 34, 'ffffffffffffffff', 0, false)) AS by_index,
       cardinality(many_ids('seq', 34, 'ffffffffffffffff', 0, false)) AS by_scan,
       (SELECT count(*) FROM many WHERE fp = 'ffffffffffffffff') AS rows_equal;
DROP TABLE many, many_cases;

-- 2. Two widths in one column -----------------------------------------------

-- The order: every 64-bit value before every 128-bit one, then by value;
-- = and <> across widths are false and true; distance needs one width.
SELECT 'ffffffffffffffff'::simhash < '00000000000000000000000000000000'::simhash AS lt,
       'ffffffffffffffff'::simhash = '0000000000000000ffffffffffffffff'::simhash AS eq,
       'ffffffffffffffff'::simhash <> '0000000000000000ffffffffffffffff'::simhash AS ne,
       simhash_within('ffffffffffffffff', '0000000000000000ffffffffffffffff', 128) AS within,
       'ffffffffffffffff'::simhash <@ simhash_ball('0000000000000000ffffffffffffffff', 3) AS in_ball;
SELECT simhash_distance('ffffffffffffffff', '0000000000000000ffffffffffffffff');
SELECT simhash_similarity('ffffffffffffffff', '0000000000000000ffffffffffffffff');
-- k is 0..128 whatever the width: 64..128 at 64 bits takes in every 64-bit value.
SELECT simhash_within('ffffffffffffffff', '0000000000000000', 100) AS k100,
       'ffffffffffffffff'::simhash <@ 'ffffffffffffffff/128'::simhash_ball AS k128;
SELECT simhash_within('ffffffffffffffff', '0000000000000000', 129);

CREATE TABLE mix (id serial PRIMARY KEY, fp simhash);
SELECT fill('mix', 64, 0.5, 300), fill('mix', 128, 0.72, 200);
INSERT INTO mix (fp) SELECT ('0000000000000000' || fp::text)::simhash FROM mix
WHERE simhash_bits(fp) = 64 AND id % 10 = 0;  -- the same low bits at 128
INSERT INTO mix (fp) VALUES (NULL);
-- ANALYZE (autovacuum's too) takes it, with a histogram in the type's order.
ANALYZE mix;
SELECT null_frac > 0 AS has_nulls, n_distinct <> 0 AS has_distinct,
       cardinality(histogram_bounds::text::text[]) > 10 AS has_histogram,
       length((histogram_bounds::text::text[])[1]) AS first_bound_hex,
       length((histogram_bounds::text::text[])[cardinality(histogram_bounds::text::text[])])
	   AS last_bound_hex
FROM pg_stats WHERE tablename = 'mix' AND attname = 'fp';
-- Sort and hash DISTINCT and GROUP BY agree, and with a count by bytes.
SET enable_hashagg = off;
SELECT count(*) AS sort_distinct FROM (SELECT DISTINCT fp FROM mix) d;
CREATE TEMP TABLE sorted_order AS SELECT row_number() OVER () AS i, fp FROM (SELECT fp FROM mix ORDER BY fp, id) s;
RESET enable_hashagg;
SET enable_sort = off;
SELECT count(*) AS hash_distinct FROM (SELECT DISTINCT fp FROM mix) d;
RESET enable_sort;
SELECT count(*) AS distinct_bytes FROM (SELECT DISTINCT fp::bytea FROM mix) d;
-- The btree's order is the sort's: width first, then value.
CREATE INDEX mix_btree ON mix (fp);
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;
CREATE TEMP TABLE btree_order AS SELECT row_number() OVER () AS i, fp FROM (SELECT fp FROM mix ORDER BY fp) s;
RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_sort;
SELECT count(*) AS order_mismatches FROM sorted_order s JOIN btree_order b USING (i)
WHERE s.fp IS DISTINCT FROM b.fp;
SELECT bool_and(simhash_bits(a.fp) < simhash_bits(b.fp) OR
		(simhash_bits(a.fp) = simhash_bits(b.fp) AND a.fp::bytea < b.fp::bytea)) AS bytes_order
FROM btree_order a JOIN btree_order b ON b.i = a.i + 1 WHERE a.fp <> b.fp;
-- Joins on = agree too: merge join (the btree order) and hash join.
SET enable_hashjoin = off; SET enable_nestloop = off;
SELECT count(*) AS merge_join_pairs FROM mix a JOIN mix b ON a.fp = b.fp;
RESET enable_hashjoin; SET enable_mergejoin = off;
SELECT count(*) AS hash_join_pairs FROM mix a JOIN mix b ON a.fp = b.fp;
RESET enable_mergejoin; RESET enable_nestloop;
CREATE INDEX mix_hash ON mix USING hash (fp);
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS found_by_hash FROM mix m WHERE fp = (SELECT fp FROM mix WHERE simhash_bits(fp) = 128 LIMIT 1);
RESET enable_seqscan; RESET enable_bitmapscan;

-- simhash_within on the column, queries of both widths, every path: the
-- sequential scan, simhash_scan (by cost, probing, scanning) and GIN.
CREATE FUNCTION mix_ids(tbl text, how text, q simhash, k int) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE res int[];
BEGIN
	PERFORM set_config('enable_seqscan', (how = 'seq')::text, true);
	PERFORM set_config('enable_bitmapscan', (how <> 'seq')::text, true);
	PERFORM set_config('enable_indexscan', 'off', true);
	EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE simhash_within(fp, $1, $2)', tbl)
		INTO res USING q, k;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	RETURN coalesce(res, '{}');
END
$$;
CREATE TABLE mix_q AS
SELECT CASE WHEN random() < 0.5 THEN fp ELSE flip(fp, 3) END AS q, k
FROM (SELECT fp FROM mix WHERE fp IS NOT NULL ORDER BY random() LIMIT 12) s,
     unnest(ARRAY[0, 3, 6, 10, 24, 64, 100]) k;
CREATE FUNCTION mix_compare(tbl text, OUT cases int, OUT mismatches int, OUT rows_found int)
LANGUAGE sql AS $$
	SELECT count(*)::int,
	       count(*) FILTER (WHERE mix_ids(tbl, 'index', q, k) IS DISTINCT FROM mix_ids(tbl, 'seq', q, k))::int,
	       sum(cardinality(mix_ids(tbl, 'seq', q, k)))::int
	FROM mix_q
$$;
CREATE INDEX mix_scan ON mix USING simhash_scan (fp);
SELECT 'simhash_scan' AS path, * FROM mix_compare('mix');
ALTER INDEX mix_scan SET (max_probes = 0);
SELECT 'simhash_scan scanning' AS path, * FROM mix_compare('mix');
DROP INDEX mix_scan;
CREATE INDEX mix_gin ON mix USING gin (fp simhash_ops);
SELECT 'gin' AS path, * FROM mix_compare('mix');
DROP INDEX mix_gin;
-- Balls of two widths in one query have no row in common.
SET enable_seqscan = off;
CREATE INDEX mix_scan ON mix USING simhash_scan (fp);
SELECT count(*) AS two_widths FROM mix
WHERE fp <@ simhash_ball((SELECT fp FROM mix WHERE simhash_bits(fp) = 64 LIMIT 1), 64)
  AND fp <@ simhash_ball((SELECT fp FROM mix WHERE simhash_bits(fp) = 128 LIMIT 1), 128);
RESET enable_seqscan;

-- Rows of the other width that a query cannot see, in a one-width table
-- whose simhash_scan index has sorted tables (probing) and a tail.
CREATE TABLE w64 (id serial PRIMARY KEY, fp simhash);
SELECT fill('w64', 64, 0.5, 700);
CREATE INDEX w64_scan ON w64 USING simhash_scan (fp) WITH (max_probes = 20000);
CREATE TABLE w64g (id serial PRIMARY KEY, fp simhash);
INSERT INTO w64g (fp) SELECT fp FROM w64 ORDER BY id;
CREATE INDEX w64g_gin ON w64g USING gin (fp simhash_ops);
CREATE TABLE vis_q AS
SELECT CASE WHEN random() < 0.5 THEN fp ELSE flip(fp, 2) END AS q, k
FROM (SELECT fp FROM w64 ORDER BY random() LIMIT 6) s, unnest(ARRAY[0, 3, 7, 20]) k;
CREATE FUNCTION vis_compare(OUT cases int, OUT mismatches int, OUT rows_found int)
LANGUAGE sql AS $$
	SELECT count(*)::int,
	       count(*) FILTER (WHERE mix_ids('w64', 'index', q, k) IS DISTINCT FROM mix_ids('w64', 'seq', q, k)
				   OR mix_ids('w64g', 'index', q, k) IS DISTINCT FROM mix_ids('w64', 'seq', q, k))::int,
	       sum(cardinality(mix_ids('w64', 'seq', q, k)))::int
	FROM vis_q
$$;
-- rolled back
BEGIN;
INSERT INTO w64 (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
INSERT INTO w64g (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
ROLLBACK;
SELECT 'rolled back' AS rows, * FROM vis_compare();
-- uncommitted, in a prepared transaction (another session's view of it)
BEGIN;
INSERT INTO w64 (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
INSERT INTO w64g (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
PREPARE TRANSACTION 'simhash_uncommitted';
SELECT 'uncommitted' AS rows, * FROM vis_compare();
ROLLBACK PREPARED 'simhash_uncommitted';
-- deleted, not yet vacuumed
INSERT INTO w64 (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
INSERT INTO w64g (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
DELETE FROM w64 WHERE simhash_bits(fp) = 128;
DELETE FROM w64g WHERE simhash_bits(fp) = 128;
SELECT 'deleted' AS rows, * FROM vis_compare();
-- and visible: still the scan's answer (no row of the other width matches)
INSERT INTO w64 (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
INSERT INTO w64g (fp) SELECT rand_fp(128, 0.5) FROM generate_series(1, 5);
SELECT 'visible' AS rows, * FROM vis_compare();
-- a 128-bit query on the 64-bit sorted tables finds the 128-bit rows only
SET enable_seqscan = off;
SELECT count(*) AS wide_rows_found FROM w64
WHERE simhash_within(fp, (SELECT fp FROM w64 WHERE simhash_bits(fp) = 128 LIMIT 1), 128);
RESET enable_seqscan;
DROP TABLE mix, mix_q, w64, w64g, vis_q;

-- 3. Long texts: interruptible inside the library, the same bits ------------

\getenv inputs SIMHASH_PG_INPUTS
\set long_txt :inputs '/long.txt'
\set long_cli :inputs '/long_cli.tsv'
CREATE TEMP TABLE long_cli (opts text, hex text);
\set copy_long '\\copy long_cli FROM ' :'long_cli' ''
:copy_long
UPDATE long_cli SET opts = coalesce(opts, '');
CREATE TEMP TABLE long_text AS SELECT pg_read_file(:'long_txt') AS body;
SELECT length(body) > 3 * 1048576 AS longer_than_3_mib FROM long_text;
-- The command line's fingerprint of the whole file, under each option set.
SELECT count(*) AS option_sets,
       count(*) FILTER (WHERE simhash_fingerprint(body, opts)::text <> hex) AS mismatches
FROM long_cli, long_text;
SELECT opts, hex AS cli, simhash_fingerprint(body, opts)::text AS sql
FROM long_cli, long_text WHERE simhash_fingerprint(body, opts)::text <> hex;
-- A cancel pending when the fingerprinting starts is taken inside it: the
-- call after it in the same expression (nextval, which checks no
-- interrupts) never runs. (pg_cancel_backend of this backend signals it at
-- once; the PL/pgSQL simple expression has no other interrupt check.)
CREATE SEQUENCE after_fp;
CREATE FUNCTION cancel_during(opts text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t text := (SELECT body FROM long_text);
	r text;
BEGIN
	r := simhash_fingerprint(CASE WHEN pg_cancel_backend(pg_backend_pid()) THEN t END, opts)::text
	     || nextval('after_fp');
	RETURN 'not cancelled';
EXCEPTION WHEN query_canceled THEN
	RETURN SQLERRM;
END
$$;
SELECT opts, cancel_during(opts) FROM long_cli ORDER BY opts;
SELECT last_value, is_called AS fingerprint_finished_once FROM after_fp;
-- The interrupt check costs nothing visible: the same call, not cancelled.
SELECT simhash_fingerprint(body)::text = (SELECT hex FROM long_cli WHERE opts = '') AS same
FROM long_text;
-- The cancel is taken inside the library (its interrupt hook), so the options
-- that need the whole text are no exception, nor is simhash_text_similarity.
CREATE FUNCTION similarity_cancel_during(opts text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t text := (SELECT body FROM long_text);
	r text;
BEGIN
	r := (simhash_text_similarity(CASE WHEN pg_cancel_backend(pg_backend_pid()) THEN t END,
				      t, opts)).cosine::text || nextval('after_fp');
	RETURN 'not cancelled';
EXCEPTION WHEN query_canceled THEN
	RETURN SQLERRM;
END
$$;
SELECT opts, similarity_cancel_during(opts)
FROM (VALUES (''), ('--features shingle'), ('--tokenizer icu --features word'),
	     ('--html --weight logtf')) o(opts) ORDER BY opts;
SELECT last_value, is_called AS similarity_finished_once FROM after_fp;
-- A call cancelled half way leaves the cached context usable: the same call
-- site, cancelled once and then run again, gives the command line's value.
CREATE FUNCTION fingerprint_after_cancel(opts text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	t text := (SELECT body FROM long_text);
	r text := '';
BEGIN
	FOR i IN 1..2 LOOP
		BEGIN
			r := r || simhash_fingerprint(
				CASE WHEN i = 2 OR pg_cancel_backend(pg_backend_pid()) THEN t END, opts)::text;
		EXCEPTION WHEN query_canceled THEN
			r := r || 'cancelled, ';
		END;
	END LOOP;
	RETURN r;
END
$$;
SELECT opts, fingerprint_after_cancel(opts) = 'cancelled, ' || hex AS then_same
FROM long_cli ORDER BY opts;

-- 4. Errors quote a short prefix of a huge input ------------------------------

CREATE FUNCTION error_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE sql;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	RETURN SQLERRM;
END
$$;
CREATE TEMP TABLE huge AS SELECT repeat('0123456789abcdefg', 300000) AS s;
SELECT length(s) FROM huge;
SELECT error_of('SELECT s::simhash FROM huge') AS fingerprint_input;
-- Not caught: this one goes to the server log too (pg/run-check.sh bounds its lines).
SELECT s::simhash FROM huge;
SELECT error_of('SELECT (s || ''/3'')::simhash_ball FROM huge') AS ball_input;
SELECT error_of('SELECT (''0123456789abcdef/'' || s)::simhash_ball FROM huge') AS ball_k;
SELECT error_of('SELECT simhash_fingerprint(''x'', ''--ngram '' || s) FROM huge') AS option_value;
SELECT error_of('SELECT simhash_fingerprint(''x'', ''--'' || s) FROM huge') AS option_name;
SELECT error_of('SELECT simhash_fingerprint(''x'', s) FROM huge') AS option_word;
SELECT error_of('SELECT simhash_scheme(''--scheme '' || s) FROM huge') AS scheme;
-- Short inputs are quoted whole, as before.
SELECT error_of('SELECT ''xyz''::simhash') AS short_input;
-- A character cut in the middle is not: the prefix ends at a whole one.
SELECT error_of('SELECT (''a'' || repeat(''é'', 30) || repeat(''z'', 100))::simhash') AS multibyte;
