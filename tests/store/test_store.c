/* test_store.c - the LMDB store: put/get/delete/query against a brute-force
 * reference, reopen, replace, expiry, check-and-put atomicity under threads,
 * readers during writes, group commit, verify, locking and bad arguments. */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lmdb.h>
#include <xxhash.h>
#include "test.h"
#include "simhash.h"

#define SEED 0x5107e5eedull

static uint64_t rng_state;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Each bit 1 with probability 0.72 (biased fingerprints). */
static uint64_t rnd_biased(void)
{
	uint64_t v = 0;

	for (int i = 0; i < 64; i++)
		v |= (uint64_t)(rnd() % 100 < 72) << i;
	return v;
}

static simhash_fp mkfp(unsigned bits, uint64_t lo, uint64_t hi)
{
	simhash_fp fp = { { lo, hi }, bits };

	if (bits == 32)
		fp.w[0] &= 0xffffffffu;
	if (bits < 128)
		fp.w[1] = 0;
	return fp;
}

#define STORE_PATH_PREFIX "test_store"
#include "store_path.h"

static simhash_store *create_bits(const char *name, unsigned bits)
{
	simhash_config cfg;
	simhash_store *st = NULL;
	simhash_error err;

	simhash_config_init(&cfg);
	cfg.bits = bits;
	fresh_path(name);
	if (simhash_store_create(path, &cfg, &st, &err) != SIMHASH_OK)
		fprintf(stderr, "create %s: %s\n", path, err.msg);
	return st;
}

static simhash_store_doc doc_of(const char *id, simhash_fp fp, const char *meta, int64_t t)
{
	simhash_store_doc d = { id, strlen(id), fp, meta, meta ? strlen(meta) : 0, t };
	return d;
}

static uint64_t verify_problems(simhash_store *st)
{
	uint64_t n = 99;

	CHECK(simhash_store_verify(st, NULL, NULL, &n, NULL) == SIMHASH_OK);
	return n;
}

