/* test_config_size.c - the config grows safely across library versions:
 * simhash_config_init() passes the caller's sizeof, the library writes no
 * more than that and reads no more than cfg->size. */
#include <stddef.h>
#include "test.h"
#include "simhash.h"

#define V1_SIZE (offsetof(simhash_config, idf) + sizeof(void *))

static void test_macro_passes_the_callers_size(void)
{
	simhash_config cfg;

	memset(&cfg, 0xa5, sizeof cfg);
	simhash_config_init(&cfg);
	CHECK_EQ_U64(cfg.size, sizeof cfg);
	CHECK_EQ_U64(cfg.bits, 64);
}

static void test_init_never_writes_past_an_older_callers_struct(void)
{
	/* an older caller's struct: fewer bytes than the library's */
	union {
		simhash_config cfg;
		unsigned char bytes[sizeof(simhash_config) + 64];
	} u;
	size_t old = offsetof(simhash_config, tf_cap);

	memset(&u, 0xa5, sizeof u);
	simhash_config_init_sized(&u.cfg, old);
	CHECK_EQ_U64(u.cfg.size, old);
	CHECK_EQ_U64(u.cfg.bits, 64);
	for (size_t i = old; i < sizeof u.bytes; i++)
		if (u.bytes[i] != 0xa5) {
			fprintf(stderr, "byte %zu written past the caller's %zu\n", i, old);
			t_cur_failed++;
			break;
		}
	/* a config older than the first release is refused, not read past */
	CHECK(simhash_config_check(&u.cfg) == SIMHASH_EINVAL);
}

static void test_newer_callers_struct_gets_the_librarys_size(void)
{
	union {
		simhash_config cfg;
		unsigned char bytes[sizeof(simhash_config) + 64];
	} u;

	memset(&u, 0xa5, sizeof u);
	simhash_config_init_sized(&u.cfg, sizeof u);
	CHECK_EQ_U64(u.cfg.size, sizeof(simhash_config));
	CHECK(u.bytes[sizeof(simhash_config)] == 0xa5);
}

static void test_first_release_symbol_writes_the_first_size(void)
{
	simhash_config cfg;

	memset(&cfg, 0xa5, sizeof cfg);
	(simhash_config_init)(&cfg);
	CHECK_EQ_U64(cfg.size, V1_SIZE);
	CHECK(simhash_config_check(&cfg) == SIMHASH_OK);
}

static void test_ctx_reads_only_the_callers_fields(void)
{
	/* a first-release config followed by garbage: the context must see
	 * defaults beyond cfg->size, and fingerprint as a full default config */
	union {
		simhash_config cfg;
		unsigned char bytes[sizeof(simhash_config)];
	} u;
	simhash_config full;
	simhash_ctx *a = NULL, *b = NULL;
	simhash_fp fa, fb;

	memset(&u, 0xa5, sizeof u);
	simhash_config_init_sized(&u.cfg, V1_SIZE);
	simhash_config_init(&full);
	CHECK(simhash_ctx_new(&u.cfg, &a) == SIMHASH_OK);
	CHECK(simhash_ctx_new(&full, &b) == SIMHASH_OK);
	if (a && b) {
		CHECK_EQ_U64(simhash_ctx_config(a)->size, sizeof(simhash_config));
		CHECK(simhash_fingerprint(a, "the cat sat", 11, &fa, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint(b, "the cat sat", 11, &fb, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(fa.w[0], fb.w[0]);
	}
	simhash_ctx_free(a);
	simhash_ctx_free(b);
}

TEST_MAIN("config_size", TEST(test_macro_passes_the_callers_size),
	  TEST(test_init_never_writes_past_an_older_callers_struct),
	  TEST(test_newer_callers_struct_gets_the_librarys_size),
	  TEST(test_first_release_symbol_writes_the_first_size),
	  TEST(test_ctx_reads_only_the_callers_fields))
