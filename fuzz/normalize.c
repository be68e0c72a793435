/* normalize.c - fuzz target for the text pipeline: normalization, tokenizers,
 * features and the bit vote, under a config picked by the input.
 *
 * Input: 3 config bytes (see pick_config), then the text. Shorter inputs use
 * the default config and are all text. The target aborts when one of these
 * breaks, each promised by simhash.h:
 *  1. a config that simhash_config_check accepts gives a ctx, one it rejects
 *     gives none;
 *  2. simhash_fingerprint returns SIMHASH_EUTF8 exactly when the text is not
 *     valid UTF-8 and the config rejects it, at the offset of the first invalid
 *     byte (checked without HTML, where offsets are the input's), and then
 *     leaves *out untouched; otherwise SIMHASH_OK;
 *  3. the fingerprint is deterministic, has cfg.bits bits and its unused high
 *     bits are zero; it formats and parses back to itself;
 *  4. simhash_features_each gives distinct, valid UTF-8 features with counts
 *     >= 1, the same twice; under integer weights (TF without cap, binary)
 *     fingerprinting those features with their weights gives the same
 *     fingerprint as the text;
 *  5. simhash_text_similarity of the two halves gives cosine and Jaccard in
 *     [0, 1], symmetric, and 1 for a text with itself;
 *  6. under the compat mode, features_each and text_similarity give
 *     SIMHASH_EINVAL, as documented.
 * Under libFuzzer a config's ctx is reused across inputs (see struct slot);
 * the replay driver makes a fresh one per input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simhash.h"

#define FAIL(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "normalize: invariant broken at %s:%d: ", __FILE__,   \
			__LINE__);                                                    \
		fprintf(stderr, __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                  \
		abort();                                                              \
	} while (0)

/* Offset of the first byte that is not part of valid UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF), or len: an oracle independent of lib/. */
static size_t utf8_first_invalid(const uint8_t *s, size_t len)
{
	size_t i = 0, n, k;
	uint32_t cp;

	while (i < len) {
		uint8_t c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (len - i <= n)
			return i;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return i;
		i += n + 1;
	}
	return len;
}

/* The config bytes, bit by bit:
 *   c0: 0-1 features (char, word, shingle, char), 2 ICU tokenizer, 3 html,
 *       4 t2s, 5-6 space (auto, collapse, drop, auto), 7 keep punctuation;
 *   c1: 0 reject invalid UTF-8, 1-2 bits (64, 32, 128, 64), 3 python-simhash
 *       compat, 4-5 weight (tf, logtf, binary, tf), 6-7 hash (xxh3, fnv1,
 *       fnv1a, md5);
 *   c2: 0-2 ngram (1..5), 3-4 max_repeat (0, 1, 2, 5), 5 no case folding,
 *       6 tf_cap 2, 7 stop words. */
static void pick_config(const uint8_t c[3], simhash_config *cfg, int *use_stopwords)
{
	static const unsigned widths[4] = {64, 32, 128, 64};
	static const simhash_weight weights[4] = {SIMHASH_WEIGHT_TF, SIMHASH_WEIGHT_LOGTF,
						  SIMHASH_WEIGHT_BINARY, SIMHASH_WEIGHT_TF};
	static const unsigned repeats[4] = {0, 1, 2, 5};

	cfg->features = (c[0] & 3) == 3 ? SIMHASH_FEATURES_CHAR : (simhash_features)(c[0] & 3);
	cfg->tokenizer = c[0] & 4 ? SIMHASH_TOKENIZER_ICU : SIMHASH_TOKENIZER_SIMPLE;
	cfg->html = !!(c[0] & 8);
	cfg->t2s = !!(c[0] & 16);
	cfg->space = (c[0] >> 5 & 3) == 3 ? SIMHASH_SPACE_AUTO : (simhash_space)(c[0] >> 5 & 3);
	cfg->punct = c[0] & 128 ? SIMHASH_PUNCT_KEEP : SIMHASH_PUNCT_DROP;

	cfg->utf8 = c[1] & 1 ? SIMHASH_UTF8_REJECT : SIMHASH_UTF8_REPLACE;
	cfg->bits = widths[c[1] >> 1 & 3];
	cfg->compat = c[1] & 8 ? SIMHASH_COMPAT_PYTHON_SIMHASH : SIMHASH_COMPAT_NONE;
	cfg->weight = weights[c[1] >> 4 & 3];
	cfg->hash = (simhash_hash)(c[1] >> 6 & 3);

	cfg->ngram = (c[2] & 7) % 5 + 1;
	cfg->max_repeat = repeats[c[2] >> 3 & 3];
	cfg->casefold = !(c[2] & 32);
	cfg->tf_cap = c[2] & 64 ? 2 : 0;
	*use_stopwords = !!(c[2] & 128);
}

