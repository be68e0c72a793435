/* idf.c - IDF tables: term -> inverse document frequency, with jieba's rule
 * that an unknown term gets the median idf of the table.
 *
 * Layout: one open-addressing table with linear probing, keyed by sh_key() of
 * the term (XXH3-64, so the low bits index directly). A 24-byte slot holds the
 * idf next to the key, so the lookup in the fingerprint's hot loop touches one
 * slot per probe and nothing else. Cold data (term bytes, document counts)
 * lives in terms[], appended in order of first sight, and the arena. The
 * 64-bit key is the term's identity: two terms with the same key (odds about
 * n^2 / 2^65) would share one entry.
 *
 * Workload: jieba's idf.txt, 270k terms, loads in about 0.1 s here; the cost
 * is one cache miss per new term, which load() overlaps by prefetching slots a
 * batch of lines ahead.
 *
 * Invariants:
 *  1. cap is 0 or a power of two, and n_used * 10 <= cap * 7, so every probe
 *     sequence reaches an empty slot. terms[0..n_used) are the used slots'
 *     terms, n_used <= UINT32_MAX.
 *  2. A slot is SLOT_USED iff flags != 0; SLOT_VALUED iff idf holds a finite
 *     value, which only set(), load() and finish() give. n_valued counts them.
 *     Counted terms without a value yet (add_document before finish) read as
 *     unknown terms.
 *  3. SLOT_SET marks values given by set() or load(); finish() computes only
 *     the others, from df and n_docs.
 *  4. If !median_stale, median is the table's default: the idf at index
 *     n_valued / 2 of the sorted values (Python's sorted(v)[n // 2], as jieba),
 *     or 1.0 for a table without values. set() makes it stale; finish() and
 *     load() refresh it. A stale table still answers exactly: the getters then
 *     select the median on the fly, in O(n) without allocating, so callers who
 *     set() terms should call simhash_idf_finish() before fingerprinting.
 *
 * The file format (load/save) is `term<TAB>idf` per line, or jieba's
 * `term idf`; numbers are read and written in the C locale whatever the
 * process locale is, and written with %.17g, which reads back bit-exact.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "textfile.h"

#define EMPTY_DEFAULT 1.0 /* idf of every term in an empty table: tf-idf = tf */

enum { SLOT_USED = 1, SLOT_VALUED = 2, SLOT_SET = 4 };

struct idf_slot {
	uint64_t key;   /* sh_key() of the term */
	double idf;     /* meaningful iff SLOT_VALUED */
	uint32_t term;  /* index in terms[] */
	uint32_t flags; /* 0: empty slot */
};

struct idf_term {
	size_t off;   /* bytes: arena.p + off */
	uint64_t df;  /* documents counted that hold the term */
	uint32_t len;
};

/* A feature of the document being added, collected before counting. */
struct doc_feature {
	uint64_t key;
	size_t off; /* in doc_bytes */
	size_t len;
};

struct simhash_idf {
	struct idf_slot *slots;
	size_t cap;
	size_t n_used;
	size_t n_valued;
	uint64_t n_docs;
	sh_buf terms; /* struct idf_term[n_used] */
	sh_buf arena;
	size_t arena_len;
	double median;
	int median_stale;
	/* add_document scratch, reused across documents */
	sh_buf doc_features;
	sh_buf doc_bytes;
	size_t doc_n, doc_len;
	simhash_err doc_err;
};

/* ---------------------------------------------------------------- the table */

static const struct idf_slot *slot_find(const simhash_idf *idf, uint64_t key)
{
	size_t mask = idf->cap - 1, i;

	if (!idf->cap)
		return NULL;
	for (i = key & mask; idf->slots[i].flags; i = (i + 1) & mask)
		if (idf->slots[i].key == key)
			return &idf->slots[i];
	return NULL;
}

static void slot_place(struct idf_slot *slots, size_t cap, const struct idf_slot *s)
{
	size_t i = s->key & (cap - 1);

	while (slots[i].flags)
		i = (i + 1) & (cap - 1);
	slots[i] = *s;
}

