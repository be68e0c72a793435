-- simhash--0.1--0.2.sql: ALTER EXTENSION simhash UPDATE TO '0.2'.
-- Adds the index access method simhash_scan and its operator class.
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2'" to load this file. \quit

-- simhash_scan: every fingerprint packed beside its row's TID, read whole by
-- each query with a SIMD popcount. Exact, and as fast for k = 10 or biased
-- bits as for k = 3; the GIN operator class is faster for small k.
CREATE FUNCTION simhash_scan_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;
CREATE ACCESS METHOD simhash_scan TYPE INDEX HANDLER simhash_scan_handler;
COMMENT ON ACCESS METHOD simhash_scan IS
	'exact within-k search of simhash fingerprints by a packed scan, for any k';

CREATE OPERATOR CLASS simhash_ops DEFAULT FOR TYPE simhash USING simhash_scan AS
	OPERATOR 1 <@ (simhash, simhash_ball);
