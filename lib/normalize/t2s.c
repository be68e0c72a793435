/* t2s.c - traditional -> simplified Chinese, one character at a time.
 *
 * OpenCC converts phrase by phrase at about 10 MB/s; fingerprinting needs the
 * same answer for the same character wherever it stands, and much more speed.
 * So at creation every ideograph of the CJK Unified blocks (U+3400-U+4DBF,
 * U+4E00-U+9FFF, U+20000-U+2A6DF) is converted alone through OpenCC's own
 * "t2s" configuration (TSCharacters, the character table behind its phrase
 * table), and those that change to one other code point are kept in a sorted
 * table. A lookup is a bitmap test, then a binary search for the few that hit.
 * Characters that OpenCC maps only inside phrases keep their form.
 */
#include <stdlib.h>
#include <string.h>
#include <opencc/opencc.h>
#include "../common/internal.h"

struct sh_t2s {
	uint32_t *from, *to;
	size_t n;
	uint64_t bitmap[0x30000 / 64]; /* code points below U+30000 that map */
};

static const uint32_t ranges[][2] = {
	{0x3400, 0x4DBF},
	{0x4E00, 0x9FFF},
	{0x20000, 0x2A6DF},
};

/* Every candidate followed by a newline, so no two form a phrase. */
static char *candidates(size_t *len)
{
	size_t cap = 0, k = 0;
	char *buf;

	for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
		cap += (ranges[r][1] - ranges[r][0] + 1) * 5;
	buf = malloc(cap + 1);
	if (!buf)
		return NULL;
	for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
		for (uint32_t c = ranges[r][0]; c <= ranges[r][1]; c++) {
			k += sh_utf8_put((uint8_t *)buf + k, c);
			buf[k++] = '\n';
		}
	buf[k] = 0;
	*len = k;
	return buf;
}

/* Reads the converted lines back, pairing them with the candidates. */
static simhash_err collect(sh_t2s *t, const char *conv)
{
	size_t cap = 4096, r = 0;
	uint32_t c = ranges[0][0];
	const uint8_t *p = (const uint8_t *)conv;
	size_t plen = strlen(conv), i = 0;

	t->from = malloc(cap * sizeof *t->from);
	t->to = malloc(cap * sizeof *t->to);
	if (!t->from || !t->to)
		return SIMHASH_ENOMEM;
	while (i < plen && r < sizeof ranges / sizeof ranges[0]) {
		size_t e = i;
		uint32_t cp;
		int bad;
		while (e < plen && p[e] != '\n')
			e++;
		/* exactly one code point on the line, different from the input */
		if (e > i && sh_utf8_next(p, e, i, &cp, &bad) == e - i && !bad && cp != c) {
			if (t->n == cap) {
				uint32_t *f, *o;
				cap *= 2;
				f = realloc(t->from, cap * sizeof *f);
				if (f)
					t->from = f;
				o = realloc(t->to, cap * sizeof *o);
				if (o)
					t->to = o;
				if (!f || !o)
					return SIMHASH_ENOMEM;
			}
			t->from[t->n] = c;
			t->to[t->n++] = cp;
			t->bitmap[c >> 6] |= 1ull << (c & 63);
		}
		i = e + 1;
		if (++c > ranges[r][1] && ++r < sizeof ranges / sizeof ranges[0])
			c = ranges[r][0];
	}
	return SIMHASH_OK;
}

simhash_err sh_t2s_new(sh_t2s **out)
{
	sh_t2s *t = calloc(1, sizeof *t);
	opencc_t cc;
	char *in, *conv;
	size_t len;
	simhash_err err = SIMHASH_ENOMEM;

	if (!t)
		return SIMHASH_ENOMEM;
	cc = opencc_open("t2s.json");
	if (cc == (opencc_t)-1) {
		err = SIMHASH_EDEP;
		goto out_free;
	}
	in = candidates(&len);
	if (!in)
		goto out_close;
	conv = opencc_convert_utf8(cc, in, len);
	free(in);
	if (!conv) {
		err = SIMHASH_EDEP;
		goto out_close;
	}
	err = collect(t, conv);
	opencc_convert_utf8_free(conv);
	if (err)
		goto out_close;
	opencc_close(cc);
	*out = t;
	return SIMHASH_OK;
out_close:
	opencc_close(cc);
out_free:
	sh_t2s_free(t);
	return err;
}

void sh_t2s_free(sh_t2s *t)
{
	if (!t)
		return;
	free(t->from);
	free(t->to);
	free(t);
}

uint32_t sh_t2s_map(const sh_t2s *t, uint32_t cp)
{
	size_t lo = 0, hi = t->n;

	if (cp >= 0x30000 || !(t->bitmap[cp >> 6] >> (cp & 63) & 1))
		return cp;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->from[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return t->to[lo];
}
