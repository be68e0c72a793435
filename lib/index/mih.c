/* mih.c - multi-index hashing over sorted chunk tables (Norouzi, Punjani and
 * Fleet, "Fast search in Hamming space with multi-index hashing", CVPR 2012).
 *
 * The fingerprint's bits are split into m disjoint chunks of nearly equal
 * width (chunk t covers bits [start_t, start_t + width_t)); table t holds a
 * copy of every fingerprint of the segment sorted by its chunk t (then by
 * row), with a directory on the chunk's top dir_bits bits.
 *
 * Why every match is found: write k = r*m + a (0 <= a < m). If dist(x, q) <= k
 * then either one of the chunks 0..a differs in at most r bits, or one of the
 * chunks a+1..m-1 differs in at most r-1 bits: otherwise the distance would be
 * at least (a+1)(r+1) + (m-a-1)r = k + 1. A query therefore probes table t with
 * every chunk value within radius r_t = r (t <= a) or r - 1 (t > a) of q's chunk
 * and checks the full distance of each fingerprint it finds.
 *
 * More generally any radii r_t (-1: table not probed) with sum (r_t + 1) >=
 * k + 1 find every match; they are chosen per query from the measured bit
 * bias (assign_radii), and a table may read its ball as contiguous ranges
 * of its low chunk bits, keeping only what lies inside the ball.
 *
 * Why each match is reported once: table t reports only fingerprints whose
 * chunk t is within r_t of q's, and skips one when a table t' probed before t
 * would have found it, that is when its chunk t' is within r_t' of q's; the
 * first table that can find it reports it.
 *
 * Only min(m, max_dist + 1) tables are built: for k < m only tables 0..k are
 * probed (r = 0, a = k). This file sorts and builds the tables; the queries
 * that probe them are in mih_query.c, the radius rules in radius.c.
 * Workload: millions of fingerprints, queries with a few hundred candidates. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ix.h"

#define HUGE_PAGE ((size_t)1 << 21)

void *sh_ix_alloc_big(size_t len, int zero)
{
	void *p;

	if (len < 2 * HUGE_PAGE)
		return zero ? calloc(1, len) : malloc(len);
	len = (len + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, len))
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE); /* advice only: small pages work too */
#endif
	if (zero)
		memset(p, 0, len);
	return p;
}

simhash_err sh_ix_matches_push(simhash_matches *m, uint64_t id, unsigned dist)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		simhash_match *v = realloc(m->v, cap * sizeof *v);
		if (!v)
			return SIMHASH_ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n].id = id;
	m->v[m->n].dist = dist;
	m->n++;
	return SIMHASH_OK;
}

/* ---- sorting */

typedef struct kr {
	uint64_t key;
	uint64_t row;
} kr;

/* Stable LSD radix sort of a[0..n) by the low `keybits` bits of key (the bits
 * above are carried, not sorted on), 11 bits a pass; passes where every key
 * has the same digit are skipped. The result is in a or tmp: returns which. */
static kr *radix_sort(kr *a, kr *tmp, size_t n, unsigned keybits)
{
	size_t cnt[2048];

	for (unsigned shift = 0; shift < keybits; shift += 11) {
		/* the last digit may be narrower: bits above keybits are not the key */
		uint64_t dm = keybits - shift >= 11 ? 2047 : ((uint64_t)1 << (keybits - shift)) - 1;
		size_t sum = 0;
		int skip = 0;

		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(a[i].key >> shift) & dm]++;
		for (size_t d = 0; d < 2048; d++) {
			size_t c = cnt[d];
			if (c == n)
				skip = 1;
			cnt[d] = sum;
			sum += c;
		}
		if (skip)
			continue;
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(a[i].key >> shift) & dm]++] = a[i];
		kr *t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_kr_row(const void *x, const void *y)
{
	uint64_t a = ((const kr *)x)->row, b = ((const kr *)y)->row;
	return a < b ? -1 : a > b;
}

/* 64 bits, on `threads` threads: one pass scatters the rows by the top
 * MSD_BITS of the fingerprint into buckets (thread j its share of the input,
 * placed after threads < j in every bucket), then each bucket is sorted on
 * the remaining bits in a scratch buffer of its own size (a few thousand
 * rows at 10 million: in cache), its runs of one fingerprint sorted by id
 * and repeated pairs dropped, and the buckets are copied back into fps and
 * ids at their place. The result is the (fp, id)-sorted set of distinct
 * pairs, so it does not depend on the threads. Against a whole-array LSD
 * sort: two passes over memory instead of a dozen, and one 16-byte row of
 * scratch per row instead of two. */
