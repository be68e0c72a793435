/* compat.c - bit-exact compatibility with the Python package `simhash` 2.1.2
 * (Simhash(x, f=64 or 128).value; docs/compat.md says what it computes).
 *
 * Text: Python's str.lower(), then only the code points that Python's `\w`
 * matches (isalnum() or '_'), joined; the features are its 4-code-point windows
 * (a string of 3 or fewer is one feature, itself), each weighing its number of
 * occurrences; MD5 of the feature's UTF-8, the last f/8 digest bytes read
 * big-endian; bit j is 1 iff the weight voting for it is > total / 2.
 *
 * Python 3.11 (which made the reference vectors) has Unicode 14 and ICU has a
 * newer one, so a code point newer than 14.0 is treated as Python sees it:
 * unassigned, not a word character, no case mapping, neither cased nor
 * case-ignorable. The lowercase mapping is written out as CPython's
 * lower_ucs4() is (full mapping, Final_Sigma by its handle_capital_sigma() rule)
 * on ICU's per-character data: no UTF-16 copy and no int32_t length limit.
 *
 * Workload: whole documents, up to hundreds of MB, and many short ones. Text
 * weights are integers, so the vote is a sum and the order of the windows does
 * not matter: every window is a unit vote, counted bit-sliced (vote.h). MD5 is
 * the cost (about one window per character, most of them new in Chinese).
 * With AVX-512 or AVX2 every window is hashed, 32 at once, from words
 * prepared in registers (text_direct(), sh_md5_short_x32()): cheaper than a
 * lookup in a table larger than the caches. Without them, a table of
 * (4-gram, hash) stays in the handle from text to text, so each distinct
 * 4-gram is hashed about once per handle by the scalar MD5; it grows to a
 * limit, then starts empty again: memory stays bounded (8 MiB), time linear.
 *
 * Features: build_by_features() goes through numpy, and float weights make the
 * order of additions visible. We replay it: a weight <= 50 that is a Python int
 * joins a batch (a batch of 200 becomes one integer row of the list `sums`); any
 * other weight appends its own row (uint64 or float64); whenever `sums` reaches
 * 200 rows it is summed into one; the final np.sum adds the rows in list order,
 * in float64 if any row is float. The threshold count / 2 follows Python's own
 * arithmetic: an exact int until the first float weight, a double after it.
 *
 * Invariants: a used slot's h is the MD5 value of its 4-gram, so what a
 * previous call left in the table changes the speed of the next call, never
 * its result; the handle holds no other result of a previous call. A slot is
 * claimed and hashed in one pending_run(), so a call the interrupt hook
 * stops (between two code points) keeps this too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include "../common/internal.h"
#include "vote.h"

#define PY_UNICODE_MAJOR 14     /* unicodedata.unidata_version of Python 3.11 */
#define GRAM_WIDTH 4            /* Simhash._slide(width=4) */
#define LARGE_WEIGHT_CUTOFF 50  /* Simhash.large_weight_cutoff */
#define BATCH_SIZE 200          /* Simhash.batch_size */
#define TABLE_MIN_SHIFT 12      /* 4-gram table: 4 Ki slots at first, */
#define TABLE_MAX_SHIFT 18      /* grown up to 256 Ki slots (8 MiB) */
#define SLOT_USED (1u << 31)    /* flag in gram_slot.k1, above its 21 bits */
#define PENDING_MAX 16
#define DIRECT_MAX 32     /* windows per call of sh_md5_short_x32() */
#define MAX_BITS 128

/* A 4-gram of code points (21 bits each): k0 holds the first three, k1 the
 * last and the flag SLOT_USED (0: an empty slot); h is its MD5 value. */
struct gram_slot {
	uint64_t k0;
	uint32_t k1;
	uint32_t pad;
	uint64_t h[2];
};

/* One entry of the Python list `sums`: a numpy row of f integers (uint64 once
 * summed) or of f doubles. Indexed by the bit of the value it votes for. */
