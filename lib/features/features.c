/* features.c - normalized text -> features (character n-grams, words, word
 * shingles), and their distinct set with counts and weights.
 *
 * A feature is a byte string: a char n-gram is n consecutive characters of the
 * normalized text (spaces included), starting at each character; n is
 * ngram_cjk when that character is CJK (one character there is a syllable,
 * worth several letters), else ngram; windows that would run past the end
 * are dropped; a word is a span from words.c, a shingle
 * is n consecutive words joined by one space. Stop words are removed before
 * shingling. Features are produced by index, so the hot loop can read char
 * n-grams in place and the dedup table can store an index instead of a copy.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"

struct sh_feats;
static size_t longest_shingle(const struct sh_feats *f);

struct sh_feats {
	simhash_config cfg;
	sh_words *words;
	sh_buf kept;   /* words after stop words */
	sh_buf joined; /* scratch for one shingle */
	const sh_text *t;
	const sh_span *w;
	size_t n_words;
	size_t n;      /* features of the prepared text */
	unsigned ngc;  /* n of char n-grams starting at a CJK character */
	unsigned mode; /* 0 empty, 1 whole text, 2 n-grams, 3 words, 4 shingles, 5 all words */
	sh_intr *intr; /* the ctx's interrupt hook, or NULL */
};

void sh_feats_set_intr(sh_feats *f, sh_intr *intr)
{
	f->intr = intr;
	if (f->words)
		sh_words_set_intr(f->words, intr);
}

simhash_err sh_feats_new(const simhash_config *cfg, sh_feats **out)
{
	sh_feats *f = calloc(1, sizeof *f);
	simhash_err err;

	if (!f)
		return SIMHASH_ENOMEM;
	f->cfg = *cfg;
	f->ngc = cfg->ngram_cjk ? cfg->ngram_cjk : cfg->ngram;
	if (cfg->features != SIMHASH_FEATURES_CHAR) {
		err = sh_words_new(cfg->tokenizer, &f->words);
		if (err) {
			free(f);
			return err;
		}
	}
	*out = f;
	return SIMHASH_OK;
}

void sh_feats_free(sh_feats *f)
{
	if (!f)
		return;
	sh_words_free(f->words);
	sh_buf_free(&f->kept);
	sh_buf_free(&f->joined);
	free(f);
}

/* Drops stop words from the spans; *w and *n are updated. */
static simhash_err drop_stopwords(sh_feats *f, const sh_text *t, const sh_span **w, size_t *n)
{
	const simhash_stopwords *sw = f->cfg.stopwords;
	sh_span *kept;
	size_t k = 0, poll_at = sh_intr_step(f->intr);

	if (!sw)
		return SIMHASH_OK;
	if (sh_buf_reserve(&f->kept, (*n + 1) * sizeof(sh_span)))
		return SIMHASH_ENOMEM;
	kept = f->kept.p;
	for (size_t i = 0; i < *n; i++) {
		uint64_t key;
		if (sh_intr_at(f->intr, i, &poll_at))
			return SIMHASH_EINTR;
		key = sh_key_inline(t->s + (*w)[i].start, (*w)[i].len);
		if (!sh_stopwords_has_key(sw, key))
			kept[k++] = (*w)[i];
	}
	*w = kept;
	*n = k;
	return SIMHASH_OK;
}

/* Whether the char n-gram window at position i fits in the text. */
static int window_fits(const sh_feats *f, const sh_text *t, size_t i)
{
	return i + (t->cls[i] == SH_C_CJK ? f->ngc : f->cfg.ngram) <= t->n_chars;
}