/* Makes room for n_more new terms of n_bytes bytes in all, so that the
 * slot_claim() calls that follow cannot fail. */
static simhash_err idf_reserve(simhash_idf *idf, size_t n_more, size_t n_bytes)
{
	struct idf_slot *slots;
	size_t cap = idf->cap ? idf->cap : 16;
	simhash_err err;

	if (n_bytes > SIZE_MAX - idf->arena_len || n_more > UINT32_MAX - idf->n_used)
		return SIMHASH_ENOMEM;
	err = sh_buf_reserve(&idf->arena, idf->arena_len + n_bytes);
	if (!err)
		err = sh_buf_reserve(&idf->terms, (idf->n_used + n_more) * sizeof(struct idf_term));
	if (err)
		return err;
	while ((idf->n_used + n_more) * 10 > cap * 7) {
		if (cap > SIZE_MAX / 2 / sizeof *slots)
			return SIMHASH_ENOMEM;
		cap *= 2;
	}
	if (cap == idf->cap)
		return SIMHASH_OK;
	slots = calloc(cap, sizeof *slots);
	if (!slots)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; i < idf->cap; i++)
		if (idf->slots[i].flags)
			slot_place(slots, cap, &idf->slots[i]);
	free(idf->slots);
	idf->slots = slots;
	idf->cap = cap;
	return SIMHASH_OK;
}

/* The slot of key, created with the term's bytes if new. Room was reserved. */
static struct idf_slot *slot_claim(simhash_idf *idf, uint64_t key, const char *term, size_t len)
{
	size_t mask = idf->cap - 1, i;
	struct idf_term *t;
	struct idf_slot *s;

	assert(idf->cap);
	for (i = key & mask; idf->slots[i].flags; i = (i + 1) & mask)
		if (idf->slots[i].key == key)
			return &idf->slots[i];
	assert((idf->n_used + 1) * 10 <= idf->cap * 7);
	assert(idf->arena_len + len <= idf->arena.cap);
	assert((idf->n_used + 1) * sizeof *t <= idf->terms.cap);
	t = (struct idf_term *)idf->terms.p + idf->n_used;
	t->off = idf->arena_len;
	t->len = (uint32_t)len;
	t->df = 0;
	if (len)
		memcpy((char *)idf->arena.p + idf->arena_len, term, len);
	idf->arena_len += len;
	s = &idf->slots[i];
	s->key = key;
	s->term = (uint32_t)idf->n_used++;
	s->flags = SLOT_USED;
	return s;
}

/* Bytes at off in b; b->p stays NULL while every term is empty. */
static const char *buf_at(const sh_buf *b, size_t off)
{
	return b->p ? (const char *)b->p + off : "";
}

static struct idf_term *slot_term(const simhash_idf *idf, const struct idf_slot *s)
{
	return (struct idf_term *)idf->terms.p + s->term;
}

static const char *term_bytes(const simhash_idf *idf, const struct idf_term *t)
{
	return buf_at(&idf->arena, t->off);
}

/* ---------------------------------------------------------------- the median */

/* Maps doubles to integers of the same order (IEEE 754 total order). */
static uint64_t order_bits(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof u);
	return (u >> 63) ? ~u : u | (1ull << 63);
}

static double from_order_bits(uint64_t u)
{
	double v;

	u = (u >> 63) ? u & ~(1ull << 63) : ~u;
	memcpy(&v, &u, sizeof v);
	return v;
}

/* The value at index n_valued / 2 of the sorted values, found by a radix
 * select on order_bits(): each pass fixes one more byte of the answer. Eight
 * passes over the slots and no allocation, so the const getters may use it on
 * a stale table. */
