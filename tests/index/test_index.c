/* test_index.c - the Hamming index against a brute-force reference.
 *
 * Random sets (uniform bits, biased bits with P(1) = 0.72, clusters around a
 * few centres) with planted near-duplicates at every distance 0..k+1 of each
 * query; every layout (automatic, scan, MIH with several chunk counts) and
 * every k up to max_dist, at 64 and 128 bits, after inserts and deletes and
 * through save + open, must give exactly the reference's (id, dist) list.
 * Seeded PRNG: the seed is printed on failure (SIMHASH_TEST_SEED is not read:
 * change `seed` below to replay). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "simhash.h"
#include "test.h"
#include "../../lib/index/ix.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

enum dist { UNIFORM, BIASED, CLUSTERED };
static const char *dist_name[] = {"uniform", "biased", "clustered"};

static uint64_t biased_word(void)
{
	uint64_t w = 0;
	for (int b = 0; b < 64; b++)
		w |= (uint64_t)(rnd() % 100 < 72) << b;
	return w;
}

static void flip_bits(simhash_fp *f, unsigned d)
{
	unsigned done = 0;
	uint64_t used[2] = {0, 0};
	while (done < d) {
		unsigned b = (unsigned)(rnd() % f->bits);
		if (used[b >> 6] >> (b & 63) & 1)
			continue;
		used[b >> 6] |= 1ull << (b & 63);
		f->w[b >> 6] ^= 1ull << (b & 63);
		done++;
	}
}

static simhash_fp centres[8];

static simhash_fp random_fp(unsigned bits, enum dist d)
{
	simhash_fp f = {{0, 0}, bits};
	for (unsigned i = 0; i < bits / 64; i++)
		f.w[i] = d == BIASED ? biased_word() : rnd();
	if (d == CLUSTERED) {
		f = centres[rnd() % 8];
		flip_bits(&f, (unsigned)(rnd() % 12));
	}
	return f;
}

/* the reference: a plain list of pairs */
typedef struct ref {
	simhash_fp *fp;
	uint64_t *id;
	size_t n, cap;
} ref;

static int ref_find(const ref *r, const simhash_fp *f, uint64_t id)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->id[i] == id && r->fp[i].w[0] == f->w[0] && r->fp[i].w[1] == f->w[1])
			return (int)i;
	return -1;
}

static void ref_add(ref *r, const simhash_fp *f, uint64_t id)
{
	if (ref_find(r, f, id) >= 0)
		return;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->fp = realloc(r->fp, r->cap * sizeof *r->fp);
		r->id = realloc(r->id, r->cap * sizeof *r->id);
	}
	r->fp[r->n] = *f;
	r->id[r->n++] = id;
}

static int ref_del(ref *r, const simhash_fp *f, uint64_t id)
{
	int i = ref_find(r, f, id);
	if (i < 0)
		return 0;
	r->fp[i] = r->fp[r->n - 1];
	r->id[i] = r->id[r->n - 1];
	r->n--;
	return 1;
}

static int cmp_m(const void *x, const void *y)
{
	const simhash_match *a = x, *b = y;
	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void ref_query(const ref *r, const simhash_fp *q, unsigned k, simhash_matches *out)
{
	out->n = 0;
	for (size_t i = 0; i < r->n; i++) {
		unsigned d = simhash_hamming(&r->fp[i], q);
		if (d > k)
			continue;
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 64;
			out->v = realloc(out->v, out->cap * sizeof *out->v);
		}
		out->v[out->n++] = (simhash_match){r->id[i], d};
	}
	if (out->n > 1) /* v is NULL while nothing matched: qsort wants a pointer */
		qsort(out->v, out->n, sizeof *out->v, cmp_m);
}

static uint64_t seed;

static int same_matches(const simhash_matches *a, const simhash_matches *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].id != b->v[i].id || a->v[i].dist != b->v[i].dist)
			return 0;
	return 1;
}
static const char *what = "";