#define MSD_BITS 11
#define MSD_MAX_THREADS 16

typedef struct msd {
	uint64_t *fps, *ids;
	kr *a;
	size_t n;
	unsigned n_threads;
	size_t cnt[MSD_MAX_THREADS][1 << MSD_BITS]; /* counts, then cursors */
	size_t start[(1 << MSD_BITS) + 1];          /* bucket d is a[start[d], start[d + 1]) */
	size_t kept[1 << MSD_BITS];                 /* distinct pairs in bucket d */
	size_t out[(1 << MSD_BITS) + 1];            /* where they go in fps and ids */
	unsigned first[MSD_MAX_THREADS + 1];        /* thread j sorts buckets [first[j], first[j + 1]) */
} msd;

typedef struct msd_job {
	msd *m;
	unsigned j;
	int phase; /* 0 count, 1 scatter, 2 sort buckets, 3 copy back */
	simhash_err err;
} msd_job;

/* Sorts bucket a[0, n) (one top digit) by fp then id and drops repeated
 * pairs in place; returns how many are kept. tmp holds n rows. */
static size_t msd_bucket(kr *a, kr *tmp, size_t n)
{
	kr *s = radix_sort(a, tmp, n, 64 - MSD_BITS);
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && s[j].key == s[i].key)
			j++;
		if (j - i > 1)
			qsort(s + i, j - i, sizeof *s, cmp_kr_row);
		for (size_t t = i; t < j; t++)
			if (t == i || s[t].row != s[t - 1].row)
				a[out++] = s[t]; /* out <= t: s[t] is read first */
		i = j;
	}
	return out;
}

static simhash_err msd_sort_buckets(msd *m, unsigned j)
{
	size_t cap = 0;
	kr *tmp = NULL;

	for (unsigned d = m->first[j]; d < m->first[j + 1]; d++) {
		size_t len = m->start[d + 1] - m->start[d];
		if (len > cap) {
			free(tmp);
			cap = len;
			tmp = malloc(cap * sizeof *tmp);
			if (!tmp)
				return SIMHASH_ENOMEM;
		}
		m->kept[d] = len < 2 ? len : msd_bucket(m->a + m->start[d], tmp, len);
	}
	free(tmp);
	return SIMHASH_OK;
}

static void *msd_worker(void *arg)
{
	msd_job *job = arg;
	msd *m = job->m;
	size_t lo = m->n * job->j / m->n_threads, hi = m->n * (job->j + 1) / m->n_threads;
	size_t *cnt = m->cnt[job->j];

	if (job->phase == 0) {
		for (size_t i = lo; i < hi; i++)
			cnt[m->fps[i] >> (64 - MSD_BITS)]++;
	} else if (job->phase == 1) {
		for (size_t i = lo; i < hi; i++)
			m->a[cnt[m->fps[i] >> (64 - MSD_BITS)]++] = (kr){m->fps[i], m->ids[i]};
	} else if (job->phase == 2) {
		job->err = msd_sort_buckets(m, job->j);
	} else {
		for (unsigned d = m->first[job->j]; d < m->first[job->j + 1]; d++) {
			const kr *b = m->a + m->start[d];
			for (size_t i = 0; i < m->kept[d]; i++) {
				m->fps[m->out[d] + i] = b[i].key;
				m->ids[m->out[d] + i] = b[i].row;
			}
		}
	}
	return NULL;
}

/* Runs one phase on every thread of m (the caller's is thread 0). */
static simhash_err msd_phase(msd *m, int phase)
{
	msd_job jobs[MSD_MAX_THREADS];
	pthread_t th[MSD_MAX_THREADS];
	int started[MSD_MAX_THREADS] = {0};
	simhash_err err = SIMHASH_OK;

	for (unsigned j = 0; j < m->n_threads; j++) {
		jobs[j] = (msd_job){m, j, phase, SIMHASH_OK};
		if (j > 0 && pthread_create(&th[j], NULL, msd_worker, &jobs[j]) == 0)
			started[j] = 1;
	}
	msd_worker(&jobs[0]);
	for (unsigned j = 1; j < m->n_threads; j++) {
		if (started[j])
			pthread_join(th[j], NULL);
		else
			msd_worker(&jobs[j]); /* no thread: do its share here */
		if (jobs[j].err)
			err = jobs[j].err;
	}
	return jobs[0].err ? jobs[0].err : err;
}