static double idf_select_median_slots(const simhash_idf *idf)
{
	uint64_t prefix = 0, mask = 0;
	size_t k = idf->n_valued / 2;

	for (int shift = 56; shift >= 0; shift -= 8) {
		size_t hist[256] = {0};
		unsigned b = 0;

		for (size_t i = 0; i < idf->cap; i++) {
			uint64_t u;

			if (!(idf->slots[i].flags & SLOT_VALUED))
				continue;
			u = order_bits(idf->slots[i].idf);
			if ((u & mask) == prefix)
				hist[(u >> shift) & 0xff]++;
		}
		while (k >= hist[b])
			k -= hist[b++];
		prefix |= (uint64_t)b << shift;
		mask |= 0xffull << shift;
	}
	return from_order_bits(prefix);
}

/* The same select on a dense copy, keeping only the candidates after each
 * pass: about 2n steps over n * 8 bytes instead of 8 passes over the slots.
 * v is overwritten. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
	for (int shift = 56; shift >= 0; shift -= 8) {
		size_t hist[256] = {0}, m = 0;
		unsigned b = 0;

		for (size_t i = 0; i < n; i++)
			hist[(v[i] >> shift) & 0xff]++;
		while (k >= hist[b])
			k -= hist[b++];
		for (size_t i = 0; i < n; i++) /* survivors share every byte so far */
			if (((v[i] >> shift) & 0xff) == b)
				v[m++] = v[i];
		n = m;
	}
	return v[0];
}

static void idf_refresh_median(simhash_idf *idf)
{
	uint64_t *v;
	size_t n = 0;

	idf->median_stale = 0;
	if (!idf->n_valued) {
		idf->median = EMPTY_DEFAULT;
		return;
	}
	v = malloc(idf->n_valued * sizeof *v);
	if (!v) { /* same answer, slower */
		idf->median = idf_select_median_slots(idf);
		return;
	}
	for (size_t i = 0; i < idf->cap; i++)
		if (idf->slots[i].flags & SLOT_VALUED)
			v[n++] = order_bits(idf->slots[i].idf);
	idf->median = from_order_bits(select_kth(v, n, n / 2));
	free(v);
}

static double idf_default(const simhash_idf *idf)
{
	if (!idf->median_stale)
		return idf->median;
	return idf->n_valued ? idf_select_median_slots(idf) : EMPTY_DEFAULT;
}

/* ---------------------------------------------------------------- the API */

simhash_err simhash_idf_new(simhash_idf **out)
{
	simhash_idf *idf;

	if (!out)
		return SIMHASH_EINVAL;
	idf = calloc(1, sizeof *idf);
	if (!idf)
		return SIMHASH_ENOMEM;
	idf->median = EMPTY_DEFAULT;
	*out = idf;
	return SIMHASH_OK;
}

void simhash_idf_free(simhash_idf *idf)
{
	if (!idf)
		return;
	free(idf->slots);
	sh_buf_free(&idf->terms);
	sh_buf_free(&idf->arena);
	sh_buf_free(&idf->doc_features);
	sh_buf_free(&idf->doc_bytes);
	free(idf);
}

/* set() and load(): stores a value given from outside; key = sh_key(term). */
static simhash_err idf_store(simhash_idf *idf, uint64_t key, const char *term, size_t len,
			     double value)
{
	struct idf_slot *s;
	simhash_err err;

	err = idf_reserve(idf, 1, len);
	if (err)
		return err;
	s = slot_claim(idf, key, term, len);
	if (!(s->flags & SLOT_VALUED))
		idf->n_valued++;
	s->flags |= SLOT_VALUED | SLOT_SET;
	s->idf = value;
	idf->median_stale = 1;
	return SIMHASH_OK;
}

simhash_err simhash_idf_set(simhash_idf *idf, const char *term, size_t len, double value)
{
	if (!idf || (!term && len) || len > UINT32_MAX || !isfinite(value) || value < 0)
		return SIMHASH_EINVAL;
	return idf_store(idf, sh_key_inline(term, len), term, len, value);
}

double sh_idf_get_key(const simhash_idf *idf, uint64_t key)
{
	const struct idf_slot *s;

	assert(idf);
	s = slot_find(idf, key);
	if (s && (s->flags & SLOT_VALUED))
		return s->idf;
	return idf_default(idf);
}

