-- simhash--0.2.sql: the simhash extension, version 0.2 (0.1 plus the index
-- access method simhash_scan; simhash--0.1--0.2.sql updates a 0.1 install).
\echo Use "CREATE EXTENSION simhash" to load this file. \quit

-- The type: a 64- or 128-bit fingerprint; text form 16 or 32 lowercase hex
-- digits as `simhash fingerprint` prints them, binary form its 8 or 16 bytes.
CREATE TYPE simhash;
CREATE FUNCTION simhash_in(cstring) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_out(simhash) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_recv(internal) RETURNS simhash
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_send(simhash) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE simhash (
	INPUT = simhash_in, OUTPUT = simhash_out,
	RECEIVE = simhash_recv, SEND = simhash_send,
	INTERNALLENGTH = VARIABLE, STORAGE = main, ALIGNMENT = int4
);
COMMENT ON TYPE simhash IS 'a SimHash fingerprint of 64 or 128 bits';

-- The radius query of the index: a fingerprint and a distance k ('HEX/K').
CREATE TYPE simhash_ball;
CREATE FUNCTION simhash_ball_in(cstring) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_out(simhash_ball) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE simhash_ball (
	INPUT = simhash_ball_in, OUTPUT = simhash_ball_out,
	INTERNALLENGTH = VARIABLE, STORAGE = plain, ALIGNMENT = int4
);
CREATE FUNCTION simhash_ball(simhash, integer) RETURNS simhash_ball
	AS 'MODULE_PATHNAME', 'simhash_ball_make' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Comparison: by value; fingerprints of different widths are an error.
CREATE FUNCTION simhash_eq(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ne(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_lt(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_le(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gt(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ge(simhash, simhash) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_cmp(simhash, simhash) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_hash(simhash) RETURNS integer
	AS 'MODULE_PATHNAME', 'simhash_pg_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_hash_extended(simhash, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR = (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS simhash_btree_ops DEFAULT FOR TYPE simhash USING btree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 simhash_cmp(simhash, simhash);
CREATE OPERATOR CLASS simhash_hash_ops DEFAULT FOR TYPE simhash USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 simhash_hash(simhash),
	FUNCTION 2 simhash_hash_extended(simhash, bigint);

-- Casts: bigint for 64 bits (two's complement, so ffffffffffffffff is -1),
-- bytea for both widths (the bytes of the hex form, most significant first).
CREATE FUNCTION simhash_from_bigint(bigint) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_from_bigint' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bigint(simhash) RETURNS bigint
	AS 'MODULE_PATHNAME', 'simhash_to_bigint' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_from_bytea(bytea) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bytea(simhash) RETURNS bytea
	AS 'MODULE_PATHNAME', 'simhash_to_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (bigint AS simhash) WITH FUNCTION simhash_from_bigint(bigint);
CREATE CAST (simhash AS bigint) WITH FUNCTION simhash_to_bigint(simhash);
CREATE CAST (bytea AS simhash) WITH FUNCTION simhash_from_bytea(bytea);
CREATE CAST (simhash AS bytea) WITH FUNCTION simhash_to_bytea(simhash);

-- Distance and similarity.
CREATE FUNCTION simhash_bits(simhash) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance(simhash, simhash) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OPERATOR <~> (LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_distance,
	COMMUTATOR = <~>);
CREATE FUNCTION simhash_similarity(simhash, simhash) RETURNS double precision
	AS 'MODULE_PATHNAME', 'simhash_pg_similarity' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Fingerprints of texts, with the options of `simhash fingerprint`.
CREATE FUNCTION simhash_fingerprint(text) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_fingerprint_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_fingerprint(text, options text) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_fingerprint_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_fingerprint(bytea) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_fingerprint_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_fingerprint(bytea, options text) RETURNS simhash
	AS 'MODULE_PATHNAME', 'simhash_fingerprint_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_scheme(options text DEFAULT '') RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_text_similarity(a text, b text, options text DEFAULT '',
	OUT cosine double precision, OUT jaccard double precision)
	AS 'MODULE_PATHNAME', 'simhash_pg_text_similarity' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The index: fp <@ simhash_ball(q, k), and simhash_within(fp, q, k) that the
-- planner turns into it.
CREATE FUNCTION simhash_in_ball(simhash, simhash_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_restrict(internal, oid, internal, integer) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_joinsel(internal, oid, internal, smallint, internal)
	RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE OPERATOR <@ (LEFTARG = simhash, RIGHTARG = simhash_ball, PROCEDURE = simhash_in_ball,
	RESTRICT = simhash_ball_restrict, JOIN = simhash_ball_joinsel);

CREATE FUNCTION simhash_within_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_within(fp simhash, query simhash, k integer) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT simhash_within_support;

CREATE FUNCTION simhash_gin_extract_value(simhash, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_extract_query(simhash_ball, internal, smallint, internal,
	internal, internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_consistent(internal, smallint, simhash_ball, integer, internal,
	internal, internal, internal) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_tri_consistent(internal, smallint, simhash_ball, integer,
	internal, internal, internal) RETURNS "char"
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_gin_options(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OPERATOR CLASS simhash_ops DEFAULT FOR TYPE simhash USING gin AS
	OPERATOR 1 <@ (simhash, simhash_ball),
	FUNCTION 1 btint8cmp(bigint, bigint),
	FUNCTION 2 simhash_gin_extract_value(simhash, internal),
	FUNCTION 3 simhash_gin_extract_query(simhash_ball, internal, smallint, internal,
		internal, internal, internal),
	FUNCTION 4 simhash_gin_consistent(internal, smallint, simhash_ball, integer, internal,
		internal, internal, internal),
	FUNCTION 6 simhash_gin_tri_consistent(internal, smallint, simhash_ball, integer,
		internal, internal, internal),
	FUNCTION 7 simhash_gin_options(internal),
	STORAGE bigint;

-- All pairs of rows of table whose fingerprints in column are within k,
-- found through a simhash_ops index on it (a nested loop of index probes).
CREATE FUNCTION simhash_pairs(tbl regclass, col name, k integer)
RETURNS TABLE (a tid, b tid, distance integer)
LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT x.ctid, y.ctid, simhash_distance(x.%1$I, y.%1$I) '
		'FROM %2$s x JOIN %2$s y ON @extschema@.simhash_within(y.%1$I, x.%1$I, $1) '
		'WHERE x.ctid < y.ctid', col, tbl) USING k;
END
$$;

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