static size_t sort_unique64(uint64_t *fps, uint64_t *ids, size_t n, unsigned threads, void *buf)
{
	const size_t nd = (size_t)1 << MSD_BITS;
	msd *m = calloc(1, sizeof *m);
	size_t pos = 0, out = SIZE_MAX;

	if (!m)
		return SIZE_MAX;
	m->fps = fps, m->ids = ids, m->n = n;
	m->n_threads = threads < 1 ? 1 : threads > MSD_MAX_THREADS ? MSD_MAX_THREADS : threads;
	/* a thread per 65536 rows at least: fewer are not worth starting one */
	if (m->n_threads > 1 && n / m->n_threads < ((size_t)1 << 16))
		m->n_threads = n >> 16 ? (unsigned)(n >> 16) : 1;
	m->a = buf ? buf : sh_ix_alloc_big(n * sizeof *m->a, 0);
	if (!m->a)
		goto out_free;
	msd_phase(m, 0);
	for (size_t d = 0; d < nd; d++) {
		m->start[d] = pos;
		for (unsigned j = 0; j < m->n_threads; j++) {
			size_t c = m->cnt[j][d];
			m->cnt[j][d] = pos;
			pos += c;
		}
	}
	m->start[nd] = n;
	msd_phase(m, 1);
	/* thread j sorts the buckets that start in its share of the rows */
	m->first[0] = 0;
	for (unsigned j = 1, d = 0; j < m->n_threads; j++) {
		while (d < nd && m->start[d] < n * j / m->n_threads)
			d++;
		m->first[j] = (unsigned)d;
	}
	m->first[m->n_threads] = (unsigned)nd;
	if (msd_phase(m, 2))
		goto out_free;
	m->out[0] = 0;
	for (size_t d = 0; d < nd; d++)
		m->out[d + 1] = m->out[d] + m->kept[d];
	msd_phase(m, 3);
	out = m->out[nd];
out_free:
	if (m->a != buf)
		free(m->a);
	free(m);
	return out;
}

size_t sh_ix_sort_unique(uint64_t *fps, uint64_t *ids, size_t n, unsigned words, unsigned threads)
{
	return sh_ix_sort_unique_buf(fps, ids, n, words, threads, NULL);
}

size_t sh_ix_sort_unique_buf(uint64_t *fps, uint64_t *ids, size_t n, unsigned words, unsigned threads,
			     void *buf)
{
	kr *a, *b, *s, *o;
	uint64_t *f2, *i2;
	size_t out = 0;

	if (n < 2)
		return n;
	if (words == 1)
		return sort_unique64(fps, ids, n, threads, buf);
	a = malloc(n * sizeof *a);
	b = malloc(n * sizeof *b);
	f2 = malloc(n * words * sizeof *f2);
	i2 = malloc(n * sizeof *i2);
	if (!a || !b || !f2 || !i2) {
		free(a), free(b), free(f2), free(i2);
		return SIZE_MAX;
	}
	/* by w[0], then stably by w[1]: the order of the hex form */
	for (size_t i = 0; i < n; i++)
		a[i] = (kr){fps[i * 2], i};
	s = radix_sort(a, b, n, 64);
	o = s == a ? b : a;
	for (size_t i = 0; i < n; i++)
		s[i].key = fps[s[i].row * 2 + 1];
	s = radix_sort(s, o, n, 64);
	for (size_t i = 0; i < n; i++) {
		memcpy(f2 + i * 2, fps + s[i].row * 2, 2 * sizeof *fps);
		i2[i] = ids[s[i].row];
	}
	/* runs of one fingerprint: sort their ids, drop repeated pairs */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && memcmp(f2 + j * words, f2 + i * words, words * 8) == 0)
			j++;
		if (j - i > 1)
			qsort(i2 + i, j - i, sizeof *i2, cmp_u64);
		for (size_t t = i; t < j; t++) {
			if (t > i && i2[t] == i2[t - 1])
				continue;
			memcpy(fps + out * words, f2 + t * words, words * 8);
			ids[out++] = i2[t];
		}
		i = j;
	}
	free(a), free(b), free(f2), free(i2);
	return out;
}

