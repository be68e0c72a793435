-- The GIN index simhash_ops answers simhash_within(fp, q, k) exactly as a
-- sequential scan does: k = 0..16 at 64 bits and 0..32 at 128 bits, uniform
-- and biased bits (each 1 with p = 0.72), clustered near-copies, after inserts,
-- updates, deletes and VACUUM, under several block layouts; the plain call
-- uses the index, with constants and with prepared-statement parameters.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.2026);

-- A random fingerprint of `bits` bits, each 1 with probability p.
CREATE FUNCTION rand_fp(bits int, p float8) RETURNS simhash LANGUAGE sql VOLATILE AS $$
	SELECT string_agg(lpad(to_hex(v), 2, '0'), '' ORDER BY j)::simhash
	FROM (SELECT j, sum(((random() < p)::int) << b) AS v
	      FROM generate_series(0, bits / 8 - 1) j, generate_series(0, 7) b GROUP BY j) s
$$;
-- fp with n distinct random bits flipped.
CREATE FUNCTION flip(fp simhash, n int) RETURNS simhash LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	b bytea := fp::bytea;
	pos int;
	done int[] := '{}';
BEGIN
	WHILE cardinality(done) < n LOOP
		pos := floor(random() * simhash_bits(fp))::int;
		CONTINUE WHEN pos = ANY (done);
		done := done || pos;
		b := set_bit(b, pos, 1 - get_bit(b, pos));
	END LOOP;
	RETURN b::simhash;
END
$$;
-- A table of `n` random rows plus clusters of near-copies at every distance.
CREATE FUNCTION fill(tbl text, bits int, p float8, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %I (fp) SELECT rand_fp(%s, %s) FROM generate_series(1, %s)',
		       tbl, bits, p, n);
	EXECUTE format('INSERT INTO %I (fp) SELECT flip(c.fp, floor(random() * %s)::int)
			FROM (SELECT fp FROM %I ORDER BY id LIMIT %s) c, generate_series(1, 4)',
		       tbl, bits / 4 + 2, tbl, n / 5);
END
$$;

-- Compares the index with a sequential scan for every k up to max_k and
-- queries: fingerprints of rows, and near them. Returns mismatching cases
-- (none), the number of (query, k) cases and whether rows were found at all.
CREATE FUNCTION compare_with_scan(tbl text, max_k int, n_queries int,
	OUT mismatches int, OUT cases int, OUT rows_found bigint, OUT index_used bool)
LANGUAGE plpgsql AS $$
DECLARE
	q simhash;
	k int;
	by_index bigint[];
	by_scan bigint[];
	plan text;
BEGIN
	mismatches := 0; cases := 0; rows_found := 0; index_used := true;
	FOR q IN EXECUTE format('SELECT CASE WHEN random() < 0.5 THEN fp ELSE flip(fp, 3) END
				 FROM %I ORDER BY random() LIMIT %s', tbl, n_queries) LOOP
		FOR k IN 0 .. max_k LOOP
			PERFORM set_config('enable_seqscan', 'off', true);
			PERFORM set_config('enable_bitmapscan', 'on', true);
			EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE simhash_within(fp, $1, $2)',
				       tbl) INTO by_index USING q, k;
			IF k IN (0, max_k / 2) THEN
				FOR plan IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT id FROM %I WHERE simhash_within(fp, %L, %s)',
							   tbl, q, k) LOOP
					IF plan LIKE '%Bitmap Index Scan%' THEN EXIT; END IF;
					plan := NULL;
				END LOOP;
				index_used := index_used AND plan IS NOT NULL;
			END IF;
			PERFORM set_config('enable_seqscan', 'on', true);
			PERFORM set_config('enable_bitmapscan', 'off', true);
			EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE simhash_distance(fp, $1) <= $2',
				       tbl) INTO by_scan USING q, k;
			PERFORM set_config('enable_bitmapscan', 'on', true);
			cases := cases + 1;
			rows_found := rows_found + coalesce(cardinality(by_scan), 0);
			IF by_index IS DISTINCT FROM by_scan THEN
				mismatches := mismatches + 1;
				RAISE NOTICE '% k=% q=%: index % rows, scan % rows', tbl, k, q,
					cardinality(by_index), cardinality(by_scan);
			END IF;
		END LOOP;
	END LOOP;
END
$$;

