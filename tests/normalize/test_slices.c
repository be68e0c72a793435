/* test_slices.c - a non-ASCII run is normalized in slices (16 MiB; a run
 * over 512 MiB used to fail with EINVAL). Slices must never show: with tiny
 * slices (1 to 40 bytes) every normalized text equals the one-slice result,
 * on random texts of combining marks, Hangul jamo, compatibility characters
 * that expand (U+FDFA), 4-byte characters, emoji, invalid bytes and CJK. */
#include <stdint.h>
#include "test.h"
#include "simhash.h"
#include "common/internal.h"
#include "same_text.h"

static const char *const pieces[] = {
	"e", " ", "\xcc\x81",               /* e, space, combining acute */
	"\xcc\xa3", "\xe1\x84\x80",         /* combining dot below, jamo L */
	"\xe1\x85\xa1", "\xe1\x86\xa8",     /* jamo V, jamo T */
	"\xef\xb7\xba",                     /* U+FDFA: expands to 18 characters */
	"\xe4\xb8\xad", "\xe6\x96\x87",     /* CJK */
	"\xf0\xa0\xae\xb7",                 /* U+20BB7 */
	"\xf0\x9f\x98\x80", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", /* emoji, skin tone */
	"\xe2\x84\xab", "\xef\xbc\xa1",     /* Angstrom sign, fullwidth A */
	"\xce\xa3", "\xc3\x9f",             /* Sigma, sharp s */
	"\xff", "\xe4\xb8", "\x80",         /* invalid bytes */
	"\xe2\x80\x8d",                     /* zero width joiner */
};

static size_t random_text(char *buf, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *p = pieces[test_rnd() % (sizeof pieces / sizeof *pieces)];
		size_t len = strlen(p);
		memcpy(buf + k, p, len);
		k += len;
	}
	return k;
}

static void test_tiny_slices_change_nothing(void)
{
	static char buf[8 * 2000];
	uint64_t seed = 0x511ce;
	simhash_config cfg;
	sh_norm *whole = NULL, *sliced = NULL;

	for (int trial = 0; trial < 400; trial++) {
		sh_text a, b;
		size_t len, bad = 0;

		test_rnd_seed(seed + (uint64_t)trial);
		simhash_config_init(&cfg);
		cfg.casefold = trial % 5 != 4;
		cfg.t2s = trial % 3 != 2;
		cfg.space = (simhash_space)(trial % 3);
		cfg.punct = (simhash_punct)(trial % 2);
		CHECK(sh_norm_new(&cfg, &whole) == SIMHASH_OK);
		CHECK(sh_norm_new(&cfg, &sliced) == SIMHASH_OK);
		if (!whole || !sliced)
			return;
		sh_norm_set_slice(sliced, 1 + test_rnd() % 40);
		len = random_text(buf, 1 + test_rnd() % 2000);
		CHECK(sh_norm_run(whole, (const uint8_t *)buf, len, &a, &bad) == SIMHASH_OK);
		CHECK(sh_norm_run(sliced, (const uint8_t *)buf, len, &b, &bad) == SIMHASH_OK);
		if (!same_text(&a, &b)) {
			fprintf(stderr, "slices change the text: seed %llx len %zu\n",
				(unsigned long long)(seed + (uint64_t)trial), len);
			t_cur_failed++;
		}
		sh_norm_free(whole);
		sh_norm_free(sliced);
		whole = sliced = NULL;
		if (t_cur_failed)
			break;
	}
}

TEST_MAIN("norm_slices", TEST(test_tiny_slices_change_nothing))
