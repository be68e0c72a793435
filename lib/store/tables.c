/* tables.c - the stop-word and IDF tables of a store, kept in its meta
 * records so that whoever opens the store fingerprints texts exactly as the
 * creator did (simhash_store_config() hands them out).
 *
 * Records (integers little-endian; docs/format.md):
 *   "stopwords" -> digest u64, n u64, then n keys u64 in ascending order.
 *                  A stop-word set keeps the sh_key() of each word, not the
 *                  word, so the keys are what there is to store.
 *   "idf"       -> digest u64, default u64 (the bits of the double unknown
 *                  terms get), n u64, then n entries: len u32, the term's
 *                  bytes, value u64 (the bits of the double), in ascending
 *                  order of the term bytes (simhash_idf_each()).
 *
 * Invariants:
 *  1. A record is a function of its table's contents only (sorted, exact
 *     values), so the same table always writes the same bytes.
 *  2. A table read back has the digest its record names, the digest the
 *     scheme string names (where the scheme names the table) and, for IDF,
 *     the recorded default: anything else is SIMHASH_ECORRUPT, never a table
 *     that would fingerprint otherwise.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

simhash_err sh_stopwords_record(const simhash_stopwords *sw, sh_buf *b, size_t *len)
{
	uint64_t *keys;
	size_t n;
	simhash_err e;

	if ((e = sh_stopwords_keys(sw, &keys, &n)) != SIMHASH_OK)
		return e;
	if (n > (SIZE_MAX - 16) / 8 || (e = sh_buf_reserve(b, 16 + n * 8)) != SIMHASH_OK) {
		free(keys);
		return SIMHASH_ENOMEM;
	}
	sh_put_le64(b->p, simhash_stopwords_digest(sw));
	sh_put_le64((uint8_t *)b->p + 8, n);
	for (size_t i = 0; i < n; i++)
		sh_put_le64((uint8_t *)b->p + 16 + 8 * i, keys[i]);
	*len = 16 + n * 8;
	free(keys);
	return SIMHASH_OK;
}

struct idf_rec {
	sh_buf *b;
	size_t len;
	size_t n;
	simhash_err err;
};

static int idf_rec_add(const char *term, size_t len, double value, void *arg)
{
	struct idf_rec *r = arg;
	uint8_t *p;
	uint64_t bits;

	if (len > UINT32_MAX || len > SIZE_MAX - 12 - r->len ||
	    sh_buf_reserve(r->b, r->len + 12 + len) != SIMHASH_OK) {
		r->err = SIMHASH_ENOMEM;
		return 1;
	}
	p = (uint8_t *)r->b->p + r->len;
	memcpy(&bits, &value, sizeof bits);
	sh_put_le32(p, (uint32_t)len);
	if (len)
		memcpy(p + 4, term, len);
	sh_put_le64(p + 4 + len, bits);
	r->len += 12 + len;
	r->n++;
	return 0;
}

simhash_err sh_idf_record(const simhash_idf *idf, sh_buf *b, size_t *len)
{
	struct idf_rec r = { b, 24, 0, SIMHASH_OK };
	double dflt = sh_idf_default(idf);
	uint64_t bits;
	simhash_err e;

	if ((e = sh_buf_reserve(b, 24 + simhash_idf_size(idf) * 20)) != SIMHASH_OK)
		return e;
	if ((e = simhash_idf_each(idf, idf_rec_add, &r)) == SIMHASH_OK)
		e = r.err;
	if (e != SIMHASH_OK)
		return e;
	memcpy(&bits, &dflt, sizeof bits);
	sh_put_le64(b->p, simhash_idf_digest(idf));
	sh_put_le64((uint8_t *)b->p + 8, bits);
	sh_put_le64((uint8_t *)b->p + 16, r.n);
	*len = r.len;
	return SIMHASH_OK;
}

simhash_err sh_tables_put(simhash_store *st, MDB_txn *txn, const simhash_config *cfg)
{
	sh_buf b = { NULL, 0 };
	size_t len;
	simhash_err e = SIMHASH_OK;

	if (cfg->stopwords && (e = sh_stopwords_record(cfg->stopwords, &b, &len)) == SIMHASH_OK)
		e = sh_meta_put(st, txn, "stopwords", b.p, len);
	if (e == SIMHASH_OK && cfg->idf && (e = sh_idf_record(cfg->idf, &b, &len)) == SIMHASH_OK)
		e = sh_meta_put(st, txn, "idf", b.p, len);
	sh_buf_free(&b);
	return e;
}

/* ---- reading back */