struct sums_row {
	int is_float;
	union {
		uint64_t u[MAX_BITS];
		double d[MAX_BITS];
	} v;
};

struct sh_compat {
	sh_buf table[2];       /* struct gram_slot[]: in use, and the spare to grow into */
	size_t zeroed[2];      /* slots [0, zeroed[t]) of table[t] are initialised */
	int simd;              /* sh_md5_short_simd() level in use; 0: the table */
	int cur;               /* the table in use */
	unsigned shift;        /* log2 of its slots; 0 before the first text */
	size_t used;           /* its used slots */
	sh_buf rows;           /* struct sums_row[BATCH_SIZE] */
	uint64_t votes[MAX_BITS];
	sh_intr *intr;         /* the ctx's interrupt hook, or NULL */
};

/* ---------------------------------------------------------------- Unicode as Python 3.11 sees it */

static int py_unassigned(UChar32 c)
{
	UVersionInfo age;

	u_charAge(c, age);
	return age[0] > PY_UNICODE_MAJOR;
}

/* `\w` of Python's re for str patterns: str.isalnum() or '_'; isalnum() is
 * isalpha() (L*) or isnumeric() (any Numeric_Type, which includes Nd, Nl, No and
 * Unihan numerals). The pattern's extra range U+4E00..U+9FCC is all Lo. */
static int py_is_word(UChar32 c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		       (c >= '0' && c <= '9') || c == '_';
	if (c >= 0x4E00 && c <= 0x9FCC)
		return 1;
	if (py_unassigned(c))
		return 0;
	if (U_GET_GC_MASK(c) & U_GC_L_MASK)
		return 1;
	return u_getIntPropertyValue(c, UCHAR_NUMERIC_TYPE) != U_NT_NONE;
}

static int py_is_case_ignorable(UChar32 c)
{
	return !py_unassigned(c) && u_hasBinaryProperty(c, UCHAR_CASE_IGNORABLE);
}

static int py_is_cased(UChar32 c)
{
	return !py_unassigned(c) && u_hasBinaryProperty(c, UCHAR_CASED);
}

/* CPython's handle_capital_sigma(): U+03A3 at i lowercases to final sigma iff
 * \p{cased} \p{case-ignorable}* U+03A3 !(\p{case-ignorable}* \p{cased}).
 * Each scan stops at the first code point that is not case-ignorable, so every
 * run of them is read at most twice by its neighbouring sigmas: linear. */
static int py_final_sigma(const uint32_t *cps, size_t n, size_t i)
{
	size_t j;

	for (j = i; j > 0; j--)
		if (!py_is_case_ignorable((UChar32)cps[j - 1]))
			break;
	if (j == 0 || !py_is_cased((UChar32)cps[j - 1]))
		return 0;
	for (j = i + 1; j < n; j++)
		if (!py_is_case_ignorable((UChar32)cps[j]))
			break;
	return j == n || !py_is_cased((UChar32)cps[j]);
}

/* str.lower() of the code point at i, into out; returns how many (1 or 2).
 * The only unconditional multi-code-point lowercase mapping of SpecialCasing
 * is U+0130; every other one is the simple mapping. */
static size_t py_lower(const uint32_t *cps, size_t n, size_t i, uint32_t out[2])
{
	UChar32 c = (UChar32)cps[i];

	if (c < 0x80) {
		out[0] = (uint32_t)((c >= 'A' && c <= 'Z') ? c + 32 : c);
		return 1;
	}
	if (c == 0x130) {
		out[0] = 'i';
		out[1] = 0x307;
		return 2;
	}
	if (c == 0x3A3) {
		out[0] = py_final_sigma(cps, n, i) ? 0x3C2 : 0x3C3;
		return 1;
	}
	/* CJK ideographs (the bulk of Chinese text) and code points Python does not
	 * know have no case mapping. */
	if ((c >= 0x4E00 && c <= 0x9FFF) || c > 0x10FFFF || py_unassigned(c)) {
		out[0] = (uint32_t)c;
		return 1;
	}
	out[0] = (uint32_t)u_tolower(c);
	return 1;
}