/* ---- building tables
 *
 * A table is a stable counting sort of the segment's rows (already in (fp, id)
 * order) on the top dir_bits of its chunk: the counts are the directory. When
 * the chunk is wider than the directory, each slot is then sorted stably on
 * the chunk's low bits. That equals a stable sort on the whole chunk, and the
 * bytes do not depend on the number of threads: thread j counts and scatters
 * rows [j n / T, (j + 1) n / T), and in every slot its rows land after those
 * of the threads before it. Memory: the table itself plus one count array of
 * 2^dir_bits per thread; no copy of the rows. */

#define FILL_MAX_THREADS 64

#define GROUP_BITS 8 /* two-level scatter: 2^8 groups of slots */

typedef struct fill {
	const sh_ix_seg *s;
	const sh_ix_table *tb;
	unsigned words, n_threads;
	uint64_t *fps;
	uint32_t *rows, *dir;
	uint32_t *cnt[FILL_MAX_THREADS]; /* per thread: counts, then cursors */
	/* two-level scatter (sfps != NULL): rows grouped by their slot's top
	 * GROUP_BITS in sfps and srows first; gcur[j][g] is thread j's cursor
	 * in group g, and cnt[0] the cursor of every slot in the second level */
	uint64_t *sfps;
	uint32_t *srows;
	unsigned lo_bits; /* slot bits below the group's */
	uint32_t gcur[FILL_MAX_THREADS][1 << GROUP_BITS];
} fill;

typedef struct fill_job {
	fill *f;
	unsigned j;
	int phase; /* 0 count, 1 scatter, 2 sort slots, 3 scatter to groups, 4 groups to slots */
	simhash_err err;
} fill_job;

static inline uint64_t slot_of(const fill *f, size_t i)
{
	const sh_ix_table *tb = f->tb;
	return sh_ix_chunk(f->s->fps + i * f->words, tb->start, tb->width) >> (tb->width - tb->dir_bits);
}

static void fill_count(fill *f, unsigned j)
{
	size_t n = f->s->n, lo = n * j / f->n_threads, hi = n * (j + 1) / f->n_threads;
	uint32_t *cnt = f->cnt[j];

	for (size_t i = lo; i < hi; i++)
		cnt[slot_of(f, i)]++;
}

static void fill_scatter(fill *f, unsigned j)
{
	size_t n = f->s->n, lo = n * j / f->n_threads, hi = n * (j + 1) / f->n_threads;
	uint32_t *cur = f->cnt[j];
	unsigned words = f->words;

	for (size_t i = lo; i < hi; i++) {
		uint32_t pos = cur[slot_of(f, i)]++;
		if (words == 1)
			f->fps[pos] = f->s->fps[i];
		else
			memcpy(f->fps + (size_t)pos * 2, f->s->fps + i * 2, 16);
		f->rows[pos] = (uint32_t)i;
	}
}

/* First level: thread j's rows into their groups, in row order. */
static void fill_group(fill *f, unsigned j)
{
	size_t n = f->s->n, lo = n * j / f->n_threads, hi = n * (j + 1) / f->n_threads;
	uint32_t *cur = f->gcur[j];
	unsigned words = f->words, lo_bits = f->lo_bits;

	for (size_t i = lo; i < hi; i++) {
		uint32_t pos = cur[slot_of(f, i) >> lo_bits]++;
		if (words == 1)
			f->sfps[pos] = f->s->fps[i];
		else
			memcpy(f->sfps + (size_t)pos * 2, f->s->fps + i * 2, 16);
		f->srows[pos] = (uint32_t)i;
	}
}

/* Second level: thread j's groups, each read in order into its slots. A
 * group's slots are a range of the table that stays in cache, and belong
 * to this thread alone. */
static void fill_ungroup(fill *f, unsigned j)
{
	const sh_ix_table *tb = f->tb;
	size_t ng = (size_t)1 << GROUP_BITS;
	size_t g0 = ng * j / f->n_threads, g1 = ng * (j + 1) / f->n_threads;
	uint32_t *cur = f->cnt[0];
	unsigned words = f->words, shift = tb->width - tb->dir_bits;

	for (size_t p = f->dir[g0 << f->lo_bits]; p < f->dir[g1 << f->lo_bits]; p++) {
		const uint64_t *fp = f->sfps + p * words;
		uint32_t pos = cur[sh_ix_chunk(fp, tb->start, tb->width) >> shift]++;
		if (words == 1)
			f->fps[pos] = fp[0];
		else
			memcpy(f->fps + (size_t)pos * 2, fp, 16);
		f->rows[pos] = f->srows[p];
	}
}

