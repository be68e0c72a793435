/* test_fingerprint.c - the text pipeline end to end: normalization rules,
 * feature rules, the two vote paths against a plain reference, and the
 * properties the issue asks for (stability, small moves for small edits,
 * unrelated texts about half the bits apart). */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <math.h>
#include "test.h"
#include "simhash.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	/* splitmix64: a seeded PRNG, so failures are reproducible */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* These tests check the char n-gram, word and shingle paths of scheme v1
 * against references: start from the v1 char features, not the v2 default
 * (test_auto.c checks that). */
static void v1_config_init(simhash_config *cfg)
{
	simhash_config_init(cfg);
	cfg->features = SIMHASH_FEATURES_CHAR;
}

static simhash_fp fp_cfg(const simhash_config *cfg, const char *text, size_t len)
{
	simhash_ctx *ctx = NULL;
	simhash_fp fp = {{0, 0}, 0};
	CHECK(simhash_ctx_new(cfg, &ctx) == SIMHASH_OK);
	if (ctx)
		CHECK(simhash_fingerprint(ctx, text, len, &fp, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctx);
	return fp;
}

static simhash_fp fp_default(const char *text)
{
	simhash_config cfg;
	v1_config_init(&cfg);
	return fp_cfg(&cfg, text, strlen(text));
}

static int same(simhash_fp a, simhash_fp b)
{
	return a.bits == b.bits && a.w[0] == b.w[0] && a.w[1] == b.w[1];
}

static void test_same_text_gives_same_fingerprint(void)
{
	const char *t = "The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸跳过了懒狗。";
	CHECK(same(fp_default(t), fp_default(t)));
	CHECK(fp_default(t).bits == 64);
}

static void test_nfc_and_nfd_give_same_fingerprint(void)
{
	CHECK(same(fp_default("caf\xc3\xa9 au lait"), fp_default("cafe\xcc\x81 au lait")));
	CHECK(same(fp_default("CAF\xc3\x89 AU LAIT"), fp_default("cafe\xcc\x81 au lait")));
}

static void test_fullwidth_and_case_fold_to_ascii(void)
{
	/* ＡＢＣ１２３ xyz */
	CHECK(same(fp_default("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3\xef\xbc\x91\xef\xbc\x92\xef\xbc\x93 XYZ"),
		   fp_default("abc123 xyz")));
	CHECK(same(fp_default("Stra\xc3\x9f" "e"), fp_default("strasse")));
}

static void test_traditional_folds_to_simplified(void)
{
	CHECK(same(fp_default("這是一個關於軟體測試的說明"), fp_default("这是一个关于软体测试的说明")));
	simhash_config cfg;
	v1_config_init(&cfg);
	cfg.t2s = 0;
	CHECK(!same(fp_cfg(&cfg, "這是一個測試", strlen("這是一個測試")),
		    fp_cfg(&cfg, "这是一个测试", strlen("这是一个测试"))));
}

static void test_spaces_and_punctuation_rules(void)
{
	/* punctuation separates like a space; runs collapse; ends trimmed */
	CHECK(same(fp_default("hello, world!"), fp_default("  hello   world ")));
	/* spaces next to CJK vanish under the default (auto) rule */
	CHECK(same(fp_default("你好 世界"), fp_default("你好世界")));
	CHECK(same(fp_default("你好，世界！"), fp_default("你好世界")));
	/* but not between two Latin words */
	CHECK(!same(fp_default("hello world"), fp_default("helloworld")));
}

static void test_empty_text_is_the_empty_feature(void)
{
	uint64_t h = XXH3_64bits("", 0);
	CHECK_EQ_U64(fp_default("").w[0], h);
	CHECK_EQ_U64(fp_default("  ...!!  ").w[0], h);
	CHECK(h != 0);
}

static void test_text_shorter_than_an_ngram_is_one_feature(void)
{
	CHECK_EQ_U64(fp_default("ab").w[0], XXH3_64bits("ab", 2));
	CHECK_EQ_U64(fp_default("AB!").w[0], XXH3_64bits("ab", 2));
	/* exactly one 3-gram: the fingerprint is its hash */
	CHECK_EQ_U64(fp_default("abc").w[0], XXH3_64bits("abc", 3));
	/* one CJK character is shorter than a CJK bigram */
	CHECK_EQ_U64(fp_default("中").w[0], XXH3_64bits("中", 3));
}

/* The reference: distinct features with counts from simhash_features_each,
 * a plain per-bit sum of +count / -count. */
struct ref {
	simhash_config cfg;
	long long acc[128];
};

static int ref_add(const char *data, size_t len, uint32_t count, void *arg)
{
	struct ref *r = arg;
	uint64_t h[2] = {0, 0};
	if (r->cfg.bits == 128) {
		XXH128_hash_t x = XXH3_128bits(data, len);
		h[0] = x.low64;
		h[1] = x.high64;
	} else {
		h[0] = XXH3_64bits(data, len);
	}
	for (unsigned j = 0; j < r->cfg.bits; j++)
		r->acc[j] += (h[j >> 6] >> (j & 63) & 1) ? (long long)count : -(long long)count;
	return 0;
}

static simhash_fp reference(const simhash_config *cfg, const char *text, size_t len)
{
	struct ref r;
	simhash_ctx *ctx = NULL;
	simhash_fp fp = {{0, 0}, cfg->bits};
	memset(&r, 0, sizeof r);
	r.cfg = *cfg;
	CHECK(simhash_ctx_new(cfg, &ctx) == SIMHASH_OK);
	CHECK(simhash_features_each(ctx, text, len, ref_add, &r, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctx);
	for (unsigned j = 0; j < cfg->bits; j++)
		if (r.acc[j] > 0)
			fp.w[j >> 6] |= 1ull << (j & 63);
	return fp;
}

static size_t random_text(char *buf, size_t words)
{
	static const char *const vocab[] = {"alpha", "beta", "Gamma", "delta", "中文", "測試",
					    "epsilon", "x", "über", "naïve", "数据", "42", "--",
					    "zeta", "eta", "θήτα", "iota", "kappa", "的", "。"};
	size_t k = 0;
	for (size_t i = 0; i < words; i++) {
		const char *w = vocab[rnd() % 20];
		memcpy(buf + k, w, strlen(w));
		k += strlen(w);
		if (rnd() % 3)
			buf[k++] = ' ';
	}
	buf[k] = 0;
	return k;
}

static void test_unit_votes_match_reference(void)
{
	static char buf[20000];
	static const unsigned widths[] = {32, 64, 128};
	for (int trial = 0; trial < 60; trial++) {
		simhash_config cfg;
		size_t len = random_text(buf, 1 + rnd() % 1500);
		v1_config_init(&cfg);
		cfg.bits = widths[trial % 3];
		cfg.ngram = 1 + (unsigned)(rnd() % 5);
		cfg.ngram_cjk = (unsigned)(rnd() % 4);
		if (trial % 4 == 3)
			cfg.features = SIMHASH_FEATURES_SHINGLE;
		simhash_fp a = fp_cfg(&cfg, buf, len), b = reference(&cfg, buf, len);
		if (cfg.bits == 32)
			b.w[0] &= 0xffffffffu;
		if (!same(a, b))
			fprintf(stderr, "trial %d (seed state %llx) bits %u n %u\n", trial,
				(unsigned long long)rng_state, cfg.bits, cfg.ngram);
		CHECK(same(a, b));
	}
}

static size_t random_doc(char *buf, size_t words, uint64_t seed)
{
	size_t k = 0;
	uint64_t save = rng_state;
	rng_state = seed;
	for (size_t i = 0; i < words; i++) {
		static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789";
		size_t wl = 3 + rnd() % 7;
		for (size_t c = 0; c < wl; c++)
			buf[k++] = alpha[rnd() % 36];
		buf[k++] = ' ';
	}
	buf[k] = 0;
	rng_state = save;
	return k;
}

static void test_fast_blocks_match_reference(void)
{
	/* long runs of ASCII and of CJK take the block paths of the hot loop */
	static char buf[60000];
	static const char *const cjk[] = {"中", "文", "數", "据", "测", "試", "的", "了", "。", "a"};
	for (int trial = 0; trial < 24; trial++) {
		simhash_config cfg;
		size_t k = 0, words = 200 + rnd() % 3000;
		for (size_t i = 0; i < words; i++) {
			const char *w = cjk[rnd() % (trial % 2 ? 10 : 8)];
			memcpy(buf + k, w, strlen(w));
			k += strlen(w);
			if (trial % 3 == 0 && rnd() % 50 == 0)
				buf[k++] = (char)('A' + rnd() % 26);
		}
		buf[k] = 0;
		v1_config_init(&cfg);
		cfg.ngram = 1 + (unsigned)(trial % 4);
		cfg.ngram_cjk = 1 + (unsigned)(trial % 3);
		CHECK(same(fp_cfg(&cfg, buf, k), reference(&cfg, buf, k)));
		k = random_doc(buf, 1 + rnd() % 3000, rnd());
		CHECK(same(fp_cfg(&cfg, buf, k), reference(&cfg, buf, k)));
	}
}

/* Every ASCII byte, weighted towards letters and separators. */
static size_t random_ascii(char *buf, size_t len)
{
	static const char some[] = "aAbBzZ09 ,.;_-\t\n\r\x7f\x01!?()[]{}\"'~";
	for (size_t i = 0; i < len; i++) {
		uint64_t r = rnd();
		buf[i] = r % 3 == 0 ? (char)(1 + (r >> 8) % 127) : some[(r >> 8) % (sizeof some - 1)];
	}
	buf[len] = 0;
	return len;
}

/* Internal: the vector paths off (0) or on where the CPU has them. */
void sh_ctx_set_simd(simhash_ctx *ctx, int on);

static void test_vector_and_scalar_paths_agree(void)
{
	static char buf[60000];
	simhash_ctx *vec = NULL, *sca = NULL;
	simhash_config cfg;
	for (int trial = 0; trial < 40; trial++) {
		simhash_fp a, b;
		size_t len = trial % 3 == 0   ? random_doc(buf, 1 + rnd() % 5000, rnd())
			     : trial % 3 == 1 ? random_text(buf, 1 + rnd() % 2500)
					      : random_ascii(buf, 1 + rnd() % 40000);
		v1_config_init(&cfg);
		cfg.ngram = 1 + (unsigned)(trial % 3);
		cfg.bits = trial % 5 == 4 ? 32 : 64;
		cfg.punct = trial % 4 == 1 ? SIMHASH_PUNCT_KEEP : SIMHASH_PUNCT_DROP;
		cfg.space = (simhash_space)(rnd() % 3);
		cfg.casefold = trial % 7 != 3;
		CHECK(simhash_ctx_new(&cfg, &vec) == SIMHASH_OK);
		CHECK(simhash_ctx_new(&cfg, &sca) == SIMHASH_OK);
		sh_ctx_set_simd(sca, 0);
		CHECK(simhash_fingerprint(vec, buf, len, &a, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint(sca, buf, len, &b, NULL) == SIMHASH_OK);
		CHECK(same(a, b));
		CHECK(same(a, reference(&cfg, buf, len)) || cfg.bits == 32);
		simhash_ctx_free(vec);
		simhash_ctx_free(sca);
	}
}

static void test_tf_paths_agree(void)
{
	/* tf through the bit-sliced unit votes and through the weighted path
	 * (a tf cap that never bites) must give the same bits */
	static char buf[20000];
	for (int trial = 0; trial < 30; trial++) {
		simhash_config cfg;
		size_t len = random_text(buf, 1 + rnd() % 1500);
		v1_config_init(&cfg);
		cfg.bits = trial % 2 ? 128 : 64;
		simhash_fp a = fp_cfg(&cfg, buf, len);
		cfg.tf_cap = 1000000;
		simhash_fp b = fp_cfg(&cfg, buf, len);
		CHECK(same(a, b));
	}
}

static void test_one_word_edit_moves_few_bits(void)
{
	static char a[40000], b[40000];
	unsigned worst = 0, sum = 0;
	for (int trial = 0; trial < 20; trial++) {
		size_t len = random_doc(a, 2000, 1000 + trial);
		memcpy(b, a, len + 1);
		/* replace the letters of one word in the middle */
		size_t pos = len / 2;
		while (b[pos] != ' ')
			pos++;
		for (size_t c = pos + 1; b[c] != ' '; c++)
			b[c] = b[c] == 'q' ? 'z' : 'q';
		simhash_fp x = fp_default(a), y = fp_default(b);
		unsigned d = simhash_hamming(&x, &y);
		sum += d;
		worst = d > worst ? d : worst;
	}
	printf("one-word edit of 2000 words: mean %.2f bits, worst %u\n", sum / 20.0, worst);
	CHECK(worst <= 6);
}

static void test_unrelated_documents_are_half_the_bits_apart(void)
{
	static char a[40000], b[40000];
	unsigned sum = 0;
	for (int trial = 0; trial < 40; trial++) {
		random_doc(a, 300, 5000 + trial);
		random_doc(b, 300, 9000 + trial);
		simhash_fp x = fp_default(a), y = fp_default(b);
		sum += simhash_hamming(&x, &y);
	}
	printf("unrelated documents: mean distance %.2f of 64\n", sum / 40.0);
	CHECK(sum / 40.0 > 29 && sum / 40.0 < 35);
}

static void test_html_mode_drops_markup(void)
{
	simhash_config cfg;
	const char *html = "<html><head><style>p{color:red}</style><script>var x=1;</script></head>"
			   "<body><!-- note --><p>Fish &amp; chips&nbsp;&#x4E2D;&#25991;</p></body>";
	v1_config_init(&cfg);
	cfg.html = 1;
	CHECK(same(fp_cfg(&cfg, html, strlen(html)), fp_default("fish chips 中文")));
	CHECK(!same(fp_default(html), fp_default("fish chips 中文")));
}

static void test_invalid_utf8_replaced_or_rejected(void)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	simhash_fp fp = {{7, 7}, 64};
	simhash_error e;
	/* U+FFFD is a symbol, so it separates words like punctuation */
	CHECK(same(fp_default("abc\xff" "def"), fp_default("abc\xef\xbf\xbd" "def")));
	CHECK(same(fp_default("abc\xff" "def"), fp_default("abc def")));
	v1_config_init(&cfg);
	cfg.utf8 = SIMHASH_UTF8_REJECT;
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	CHECK(simhash_fingerprint(ctx, "abc\xe4\xb8" "x", 6, &fp, &e) == SIMHASH_EUTF8);
	CHECK(e.code == SIMHASH_EUTF8 && e.offset == 3);
	CHECK(strcmp(e.msg, "invalid UTF-8 at byte 3") == 0);
	CHECK(fp.w[0] == 7); /* untouched */
	CHECK(simhash_fingerprint(ctx, "abc", 3, &fp, &e) == SIMHASH_OK);
	CHECK(e.offset == 3); /* the detail is left as it was on success */
	simhash_ctx_free(ctx);
}

static void test_expanding_characters_before_a_long_run(void)
{
	/* U+FDFA becomes 18 characters under NFKC; the run after it must
	 * still fit (ASan checks the writes) */
	static char buf[40000];
	size_t k = 0;
	for (int r = 0; r < 200; r++) {
		memcpy(buf + k, "\xef\xb7\xba", 3); /* U+FDFA */
		k += 3;
		for (int i = 0; i < 40; i++) {
			memcpy(buf + k, "\xe4\xb8\xad", 3); /* 中 */
			k += 3;
		}
	}
	buf[k] = 0;
	simhash_fp a = fp_default(buf);
	CHECK(a.bits == 64);
	CHECK(same(a, fp_default(buf)));
	/* U+337F (4 ideographs under NFKC) then inert ideographs, at many
	 * ratios: the worst case for the room reserved before the run */
	for (int na = 1; na < 200; na += 7)
		for (int nb = na; nb < 3 * na; nb += 5) {
			k = 0;
			for (int i = 0; i < na; i++, k += 3)
				memcpy(buf + k, "\xe3\x8d\xbf", 3);
			for (int i = 0; i < nb; i++, k += 3)
				memcpy(buf + k, "\xe4\xb8\xad", 3);
			buf[k] = 0;
			CHECK(fp_default(buf).bits == 64);
		}
}

static void test_invalid_bytes_grow_into_replacement_characters(void)
{
	/* each invalid byte becomes U+FFFD, three bytes: kept as punctuation,
	 * the output is three times the input (found by fuzzing) */
	static char buf[4100];
	simhash_config cfg;
	buf[0] = 'a';
	memset(buf + 1, 0xff, 4000);
	v1_config_init(&cfg);
	cfg.punct = SIMHASH_PUNCT_KEEP;
	for (size_t len = 2; len < 4001; len = len * 3 / 2 + 1)
		CHECK(fp_cfg(&cfg, buf, len).bits == 64);
}

static void test_nul_bytes_are_spaces(void)
{
	simhash_config cfg;
	v1_config_init(&cfg);
	CHECK(same(fp_cfg(&cfg, "abc\0def", 7), fp_default("abc def")));
}

struct words {
	char buf[512];
	size_t n;
};

static int collect(const char *data, size_t len, uint32_t count, void *arg)
{
	struct words *w = arg;
	if (w->n + len + 2 < sizeof w->buf) {
		memcpy(w->buf + w->n, data, len);
		w->n += len;
		w->n += (size_t)sprintf(w->buf + w->n, count > 1 ? "*%u|" : "|", count);
	}
	return 0;
}

static const char *features_of(simhash_config *cfg, const char *text)
{
	static struct words w;
	simhash_ctx *ctx = NULL;
	memset(&w, 0, sizeof w);
	CHECK(simhash_ctx_new(cfg, &ctx) == SIMHASH_OK);
	if (ctx)
		CHECK(simhash_features_each(ctx, text, strlen(text), collect, &w, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctx);
	return w.buf;
}

static void test_feature_rules(void)
{
	simhash_config cfg;
	v1_config_init(&cfg);
	CHECK_STR(features_of(&cfg, "Abcd ab"), "abc|bcd|cd |d a| ab|");
	CHECK_STR(features_of(&cfg, "中文ab"), "中文|文a|");
	cfg.features = SIMHASH_FEATURES_WORD;
	CHECK_STR(features_of(&cfg, "Hello, World! 你好 hello"), "hello*2|world|你|好|");
	cfg.features = SIMHASH_FEATURES_SHINGLE;
	cfg.ngram = 2;
	CHECK_STR(features_of(&cfg, "a b, c d"), "a b|b c|c d|");
	CHECK_STR(features_of(&cfg, "你好"), "你 好|");
	CHECK_STR(features_of(&cfg, "solo"), "solo|");
	cfg.features = SIMHASH_FEATURES_WORD;
	cfg.tokenizer = SIMHASH_TOKENIZER_ICU;
	CHECK_STR(features_of(&cfg, "我们是中国人"), "我们|是|中国人|");
	cfg.features = SIMHASH_FEATURES_CHAR;
	cfg.max_repeat = 2;
	cfg.ngram = cfg.ngram_cjk = 2;
	CHECK_STR(features_of(&cfg, "哈哈哈哈哈"), "哈哈|");
	CHECK_STR(features_of(&cfg, "!!!!"), "|");
}

static void test_stopwords_are_removed(void)
{
	simhash_config cfg;
	simhash_stopwords *sw = NULL;
	CHECK(simhash_stopwords_new(&sw) == SIMHASH_OK);
	CHECK(simhash_stopwords_add(sw, "the", 3) == SIMHASH_OK);
	v1_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_WORD;
	cfg.stopwords = sw;
	CHECK_STR(features_of(&cfg, "The cat and the hat"), "cat|and|hat|");
	/* a text of stop words only has no feature: like the empty text */
	{
		simhash_ctx *ctx = NULL;
		double cos = 0, jac = 0;
		CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
		CHECK(simhash_text_similarity(ctx, "the the", 7, "", 0, &cos, &jac, NULL) == SIMHASH_OK);
		CHECK(cos == 1.0 && jac == 1.0);
		simhash_ctx_free(ctx);
	}
	simhash_stopwords_free(sw);
}

static void test_scheme_strings(void)
{
	simhash_config cfg;
	char s[SIMHASH_SCHEME_MAX];
	simhash_config_init(&cfg);
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_OK);
	CHECK_STR(s, "v2/f64/auto3-cjk2-cmh1-mh1/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop");
	cfg.auto_char_votes = 1;
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_OK);
	CHECK_STR(s, "v2/f64/auto3-cjk2-cen1-mh1/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop");
	cfg.auto_char_votes = 0;
	cfg.features = SIMHASH_FEATURES_CHAR;
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_OK);
	CHECK_STR(s, "v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop");
	cfg.bits = 128;
	cfg.features = SIMHASH_FEATURES_SHINGLE;
	cfg.tokenizer = SIMHASH_TOKENIZER_ICU;
	cfg.weight = SIMHASH_WEIGHT_LOGTF;
	cfg.tf_cap = 5;
	cfg.html = 1;
	cfg.t2s = 0;
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_OK);
	CHECK_STR(s, "v1/f128/shingle3-icu/xxh3/logtf-cap5/nfkc-cf+html/sp-auto/pu-drop");
	v1_config_init(&cfg);
	cfg.compat = SIMHASH_COMPAT_PYTHON_SIMHASH;
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_OK);
	CHECK_STR(s, "v1/f64/python-simhash-2.1.2");
	cfg.bits = 32;
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_EINVAL);
}

