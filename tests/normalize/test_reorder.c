/* test_reorder.c - long combining runs cost linear time and change nothing.
 *
 * ICU reorders the marks of a run by insertion, quadratic when their classes
 * alternate; reorder.c sorts long runs first. Checked here: ICU's
 * NFKC_Casefold of a text equals that of its reordered form (random texts of
 * marks of many classes, marks hidden in decompositions and compatibility
 * mappings, default ignorables, jamo, 4-byte marks); sh_norm gives the same
 * text with and without the reordering, also with blocks of one class far
 * longer than ICU is given of them, in tiny slices and fed in pieces; and
 * adversarial texts of 1 MiB each normalize within a bound per MB that a
 * quadratic cost exceeds a hundredfold (1 MiB of alternating marks took
 * 220 s before), and keep the fingerprints the code before the cut blocks
 * and the block paths gave them, with the vector paths on and off and given
 * in pieces. */
#include <stdint.h>
#include <time.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include "test.h"
#include "simhash.h"
#include "common/internal.h"
#include "same_text.h"
#include "normalize/reorder.h"

/* Mostly non-starters of many classes, and what hides or breaks them. */
static const UChar32 pool[] = {
	0x0301, 0x0316, 0x0300, 0x0327, 0x0323, 0x031B, 0x0345, 0x0344, 0x0340, /* Latin marks */
	0x0591, 0x05B0, 0x05BC, 0x05C4,                                         /* Hebrew */
	0x0F71, 0x0F72, 0x0F73, 0x0F75, 0x0F80, 0x0F81,                         /* Tibetan, some decomposing */
	0x3099, 0x309A, 0xFF9E, 0xFF9F,                                         /* voiced marks, compat */
	0x1D165, 0x1D167, 0x1D16D, 0x1D15E,                                     /* 4-byte marks, a decomposing symbol */
	0xFE0F, 0xFE00, 0x200D, 0x202B, 0x2067, 0x00AD,                         /* default ignorables */
	0x1100, 0x1161, 0x11A8, 0xAC00,                                         /* jamo and a syllable */
	'a', 'E', 0x1E09, 0x00C5, 0x212B, 0xFDFA, 0x1F600, 0x4E2D,              /* starters */
};

/* n random code points, long runs of marks likely: a starter is drawn 1 time in 40. */
static int32_t random_u16(UChar *u, int32_t n)
{
	const size_t n_marks = 35, n_pool = sizeof pool / sizeof *pool;
	int32_t k = 0;

	for (int32_t i = 0; i < n; i++) {
		UChar32 c = test_rnd() % 40 ? pool[test_rnd() % n_marks] : pool[test_rnd() % n_pool];
		U16_APPEND_UNSAFE(u, k, c);
	}
	return k;
}

static int32_t nfkc_cf(const UChar *u, int32_t m, UChar *out, int32_t cap)
{
	UErrorCode st = U_ZERO_ERROR;
	int32_t len = unorm2_normalize(unorm2_getNFKCCasefoldInstance(&st), u, m, out, cap, &st);
	return U_FAILURE(st) ? -1 : len;
}

static void test_icu_output_unchanged(void)
{
	static UChar u[2 * 3000], a[40 * 3000], b[40 * 3000];
	static sh_reorder_bufs bufs;
	UErrorCode st = U_ZERO_ERROR;
	const UNormalizer2 *nf = unorm2_getNFKCCasefoldInstance(&st);
	int reordered = 0;

	test_rnd_seed(0x2e02de2);
	for (int trial = 0; trial < 300; trial++) {
		int32_t m = random_u16(u, 1 + (int32_t)(test_rnd() % 3000)), rm, la, lb;
		if (!sh_reorder_needed(nf, &bufs, u, m))
			continue;
		reordered++;
		CHECK(sh_reorder(nf, u, m, &bufs, &rm) == SIMHASH_OK);
		la = nfkc_cf(u, m, a, (int32_t)(sizeof a / sizeof *a));
		lb = nfkc_cf(bufs.u16.p, rm, b, (int32_t)(sizeof b / sizeof *b));
		CHECK(la >= 0 && la == lb && !memcmp(a, b, (size_t)la * sizeof *a));
		if (t_cur_failed) {
			fprintf(stderr, "reordering changed ICU's output: trial %d\n", trial);
			break;
		}
	}
	CHECK(reordered > 200);
	sh_reorder_free(&bufs);
}