static void check_fp(const simhash_fp *fp, unsigned bits)
{
	char hex[SIMHASH_HEX_MAX];
	simhash_fp back;
	size_t n;

	if (fp->bits != bits)
		FAIL("fingerprint has %u bits, config %u", fp->bits, bits);
	if (bits == 32 && (fp->w[0] >> 32 || fp->w[1]))
		FAIL("32-bit fingerprint with high bits %016llx %016llx",
		     (unsigned long long)fp->w[1], (unsigned long long)fp->w[0]);
	if (bits == 64 && fp->w[1])
		FAIL("64-bit fingerprint with w[1] = %016llx", (unsigned long long)fp->w[1]);
	n = simhash_fp_format(fp, hex);
	if (n != bits / 4 || strlen(hex) != n)
		FAIL("format gave %zu digits for %u bits", n, bits);
	if (simhash_fp_parse(hex, n, &back) != SIMHASH_OK || back.bits != fp->bits ||
	    back.w[0] != fp->w[0] || back.w[1] != fp->w[1])
		FAIL("fingerprint %s does not parse back", hex);
	if (simhash_hamming(fp, &back) != 0 || simhash_similarity(fp, &back) != 1.0)
		FAIL("fingerprint %s is not at distance 0 from itself", hex);
}

/* The features of one text, kept to compare two runs and to fingerprint. */
struct feats {
	simhash_feature *f;
	uint32_t *count;
	size_t n, cap;
	int oom;
};

static int collect(const char *data, size_t len, uint32_t count, void *arg)
{
	struct feats *fs = arg;
	simhash_feature *nf;
	uint32_t *nc;
	char *copy;

	if (len && !data)
		FAIL("feature of %zu bytes at NULL", len);
	if (count == 0)
		FAIL("feature with count 0");
	if (utf8_first_invalid((const uint8_t *)data, len) != len)
		FAIL("feature of %zu bytes is not valid UTF-8", len);
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 64;
		nf = realloc(fs->f, cap * sizeof *nf);
		if (!nf)
			goto out_oom;
		fs->f = nf;
		nc = realloc(fs->count, cap * sizeof *nc);
		if (!nc)
			goto out_oom;
		fs->count = nc;
		fs->cap = cap;
	}
	copy = malloc(len ? len : 1);
	if (!copy)
		goto out_oom;
	if (len)
		memcpy(copy, data, len);
	fs->f[fs->n].data = copy;
	fs->f[fs->n].len = len;
	fs->f[fs->n].weight = count;
	fs->count[fs->n] = count;
	fs->n++;
	return 0;

out_oom:
	fs->oom = 1;
	return 1;
}

static void feats_free(struct feats *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free((void *)fs->f[i].data);
	free(fs->f);
	free(fs->count);
}