int sh_idf_has_key(const simhash_idf *idf, uint64_t key)
{
	const struct idf_slot *s = slot_find(idf, key);

	return s && (s->flags & SLOT_VALUED);
}

double simhash_idf_get(const simhash_idf *idf, const char *term, size_t len)
{
	if (!idf || (!term && len))
		return EMPTY_DEFAULT;
	return sh_idf_get_key(idf, sh_key_inline(term, len));
}

size_t simhash_idf_size(const simhash_idf *idf)
{
	return idf ? idf->n_valued : 0;
}

/* Gives every counted term its idf (invariant 3: values from set() and load()
 * stay) and refreshes the median. Idempotent, so it may also be called after
 * set() only, or again after more documents. */
simhash_err simhash_idf_finish(simhash_idf *idf)
{
	if (!idf)
		return SIMHASH_EINVAL;
	for (size_t i = 0; i < idf->cap; i++) {
		struct idf_slot *s = &idf->slots[i];
		uint64_t df;

		if (!s->flags || (s->flags & SLOT_SET))
			continue;
		df = slot_term(idf, s)->df;
		if (!df)
			continue;
		if (!(s->flags & SLOT_VALUED))
			idf->n_valued++;
		s->flags |= SLOT_VALUED;
		s->idf = log((1.0 + (double)idf->n_docs) / (1.0 + (double)df)) + 1.0;
	}
	idf_refresh_median(idf);
	return SIMHASH_OK;
}

/* ---------------------------------------------------------------- add_document */

/* Feature callback: copies the feature aside. Counting waits until the whole
 * document is known, so that a failure counts nothing (no half documents). */
int sh_idf_doc_feature(const char *data, size_t len, uint32_t count, void *arg)
{
	simhash_idf *idf = arg;
	struct doc_feature *f;
	simhash_err err;

	SH_UNUSED(count); /* document frequency counts presence, not occurrences */
	if (len > UINT32_MAX || len > SIZE_MAX - idf->doc_len) {
		idf->doc_err = SIMHASH_EINVAL;
		return 1;
	}
	err = sh_buf_reserve(&idf->doc_features, (idf->doc_n + 1) * sizeof *f);
	if (!err)
		err = sh_buf_reserve(&idf->doc_bytes, idf->doc_len + len);
	if (err) {
		idf->doc_err = err;
		return 1;
	}
	f = (struct doc_feature *)idf->doc_features.p + idf->doc_n++;
	f->key = sh_key_inline(data, len);
	f->off = idf->doc_len;
	f->len = len;
	if (len)
		memcpy((char *)idf->doc_bytes.p + idf->doc_len, data, len);
	idf->doc_len += len;
	return 0;
}

void sh_idf_doc_begin(simhash_idf *idf)
{
	idf->doc_n = 0;
	idf->doc_len = 0;
	idf->doc_err = SIMHASH_OK;
}

/* The features come distinct (simhash_features_each() reports each once),
 * so one increment per feature is one per document. */
simhash_err sh_idf_doc_commit(simhash_idf *idf)
{
	const struct doc_feature *f;
	simhash_err err = idf->doc_err;

	if (!err)
		err = idf_reserve(idf, idf->doc_n, idf->doc_len);
	if (err)
		return err;
	f = idf->doc_features.p;
	for (size_t i = 0; i < idf->doc_n; i++) {
		const char *term = buf_at(&idf->doc_bytes, f[i].off);

		slot_term(idf, slot_claim(idf, f[i].key, term, f[i].len))->df++;
	}
	idf->n_docs++;
	return SIMHASH_OK;
}

/* ---------------------------------------------------------------- digest */


/* Order-independent by construction: each (term, idf) pair is hashed on its
 * own (XXH3 of the term bytes, seeded with the idf's bits) and the hashes are
 * summed, twice with different mixing, so insertion order and table layout
 * cannot matter and no sorting (no allocation, no failure) is needed. */