/* The whole normalizer, UTF-8 in, with and without the reordering. */
static void test_normalizer_unchanged(void)
{
	static UChar u[2 * 3000];
	static char s[4 * 2 * 3000];
	simhash_config cfg;
	sh_norm *on = NULL, *off = NULL;

	test_rnd_seed(0x5e9);
	for (int trial = 0; trial < 200; trial++) {
		UErrorCode st = U_ZERO_ERROR;
		int32_t m = random_u16(u, 1 + (int32_t)(test_rnd() % 3000)), len;
		size_t bad = 0;
		sh_text a, b;

		simhash_config_init(&cfg);
		cfg.t2s = trial % 2;
		cfg.punct = (simhash_punct)(trial % 2);
		u_strToUTF8(s, (int32_t)sizeof s, &len, u, m, &st);
		CHECK(U_SUCCESS(st));
		CHECK(sh_norm_new(&cfg, &on) == SIMHASH_OK);
		CHECK(sh_norm_new(&cfg, &off) == SIMHASH_OK);
		if (!on || !off)
			return;
		sh_norm_set_reorder(off, 0);
		CHECK(sh_norm_run(on, (const uint8_t *)s, (size_t)len, &a, &bad) == SIMHASH_OK);
		CHECK(sh_norm_run(off, (const uint8_t *)s, (size_t)len, &b, &bad) == SIMHASH_OK);
		CHECK(same_text(&a, &b));
		sh_norm_free(on);
		sh_norm_free(off);
		on = off = NULL;
		if (t_cur_failed) {
			fprintf(stderr, "reordering changed the normalized text: trial %d\n", trial);
			break;
		}
	}
}

/* Starters, and what follows a run: letters that compose with marks of
 * several classes (o: õ then ṍ; α: ἀ, ἂ, ᾂ), a syllable and jamo, a starter
 * without a boundary before it (U+0B3E after U+0B47; jamo V), CJK, ASCII. */
static const UChar32 starters[] = { 'a', 'o', 'e', 0x03B1, 0x03C9, 0xAC00, 0x1100, 0x0B47,
				    0x0B3E, 0x1161, 0x4E2D, ' ', '7', 0x1F600 };
/* Marks drawn into long blocks of one class: Latin and Greek (230, 220,
 * 240), Hebrew, Tibetan (some decomposing), voiced marks (U+FF9E hidden),
 * 4-byte marks, U+0344 (two class-230 marks), an ignorable. */
static const UChar32 block_marks[] = { 0x0301, 0x0300, 0x0303, 0x0313, 0x0345, 0x0316, 0x0323,
				       0x0302, 0x05B0, 0x0F71, 0x0F72, 0x0F73, 0x0F80, 0x3099,
				       0xFF9E, 0x1D165, 0x1D167, 0x1D16D, 0x0344, 0xFE0F };

/* Starters each followed by a run of 0 to 700 marks drawn from 1 to 3 of
 * block_marks[]: blocks of one class far longer than reorder.c keeps for
 * ICU, as UTF-8 into s; returns its length. */
static size_t long_blocks(char *s, size_t cap)
{
	const size_t n_st = sizeof starters / sizeof *starters;
	const size_t n_bm = sizeof block_marks / sizeof *block_marks;
	size_t k = 0;

	for (int seg = 1 + (int)(test_rnd() % 6); seg > 0; seg--) {
		UChar32 pick[3] = { block_marks[test_rnd() % n_bm], block_marks[test_rnd() % n_bm],
				    block_marks[test_rnd() % n_bm] };
		int n_pick = 1 + (int)(test_rnd() % 3), run = (int)(test_rnd() % 701);
		UBool err = 0;
		if (k + 4 * (size_t)(run + 2) > cap)
			break;
		U8_APPEND(s, k, cap, starters[test_rnd() % n_st], err);
		for (int i = 0; i < run; i++)
			U8_APPEND(s, k, cap, pick[test_rnd() % (unsigned)n_pick], err);
		(void)err; /* room was checked */
	}
	return k;
}

/* sh_norm of s[0..len) by n, whole or fed in pieces cut where
 * sh_norm_cut() allows. */
