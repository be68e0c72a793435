/* service_store.c - the library's store (simhash_store_*) behind the
 * document routes.
 *
 * Every write call blocks until the store's group commit has made it durable
 * (http.c runs writes on its writer threads for that reason), so an answer in
 * 2xx always means durable. Reads run on a read transaction in the calling
 * thread. Each thread keeps one simhash_store_results (a thread-local made on
 * first use), as the store asks for one per thread.
 *
 * A write that fails for lack of space (the file system, or LMDB's map)
 * answers 507 insufficient_storage and marks the store unwritable for
 * /healthz until a write succeeds again; reads go on meanwhile. A record
 * that fails its checksum answers 500 corrupt and is logged on stderr.
 *
 * Metadata is stored as the compact JSON text of the request's "meta" object
 * and given back parsed; bytes that are not a JSON object (written by another
 * client of the library) come back as a string, or null if not UTF-8.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"
#include "service_store.h"

struct api_store {
	simhash_store *st;
	pthread_key_t res_key;
	int unwritable; /* atomic: the last write failed for lack of space */
};

static void set_writable(struct api *api, int ok)
{
	__atomic_store_n(&api->store->unwritable, !ok, __ATOMIC_RELAXED);
}

int sh_store_writable(struct api *api)
{
	return api->store && !__atomic_load_n(&api->store->unwritable, __ATOMIC_RELAXED);
}

static void results_destroy(void *r)
{
	simhash_store_results_free(r);
}

static simhash_store_results *thread_results(struct api_store *s)
{
	simhash_store_results *r = pthread_getspecific(s->res_key);

	if (!r && simhash_store_results_new(&r) == SIMHASH_OK)
		pthread_setspecific(s->res_key, r);
	return r;
}

int sh_store_open(struct api *api, const char *path, char *err, size_t err_len)
{
	struct api_store *s = calloc(1, sizeof(*s));
	simhash_error se;
	simhash_err e;

	if (!s) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	e = simhash_store_open(path, 0, &s->st, &se);
	if (e) {
		if (strcmp(se.msg, simhash_strerror(e)))
			snprintf(err, err_len, "%s", se.msg);
		else /* the store said no more than the code */
			snprintf(err, err_len, "%s: %s", path, simhash_strerror(e));
		free(s);
		return -1;
	}
	simhash_config_init(&api->cfg);
	if (simhash_store_config(s->st, &api->cfg, NULL) ||
	    pthread_key_create(&s->res_key, results_destroy)) {
		snprintf(err, err_len, "%s: cannot read the store's configuration", path);
		simhash_store_close(s->st);
		free(s);
		return -1;
	}
	if (api->limits.max_id > SIMHASH_STORE_ID_MAX)
		api->limits.max_id = SIMHASH_STORE_ID_MAX;
	if (api->limits.max_meta > SIMHASH_STORE_META_MAX)
		api->limits.max_meta = SIMHASH_STORE_META_MAX;
	api->store = s;
	return 0;
}

int sh_store_close(struct api *api, char *err, size_t err_len)
{
	struct api_store *s = api->store;

	if (!s)
		return 0;
	/* Commits what is queued; every thread holding results has ended. */
	simhash_store_close(s->st);
	pthread_key_delete(s->res_key);
	free(s);
	api->store = NULL;
	return 0;
}

long long sh_store_count(struct api *api)
{
	simhash_store_stats stats;

	simhash_store_stats_init(&stats);
	if (!api->store || simhash_store_stats_get(api->store->st, &stats, NULL))
		return -1;
	return (long long)stats.n_docs;
}

static int store_error(struct api *api, const simhash_error *se, struct api_reply *r)
{
	simhash_err e = se->code;
	/* se->msg is never empty: at least the code's text */
	const char *more = strcmp(se->msg, simhash_strerror(e)) ? se->msg : "";

	if (e == SIMHASH_ENOSPC) {
		set_writable(api, 0);
		return api_error(r, 507, "insufficient_storage", "%s%s%s", simhash_strerror(e),
				 more[0] ? ": " : "", more);
	}
	if (e == SIMHASH_ECORRUPT) {
		fprintf(stderr, "simhash serve: %s\n", se->msg);
		return api_error(r, 500, "corrupt", "%s", se->msg);
	}
	if (e == SIMHASH_ESCHEME)
		return api_error(r, 422, "wrong_width", "%s", se->msg);
	if (e == SIMHASH_EINVAL)
		return api_error(r, 422, "invalid", "%s", se->msg);
	return api_error(r, 500, "store_error", "%s%s%s", simhash_strerror(e), more[0] ? ": " : "",
			 more);
}

