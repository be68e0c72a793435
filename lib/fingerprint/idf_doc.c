/* idf_doc.c - IDF tables meet documents: simhash_idf_add_document() counts
 * the features of a document (this layer) towards the document frequencies
 * of a table (the features layer below, which never calls up into this one),
 * and simhash_idf_coverage() tells how many of them a table knows. */
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "ctx.h"

simhash_err simhash_idf_add_document(simhash_idf *idf, simhash_ctx *ctx, const char *text,
				     size_t len, simhash_error *e)
{
	simhash_err err;

	if (!idf || !ctx || (!text && len))
		return sh_error_code(e, SIMHASH_EINVAL);
	sh_idf_doc_begin(idf);
	err = sh_ctx_features_each(ctx, text, len, sh_idf_doc_feature, idf);
	if (!err)
		err = sh_idf_doc_commit(idf);
	return sh_ctx_fail(ctx, err, e);
}

struct coverage {
	const simhash_idf *idf;
	size_t n_features, n_known;
};

static int count_known(const char *data, size_t len, uint32_t count, void *arg)
{
	struct coverage *c = arg;

	SH_UNUSED(count);
	c->n_features++;
	c->n_known += (size_t)sh_idf_has_key(c->idf, sh_key_inline(data, len));
	return 0;
}

simhash_err simhash_idf_coverage(const simhash_idf *idf, simhash_ctx *ctx, const char *text,
				 size_t len, size_t *n_features, size_t *n_known, simhash_error *e)
{
	struct coverage c = { idf, 0, 0 };
	simhash_err err;

	if (!idf || !ctx || (!text && len) || !n_features || !n_known)
		return sh_error_code(e, SIMHASH_EINVAL);
	err = sh_ctx_features_each(ctx, text, len, count_known, &c);
	if (err)
		return sh_ctx_fail(ctx, err, e);
	*n_features = c.n_features;
	*n_known = c.n_known;
	return SIMHASH_OK;
}