static simhash_err norm_of(sh_norm *n, const char *s, size_t len, int pieces, sh_text *out)
{
	const uint8_t *in = (const uint8_t *)s;
	size_t bad = 0, at = 0;
	simhash_err err;

	if (!pieces)
		return sh_norm_run(n, in, len, out, &bad);
	err = sh_norm_begin(n);
	while (!err && at < len) {
		size_t want = len - at > 1 ? 1 + test_rnd() % (len - at) : 1;
		size_t cut = want < len - at ? sh_norm_cut(in + at, want) : len - at;
		if (!cut)
			cut = len - at;
		err = sh_norm_feed(n, in + at, cut, &bad);
		at += cut;
	}
	return err ? err : sh_norm_end(n, out);
}

/* The whole normalizer with long blocks of one class (most of each block
 * left out of ICU's input and put back, reorder.c), against ICU on the
 * untouched text; also in tiny slices and fed in pieces, under the space,
 * punctuation and repeat rules. */
static void test_long_blocks_unchanged(void)
{
	static char s[4 * 6 * 702];
	simhash_config cfg;
	sh_norm *on = NULL, *off = NULL;

	test_rnd_seed(0xb10c5);
	for (int trial = 0; trial < 160; trial++) {
		size_t len = long_blocks(s, sizeof s);
		sh_text a, b;

		simhash_config_init(&cfg);
		cfg.t2s = trial % 2;
		cfg.punct = (simhash_punct)(trial % 2);
		cfg.max_repeat = trial % 5 == 0 ? 2 : 0;
		CHECK(sh_norm_new(&cfg, &on) == SIMHASH_OK);
		CHECK(sh_norm_new(&cfg, &off) == SIMHASH_OK);
		if (!on || !off)
			return;
		sh_norm_set_reorder(off, 0);
		if (trial % 4 == 1)
			sh_norm_set_slice(on, 1 + test_rnd() % 40);
		if (trial % 3 == 0)
			sh_norm_set_simd(on, 0); /* the sort's scalar pass per class */
		CHECK(norm_of(on, s, len, trial % 4 == 2, &a) == SIMHASH_OK);
		CHECK(norm_of(off, s, len, 0, &b) == SIMHASH_OK);
		CHECK(same_text(&a, &b));
		sh_norm_free(on);
		sh_norm_free(off);
		on = off = NULL;
		if (t_cur_failed) {
			fprintf(stderr, "long blocks changed the normalized text: trial %d\n", trial);
			break;
		}
	}
}

/* 1 MiB of "a" and then the code points of `unit` over and over. */
static size_t adversarial(char *buf, size_t cap, const UChar32 *unit, int n_unit)
{
	size_t k = 1;

	buf[0] = 'a';
	for (;;) {
		for (int i = 0; i < n_unit; i++) {
			char enc[4];
			int32_t len = 0;
			UBool err = 0;
			U8_APPEND(enc, len, 4, unit[i], err);
			(void)err; /* four bytes always fit */
			if (k + (size_t)len > cap)
				return k;
			memcpy(buf + k, enc, (size_t)len);
			k += (size_t)len;
		}
	}
}

void sh_ctx_set_simd(simhash_ctx *ctx, int on);

/* The fingerprint of buf[0..len) given in pieces of 1 byte to 300 KB (the
 * stream path: runs cross its slices and feeds), or 0 on an error. */
static uint64_t fp_in_pieces(simhash_ctx *ctx, const char *buf, size_t len)
{
	simhash_fp fp;
	size_t at = 0;

	if (simhash_fingerprint_begin(ctx) != SIMHASH_OK)
		return 0;
	while (at < len) {
		size_t k = 1 + test_rnd() % 300000;
		k = k < len - at ? k : len - at;
		if (simhash_fingerprint_update(ctx, buf + at, k, NULL) != SIMHASH_OK)
			return 0;
		at += k;
	}
	return simhash_fingerprint_final(ctx, &fp, NULL) == SIMHASH_OK ? fp.w[0] : 0;
}

/* The 1 MiB adversarial text buf of family `name` against its fingerprint
 * from before reorder.c cut blocks and the block paths came (`want`, the
 * 64-bit default): whole on ctx (the vector paths), with them off on sca,
 * and in pieces. */