static simhash_err bad(simhash_store *st, const char *what)
{
	sh_store_seterr(st, "%s", what);
	return SIMHASH_ECORRUPT;
}

/* A parse's SIMHASH_ECORRUPT with its reason. */
static simhash_err malformed(const char **why, const char *what)
{
	*why = what;
	return SIMHASH_ECORRUPT;
}

simhash_err sh_stopwords_record_parse(const uint8_t *p, size_t len, simhash_stopwords **out,
				      uint64_t *digest, const char **why)
{
	simhash_stopwords *sw;
	uint64_t n;
	simhash_err e;

	if (len < 16 || (n = sh_get_le64(p + 8)) != (len - 16) / 8 || (len - 16) % 8)
		return malformed(why, "malformed stopwords record");
	*digest = sh_get_le64(p);
	if ((e = simhash_stopwords_new(&sw)) != SIMHASH_OK)
		return e;
	for (uint64_t i = 0; i < n && e == SIMHASH_OK; i++) {
		uint64_t key = sh_get_le64(p + 16 + 8 * i);

		if (i && key <= sh_get_le64(p + 8 + 8 * i))
			e = malformed(why, "malformed stopwords record (keys out of order)");
		else
			e = sh_stopwords_add_key(sw, key);
	}
	if (e != SIMHASH_OK) {
		simhash_stopwords_free(sw);
		return e;
	}
	*out = sw;
	return SIMHASH_OK;
}

/* Entries of an idf record into idf; p and end bound them. */
static simhash_err idf_entries(simhash_idf *idf, const uint8_t *p, const uint8_t *end, uint64_t n,
			       const char **why)
{
	const uint8_t *prev = NULL;
	uint32_t prev_len = 0;
	simhash_err e;

	for (uint64_t i = 0; i < n; i++) {
		uint32_t len;
		uint64_t bits;
		double value;
		int c;

		if (end - p < 4 || (size_t)(end - p - 4) < (size_t)sh_get_le32(p) + 8)
			return malformed(why, "malformed idf record (truncated)");
		len = sh_get_le32(p);
		c = prev ? memcmp(prev, p + 4, prev_len < len ? prev_len : len) : -1;
		if (c > 0 || (prev && c == 0 && prev_len >= len))
			return malformed(why, "malformed idf record (terms out of order)");
		bits = sh_get_le64(p + 4 + len);
		memcpy(&value, &bits, sizeof value);
		if (!isfinite(value) || value < 0)
			return malformed(why, "malformed idf record (bad value)");
		if ((e = simhash_idf_set(idf, (const char *)p + 4, len, value)) != SIMHASH_OK)
			return e;
		prev = p + 4;
		prev_len = len;
		p += 12 + (size_t)len;
	}
	return p == end ? SIMHASH_OK : malformed(why, "malformed idf record (trailing bytes)");
}

