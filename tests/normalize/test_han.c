/* test_han.c - the Han characters normalize.c takes from its 2-byte table
 * (U+4E00..U+9FFF) come out as ICU and the traditional-to-simplified map
 * make them, whether the table's page was filled before the text (a second
 * run), while the text is read (the first), or by a neighbour.
 *
 * The reference is built character by character: ICU's NFKC_Casefold of the
 * character alone, which must leave it as it is, then sh_t2s_map() when t2s
 * is on; every character is a CJK character of its own, with no space
 * between (the default space rule). */
#include <stdint.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include "test.h"
#include "simhash.h"
#include "common/internal.h"

enum { FIRST = 0x4E00, LAST = 0x9FFF };

/* Whether c is a Han letter that NFKC_Casefold leaves as it is. */
static int plain_han(const UNormalizer2 *nf, UChar32 c)
{
	UErrorCode st = U_ZERO_ERROR;
	UChar in = (UChar)c, out[8];
	int32_t k;

	if (u_charType(c) != U_OTHER_LETTER || uscript_getScript(c, &st) != USCRIPT_HAN)
		return 0;
	k = unorm2_normalize(nf, &in, 1, out, 8, &st);
	return U_SUCCESS(st) && k == 1 && out[0] == in;
}

/* Runs n over text twice and checks both outputs against want (n_want
 * characters, all CJK, character i at byte want_off[i], want_off[n_want]
 * bytes in all). */
static void check_runs(sh_norm *n, const uint8_t *text, size_t len, const uint8_t *want,
		       const uint32_t *want_off, size_t n_want)
{
	for (int run = 0; run < 2; run++) {
		sh_text t;
		size_t bad = 0, i, wrong = 0;

		CHECK(sh_norm_run(n, text, len, &t, &bad) == SIMHASH_OK);
		CHECK(t.n_chars == n_want && t.len == want_off[n_want]);
		if (t.n_chars != n_want || t.len != want_off[n_want])
			return;
		CHECK(!memcmp(t.s, want, t.len));
		for (i = 0; i < n_want; i++)
			if (t.off[i] != want_off[i] || t.cls[i] != SH_C_CJK)
				if (wrong++ < 3)
					fprintf(stderr, "run %d: character %zu differs\n", run, i);
		CHECK(wrong == 0);
	}
}

static void test_table_gives_icu_and_t2s(void)
{
	UErrorCode st = U_ZERO_ERROR;
	const UNormalizer2 *nf = unorm2_getNFKCCasefoldInstance(&st);
	uint8_t *text = malloc(3 * (LAST - FIRST + 1)), *want = malloc(4 * (LAST - FIRST + 1));
	uint32_t *want_off = malloc((LAST - FIRST + 2) * sizeof *want_off);
	sh_t2s *t2s = NULL;
	size_t n = 0;

	CHECK(U_SUCCESS(st) && text && want && want_off);
	CHECK(sh_t2s_new(&t2s) == SIMHASH_OK);
	if (!text || !want || !want_off || !t2s || U_FAILURE(st))
		goto out;
	for (UChar32 c = FIRST; c <= LAST; c++)
		if (plain_han(nf, c))
			n += sh_utf8_put(text + 3 * n, (uint32_t)c) == 3;
	CHECK(n > 20000); /* the block is nearly all assigned */
	for (int use_t2s = 0; use_t2s < 2; use_t2s++) {
		simhash_config cfg;
		sh_norm *norm = NULL;
		size_t changed = 0, w = 0;

		/* t2s takes a few of them out of the BMP (4 bytes of UTF-8) */
		for (size_t i = 0; i < n; i++) {
			uint32_t c, o;
			int bad;
			sh_utf8_next(text, 3 * n, 3 * i, &c, &bad);
			o = use_t2s ? sh_t2s_map(t2s, c) : c;
			changed += o != c;
			want_off[i] = (uint32_t)w;
			w += sh_utf8_put(want + w, o);
		}
		want_off[n] = (uint32_t)w;
		/* t2s folds some of them (U+570B to U+56FD), or it is not tested */
		CHECK(use_t2s ? changed > 1000 : changed == 0);
		simhash_config_init(&cfg);
		cfg.t2s = use_t2s;
		CHECK(sh_norm_new(&cfg, &norm) == SIMHASH_OK);
		if (norm)
			check_runs(norm, text, 3 * n, want, want_off, n);
		sh_norm_free(norm);
	}
out:
	sh_t2s_free(t2s);
	free(text);
	free(want);
	free(want_off);
}

TEST_MAIN("norm_han", TEST(test_table_gives_icu_and_t2s))
