/* pairs_impl.h - the all-pairs join for one word type, included by pairs.c
 * twice: with WORD uint64_t (32 and 64 bits) and unsigned __int128 (128 bits).
 * Before inclusion: WORD, SFX(name) (name with a width suffix), POPCNT(x).
 * See pairs.c for the method and its invariants.
 */

struct SFX(el) {
	WORD fp;      /* permuted under the current table */
	uint32_t idx; /* position in the input (join: set a first, then set b) */
} __attribute__((packed));

typedef struct SFX(el) SFX(el);

/* The layout of one level: free bits [0, r), split into blocks; table t puts
 * the blocks of combos[t] at the top of [0, r), the others below. */
struct SFX(level) {
	unsigned r, k, p; /* free bits, distance budget, prefix bits (the same for every table) */
	unsigned n_blocks, n_tables;
	unsigned start[MAX_BLOCKS + 1];
	uint64_t combos[MAX_TABLES];
};

static inline WORD SFX(lowmask)(unsigned n)
{
	return n >= sizeof(WORD) * 8 ? ~(WORD)0 : (((WORD)1 << n) - 1);
}

/* x >> s, 0 when s is the whole width. */
static inline WORD SFX(shr)(WORD x, unsigned s)
{
	return s >= sizeof(WORD) * 8 ? 0 : x >> s;
}

/* Where each block of lv goes under table t: dest[j] is its new low bit. */
static unsigned SFX(table_dest)(const struct SFX(level) *lv, unsigned t, unsigned *dest)
{
	unsigned j, top = lv->r, bottom = 0, len, p = 0;

	for (j = 0; j < lv->n_blocks; j++)
		if (lv->combos[t] >> j & 1)
			p += lv->start[j + 1] - lv->start[j];
	top = lv->r - p;
	for (j = 0; j < lv->n_blocks; j++) {
		len = lv->start[j + 1] - lv->start[j];
		if (lv->combos[t] >> j & 1) {
			dest[j] = top;
			top += len;
		} else {
			dest[j] = bottom;
			bottom += len;
		}
	}
	return p;
}

/* x under table t of lv, given its dest: bits >= r stay where they are. */
static inline WORD SFX(permute)(const struct SFX(level) *lv, const unsigned *dest, WORD x)
{
	WORD out = x & ~SFX(lowmask)(lv->r);
	unsigned j;

	for (j = 0; j < lv->n_blocks; j++) {
		unsigned s = lv->start[j], len = lv->start[j + 1] - s;
		out |= ((x >> s) & SFX(lowmask)(len)) << dest[j];
	}
	return out;
}

/* Chooses the blocks of a level for m elements, r free bits and budget k:
 * b blocks (k < b <= r) and every choice of b - k of them as a prefix (so a
 * pair within k agrees on all blocks of at least one choice), minimising
 * tables * (sort cost + expected compares). Returns 0 if comparing all pairs
 * of the m elements is cheaper (or no split exists). */
static int SFX(plan)(struct SFX(level) *lv, double m, unsigned r, unsigned k, double sort_cost,
		     double cmp_cost)
{
	double best = cmp_cost * m * (m - 1) / 2, cost;
	unsigned b, best_b = 0, j, n;
	uint64_t mask;

	for (b = k + 1; b <= r && b < MAX_BLOCKS && b <= k + 1 + 16; b++) {
		double tables = 1;
		unsigned base = r / b, extra = r % b, p;

		for (j = 0; j < k; j++)
			tables = tables * (b - j) / (j + 1);
		if (tables > MAX_TABLES)
			break;
		/* blocks: the first b - extra of base bits, the rest base + 1 */
		p = (b - k) * base + ((b - k) > (b - extra) ? (b - k) - (b - extra) : 0);
		cost = tables * (sort_cost * m + cmp_cost * m * m / 2 * ldexp(1.0, -(int)p));
		if (cost < best) {
			best = cost;
			best_b = b;
		}
	}
	if (!best_b)
		return 0;
	memset(lv, 0, sizeof(*lv));
	lv->r = r;
	lv->k = k;
	lv->n_blocks = best_b;
	for (j = 0; j <= best_b; j++) {
		unsigned base = r / best_b, extra = r % best_b;
		unsigned small = best_b - extra; /* blocks of base bits come first */
		lv->start[j] = j <= small ? j * base : small * base + (j - small) * (base + 1);
	}
	/* every mask of n_blocks bits with n_blocks - k ones, in increasing
	 * order (Gosper's hack steps to the next mask with as many ones) */
	n = 0;
	mask = ((uint64_t)1 << (best_b - k)) - 1;
	while (mask < ((uint64_t)1 << best_b) && n < MAX_TABLES) {
		uint64_t c = mask & -mask, rr = mask + c;
		lv->combos[n++] = mask;
		if (!c)
			break;
		mask = (((rr ^ mask) >> 2) / c) | rr;
	}
	lv->n_tables = n;
	{
		unsigned dest[MAX_BLOCKS];
		lv->p = SFX(table_dest)(lv, 0, dest);
	}
	return 1;
}