static void test_put_get_delete_and_reopen(void)
{
	simhash_store *st = create_bits("basic", 64);
	simhash_store_results *r;
	const simhash_store_match *m;
	simhash_store_doc d;
	char scheme[SIMHASH_SCHEME_MAX];
	simhash_config cfg;
	int deleted;

	CHECK(st != NULL);
	if (!st)
		return;
	simhash_config_init(&cfg);
	CHECK(simhash_config_scheme(&cfg, scheme, sizeof scheme) == SIMHASH_OK);
	CHECK_STR(simhash_store_scheme(st), scheme);
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	d = doc_of("a\xf0\x9f\x98\x80 emoji id", mkfp(64, 0x1234, 0), "{\"url\":\"x\"}", 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	CHECK(simhash_store_get(st, d.id, d.id_len, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 1);
	m = simhash_store_results_get(r, 0);
	CHECK(m && m->id_len == d.id_len && !memcmp(m->id, d.id, d.id_len) && m->id[d.id_len] == 0);
	CHECK(m && m->fp.w[0] == 0x1234 && m->fp.bits == 64);
	CHECK(m && m->meta_len == 11 && !memcmp(m->meta, "{\"url\":\"x\"}", 11));
	CHECK(m && m->time > 1600000000);
	CHECK(simhash_store_get(st, "nope", 4, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 0);
	/* replace: same id, new fingerprint */
	d.fp = mkfp(64, 0xffff, 0);
	d.meta = NULL;
	d.meta_len = 0;
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	CHECK(simhash_store_query(st, &d.fp, 0, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 1);
	CHECK(simhash_store_query(st, &(simhash_fp){ { 0x1234, 0 }, 64 }, 0, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 0);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);

	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_get(st, d.id, d.id_len, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 1);
	m = simhash_store_results_get(r, 0);
	CHECK(m && m->fp.w[0] == 0xffff && m->meta_len == 0);
	CHECK(simhash_store_query(st, &d.fp, 3, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 1);
	CHECK(simhash_store_config(st, &cfg, NULL) == SIMHASH_OK);
	CHECK(simhash_config_scheme(&cfg, scheme, sizeof scheme) == SIMHASH_OK);
	CHECK_STR(scheme, simhash_store_scheme(st));
	CHECK(simhash_store_delete(st, d.id, d.id_len, &deleted, NULL) == SIMHASH_OK && deleted == 1);
	CHECK(simhash_store_delete(st, d.id, d.id_len, &deleted, NULL) == SIMHASH_OK && deleted == 0);
	CHECK(simhash_store_query(st, &d.fp, 64, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 0);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
	simhash_store_results_free(r);
}

/* Random (uniform, biased, clustered) fingerprints of every width: queries
 * for every k must give exactly what a scan of a plain array gives, before
 * and after a reopen, with deletions in between. */
static void test_query_matches_brute_force(void)
{
	static const unsigned widths[] = { 32, 64, 128 };
	enum { N = 600 };
	simhash_fp fps[N];
	int alive[N];
	simhash_store_results *r;

	rng_state = SEED;
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	for (size_t wi = 0; wi < 3; wi++) {
		unsigned bits = widths[wi];
		simhash_store *st = create_bits("bf", bits);
		simhash_store_doc docs[N];
		char ids[N][16];

		if (!st)
			continue;
		for (int i = 0; i < N; i++) {
			int kind = i % 3;
			if (kind == 0)
				fps[i] = mkfp(bits, rnd(), rnd());
			else if (kind == 1)
				fps[i] = mkfp(bits, rnd_biased(), rnd_biased());
			else { /* a few bits off an earlier one */
				fps[i] = fps[i - 2];
				for (int f = (int)(rnd() % 5); f > 0; f--) {
					unsigned b = (unsigned)(rnd() % bits);
					fps[i].w[b / 64] ^= 1ull << (b % 64);
				}
			}
			snprintf(ids[i], sizeof ids[i], "d%d", i);
			docs[i] = doc_of(ids[i], fps[i], NULL, 0);
			alive[i] = 1;
		}
		CHECK(simhash_store_put_many(st, docs, N, NULL) == SIMHASH_OK);
		for (int i = 0; i < N; i += 7) {
			CHECK(simhash_store_delete(st, ids[i], strlen(ids[i]), NULL, NULL) == SIMHASH_OK);
			alive[i] = 0;
		}
		for (int round = 0; round < 2; round++) {
			for (int q = 0; q < 40; q++) {
				simhash_fp qf = fps[rnd() % N];
				/* beyond the index's max_dist too (12 at 64 bits): the scan path */
				unsigned k = (unsigned)(rnd() % (bits / 2 + 1));
				size_t expect = 0, got;

				qf.w[0] ^= 1ull << (rnd() % 32);
				for (int i = 0; i < N; i++)
					expect += alive[i] && simhash_hamming(&qf, &fps[i]) <= k;
				CHECK(simhash_store_query(st, &qf, k, 0, r, NULL) == SIMHASH_OK);
				got = simhash_store_results_count(r);
				if (got != expect)
					fprintf(stderr, "seed %llx bits %u k %u: %zu != %zu\n",
						(unsigned long long)SEED, bits, k, got, expect);
				CHECK(got == expect);
				for (size_t j = 0; j < got; j++) {
					const simhash_store_match *m = simhash_store_results_get(r, j);
					int i = atoi(m->id + 1);
					CHECK(alive[i] && m->dist == simhash_hamming(&qf, &fps[i]));
					CHECK(j == 0 || simhash_store_results_get(r, j - 1)->dist <= m->dist);
				}
				CHECK(simhash_store_query(st, &qf, k, 2, r, NULL) == SIMHASH_OK);
				CHECK(simhash_store_results_count(r) == (expect < 2 ? expect : 2));
			}
			CHECK_EQ_U64(verify_problems(st), 0);
			simhash_store_close(st);
			st = NULL;
			CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
			if (!st)
				break;
		}
		simhash_store_close(st);
	}
	simhash_store_results_free(r);
}

static void test_wrong_width_and_bad_arguments(void)
{
	simhash_store *st = create_bits("bad", 64), *st2 = NULL;
	simhash_store_doc d;
	char longid[SIMHASH_STORE_ID_MAX + 2];
	simhash_error err;
	simhash_store_results *r;

	if (!st)
		return;
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	d = doc_of("x", mkfp(128, 1, 2), NULL, 0);
	CHECK(simhash_store_put(st, &d, &err) == SIMHASH_ESCHEME);
	CHECK(err.code == SIMHASH_ESCHEME && strstr(err.msg, "128-bit") != NULL);
	CHECK(simhash_store_query(st, &d.fp, 3, 0, r, NULL) == SIMHASH_ESCHEME);
	memset(longid, 'a', sizeof longid - 1);
	longid[sizeof longid - 1] = 0;
	d = doc_of(longid, mkfp(64, 1, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_EINVAL);
	d = doc_of("", mkfp(64, 1, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_EINVAL);
	/* a second writer is refused while the first is open */
	CHECK(simhash_store_open(path, 0, &st2, &err) == SIMHASH_EIO);
	CHECK(st2 == NULL && strstr(err.msg, "locked") != NULL);
	/* creating over an existing store is refused */
	{
		simhash_config cfg;
		simhash_config_init(&cfg);
		CHECK(simhash_store_create(path, &cfg, &st2, &err) == SIMHASH_EIO);
		CHECK(strstr(err.msg, "exists") != NULL);
	}
	simhash_store_close(st);
	/* read-only handles refuse writes */
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	d = doc_of("y", mkfp(64, 1, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_EINVAL);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
	/* not a store */
	{
		FILE *f = fopen(path, "w");
		fputs("hello, not lmdb\n", f);
		fclose(f);
		CHECK(simhash_store_open(path, 0, &st, &err) != SIMHASH_OK);
		CHECK(st == NULL && err.msg[0]);
		CHECK(simhash_store_open("/nonexistent/x", 0, &st, &err) == SIMHASH_EIO);
	}
	simhash_store_results_free(r);
}

static void test_expire_removes_old_documents_only(void)
{
	simhash_store *st = create_bits("expire", 64);
	simhash_store_results *r;
	size_t n;

	if (!st)
		return;
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	for (int i = 0; i < 100; i++) {
		char id[16];
		simhash_store_doc d;

		snprintf(id, sizeof id, "t%d", i);
		d = doc_of(id, mkfp(64, (uint64_t)i, 0), NULL, 1000 + i);
		CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	}
	CHECK(simhash_store_expire(st, 1050, &n, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n, 50);
	CHECK(simhash_store_get(st, "t49", 3, r, NULL) == SIMHASH_OK && simhash_store_results_count(r) == 0);
	CHECK(simhash_store_get(st, "t50", 3, r, NULL) == SIMHASH_OK && simhash_store_results_count(r) == 1);
	CHECK(simhash_store_query(st, &(simhash_fp){ { 0, 0 }, 64 }, 64, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 50);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
	simhash_store_results_free(r);
}

/* Threads add near-duplicates of one fingerprint with if_unique: exactly one
 * of them may be added, whatever the interleaving and batching. */
struct cap_arg {
	simhash_store *st;
	int t;
	int added;
	int fail;
};

static void *cap_thread(void *p)
{
	struct cap_arg *a = p;
	simhash_store_results *r;

	if (simhash_store_results_new(&r) != SIMHASH_OK) {
		a->fail = 1;
		return NULL;
	}
	for (int i = 0; i < 20; i++) {
		char id[32];
		simhash_store_doc d;
		int added;
		/* group i: a base far from the other groups' (about 32 bits), one
		 * bit flipped per thread: members are within 2 of each other */
		uint64_t base = ((uint64_t)i + 1) * 0x9e3779b97f4a7c15ull;

		snprintf(id, sizeof id, "g%d-t%d", i, a->t);
		d = doc_of(id, mkfp(64, base ^ (1ull << a->t), 0), NULL, 0);
		if (simhash_store_check_and_put(a->st, &d, 3, 0, 1, r, &added, NULL) != SIMHASH_OK)
			a->fail = 1;
		if (!added && simhash_store_results_count(r) == 0)
			a->fail = 1;
		a->added += added;
	}
	simhash_store_results_free(r);
	return NULL;
}

static void test_check_and_put_is_atomic_across_threads(void)
{
	enum { T = 8 };
	simhash_store *st = create_bits("cap", 64);
	struct cap_arg a[T];
	pthread_t th[T];
	simhash_store_stats s = { .size = sizeof s };
	int total = 0;

	if (!st)
		return;
	for (int t = 0; t < T; t++) {
		a[t] = (struct cap_arg){ st, t, 0, 0 };
		pthread_create(&th[t], NULL, cap_thread, &a[t]);
	}
	for (int t = 0; t < T; t++) {
		pthread_join(th[t], NULL);
		CHECK(!a[t].fail);
		total += a[t].added;
	}
	CHECK_EQ_U64(total, 20); /* one per group */
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.n_docs, 20);
	CHECK_EQ_U64(s.n_committed, 20 * T);
	CHECK(s.n_commits <= s.n_committed);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
}

/* Writers put from several threads while readers query: every acknowledged
 * document is visible to a query that starts after the acknowledgement. */
struct rw_arg {
	simhash_store *st;
	int t;
	int *stop;
	int fail;
	long n;
};

static void *writer_thread(void *p)
{
	struct rw_arg *a = p;
	simhash_store_results *r;

	simhash_store_results_new(&r);
	for (int i = 0; i < 150; i++) {
		char id[32];
		simhash_fp fp = mkfp(64, ((uint64_t)a->t << 48) | (uint64_t)i * 0x10001, 0);
		simhash_store_doc d;

		snprintf(id, sizeof id, "w%d-%d", a->t, i);
		d = doc_of(id, fp, "m", 0);
		if (simhash_store_put(a->st, &d, NULL) != SIMHASH_OK)
			a->fail = 1;
		if (simhash_store_query(a->st, &fp, 0, 0, r, NULL) != SIMHASH_OK ||
		    simhash_store_results_count(r) < 1)
			a->fail = 1;
		a->n++;
	}
	simhash_store_results_free(r);
	return NULL;
}

static void *reader_thread(void *p)
{
	struct rw_arg *a = p;
	simhash_store_results *r;
	simhash_fp q = mkfp(64, 0, 0);

	simhash_store_results_new(&r);
	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
		if (simhash_store_query(a->st, &q, 20, 0, r, NULL) != SIMHASH_OK)
			a->fail = 1;
		if (simhash_store_get(a->st, "w0-0", 4, r, NULL) != SIMHASH_OK)
			a->fail = 1;
		a->n++;
	}
	simhash_store_results_free(r);
	return NULL;
}

static void test_readers_during_concurrent_writers(void)
{
	enum { W = 6, R = 2 };
	simhash_store *st = create_bits("rw", 64);
	struct rw_arg a[W + R];
	pthread_t th[W + R];
	int stop = 0;
	simhash_store_stats s = { .size = sizeof s };

	if (!st)
		return;
	for (int t = 0; t < W + R; t++) {
		a[t] = (struct rw_arg){ st, t, &stop, 0, 0 };
		pthread_create(&th[t], NULL, t < W ? writer_thread : reader_thread, &a[t]);
	}
	for (int t = 0; t < W; t++)
		pthread_join(th[t], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int t = W; t < W + R; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < W + R; t++)
		CHECK(!a[t].fail);
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.n_docs, W * 150);
	/* group commit: fewer commits than writes once writers overlap */
	CHECK(s.n_commits < s.n_committed);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	if (st) {
		CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(s.n_docs, W * 150);
		CHECK_EQ_U64(verify_problems(st), 0);
		simhash_store_close(st);
	}
}

struct each_arg {
	int n;
	int order_ok;
	int64_t last;
};

static int each_fn(const simhash_store_match *m, void *p)
{
	struct each_arg *a = p;

	a->order_ok &= m->time > a->last;
	a->last = m->time;
	a->n++;
	return 0;
}

static void test_each_visits_in_insertion_order(void)
{
	simhash_store *st = create_bits("each", 32);
	struct each_arg a = { 0, 1, 0 };

	if (!st)
		return;
	for (int i = 0; i < 30; i++) {
		char id[8];
		simhash_store_doc d;

		snprintf(id, sizeof id, "%c", 'z' - i); /* ids sort opposite to insertion */
		d = doc_of(id, mkfp(32, (uint64_t)i, 0), NULL, 100 + i);
		CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	}
	CHECK(simhash_store_each(st, each_fn, &a, NULL) == SIMHASH_OK);
	CHECK(a.n == 30 && a.order_ok);
	simhash_store_close(st);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[400];

	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
	CHECK(system(cmd) == 0);
}

/* The saved index (PATH-index) is mapped only when it is the store's current
 * state: an older copy put back must be ignored (rebuilt), a missing one too. */
static void test_stale_saved_index_is_not_used(void)
{
	simhash_store *st = create_bits("stale", 64);
	simhash_store_results *r;
	char idx[200], old[200];
	simhash_store_doc d;

	if (!st)
		return;
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	snprintf(idx, sizeof idx, "%s-index", path);
	snprintf(old, sizeof old, "%s-old", path);
	d = doc_of("a", mkfp(64, 0xabc, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	CHECK(simhash_store_checkpoint(st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(access(idx, F_OK) == 0);
	copy_file(idx, old);
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		goto out;
	CHECK(simhash_store_delete(st, "a", 1, NULL, NULL) == SIMHASH_OK);
	d = doc_of("b", mkfp(64, 0xfff000, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	CHECK(simhash_store_checkpoint(st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	copy_file(old, idx); /* an older checkpoint than the one ckpt names */
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		goto out;
	{
		simhash_store_stats s = { .size = sizeof s };

		CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
		CHECK(s.open_replayed == UINT64_MAX); /* rebuilt, not used */
	}
	CHECK(simhash_store_query(st, &(simhash_fp){ { 0xabc, 0 }, 64 }, 0, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 0);
	CHECK(simhash_store_query(st, &d.fp, 0, 0, r, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(simhash_store_results_count(r), 1);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
	unlink(idx);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	if (st) {
		CHECK(simhash_store_query(st, &d.fp, 0, 0, r, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(simhash_store_results_count(r), 1);
		CHECK_EQ_U64(verify_problems(st), 0);
		simhash_store_close(st);
	}
out:
	simhash_store_results_free(r);
}

/* Removes key from the named database of the store file, behind the store's
 * back, as a bug or a bad disk might. */
static void raw_delete(const char *db, const void *key, size_t len)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { len, (void *)key };

	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 4);
	CHECK(mdb_env_open(env, path, MDB_NOSUBDIR, 0644) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, db, 0, &dbi) == 0);
	CHECK(mdb_del(txn, dbi, &k, NULL) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

/* Sets meta record key of the store file, behind the store's back. */
/* Writes meta record key as val, sealed with the checksum docs/format.md
 * states (format version 3), computed here from xxHash itself; raw: as is. */
static void put_meta(const char *key, const void *val, size_t len, int raw)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t buf[256];
	uint64_t sum = XXH3_64bits_withSeed(val, len,
					    XXH3_64bits_withSeed(key, strlen(key),
								 0x5348524543534d31ull ^ 1));
	MDB_val k = { strlen(key), (void *)key }, v = { len + (raw ? 0 : 8), buf };

	if (len + 8 > sizeof buf)
		abort();
	memcpy(buf, val, len);
	for (int i = 0; i < 8; i++)
		buf[len + i] = (uint8_t)(sum >> (8 * i));

	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 4);
	CHECK(mdb_env_open(env, path, MDB_NOSUBDIR, 0644) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, "meta", 0, &dbi) == 0);
	CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

static void raw_put_meta(const char *key, const void *val, size_t len)
{
	put_meta(key, val, len, 0);
}

/* A store of format version 1 (before the deletion log) or of a newer one
 * is refused with a message naming both versions. */
static void test_other_format_versions_are_refused(void)
{
	/* version 1 as it was written (no checksum), version 4 sealed */
	static const uint8_t versions[][4] = { { 1, 0, 0, 0 }, { 4, 0, 0, 0 } };
	simhash_store *st = create_bits("version", 64);
	simhash_error err;

	if (!st)
		return;
	simhash_store_close(st);
	for (int i = 0; i < 2; i++) {
		char want[64];

		put_meta("version", versions[i], 4, i == 0);
		snprintf(want, sizeof want, "store format version %d, this library reads %d",
			 versions[i][0], SIMHASH_STORE_FORMAT_VERSION);
		st = NULL;
		CHECK(simhash_store_open(path, 0, &st, &err) == SIMHASH_ECORRUPT);
		CHECK(st == NULL);
		CHECK(strstr(err.msg, want) != NULL);
	}
}

/* Create saves the first checkpoint; a close saves none while few changed,
 * so the open maps that one and replays the changes since; after a
 * checkpoint nothing is left to replay. */
static void test_open_reports_how_the_index_was_loaded(void)
{
	simhash_store *st = create_bits("loaded", 64);
	simhash_store_stats s = { .size = sizeof s };
	simhash_store_doc d;

	if (!st)
		return;
	d = doc_of("a", mkfp(64, 0x1234, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.open_replayed, 1);
	CHECK_EQ_U64(s.checkpoint_delta, 1);
	d = doc_of("b", mkfp(64, 0x5678, 0), NULL, 0);
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	CHECK(simhash_store_delete(st, "a", 1, NULL, NULL) == SIMHASH_OK);
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.checkpoint_delta, 3);
	CHECK(simhash_store_checkpoint(st, NULL) == SIMHASH_OK);
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.n_checkpoints, 1);
	CHECK_EQ_U64(s.checkpoint_delta, 0);
	simhash_store_close(st);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.open_replayed, 0);
	CHECK(simhash_store_checkpoint(st, NULL) == SIMHASH_EINVAL);
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
}

static void touch(const char *name)
{
	FILE *f = fopen(name, "w");

	CHECK(f != NULL);
	if (f)
		fclose(f);
}

/* A writing open removes the temporary files of checkpoints a crash cut
 * short, and nothing else. */
static void test_open_removes_interrupted_checkpoints(void)
{
	simhash_store *st = create_bits("temps", 64);
	char tmp[200], other[200], odd[200];

	if (!st)
		return;
	simhash_store_close(st);
	snprintf(tmp, sizeof tmp, "%s-index.0a1b2c.tmp", path);
	snprintf(odd, sizeof odd, "%s-index.0a1b2.tmp", path);
	snprintf(other, sizeof other, "%s/other-index.0a1b2c.tmp", dir);
	touch(tmp);
	touch(odd);
	touch(other);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(access(tmp, F_OK) == 0); /* a reader leaves them */
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(access(tmp, F_OK) != 0);
	CHECK(access(odd, F_OK) == 0);
	CHECK(access(other, F_OK) == 0);
	unlink(odd);
	unlink(other);
}

static void count_problem(const char *problem, void *arg)
{
	char *seen = arg;

	if (strstr(problem, "missing from ids"))
		seen[0] = 1;
	if (strstr(problem, "names a missing document"))
		seen[1] = 1;
	if (strstr(problem, "index") || strstr(problem, " ids for "))
		seen[2] = 1;
}

/* verify reports what is wrong: an id missing from ids and an id naming a
 * deleted document, each once. (The index is rebuilt from the documents at
 * this open, and both tables keep 2 entries: those checks pass.) */
static void test_verify_reports_broken_invariants(void)
{
	simhash_store *st = create_bits("broken", 64);
	uint8_t docno[8] = { 0, 0, 0, 0, 0, 0, 0, 1 }; /* document 1, big-endian */
	char seen[3] = { 0, 0, 0 };
	uint64_t n = 0;

	if (!st)
		return;
	for (int i = 0; i < 3; i++) {
		char id[8];
		simhash_store_doc d;

		snprintf(id, sizeof id, "v%d", i);
		d = doc_of(id, mkfp(64, 0x1000u * (unsigned)i, 0), NULL, 0);
		CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_OK);
	}
	simhash_store_close(st);
	raw_delete("ids", "v0", 2); /* document 0 loses its id */
	raw_delete("docs", docno, 8); /* v1 now names nothing */
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	if (!st)
		return;
	CHECK(simhash_store_verify(st, count_problem, seen, &n, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n, 2);
	CHECK(seen[0] && seen[1] && !seen[2]);
	simhash_store_close(st);
}

/* ---- stop-word and IDF tables kept in the store */

struct idf_entry {
	char term[64];
	size_t len;
	double value;
};

struct idf_list {
	struct idf_entry e[512];
	size_t n;
};

static int collect_idf(const char *term, size_t len, double value, void *arg)
{
	struct idf_list *l = arg;

	if (l->n == sizeof l->e / sizeof l->e[0] || len > sizeof l->e[0].term)
		return 1;
	memcpy(l->e[l->n].term, term, len);
	l->e[l->n].len = len;
	l->e[l->n++].value = value;
	return 0;
}

/* A random term of 1-4 code points: ASCII, CJK (3 bytes), emoji (4 bytes). */
static size_t random_term(char *buf)
{
	static const char *const parts[] = { "a", "b", "z", "\xe7\x8c\xab", "\xe7\x8b\x97",
					     "\xf0\x9f\x98\x80", "\xf0\x9f\x90\x88", "q" };
	size_t len = 0, n = 1 + rnd() % 4;

	for (size_t i = 0; i < n; i++) {
		const char *p = parts[rnd() % 8];

		memcpy(buf + len, p, strlen(p));
		len += strlen(p);
	}
	return len;
}

static simhash_err fp_of(const simhash_config *cfg, const char *text, simhash_fp *fp)
{
	simhash_ctx *ctx;
	simhash_err e = simhash_ctx_new(cfg, &ctx);

	if (e == SIMHASH_OK)
		e = simhash_fingerprint(ctx, text, strlen(text), fp, NULL);
	simhash_ctx_free(ctx);
	return e;
}

/* Create with both tables, close, reopen: the config's tables equal the
 * originals term by term, value bit by bit and by digest, and texts
 * fingerprinted through it equal the direct fingerprints. The original IDF
 * table is left unfinished (its median stale), as set() leaves it. */
static void test_tables_round_trip_through_the_store(void)
{
	static const char *const texts[] = {
		"the cat sat on the mat", "a dog and a cat", "zz qq ab the end",
		"\xe7\x8c\xab \xf0\x9f\x98\x80 the cat", "",
	};
	simhash_stopwords *sw;
	simhash_idf *idf;
	simhash_config cfg, got;
	simhash_store *st = NULL;
	char term[64];
	simhash_error err;
	static struct idf_list a, b;

	rng_state = SEED ^ 0x7ab1e5;
	CHECK(simhash_stopwords_new(&sw) == SIMHASH_OK);
	CHECK(simhash_idf_new(&idf) == SIMHASH_OK);
	simhash_stopwords_add(sw, "the", 3);
	simhash_stopwords_add(sw, "a", 1);
	for (int i = 0; i < 300; i++) {
		size_t len = random_term(term);
		double v = (double)(rnd() >> 11) / 9007199254740992.0 * 12.0;

		CHECK(simhash_idf_set(idf, term, len, v) == SIMHASH_OK);
		if (i % 7 == 0)
			simhash_stopwords_add(sw, term, len);
	}
	simhash_idf_set(idf, "cat", 3, 0.0);
	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_WORD;
	cfg.weight = SIMHASH_WEIGHT_TFIDF;
	cfg.idf = idf;
	cfg.stopwords = sw;
	fresh_path("tables");
	CHECK(simhash_store_create(path, &cfg, &st, &err) == SIMHASH_OK);
	simhash_store_close(st);
	st = NULL;
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, &err) == SIMHASH_OK);
	if (!st) {
		fprintf(stderr, "open: %s (seed %llx)\n", err.msg, (unsigned long long)SEED);
		goto out;
	}
	simhash_config_init(&got);
	CHECK(simhash_store_config(st, &got, NULL) == SIMHASH_OK);
	CHECK(got.idf && got.idf != idf && got.stopwords && got.stopwords != sw);
	CHECK_EQ_U64(simhash_idf_digest(got.idf), simhash_idf_digest(idf));
	CHECK_EQ_U64(simhash_stopwords_digest(got.stopwords), simhash_stopwords_digest(sw));
	a.n = b.n = 0;
	CHECK(simhash_idf_each(idf, collect_idf, &a) == SIMHASH_OK);
	CHECK(simhash_idf_each(got.idf, collect_idf, &b) == SIMHASH_OK);
	CHECK_EQ_U64(a.n, simhash_idf_size(idf));
	CHECK_EQ_U64(a.n, b.n);
	for (size_t i = 0; i < a.n && i < b.n; i++) {
		CHECK(a.e[i].len == b.e[i].len && !memcmp(a.e[i].term, b.e[i].term, a.e[i].len));
		CHECK(memcmp(&a.e[i].value, &b.e[i].value, sizeof(double)) == 0);
		if (i)
			CHECK(memcmp(a.e[i - 1].term, a.e[i].term, a.e[i].len < a.e[i - 1].len ?
								   a.e[i].len : a.e[i - 1].len) <= 0);
	}
	/* the default of unknown terms (the median) is the same */
	CHECK(simhash_idf_get(got.idf, "\x01unknown", 8) == simhash_idf_get(idf, "\x01unknown", 8));
	CHECK(simhash_stopwords_has(got.stopwords, "the", 3));
	CHECK(!simhash_stopwords_has(got.stopwords, "cat", 3));
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		simhash_fp want, fp;

		CHECK(fp_of(&cfg, texts[i], &want) == SIMHASH_OK);
		CHECK(fp_of(&got, texts[i], &fp) == SIMHASH_OK);
		CHECK_EQ_U64(fp.w[0], want.w[0]);
	}
	CHECK_EQ_U64(verify_problems(st), 0);
	simhash_store_close(st);
out:
	simhash_idf_free(idf);
	simhash_stopwords_free(sw);
}

/* A table record that no longer gives the digest the scheme names (one value
 * changed behind the store's back), that does not parse, or that is
 * missing, is refused with its reason. */
static void test_tampered_tables_are_refused(void)
{
	simhash_stopwords *sw;
	simhash_idf *idf;
	simhash_config cfg;
	simhash_store *st = NULL;
	simhash_error err;
	uint8_t rec[24 + 4 + 3 + 8];
	double v = 2.5;
	uint64_t bits;

	CHECK(simhash_stopwords_new(&sw) == SIMHASH_OK);
	CHECK(simhash_idf_new(&idf) == SIMHASH_OK);
	simhash_stopwords_add(sw, "the", 3);
	simhash_idf_set(idf, "cat", 3, 2.0);
	simhash_idf_finish(idf);
	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_WORD;
	cfg.weight = SIMHASH_WEIGHT_TFIDF;
	cfg.idf = idf;
	cfg.stopwords = sw;
	fresh_path("tampered");
	CHECK(simhash_store_create(path, &cfg, &st, &err) == SIMHASH_OK);
	simhash_store_close(st);
	/* a record of the same table with 2.5 for cat, its digest updated:
	 * the scheme still names the old digest */
	simhash_idf_set(idf, "cat", 3, v);
	simhash_idf_finish(idf);
	memcpy(&bits, &v, sizeof bits);
	for (int i = 0; i < 8; i++) {
		rec[i] = (uint8_t)(simhash_idf_digest(idf) >> (8 * i));
		rec[8 + i] = (uint8_t)(bits >> (8 * i));
		rec[16 + i] = (uint8_t)(i == 0);
		rec[31 + i] = (uint8_t)(bits >> (8 * i));
	}
	memcpy(rec + 24, "\x03\0\0\0cat", 7);
	raw_put_meta("idf", rec, sizeof rec);
	st = NULL;
	CHECK(simhash_store_open(path, 0, &st, &err) == SIMHASH_ECORRUPT);
	CHECK(st == NULL);
	CHECK(strstr(err.msg, "IDF table") && strstr(err.msg, "the scheme names"));
	/* a record cut short: the parser's reason reaches the caller */
	raw_put_meta("idf", rec, 20);
	CHECK(simhash_store_open(path, 0, &st, &err) == SIMHASH_ECORRUPT);
	CHECK(st == NULL);
	CHECK(strstr(err.msg, "malformed idf record") != NULL);
	raw_delete("meta", "stopwords", 9);
	CHECK(simhash_store_open(path, 0, &st, &err) == SIMHASH_ECORRUPT);
	CHECK(strstr(err.msg, "'stopwords' missing") != NULL);
	simhash_idf_free(idf);
	simhash_stopwords_free(sw);
}

static const struct test_case cases[] = {
	TEST(test_put_get_delete_and_reopen),
	TEST(test_query_matches_brute_force),
	TEST(test_wrong_width_and_bad_arguments),
	TEST(test_expire_removes_old_documents_only),
	TEST(test_check_and_put_is_atomic_across_threads),
	TEST(test_readers_during_concurrent_writers),
	TEST(test_each_visits_in_insertion_order),
	TEST(test_stale_saved_index_is_not_used),
	TEST(test_verify_reports_broken_invariants),
	TEST(test_other_format_versions_are_refused),
	TEST(test_open_reports_how_the_index_was_loaded),
	TEST(test_open_removes_interrupted_checkpoints),
	TEST(test_tables_round_trip_through_the_store),
	TEST(test_tampered_tables_are_refused),
};

int main(void)
{
	int rc = test_run("store", cases, sizeof cases / sizeof cases[0]);

	cleanup();
	return rc;
}