static int cmp_feature(const void *a, const void *b)
{
	const simhash_feature *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->data, y->data, n) : 0;

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Distinct features, in order of first occurrence, the same on a second run. */
static void check_features(const struct feats *a, const struct feats *b)
{
	simhash_feature *sorted;
	size_t i;

	if (a->n != b->n)
		FAIL("features_each gave %zu then %zu features", a->n, b->n);
	for (i = 0; i < a->n; i++)
		if (a->count[i] != b->count[i] || cmp_feature(&a->f[i], &b->f[i]) != 0)
			FAIL("features_each differs at feature %zu on a second run", i);
	sorted = malloc((a->n ? a->n : 1) * sizeof *sorted);
	if (!sorted)
		return;
	memcpy(sorted, a->f, a->n * sizeof *sorted);
	qsort(sorted, a->n, sizeof *sorted, cmp_feature);
	for (i = 1; i < a->n; i++)
		if (cmp_feature(&sorted[i - 1], &sorted[i]) == 0)
			FAIL("feature \"%.*s\" reported twice", (int)sorted[i].len, sorted[i].data);
	free(sorted);
}

static void check_similarity(simhash_ctx *ctx, const simhash_config *cfg, const char *text,
			     size_t len)
{
	size_t half = len / 2;
	const char *a = text, *b = text + half;
	size_t a_len = half, b_len = len - half;
	double cos_ab = -2, jac_ab = -2, cos_ba = -2, jac_ba = -2, cos_aa = -2, jac_aa = -2;
	simhash_err err, err2;

	err = simhash_text_similarity(ctx, a, a_len, b, b_len, &cos_ab, &jac_ab, NULL);
	if (cfg->compat != SIMHASH_COMPAT_NONE) {
		if (err != SIMHASH_EINVAL)
			FAIL("text_similarity under the compat mode: %s", simhash_strerror(err));
		return;
	}
	if (err == SIMHASH_EUTF8 && cfg->utf8 == SIMHASH_UTF8_REJECT)
		return;
	if (err == SIMHASH_ENOMEM)
		return;
	if (err != SIMHASH_OK)
		FAIL("text_similarity: %s", simhash_strerror(err));
	if (!(cos_ab >= 0 && cos_ab <= 1) || !(jac_ab >= 0 && jac_ab <= 1))
		FAIL("similarity out of [0, 1]: cosine %.17g, jaccard %.17g", cos_ab, jac_ab);
	err = simhash_text_similarity(ctx, b, b_len, a, a_len, &cos_ba, &jac_ba, NULL);
	err2 = simhash_text_similarity(ctx, a, a_len, a, a_len, &cos_aa, &jac_aa, NULL);
	if (err == SIMHASH_ENOMEM || err2 == SIMHASH_ENOMEM)
		return;
	if (err != SIMHASH_OK || err2 != SIMHASH_OK)
		FAIL("text_similarity: %s / %s", simhash_strerror(err), simhash_strerror(err2));
	if (jac_ab != jac_ba || fabs(cos_ab - cos_ba) > 1e-12)
		FAIL("similarity not symmetric: cosine %.17g / %.17g, jaccard %.17g / %.17g",
		     cos_ab, cos_ba, jac_ab, jac_ba);
	if (jac_aa != 1.0 || fabs(cos_aa - 1.0) > 1e-9)
		FAIL("a text is not similar to itself: cosine %.17g, jaccard %.17g", cos_aa,
		     jac_aa);
	/* Either output may be NULL. */
	if (simhash_text_similarity(ctx, a, a_len, b, b_len, NULL, NULL, NULL) != SIMHASH_OK)
		FAIL("text_similarity with NULL outputs failed");
}