static void test_bad_configs_are_rejected(void)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	v1_config_init(&cfg);
	cfg.bits = 48;
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_EINVAL && !ctx);
	v1_config_init(&cfg);
	cfg.ngram = 0;
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_EINVAL);
	v1_config_init(&cfg);
	cfg.weight = SIMHASH_WEIGHT_TFIDF; /* without a table */
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_EINVAL);
	v1_config_init(&cfg);
	cfg.hash = (simhash_hash)9;
	CHECK(simhash_config_check(&cfg) == SIMHASH_EINVAL);
}

static void test_similarity_of_texts(void)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	double cos = -1, jac = -1;
	v1_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_WORD;
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	CHECK(simhash_text_similarity(ctx, "a b c", 5, "a b d", 5, &cos, &jac, NULL) == SIMHASH_OK);
	CHECK(fabs(jac - 0.5) < 1e-12);
	CHECK(fabs(cos - 2.0 / 3.0) < 1e-12);
	CHECK(simhash_text_similarity(ctx, "x y", 3, "X, Y!", 5, &cos, &jac, NULL) == SIMHASH_OK);
	CHECK(cos > 0.999999 && jac == 1.0);
	CHECK(simhash_text_similarity(ctx, "x y", 3, "p q", 3, &cos, &jac, NULL) == SIMHASH_OK);
	CHECK(cos == 0.0 && jac == 0.0);
	CHECK(simhash_text_similarity(ctx, "", 0, "", 0, &cos, &jac, NULL) == SIMHASH_OK);
	CHECK(cos == 1.0 && jac == 1.0);
	/* tf counts: (2,1) . (1,1) / (sqrt5 sqrt2) */
	CHECK(simhash_text_similarity(ctx, "a a b", 5, "a b", 3, &cos, &jac, NULL) == SIMHASH_OK);
	CHECK(fabs(cos - 3.0 / sqrt(10.0)) < 1e-12 && jac == 1.0);
	simhash_ctx_free(ctx);
}

