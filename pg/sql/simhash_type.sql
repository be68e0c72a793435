-- The type: text and binary forms, casts, comparison, operator classes, and
-- bad input giving clear errors (or NULL for NULL).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- Text form: lowercase hex, 16 or 32 digits, either case and spaces around in.
SELECT 'DEDAFC8F126AB95B'::simhash, ' 0000000000000001 '::simhash,
       'd2baa9485dc30070dedafc8f126ab95b'::simhash;
SELECT simhash_bits('0123456789abcdef'), simhash_bits('0123456789abcdef0123456789abcdef');

-- Malformed hex and wrong widths.
SELECT 'xyz'::simhash;
SELECT ''::simhash;
SELECT '0123456789abcdeg'::simhash;
SELECT '01234567'::simhash;
SELECT '0123456789abcdef0'::simhash;
SELECT '0123456789abcdef01234567'::simhash;
SELECT '0x0123456789abcdef'::simhash;
SELECT '01234567 89abcdef'::simhash;
SELECT NULL::simhash IS NULL AS null_is_null;

-- Casts: bigint (64 bits, two's complement), bytea (most significant first).
SELECT 'ffffffffffffffff'::simhash::bigint, '8000000000000000'::simhash::bigint,
       '0000000000000001'::simhash::bigint;
SELECT (-1)::bigint::simhash, 81985529216486895::bigint::simhash;
SELECT '0123456789abcdef'::simhash::bytea, '\x00112233445566778899aabbccddeeff'::bytea::simhash;
SELECT '0123456789abcdef0123456789abcdef'::simhash::bigint;
SELECT '\x0011'::bytea::simhash;
SELECT ''::bytea::simhash;
-- Round trips of random values through every form.
SELECT count(*) AS round_trip_failures
FROM (SELECT (random() * 2 - 1) * 9.2e18 AS v FROM generate_series(1, 1000)) s,
     LATERAL (SELECT v::bigint::simhash AS f) f
WHERE f::bigint <> v::bigint OR f::text::simhash <> f OR f::bytea::simhash <> f
   OR f::text <> lpad(to_hex(v::bigint), 16, '0');

-- Binary send/receive through COPY BINARY.
CREATE TEMP TABLE bin (fp simhash);
INSERT INTO bin VALUES ('0123456789abcdef'), ('ffeeddccbbaa99887766554433221100'), (NULL);
COPY bin TO '/dev/null' WITH (FORMAT binary);
SELECT simhash_send('0123456789abcdef') AS send64;

-- Comparison, ordering, hashing; across widths: unequal, every 64-bit value
-- first (simhash_trust tests the rule on every path).
SELECT '0000000000000001'::simhash < 'ffffffffffffffff'::simhash AS lt,
       '8000000000000000'::simhash > '7fffffffffffffff'::simhash AS unsigned_order,
       'ABCDEF0123456789'::simhash = 'abcdef0123456789'::simhash AS eq,
       '0000000000000000'::simhash <> '0000000000000001'::simhash AS ne;
SELECT '0123456789abcdef'::simhash = '0123456789abcdef0123456789abcdef'::simhash;
SELECT '0123456789abcdef'::simhash < '0123456789abcdef0123456789abcdef'::simhash;
CREATE TEMP TABLE ord (fp simhash);
INSERT INTO ord SELECT ((i * 7919) % 200 - 100)::bigint::simhash FROM generate_series(1, 200) i;
CREATE INDEX ord_btree ON ord (fp);
CREATE INDEX ord_hash ON ord USING hash (fp);
SET enable_seqscan = off;
SELECT count(*) FROM ord WHERE fp = 5::bigint::simhash;
SELECT count(*) FROM ord WHERE fp >= 'ffffffffffffff9c'::simhash;
RESET enable_seqscan;
SELECT count(DISTINCT fp) FROM ord;
SELECT fp FROM ord GROUP BY fp ORDER BY fp LIMIT 3;

-- Distance, similarity, the <~> operator.
SELECT simhash_distance('0000000000000000', 'ffffffffffffffff'),
       '0000000000000000'::simhash <~> '000000000000000f'::simhash AS op,
       simhash_similarity('0000000000000000', '00000000000000ff'),
       simhash_distance('00000000000000000000000000000000', 'ffffffffffffffffffffffffffffffff');
SELECT simhash_distance('0000000000000000', '00000000000000000000000000000000');
SELECT simhash_similarity('0000000000000000', '00000000000000000000000000000000');
SELECT simhash_distance(NULL, '0000000000000000') IS NULL AS null_distance;

-- simhash_within, k out of range (0..128 whatever the width) and across widths (false).
SELECT simhash_within('0000000000000000', '0000000000000007', 3),
       simhash_within('0000000000000000', '000000000000000f', 3),
       simhash_within('0000000000000000', 'ffffffffffffffff', 64);
SELECT simhash_within('0000000000000000', '0000000000000000', -1);
SELECT simhash_within('0000000000000000', '0000000000000000', 65);
SELECT simhash_within('00000000000000000000000000000000', '00000000000000000000000000000000', 129);
SELECT simhash_within('0000000000000000', '00000000000000000000000000000000', 3);
SELECT simhash_within('0000000000000000', NULL, 3) IS NULL AS null_within;
SELECT simhash_ball('0123456789abcdef', 5), 'ffffffffffffffff/0'::simhash_ball;
SELECT 'ffffffffffffffff/65'::simhash_ball;
SELECT 'ffffffffffffffff'::simhash_ball;
SELECT 'ffffffffffffffff/x'::simhash_ball;
SELECT '0000000000000003'::simhash <@ simhash_ball('0000000000000000', 2) AS in_ball;
