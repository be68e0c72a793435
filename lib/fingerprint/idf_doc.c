/* idf_doc.c - simhash_idf_add_document(): the features of a document (this
 * layer) counted towards the document frequencies of an IDF table (the
 * features layer below, which never calls up into this one). */
#include "../common/internal.h"

simhash_err simhash_idf_add_document(simhash_idf *idf, simhash_ctx *ctx, const char *text,
				     size_t len)
{
	simhash_err err;

	if (!idf || !ctx || (!text && len))
		return SIMHASH_EINVAL;
	sh_idf_doc_begin(idf);
	err = simhash_features_each(ctx, text, len, sh_idf_doc_feature, idf);
	if (err)
		return err;
	return sh_idf_doc_commit(idf);
}