static void check_text(simhash_ctx *ctx, const simhash_config *cfg, const char *text,
		       size_t len)
{
	size_t bad = utf8_first_invalid((const uint8_t *)text, len);
	int rejects = bad != len && cfg->utf8 == SIMHASH_UTF8_REJECT;
	int compat = cfg->compat != SIMHASH_COMPAT_NONE;
	simhash_fp fp1, fp2, from_feats;
	struct feats fa = {0}, fb = {0};
	simhash_error e = { 0 };
	simhash_err err;

	memset(&fp1, 0xA5, sizeof fp1);
	err = simhash_fingerprint(ctx, text, len, &fp1, &e);
	if (err == SIMHASH_ENOMEM)
		return;
	if (rejects) {
		simhash_fp untouched;
		memset(&untouched, 0xA5, sizeof untouched);
		if (err != SIMHASH_EUTF8)
			FAIL("invalid UTF-8 at byte %zu accepted under reject: %s", bad,
			     simhash_strerror(err));
		if (memcmp(&fp1, &untouched, sizeof fp1) != 0)
			FAIL("*out written on SIMHASH_EUTF8");
		if (!cfg->html && (e.code != SIMHASH_EUTF8 || e.offset != bad))
			FAIL("error offset %llu, first invalid byte at %zu",
			     (unsigned long long)e.offset, bad);
		err = simhash_features_each(ctx, text, len, collect, &fa, NULL);
		if (err != (compat ? SIMHASH_EINVAL : SIMHASH_EUTF8))
			FAIL("features_each of invalid UTF-8 under reject: %s",
			     simhash_strerror(err));
		goto out_free;
	}
	if (err != SIMHASH_OK)
		FAIL("fingerprint: %s", simhash_strerror(err));
	check_fp(&fp1, cfg->bits);
	if (simhash_fingerprint(ctx, text, len, &fp2, NULL) != SIMHASH_OK)
		FAIL("second fingerprint failed");
	if (fp1.bits != fp2.bits || fp1.w[0] != fp2.w[0] || fp1.w[1] != fp2.w[1])
		FAIL("fingerprint not deterministic");

	err = simhash_features_each(ctx, text, len, collect, &fa, NULL);
	if (compat) {
		if (err != SIMHASH_EINVAL)
			FAIL("features_each under the compat mode: %s", simhash_strerror(err));
		goto out_free;
	}
	if (err == SIMHASH_ENOMEM || fa.oom)
		goto out_free;
	if (err != SIMHASH_OK)
		FAIL("features_each: %s", simhash_strerror(err));
	err = simhash_features_each(ctx, text, len, collect, &fb, NULL);
	if (err == SIMHASH_ENOMEM || fb.oom)
		goto out_free;
	if (err != SIMHASH_OK)
		FAIL("second features_each: %s", simhash_strerror(err));
	check_features(&fa, &fb);

	/* Count weights are integers, so both votes are exact whatever the order.
	 * Auto features take MinHash bits, not the votes of their features. */
	if (fa.n > 0 && cfg->features != SIMHASH_FEATURES_AUTO &&
	    ((cfg->weight == SIMHASH_WEIGHT_TF && cfg->tf_cap == 0) ||
			 cfg->weight == SIMHASH_WEIGHT_BINARY)) {
		if (cfg->weight == SIMHASH_WEIGHT_BINARY)
			for (size_t i = 0; i < fa.n; i++)
				fa.f[i].weight = 1;
		err = simhash_fingerprint_features(ctx, fa.f, fa.n, &from_feats);
		if (err != SIMHASH_OK && err != SIMHASH_ENOMEM)
			FAIL("fingerprint_features: %s", simhash_strerror(err));
		if (err == SIMHASH_OK && (from_feats.bits != fp1.bits ||
					  from_feats.w[0] != fp1.w[0] || from_feats.w[1] != fp1.w[1]))
			FAIL("text and its %zu features fingerprint differently", fa.n);
	}
out_free:
	feats_free(&fa);
	feats_free(&fb);
	check_similarity(ctx, cfg, text, len);
}


/* A ctx and what it was made from. Under libFuzzer each config's ctx is made
 * once and reused, which also checks that a ctx gives the same answers after
 * other texts: t2s configs each have their own slot (128 for the config
 * bytes, one for inputs too short to have them), the others share 512 slots by
 * hash, a newcomer replacing the old. The replay driver (SIMHASH_LIBFUZZER
 * undefined) makes a fresh ctx for every input, so a corpus file always
 * reproduces on its own. */