-- Changes rows: inserts, updates (some to near-copies), deletes, VACUUM.
CREATE FUNCTION churn(tbl text, bits int, p float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM fill(tbl, bits, p, 100);
	EXECUTE format('UPDATE %I SET fp = flip(fp, 1 + floor(random() * 6)::int) WHERE id %% 7 = 0', tbl);
	EXECUTE format('UPDATE %I SET fp = rand_fp(%s, %s) WHERE id %% 11 = 0', tbl, bits, p);
	EXECUTE format('DELETE FROM %I WHERE id %% 5 = 0', tbl);
	EXECUTE format('INSERT INTO %I (fp) VALUES (NULL)', tbl);
END
$$;

CREATE TABLE u64 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE b64 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE u128 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE b128 (id serial PRIMARY KEY, fp simhash);
SELECT fill('u64', 64, 0.5, 400), fill('b64', 64, 0.72, 400),
       fill('u128', 128, 0.5, 300), fill('b128', 128, 0.72, 300);
CREATE INDEX u64_fp ON u64 USING gin (fp simhash_ops);
CREATE INDEX b64_fp ON b64 USING gin (fp simhash_ops);
CREATE INDEX u128_fp ON u128 USING gin (fp simhash_ops);
CREATE INDEX b128_fp ON b128 USING gin (fp simhash_ops);
ANALYZE u64, b64, u128, b128;

SELECT 'u64' AS t, * FROM compare_with_scan('u64', 16, 12);
SELECT 'b64' AS t, * FROM compare_with_scan('b64', 16, 12);
SELECT 'u128' AS t, * FROM compare_with_scan('u128', 32, 6);
SELECT 'b128' AS t, * FROM compare_with_scan('b128', 32, 6);

-- After inserts (into the pending list and the tree), updates, deletes, VACUUM.
SELECT churn('u64', 64, 0.5), churn('b64', 64, 0.72), churn('u128', 128, 0.5),
       churn('b128', 128, 0.72);
SELECT 'u64' AS t, * FROM compare_with_scan('u64', 16, 8);
SELECT 'b128' AS t, * FROM compare_with_scan('b128', 32, 4);
VACUUM u64, b64, u128, b128;
SELECT 'u64' AS t, * FROM compare_with_scan('u64', 16, 8);
SELECT 'b64' AS t, * FROM compare_with_scan('b64', 16, 8);
SELECT 'u128' AS t, * FROM compare_with_scan('u128', 32, 4);
SELECT 'b128' AS t, * FROM compare_with_scan('b128', 32, 4);

-- Other block layouts (the operator-class parameters).
DROP INDEX b64_fp, u128_fp;
CREATE INDEX b64_fp8 ON b64 USING gin (fp simhash_ops (block_bits = 8, layouts = 1));
CREATE INDEX u128_fp32 ON u128 USING gin (fp simhash_ops (block_bits = 32, layouts = 4));
SELECT 'b64 8x1' AS t, * FROM compare_with_scan('b64', 16, 6);
SELECT 'u128 32x4' AS t, * FROM compare_with_scan('u128', 32, 4);
CREATE INDEX bad ON b64 USING gin (fp simhash_ops (block_bits = 2));
CREATE INDEX bad ON b64 USING gin (fp simhash_ops (layouts = 9));

-- A query of another width finds nothing (a ball holds its own width only),
-- through the index too.
SET enable_seqscan = off;
SELECT count(*) FROM u64 WHERE fp <@ simhash_ball('00000000000000000000000000000000', 128);
RESET enable_seqscan;
SELECT count(*) FROM u64 WHERE simhash_within(fp, '00000000000000000000000000000000', 3);

-- The plain call uses the index: EXPLAIN, both argument orders, prepared
-- statements with parameters (generic plans), joins. The tables are small,
-- so the sequential scan is made expensive.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM u64 WHERE simhash_within(fp, '0123456789abcdef', 3);
EXPLAIN (COSTS OFF) SELECT id FROM u64 WHERE simhash_within('0123456789abcdef', fp, 3);
SET plan_cache_mode = force_generic_plan;
PREPARE near(simhash, int) AS SELECT id FROM u64 WHERE simhash_within(fp, $1, $2);
EXPLAIN (COSTS OFF) EXECUTE near('0123456789abcdef', 5);
RESET enable_seqscan;
CREATE FUNCTION within_static(q simhash, k int) RETURNS int[] LANGUAGE plpgsql AS $$
BEGIN
	RETURN (SELECT array_agg(id ORDER BY id) FROM u64 WHERE simhash_within(fp, q, k));
END
$$;
SET enable_seqscan = off;
SELECT count(*) AS generic_plan_mismatches FROM u64 q
WHERE q.id % 13 = 0 AND within_static(q.fp, 5) IS DISTINCT FROM
	(SELECT array_agg(id ORDER BY id) FROM u64 x WHERE simhash_distance(x.fp, q.fp) <= 5);
RESET enable_seqscan;
RESET plan_cache_mode;
RESET enable_seqscan;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM u64 a JOIN u64 b ON simhash_within(b.fp, a.fp, 2)
WHERE a.id < 10;
SELECT count(*) AS pairs_mismatch FROM (
	(SELECT a, b FROM simhash_pairs('u64', 'fp', 4)
	 EXCEPT SELECT x.ctid, y.ctid FROM u64 x, u64 y
	        WHERE x.ctid < y.ctid AND simhash_distance(x.fp, y.fp) <= 4)
	UNION ALL
	(SELECT x.ctid, y.ctid FROM u64 x, u64 y
	 WHERE x.ctid < y.ctid AND simhash_distance(x.fp, y.fp) <= 4
	 EXCEPT SELECT a, b FROM simhash_pairs('u64', 'fp', 4))) d;
SELECT count(*) > 0 AS pairs_found FROM simhash_pairs('u64', 'fp', 4);

-- Selectivity: the estimate of a "within 3" query is a few rows, not a
-- fixed fraction of the table.
CREATE FUNCTION estimated_rows(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO j;
	RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END
$$;
SELECT estimated_rows('SELECT id FROM u64 WHERE simhash_within(fp, ''0123456789abcdef'', 3)') <= 5 AS k3,
       estimated_rows('SELECT id FROM u64 WHERE simhash_within(fp, ''0123456789abcdef'', 32)') > 50 AS k32,
       estimated_rows('SELECT id FROM u64 WHERE fp <@ simhash_ball(''0123456789abcdef'', 3)') <= 5 AS op_k3;

-- k beyond the width takes in every row; k out of 0..128 through the index
-- is an error too, and NULL finds nothing.
SET enable_seqscan = off;
SELECT count(*) FROM u64 WHERE simhash_within(fp, '0123456789abcdef', 65);
SELECT count(*) FROM u64 WHERE simhash_within(fp, '0123456789abcdef', -1);
SELECT count(*) FROM u64 WHERE simhash_within(fp, '0123456789abcdef', 129);
SELECT count(*) FROM u64 WHERE simhash_within(fp, NULL, 3);
SELECT count(*) FROM u64 WHERE simhash_within(fp, '0123456789abcdef', NULL);
RESET enable_seqscan;