/* ---------------------------------------------------------------- hashing and the bit vote */

static uint64_t be64(const uint8_t *p)
{
	uint64_t x = 0;

	for (int k = 0; k < 8; k++)
		x = x << 8 | p[k];
	return x;
}

/* hashfunc(f.encode('utf-8'))[-f_bytes:] as an integer: h[0] bits 0..63. */
static void md5_value(const void *data, size_t len, unsigned bits, uint64_t h[2])
{
	uint8_t dig[16];

	sh_md5(data, len, dig);
	h[0] = be64(dig + 8);
	h[1] = bits == 128 ? be64(dig) : 0;
}

static int hash_bit(const uint64_t h[2], unsigned j)
{
	return (int)(h[j >> 6] >> (j & 63) & 1);
}

static void fp_set(simhash_fp *out, unsigned j)
{
	out->w[j >> 6] |= 1ULL << (j & 63);
}

/* ---------------------------------------------------------------- text */

/* A window waiting for its table lookup: lookups go in groups of PENDING_MAX,
 * their slots prefetched first, so that a table larger than the caches costs
 * one memory latency per group rather than per window. */
struct pending {
	uint64_t k0, x;
	uint32_t k1;
};

struct scan {
	sh_compat *c;
	unsigned bits;
	uint32_t last[GRAM_WIDTH]; /* the last code points kept, oldest first */
	size_t n_kept;
	struct pending pend[PENDING_MAX];
	size_t n_pend;
	sh_vote v;                 /* one unit vote per window */
};

/* Makes table t hold 2^shift empty slots. */
static simhash_err table_ready(sh_compat *c, int t, unsigned shift)
{
	size_t slots = (size_t)1 << shift;
	simhash_err err;

	err = sh_buf_reserve(&c->table[t], slots * sizeof(struct gram_slot));
	if (err)
		return err;
	if (c->zeroed[t] < slots) {
		memset((struct gram_slot *)c->table[t].p + c->zeroed[t], 0,
		       (slots - c->zeroed[t]) * sizeof(struct gram_slot));
		c->zeroed[t] = slots;
	}
	return SIMHASH_OK;
}

static uint64_t gram_hash(uint64_t k0, uint32_t k1)
{
	return (k0 ^ (uint64_t)k1 * 0xC2B2AE3D27D4EB4FULL) * 0x9E3779B97F4A7C15ULL;
}

/* The slot of 4-gram (k0, k1) of hash x, or the empty slot where it belongs
 * (linear probing; the top bits of x pick the first slot). */
static struct gram_slot *table_find(struct gram_slot *slots, unsigned shift, uint64_t k0,
				    uint32_t k1, uint64_t x)
{
	size_t mask = ((size_t)1 << shift) - 1;
	size_t i = (size_t)(x >> (64 - shift));

	while ((slots[i].k1 & SLOT_USED) && (slots[i].k0 != k0 || (slots[i].k1 & ~SLOT_USED) != k1))
		i = (i + 1) & mask;
	return &slots[i];
}

/* Doubles the table into the spare buffer; at the size limit, or without
 * memory, forgets every hash instead (a cache: results never change). */
static void table_make_room(sh_compat *c)
{
	int t = !c->cur;
	unsigned shift = c->shift + 1;
	struct gram_slot *old = c->table[c->cur].p, *slots;

	if (shift > TABLE_MAX_SHIFT || table_ready(c, t, shift) != SIMHASH_OK) {
		memset(old, 0, ((size_t)1 << c->shift) * sizeof *old);
		c->used = 0;
		return;
	}
	/* (a table larger than the limit may be reached only by a failed wipe,
	 * which cannot happen: the wipe needs no memory) */
	slots = c->table[t].p;
	for (size_t k = 0; k < (size_t)1 << c->shift; k++) {
		uint32_t k1 = old[k].k1 & ~SLOT_USED;

		if (old[k].k1 & SLOT_USED)
			*table_find(slots, shift, old[k].k0, k1, gram_hash(old[k].k0, k1)) = old[k];
	}
	c->zeroed[c->cur] = 0; /* zeroed again before it is used */
	c->cur = t;
	c->shift = shift;
}