/* Sorts entries [a, b) of the table stably by the chunk's low bits (the slot
 * fixes the top ones); tmp holds 2 * (b - a) entries when b - a > 32. */
static void sort_slot(fill *f, size_t a, size_t b, kr *tmp)
{
	const sh_ix_table *tb = f->tb;
	unsigned words = f->words, low = tb->width - tb->dir_bits;
	uint64_t lm = ((uint64_t)1 << low) - 1;
	uint64_t fp[2];
	kr *r;

#define LOW_AT(i) (sh_ix_chunk(f->fps + (i) * words, tb->start, tb->width) & lm)
	if (b - a <= 32) { /* insertion sort: stable, and slots are small */
		for (size_t i = a + 1; i < b; i++) {
			uint64_t key = LOW_AT(i);
			uint32_t row = f->rows[i];
			size_t k = i;
			memcpy(fp, f->fps + i * words, words * 8);
			for (; k > a && LOW_AT(k - 1) > key; k--) {
				memcpy(f->fps + k * words, f->fps + (k - 1) * words, words * 8);
				f->rows[k] = f->rows[k - 1];
			}
			memcpy(f->fps + k * words, fp, words * 8);
			f->rows[k] = row;
		}
		return;
	}
	for (size_t i = a; i < b; i++)
		tmp[i - a] = (kr){LOW_AT(i), i};
#undef LOW_AT
	r = radix_sort(tmp, tmp + (b - a), b - a, low);
	/* the rows come back in place through the second half of tmp */
	{
		kr *o = r == tmp ? tmp + (b - a) : tmp;
		for (size_t i = 0; i < b - a; i++)
			o[i] = (kr){f->fps[r[i].row * words], f->rows[r[i].row]};
		if (words == 2)
			for (size_t i = 0; i < b - a; i++)
				r[i].key = f->fps[r[i].row * 2 + 1];
		for (size_t i = 0; i < b - a; i++) {
			f->fps[(a + i) * words] = o[i].key;
			if (words == 2)
				f->fps[(a + i) * 2 + 1] = r[i].key;
			f->rows[a + i] = (uint32_t)o[i].row;
		}
	}
}

static simhash_err fill_sort_slots(fill *f, unsigned j)
{
	size_t nd = (size_t)1 << f->tb->dir_bits;
	size_t lo = nd * j / f->n_threads, hi = nd * (j + 1) / f->n_threads, cap = 0;
	kr *tmp = NULL;

	for (size_t d = lo; d < hi; d++) {
		size_t a = f->dir[d], b = f->dir[d + 1];
		if (b - a < 2)
			continue;
		if (b - a > 32 && b - a > cap) {
			free(tmp);
			cap = b - a;
			tmp = malloc(2 * cap * sizeof *tmp);
			if (!tmp)
				return SIMHASH_ENOMEM;
		}
		sort_slot(f, a, b, tmp);
	}
	free(tmp);
	return SIMHASH_OK;
}

static void *fill_worker(void *arg)
{
	fill_job *job = arg;

	if (job->phase == 0)
		fill_count(job->f, job->j);
	else if (job->phase == 1)
		fill_scatter(job->f, job->j);
	else if (job->phase == 2)
		job->err = fill_sort_slots(job->f, job->j);
	else if (job->phase == 3)
		fill_group(job->f, job->j);
	else
		fill_ungroup(job->f, job->j);
	return NULL;
}

/* Runs one phase on every thread of f (the caller's is thread 0). */
static simhash_err fill_phase(fill *f, int phase)
{
	fill_job jobs[FILL_MAX_THREADS];
	pthread_t th[FILL_MAX_THREADS];
	int started[FILL_MAX_THREADS] = {0};
	simhash_err err = SIMHASH_OK;

	for (unsigned j = 0; j < f->n_threads; j++) {
		jobs[j] = (fill_job){f, j, phase, SIMHASH_OK};
		if (j > 0 && pthread_create(&th[j], NULL, fill_worker, &jobs[j]) == 0)
			started[j] = 1;
	}
	fill_worker(&jobs[0]);
	for (unsigned j = 1; j < f->n_threads; j++) {
		if (started[j])
			pthread_join(th[j], NULL);
		else
			fill_worker(&jobs[j]); /* no thread: do its share here */
		if (jobs[j].err)
			err = jobs[j].err;
	}
	return jobs[0].err ? jobs[0].err : err;
}