simhash_err sh_feats_prepare(sh_feats *f, const sh_text *t, size_t *n)
{
	unsigned ng = f->cfg.ngram;
	simhash_err err;

	f->t = t;
	if (f->cfg.features == SIMHASH_FEATURES_CHAR) {
		unsigned lo = f->ngc < ng ? f->ngc : ng;
		int any = 0;
		if (t->n_chars >= lo) {
			/* Windows start at positions 0 .. n_chars - lo; near the end
			 * some are too long to fit and are dropped. Whether one
			 * fits: mostly the first one says so. */
			f->n = t->n_chars - lo + 1;
			for (size_t i = 0; i < f->n && !any; i++)
				any = window_fits(f, t, i);
		}
		if (t->n_chars == 0)
			f->mode = 0, f->n = 1;
		else if (!any)
			f->mode = 1, f->n = 1;
		else
			f->mode = 2;
		*n = f->n;
		return SIMHASH_OK;
	}
	err = sh_words_run(f->words, t, &f->w, &f->n_words);
	if (!err)
		err = drop_stopwords(f, t, &f->w, &f->n_words);
	if (err)
		return err;
	if (f->n_words == 0)
		f->mode = 0, f->n = 1;
	else if (f->cfg.features == SIMHASH_FEATURES_WORD)
		f->mode = 3, f->n = f->n_words;
	else if (f->n_words < ng)
		f->mode = 5, f->n = 1;
	else
		f->mode = 4, f->n = f->n_words - ng + 1;
	if (f->mode >= 4 && sh_buf_reserve(&f->joined, longest_shingle(f)))
		return SIMHASH_ENOMEM; /* honest: never hash a part of a shingle */
	*n = f->n;
	return SIMHASH_OK;
}

/* Bytes of the longest shingle plus one: k words and their separators. A
 * sliding sum over the word lengths. */
static size_t longest_shingle(const sh_feats *f)
{
	size_t k = f->mode == 5 ? f->n_words : f->cfg.ngram, sum = 0, best = 0;

	for (size_t i = 0; i < f->n_words; i++) {
		sum += f->w[i].len + 1;
		if (i >= k)
			sum -= f->w[i - k].len + 1;
		if (i + 1 >= k && sum > best)
			best = sum;
	}
	return best ? best : 1;
}

/* Words w[i..i+k) joined by single spaces, in place when the text already has
 * them that way, else copied into f->joined. */
static void join(sh_feats *f, size_t i, size_t k, const uint8_t **p, size_t *len)
{
	const sh_span *w = f->w + i;
	const uint8_t *s = f->t->s;
	size_t total = 0, j;
	uint8_t *o;

	for (j = 1; j < k; j++)
		if (w[j].start != w[j - 1].start + w[j - 1].len + 1 ||
		    s[w[j].start - 1] != ' ')
			break;
	if (j == k) {
		*p = s + w[0].start;
		*len = w[k - 1].start + w[k - 1].len - w[0].start;
		return;
	}
	for (j = 0; j < k; j++)
		total += w[j].len + 1;
	/* sh_feats_prepare reserved the longest shingle: join never fails. */
	o = f->joined.p;
	for (j = 0; j < k; j++) {
		memcpy(o, s + w[j].start, w[j].len);
		o += w[j].len;
		if (j + 1 < k)
			*o++ = ' ';
	}
	*p = f->joined.p;
	*len = total - 1;
}

int sh_feats_get(sh_feats *f, size_t i, const uint8_t **p, size_t *len)
{
	const sh_text *t = f->t;
	unsigned ng = f->cfg.ngram;

	switch (f->mode) {
	case 0:
		*p = (const uint8_t *)"";
		*len = 0;
		return 1;
	case 1:
		*p = t->s;
		*len = t->len;
		return 1;
	case 2: {
		size_t end = i + (t->cls[i] == SH_C_CJK ? f->ngc : ng);
		if (end > t->n_chars)
			return 0;
		*p = t->s + t->off[i];
		*len = t->off[end] - t->off[i];
		return 1;
	}
	case 3:
		*p = t->s + f->w[i].start;
		*len = f->w[i].len;
		return 1;
	default: {
		size_t k = f->mode == 5 ? f->n_words : ng;
		if (f->mode == 5)
			i = 0;
		join(f, i, k, p, len);
		return 1;
	}
	}
}

int sh_feats_none(const sh_feats *f)
{
	return f->mode == 0;
}

unsigned sh_feats_char_ngrams(const sh_feats *f, const sh_text **t, unsigned *ngc)
{
	if (f->mode != 2)
		return 0;
	*t = f->t;
	*ngc = f->ngc;
	return f->cfg.ngram;
}

/* ---- the distinct features: an open-addressing table keyed by sh_key() */