/* 1 if ix answers every query like the reference at k (and at a smaller k). */
static int same_answers(const simhash_index *ix, const ref *r, const simhash_fp *qs, size_t nq,
			unsigned k)
{
	simhash_matches a = {0}, b = {0};
	int ok = 1;
	for (size_t i = 0; i < nq && ok; i++) {
		unsigned kk = (i & 1) ? k : (unsigned)(rnd() % (k + 1));
		if (simhash_index_query(ix, &qs[i], kk, &a) != SIMHASH_OK) {
			ok = 0;
			break;
		}
		ref_query(r, &qs[i], kk, &b);
		if (!same_matches(&a, &b)) {
			fprintf(stderr, "seed %llu: %s k=%u query %zu: %zu matches, reference %zu\n",
				(unsigned long long)seed, what, kk, i, a.n, b.n);
			ok = 0;
		}
	}
	simhash_matches_free(&a);
	simhash_matches_free(&b);
	return ok;
}

/* n random pairs, then for each of nq queries planted pairs at 0..k+1. */
static void make_set(unsigned bits, enum dist d, size_t n, unsigned k, simhash_fp *qs, size_t nq,
		     ref *r)
{
	uint64_t id = 1;
	for (int c = 0; c < 8; c++)
		centres[c] = random_fp(bits, d == CLUSTERED ? UNIFORM : d);
	for (size_t i = 0; i < n; i++) {
		simhash_fp f = random_fp(bits, d);
		ref_add(r, &f, rnd() % 4 ? id++ : id); /* some ids repeat with another fp */
	}
	for (size_t i = 0; i < nq; i++) {
		qs[i] = random_fp(bits, d);
		for (unsigned dd = 0; dd <= k + 1; dd++) {
			simhash_fp f = qs[i];
			flip_bits(&f, dd);
			ref_add(r, &f, id++);
			if (dd == 0)
				ref_add(r, &f, id++); /* the same fp under two ids */
		}
	}
}

static simhash_index *build_from(const ref *r, unsigned bits, unsigned max_dist, int layout,
				 unsigned m)
{
	simhash_index *ix;
	unsigned w = bits / 64;
	uint64_t *fps = malloc(r->n * w * 8 + 8), *ids = malloc(r->n * 8 + 8);
	if (simhash_index_new(bits, max_dist, &ix))
		return NULL;
	if (simhash_index_set_layout(ix, layout, m))
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		memcpy(fps + i * w, r->fp[i].w, w * 8);
		ids[i] = r->id[i];
	}
	/* twice: the second build adds nothing */
	if (simhash_index_build(ix, fps, ids, r->n, 2) || simhash_index_build(ix, fps, ids, r->n / 2, 1))
		ix = NULL;
	free(fps);
	free(ids);
	return ix;
}