/* The 4-gram's UTF-8, as Python encodes the feature string; returns its bytes. */
static size_t gram_utf8(uint64_t k0, uint32_t k1, uint8_t out[4 * GRAM_WIDTH])
{
	uint32_t cps[GRAM_WIDTH] = { (uint32_t)(k0 & 0x1FFFFF), (uint32_t)(k0 >> 21 & 0x1FFFFF),
				     (uint32_t)(k0 >> 42 & 0x1FFFFF), k1 };
	size_t len = 0;

	for (int k = 0; k < GRAM_WIDTH; k++)
		len += sh_utf8_put(out + len, cps[k]);
	return len;
}

/* The windows waiting in s->pend vote: each finds or claims its 4-gram's
 * slot; the new 4-grams get their MD5 values sixteen at a time where the CPU
 * has AVX-512 (one at a time otherwise), then every window votes in order.
 * The table grows only after the group, so the slots stay put meanwhile
 * (PENDING_MAX more used slots than half the table leave it far from full). */
static void pending_run(struct scan *s)
{
	sh_compat *c = s->c;
	struct gram_slot *slots = c->table[c->cur].p, *g[PENDING_MAX], *miss[PENDING_MAX];
	uint8_t utf8[4 * GRAM_WIDTH];
	size_t n_miss = 0;

	for (size_t k = 0; k < s->n_pend; k++) {
		const struct pending *p = &s->pend[k];

		g[k] = table_find(slots, c->shift, p->k0, p->k1, p->x);
		if (g[k]->k1 & SLOT_USED)
			continue;
		g[k]->k0 = p->k0;
		g[k]->k1 = p->k1 | SLOT_USED;
		miss[n_miss++] = g[k];
	}
	for (size_t k = 0; k < n_miss; k++) {
		size_t n = gram_utf8(miss[k]->k0, miss[k]->k1 & ~SLOT_USED, utf8);

		md5_value(utf8, n, MAX_BITS, miss[k]->h);
	}
	for (size_t k = 0; k < s->n_pend; k++)
		sh_vote_add(&s->v, g[k]->h[0], g[k]->h[1]);
	s->n_pend = 0;
	c->used += n_miss;
	while (c->used > ((size_t)1 << c->shift) / 2)
		table_make_room(c);
}

static void gram_add(struct scan *s)
{
	struct pending *p = &s->pend[s->n_pend++];
	sh_compat *c = s->c;

	p->k0 = s->last[0] | (uint64_t)s->last[1] << 21 | (uint64_t)s->last[2] << 42;
	p->k1 = s->last[3];
	p->x = gram_hash(p->k0, p->k1);
	__builtin_prefetch((struct gram_slot *)c->table[c->cur].p + (p->x >> (64 - c->shift)), 1);
	if (s->n_pend == PENDING_MAX)
		pending_run(s);
}

static uint32_t bswap32(uint32_t x)
{
	return x >> 24 | (x >> 8 & 0xFF00) | (x << 8 & 0xFF0000) | x << 24;
}

/* The UTF-8 of cp as a word, byte k in bits 8k..8k+7; *len its bytes. */
static uint32_t utf8_word(uint32_t cp, unsigned *len)
{
	if (cp < 0x80) {
		*len = 1;
		return cp;
	}
	if (cp < 0x800) {
		*len = 2;
		return (0xC0 | cp >> 6) | (0x80 | (cp & 0x3F)) << 8;
	}
	if (cp < 0x10000) {
		*len = 3;
		return (0xE0 | cp >> 12) | (0x80 | (cp >> 6 & 0x3F)) << 8 |
		       (0x80 | (cp & 0x3F)) << 16;
	}
	*len = 4;
	return (0xF0 | cp >> 18) | (0x80 | (cp >> 12 & 0x3F)) << 8 |
	       (0x80 | (cp >> 6 & 0x3F)) << 16 | (0x80 | (cp & 0x3F)) << 24;
}

