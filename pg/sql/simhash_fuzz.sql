-- The library's fuzz corpora through the extension: every file of
-- fuzz/corpus/{fp_parse,jsonl,normalize} as the text input of `simhash` (in a
-- SQL_ASCII database, so any bytes but NUL reach the input function, as a C
-- string cut at its first NUL), checked against an independent rule; and every
-- normalize file through simhash_fingerprint(bytea), checked against what
-- `simhash fingerprint FILE` printed (pg/run-check.sh ran it).
\getenv inputs SIMHASH_PG_INPUTS
\set fp_file :inputs '/fuzz_fp.tsv'
\set norm_file :inputs '/fuzz_norm.tsv'
CREATE DATABASE simhash_fuzz ENCODING 'SQL_ASCII' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C';
\c simhash_fuzz
CREATE EXTENSION simhash;
CREATE TABLE fp_corpus (name text, hex text);
\set copy_fp_file '\\copy fp_corpus FROM ' :'fp_file' ''
:copy_fp_file
CREATE TABLE norm_corpus (name text, hex text, cli text, cli_reject128 text);
\set copy_norm_file '\\copy norm_corpus FROM ' :'norm_file' ''
:copy_norm_file
SELECT count(*) > 40 AS enough_inputs FROM fp_corpus;

-- The input function's verdict: the value's text form, or NULL if refused.
CREATE FUNCTION parse(s text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	RETURN s::simhash::text;
EXCEPTION WHEN invalid_text_representation THEN
	RETURN NULL;
END
$$;
-- The rule, independently: 16 or 32 hex digits, white space around.
CREATE FUNCTION rule(s text) RETURNS text LANGUAGE sql AS $$
	SELECT CASE WHEN s ~ '^[ \t\n\r]*([0-9a-fA-F]{16}|[0-9a-fA-F]{32})[ \t\n\r]*$'
		    THEN lower(btrim(s, E' \t\n\r')) END
$$;
CREATE TABLE inputs AS
SELECT name, convert_from(CASE WHEN position('\x00'::bytea IN b) > 0
			       THEN substring(b FROM 1 FOR position('\x00'::bytea IN b) - 1)
			       ELSE b END, 'SQL_ASCII') AS s
FROM (SELECT name, decode(hex, 'hex') AS b FROM fp_corpus) f;
SELECT name, parse(s), rule(s) FROM inputs WHERE parse(s) IS DISTINCT FROM rule(s);
SELECT count(*) FILTER (WHERE parse(s) IS NOT NULL) > 0 AS some_accepted,
       count(*) FILTER (WHERE parse(s) IS NULL) > 0 AS some_refused
FROM inputs;

-- The normalize corpus: the same fingerprints as the command line, and the
-- same refusals under --utf8 reject.
CREATE FUNCTION fingerprint_or_error(b bytea, opts text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	RETURN simhash_fingerprint(b, opts)::text;
EXCEPTION WHEN character_not_in_repertoire THEN
	RETURN 'error';
END
$$;
SELECT name, cli, fingerprint_or_error(decode(hex, 'hex'), '') AS sql
FROM norm_corpus WHERE fingerprint_or_error(decode(hex, 'hex'), '') <> cli;
SELECT name, cli_reject128, fingerprint_or_error(decode(hex, 'hex'), '--utf8 reject --bits 128') AS sql
FROM norm_corpus
WHERE fingerprint_or_error(decode(hex, 'hex'), '--utf8 reject --bits 128') <> cli_reject128;
SELECT count(*) > 20 AS enough_texts, count(*) FILTER (WHERE cli_reject128 = 'error') > 0 AS some_invalid
FROM norm_corpus;
\c contrib_regression
DROP DATABASE simhash_fuzz;