static void check_config(unsigned bits, enum dist d, unsigned max_dist, int layout, unsigned m,
			 size_t n)
{
	ref r = {0};
	simhash_fp qs[24];
	size_t nq = 24;
	char buf[160];
	simhash_index *ix;

	snprintf(buf, sizeof buf, "%u bits %s max_dist %u layout %d m %u", bits, dist_name[d], max_dist,
		 layout, m);
	what = buf;
	make_set(bits, d, n, max_dist, qs, nq, &r);
	ix = build_from(&r, bits, max_dist, layout, m);
	CHECK(ix != NULL);
	if (!ix)
		return;
	CHECK_EQ_U64(simhash_index_count(ix), r.n);
	CHECK(same_answers(ix, &r, qs, nq, max_dist));
	/* deletes: every third pair, plus absent ones; then inserts, some repeated */
	for (size_t i = 0; i < r.n; i += 3) {
		simhash_fp f = r.fp[i];
		uint64_t id = r.id[i];
		int found = -1;
		CHECK(simhash_index_delete(ix, &f, id, &found) == SIMHASH_OK && found == 1);
		CHECK(simhash_index_delete(ix, &f, id, &found) == SIMHASH_OK && found == 0);
		ref_del(&r, &f, id);
	}
	for (size_t i = 0; i < 200; i++) {
		simhash_fp f = i % 2 ? qs[i % nq] : random_fp(bits, d);
		flip_bits(&f, (unsigned)(rnd() % (max_dist + 2)));
		uint64_t id = 1000000 + i % 150;
		CHECK(simhash_index_insert(ix, &f, id) == SIMHASH_OK);
		CHECK(simhash_index_insert(ix, &f, id) == SIMHASH_OK);
		ref_add(&r, &f, id);
	}
	CHECK_EQ_U64(simhash_index_count(ix), r.n);
	CHECK(same_answers(ix, &r, qs, nq, max_dist));
	/* through a file */
	{
		char path[] = "/tmp/simhash-test-index-XXXXXX";
		int fd = mkstemp(path);
		simhash_index *ix2 = NULL;
		close(fd);
		CHECK(simhash_index_set_scheme(ix, "v1/test") == SIMHASH_OK);
		CHECK(simhash_index_save(ix, path, NULL) == SIMHASH_OK);
		CHECK(simhash_index_open(path, &ix2, NULL) == SIMHASH_OK);
		if (ix2) {
			CHECK_EQ_U64(simhash_index_count(ix2), r.n);
			CHECK_STR(simhash_index_scheme(ix2), "v1/test");
			CHECK(same_answers(ix2, &r, qs, nq, max_dist));
			/* and changed after open */
			simhash_fp f = qs[0];
			CHECK(simhash_index_insert(ix2, &f, 77) == SIMHASH_OK);
			ref_add(&r, &f, 77);
			CHECK(simhash_index_delete(ix2, &r.fp[0], r.id[0], NULL) == SIMHASH_OK);
			ref_del(&r, &r.fp[0], r.id[0]);
			CHECK(same_answers(ix2, &r, qs, nq, max_dist));
		}
		simhash_index_free(ix2);
		unlink(path);
	}
	simhash_index_free(ix);
	free(r.fp);
	free(r.id);
}

static void test_every_k_every_layout_matches_brute_force(void)
{
	for (unsigned bits = 64; bits <= 128; bits += 64) {
		unsigned kmax = bits == 64 ? SIMHASH_INDEX_MAX_DIST_64 : SIMHASH_INDEX_MAX_DIST_128;
		for (unsigned k = 0; k <= kmax; k++) {
			enum dist d = (enum dist)(k % 3);
			unsigned mlo = (k + 1 + 3) / 4; /* radius <= 3: cheap probing */
			unsigned mhi = sh_ix_max_chunks(bits, k);
			unsigned m;
			if (mlo < bits / 64)
				mlo = bits / 64;
			if (mlo > mhi)
				mlo = mhi;
			m = mlo + (unsigned)(rnd() % (mhi - mlo + 1));
			check_config(bits, d, k, -1, 0, 1500);
			check_config(bits, (enum dist)((k + 1) % 3), k, SIMHASH_LAYOUT_MIH, m, 1500);
			check_config(bits, (enum dist)((k + 2) % 3), k, SIMHASH_LAYOUT_MIH, mhi, 800);
			if (k % 4 == 0)
				check_config(bits, d, k, SIMHASH_LAYOUT_SCAN, 0, 800);
		}
	}
}

/* The positions within k of q among n rows (words each) or columns (w1 NULL:
 * 64 bits), counted bit by bit: the oracle of the kernels. */
static size_t ref_scan(const uint64_t *w0, const uint64_t *w1, size_t stride, size_t n,
		       const uint64_t *q, unsigned k, uint32_t *pos)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = 0;
		for (unsigned b = 0; b < 64; b++) {
			d += (unsigned)((w0[i * stride] ^ q[0]) >> b & 1);
			if (w1)
				d += (unsigned)((w1[i * stride] ^ q[1]) >> b & 1);
		}
		if (d <= k)
			pos[m++] = (uint32_t)i;
	}
	return m;
}

#define SAME(got, want_n, want, have) ((got) == (want_n) && memcmp((want), (have), (want_n) * 4) == 0)

/* Every kernel variant this CPU runs (scan.c's table: the index and the
 * PostgreSQL extension pick from it) gives the positions the oracle counts:
 * rows and columns, 64 and 128 bits, whole blocks and short tails. */