/* With SIMD MD5 every window is hashed, sixteen at once (cheaper than a
 * lookup in a table larger than the caches): the window's UTF-8 is kept as a
 * 128-bit little-endian number in registers, the newest code point's bytes
 * shifted in and the oldest's out, and written as the words of its MD5 block.
 * The windows vote in order. */
struct direct {
	uint32_t w[5][DIRECT_MAX], bitlen[DIRECT_MAX];
};

static void direct_run(const struct direct *d, size_t n, int level, sh_vote *v)
{
	uint32_t st[4][DIRECT_MAX];

	sh_md5_short_x32(level, d->w, d->bitlen, st);
	/* digest bytes 8..15 big-endian are state words 2, 3; bytes 0..7 words 0, 1 */
	for (size_t l = 0; l < n; l++)
		sh_vote_add(v, (uint64_t)bswap32(st[2][l]) << 32 | bswap32(st[3][l]),
			    (uint64_t)bswap32(st[0][l]) << 32 | bswap32(st[1][l]));
}

/* Python's `\w` on ASCII: letters, digits and '_'. */
static const uint8_t ascii_word[128] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['_'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
	['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
	['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
	['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
	['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

#define KEPT_MAX 512 /* code points kept per pass of windows_emit() */

/* The code points kept, as UTF-8 words and lengths: the windows are built
 * from them in a second pass, each independently of the previous one (no
 * serial chain through a shifting window). The last GRAM_WIDTH - 1 are carried
 * over from pass to pass. */
struct kept {
	uint32_t e[KEPT_MAX];
	uint8_t len[KEPT_MAX];
	size_t n, done; /* entries; the windows ending before done are emitted */
	size_t n_kept, n_pend;
};

static void windows_emit(struct kept *k, struct direct *d, int level, sh_vote *v)
{
	for (size_t j = k->done; j < k->n; j++) {
		unsigned l0 = k->len[j - 3], l1 = k->len[j - 2], l2 = k->len[j - 1];
		unsigned total = l0 + l1 + l2 + k->len[j];
		unsigned __int128 m = k->e[j - 3] | (unsigned __int128)k->e[j - 2] << (8 * l0) |
				      (unsigned __int128)k->e[j - 1] << (8 * (l0 + l1)) |
				      (unsigned __int128)k->e[j] << (8 * (l0 + l1 + l2));
		size_t l = k->n_pend;

		if (total < 16)
			m |= (unsigned __int128)0x80 << (8 * total);
		d->w[0][l] = (uint32_t)m;
		d->w[1][l] = (uint32_t)(m >> 32);
		d->w[2][l] = (uint32_t)(m >> 64);
		d->w[3][l] = (uint32_t)(m >> 96);
		d->w[4][l] = total < 16 ? 0 : 0x80;
		d->bitlen[l] = total * 8;
		if (++k->n_pend == DIRECT_MAX) {
			direct_run(d, DIRECT_MAX, level, v);
			k->n_pend = 0;
		}
	}
	k->done = k->n > GRAM_WIDTH - 1 ? k->n : GRAM_WIDTH - 1;
}

/* Appends cp if keep (0 or 1), without a branch on keep, which spaces and
 * punctuation would make unpredictable. */
static inline void kept_push(struct kept *k, uint32_t cp, unsigned keep, struct direct *d,
			     int level, sh_vote *v)
{
	unsigned len;

	k->e[k->n] = utf8_word(cp, &len);
	k->len[k->n] = (uint8_t)len;
	k->n += keep;
	k->n_kept += keep;
	if (k->n == KEPT_MAX) {
		windows_emit(k, d, level, v);
		for (size_t j = 0; j < GRAM_WIDTH - 1; j++) {
			k->e[j] = k->e[KEPT_MAX - (GRAM_WIDTH - 1) + j];
			k->len[j] = k->len[KEPT_MAX - (GRAM_WIDTH - 1) + j];
		}
		k->n = k->done = GRAM_WIDTH - 1;
	}
}

/* The windows of cps through the SIMD MD5 into v; returns how many code
 * points were kept, and in *tail the UTF-8 of the last (at most) four, *tail_len
 * bytes. */
static size_t text_direct(sh_compat *c, const uint32_t *cps, size_t n, sh_vote *v,
			  uint8_t tail[4 * GRAM_WIDTH], size_t *tail_len, int *stop)
{
	struct direct d;
	struct kept k;
	uint32_t low[2];
	int level = c->simd;
	size_t first, len = 0, poll_at = sh_intr_step(c->intr);

	k.n = k.n_kept = k.n_pend = 0;
	k.done = GRAM_WIDTH - 1;
	for (size_t i = 0; i < n; i++) {
		uint32_t c0 = cps[i];

		if (sh_intr_at(c->intr, i, &poll_at)) {
			*stop = 1;
			return 0;
		}
		/* ASCII and the CJK block (most text) without a call: each lowercases
		 * to itself (ASCII capitals aside), and is a word character or not
		 * by its range alone */
		if (c0 < 0x80) {
			kept_push(&k, c0 + ((c0 - 'A' < 26u) << 5), ascii_word[c0], &d, level, v);
		} else if (c0 >= 0x4E00 && c0 <= 0x9FCC) {
			kept_push(&k, c0, 1, &d, level, v);
		} else {
			size_t nl = py_lower(cps, n, i, low);

			for (size_t j = 0; j < nl; j++)
				kept_push(&k, low[j], (unsigned)py_is_word((UChar32)low[j]), &d,
					  level, v);
		}
	}
	windows_emit(&k, &d, level, v);
	if (k.n_pend)
		direct_run(&d, k.n_pend, level, v);
	/* the last kept code points (all of them when fewer than four) */
	first = k.n > GRAM_WIDTH ? k.n - GRAM_WIDTH : 0;
	for (size_t j = first; j < k.n; j++)
		for (unsigned b = 0; b < k.len[j]; b++)
			tail[len++] = (uint8_t)(k.e[j] >> (8 * b));
	*tail_len = len;
	return k.n_kept;
}

static void keep(struct scan *s, uint32_t cp)
{
	if (!py_is_word((UChar32)cp))
		return;
	s->last[0] = s->last[1];
	s->last[1] = s->last[2];
	s->last[2] = s->last[3];
	s->last[3] = cp;
	if (++s->n_kept >= GRAM_WIDTH)
		gram_add(s);
}

simhash_err sh_compat_text(sh_compat *c, const uint32_t *cps, size_t n, unsigned bits,
			   simhash_fp *out)
{
	struct scan s = { .c = c, .bits = bits };
	uint32_t low[2];
	uint8_t utf8[4 * GRAM_WIDTH];
	size_t len = 0;
	simhash_fp fp = { .bits = bits };
	uint64_t h[2];
	simhash_err err;
	int stop = 0;
	size_t poll_at;

	if (!c || !out || (!cps && n) || (bits != 64 && bits != 128))
		return SIMHASH_EINVAL;
	poll_at = sh_intr_step(c->intr);
	if (!c->simd && !c->shift) {
		err = table_ready(c, 0, TABLE_MIN_SHIFT);
		if (err)
			return err;
		c->cur = 0;
		c->shift = TABLE_MIN_SHIFT;
	}
	sh_vote_init(&s.v, bits);

	if (c->simd) {
		s.n_kept = text_direct(c, cps, n, &s.v, utf8, &len, &stop);
		if (stop)
			return SIMHASH_EINTR;
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t k;

			if (sh_intr_at(c->intr, i, &poll_at))
				return SIMHASH_EINTR;
			k = py_lower(cps, n, i, low);

			keep(&s, low[0]);
			if (k == 2)
				keep(&s, low[1]);
		}
		for (size_t k = GRAM_WIDTH - (s.n_kept < GRAM_WIDTH ? s.n_kept : GRAM_WIDTH);
		     k < GRAM_WIDTH; k++)
			len += sh_utf8_put(utf8 + len, s.last[k]);
	}

	if (s.n_kept < GRAM_WIDTH) {
		/* One feature, the whole string, weight 1 of 1: the value is its hash. */
		md5_value(utf8, len, bits, h);
		fp.w[0] = h[0];
		fp.w[1] = h[1];
		*out = fp;
		return SIMHASH_OK;
	}

	if (!c->simd)
		pending_run(&s);
	/* numpy compares the uint64 sums with the float count / 2 in float64:
	 * for counts below 2^53 that is 2 * sum > count, what the vote does */
	sh_vote_finish(&s.v, bits, &fp);
	*out = fp;
	return SIMHASH_OK;
}

/* ---------------------------------------------------------------- features */

/* Python's `count += w`: an int while every weight was an int, then a float. */
struct py_count {
	int is_float;
	__int128 i;
	double d;
};

static void count_add(struct py_count *cnt, int w_is_int, int64_t iw, double w)
{
	if (w_is_int) {
		if (cnt->is_float)
			cnt->d += (double)iw;
		else
			cnt->i += iw;
	} else {
		if (!cnt->is_float)
			cnt->d = (double)cnt->i; /* int + float converts the int, rounding once */
		cnt->is_float = 1;
		cnt->d += w;
	}
}

/* The contract: an integral weight within +-2^53 is a Python int. */
static int weight_as_int(double w, int64_t *iw)
{
	if (w != floor(w) || fabs(w) > 9007199254740992.0)
		return 0;
	*iw = (int64_t)w;
	return 1;
}

static double row_get(const struct sums_row *r, unsigned j)
{
	return r->is_float ? r->v.d[j] : (double)r->v.u[j];
}

/* np.sum(sums, 0) into rows[0]: np.array() promotes the list to float64 if any
 * row is float, then the rows are added one after another, in list order
 * (axis 0 of a C-contiguous array is not summed pairwise). Integer rows are
 * unsigned and wrap like numpy's uint64. */
static void rows_sum(struct sums_row *rows, size_t n_rows, unsigned bits)
{
	int any_float = 0;

	for (size_t r = 0; r < n_rows; r++)
		any_float |= rows[r].is_float;
	if (any_float) {
		for (unsigned j = 0; j < bits; j++) {
			double acc = row_get(&rows[0], j);

			for (size_t r = 1; r < n_rows; r++)
				acc += row_get(&rows[r], j);
			rows[0].v.d[j] = acc;
		}
	} else {
		for (size_t r = 1; r < n_rows; r++)
			for (unsigned j = 0; j < bits; j++)
				rows[0].v.u[j] += rows[r].v.u[j];
	}
	rows[0].is_float = any_float;
}

/* sums.append(bitarray(h) * w): uint8 bits times a Python int gives an
 * unsigned row, times a float a float64 row (0 * w keeps w's sign of zero). */
static void row_from_hash(struct sums_row *r, const uint64_t h[2], unsigned bits, int w_is_int,
			  int64_t iw, double w)
{
	r->is_float = !w_is_int;
	for (unsigned j = 0; j < bits; j++) {
		if (w_is_int)
			r->v.u[j] = hash_bit(h, j) ? (uint64_t)iw : 0;
		else
			r->v.d[j] = (double)hash_bit(h, j) * w;
	}
}

static simhash_err features_check(const simhash_feature *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((!f[i].data && f[i].len) || !isfinite(f[i].weight))
			return SIMHASH_EINVAL;
	return SIMHASH_OK;
}

simhash_err sh_compat_features(sh_compat *c, const simhash_feature *f, size_t n, unsigned bits,
			       simhash_fp *out)
{
	struct py_count cnt = { 0 };
	struct sums_row *rows;
	size_t n_rows = 0, batch_len = 0, poll_at;
	simhash_fp fp = { .bits = bits };
	double half;
	simhash_err err;

	if (!c || !out || (!f && n) || (bits != 64 && bits != 128))
		return SIMHASH_EINVAL;
	err = features_check(f, n);
	if (err)
		return err;
	if (n == 0) {
		/* np.sum([]) is 0.0, not above 0 / 2: the value is 0. */
		*out = fp;
		return SIMHASH_OK;
	}
	err = sh_buf_reserve(&c->rows, BATCH_SIZE * sizeof(struct sums_row));
	if (err)
		return err;
	rows = c->rows.p;
	memset(c->votes, 0, sizeof c->votes); /* the pending batch */
	poll_at = sh_intr_step(c->intr);

	for (size_t i = 0; i < n; i++) {
		uint64_t h[2];
		int64_t iw = 0;
		int w_is_int;

		if (sh_intr_at(c->intr, i, &poll_at))
			return SIMHASH_EINTR;
		w_is_int = weight_as_int(f[i].weight, &iw);

		count_add(&cnt, w_is_int, iw, f[i].weight);
		md5_value(f[i].data, f[i].len, bits, h);
		if (!w_is_int || iw > LARGE_WEIGHT_CUTOFF) {
			row_from_hash(&rows[n_rows++], h, bits, w_is_int, iw, f[i].weight);
		} else {
			/* batch.append(h * w): bytes repeated w times, nothing if w <= 0,
			 * but the entry still counts towards the batch size. */
			for (unsigned j = 0; iw > 0 && j < bits; j++)
				c->votes[j] += (uint64_t)hash_bit(h, j) * (uint64_t)iw;
			if (++batch_len >= BATCH_SIZE) {
				rows[n_rows].is_float = 0;
				memcpy(rows[n_rows++].v.u, c->votes, sizeof c->votes);
				memset(c->votes, 0, sizeof c->votes);
				batch_len = 0;
			}
		}
		if (n_rows >= BATCH_SIZE) {
			rows_sum(rows, n_rows, bits);
			n_rows = 1;
		}
	}
	if (batch_len) {
		rows[n_rows].is_float = 0;
		memcpy(rows[n_rows++].v.u, c->votes, sizeof c->votes);
	}
	rows_sum(rows, n_rows, bits);

	/* combined_sums > count / 2, compared in float64. */
	half = cnt.is_float ? cnt.d / 2 : (double)cnt.i / 2;
	for (unsigned j = 0; j < bits; j++)
		if (row_get(&rows[0], j) > half)
			fp_set(&fp, j);
	*out = fp;
	return SIMHASH_OK;
}

/* ---------------------------------------------------------------- handle */

simhash_err sh_compat_new(sh_compat **out)
{
	/* MD5(""): a self-test of the hash every fingerprint here depends on. */
	static const uint8_t md5_empty[16] = { 0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
					       0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e };
	uint8_t dig[16];
	sh_compat *c;

	if (!out)
		return SIMHASH_EINVAL;
	sh_md5("", 0, dig);
	if (memcmp(dig, md5_empty, sizeof dig) != 0)
		return SIMHASH_EDEP;
	c = calloc(1, sizeof *c);
	if (!c)
		return SIMHASH_ENOMEM;
	c->simd = sh_md5_short_simd();
	*out = c;
	return SIMHASH_OK;
}

void sh_compat_set_intr(sh_compat *c, sh_intr *intr)
{
	if (c)
		c->intr = intr;
}

void sh_compat_set_simd(sh_compat *c, int on)
{
	if (c)
		c->simd = on ? sh_md5_short_simd() : 0;
}

void sh_compat_set_simd_level(sh_compat *c, int level)
{
	int top = sh_md5_short_simd();

	if (c)
		c->simd = level < 0 ? 0 : level > top ? top : level;
}

void sh_compat_free(sh_compat *c)
{
	if (!c)
		return;
	sh_buf_free(&c->table[0]);
	sh_buf_free(&c->table[1]);
	sh_buf_free(&c->rows);
	free(c);
}
