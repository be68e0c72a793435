/* config.c - the config record of a store: the fields of simhash_config that
 * change fingerprints, each a u32 little-endian, after a record version.
 * The scheme string is stored beside it, and open checks that the decoded
 * config still gives that scheme with this library. Fields 17 and 18 say
 * whether the store holds a stop-word and an IDF table ("stopwords" and "idf"
 * records, tables.c); the config's pointers to them are set by the caller.
 * Field 19 (record version 2) is auto_char_votes. */
#include <string.h>
#include "store_int.h"

#define CONFIG_RECORD_VERSION 2
#define N_FIELDS 20 /* 19 in version 1, whose stores knew only auto_char_votes = 1 */

size_t sh_config_encode(const simhash_config *cfg, uint8_t *out, size_t cap)
{
	uint32_t f[N_FIELDS] = {
		CONFIG_RECORD_VERSION, cfg->bits, cfg->compat, (uint32_t)cfg->casefold,
		(uint32_t)cfg->html, (uint32_t)cfg->t2s, cfg->space, cfg->punct, cfg->max_repeat,
		cfg->utf8, cfg->features, cfg->ngram, cfg->ngram_cjk, cfg->tokenizer, cfg->hash,
		cfg->weight, cfg->tf_cap, cfg->stopwords != NULL, cfg->idf != NULL,
		(uint32_t)cfg->auto_char_votes,
	};

	if (cap < sizeof f)
		return 0;
	for (size_t i = 0; i < N_FIELDS; i++)
		sh_put_le32(out + 4 * i, f[i]);
	return sizeof f;
}

simhash_err sh_config_decode(const uint8_t *p, size_t len, simhash_config *cfg, unsigned *tables)
{
	uint32_t f[N_FIELDS];
	size_t n = len / 4;

	if (len < 4 || len % 4)
		return SIMHASH_ECORRUPT;
	f[0] = sh_get_le32(p);
	if (!((f[0] == 1 && n == 19) || (f[0] == CONFIG_RECORD_VERSION && n == N_FIELDS)))
		return SIMHASH_ECORRUPT;
	for (size_t i = 0; i < n; i++)
		f[i] = sh_get_le32(p + 4 * i);
	if (f[0] == 1)
		f[19] = 1; /* version 1 records predate the char MinHash */
	if (f[17] > 1 || f[18] > 1 || f[19] > 1)
		return SIMHASH_ECORRUPT;
	*tables = (f[17] ? SIMHASH_SCHEME_STOPWORDS : 0) | (f[18] ? SIMHASH_SCHEME_IDF : 0);
	cfg->bits = f[1];
	cfg->compat = (simhash_compat)f[2];
	cfg->casefold = (int)f[3];
	cfg->html = (int)f[4];
	cfg->t2s = (int)f[5];
	cfg->space = (simhash_space)f[6];
	cfg->punct = (simhash_punct)f[7];
	cfg->max_repeat = f[8];
	cfg->utf8 = (simhash_utf8)f[9];
	cfg->features = (simhash_features)f[10];
	cfg->ngram = f[11];
	cfg->ngram_cjk = f[12];
	cfg->tokenizer = (simhash_tokenizer)f[13];
	cfg->hash = (simhash_hash)f[14];
	cfg->weight = (simhash_weight)f[15];
	cfg->tf_cap = f[16];
	cfg->stopwords = NULL;
	cfg->idf = NULL;
	cfg->auto_char_votes = (int)f[19];
	/* tf-idf is valid only with its table: a config naming one is checked
	 * once the table is set (simhash_config_scheme() checks) */
	if (*tables & SIMHASH_SCHEME_IDF)
		return SIMHASH_OK;
	return simhash_config_check(cfg) == SIMHASH_OK ? SIMHASH_OK : SIMHASH_ECORRUPT;
}