static void test_scan_kernels_agree(void)
{
	static uint64_t fps[2 * 1003], w0[1003], w1[1003];
	uint64_t q[2];
	uint32_t want[1003], got[1003];
	size_t nk, ran = 0;
	const sh_ix_kernels *kv = sh_ix_kernel_list(&nk);

	CHECK(nk >= 1 && strcmp(kv[0].name, "scalar") == 0 && kv[0].cpu == 0);
	CHECK(sh_ix_kernel_usable(sh_ix_kernel_best()));
	for (int round = 0; round < 50; round++) {
		q[0] = round % 2 ? biased_word() : rnd();
		q[1] = q[0] ^ (rnd() & rnd());
		/* half of the words near q's (about 8 bits off), so that every lane
		 * of every kernel sees matches at every k */
		for (size_t i = 0; i < 2 * 1003; i++)
			fps[i] = rnd() % 2 ? q[i % 2] ^ (rnd() & rnd() & rnd())
					   : round % 2 ? biased_word() : rnd();
		for (size_t i = 0; i < 1003; i++)
			w0[i] = fps[2 * i], w1[i] = fps[2 * i + 1];
		unsigned k = (unsigned)(rnd() % 40);
		size_t n = round % 3 == 2 ? (size_t)(rnd() % 40) : 1003 - (size_t)(rnd() % 8);
		size_t n64 = ref_scan(fps, NULL, 1, n, q, k, want), n128, nc64, nc128;
		uint32_t want128[1003], wantc64[1003], wantc128[1003];
		n128 = ref_scan(fps, fps + 1, 2, n / 2, q, k, want128);
		nc64 = ref_scan(w0, NULL, 1, n, q, k, wantc64);
		nc128 = ref_scan(w0, w1, 1, n, q, k, wantc128);
		for (size_t v = 0; v < nk; v++) {
			if (!sh_ix_kernel_usable(&kv[v]))
				continue;
			ran++;
			CHECK(SAME(kv[v].scan64(fps, n, q, k, got), n64, want, got));
			CHECK(SAME(kv[v].scan128(fps, n / 2, q, k, got), n128, want128, got));
			CHECK(SAME(kv[v].cols(w0, NULL, n, q, k, got), nc64, wantc64, got));
			CHECK(SAME(kv[v].cols(w0, w1, n, q, k, got), nc128, wantc128, got));
		}
		CHECK(SAME(sh_ix_scan_pick(1)(fps, n, q, k, got), n64, want, got));
		CHECK(SAME(sh_ix_scan_pick(2)(fps, n / 2, q, k, got), n128, want128, got));
	}
	CHECK(ran >= 50);
}

static void test_bad_arguments_are_refused(void)
{
	simhash_index *ix = NULL;
	simhash_matches m = {0};
	simhash_fp q = {{1, 0}, 64}, q128 = {{1, 2}, 128};
	CHECK(simhash_index_new(32, 3, &ix) == SIMHASH_EINVAL);
	CHECK(simhash_index_new(64, 17, &ix) == SIMHASH_EINVAL);
	CHECK(simhash_index_new(128, 33, &ix) == SIMHASH_EINVAL);
	CHECK(simhash_index_new(64, 3, &ix) == SIMHASH_OK);
	CHECK(simhash_index_query(ix, &q, 4, &m) == SIMHASH_EINVAL);
	/* a width mismatch is SIMHASH_ESCHEME everywhere (simhash.h, convention 4) */
	CHECK(simhash_index_query(ix, &q128, 3, &m) == SIMHASH_ESCHEME);
	CHECK(simhash_index_query_batch(ix, &q128, 1, 3, 1, &m) == SIMHASH_ESCHEME);
	CHECK(simhash_index_insert(ix, &q128, 1) == SIMHASH_ESCHEME);
	CHECK(simhash_index_delete(ix, &q128, 1, NULL) == SIMHASH_ESCHEME);
	CHECK(simhash_index_query(ix, &q, 3, &m) == SIMHASH_OK && m.n == 0);
	CHECK_STR(simhash_index_scheme(ix), "");
	simhash_index_free(ix);
	simhash_index_free(NULL);
	simhash_matches_free(&m);
}

