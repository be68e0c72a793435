/* test_ascii.c - the vector paths of normalize.c's ASCII runs (AVX-512 VBMI2,
 * 64 bytes a step, and AVX2, 32 bytes) give the text the byte-at-a-time
 * loop gives, on random texts of every ASCII byte class (letters of both
 * cases, digits, punctuation, spaces, control characters, DEL) in runs of
 * every length around the vector widths, with a non-ASCII character now and
 * then, under each punctuation, space and case-folding rule. On a CPU
 * without the instructions both sides take the same path and the test
 * checks nothing new. */
#include <stdint.h>
#include "test.h"
#include "simhash.h"
#include "common/internal.h"
#include "same_text.h"

/* A random text of len bytes: mostly ASCII, word-like, with runs of spaces
 * and punctuation, and rare 2- and 3-byte characters. */
static size_t random_text(uint8_t *s, size_t len)
{
	static const char pool[] = "aeiouAEIOUzZqQ0189 ,.;!?'\"-()[]{}<>=/\\_@#\t\n\r\x01\x1f\x7f~";
	size_t k = 0;

	while (k + 3 <= len) {
		uint64_t r = test_rnd();
		if (r % 97 == 0) {
			k += sh_utf8_put(s + k, r % 2 ? 0xE9 : 0x4E2D); /* é, 中 */
			continue;
		}
		s[k++] = (uint8_t)pool[(r >> 8) % (sizeof pool - 1)];
	}
	return k;
}

static void test_vector_runs_equal_bytewise(void)
{
	static uint8_t text[2048];
	simhash_config cfg;
	unsigned trial;

	test_rnd_seed(0xa5c11);
	for (trial = 0; trial < 600; trial++) {
		sh_norm *vec = NULL, *one = NULL;
		size_t len = random_text(text, 1 + test_rnd() % (trial % 10 == 0 ? 2000 : 200));
		size_t bad = 0;
		sh_text a, b;

		simhash_config_init(&cfg);
		cfg.punct = (simhash_punct)(trial % 2);
		cfg.space = (simhash_space)(trial / 2 % 3);
		cfg.casefold = trial / 6 % 2;
		CHECK(sh_norm_new(&cfg, &vec) == SIMHASH_OK);
		CHECK(sh_norm_new(&cfg, &one) == SIMHASH_OK);
		if (vec && one) {
			sh_norm_set_simd(one, 0);
			CHECK(sh_norm_run(vec, text, len, &a, &bad) == SIMHASH_OK);
			CHECK(sh_norm_run(one, text, len, &b, &bad) == SIMHASH_OK);
			CHECK(same_text(&a, &b));
		}
		sh_norm_free(vec);
		sh_norm_free(one);
		if (t_cur_failed) {
			fprintf(stderr, "vector and bytewise ASCII runs differ: trial %u\n", trial);
			break;
		}
	}
}

TEST_MAIN("norm_ascii", TEST(test_vector_runs_equal_bytewise))
