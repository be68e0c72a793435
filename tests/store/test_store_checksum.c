/* test_store_checksum.c - format version 3: a checksum in every record.
 *
 * 1. Flips: for each of 30 documents (64 and 128 bits, random incompressible
 *    metadata), every copy in the LMDB file of its fingerprint words (as 8
 *    bytes, little- and big-endian) and of its metadata's JSON text gets one
 *    bit flipped, one copy at a time. The oracle is LMDB itself: a raw dump
 *    of every table before and after the flip tells whether the copy was live
 *    (a record changed) or a stale page. Then, on a read-only handle:
 *    - a live copy: verify reports a problem; a stale one: verify is clean;
 *    - get and query never give a changed value: either the exact original
 *      or SIMHASH_ECORRUPT with a message naming the store and the id;
 *    - the live copy of the docs record: get refuses it;
 *    - every document had a live copy of each found (so nothing was missed).
 *    Run with and without a checkpoint holding the documents (the index then
 *    keeps its own copy of the fingerprint), and with deletions and a
 *    replacement, so that "dlog" holds fingerprints too.
 * 2. A full LMDB map (simhash_store_open_mapped): writes fail with
 *    SIMHASH_ENOSPC and change nothing, reads go on, every acknowledged
 *    document stays; an open without the limit writes again.
 * 3. A store of format version 2 (tests/data/store_v2, written by the
 *    version 2 code): a read-only open refuses it naming what to run; an open
 *    for writing upgrades it; every document is as it was, verify is clean.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lmdb.h>
#include <jansson.h>
#include "test.h"
#include "simhash.h"

#define N_DOCS 30
#define SEED 0xc4ec5u

#define STORE_PATH_PREFIX "test_store_ck"
#include "store_path.h"

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	uint8_t *b = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	fclose(f);
	return b;
}

static int spit(const char *p, const uint8_t *b, size_t len)
{
	FILE *f = fopen(p, "wb");
	int ok = f && fwrite(b, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok;
}

/* Every record of every table, raw, as one byte string (the oracle). */
static uint8_t *raw_dump(size_t *len)
{
	static const char *const dbs[] = { "meta", "docs", "ids", "dlog" };
	size_t cap = 1 << 16, n = 0;
	uint8_t *out = malloc(cap);
	MDB_env *env;
	MDB_txn *txn;

	*len = 0;
	if (!out || mdb_env_create(&env) != 0)
		return out;
	mdb_env_set_maxdbs(env, 8);
	if (mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0644) != 0 ||
	    mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0) {
		mdb_env_close(env);
		return out;
	}
	for (int t = 0; t < 4; t++) {
		MDB_dbi dbi;
		MDB_cursor *cur;
		MDB_val k, v;
		int rc;

		if (mdb_dbi_open(txn, dbs[t], 0, &dbi) != 0 || mdb_cursor_open(txn, dbi, &cur) != 0)
			continue;
		for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
		     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			size_t need = n + k.mv_size + v.mv_size + 17;

			if (need > cap) {
				uint8_t *p;

				while (need > cap)
					cap *= 2;
				if (!(p = realloc(out, cap)))
					break;
				out = p;
			}
			out[n++] = (uint8_t)t;
			memcpy(out + n, &k.mv_size, 8);
			memcpy(out + n + 8, &v.mv_size, 8);
			n += 16;
			memcpy(out + n, k.mv_data, k.mv_size);
			n += k.mv_size;
			memcpy(out + n, v.mv_data, v.mv_size);
			n += v.mv_size;
		}
		mdb_cursor_close(cur);
	}
	mdb_txn_abort(txn);
	mdb_env_close(env);
	*len = n;
	return out;
}

struct tdoc {
	char id[16];
	simhash_fp fp;
	char meta[96];
	int64_t time;
	int gone; /* deleted */
};

static struct tdoc docs[N_DOCS];

/* A store of N_DOCS documents of width bits; some replaced and deleted
 * (so "dlog" holds fingerprints), optionally a checkpoint after them. */