/* The directory from the counts: slot d starts at dir[d], thread j's share
 * of it after threads < j (cnt[j][d] becomes that cursor, so cnt[0][d] is
 * dir[d]); with groups, thread j's share of group g starts after threads
 * < j (gcur[j][g]). */
static void fill_directory(fill *f, size_t nd)
{
	size_t pos = 0, span = f->sfps ? (size_t)1 << f->lo_bits : nd;

	for (size_t g0 = 0; g0 < nd; g0 += span) {
		size_t in_group[FILL_MAX_THREADS] = {0}, start = pos;
		for (size_t d = g0; d < g0 + span; d++) {
			f->dir[d] = (uint32_t)pos;
			for (unsigned j = 0; j < f->n_threads; j++) {
				uint32_t c = f->cnt[j][d];
				f->cnt[j][d] = (uint32_t)pos;
				in_group[j] += c;
				pos += c;
			}
		}
		for (unsigned j = 0; f->sfps && j < f->n_threads; j++) {
			f->gcur[j][g0 >> f->lo_bits] = (uint32_t)start;
			start += in_group[j];
		}
	}
	f->dir[nd] = (uint32_t)pos;
}

simhash_err sh_ix_table_fill(const sh_ix_seg *s, unsigned words, sh_ix_table *tb, unsigned threads,
			     uint64_t *fps, uint32_t *rows, uint64_t *sfps, uint32_t *srows)
{
	size_t n = s->n, nd = (size_t)1 << tb->dir_bits;
	fill f = {s, tb, words, threads ? threads : 1, fps, rows, NULL, {NULL}, NULL, NULL, 0, {{0}}};
	simhash_err err = SIMHASH_ENOMEM;

	if (f.n_threads > FILL_MAX_THREADS)
		f.n_threads = FILL_MAX_THREADS;
	/* a thread per 65536 rows at least: fewer are not worth starting one */
	if (f.n_threads > 1 && n / f.n_threads < ((size_t)1 << 16))
		f.n_threads = n >> 16 ? (unsigned)(n >> 16) : 1;
	if (!f.fps)
		f.fps = sh_ix_alloc_big(n * words * sizeof *f.fps, 0);
	if (!f.rows)
		f.rows = sh_ix_alloc_big(n * sizeof *f.rows, 0);
	f.dir = sh_ix_alloc_big((nd + 1) * sizeof *f.dir, 0);
	if (!f.fps || !f.rows || !f.dir)
		goto out_free;
	for (unsigned j = 0; j < f.n_threads; j++)
		if (!(f.cnt[j] = sh_ix_alloc_big(nd * sizeof *f.cnt[j], 1)))
			goto out_free_cnt;
	/* a wide directory's slots are written at random: in two levels
	 * through the scratch, each level's writes stay in cache */
	if (sfps && srows && tb->dir_bits >= GROUP_BITS + 4)
		f.sfps = sfps, f.srows = srows, f.lo_bits = tb->dir_bits - GROUP_BITS;
	fill_phase(&f, 0);
	fill_directory(&f, nd);
	if (f.sfps) {
		fill_phase(&f, 3);
		fill_phase(&f, 4);
	} else {
		fill_phase(&f, 1);
	}
	err = tb->dir_bits < tb->width ? fill_phase(&f, 2) : SIMHASH_OK;
out_free_cnt:
	for (unsigned j = 0; j < f.n_threads; j++)
		free(f.cnt[j]);
	if (!err) {
		tb->fps = f.fps, tb->rows = f.rows, tb->dir = f.dir;
		return SIMHASH_OK;
	}
out_free:
	if (f.fps != fps)
		free(f.fps);
	if (f.rows != rows)
		free(f.rows);
	free(f.dir);
	return err;
}