struct sh_dedup {
	sh_buf slots; /* uint32_t: 0 empty, else 1 + index into uniq */
	sh_buf uniq;  /* sh_uniq, in order of first occurrence */
	sh_intr *intr; /* the ctx's interrupt hook, or NULL */
};

void sh_dedup_set_intr(sh_dedup *d, sh_intr *intr)
{
	d->intr = intr;
}

simhash_err sh_dedup_new(sh_dedup **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? SIMHASH_OK : SIMHASH_ENOMEM;
}

void sh_dedup_free(sh_dedup *d)
{
	if (!d)
		return;
	sh_buf_free(&d->slots);
	sh_buf_free(&d->uniq);
	free(d);
}

/* Rebuilds the slots for cap (a power of two) from the k entries of uq. */
static void dedup_rehash(uint32_t *slots, size_t cap, const sh_uniq *uq, size_t k)
{
	memset(slots, 0, cap * sizeof(uint32_t));
	for (size_t j = 0; j < k; j++) {
		size_t h = uq[j].key & (cap - 1);

		while (slots[h])
			h = (h + 1) & (cap - 1);
		slots[h] = (uint32_t)(j + 1);
	}
}

/* The table grows with the distinct features, not with the occurrences:
 * memory is linear in what a text has that differs (a 100 MB text of 10M
 * occurrences and 1M distinct features needs the 1M). */
simhash_err sh_dedup_run(sh_dedup *d, sh_feats *f, size_t n, const sh_uniq **u, size_t *n_uniq)
{
	size_t cap = 16, k = 0, poll_at = sh_intr_step(d->intr);
	uint32_t *slots;
	sh_uniq *uq;

	if (n > UINT32_MAX / 4)
		return SIMHASH_EINVAL;
	/* room for every feature distinct at most half full, up to 1024 slots
	 * (beyond, the table grows with the distinct ones): a short text
	 * clears a few hundred bytes, not 4 KiB */
	while (cap < 1024 && cap < 2 * n)
		cap *= 2;
	if (sh_buf_reserve(&d->slots, cap * sizeof(uint32_t)) ||
	    sh_buf_reserve(&d->uniq, 512 * sizeof(sh_uniq)))
		return SIMHASH_ENOMEM;
	slots = d->slots.p;
	uq = d->uniq.p;
	memset(slots, 0, cap * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p;
		size_t len;
		uint64_t key;
		size_t h;
		if (sh_intr_at(d->intr, i, &poll_at))
			return SIMHASH_EINTR;
		if (!sh_feats_get(f, i, &p, &len))
			continue;
		key = sh_key_inline(p, len);
		for (h = key & (cap - 1); slots[h]; h = (h + 1) & (cap - 1))
			if (uq[slots[h] - 1].key == key)
				break;
		if (slots[h]) {
			uq[slots[h] - 1].count++;
			continue;
		}
		if (sh_buf_reserve(&d->uniq, (k + 1) * sizeof(sh_uniq)))
			return SIMHASH_ENOMEM;
		uq = d->uniq.p;
		uq[k].key = key;
		uq[k].count = 1;
		uq[k].first = (uint32_t)i;
		slots[h] = (uint32_t)++k;
		if (2 * k > cap) {
			if (sh_buf_reserve(&d->slots, 2 * cap * sizeof(uint32_t)))
				return SIMHASH_ENOMEM;
			cap *= 2;
			slots = d->slots.p;
			dedup_rehash(slots, cap, uq, k);
		}
	}
	*u = uq;
	*n_uniq = k;
	return SIMHASH_OK;
}

double sh_weight(const simhash_config *cfg, const sh_uniq *u)
{
	double tf = u->count;

	if (cfg->tf_cap && tf > cfg->tf_cap)
		tf = cfg->tf_cap;
	switch (cfg->weight) {
	case SIMHASH_WEIGHT_BINARY:
		return 1.0;
	case SIMHASH_WEIGHT_LOGTF:
		return 1.0 + log(tf);
	case SIMHASH_WEIGHT_TFIDF:
		return cfg->idf ? tf * sh_idf_get_key(cfg->idf, u->key) : tf;
	case SIMHASH_WEIGHT_TF:
	default:
		return tf;
	}
}