struct slot {
	uint32_t key; /* the config bytes, or NO_CONFIG_BYTES */
	simhash_config cfg;
	simhash_stopwords *sw;
	simhash_ctx *ctx;
};
#define NO_CONFIG_BYTES 0x1000000u
#ifdef SIMHASH_LIBFUZZER
#define N_SLOTS 512 /* a power of two; one more for the defaults */
static struct slot slots[N_SLOTS + 1];

static void free_slots(void)
{
	for (size_t i = 0; i <= N_SLOTS; i++) {
		struct slot *s = &slots[i];
		simhash_ctx_free(s->ctx);
		simhash_stopwords_free(s->sw);
		s->ctx = NULL;
		s->sw = NULL;
	}
}

static struct slot *slot_for(uint32_t key)
{
	if (key == NO_CONFIG_BYTES)
		return &slots[N_SLOTS];
	return &slots[(key * 2654435761u) >> (32 - __builtin_ctz(N_SLOTS))];
}
#endif

static void slot_clear(struct slot *s)
{
	simhash_ctx_free(s->ctx);
	simhash_stopwords_free(s->sw);
	s->ctx = NULL;
	s->sw = NULL;
}

/* Fills s with a ctx for the config bytes c (NULL: the defaults); returns 0
 * if the config is invalid (checked to be refused) or memory ran out. */
static int slot_fill(struct slot *s, uint32_t key, const uint8_t *c)
{
	static const char *const stop[] = {"the", "a", "of", "的", "了", "是"};
	simhash_err check, err;
	int use_stopwords = 0;

	s->key = key;
	simhash_config_init(&s->cfg);
	if (c)
		pick_config(c, &s->cfg, &use_stopwords);
	if (use_stopwords) {
		if (simhash_stopwords_new(&s->sw) != SIMHASH_OK)
			return 0;
		for (size_t i = 0; i < sizeof stop / sizeof stop[0]; i++)
			if (simhash_stopwords_add(s->sw, stop[i], strlen(stop[i])) != SIMHASH_OK)
				return 0;
		s->cfg.stopwords = s->sw;
	}
	check = simhash_config_check(&s->cfg);
	err = simhash_ctx_new(&s->cfg, &s->ctx);
	if (check != SIMHASH_OK) {
		if (err == SIMHASH_OK)
			FAIL("ctx made for a config that config_check rejects: %s",
			     simhash_strerror(check));
		s->ctx = NULL;
		return 0;
	}
	if (err == SIMHASH_ENOMEM) {
		s->ctx = NULL;
		return 0;
	}
	if (err != SIMHASH_OK || !s->ctx)
		FAIL("no ctx for a config that config_check accepts: %s", simhash_strerror(err));
	if (simhash_ctx_config(s->ctx)->bits != s->cfg.bits ||
	    simhash_ctx_config(s->ctx)->features != s->cfg.features)
		FAIL("simhash_ctx_config differs from the config given");
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *c = NULL;
	uint32_t key = NO_CONFIG_BYTES;
	struct slot *s;

	if (size >= 3) {
		c = data;
		key = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16;
		data += 3;
		size -= 3;
	}
#ifdef SIMHASH_LIBFUZZER
	static int registered;
	if (!registered && atexit(free_slots) == 0)
		registered = 1;
	s = slot_for(key);
	if (!s->ctx || s->key != key) {
		slot_clear(s);
		if (!slot_fill(s, key, c)) {
			slot_clear(s);
			return 0;
		}
	}
	check_text(s->ctx, &s->cfg, (const char *)data, size);
#else
	struct slot fresh = {0};
	s = &fresh;
	if (slot_fill(s, key, c))
		check_text(s->ctx, &s->cfg, (const char *)data, size);
	slot_clear(s);
#endif
	return 0;
}
