/* store.c - the store behind the document routes. Placeholder until the
 * library's store lands: every call answers 503. */
#include <stdio.h>
#include "api_internal.h"

static int unavailable(struct api_reply *r)
{
	return api_error(r, 503, "no_store", "the store is not available");
}

int sh_store_query(struct api *api, const simhash_fp *fp, unsigned k, unsigned limit,
		   struct api_reply *r)
{
	return unavailable(r);
}

int sh_store_add(struct api *api, struct doc_req *docs, size_t n, int is_batch,
		 struct api_reply *r)
{
	return unavailable(r);
}

int sh_store_get(struct api *api, const char *id, size_t id_len, struct api_reply *r)
{
	return unavailable(r);
}

int sh_store_delete(struct api *api, const char *id, size_t id_len, struct api_reply *r)
{
	return unavailable(r);
}

int sh_store_stats(struct api *api, json_t *j, struct api_reply *r)
{
	return api_reply_json(r, 200, j);
}

long long sh_store_count(struct api *api)
{
	return -1;
}

int sh_store_open(struct api *api, const char *path, char *err, size_t err_len)
{
	snprintf(err, err_len, "%s: stores are not supported yet", path);
	return -1;
}

int sh_store_close(struct api *api, char *err, size_t err_len)
{
	return 0;
}