static int build(unsigned bits, int ckpt)
{
	simhash_config cfg;
	simhash_store *st = NULL;
	simhash_error err;
	simhash_err e;

	simhash_config_init(&cfg);
	cfg.bits = bits;
	fresh_path("flip.db");
	if (simhash_store_create(path, &cfg, &st, &err) != SIMHASH_OK) {
		fprintf(stderr, "create: %s\n", err.msg);
		return 0;
	}
	for (int i = 0; i < N_DOCS; i++) {
		struct tdoc *d = &docs[i];
		simhash_store_doc sd;
		char hex[41];

		snprintf(d->id, sizeof d->id, "doc-%02d", i);
		d->fp.bits = bits;
		d->fp.w[0] = test_rnd();
		d->fp.w[1] = bits == 128 ? test_rnd() : 0;
		for (int j = 0; j < 40; j++)
			hex[j] = "0123456789abcdef"[test_rnd() & 15];
		hex[40] = 0;
		snprintf(d->meta, sizeof d->meta, "{\"n\":%d,\"r\":\"%s\"}", i, hex);
		d->time = 1700000000 + i;
		d->gone = 0;
		memset(&sd, 0, sizeof sd);
		sd.id = d->id;
		sd.id_len = strlen(d->id);
		sd.fp = d->fp;
		sd.meta = d->meta;
		sd.meta_len = strlen(d->meta);
		sd.time = d->time;
		CHECK((e = simhash_store_put(st, &sd, NULL)) == SIMHASH_OK);
		/* every fifth put twice: a replacement with the same values, so
		 * the fingerprint lives in "docs" and in "dlog" */
		if (i % 5 == 0)
			CHECK(simhash_store_put(st, &sd, NULL) == SIMHASH_OK);
	}
	for (int i = 3; i < N_DOCS; i += 7) {
		int del = 0;

		CHECK(simhash_store_delete(st, docs[i].id, strlen(docs[i].id), &del, NULL) == SIMHASH_OK);
		CHECK(del == 1);
		docs[i].gone = 1;
	}
	if (ckpt)
		CHECK(simhash_store_checkpoint(st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	return 1;
}

static void count_problem(const char *problem, void *arg)
{
	(void)problem;
	(*(int *)arg)++;
}

/* Whether get and query on st give document d exactly or refuse it; sets
 * *refused when get refused it. */
static int reads_exact(simhash_store *st, const struct tdoc *d, int *refused)
{
	simhash_store_results *r = NULL;
	const simhash_store_match *m;
	simhash_error err;
	simhash_err e;
	int ok = 1;

	*refused = 0;
	if (simhash_store_results_new(&r) != SIMHASH_OK)
		return 0;
	e = simhash_store_get(st, d->id, strlen(d->id), r, &err);
	if (e == SIMHASH_ECORRUPT) {
		*refused = 1;
		/* names the store and the id */
		ok = strstr(err.msg, path) && strstr(err.msg, d->id) && !simhash_store_results_count(r);
	} else if (e != SIMHASH_OK) {
		ok = 0;
	} else if (d->gone) {
		ok = simhash_store_results_count(r) == 0;
	} else {
		m = simhash_store_results_get(r, 0);
		ok = m && m->fp.w[0] == d->fp.w[0] && m->fp.w[1] == d->fp.w[1] &&
		     m->meta_len == strlen(d->meta) && !memcmp(m->meta, d->meta, m->meta_len) &&
		     m->time == d->time && m->id_len == strlen(d->id);
	}
	/* a query at distance 0 and 3: every answer is a stored document,
	 * exact, or the whole query is refused */
	for (unsigned k = 0; ok && k <= 3; k += 3) {
		e = simhash_store_query(st, &d->fp, k, 0, r, NULL);
		if (e == SIMHASH_ECORRUPT)
			continue;
		ok = e == SIMHASH_OK;
		for (size_t i = 0; ok && i < simhash_store_results_count(r); i++) {
			int found = 0;

			m = simhash_store_results_get(r, i);
			for (int j = 0; j < N_DOCS; j++) {
				const struct tdoc *o = &docs[j];

				if (o->gone || m->id_len != strlen(o->id) || memcmp(m->id, o->id, m->id_len))
					continue;
				found = m->fp.w[0] == o->fp.w[0] && m->fp.w[1] == o->fp.w[1] &&
					m->meta_len == strlen(o->meta) &&
					!memcmp(m->meta, o->meta, m->meta_len) &&
					m->dist == simhash_hamming(&m->fp, &d->fp);
			}
			ok = found;
		}
	}
	simhash_store_results_free(r);
	return ok;
}

struct tally {
	int copies, live, live_refused;
};

/* Flips one bit of the copy at off, checks the store, restores the file. */
static void flip_one(uint8_t *file, size_t len, const uint8_t *dump0, size_t dump0_len,
		     size_t off, unsigned bit, const struct tdoc *d, struct tally *t)
{
	simhash_store *st = NULL;
	simhash_error err;
	uint8_t *dump;
	size_t dump_len;
	uint64_t n = 0;
	int live, refused = 0, problems = 0;
	simhash_err e;

	file[off] ^= (uint8_t)(1u << bit);
	CHECK(spit(path, file, len));
	dump = raw_dump(&dump_len);
	live = dump_len != dump0_len || memcmp(dump, dump0, dump_len);
	free(dump);
	e = simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, &err);
	if (e != SIMHASH_OK) {
		/* refusing the whole store is allowed only for a live copy */
		CHECK(live && e == SIMHASH_ECORRUPT);
		t->live_refused += live;
	} else {
		CHECK(simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
		if (live != (n > 0))
			fprintf(stderr, "%s at %zu bit %u: live %d, %d problems\n", d->id, off, bit,
				live, (int)n);
		CHECK(live == (n > 0));
		CHECK(reads_exact(st, d, &refused));
		CHECK(!refused || live);
		t->live_refused += refused;
		simhash_store_close(st);
	}
	t->copies++;
	t->live += live;
	file[off] ^= (uint8_t)(1u << bit);
	CHECK(spit(path, file, len));
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Every copy of needle in the file, one bit flipped each. */
static void flip_copies(uint8_t *file, size_t len, const uint8_t *dump0, size_t dump0_len,
			const void *needle, size_t nlen, const struct tdoc *d, struct tally *t)
{
	for (size_t off = 0; off + nlen <= len; off++) {
		if (memcmp(file + off, needle, nlen))
			continue;
		flip_one(file, len, dump0, dump0_len, off + test_rnd() % nlen, (unsigned)(test_rnd() % 8), d,
			 t);
	}
}

static void flip_test(unsigned bits, int ckpt)
{
	uint8_t *file, *dump0, word[8];
	size_t len, dump0_len;

	test_rnd_seed(SEED + bits + (unsigned)ckpt);
	if (!build(bits, ckpt))
		return;
	file = slurp(path, &len);
	dump0 = raw_dump(&dump0_len);
	CHECK(file && dump0 && dump0_len > 0);
	if (!file || !dump0)
		goto out;
	for (int i = 0; i < N_DOCS; i++) {
		struct tdoc *d = &docs[i];
		struct tally fp = { 0, 0, 0 }, meta = { 0, 0, 0 };

		for (unsigned w = 0; w < bits / 64; w++) {
			put_le64(word, d->fp.w[w]);
			flip_copies(file, len, dump0, dump0_len, word, 8, d, &fp);
			put_be64(word, d->fp.w[w]);
			flip_copies(file, len, dump0, dump0_len, word, 8, d, &fp);
		}
		flip_copies(file, len, dump0, dump0_len, d->meta, strlen(d->meta), d, &meta);
		/* the live copy of each was found and, for a stored document,
		 * refused by get (a deleted one's fingerprint lives in "dlog"
		 * until a checkpoint covers its deletion) */
		CHECK(fp.live > 0 || (d->gone && ckpt));
		if (!d->gone) {
			CHECK(meta.live > 0);
			CHECK(fp.live_refused > 0 && meta.live_refused > 0);
		}
		if ((fp.live == 0 && !(d->gone && ckpt)) || (!d->gone && meta.live_refused == 0))
			fprintf(stderr, "%u bits, ckpt %d, %s: fp %d/%d/%d meta %d/%d/%d\n", bits,
				ckpt, d->id, fp.copies, fp.live, fp.live_refused, meta.copies,
				meta.live, meta.live_refused);
	}
out:
	free(file);
	free(dump0);
}

static void test_flip_any_copy_64(void)
{
	flip_test(64, 0);
}

static void test_flip_any_copy_64_with_checkpoint(void)
{
	flip_test(64, 1);
}

static void test_flip_any_copy_128(void)
{
	flip_test(128, 0);
}

/* A writing handle refuses a flipped record too, and can still delete or
 * replace around it; verify on it reports it. */
static void test_writer_refuses_flipped_record(void)
{
	simhash_store *st = NULL;
	simhash_store_results *r = NULL;
	uint8_t *file, *dump0, *dump;
	size_t len, dump0_len, dump_len, off;
	uint64_t n = 0;
	int problems = 0, live = 0;

	test_rnd_seed(SEED);
	if (!build(64, 0))
		return;
	file = slurp(path, &len);
	dump0 = raw_dump(&dump0_len);
	/* the live copy of doc-01's metadata: the one whose flip LMDB sees */
	for (off = 0; file && off + strlen(docs[1].meta) <= len && !live; off++) {
		if (memcmp(file + off, docs[1].meta, strlen(docs[1].meta)))
			continue;
		file[off + 5] ^= 4;
		CHECK(spit(path, file, len));
		dump = raw_dump(&dump_len);
		live = dump_len != dump0_len || memcmp(dump, dump0, dump_len);
		free(dump);
		if (!live) {
			file[off + 5] ^= 4;
			CHECK(spit(path, file, len));
		}
	}
	free(file);
	free(dump0);
	CHECK(live);
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	CHECK(simhash_store_get(st, docs[1].id, strlen(docs[1].id), r, NULL) == SIMHASH_ECORRUPT);
	CHECK(simhash_store_get(st, docs[2].id, strlen(docs[2].id), r, NULL) == SIMHASH_OK);
	CHECK(simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK(n > 0);
	simhash_store_results_free(r);
	simhash_store_close(st);
}

/* The checkpoint's file (PATH-index) carries a body checksum: a flipped bit
 * in it is reported by verify on the handle that mapped it. */
static void test_flipped_checkpoint_file_is_reported(void)
{
	char idx[200];
	simhash_store *st = NULL;
	uint8_t *file;
	size_t len;
	uint64_t n = 0;
	int problems = 0;

	test_rnd_seed(SEED);
	if (!build(64, 1))
		return;
	snprintf(idx, sizeof idx, "%s-index", path);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	CHECK(st && simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n, 0);
	simhash_store_close(st);
	file = slurp(idx, &len);
	CHECK(file && len > 512);
	if (!file)
		return;
	file[len - 200] ^= 8;
	CHECK(spit(idx, file, len));
	free(file);
	st = NULL;
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	CHECK(st && simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK(n > 0);
	simhash_store_close(st);
}

/* ---- no space */

static void test_full_map_gives_enospc_and_loses_nothing(void)
{
	simhash_config cfg;
	simhash_store *st = NULL;
	simhash_store_results *r = NULL;
	char meta[3000];
	simhash_error err;
	struct stat sb;
	simhash_err e = SIMHASH_OK;
	int n_acked = 0, i;

	simhash_config_init(&cfg);
	fresh_path("full.db");
	CHECK(simhash_store_create(path, &cfg, &st, &err) == SIMHASH_OK);
	simhash_store_close(st);
	st = NULL;
	CHECK(stat(path, &sb) == 0);
	CHECK(simhash_store_open_mapped(path, 0, (size_t)sb.st_size + (1 << 20), &st, &err) == SIMHASH_OK);
	if (!st)
		return;
	test_rnd_seed(SEED);
	for (i = 0; i < 2000; i++) {
		simhash_store_doc d;
		char id[16];

		for (size_t j = 0; j + 1 < sizeof meta; j++)
			meta[j] = "0123456789abcdef"[test_rnd() & 15];
		memset(&d, 0, sizeof d);
		snprintf(id, sizeof id, "m%d", i);
		d.id = id;
		d.id_len = strlen(id);
		d.fp.bits = 64;
		d.fp.w[0] = test_rnd();
		d.meta = meta;
		d.meta_len = sizeof meta - 1;
		if ((e = simhash_store_put(st, &d, &err)) != SIMHASH_OK)
			break;
		n_acked++;
	}
	CHECK(e == SIMHASH_ENOSPC);
	CHECK(strstr(err.msg, "MDB_MAP_FULL") != NULL);
	CHECK(n_acked > 100);
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	CHECK(simhash_store_get(st, "m0", 2, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 1);
	simhash_store_close(st);
	st = NULL;
	/* without the limit: writes again, and everything acknowledged is there */
	CHECK(simhash_store_open(path, 0, &st, &err) == SIMHASH_OK);
	if (st) {
		simhash_store_doc d;
		simhash_store_stats s = { .size = sizeof s };
		uint64_t n = 0;
		int problems = 0;

		memset(&d, 0, sizeof d);
		d.id = "after";
		d.id_len = 5;
		d.fp.bits = 64;
		d.fp.w[0] = 1;
		CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
		CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(s.n_docs, (uint64_t)n_acked + 1);
		for (i = 0; i < n_acked; i++) {
			char id[16];

			snprintf(id, sizeof id, "m%d", i);
			CHECK(simhash_store_get(st, id, strlen(id), r, NULL) == SIMHASH_OK &&
			      simhash_store_results_count(r) == 1);
		}
		CHECK(simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(n, 0);
		simhash_store_close(st);
	}
	simhash_store_results_free(r);
}

/* Flips one bit of the live copy of needle in the file (raw_dump tells
 * which copy is live); 1 if one was found. */
static int flip_live(const void *needle, size_t nlen)
{
	uint8_t *file, *dump0, *dump;
	size_t len, dump0_len, dump_len;
	int live = 0;

	file = slurp(path, &len);
	dump0 = raw_dump(&dump0_len);
	for (size_t off = 0; file && dump0 && off + nlen <= len && !live; off++) {
		if (memcmp(file + off, needle, nlen))
			continue;
		file[off + nlen / 2] ^= 2;
		CHECK(spit(path, file, len));
		dump = raw_dump(&dump_len);
		live = dump_len != dump0_len || memcmp(dump, dump0, dump_len);
		free(dump);
		if (!live) {
			file[off + nlen / 2] ^= 2;
			CHECK(spit(path, file, len));
		}
	}
	free(file);
	free(dump0);
	return live;
}

/* A damaged record can be deleted, or replaced, by its id: the record and
 * the id go, the index is rebuilt, and the store verifies clean again. */
static void test_damaged_record_can_be_deleted_or_replaced(void)
{
	simhash_store *st = NULL;
	simhash_store_results *r = NULL;
	simhash_store_doc d;
	uint8_t word[8];
	uint64_t n = 0;
	int problems = 0, del = 0;
	const char *meta = "{\"new\":1}";

	test_rnd_seed(SEED + 7);
	if (!build(64, 1))
		return;
	put_le64(word, docs[2].fp.w[0]);
	CHECK(flip_live(docs[1].meta, strlen(docs[1].meta)));
	CHECK(flip_live(word, 8));
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	CHECK(simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK(n > 0);
	CHECK(simhash_store_get(st, docs[1].id, strlen(docs[1].id), r, NULL) == SIMHASH_ECORRUPT);
	CHECK(simhash_store_delete(st, docs[1].id, strlen(docs[1].id), &del, NULL) == SIMHASH_OK);
	CHECK(del == 1);
	memset(&d, 0, sizeof d);
	d.id = docs[2].id;
	d.id_len = strlen(docs[2].id);
	d.fp = docs[2].fp;
	d.meta = meta;
	d.meta_len = strlen(meta);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	CHECK(simhash_store_get(st, docs[1].id, strlen(docs[1].id), r, NULL) == SIMHASH_OK &&
	      simhash_store_results_count(r) == 0);
	CHECK(simhash_store_get(st, docs[2].id, strlen(docs[2].id), r, NULL) == SIMHASH_OK &&
	      simhash_store_results_count(r) == 1 &&
	      simhash_store_results_get(r, 0)->meta_len == strlen(meta));
	CHECK(simhash_store_query(st, &docs[2].fp, 0, 0, r, NULL) == SIMHASH_OK &&
	      simhash_store_results_count(r) == 1);
	n = 0;
	CHECK(simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n, 0);
	simhash_store_close(st);
	st = NULL;
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	n = 0;
	CHECK(st && simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n, 0);
	simhash_store_close(st);
	simhash_store_results_free(r);
}

/* ---- format version 2 */

static int copy_file(const char *from, const char *to)
{
	size_t len;
	uint8_t *b = slurp(from, &len);
	int ok = b && spit(to, b, len);

	free(b);
	return ok;
}

static void test_v2_store_is_refused_read_only_and_upgraded(void)
{
	simhash_store *st = NULL;
	simhash_store_results *r = NULL;
	simhash_store_stats s = { .size = sizeof s };
	char idx[200];
	simhash_error err;
	json_error_t je;
	FILE *f;
	char line[1024];
	uint64_t n = 0;
	int problems = 0, n_docs = 0;

	fresh_path("v2.db");
	snprintf(idx, sizeof idx, "%s-index", path);
	if (!copy_file("tests/data/store_v2/v2.db", path) ||
	    !copy_file("tests/data/store_v2/v2.db-index", idx)) {
		CHECK(!"tests/data/store_v2 readable (run from the repository)");
		return;
	}
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, &err) ==
	      SIMHASH_ECORRUPT);
	CHECK(st == NULL);
	CHECK(strstr(err.msg, "format version 2") && strstr(err.msg, "simhash store upgrade"));
	CHECK(simhash_store_open(path, 0, &st, &err) == SIMHASH_OK);
	if (!st) {
		fprintf(stderr, "upgrade: %s\n", err.msg);
		return;
	}
	simhash_store_close(st);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, &err) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_verify(st, count_problem, &problems, &n, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n, 0);
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.format_version, 3);
	CHECK_EQ_U64(s.n_docs, 7);
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	f = fopen("tests/data/store_v2/v2.jsonl", "r");
	CHECK(f != NULL);
	while (f && r && fgets(line, sizeof line, f)) {
		json_t *j = json_loads(line, 0, &je), *meta;
		const char *id = json_string_value(json_object_get(j, "id"));
		const char *hex = json_string_value(json_object_get(j, "fingerprint"));
		const simhash_store_match *m;
		char *mtext;

		n_docs++;
		CHECK(id && hex);
		if (!id || !hex || simhash_store_get(st, id, strlen(id), r, NULL) != SIMHASH_OK ||
		    !(m = simhash_store_results_get(r, 0))) {
			CHECK(!"every exported document is there");
			json_decref(j);
			continue;
		}
		CHECK_EQ_U64(m->fp.w[0], strtoull(hex, NULL, 16));
		CHECK_EQ_U64(m->time, json_integer_value(json_object_get(j, "time")));
		meta = json_object_get(j, "meta");
		mtext = json_dumps(meta, JSON_COMPACT);
		CHECK(mtext && m->meta_len == strlen(mtext) && !memcmp(m->meta, mtext, m->meta_len));
		free(mtext);
		json_decref(j);
	}
	CHECK_EQ_U64(n_docs, 7);
	CHECK(simhash_store_get(st, "doc-5", 5, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 0);
	if (f)
		fclose(f);
	simhash_store_results_free(r);
	simhash_store_close(st);
}

static const struct test_case cases[] = {
	TEST(test_flip_any_copy_64),
	TEST(test_flip_any_copy_64_with_checkpoint),
	TEST(test_flip_any_copy_128),
	TEST(test_writer_refuses_flipped_record),
	TEST(test_damaged_record_can_be_deleted_or_replaced),
	TEST(test_flipped_checkpoint_file_is_reported),
	TEST(test_full_map_gives_enospc_and_loses_nothing),
	TEST(test_v2_store_is_refused_read_only_and_upgraded),
};

int main(void)
{
	int rc = test_run("store_checksum", cases, sizeof cases / sizeof cases[0]);

	cleanup();
	return rc;
}
