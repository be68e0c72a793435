/* test_mapped.c - the characters normalize.c maps from its table instead of
 * asking ICU in context (SH_LAZY: not inert, but with a normalization boundary
 * on both sides, such as U+FF0C FULLWIDTH COMMA or U+00A0 NO-BREAK SPACE)
 * change nothing.
 *
 * Checked here: ICU's own NFKC_Casefold of such a character between
 * neighbours that compose or reorder with almost anything (a letter before, a
 * combining mark after, and the reverse) is that of the three parts
 * normalized apart, for every such character of the BMP, which is the
 * premise of the table; and the whole normalizer gives the same text with the
 * table mapping on and off, on random texts that mix those characters with
 * letters, marks, CJK, spaces and the characters around them, under several
 * configurations. */
#include <stdint.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include "test.h"
#include "simhash.h"
#include "common/internal.h"
#include "same_text.h"

static int lazy(const UNormalizer2 *nf, UChar32 c)
{
	return !unorm2_isInert(nf, c) && unorm2_hasBoundaryBefore(nf, c) &&
	       unorm2_hasBoundaryAfter(nf, c);
}

/* NFKC_Casefold of u[0..m) into out; its length, or -1. */
static int32_t nfkc_cf(const UNormalizer2 *nf, const UChar *u, int32_t m, UChar *out, int32_t cap)
{
	UErrorCode st = U_ZERO_ERROR;
	int32_t len = unorm2_normalize(nf, u, m, out, cap, &st);
	return U_FAILURE(st) ? -1 : len;
}

/* Whether ICU normalizes a c b as the concatenation of a, c and b each
 * normalized alone. */
static int splits(const UNormalizer2 *nf, UChar32 a, UChar c, UChar32 b)
{
	UChar whole[8], part[3][64], got[192], want[192];
	int32_t k = 0, m[3], lw, lg = 0;
	UChar32 cps[3] = {a, c, b};

	for (int i = 0; i < 3; i++) {
		UChar one[2];
		int32_t j = 0;
		U16_APPEND_UNSAFE(whole, k, cps[i]);
		U16_APPEND_UNSAFE(one, j, cps[i]);
		m[i] = nfkc_cf(nf, one, j, part[i], 64);
		if (m[i] < 0)
			return 0;
		memcpy(want + lg, part[i], (size_t)m[i] * sizeof *got);
		lg += m[i];
	}
	lw = nfkc_cf(nf, whole, k, got, 192);
	return lw == lg && !memcmp(got, want, (size_t)lw * sizeof *got);
}

static void test_icu_maps_them_alone(void)
{
	/* neighbours that interact with almost anything: a base letter, a
	 * combining acute, a Hangul LV syllable and a trailing jamo, a mark of
	 * class 220 */
	static const UChar32 before[] = {'e', 0x0301, 0xAC00, 0x1100, 0x0316};
	static const UChar32 after[] = {0x0301, 0x0316, 0x11A8, 0x1161, 'e', 0x3099};
	UErrorCode st = U_ZERO_ERROR;
	const UNormalizer2 *nf = unorm2_getNFKCCasefoldInstance(&st);
	unsigned n_lazy = 0, bad = 0;

	for (UChar32 c = 0x80; c < 0x10000; c++) {
		if ((c >= 0xD800 && c <= 0xDFFF) || !lazy(nf, c))
			continue;
		n_lazy++;
		for (size_t i = 0; i < sizeof before / sizeof *before; i++)
			for (size_t j = 0; j < sizeof after / sizeof *after; j++)
				if (!splits(nf, before[i], (UChar)c, after[j]) && bad++ < 5)
					fprintf(stderr, "U+%04X interacts with U+%04X or U+%04X\n",
						(unsigned)c, (unsigned)before[i], (unsigned)after[j]);
	}
	CHECK(bad == 0);
	/* the fullwidth forms and the compatibility characters are there */
	CHECK(n_lazy > 1000);
	CHECK(lazy(nf, 0xFF0C) && lazy(nf, 0x00A0) && lazy(nf, 0xFF08));
}

/* Mapped characters (one to one, to none, to several, to a CJK character
 * t2s folds) and what sits around them in real text. */
static const UChar32 pool[] = {
	0xFF0C, 0xFF08, 0xFF09, 0xFF1A, 0xFF1F, 0xFF01, 0x3000, 0x00A0, 0xFF10, 0xFF21, /* fullwidth */
	0x2026, 0x00B4, 0x00B5, 0x2122, 0x00BD, 0x00B2, 0x2460, 0x3300, 0xFDFA, 0xFB01, /* compatibility */
	0x00AD, 0x200B, 0x3164, 0xFFA0, 0xFE0F, 0x034F, 0x115F,                        /* ignorables */
	0x2F00, 0x2F9F, 0xF900, 0xFA10, 0x00C9, 0x0130, 0x1E9E, 0x03A3, /* radicals, CJK compat, letters */
	'a', 'E', ' ', ',', '1', 0x0301, 0x0316, 0x3099, 0xFF9E, 0x4E2D, 0x570B, 0x3002, /* neighbours */
	0x1100, 0x1161, 0x11A8, 0xAC00, 0x1F600, 0x0627, 0x0915, 0x093C,
};

static int32_t random_u16(UChar *u, int32_t n)
{
	int32_t k = 0;

	for (int32_t i = 0; i < n; i++) {
		UChar32 c = pool[test_rnd() % (sizeof pool / sizeof *pool)];
		U16_APPEND_UNSAFE(u, k, c);
	}
	return k;
}

static void test_normalizer_unchanged(void)
{
	static UChar u[2 * 600];
	static char s[4 * 2 * 600];
	simhash_config cfg;

	test_rnd_seed(0xf0c);
	for (int trial = 0; trial < 400; trial++) {
		UErrorCode st = U_ZERO_ERROR;
		int32_t m = random_u16(u, 1 + (int32_t)(test_rnd() % 600)), len;
		size_t bad = 0;
		sh_norm *on = NULL, *off = NULL;
		sh_text a, b;

		simhash_config_init(&cfg);
		cfg.t2s = trial % 2;
		cfg.punct = (simhash_punct)(trial / 2 % 2);
		cfg.space = (simhash_space)(trial / 4 % 3);
		cfg.max_repeat = trial / 12 % 2 ? 2 : 0;
		u_strToUTF8(s, (int32_t)sizeof s, &len, u, m, &st);
		CHECK(U_SUCCESS(st));
		CHECK(sh_norm_new(&cfg, &on) == SIMHASH_OK);
		CHECK(sh_norm_new(&cfg, &off) == SIMHASH_OK);
		if (on && off) {
			sh_norm_set_mapped(off, 0);
			CHECK(sh_norm_run(on, (const uint8_t *)s, (size_t)len, &a, &bad) == SIMHASH_OK);
			CHECK(sh_norm_run(off, (const uint8_t *)s, (size_t)len, &b, &bad) == SIMHASH_OK);
			CHECK(same_text(&a, &b));
			/* again, from the entries the first text stored */
			CHECK(sh_norm_run(on, (const uint8_t *)s, (size_t)len, &a, &bad) == SIMHASH_OK);
			CHECK(same_text(&a, &b));
		}
		sh_norm_free(on);
		sh_norm_free(off);
		if (t_cur_failed) {
			fprintf(stderr, "the table mapping changed the normalized text: trial %d\n", trial);
			break;
		}
	}
}

TEST_MAIN("norm_mapped", TEST(test_icu_maps_them_alone), TEST(test_normalizer_unchanged))
