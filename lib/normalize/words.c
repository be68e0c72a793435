/* words.c - the words of a normalized text, as spans of its bytes.
 *
 * The simple tokenizer needs no dictionary: a word is a maximal run of word
 * characters (letters, digits, marks), and every CJK character is a word by
 * itself, the convention of the evaluation sets and of most Chinese SimHash
 * tools that do without a segmenter. The ICU tokenizer runs ICU's word break
 * iterator over the same normalized text: its dictionaries split Chinese,
 * Japanese, Thai, Lao, Khmer and Burmese into words; segments whose rule status
 * says "none" (spaces, punctuation) are skipped. Kept punctuation is never part
 * of a word in either. Both poll the ctx's interrupt hook as they go, per
 * character or per byte of the words found. */
#include <stdlib.h>
#include <unicode/ubrk.h>
#include <unicode/utext.h>
#include "../common/internal.h"

struct sh_words {
	simhash_tokenizer tok;
	UBreakIterator *bi;
	sh_buf spans;
	sh_intr *intr;
};

void sh_words_set_intr(sh_words *w, sh_intr *intr)
{
	w->intr = intr;
}

simhash_err sh_words_new(simhash_tokenizer tok, sh_words **out)
{
	sh_words *w = calloc(1, sizeof *w);
	UErrorCode st = U_ZERO_ERROR;

	if (!w)
		return SIMHASH_ENOMEM;
	w->tok = tok;
	if (tok == SIMHASH_TOKENIZER_ICU) {
		w->bi = ubrk_open(UBRK_WORD, "", NULL, 0, &st);
		if (U_FAILURE(st)) {
			free(w);
			return SIMHASH_EDEP;
		}
	}
	*out = w;
	return SIMHASH_OK;
}

void sh_words_free(sh_words *w)
{
	if (!w)
		return;
	if (w->bi)
		ubrk_close(w->bi);
	sh_buf_free(&w->spans);
	free(w);
}

static simhash_err simple(sh_words *w, const sh_text *t, size_t *n)
{
	sh_span *sp;
	size_t k = 0, i, j, poll_at = sh_intr_step(w->intr);

	/* at most one word per character */
	if (sh_buf_reserve(&w->spans, (t->n_chars + 1) * sizeof(sh_span)))
		return SIMHASH_ENOMEM;
	sp = w->spans.p;
	for (j = 0; sh_next_word(t, j, t->n_chars, &i, &j);) {
		if (sh_intr_at(w->intr, i, &poll_at))
			return SIMHASH_EINTR;
		sp[k].start = t->off[i];
		sp[k].len = t->off[j] - t->off[i];
		k++;
	}
	*n = k;
	return SIMHASH_OK;
}

static simhash_err icu(sh_words *w, const sh_text *t, size_t *n)
{
	UErrorCode st = U_ZERO_ERROR;
	UText *ut = utext_openUTF8(NULL, (const char *)t->s, (int64_t)t->len, &st);
	sh_span *sp;
	size_t k = 0, step = sh_intr_step(w->intr);
	int32_t a, b, poll_at;

	if (U_FAILURE(st))
		return SIMHASH_EDEP;
	if (sh_buf_reserve(&w->spans, (t->n_chars + 1) * sizeof(sh_span))) {
		utext_close(ut);
		return SIMHASH_ENOMEM;
	}
	sp = w->spans.p;
	ubrk_setUText(w->bi, ut, &st);
	if (U_FAILURE(st)) {
		utext_close(ut);
		return SIMHASH_EDEP;
	}
	/* With a UTF-8 UText, boundaries are byte offsets. */
	a = poll_at = ubrk_first(w->bi);
	while ((b = ubrk_next(w->bi)) != UBRK_DONE) {
		if (SH_UNLIKELY((size_t)(b - poll_at) >= step)) {
			int stop = sh_intr_poll(w->intr, (size_t)(b - poll_at));
			poll_at = b;
			if (stop) {
				utext_close(ut);
				return SIMHASH_EINTR;
			}
		}
		if (ubrk_getRuleStatus(w->bi) >= UBRK_WORD_NONE_LIMIT) {
			sp[k].start = (uint32_t)a;
			sp[k].len = (uint32_t)(b - a);
			k++;
		}
		a = b;
	}
	utext_close(ut);
	*n = k;
	return SIMHASH_OK;
}

simhash_err sh_words_run(sh_words *w, const sh_text *t, const sh_span **spans, size_t *n)
{
	simhash_err err = w->tok == SIMHASH_TOKENIZER_ICU ? icu(w, t, n) : simple(w, t, n);
	if (!err)
		*spans = w->spans.p;
	return err;
}