uint64_t simhash_idf_digest(const simhash_idf *idf)
{
	uint64_t sum1 = 0, sum2 = 0, bits;
	uint8_t buf[32];

	if (!idf)
		return 0;
	for (size_t i = 0; i < idf->cap; i++) {
		const struct idf_slot *s = &idf->slots[i];
		const struct idf_term *t;
		uint64_t h;

		if (!(s->flags & SLOT_VALUED))
			continue;
		memcpy(&bits, &s->idf, sizeof bits);
		t = slot_term(idf, s);
		h = XXH3_64bits_withSeed(term_bytes(idf, t), t->len, bits);
		sum1 += h;
		sum2 += sh_mix64(h ^ 0x9e3779b97f4a7c15ull);
	}
	memcpy(buf, "idf1", 4);
	memset(buf + 4, 0, 4);
	sh_put_le64(buf + 8, idf->n_valued);
	sh_put_le64(buf + 16, sum1);
	sh_put_le64(buf + 24, sum2);
	return XXH3_64bits(buf, sizeof buf);
}

/* ---------------------------------------------------------------- load */

static int is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return 1;
}

/* Clinger's fast path: a decimal whose digits fit in 53 bits, scaled by an
 * exact power of ten (10^0..10^22), is one correctly rounded multiply or
 * divide, so the result equals strtod's. Covers jieba's idf.txt ("11.50278");
 * anything else (17-digit numbers, big exponents, hex, "inf") returns 0 and
 * goes to strtod_l. Off where double arithmetic may carry excess precision. */