unsigned sh_ix_dir_bits(unsigned width, uint64_t n)
{
	unsigned lg = 0, d;
	while (lg < 40 && (UINT64_C(1) << (lg + 1)) <= n)
		lg++;
	/* at most 2 bytes of directory per fingerprint, at least 256 slots */
	d = lg > 9 ? lg - 1 : 8;
	if (d > 26)
		d = 26;
	return width < d ? width : d;
}

void sh_ix_table_geometry(sh_ix_table *tb, unsigned bits, unsigned start, unsigned width,
			  uint64_t n)
{
	tb->start = start;
	tb->width = width;
	tb->dir_bits = sh_ix_dir_bits(width, n);
	tb->mask[0] = tb->mask[1] = 0;
	for (unsigned b = start; b < start + width; b++)
		tb->mask[b >> 6] |= UINT64_C(1) << (b & 63);
}

void sh_ix_seg_geometry(sh_ix_seg *s, unsigned bits, const simhash_index_plan *plan)
{
	unsigned nt = plan->layout == SIMHASH_LAYOUT_MIH ? plan->n_tables : 0;

	s->plan = *plan;
	s->n_tables = nt;
	for (unsigned t = 0, start = 0; t < nt; t++) {
		sh_ix_table_geometry(&s->tab[t], bits, start, plan->chunk_bits[t], s->n);
		start += plan->chunk_bits[t];
	}
}

simhash_err sh_ix_tables_build(sh_ix_seg *s, unsigned bits, const simhash_index_plan *plan,
			       unsigned threads)
{
	unsigned words = bits / 64, nt = plan->layout == SIMHASH_LAYOUT_MIH ? plan->n_tables : 0;
	simhash_err err = SIMHASH_OK;

	if (nt == 0 || s->n == 0) {
		s->plan = *plan;
		s->n_tables = 0;
		return SIMHASH_OK;
	}
	if (s->n > UINT32_MAX)
		return SIMHASH_EINVAL;
	sh_ix_seg_geometry(s, bits, plan);
	s->n_tables = 0; /* until they are built */
	/* one table at a time, every thread on it: the scratch is one table's */
	for (unsigned t = 0; t < nt && !err; t++) {
		err = sh_ix_table_fill(s, words, &s->tab[t], threads, NULL, NULL, NULL, NULL);
		if (!err) {
			s->own[2 + 3 * t] = (void *)s->tab[t].fps;
			s->own[3 + 3 * t] = (void *)s->tab[t].rows;
			s->own[4 + 3 * t] = (void *)s->tab[t].dir;
		}
	}
	if (err)
		return err;
	s->n_tables = nt;
	free(s->own[0]); /* table 0 holds every fingerprint */
	s->own[0] = NULL;
	s->fps = NULL;
	sh_ix_seg_bias(s, bits);
	return SIMHASH_OK;
}

void sh_ix_seg_bias(sh_ix_seg *s, unsigned bits)
{
	unsigned words = bits / 64;
	size_t step = s->n > 4096 ? s->n / 4096 : 1, seen = 0;
	uint32_t ones[128] = {0};

	for (size_t i = 0; i < s->n; i += step, seen++) {
		uint64_t fp[2];
		size_t row;
		sh_ix_seg_entry(s, words, i, fp, &row);
		for (unsigned b = 0; b < bits; b++)
			ones[b] += (uint32_t)(fp[b >> 6] >> (b & 63) & 1);
	}
	for (unsigned b = 0; b < bits; b++) {
		/* kept away from 0 and 1: a bit never seen set may be set in a query */
		double p1 = ((double)ones[b] + 0.5) / ((double)seen + 1.0);
		s->pr[b][1] = p1;
		s->pr[b][0] = 1 - p1;
		s->odds[b][1] = (1 - p1) / p1;
		s->odds[b][0] = p1 / (1 - p1);
	}
}

void sh_ix_seg_entry(const sh_ix_seg *s, unsigned words, size_t i, uint64_t *fp, size_t *row)
{
	if (s->n_tables == 0) {
		memcpy(fp, s->fps + i * words, words * 8);
		*row = i;
	} else {
		memcpy(fp, s->tab[0].fps + i * words, words * 8);
		*row = s->tab[0].rows[i] < s->n ? s->tab[0].rows[i] : 0;
	}
}

void sh_ix_seg_free(sh_ix_seg *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < sizeof s->own / sizeof s->own[0]; i++)
		free(s->own[i]);
	free(s->dead);
	free(s);
}