static void test_bad_files_are_refused(void)
{
	char path[] = "/tmp/simhash-test-index-XXXXXX";
	int fd = mkstemp(path);
	simhash_index *ix = NULL, *ix2 = NULL;
	uint64_t fps[100], ids[100];
	simhash_error why;
	FILE *f;
	long size;
	unsigned char *buf;

	close(fd);
	for (int i = 0; i < 100; i++)
		fps[i] = rnd(), ids[i] = (uint64_t)i;
	CHECK(simhash_index_new(64, 3, &ix) == SIMHASH_OK);
	CHECK(simhash_index_build(ix, fps, ids, 100, 1) == SIMHASH_OK);
	CHECK(simhash_index_save(ix, path, NULL) == SIMHASH_OK);
	simhash_index_free(ix);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size);
	CHECK(fread(buf, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	/* truncated */
	f = fopen(path, "wb");
	fwrite(buf, 1, (size_t)size - 8, f);
	fclose(f);
	CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_ECORRUPT);
	CHECK(strstr(why.msg, "truncated") != NULL);
	/* a flipped bit in the body: open (header only) maps it, verify
	 * refuses it; the intact file verifies */
	f = fopen(path, "wb");
	fwrite(buf, 1, (size_t)size, f);
	fclose(f);
	CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_OK);
	CHECK(ix2 && simhash_index_verify(ix2, &why) == SIMHASH_OK);
	simhash_index_free(ix2);
	for (long off = size - 1; off >= size / 2; off -= size / 7) {
		buf[off] ^= 0x10;
		f = fopen(path, "wb");
		fwrite(buf, 1, (size_t)size, f);
		fclose(f);
		ix2 = NULL;
		CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_OK);
		CHECK(ix2 && simhash_index_verify(ix2, &why) == SIMHASH_ECORRUPT);
		CHECK(strstr(why.msg, "body checksum") != NULL);
		simhash_index_free(ix2);
		buf[off] ^= 0x10;
	}
	ix2 = NULL;
	/* newer version */
	buf[8] = 3;
	f = fopen(path, "wb");
	fwrite(buf, 1, (size_t)size, f);
	fclose(f);
	CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_EVERSION);
	CHECK(strstr(why.msg, "newer") != NULL);
	buf[8] = 2;
	/* a damaged header */
	buf[24] ^= 1;
	f = fopen(path, "wb");
	fwrite(buf, 1, (size_t)size, f);
	fclose(f);
	CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_ECORRUPT);
	CHECK(strstr(why.msg, "checksum") != NULL);
	/* wrong magic */
	buf[24] ^= 1;
	buf[0] = 'X';
	f = fopen(path, "wb");
	fwrite(buf, 1, (size_t)size, f);
	fclose(f);
	CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_ECORRUPT);
	CHECK(strstr(why.msg, "magic") != NULL);
	CHECK(ix2 == NULL);
	free(buf);
	unlink(path);
	CHECK(simhash_index_open(path, &ix2, &why) == SIMHASH_EIO);
}

static void test_batch_equals_single_queries(void)
{
	simhash_index *ix;
	size_t n = 5000, nq = 300;
	uint64_t *fps = malloc(n * 8), *ids = malloc(n * 8);
	simhash_fp *qs = malloc(nq * sizeof *qs);
	simhash_matches *outs = calloc(nq, sizeof *outs), one = {0};

	for (size_t i = 0; i < n; i++)
		fps[i] = biased_word(), ids[i] = i;
	for (size_t i = 0; i < nq; i++) {
		qs[i] = (simhash_fp){{fps[i * 7 % n], 0}, 64};
		flip_bits(&qs[i], (unsigned)(i % 6));
	}
	CHECK(simhash_index_new(64, 6, &ix) == SIMHASH_OK);
	CHECK(simhash_index_build(ix, fps, ids, n, 2) == SIMHASH_OK);
	CHECK(simhash_index_query_batch(ix, qs, nq, 6, 3, outs) == SIMHASH_OK);
	for (size_t i = 0; i < nq; i++) {
		CHECK(simhash_index_query(ix, &qs[i], 6, &one) == SIMHASH_OK);
		CHECK(same_matches(&one, &outs[i]));
		CHECK(one.n >= 1);
		simhash_matches_free(&outs[i]);
	}
	simhash_matches_free(&one);
	simhash_index_free(ix);
	free(fps), free(ids), free(qs), free(outs);
}

