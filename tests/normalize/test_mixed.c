/* test_mixed.c - the vector body of text mixing ASCII and three-byte
 * characters (lib/normalize/mixed.c) gives the normalizer's text to the byte:
 * characters, offsets and classes, against the same normalizer with its
 * vector paths off (character by character, ICU for what the table lacks).
 *
 * The texts are random mixes of what stops or steers the vector body: Han
 * characters (simplified, traditional that t2s folds, a page seen for the
 * first time), CJK punctuation, fullwidth forms that the table maps once ICU
 * has given their mapping, ASCII words, digits, spaces, punctuation and
 * controls, runs of separators, an ASCII letter before a combining mark (they compose), format
 * characters, two- and four-byte characters, kana, Hangul, invalid bytes
 * (overlong, surrogate, truncated), and runs of 64 ASCII bytes and more. Each
 * text is normalized twice by the same normalizer (the table's pages are
 * filled by the first), whole and fed in random pieces, under the configs
 * the body runs with and some it must leave alone. */
#include <stdint.h>
#include "test.h"
#include "simhash.h"
#include "common/internal.h"
#include "normalize/mixed.h"
#include "same_text.h"

static const char *const pieces[] = {
	"\xe4\xb8\xad", "\xe6\x96\x87", "\xe7\x9a\x84", "\xe4\xba\xba", "\xe5\x9c\x8b", /* 中 文 的 人 國 */
	"\xe8\xaa\xaa", "\xe9\x97\x9c", "\xe9\xbe\x8d", "\xe4\xb9\x80", "\xe9\xbf\x95", /* 說 關 龍 乀 鿕 */
	"\xe3\x80\x82", "\xe3\x80\x81", "\xe2\x80\x9c", "\xe2\x80\x9d", "\xe3\x80\x8a", /* 。 、 “ ” 《 */
	"\xef\xbc\x8c", "\xef\xbc\x88", "\xef\xbc\x9a", "\xef\xbc\xa1", "\xef\xbc\x91", /* ， （ ： Ａ １ */
	"\xe3\x80\x80", "\xe2\x80\xa6", "\xe2\x94\x80", "\xe2\x91\xa0", "\xe3\x8c\x80", /* ideographic space … ─ ① ㌀ */
	"\xe3\x81\x82", "\xe3\x82\xa2", "\xe3\x83\xbc", "\xea\xb0\x80", "\xef\xb7\xba", /* あ ア ー 가 ﷺ */
	"\xe2\x80\x8b", "\xc2\xad", "\xc3\xa9", "\xd0\xb6", "\xc2\xa0",               /* ZWSP SHY é ж NBSP */
	"\xf0\xa0\xae\xb7", "\xf0\x9f\x98\x80",                                       /* 𠮷 emoji */
	"e\xcc\x81", "A\xcc\x8a", "\xcc\x81", "a", "Z", "7", " ", "  ", ".", ",", "(", "\t", "\n",
	"\x01", "\x7f", "\xe0\x80\x80", "\xed\xa0\x80", "\xe4\xb8", "\xff", "\x80",
	"word ", "The ", "2024 ", "abc", "x",
	"       ", "\n   ", " -- ", "...", ",\t ", /* runs of separators (invariant 3) */
	"  =\xcc\xb8", "<\xcc\xb8", "\xcc\xb8", /* = and < compose with U+0338 (to U+2260, U+226E) */
};

static size_t random_text(char *s, size_t n_pieces)
{
	size_t len = 0;

	for (size_t i = 0; i < n_pieces; i++) {
		uint64_t r = test_rnd();
		const char *p;
		if (r % 16 == 0) { /* 64 ASCII bytes and more */
			for (size_t k = 0; k < 64 + r / 16 % 40; k++)
				s[len++] = "ab c1,D"[k % 7];
			continue;
		}
		/* Han characters most of the time, as in Chinese text */
		p = pieces[r / 16 % 4 ? r / 64 % 10 : r / 64 % (sizeof pieces / sizeof *pieces)];
		memcpy(s + len, p, strlen(p));
		len += strlen(p);
	}
	return len;
}

/* t normalized by n fed in random pieces, each cut where sh_norm_cut()
 * allows (as stream.c cuts them); 0 on failure. */
static int fed(sh_norm *n, const char *s, size_t len, sh_text *t)
{
	size_t bad = 0, at = 0;

	if (sh_norm_begin(n))
		return 0;
	while (at < len) {
		size_t k = 1 + test_rnd() % 97;
		if (k >= len - at || (k = sh_norm_cut((const uint8_t *)s + at, k)) == 0)
			k = len - at;
		if (sh_norm_feed(n, (const uint8_t *)s + at, k, &bad))
			return 0;
		at += k;
	}
	return sh_norm_end(n, t) == SIMHASH_OK;
}

static void check_config(const simhash_config *cfg, uint64_t seed)
{
	static char s[8 * 400 + 64 * 40];
	sh_norm *on = NULL, *off = NULL;
	unsigned differ = 0;

	CHECK(sh_norm_new(cfg, &on) == SIMHASH_OK);
	CHECK(sh_norm_new(cfg, &off) == SIMHASH_OK);
	if (!on || !off)
		goto out;
	sh_norm_set_simd(off, 0);
	test_rnd_seed(seed);
	for (int trial = 0; trial < 600; trial++) {
		size_t len = random_text(s, 1 + test_rnd() % (trial % 8 ? 60 : 400)), bad = 0;
		for (int pass = 0; pass < 2; pass++) {
			sh_text a, b;
			int ok = sh_norm_run(on, (const uint8_t *)s, len, &a, &bad) == SIMHASH_OK &&
				 sh_norm_run(off, (const uint8_t *)s, len, &b, &bad) == SIMHASH_OK;
			CHECK(ok);
			if (ok && !same_text(&a, &b) && differ++ < 3)
				fprintf(stderr, "seed %llx trial %d pass %d: texts differ\n",
					(unsigned long long)seed, trial, pass);
			ok = fed(on, s, len, &a) && fed(off, s, len, &b);
			CHECK(ok);
			if (ok && !same_text(&a, &b) && differ++ < 3)
				fprintf(stderr, "seed %llx trial %d pass %d: fed texts differ\n",
					(unsigned long long)seed, trial, pass);
		}
	}
	CHECK(differ == 0);
out:
	sh_norm_free(on);
	sh_norm_free(off);
}

static void test_vector_body_gives_the_same_text(void)
{
	simhash_config cfg;

	if (!sh_mixed_have())
		fprintf(stderr, "note: this CPU lacks AVX-512 VBMI2: mixed.c's body is not run, "
				"the scalar path is compared with itself\n");
	simhash_config_init(&cfg);
	check_config(&cfg, 0x3141);
	cfg.t2s = 0;
	check_config(&cfg, 0x5926);
	cfg.t2s = 1;
	cfg.casefold = 0;
	check_config(&cfg, 0x5358);
	/* configs the body leaves to the scalar path */
	simhash_config_init(&cfg);
	cfg.space = SIMHASH_SPACE_COLLAPSE;
	check_config(&cfg, 0x9793);
	simhash_config_init(&cfg);
	cfg.punct = SIMHASH_PUNCT_KEEP;
	cfg.max_repeat = 2;
	check_config(&cfg, 0x2384);
}

TEST_MAIN("norm_mixed", TEST(test_vector_body_gives_the_same_text))
