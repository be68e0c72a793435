/* stopwords.c - stop-word sets: features equal to a stop word are dropped.
 *
 * Only the 64-bit sh_key() of each word is kept, in an open-addressing table
 * with linear probing: the feature loop already has the key of each feature,
 * so a lookup is one probe sequence over 8-byte slots and never compares
 * bytes. The key is the word's identity (two words collide with odds about
 * n^2 / 2^65).
 *
 * Invariants:
 *  1. cap is 0 or a power of two and n * 10 <= cap * 7, so probes end.
 *  2. A slot holding 0 is empty; the one word whose key is 0 is recorded in
 *     has_zero instead, so every key is storable.
 *  3. The digest depends on the set of keys only, not on the order of adds.
 */
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "textfile.h"

struct simhash_stopwords {
	uint64_t *keys;
	size_t cap;
	size_t n; /* keys in the table, not counting has_zero */
	int has_zero;
};

simhash_err simhash_stopwords_new(simhash_stopwords **out)
{
	if (!out)
		return SIMHASH_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out ? SIMHASH_OK : SIMHASH_ENOMEM;
}

void simhash_stopwords_free(simhash_stopwords *sw)
{
	if (!sw)
		return;
	free(sw->keys);
	free(sw);
}

static void key_place(uint64_t *keys, size_t cap, uint64_t key)
{
	size_t i = key & (cap - 1);

	while (keys[i] && keys[i] != key)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
}

static simhash_err sw_grow(simhash_stopwords *sw)
{
	size_t cap = sw->cap ? sw->cap * 2 : 64;
	uint64_t *keys;

	if (cap > SIZE_MAX / sizeof *keys)
		return SIMHASH_ENOMEM;
	keys = calloc(cap, sizeof *keys);
	if (!keys)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; i < sw->cap; i++)
		if (sw->keys[i])
			key_place(keys, cap, sw->keys[i]);
	free(sw->keys);
	sw->keys = keys;
	sw->cap = cap;
	return SIMHASH_OK;
}

int sh_stopwords_has_key(const simhash_stopwords *sw, uint64_t key)
{
	size_t mask = sw->cap - 1;

	if (!key)
		return sw->has_zero;
	if (!sw->cap)
		return 0;
	for (size_t i = key & mask; sw->keys[i]; i = (i + 1) & mask)
		if (sw->keys[i] == key)
			return 1;
	return 0;
}

static simhash_err sw_add_key(simhash_stopwords *sw, uint64_t key)
{
	simhash_err err;

	if (!key) {
		sw->has_zero = 1;
		return SIMHASH_OK;
	}
	if (sh_stopwords_has_key(sw, key))
		return SIMHASH_OK;
	if ((sw->n + 1) * 10 > sw->cap * 7 && (err = sw_grow(sw)))
		return err;
	key_place(sw->keys, sw->cap, key);
	sw->n++;
	return SIMHASH_OK;
}

simhash_err simhash_stopwords_add(simhash_stopwords *sw, const char *word, size_t len)
{
	if (!sw || (!word && len))
		return SIMHASH_EINVAL;
	return sw_add_key(sw, sh_key_inline(word, len));
}

int simhash_stopwords_has(const simhash_stopwords *sw, const char *word, size_t len)
{
	if (!sw || (!word && len))
		return 0;
	return sh_stopwords_has_key(sw, sh_key_inline(word, len));
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* One word per line, spaces and tabs around it dropped. A file that is not
 * UTF-8 (a GBK list, say) is rejected rather than loaded as words that can
 * never match a normalized feature. */
static simhash_err load_words(simhash_stopwords *sw, sh_textfile *tf, size_t *err_line)
{
	simhash_err err;
	char *line;
	size_t len;

	while (sh_textfile_next(tf, &line, &len)) {
		while (len && is_space(line[len - 1]))
			len--;
		while (len && is_space(*line)) {
			line++;
			len--;
		}
		if (!len || line[0] == '#')
			continue;
		if (sh_utf8_validate((const uint8_t *)line, len) != len) {
			if (err_line)
				*err_line = tf->line;
			return SIMHASH_ECORRUPT;
		}
		err = simhash_stopwords_add(sw, line, len);
		if (err)
			return err;
	}
	return SIMHASH_OK;
}

simhash_err simhash_stopwords_load(const char *path, simhash_stopwords **out, simhash_error *e)
{
	simhash_stopwords *sw = NULL;
	sh_textfile tf;
	simhash_err err;
	size_t line = 0;

	err = sh_textfile_load(&tf, path, out, e);
	if (err)
		return err;
	err = simhash_stopwords_new(&sw);
	if (!err)
		err = load_words(sw, &tf, &line);
	if (err) {
		simhash_stopwords_free(sw);
		goto out_free_file;
	}
	*out = sw;
out_free_file:
	sh_textfile_free(&tf);
	return sh_textfile_fail(err, line, "invalid UTF-8", e);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The keys in ascending order (0 first where has_zero), so the bytes a
 * store writes do not depend on the order of adds or the table layout. */
simhash_err sh_stopwords_keys(const simhash_stopwords *sw, uint64_t **out, size_t *n)
{
	size_t k = 0;
	uint64_t *v;

	v = malloc((sw->n + 1) * sizeof *v);
	if (!v)
		return SIMHASH_ENOMEM;
	if (sw->has_zero)
		v[k++] = 0;
	for (size_t i = 0; i < sw->cap; i++)
		if (sw->keys[i])
			v[k++] = sw->keys[i];
	qsort(v, k, sizeof *v, cmp_u64);
	*out = v;
	*n = k;
	return SIMHASH_OK;
}

simhash_err sh_stopwords_add_key(simhash_stopwords *sw, uint64_t key)
{
	return sw_add_key(sw, key);
}

/* Sums of the keys under two mixings: order-independent, no allocation. */
uint64_t simhash_stopwords_digest(const simhash_stopwords *sw)
{
	uint64_t sum1 = 0, sum2 = 0;
	uint8_t buf[32];

	if (!sw)
		return 0;
	for (size_t i = 0; i < sw->cap; i++) {
		if (!sw->keys[i])
			continue;
		sum1 += sh_mix64(sw->keys[i]);
		sum2 += sh_mix64(sw->keys[i] ^ 0x9e3779b97f4a7c15ull);
	}
	memcpy(buf, "sw1", 3);
	buf[3] = (uint8_t)sw->has_zero;
	memset(buf + 4, 0, 4);
	sh_put_le64(buf + 8, sw->n);
	sh_put_le64(buf + 16, sum1);
	sh_put_le64(buf + 24, sum2);
	return XXH3_64bits(buf, sizeof buf);
}