static void test_features_api_votes_with_weights(void)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	simhash_fp fp;
	simhash_feature f[2] = {{"aaa", 3, 1.0}, {"bbb", 3, 2.5}};
	v1_config_init(&cfg);
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	/* the heavier feature wins every bit where they differ; ties are 0 */
	CHECK(simhash_fingerprint_features(ctx, f, 2, &fp) == SIMHASH_OK);
	CHECK_EQ_U64(fp.w[0], XXH3_64bits("bbb", 3));
	f[1].weight = 1.0;
	CHECK(simhash_fingerprint_features(ctx, f, 2, &fp) == SIMHASH_OK);
	CHECK_EQ_U64(fp.w[0], XXH3_64bits("aaa", 3) & XXH3_64bits("bbb", 3));
	CHECK(simhash_fingerprint_features(ctx, f, 0, &fp) == SIMHASH_OK);
	CHECK(fp.w[0] == 0 && fp.bits == 64);
	f[0].weight = NAN;
	CHECK(simhash_fingerprint_features(ctx, f, 2, &fp) == SIMHASH_EINVAL);
	simhash_ctx_free(ctx);
}

TEST_MAIN("fingerprint", TEST(test_same_text_gives_same_fingerprint),
	  TEST(test_nfc_and_nfd_give_same_fingerprint), TEST(test_fullwidth_and_case_fold_to_ascii),
	  TEST(test_traditional_folds_to_simplified), TEST(test_spaces_and_punctuation_rules),
	  TEST(test_empty_text_is_the_empty_feature),
	  TEST(test_text_shorter_than_an_ngram_is_one_feature),
	  TEST(test_unit_votes_match_reference), TEST(test_fast_blocks_match_reference),
	  TEST(test_vector_and_scalar_paths_agree), TEST(test_tf_paths_agree),
	  TEST(test_one_word_edit_moves_few_bits),
	  TEST(test_unrelated_documents_are_half_the_bits_apart), TEST(test_html_mode_drops_markup),
	  TEST(test_invalid_utf8_replaced_or_rejected), TEST(test_nul_bytes_are_spaces),
	  TEST(test_invalid_bytes_grow_into_replacement_characters),
	  TEST(test_expanding_characters_before_a_long_run),
	  TEST(test_feature_rules), TEST(test_stopwords_are_removed), TEST(test_scheme_strings),
	  TEST(test_bad_configs_are_rejected), TEST(test_similarity_of_texts),
	  TEST(test_features_api_votes_with_weights))
