-- After the crash and recovery: the index still answers exactly as a
-- sequential scan, for every k; prints "crash: N mismatches, M rows found".
CREATE FUNCTION check_after(tbl text, max_k int) RETURNS TABLE (mismatches bigint, n_found bigint)
LANGUAGE plpgsql AS $$
DECLARE
	q simhash; k int; a bigint[]; b bigint[];
BEGIN
	mismatches := 0; n_found := 0;
	FOR q IN EXECUTE format('SELECT fp FROM %I WHERE id %% 97 = 0', tbl) LOOP
		FOR k IN 0 .. max_k LOOP
			SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = on;
			EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE simhash_within(fp, $1, $2)', tbl)
				INTO a USING q, k;
			SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = off;
			SET LOCAL enable_indexscan = off;
			EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE simhash_distance(fp, $1) <= $2', tbl)
				INTO b USING q, k;
			mismatches := mismatches + (a IS DISTINCT FROM b)::int;
			n_found := n_found + coalesce(cardinality(b), 0);
		END LOOP;
	END LOOP;
	RETURN NEXT;
END
$$;
SELECT format('crash: %s mismatches, %s rows found', sum(mismatches), sum(n_found))
FROM (SELECT * FROM check_after('c64', 16) UNION ALL SELECT * FROM check_after('c128', 32)) x;
