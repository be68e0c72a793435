-- Before the crash (pg/run-check.sh): a simhash_scan index on 64- and 128-bit
-- fingerprints is built after a checkpoint, then changed by inserts, deletes,
-- VACUUM (pages compacted, free list rewritten) and inserts into the freed
-- room, so that recovery has to replay the build and every generic WAL record.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS simhash CASCADE;
CREATE EXTENSION simhash;
SELECT setseed(0.77);
CREATE FUNCTION rnd64() RETURNS simhash LANGUAGE sql VOLATILE AS
	$$ SELECT (((random() * 2147483647)::bigint << 32) | (random() * 4294967295)::bigint)::simhash $$;
CREATE FUNCTION rnd128() RETURNS simhash LANGUAGE sql VOLATILE AS
	$$ SELECT (rnd64()::bytea || rnd64()::bytea)::simhash $$;
CREATE TABLE c64 (id serial PRIMARY KEY, fp simhash);
CREATE TABLE c128 (id serial PRIMARY KEY, fp simhash);
INSERT INTO c64 (fp) SELECT rnd64() FROM generate_series(1, 5000);
INSERT INTO c128 (fp) SELECT rnd128() FROM generate_series(1, 3000);
-- near-copies: the low byte changed
INSERT INTO c64 (fp) SELECT (fp::bigint # (id % 256))::simhash FROM c64 WHERE id % 3 = 0;
CHECKPOINT;
CREATE INDEX c64_fp ON c64 USING simhash_scan (fp);
CREATE INDEX c128_fp ON c128 USING simhash_scan (fp);
INSERT INTO c64 (fp) SELECT rnd64() FROM generate_series(1, 1500);
INSERT INTO c128 (fp) SELECT rnd128() FROM generate_series(1, 800);
DELETE FROM c64 WHERE id % 4 = 1;
DELETE FROM c128 WHERE id % 5 = 2;
VACUUM c64, c128;
INSERT INTO c64 (fp) SELECT rnd64() FROM generate_series(1, 700);
INSERT INTO c128 (fp) SELECT rnd128() FROM generate_series(1, 300);
UPDATE c64 SET fp = (fp::bigint # 1)::simhash WHERE id % 7 = 0;
