-- simhash_fingerprint() gives what `simhash fingerprint` prints for the same
-- text and options: pg/run-check.sh ran the built command on the texts and
-- option sets below; nothing here hard-codes a fingerprint of a scheme.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
\getenv inputs SIMHASH_PG_INPUTS
\set texts :inputs '/texts.txt'
\set opts :inputs '/opts.txt'
\set cli :inputs '/cli.tsv'

CREATE TEMP TABLE texts (line serial, body text);
\set copy_texts '\\copy texts (body) FROM ' :'texts' ' WITH (FORMAT csv, DELIMITER E''\x01'', QUOTE E''\x02'')'
:copy_texts
CREATE TEMP TABLE opts (n serial, opts text);
\set copy_opts '\\copy opts (opts) FROM ' :'opts' ' WITH (FORMAT csv, DELIMITER E''\x01'', QUOTE E''\x02'')'
:copy_opts
UPDATE opts SET opts = coalesce(opts, '');
CREATE TEMP TABLE cli (n int, hex text, line int);
\set copy_cli '\\copy cli FROM ' :'cli' ''
:copy_cli

SELECT count(*) > 300 AS enough_cases FROM cli;
-- Every case: the same value, and ::text gives the same hex.
SELECT o.opts, t.line, c.hex AS cli, simhash_fingerprint(coalesce(t.body, ''), o.opts)::text AS sql
FROM cli c JOIN opts o USING (n) JOIN texts t USING (line)
WHERE simhash_fingerprint(coalesce(t.body, ''), o.opts)::text <> c.hex;
-- Without options it is the default scheme, as the command's default.
SELECT count(*) AS default_mismatches
FROM cli c JOIN texts t USING (line)
WHERE c.n = 1 AND simhash_fingerprint(coalesce(t.body, ''))::text <> c.hex;
-- bytea input is the same as text input for valid UTF-8.
SELECT count(*) AS bytea_mismatches
FROM texts t WHERE simhash_fingerprint(convert_to(coalesce(body, ''), 'UTF8'))
                   <> simhash_fingerprint(coalesce(body, ''));

-- Schemes: canonical strings, the same for equivalent spellings.
SELECT simhash_scheme('--bits 128') = simhash_scheme('--bits=128') AS spelled_alike,
       simhash_scheme() = simhash_scheme('') AS default_alike,
       simhash_scheme('--compat python-simhash');
SELECT simhash_scheme('--features word') <> simhash_scheme() AS differs;

-- Bad options: clear errors.
SELECT simhash_fingerprint('x', '--bits 32');
SELECT simhash_fingerprint('x', '--bits 16');
SELECT simhash_fingerprint('x', '--bits');
SELECT simhash_fingerprint('x', '--nope');
SELECT simhash_fingerprint('x', 'bits 64');
SELECT simhash_fingerprint('x', '--t2s=1');
SELECT simhash_fingerprint('x', '--ngram 0');
SELECT simhash_fingerprint('x', '--idf jieba');
SELECT simhash_fingerprint('x', '--stopwords /etc/passwd');
SELECT simhash_fingerprint('x', '--weight tfidf');
SELECT simhash_fingerprint('x', '--compat python-simhash --bits 32');
SELECT simhash_fingerprint(NULL::text) IS NULL AS null_text,
       simhash_fingerprint('x', NULL) IS NULL AS null_opts;

-- Invalid UTF-8 (bytea): replaced by U+FFFD by default, an error under reject.
SELECT simhash_fingerprint('\xff'::bytea) = simhash_fingerprint(E'\uFFFD') AS replaced;
SELECT simhash_fingerprint('\x6162c3'::bytea, '--utf8 reject');
SELECT simhash_fingerprint('\x616263eda080'::bytea, '--utf8 reject --bits 128');

-- Exact text similarity.
SELECT * FROM simhash_text_similarity('the cat sat on the mat', 'the cat sat on the mat');
SELECT round(cosine::numeric, 6) AS cosine, round(jaccard::numeric, 6) AS jaccard
FROM simhash_text_similarity('abcd', 'abce');
SELECT round(jaccard::numeric, 6) AS word_jaccard
FROM simhash_text_similarity('one two three', 'one two four', '--features word');
SELECT * FROM simhash_text_similarity('x', 'y', '--compat python-simhash');