static void check_known(simhash_ctx *ctx, simhash_ctx *sca, const char *name, const char *buf,
			size_t len, uint64_t got, uint64_t want)
{
	simhash_fp fp;
	uint64_t scalar = 0, pieces = fp_in_pieces(ctx, buf, len);

	if (simhash_fingerprint(sca, buf, len, &fp, NULL) == SIMHASH_OK)
		scalar = fp.w[0];
	if (got != want || scalar != want || pieces != want) {
		fprintf(stderr, "%s: %016llx, scalar %016llx, in pieces %016llx, want %016llx\n", name,
			(unsigned long long)got, (unsigned long long)scalar,
			(unsigned long long)pieces, (unsigned long long)want);
		t_cur_failed++;
	}
}

/* Seconds of CPU time per MiB that no linear normalization comes near (about
 * 0.02 s here, and a few times that under sanitizers), and that the quadratic
 * cost exceeds by far (220 s for 1 MiB of alternating marks). */
#define MAX_SECONDS_PER_MIB 4.0

static void test_adversarial_time(void)
{
	static const UChar32 alternating[] = {0x0301, 0x0316};
	static const UChar32 many_classes[] = {0x0301, 0x0316, 0x0345, 0x05B0, 0x0F71, 0x1D167, 0x0327};
	static const UChar32 hidden[] = {0x0301, 0xFF9E};      /* U+FF9E maps to a class-8 mark */
	static const UChar32 decomposing[] = {0x0F73, 0x0F80}; /* U+0F73: two marks, class 0 itself */
	static const UChar32 selectors[] = {0x0301, 0xFE0F, 0x0316, 0xFE00};
	static const UChar32 bidi[] = {0x202B, 0x0301, 0x2067, 0x0316, 0x202C};
	static const UChar32 jamo[] = {0x1100, 0x1161, 0x11A8, 0x1161};
	/* want: the fingerprint (64 bits, the defaults) the code before the
	 * cut blocks and the block paths gave */
	static const struct {
		const char *name;
		const UChar32 *unit;
		int n;
		uint64_t want;
	} cases[] = {
		{"alternating", alternating, 2, 0xced7c80a99d6e459ull},
		{"many classes", many_classes, 7, 0x37ed456f0ae4850full},
		{"hidden marks", hidden, 2, 0xded4ee60786853f7ull},
		{"decomposing", decomposing, 2, 0x49f510dc87369a5eull},
		{"selectors", selectors, 4, 0xced7c80a99d6e459ull},
		{"bidi", bidi, 5, 0xced7c80a99d6e459ull},
		{"jamo", jamo, 4, 0xf32c026cb6fc67b4ull},
	};
	const size_t cap = (size_t)1 << 20;
	char *buf = malloc(cap);
	simhash_config cfg;
	simhash_ctx *ctx = NULL, *sca = NULL;

	CHECK(buf != NULL);
	simhash_config_init(&cfg);
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	CHECK(simhash_ctx_new(&cfg, &sca) == SIMHASH_OK);
	if (sca)
		sh_ctx_set_simd(sca, 0);
	test_rnd_seed(0xad7);
	for (size_t i = 0; buf && ctx && sca && i < sizeof cases / sizeof *cases; i++) {
		size_t len = adversarial(buf, cap, cases[i].unit, cases[i].n);
		clock_t t0 = clock();
		simhash_fp fp;
		double s;

		CHECK(simhash_fingerprint(ctx, buf, len, &fp, NULL) == SIMHASH_OK);
		s = (double)(clock() - t0) / CLOCKS_PER_SEC / ((double)len / (1 << 20));
		if (s > MAX_SECONDS_PER_MIB) {
			fprintf(stderr, "%s: %.2f s of CPU per MiB\n", cases[i].name, s);
			t_cur_failed++;
		}
		check_known(ctx, sca, cases[i].name, buf, len, fp.w[0], cases[i].want);
	}
	simhash_ctx_free(ctx);
	simhash_ctx_free(sca);
	free(buf);
}

TEST_MAIN("norm_reorder", TEST(test_icu_output_unchanged), TEST(test_normalizer_unchanged),
	  TEST(test_long_blocks_unchanged), TEST(test_adversarial_time))
