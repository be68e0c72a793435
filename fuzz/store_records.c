/* store_records.c - fuzz target for the records a store keeps beside its
 * documents: the config record (sh_config_decode) and the stop-word and IDF
 * table records (sh_stopwords_record_parse, sh_idf_record_parse), read back
 * at every open.
 *
 * The first byte picks the record (modulo 3: 0 config, 1 stopwords, 2 idf),
 * the rest is the record. The target aborts unless:
 *  1. a parse gives SIMHASH_OK, SIMHASH_ENOMEM or SIMHASH_ECORRUPT (for the
 *     tables with a reason);
 *  2. a table record that parses writes back byte for byte (the records are
 *     canonical: sorted keys and terms, exact values), and its table gives
 *     the same record again;
 *  3. a config record that parses writes back byte for byte when it is of
 *     the current version (2); one of version 1 writes back as version 2
 *     with the same fields and auto_char_votes 1.
 * The corpus holds valid records of each kind, written by the encoders
 * above from small tables and configs, and damaged copies. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simhash.h"
#include "store/store_int.h"

#define FAIL(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "store_records: invariant broken at %s:%d: ", __FILE__, \
			__LINE__);                                                    \
		fprintf(stderr, __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                  \
		abort();                                                              \
	} while (0)

static void same_bytes(const char *what, const uint8_t *a, size_t alen, const void *b, size_t blen)
{
	if (alen != blen || memcmp(a, b, alen) != 0)
		FAIL("%s record does not write back as read (%zu bytes, %zu written)", what, alen, blen);
}

static void check_parse(const char *what, simhash_err e, const char *why)
{
	if (e == SIMHASH_ECORRUPT && (!why || !*why))
		FAIL("%s: SIMHASH_ECORRUPT without a reason", what);
	if (e != SIMHASH_OK && e != SIMHASH_ECORRUPT && e != SIMHASH_ENOMEM)
		FAIL("%s: unexpected error %d", what, (int)e);
}

static void config_record(const uint8_t *p, size_t len)
{
	simhash_config cfg;
	simhash_stopwords *sw = NULL;
	simhash_idf *idf = NULL;
	uint8_t out[256];
	unsigned tables = 0;
	size_t n;

	simhash_config_init(&cfg);
	if (sh_config_decode(p, len, &cfg, &tables) != SIMHASH_OK)
		return;
	if (cfg.stopwords || cfg.idf)
		FAIL("config: decode left a table pointer set");
	/* the encoder records whether each table is there: give it tables */
	if (((tables & SIMHASH_SCHEME_STOPWORDS) && simhash_stopwords_new(&sw) != SIMHASH_OK) ||
	    ((tables & SIMHASH_SCHEME_IDF) && simhash_idf_new(&idf) != SIMHASH_OK))
		goto done;
	cfg.stopwords = sw;
	cfg.idf = idf;
	n = sh_config_encode(&cfg, out, sizeof out);
	if (n == 0)
		FAIL("config: encode failed");
	if (sh_get_le32(p) == 2) {
		same_bytes("config", p, len, out, n);
	} else {
		if (n != len + 4 || sh_get_le32(out) != 2 || memcmp(out + 4, p + 4, len - 4) != 0)
			FAIL("config: a version 1 record does not write back as version 2");
		if (cfg.auto_char_votes != 1)
			FAIL("config: a version 1 record without auto_char_votes");
	}
done:
	simhash_stopwords_free(sw);
	simhash_idf_free(idf);
}

static void stopwords_record(const uint8_t *p, size_t len)
{
	simhash_stopwords *sw = NULL, *sw2 = NULL;
	const char *why = NULL;
	sh_buf b = { NULL, 0 }, b2 = { NULL, 0 };
	uint64_t digest, digest2;
	size_t n, n2;
	simhash_err e = sh_stopwords_record_parse(p, len, &sw, &digest, &why);

	check_parse("stopwords", e, why);
	if (e != SIMHASH_OK)
		return;
	if (sh_stopwords_record(sw, &b, &n) == SIMHASH_OK) {
		/* the digest is the table's own, so only the keys are the input's */
		if (n != len || memcmp(p + 8, (uint8_t *)b.p + 8, len - 8) != 0)
			FAIL("stopwords record does not write back as read");
		if (sh_stopwords_record_parse(b.p, n, &sw2, &digest2, &why) == SIMHASH_OK) {
			if (digest2 != simhash_stopwords_digest(sw))
				FAIL("stopwords: the written record names another digest");
			if (sh_stopwords_record(sw2, &b2, &n2) == SIMHASH_OK)
				same_bytes("stopwords (second write)", b.p, n, b2.p, n2);
		}
	}
	(void)digest;
	simhash_stopwords_free(sw);
	simhash_stopwords_free(sw2);
	sh_buf_free(&b);
	sh_buf_free(&b2);
}

static void idf_record(const uint8_t *p, size_t len)
{
	simhash_idf *idf = NULL, *idf2 = NULL;
	const char *why = NULL;
	sh_buf b = { NULL, 0 }, b2 = { NULL, 0 };
	uint64_t digest, digest2;
	size_t n, n2;
	simhash_err e = sh_idf_record_parse(p, len, &idf, &digest, &why);

	check_parse("idf", e, why);
	if (e != SIMHASH_OK)
		return;
	if (sh_idf_record(idf, &b, &n) == SIMHASH_OK) {
		if (n != len || memcmp(p + 8, (uint8_t *)b.p + 8, len - 8) != 0)
			FAIL("idf record does not write back as read");
		if (sh_idf_record_parse(b.p, n, &idf2, &digest2, &why) == SIMHASH_OK) {
			if (digest2 != simhash_idf_digest(idf))
				FAIL("idf: the written record names another digest");
			if (sh_idf_record(idf2, &b2, &n2) == SIMHASH_OK)
				same_bytes("idf (second write)", b.p, n, b2.p, n2);
		}
	}
	(void)digest;
	simhash_idf_free(idf);
	simhash_idf_free(idf2);
	sh_buf_free(&b);
	sh_buf_free(&b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		config_record(data + 1, size - 1);
		break;
	case 1:
		stopwords_record(data + 1, size - 1);
		break;
	default:
		idf_record(data + 1, size - 1);
		break;
	}
	return 0;
}