/* More matches than one batch of hits (mih.c drains them 256 at a time):
 * 700 copies of one fingerprint under different ids and 300 near it. */
static void test_queries_with_many_matches_find_them_all(void)
{
	static const unsigned ms[] = {0, 3, 4};
	char buf[96];
	for (unsigned bits = 64; bits <= 128; bits += 64) {
		ref r = {0};
		simhash_fp qs[4], c = random_fp(bits, BIASED);
		for (uint64_t id = 1; id <= 700; id++)
			ref_add(&r, &c, id);
		for (uint64_t id = 701; id <= 1000; id++) {
			simhash_fp f = c;
			flip_bits(&f, 1 + (unsigned)(id % 3));
			ref_add(&r, &f, id);
		}
		for (uint64_t id = 1001; id <= 1500; id++) {
			simhash_fp f = random_fp(bits, BIASED);
			ref_add(&r, &f, id);
		}
		for (int i = 0; i < 4; i++) {
			qs[i] = c;
			flip_bits(&qs[i], (unsigned)i);
		}
		for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
			simhash_index *ix = build_from(&r, bits, 10, ms[i] ? SIMHASH_LAYOUT_MIH : -1, ms[i]);
			simhash_matches m = {0};
			snprintf(buf, sizeof buf, "%u bits, 700 copies, m %u", bits, ms[i]);
			what = buf;
			CHECK(ix != NULL);
			if (!ix)
				continue;
			CHECK(simhash_index_query(ix, &c, 3, &m) == SIMHASH_OK && m.n >= 1000);
			CHECK(same_answers(ix, &r, qs, 4, 10));
			simhash_matches_free(&m);
			simhash_index_free(ix);
		}
		free(r.fp);
		free(r.id);
	}
}

/* Reads a whole file; *len its size. */
static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0) {
		rewind(f);
		buf = malloc((size_t)size + 1);
		if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)size;
	}
	fclose(f);
	return buf;
}

/* The tables are built by several threads at once (mih.c: a counting sort
 * split by rows, then slots sorted on the chunk's low bits): the saved bytes
 * must not depend on their number. 200,000 rows (past the 65,536 rows a
 * thread), uniform, biased and clustered, chunks narrower and wider than
 * the directory (m = 1 at 64 bits: one 64-bit chunk); then the 8-thread
 * build answers as brute force does. */