/* Masks (in the representation of table t of lv) of the combos before t: a
 * pair equal on one of them was found by that earlier table. */
static unsigned SFX(earlier_masks)(const struct SFX(level) *lv, unsigned t, const unsigned *dest,
				   WORD *out)
{
	unsigned u, j;

	for (u = 0; u < t; u++) {
		WORD m = 0;
		for (j = 0; j < lv->n_blocks; j++)
			if (lv->combos[u] >> j & 1)
				m |= SFX(lowmask)(lv->start[j + 1] - lv->start[j]) << dest[j];
		out[u] = m;
	}
	return t;
}

/* Per-thread state. */
struct SFX(worker) {
	struct sh_pairs_out out;
	SFX(el) *tmp; /* sort scratch */
	size_t tmp_cap;
	uint64_t *xs; /* the fingerprints of a run, for the SIMD compare */
	size_t xs_cap;
	int failed;
};

static int SFX(reserve)(SFX(el) **p, size_t *cap, size_t n)
{
	SFX(el) *q;

	if (n <= *cap)
		return 0;
	n = n < 1024 ? 1024 : n + n / 2;
	q = realloc(*p, n * sizeof(**p));
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* The key of x: bits [lo, lo + n) as an integer (n <= 16). */
static inline unsigned SFX(digit)(WORD x, unsigned lo, unsigned n)
{
	return (unsigned)((x >> lo) & (WORD)((1u << n) - 1));
}

/* Stable sort of a[0..m) by bits [lo, hi) of fp, using tmp (m elements); the
 * result ends in a. */
static void SFX(sort_bits)(SFX(el) *a, SFX(el) *tmp, size_t m, unsigned lo, unsigned hi)
{
	uint32_t count[1u << SORT_DIGIT];
	SFX(el) *src, *dst, *sw;
	unsigned d, n;
	size_t i;

	if (m < 2 || hi <= lo)
		return;
	if (m <= 32) { /* insertion sort on the whole key */
		for (i = 1; i < m; i++) {
			SFX(el) e = a[i];
			WORD key = SFX(shr)(e.fp, lo) & SFX(lowmask)(hi - lo);
			size_t j = i;
			while (j > 0 && (SFX(shr)(a[j - 1].fp, lo) & SFX(lowmask)(hi - lo)) > key) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = e;
		}
		return;
	}
	src = a;
	dst = tmp;
	for (d = lo; d < hi; d += n) {
		uint32_t sum = 0, c;
		unsigned nb;

		n = hi - d < SORT_DIGIT ? hi - d : SORT_DIGIT;
		nb = 1u << n;
		memset(count, 0, nb * sizeof(count[0]));
		for (i = 0; i < m; i++)
			count[SFX(digit)(src[i].fp, d, n)]++;
		if (count[SFX(digit)(src[0].fp, d, n)] == m)
			continue; /* one value: nothing moves */
		for (i = 0; i < nb; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < m; i++)
			dst[count[SFX(digit)(src[i].fp, d, n)]++] = src[i];
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != a)
		memcpy(a, src, m * sizeof(*a));
}

/* The search state of one thread within one top-level table. */
struct SFX(walk) {
	const struct sh_pairs_job *job;
	struct SFX(worker) *w;
	unsigned depth;
};

static void SFX(run)(struct SFX(walk) *wk, SFX(el) *a, size_t m, unsigned r, const WORD *checks,
		     unsigned n_checks);

/* Reports pair (i, j) of a if no earlier table found it and, in a join, it
 * crosses the sets. */
static inline void SFX(report)(struct SFX(walk) *wk, const SFX(el) *a, size_t i, size_t j,
			       WORD diff, unsigned d, const WORD *checks, unsigned n_checks)
{
	const struct sh_pairs_job *job = wk->job;
	unsigned c;

	for (c = 0; c < n_checks; c++)
		if (!(diff & checks[c]))
			return;
	if (job->n_a && (a[i].idx >= job->n_a || a[j].idx < job->n_a))
		return; /* a join reports pairs across the sets only */
	if (sh_pairs_out_add(&wk->w->out, a[i].idx, a[j].idx, d))
		wk->w->failed = 1;
}

#if WORD_BITS == 64 && SH_X86
/* The AVX-512 compare: 8 distances at a time with VPOPCNTQ; the fingerprints
 * of the run are first copied to a plain array xs. Candidates go through
 * report() exactly as in the scalar loop, so results are identical. */
SH_AVX512_POPCNT
static void SFX(compare_all_avx512)(struct SFX(walk) *wk, const SFX(el) *a, size_t m,
				    const WORD *checks, unsigned n_checks, uint64_t *xs)
{
	__m512i kk = _mm512_set1_epi64((long long)wk->job->k);
	size_t i, j;

	for (i = 0; i < m; i++)
		xs[i] = a[i].fp;
	for (i = 0; i + 1 < m; i++) {
		__m512i x = _mm512_set1_epi64((long long)xs[i]);
		for (j = i + 1; j < m; j += 8) {
			__mmask8 live = m - j >= 8 ? 0xff : (__mmask8)((1u << (m - j)) - 1);
			__m512i y = _mm512_maskz_loadu_epi64(live, xs + j);
			__m512i d = _mm512_popcnt_epi64(_mm512_xor_si512(x, y));
			__mmask8 hit = _mm512_mask_cmple_epu64_mask(live, d, kk);
			while (hit) {
				size_t jj = j + (size_t)__builtin_ctz(hit);
				uint64_t diff = xs[i] ^ xs[jj];
				hit &= (__mmask8)(hit - 1);
				SFX(report)(wk, a, i, jj, diff, (unsigned)__builtin_popcountll(diff),
					    checks, n_checks);
			}
		}
	}
}
#endif

/* The scalar pair loop, compiled twice: with the popcnt instruction and
 * without (a call to libgcc's __popcountdi2 per pair, measured at 4% of a
 * biased 10M run): the same results, the choice made once per job. */
static inline __attribute__((always_inline)) void
SFX(compare_pairs)(struct SFX(walk) *wk, const SFX(el) *a, size_t m, const WORD *checks,
		   unsigned n_checks)
{
	unsigned k = wk->job->k, d;
	size_t i, j;

	for (i = 0; i + 1 < m; i++) {
		WORD x = a[i].fp;
		for (j = i + 1; j < m; j++) {
			WORD diff = x ^ a[j].fp;
			d = POPCNT(diff);
			if (d <= k)
				SFX(report)(wk, a, i, j, diff, d, checks, n_checks);
		}
	}
}

SH_TARGET_POPCNT static void
SFX(compare_pairs_popcnt)(struct SFX(walk) *wk, const SFX(el) *a, size_t m, const WORD *checks,
			  unsigned n_checks)
{
	SFX(compare_pairs)(wk, a, m, checks, n_checks);
}

static void SFX(compare_pairs_plain)(struct SFX(walk) *wk, const SFX(el) *a, size_t m,
				     const WORD *checks, unsigned n_checks)
{
	SFX(compare_pairs)(wk, a, m, checks, n_checks);
}

/* Reports the pairs within k among a[0..m) (all equal above bit r), those
 * that no earlier table found (checks: their masks). */
static void SFX(compare_all)(struct SFX(walk) *wk, const SFX(el) *a, size_t m,
			     const WORD *checks, unsigned n_checks)
{
#if WORD_BITS == 64 && SH_X86
	if (wk->job->simd && m >= 16) {
		if (m > wk->w->xs_cap) {
			uint64_t *xs = realloc(wk->w->xs, (m + m / 2) * sizeof(*xs));
			if (!xs) {
				wk->w->failed = 1;
				return;
			}
			wk->w->xs = xs;
			wk->w->xs_cap = m + m / 2;
		}
		SFX(compare_all_avx512)(wk, a, m, checks, n_checks, wk->w->xs);
		return;
	}
#endif
	if (wk->job->popcnt)
		SFX(compare_pairs_popcnt)(wk, a, m, checks, n_checks);
	else
		SFX(compare_pairs_plain)(wk, a, m, checks, n_checks);
}

/* The end of the run of a[0..m) (sorted on the bits from lo up) that starts
 * at s: the first element whose bits from lo up differ from a[s]'s. */
static inline size_t SFX(run_end)(const SFX(el) *a, size_t m, size_t s, unsigned lo)
{
	WORD key = SFX(shr)(a[s].fp, lo);
	size_t e = s + 1;

	while (e < m && SFX(shr)(a[e].fp, lo) == key)
		e++;
	return e;
}

/* Whether the runs of a[0..m) (sorted on the bits from lo up) hold more
 * than a quarter of all the pairs. A level's plan expects runs of about
 * m / 2^p; on concentrated data (many equal or nearly equal fingerprints)
 * every table keeps most of the run together, and each further level would
 * multiply the work by its tables instead of dividing it. */
static int SFX(concentrated)(const SFX(el) *a, size_t m, unsigned lo)
{
	double pairs = 0;
	size_t s, e;

	for (s = 0; s < m; s = e) {
		e = SFX(run_end)(a, m, s, lo);
		pairs += (double)(e - s) * (double)(e - s - 1) / 2;
	}
	return pairs > (double)m * (double)(m - 1) / 8;
}

/* Splits a run of m elements (equal on every bit >= r) by a level of its own
 * when that is cheaper than comparing all pairs: when table 0 of the level
 * leaves the run concentrated, all pairs are compared once instead. */
static void SFX(run)(struct SFX(walk) *wk, SFX(el) *a, size_t m, unsigned r, const WORD *checks,
		     unsigned n_checks)
{
	struct SFX(level) lv;
	unsigned dest[MAX_BLOCKS], t, c, p;
	SFX(el) *buf, *tmp;
	WORD *sub_checks;
	size_t i, s, e;

	if (m < 2)
		return;
	if (m <= SMALL_RUN || wk->depth >= MAX_DEPTH ||
	    !SFX(plan)(&lv, (double)m, r, wk->job->k, SUB_SORT_COST, CMP_COST(wk->job))) {
		SFX(compare_all)(wk, a, m, checks, n_checks);
		return;
	}
	buf = malloc(2 * m * sizeof(*buf));
	sub_checks = malloc((n_checks + lv.n_tables) * sizeof(*sub_checks));
	if (!buf || !sub_checks) {
		free(buf);
		free(sub_checks);
		wk->w->failed = 1;
		return;
	}
	tmp = buf + m;
	wk->depth++;
	for (t = 0; t < lv.n_tables && !wk->w->failed; t++) {
		p = SFX(table_dest)(&lv, t, dest);
		for (c = 0; c < n_checks; c++)
			sub_checks[c] = SFX(permute)(&lv, dest, checks[c]);
		SFX(earlier_masks)(&lv, t, dest, sub_checks + n_checks);
		for (i = 0; i < m; i++) {
			buf[i].fp = SFX(permute)(&lv, dest, a[i].fp);
			buf[i].idx = a[i].idx;
		}
		SFX(sort_bits)(buf, tmp, m, r - p, r);
		if (t == 0 && SFX(concentrated)(buf, m, r - p)) {
			/* nothing reported at this level yet: compare once */
			wk->depth--;
			free(buf);
			free(sub_checks);
			SFX(compare_all)(wk, a, m, checks, n_checks);
			return;
		}
		for (s = 0; s < m; s = e) {
			e = SFX(run_end)(buf, m, s, r - p);
			SFX(run)(wk, buf + s, e - s, r - p, sub_checks, n_checks + t);
		}
	}
	wk->depth--;
	free(buf);
	free(sub_checks);
}

/* The input fingerprint i as a word. */
static inline WORD SFX(load)(const struct sh_pairs_job *job, size_t i)
{
	const uint64_t *src = job->a;

	if (job->n_a && i >= job->n_a) {
		src = job->b;
		i -= job->n_a;
	}
#if WORD_BITS == 128
	return (WORD)src[2 * i] | (WORD)src[2 * i + 1] << 64;
#else
	return job->bits == 32 ? src[i] & 0xffffffffu : src[i];
#endif
}

/* Shared by the threads of one join. */
struct SFX(shared) {
	const struct sh_pairs_job *job;
	struct SFX(level) top;
	SFX(el) *table;
	uint32_t *hist;      /* [thread][bucket] counts, then write positions */
	unsigned d1;         /* bits of the first digit (top of the prefix) */
	size_t n_buckets;
	size_t next_bucket;  /* atomic: next bucket chunk to take */
	unsigned t;          /* current table */
	unsigned dest[MAX_BLOCKS];
	unsigned p;
	WORD checks[MAX_TABLES];
	unsigned T;          /* threads running */
	pthread_barrier_t barrier;
	pthread_mutex_t lock;
	pthread_cond_t go_cond;
	int go;              /* 1: the barrier is ready; -1: give up */
	struct SFX(worker) *workers;
};

struct SFX(thread_arg) {
	struct SFX(shared) *sh;
	unsigned i;
};

static void *SFX(thread)(void *argp)
{
	struct SFX(thread_arg) *ta = argp;
	struct SFX(shared) *sh = ta->sh;
	const struct sh_pairs_job *job = sh->job;
	struct SFX(worker) *w = &sh->workers[ta->i];
	unsigned T, i = ta->i, r = sh->top.r;
	size_t n = job->n, lo, hi, x, b;
	uint32_t *hist = sh->hist + (size_t)i * sh->n_buckets;
	struct SFX(walk) wk = { .job = job, .w = w };

	pthread_mutex_lock(&sh->lock);
	while (!sh->go)
		pthread_cond_wait(&sh->go_cond, &sh->lock);
	pthread_mutex_unlock(&sh->lock);
	if (sh->go < 0)
		return NULL;
	T = sh->T;
	lo = n * i / T;
	hi = n * (i + 1) / T;

	for (;;) {
		unsigned p = sh->p, d1 = sh->d1, shift = r - d1;

		/* 1. histogram of the top digit of the prefix, over this thread's input */
		memset(hist, 0, sh->n_buckets * sizeof(*hist));
		for (x = lo; x < hi; x++)
			hist[(size_t)SFX(shr)(SFX(permute)(&sh->top, sh->dest, SFX(load)(job, x)), shift)]++;
		pthread_barrier_wait(&sh->barrier);
		if (i == 0) { /* write positions: bucket by bucket, thread by thread */
			uint64_t sum = 0, c;
			for (b = 0; b < sh->n_buckets; b++)
				for (unsigned u = 0; u < T; u++) {
					uint32_t *h = sh->hist + (size_t)u * sh->n_buckets + b;
					c = *h;
					*h = (uint32_t)sum;
					sum += c;
				}
			sh->next_bucket = 0;
		}
		pthread_barrier_wait(&sh->barrier);
		/* 2. scatter: buckets keep input order (threads cover rising ranges) */
		for (x = lo; x < hi; x++) {
			WORD v = SFX(permute)(&sh->top, sh->dest, SFX(load)(job, x));
			SFX(el) *e = &sh->table[hist[(size_t)SFX(shr)(v, shift)]++];
			e->fp = v;
			e->idx = (uint32_t)x;
		}
		pthread_barrier_wait(&sh->barrier);
		/* 3. buckets, a chunk at a time: sort by the rest of the prefix, walk runs */
		for (;;) {
			size_t first = __atomic_fetch_add(&sh->next_bucket, BUCKET_CHUNK,
							  __ATOMIC_RELAXED);
			if (first >= sh->n_buckets || w->failed)
				break;
			for (b = first; b < first + BUCKET_CHUNK && b < sh->n_buckets; b++) {
				/* hist of the last thread now ends bucket b; bucket b starts
				 * where the last thread's bucket b - 1 ended */
				size_t s = b ? sh->hist[(size_t)(T - 1) * sh->n_buckets + b - 1] : 0;
				size_t e = sh->hist[(size_t)(T - 1) * sh->n_buckets + b], rs, re;
				SFX(el) *a = sh->table + s;
				size_t m = e - s;

				if (m < 2)
					continue;
				if (SFX(reserve)(&w->tmp, &w->tmp_cap, m)) {
					w->failed = 1;
					break;
				}
				SFX(sort_bits)(a, w->tmp, m, r - p, r - d1);
				for (rs = 0; rs < m; rs = re) {
					re = SFX(run_end)(a, m, rs, r - p);
					SFX(run)(&wk, a + rs, re - rs, r - p, sh->checks, sh->t);
				}
			}
		}
		pthread_barrier_wait(&sh->barrier);
		if (i == 0) { /* the next table */
			sh->t++;
			if (sh->t < sh->top.n_tables) {
				sh->p = SFX(table_dest)(&sh->top, sh->t, sh->dest);
				SFX(earlier_masks)(&sh->top, sh->t, sh->dest, sh->checks);
			}
		}
		pthread_barrier_wait(&sh->barrier);
		if (sh->t >= sh->top.n_tables)
			break;
	}
	return NULL;
}

static simhash_err SFX(join)(const struct sh_pairs_job *job, struct sh_pairs_out *result)
{
	struct SFX(shared) sh = { .job = job };
	struct SFX(thread_arg) *args = NULL;
	pthread_t *threads = NULL;
	unsigned T = job->n_threads, i, started = 0;
	simhash_err err = SIMHASH_OK;
	double lg;

	if (!SFX(plan)(&sh.top, (double)job->n, job->bits, job->k, TOP_SORT_COST, CMP_COST(job))) {
		/* no split pays: one table whose prefix is empty, all pairs compared */
		memset(&sh.top, 0, sizeof(sh.top));
		sh.top.r = job->bits;
		sh.top.k = job->k;
		sh.top.n_blocks = 1;
		sh.top.start[1] = job->bits;
		sh.top.n_tables = 1;
		sh.top.combos[0] = 0;
	}
	sh.p = SFX(table_dest)(&sh.top, 0, sh.dest);
	lg = job->n > 1 ? log2((double)job->n) : 0;
	sh.d1 = lg > 10 ? (unsigned)(lg - 9) : 1;
	if (sh.d1 > TOP_DIGIT_MAX)
		sh.d1 = TOP_DIGIT_MAX;
	if (sh.d1 > sh.p)
		sh.d1 = sh.p;
	sh.n_buckets = (size_t)1 << sh.d1;
	sh.table = sh_alloc_big(job->n * sizeof(*sh.table));
	sh.hist = calloc((size_t)T * sh.n_buckets, sizeof(*sh.hist));
	sh.workers = calloc(T, sizeof(*sh.workers));
	threads = calloc(T, sizeof(*threads));
	args = calloc(T, sizeof(*args));
	if (!sh.table || !sh.hist || !sh.workers || !threads || !args) {
		err = SIMHASH_ENOMEM;
		goto out;
	}
	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.go_cond, NULL);
	for (i = 0; i < T; i++) {
		args[i].sh = &sh;
		args[i].i = i;
	}
	/* Threads wait for `go`; the barrier counts those that started. */
	for (i = 1; i < T; i++) {
		if (pthread_create(&threads[i], NULL, SFX(thread), &args[i]))
			break;
		started++;
	}
	sh.T = started + 1;
	pthread_mutex_lock(&sh.lock);
	sh.go = pthread_barrier_init(&sh.barrier, NULL, sh.T) ? -1 : 1;
	pthread_cond_broadcast(&sh.go_cond);
	pthread_mutex_unlock(&sh.lock);
	if (sh.go > 0)
		SFX(thread)(&args[0]);
	for (i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);
	if (sh.go > 0)
		pthread_barrier_destroy(&sh.barrier);
	else
		err = SIMHASH_ENOMEM;
	pthread_mutex_destroy(&sh.lock);
	pthread_cond_destroy(&sh.go_cond);
	for (i = 0; i < T; i++) {
		if (sh.workers[i].failed)
			err = SIMHASH_ENOMEM;
		if (!err && sh_pairs_out_append(result, &sh.workers[i].out))
			err = SIMHASH_ENOMEM;
	}
out:
	if (sh.workers)
		for (i = 0; i < T; i++) {
			free(sh.workers[i].tmp);
			free(sh.workers[i].xs);
			free(sh.workers[i].out.p);
		}
	free(sh.workers);
	free(sh.table);
	free(sh.hist);
	free(threads);
	free(args);
	return err;
}
