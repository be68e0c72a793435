/* test_store_config.c - the store's config record: version 2 carries
 * auto_char_votes, and a version 1 record (19 fields, written before it
 * existed) reads as the first v2 scheme, the one it was made with. */
#include <stdint.h>
#include "../test.h"
#include "simhash.h"
#include "store/store_int.h" /* the real prototypes, not copies */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void scheme_of(const simhash_config *cfg, char *s)
{
	CHECK(simhash_config_scheme(cfg, s, SIMHASH_SCHEME_MAX) == SIMHASH_OK);
}

static void test_default_round_trip(void)
{
	simhash_config a, b;
	uint8_t rec[128];
	char sa[SIMHASH_SCHEME_MAX], sb[SIMHASH_SCHEME_MAX];
	unsigned tables;
	size_t n;

	for (int votes = 0; votes < 2; votes++) {
		simhash_config_init(&a);
		a.auto_char_votes = votes;
		n = sh_config_encode(&a, rec, sizeof rec);
		CHECK(n == 80);
		simhash_config_init(&b);
		b.auto_char_votes = !votes;
		CHECK(sh_config_decode(rec, n, &b, &tables) == SIMHASH_OK);
		CHECK(b.auto_char_votes == votes);
		CHECK(tables == 0);
		scheme_of(&a, sa);
		scheme_of(&b, sb);
		CHECK_STR(sa, sb);
	}
}

static void test_version1_record_reads_as_char_votes(void)
{
	simhash_config a, b;
	uint8_t rec[128];
	char s[SIMHASH_SCHEME_MAX];
	unsigned tables;

	simhash_config_init(&a);
	CHECK(sh_config_encode(&a, rec, sizeof rec) == 80);
	put32(rec, 1); /* version 1: the first 19 fields */
	simhash_config_init(&b);
	CHECK(sh_config_decode(rec, 76, &b, &tables) == SIMHASH_OK);
	CHECK(b.auto_char_votes == 1);
	scheme_of(&b, s);
	CHECK_STR(s, "v2/f64/auto3-cjk2-cen1-mh1/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop");
	/* a version 1 record of 20 fields, or version 2 of 19, is corrupt */
	CHECK(sh_config_decode(rec, 80, &b, &tables) == SIMHASH_ECORRUPT);
	put32(rec, 2);
	CHECK(sh_config_decode(rec, 76, &b, &tables) == SIMHASH_ECORRUPT);
	/* the flag is 0 or 1 */
	put32(rec + 76, 2);
	CHECK(sh_config_decode(rec, 80, &b, &tables) == SIMHASH_ECORRUPT);
	CHECK(sh_config_decode(rec, 3, &b, &tables) == SIMHASH_ECORRUPT);
	CHECK(sh_config_decode(rec, 0, &b, &tables) == SIMHASH_ECORRUPT);
}

TEST_MAIN("store_config", TEST(test_default_round_trip),
	  TEST(test_version1_record_reads_as_char_votes))