static json_t *meta_json(const void *meta, size_t len)
{
	json_t *j;

	if (!len)
		return json_null();
	/* JSON_ALLOW_NUL: metadata holding "\u0000" comes back as stored. */
	j = json_loadb(meta, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (json_is_object(j))
		return j;
	json_decref(j);
	j = json_stringn(meta, len);
	return j ? j : json_null();
}

static json_t *match_json(const simhash_store_match *m, int with_dist)
{
	json_t *j = json_pack("{s:s%,s:o,s:I,s:o}", "id", m->id, m->id_len, "fingerprint",
			      api_fp_json(&m->fp), "time", (json_int_t)m->time, "meta",
			      meta_json(m->meta, m->meta_len));

	if (j && with_dist)
		json_object_set_new(j, "distance", json_integer(m->dist));
	return j;
}

static json_t *matches_json(const simhash_store_results *res)
{
	json_t *arr = json_array();
	size_t i, n = simhash_store_results_count(res);

	for (i = 0; i < n; i++)
		json_array_append_new(arr, match_json(simhash_store_results_get(res, i), 1));
	return arr;
}

int sh_store_query(struct api *api, const simhash_fp *fp, unsigned k, unsigned limit,
		   struct api_reply *r)
{
	simhash_store_results *res = thread_results(api->store);
	simhash_error se;
	simhash_err e;

	if (!res)
		return api_error(r, 500, "internal", "out of memory");
	e = simhash_store_query(api->store->st, fp, k, limit, res, &se);
	if (e)
		return store_error(api, &se, r);
	return api_reply_json(r, 200,
			      json_pack("{s:o,s:o,s:i}", "matches", matches_json(res), "fingerprint",
					api_fp_json(fp), "k", (int)k));
}

static void to_store_doc(const struct doc_req *d, simhash_store_doc *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->id = d->id;
	sd->id_len = d->id_len;
	sd->fp = d->fp;
	sd->meta = d->meta;
	sd->meta_len = d->meta_len;
}

/* One document through check-and-put: its answer object, or NULL with r set. */
static json_t *check_and_put(struct api *api, const struct doc_req *d, int *added,
			     struct api_reply *r)
{
	simhash_store_results *res = thread_results(api->store);
	simhash_store_doc sd;
	simhash_error se;
	simhash_err e;
	json_t *j;

	if (!res) {
		api_error(r, 500, "internal", "out of memory");
		return NULL;
	}
	to_store_doc(d, &sd);
	e = simhash_store_check_and_put(api->store->st, &sd, d->k, d->limit, d->if_unique, res,
					added, &se);
	if (e) {
		store_error(api, &se, r);
		return NULL;
	}
	set_writable(api, 1);
	j = json_pack("{s:s%,s:o,s:b,s:o}", "id", d->id, d->id_len, "fingerprint",
		      api_fp_json(&d->fp), "added", *added, "duplicates", matches_json(res));
	return j;
}

/* Puts docs[0..n) with no check, in one commit: 0 once durable, or an
 * error answer's status. */
static int put_docs(struct api *api, const struct doc_req *docs, size_t n, struct api_reply *r)
{
	simhash_store_doc *sd = calloc(n ? n : 1, sizeof(*sd));
	simhash_error se;
	simhash_err e;
	size_t i;

	if (!sd)
		return api_error(r, 500, "internal", "out of memory");
	for (i = 0; i < n; i++)
		to_store_doc(&docs[i], &sd[i]);
	e = n == 1 ? simhash_store_put(api->store->st, sd, &se)
		   : simhash_store_put_many(api->store->st, sd, n, &se);
	free(sd);
	if (e)
		return store_error(api, &se, r);
	set_writable(api, 1);
	return 0;
}

/* The answer object of a document put with no check. */
static json_t *added_json(const struct doc_req *d)
{
	return json_pack("{s:s%,s:o,s:b}", "id", d->id, d->id_len, "fingerprint",
			 api_fp_json(&d->fp), "added", 1);
}

int sh_store_add(struct api *api, const struct doc_req *d, struct api_reply *r)
{
	json_t *j;
	int added, st;

	if (d->check || d->if_unique) {
		j = check_and_put(api, d, &added, r);
		if (!j)
			return r->status;
		if (!added) {
			json_object_set_new(j, "error",
					    json_pack("{s:s,s:s}", "code", "near_duplicate", "message",
						      "not added: near-duplicates are stored"));
			return api_reply_json(r, 409, j);
		}
		return api_reply_json(r, 201, j);
	}
	if ((st = put_docs(api, d, 1, r)))
		return st;
	return api_reply_json(r, 201, added_json(d));
}

int sh_store_add_batch(struct api *api, const struct doc_req *docs, size_t n,
		       struct api_reply *r)
{
	json_t *results, *j;
	size_t i, n_added = 0;
	int checked = 0, added, st;

	for (i = 0; i < n; i++)
		checked |= docs[i].check || docs[i].if_unique;
	if (checked) {
		/* Each document checked against the store and those before it:
		 * one check-and-put each (each durable on its own). */
		results = json_array();
		for (i = 0; i < n; i++) {
			j = check_and_put(api, &docs[i], &added, r);
			if (!j) {
				json_decref(results);
				return r->status;
			}
			n_added += (size_t)added;
			json_array_append_new(results, j);
		}
		return api_reply_json(r, 200, json_pack("{s:o,s:I}", "results", results, "added",
							(json_int_t)n_added));
	}
	if ((st = put_docs(api, docs, n, r)))
		return st;
	results = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(results, added_json(&docs[i]));
	return api_reply_json(r, 200,
			      json_pack("{s:o,s:I}", "results", results, "added", (json_int_t)n));
}

int sh_store_get(struct api *api, const char *id, size_t id_len, struct api_reply *r)
{
	simhash_store_results *res = thread_results(api->store);
	simhash_error se;
	simhash_err e;

	if (!res)
		return api_error(r, 500, "internal", "out of memory");
	e = simhash_store_get(api->store->st, id, id_len, res, &se);
	if (e)
		return store_error(api, &se, r);
	if (simhash_store_results_count(res) == 0)
		return api_error(r, 404, "not_found", "no document has this id");
	return api_reply_json(r, 200, match_json(simhash_store_results_get(res, 0), 0));
}

int sh_store_delete(struct api *api, const char *id, size_t id_len, struct api_reply *r)
{
	simhash_error se;
	simhash_err e;
	int deleted = 0;

	e = simhash_store_delete(api->store->st, id, id_len, &deleted, &se);
	if (e)
		return store_error(api, &se, r);
	set_writable(api, 1);
	if (!deleted)
		return api_error(r, 404, "not_found", "no document has this id");
	return api_reply_json(r, 200, json_pack("{s:s%,s:b}", "id", id, id_len, "deleted", 1));
}

int sh_store_stats(struct api *api, json_t *j, struct api_reply *r)
{
	simhash_store_stats s;
	simhash_error se;
	simhash_err e;

	simhash_store_stats_init(&s);
	e = simhash_store_stats_get(api->store->st, &s, &se);

	if (e) {
		json_decref(j);
		return store_error(api, &se, r);
	}
	json_object_set_new(j, "store",
			    json_pack("{s:I,s:i,s:I,s:I,s:I,s:I,s:f,s:s,s:I,s:I,s:I}", "documents",
				      (json_int_t)s.n_docs, "format_version", (int)s.format_version,
				      "file_bytes", (json_int_t)s.file_bytes, "commits",
				      (json_int_t)s.n_commits, "committed_writes",
				      (json_int_t)s.n_committed, "max_commit_batch",
				      (json_int_t)s.max_batch, "open_seconds", s.open_seconds,
				      "open_index", s.open_replayed == UINT64_MAX ? "rebuilt" : "checkpoint",
				      "open_replayed",
				      (json_int_t)(s.open_replayed == UINT64_MAX ? 0 : s.open_replayed),
				      "checkpoints", (json_int_t)s.n_checkpoints,
				      "checkpoint_delta", (json_int_t)s.checkpoint_delta));
	return api_reply_json(r, 200, j);
}

int sh_store_commits(struct api *api, struct sh_store_figures *f)
{
	simhash_store_stats s;

	simhash_store_stats_init(&s);
	if (!api->store || simhash_store_stats_get(api->store->st, &s, NULL))
		return -1;
	f->commits = s.n_commits;
	f->writes = s.n_committed;
	f->max_batch = s.max_batch;
	memcpy(f->batches, s.commit_batches, sizeof f->batches);
	return 0;
}