static void test_thread_count_never_changes_the_file(void)
{
	static const unsigned threads[] = {1, 2, 3, 8};
	static const struct { unsigned bits, k, m; } cf[] = {
		{64, 3, 0}, {64, 0, 1}, {64, 6, 5}, {128, 6, 0}, {128, 1, 2},
	};
	char path[] = "/tmp/simhash-test-threads-XXXXXX";
	char buf[128];
	int fd = mkstemp(path);
	size_t n = 200000;

	close(fd);
	for (size_t c = 0; c < sizeof cf / sizeof cf[0]; c++) {
		for (int d = UNIFORM; d <= CLUSTERED; d++) {
			unsigned w = cf[c].bits / 64;
			uint64_t *fps = malloc(n * w * 8), *ids = malloc(n * 8);
			unsigned char *first = NULL;
			size_t first_len = 0;
			ref r = {0};
			simhash_fp qs[50];

			for (size_t i = 0; i < n; i++) {
				simhash_fp f = random_fp(cf[c].bits, (enum dist)d);
				memcpy(fps + i * w, f.w, w * 8);
				ids[i] = rnd() % (n / 2); /* repeated ids too */
			}
			for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
				simhash_index *ix;
				unsigned char *bytes;
				size_t len = 0;
				snprintf(buf, sizeof buf, "%s %u bits k %u m %u threads %u", dist_name[d],
					 cf[c].bits, cf[c].k, cf[c].m, threads[t]);
				what = buf;
				CHECK(simhash_index_new(cf[c].bits, cf[c].k, &ix) == SIMHASH_OK);
				CHECK(simhash_index_set_layout(ix, SIMHASH_LAYOUT_MIH, cf[c].m) == SIMHASH_OK);
				CHECK(simhash_index_build(ix, fps, ids, n, threads[t]) == SIMHASH_OK);
				CHECK(simhash_index_save(ix, path, NULL) == SIMHASH_OK);
				simhash_index_free(ix);
				bytes = slurp(path, &len);
				CHECK(bytes != NULL);
				if (!first) {
					first = bytes, first_len = len;
					continue;
				}
				CHECK(len == first_len && memcmp(bytes, first, len) == 0);
				free(bytes);
			}
			/* straight to the file, one table at a time: the same bytes, and
			 * the caller's arrays left sorted and unique */
			for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
				simhash_index *ix;
				uint64_t *f2 = malloc(n * w * 8), *i2 = malloc(n * 8);
				unsigned char *bytes;
				size_t len = 0;
				memcpy(f2, fps, n * w * 8), memcpy(i2, ids, n * 8);
				snprintf(buf, sizeof buf, "%s %u bits k %u m %u build_file threads %u",
					 dist_name[d], cf[c].bits, cf[c].k, cf[c].m, threads[t]);
				what = buf;
				CHECK(simhash_index_new(cf[c].bits, cf[c].k, &ix) == SIMHASH_OK);
				CHECK(simhash_index_set_layout(ix, SIMHASH_LAYOUT_MIH, cf[c].m) == SIMHASH_OK);
				CHECK(simhash_index_build_file(ix, f2, i2, n, threads[t], path, NULL) == SIMHASH_OK);
				CHECK(simhash_index_count(ix) == 0);
				simhash_index_free(ix);
				bytes = slurp(path, &len);
				CHECK(bytes != NULL && len == first_len && memcmp(bytes, first, len) == 0);
				if (t == 0 && w == 1) {
					int sorted = 1; /* past n / 2: repeated ids make fewer rows */
					for (size_t i = 1; i < n / 2; i++)
						sorted &= f2[i - 1] < f2[i] || (f2[i - 1] == f2[i] && i2[i - 1] < i2[i]);
					CHECK(sorted);
				}
				free(bytes), free(f2), free(i2);
			}
			/* and the answers of the many-thread build are brute force's */
			r.fp = malloc(n * sizeof *r.fp), r.id = malloc(n * sizeof *r.id);
			for (size_t i = 0; i < n; i++) { /* unique ids: no pair twice */
				r.fp[i] = (simhash_fp){{fps[i * w], w == 2 ? fps[i * w + 1] : 0}, cf[c].bits};
				r.id[i] = ids[i] = i;
			}
			r.n = r.cap = n;
			for (int i = 0; i < 50; i++) {
				qs[i] = r.fp[rnd() % n];
				flip_bits(&qs[i], (unsigned)(rnd() % (cf[c].k + 1)));
			}
			{
				simhash_index *ix;
				CHECK(simhash_index_new(cf[c].bits, cf[c].k, &ix) == SIMHASH_OK);
				CHECK(simhash_index_set_layout(ix, SIMHASH_LAYOUT_MIH, cf[c].m) == SIMHASH_OK);
				CHECK(simhash_index_build(ix, fps, ids, n, 8) == SIMHASH_OK);
				CHECK(same_answers(ix, &r, qs, 50, cf[c].k));
				simhash_index_free(ix);
			}
			free(r.fp), free(r.id);
			free(first), free(fps), free(ids);
		}
	}
	unlink(path);
}