simhash_err sh_idf_record_parse(const uint8_t *p, size_t len, simhash_idf **out, uint64_t *digest,
				const char **why)
{
	simhash_idf *idf;
	uint64_t n, dflt_bits, bits;
	double dflt;
	simhash_err e;

	if (len < 24 || (n = sh_get_le64(p + 16)) > (len - 24) / 12)
		return malformed(why, "malformed idf record");
	*digest = sh_get_le64(p);
	dflt_bits = sh_get_le64(p + 8);
	if ((e = simhash_idf_new(&idf)) != SIMHASH_OK)
		return e;
	e = sh_idf_reserve(idf, (size_t)n, len);
	if (e == SIMHASH_OK)
		e = idf_entries(idf, p + 24, p + len, n, why);
	if (e == SIMHASH_OK)
		e = simhash_idf_finish(idf);
	if (e == SIMHASH_OK) {
		dflt = sh_idf_default(idf);
		memcpy(&bits, &dflt, sizeof bits);
		if (bits != dflt_bits)
			e = malformed(why, "idf record: the table's default idf differs from the recorded one");
	}
	if (e != SIMHASH_OK) {
		simhash_idf_free(idf);
		return e;
	}
	*out = idf;
	return SIMHASH_OK;
}

/* The digest of a table read back against its record's and the scheme's. */
static simhash_err check_digest(simhash_store *st, const char *what, uint64_t got,
				uint64_t recorded, int in_scheme, uint64_t scheme_digest)
{
	if (got != recorded) {
		sh_store_seterr(st, "%s table: digest %016llx, its record says %016llx", what,
				(unsigned long long)got, (unsigned long long)recorded);
		return SIMHASH_ECORRUPT;
	}
	if (in_scheme && got != scheme_digest) {
		sh_store_seterr(st, "%s table: digest %016llx, the scheme names %016llx", what,
				(unsigned long long)got, (unsigned long long)scheme_digest);
		return SIMHASH_ECORRUPT;
	}
	return SIMHASH_OK;
}

simhash_err sh_tables_read(simhash_store *st, MDB_txn *txn, unsigned tables, const char *scheme,
			   simhash_stopwords **sw, simhash_idf **idf)
{
	uint64_t s_idf = 0, s_sw = 0, rec;
	unsigned which = 0;
	const char *why = NULL;
	simhash_err e = SIMHASH_OK;
	MDB_val v;

	*sw = NULL;
	*idf = NULL;
	if (simhash_scheme_tables(scheme, &which, &s_idf, &s_sw) != SIMHASH_OK)
		return bad(st, "malformed scheme record");
	if ((which & SIMHASH_SCHEME_IDF) && !(tables & SIMHASH_SCHEME_IDF))
		return bad(st, "the scheme names an IDF table the store does not hold");
	if ((which & SIMHASH_SCHEME_STOPWORDS) && !(tables & SIMHASH_SCHEME_STOPWORDS))
		return bad(st, "the scheme names a stop-word table the store does not hold");
	if ((tables & SIMHASH_SCHEME_STOPWORDS) &&
	    (e = sh_meta_get(st, txn, "stopwords", &v)) == SIMHASH_OK &&
	    (e = sh_stopwords_record_parse(v.mv_data, v.mv_size, sw, &rec, &why)) == SIMHASH_OK)
		e = check_digest(st, "stop-word", simhash_stopwords_digest(*sw), rec,
				 (which & SIMHASH_SCHEME_STOPWORDS) != 0, s_sw);
	if (e == SIMHASH_OK && (tables & SIMHASH_SCHEME_IDF) &&
	    (e = sh_meta_get(st, txn, "idf", &v)) == SIMHASH_OK &&
	    (e = sh_idf_record_parse(v.mv_data, v.mv_size, idf, &rec, &why)) == SIMHASH_OK)
		e = check_digest(st, "IDF", simhash_idf_digest(*idf), rec,
				 (which & SIMHASH_SCHEME_IDF) != 0, s_idf);
	if (e == SIMHASH_ECORRUPT && why) /* a record that did not parse */
		e = bad(st, why);
	if (e != SIMHASH_OK) {
		simhash_stopwords_free(*sw);
		simhash_idf_free(*idf);
		*sw = NULL;
		*idf = NULL;
	}
	return e;
}