static int parse_decimal_fast(const char *s, const char *end, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const uint64_t limit = (1ull << 53) / 10;
	int neg = 0, n_digits = 0, e = 0, x = 0, n_exp = 0, exp_neg = 0;
	uint64_t m = 0;
	double v;

	if (FLT_EVAL_METHOD != 0)
		return 0;
	if (s < end && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	for (; s < end && *s >= '0' && *s <= '9' && m < limit; s++, n_digits++)
		m = m * 10 + (uint64_t)(*s - '0');
	if (s < end && *s == '.')
		for (s++; s < end && *s >= '0' && *s <= '9' && m < limit; s++, n_digits++, e--)
			m = m * 10 + (uint64_t)(*s - '0');
	if (!n_digits)
		return 0;
	if (s < end && (*s == 'e' || *s == 'E')) {
		if (++s < end && (*s == '-' || *s == '+'))
			exp_neg = *s++ == '-';
		for (; s < end && *s >= '0' && *s <= '9' && n_exp < 4; s++, n_exp++)
			x = x * 10 + (*s - '0');
		if (!n_exp)
			return 0;
		e += exp_neg ? -x : x;
	}
	if (s != end || e < -22 || e > 22)
		return 0;
	v = e < 0 ? (double)m / pow10[-e] : (double)m * pow10[e];
	*out = neg ? -v : v;
	return 1;
}

/* Splits `term<TAB>idf` (at the last tab) or `term idf` (at the last space,
 * as jieba does) and reads the number, which must fill its field and be
 * finite. line is NUL-terminated at len. 0 if malformed. (load() refuses a
 * negative value too: it would invert the vote of every bit.) */
static int parse_line(char *line, size_t len, locale_t c_locale, size_t *term_len,
		      double *value)
{
	char *sep = memrchr(line, '\t', len), *end;

	if (!sep)
		sep = memrchr(line, ' ', len);
	if (!sep || sep + 1 == line + len)
		return 0;
	if (!parse_decimal_fast(sep + 1, line + len, value)) {
		*value = strtod_l(sep + 1, &end, c_locale);
		if (end != line + len || !isfinite(*value))
			return 0;
	}
	*term_len = (size_t)(sep - line);
	return 1;
}

/* Lines parsed but not stored yet: their slots are being prefetched. */
#define LOAD_BATCH 16
struct load_entry {
	const char *term;
	size_t len;
	uint64_t key;
	double value;
};

/* Parses up to LOAD_BATCH entries into e[] and prefetches their slots; the
 * table does not move meanwhile (load() reserved it). Sets *n. */
static simhash_err load_batch(const simhash_idf *idf, sh_textfile *tf, locale_t c_locale,
			      struct load_entry *e, size_t *n, size_t *err_line)
{
	size_t len, k = 0;
	char *line;

	while (k < LOAD_BATCH && sh_textfile_next(tf, &line, &len)) {
		if (is_blank(line, len) || line[0] == '#')
			continue;
		if (!parse_line(line, len, c_locale, &e[k].len, &e[k].value) ||
		    e[k].len > UINT32_MAX || e[k].value < 0) {
			if (err_line)
				*err_line = tf->line;
			return SIMHASH_ECORRUPT;
		}
		e[k].term = line;
		e[k].key = sh_key_inline(line, e[k].len);
		if (idf->cap)
			__builtin_prefetch(&idf->slots[e[k].key & (idf->cap - 1)]);
		k++;
	}
	*n = k;
	return SIMHASH_OK;
}

static simhash_err load_lines(simhash_idf *idf, sh_textfile *tf, locale_t c_locale,
			      size_t *err_line)
{
	struct load_entry e[LOAD_BATCH];
	simhash_err err;
	size_t n;

	do {
		err = load_batch(idf, tf, c_locale, e, &n, err_line);
		for (size_t i = 0; i < n && !err; i++)
			err = idf_store(idf, e[i].key, e[i].term, e[i].len, e[i].value);
	} while (!err && n == LOAD_BATCH);
	return err;
}

simhash_err simhash_idf_load(const char *path, simhash_idf **out, simhash_error *e)
{
	simhash_idf *idf = NULL;
	sh_textfile tf;
	locale_t c_locale;
	simhash_err err;
	size_t line = 0;

	err = sh_textfile_load(&tf, path, out, e);
	if (err)
		return err;
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!c_locale) {
		err = SIMHASH_ENOMEM;
		goto out_free_file;
	}
	err = simhash_idf_new(&idf);
	if (!err) /* one allocation for the table and the terms, not 20 regrowths */
		err = idf_reserve(idf, sh_textfile_count_lines(&tf), tf.len);
	if (!err)
		err = load_lines(idf, &tf, c_locale, &line);
	if (err)
		goto out_free_idf;
	idf_refresh_median(idf);
	*out = idf;
	idf = NULL;
out_free_idf:
	simhash_idf_free(idf);
	freelocale(c_locale);
out_free_file:
	sh_textfile_free(&tf);
	return sh_textfile_fail(err, line, "expected term<TAB>idf with a finite idf >= 0", e);
}

/* ---------------------------------------------------------------- save */

/* Terms that would not read back as themselves are left out: a tab or newline
 * would split the line, a leading '#' makes a comment, and a leading byte
 * order mark on the first line would be dropped. */
static int term_saveable(const char *t, size_t len)
{
	if (memchr(t, '\t', len) || memchr(t, '\n', len))
		return 0;
	if (len && t[0] == '#')
		return 0;
	return !(len >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0);
}

static int cmp_term(const void *a, const void *b, void *arg)
{
	const simhash_idf *idf = arg;
	const struct idf_term *x = slot_term(idf, *(const struct idf_slot *const *)a);
	const struct idf_term *y = slot_term(idf, *(const struct idf_slot *const *)b);
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(term_bytes(idf, x), term_bytes(idf, y), n) : 0;

	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

/* The valued slots, sorted by term bytes; *out is freed by the caller. */
static simhash_err sorted_slots(const simhash_idf *idf, const struct idf_slot ***out, size_t *n)
{
	const struct idf_slot **v;
	size_t k = 0;

	v = malloc((idf->n_valued ? idf->n_valued : 1) * sizeof *v);
	if (!v)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; i < idf->cap; i++)
		if (idf->slots[i].flags & SLOT_VALUED)
			v[k++] = &idf->slots[i];
	assert(k == idf->n_valued);
	qsort_r(v, k, sizeof *v, cmp_term, (void *)idf);
	*out = v;
	*n = k;
	return SIMHASH_OK;
}