static int cmp_pair(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* sh_ix_sort_unique at 64 bits (mih.c: a scatter on the top bits, then each
 * bucket sorted on its own, on several threads) against qsort and a unique
 * pass: 300,000 rows drawn from few fingerprints and few ids (long runs of
 * one fingerprint, repeated pairs), from fingerprints that all share their
 * top bits (one bucket holds every row), and from distinct random ones. */
static void test_sort_unique_equals_qsort(void)
{
	static const unsigned threads[] = {1, 2, 3, 8};
	const size_t n = 300000;
	uint64_t *fps = malloc(n * 8), *ids = malloc(n * 8), *pairs = malloc(n * 16);
	uint64_t *f2 = malloc(n * 8), *i2 = malloc(n * 8);
	char buf[64];

	CHECK(fps && ids && pairs && f2 && i2);
	for (int shape = 0; shape < 3 && fps && ids && pairs && f2 && i2; shape++) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			fps[i] = shape == 0 ? rnd() % 5000 * 0x9e3779b97f4a7c15ull
			       : shape == 1 ? (rnd() >> 11) | 0xabc0000000000000ull : rnd();
			ids[i] = shape == 2 ? rnd() : rnd() % 1000;
			pairs[2 * i] = fps[i], pairs[2 * i + 1] = ids[i];
		}
		qsort(pairs, n, 16, cmp_pair);
		for (size_t i = 0; i < n; i++)
			if (i == 0 || cmp_pair(pairs + 2 * i, pairs + 2 * (m - 1)) != 0) {
				pairs[2 * m] = pairs[2 * i], pairs[2 * m + 1] = pairs[2 * i + 1];
				m++;
			}
		for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
			size_t got, same = 1;
			snprintf(buf, sizeof buf, "shape %d threads %u", shape, threads[t]);
			what = buf;
			memcpy(f2, fps, n * 8), memcpy(i2, ids, n * 8);
			got = sh_ix_sort_unique(f2, i2, n, 1, threads[t]);
			CHECK(got == m);
			for (size_t i = 0; i < m && got == m; i++)
				same &= f2[i] == pairs[2 * i] && i2[i] == pairs[2 * i + 1];
			CHECK(same);
		}
	}
	free(fps), free(ids), free(pairs), free(f2), free(i2);
}

/* Structs that grow (simhash.h, convention 3): the stats and the plan are
 * written only as far as the caller's size says, never past it, and a size
 * below the first release's struct is refused. */
static void test_stats_and_plan_follow_the_callers_size(void)
{
	struct {
		simhash_index_plan p;
		unsigned char tail[8];
	} big;
	simhash_index_stats st;
	simhash_index_plan p;
	simhash_index *ix = NULL;
	uint64_t fps[3] = { 1, 2, 3 }, ids[3] = { 1, 2, 3 };

	CHECK(simhash_index_new(64, 3, &ix) == SIMHASH_OK);
	if (!ix)
		return;
	CHECK(simhash_index_build(ix, fps, ids, 3, 1) == SIMHASH_OK);
	simhash_index_stats_init(&st);
	CHECK(st.size == sizeof st && st.count == 0);
	CHECK(simhash_index_get_stats(ix, &st) == SIMHASH_OK);
	CHECK(st.size == sizeof st && st.count == 3 && st.segments >= 1);
	simhash_index_plan_init(&p);
	CHECK(simhash_index_get_plan(ix, &p) == SIMHASH_OK);
	CHECK(p.size == sizeof p && p.bits == 64 && p.k == 3 && p.n == 3);
	memset(&big, 0xab, sizeof big);
	big.p.size = sizeof big;
	CHECK(simhash_index_plan_make(64, 3, 1000, 0.5, 0, &big.p) == SIMHASH_OK);
	CHECK(big.p.size == sizeof big && big.p.n == 1000 && big.tail[0] == 0xab &&
	      big.tail[7] == 0xab);
	p.size = sizeof p - 1;
	CHECK(simhash_index_get_plan(ix, &p) == SIMHASH_EINVAL);
	CHECK(simhash_index_plan_make(64, 3, 1000, 0.5, 0, &p) == SIMHASH_EINVAL);
	st.size = 0;
	CHECK(simhash_index_get_stats(ix, &st) == SIMHASH_EINVAL);
	simhash_index_free(ix);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST(test_scan_kernels_agree),
		TEST(test_bad_arguments_are_refused),
		TEST(test_bad_files_are_refused),
		TEST(test_batch_equals_single_queries),
		TEST(test_queries_with_many_matches_find_them_all),
		TEST(test_every_k_every_layout_matches_brute_force),
		TEST(test_thread_count_never_changes_the_file),
		TEST(test_sort_unique_equals_qsort),
		TEST(test_stats_and_plan_follow_the_callers_size),
	};
	seed = 0x5eed1d3e;
	rng_state = seed;
	return test_run("index", cases, sizeof cases / sizeof cases[0]);
}