/* Appends `term<TAB>idf` lines to a buffer and flushes it to the file in
 * blocks of about 64 KB; e gets the detail of a failed write. */
static simhash_err write_lines(const simhash_idf *idf, simhash_outfile *f, locale_t c_locale,
			       simhash_error *e)
{
	const struct idf_slot **v;
	simhash_err err;
	char *buf;
	size_t n, used = 0, cap = 1 << 16;
	locale_t old;

	err = sorted_slots(idf, &v, &n);
	if (err)
		return sh_error_code(e, err);
	buf = malloc(cap);
	if (!buf) {
		free(v);
		return sh_error_code(e, SIMHASH_ENOMEM);
	}
	old = uselocale(c_locale); /* %.17g must write '.', whatever the caller's locale */
	for (size_t i = 0; i < n && !err; i++) {
		const struct idf_term *t = slot_term(idf, v[i]);
		const char *bytes = term_bytes(idf, t);
		char num[40];
		int k;

		if (!term_saveable(bytes, t->len))
			continue;
		k = snprintf(num, sizeof num, "\t%.17g\n", v[i]->idf);
		if (cap - used < t->len + (size_t)k) {
			err = simhash_outfile_write(f, buf, used, e);
			used = 0;
		}
		if (!err && cap < t->len + (size_t)k)
			err = simhash_outfile_write(f, bytes, t->len, e); /* a huge term */
		else if (!err) {
			memcpy(buf + used, bytes, t->len);
			used += t->len;
		}
		if (!err) {
			memcpy(buf + used, num, (size_t)k);
			used += (size_t)k;
		}
	}
	if (!err && used)
		err = simhash_outfile_write(f, buf, used, e);
	uselocale(old);
	free(buf);
	free(v);
	return err;
}

/* Writes through simhash_outfile (common/file.c), so a reader sees the old
 * table or the new one, never a part; an existing file keeps its mode. */
simhash_err simhash_idf_save(const simhash_idf *idf, const char *path, simhash_error *e)
{
	simhash_outfile *f;
	locale_t c_locale;
	simhash_err err;

	if (!idf || !path || !*path)
		return sh_error_code(e, SIMHASH_EINVAL);
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!c_locale)
		return sh_error_code(e, SIMHASH_ENOMEM);
	err = simhash_outfile_open(path, &f, e);
	if (err == SIMHASH_EINVAL) {
		err = SIMHASH_EIO; /* a directory, a dangling link: not writable here */
		if (e)
			e->code = err;
	}
	if (!err) {
		err = write_lines(idf, f, c_locale, e);
		if (err)
			simhash_outfile_abort(f);
		else
			err = simhash_outfile_commit(f, e);
	}
	freelocale(c_locale);
	return err;
}

/* ---------------------------------------------------------------- each */

/* Sorted by term bytes, so a table serialized through it (the store's "idf"
 * record) is the same bytes whatever the order of adds or the table layout. */
simhash_err simhash_idf_each(const simhash_idf *idf, simhash_idf_fn fn, void *arg)
{
	const struct idf_slot **v;
	simhash_err err;
	size_t n;

	if (!idf || !fn)
		return SIMHASH_EINVAL;
	err = sorted_slots(idf, &v, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const struct idf_term *t = slot_term(idf, v[i]);

		if (fn(term_bytes(idf, t), t->len, v[i]->idf, arg))
			break;
	}
	free(v);
	return SIMHASH_OK;
}

simhash_err sh_idf_reserve(simhash_idf *idf, size_t n_terms, size_t n_bytes)
{
	return idf_reserve(idf, n_terms, n_bytes);
}

double sh_idf_default(const simhash_idf *idf)
{
	return idf_default(idf);
}
