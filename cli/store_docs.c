/* store_docs.c - the `simhash store` subcommands that read documents: add
 * (texts, fingerprinted with the store's own config, so a store's
 * fingerprints all share its scheme), import (export's JSON Lines) and query.
 *
 * Documents come from the document source (source.h): on -j workers, add's
 * texts are fingerprinted and import's lines parsed, each document packed
 * into its batch as a struct packed followed by its id and metadata bytes;
 * the main thread unpacks the batches in input order. Writes go in batches of
 * up to BATCH_DOCS documents, one transaction each (simhash_store_put_many),
 * so `add` and `import` cost one fsync per batch, and on a bad document the
 * ones before it are still stored, whatever -j.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonl.h"
#include "progress.h"
#include "store_cmd.h"

#define BATCH_DOCS 2048

/* One document in a source batch; its id and metadata bytes follow. */
struct packed {
	simhash_fp fp;
	int64_t time;
	uint64_t id_len, meta_len;
};

/* What a worker reads from the run. */
struct reading {
	const char *meta_field; /* add --jsonl */
	int multi;              /* several inputs: a line's id is FILE:LINE */
	const char *scheme;     /* import: the store's */
	unsigned bits;
};

/* ---- packing, on the workers */

static int pack(struct src_batch *b, const struct doc *d, const simhash_fp *fp, int64_t time,
		const char *id, size_t id_len, const char *meta, size_t meta_len)
{
	struct packed p = { *fp, time, id_len, meta_len };

	if (!id_len || id_len > SIMHASH_STORE_ID_MAX)
		return src_fail(b, d, "id must be 1 to %d bytes", SIMHASH_STORE_ID_MAX);
	if (meta_len > SIMHASH_STORE_META_MAX)
		return src_fail(b, d, "metadata over %d bytes", SIMHASH_STORE_META_MAX);
	if (sbuf_add(&b->out, &p, sizeof p) || sbuf_add(&b->out, id, id_len) ||
	    sbuf_add(&b->out, meta, meta_len))
		return src_fail(b, d, "out of memory");
	return 0;
}

/* add's doc hook: the fingerprint, id and metadata (a string as is, other
 * JSON compact) of a text. */
static int add_doc(struct src_batch *b, const struct doc *d, void *arg)
{
	const struct reading *rd = arg;
	struct sbuf id = { 0 };
	json_t *meta = NULL;
	char *dumped = NULL;
	const char *m = NULL;
	size_t m_len = 0;
	int ret;

	if (d->rec && rd->meta_field)
		meta = json_object_get(d->rec->root, rd->meta_field);
	if (json_is_string(meta)) {
		m = json_string_value(meta);
		m_len = json_string_length(meta);
	} else if (meta && !json_is_null(meta)) {
		dumped = json_dumps(meta, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!dumped)
			return src_fail(b, d, "out of memory");
		m = dumped;
		m_len = strlen(dumped);
	}
	if (src_raw_id(&id, d, rd->multi, 0))
		ret = src_fail(b, d, "out of memory");
	else
		ret = pack(b, d, &d->fp, 0, id.p ? id.p : "", id.len, m, m_len);
	free(dumped);
	sbuf_free(&id);
	return ret;
}

/* import's doc hook: one line of export's JSON Lines: id (string),
 * fingerprint (hex of the store's width), time and meta (optional), scheme
 * (optional; must be the store's). Blank lines are skipped. */
static int import_doc(struct src_batch *b, const struct doc *d, void *arg)
{
	const struct reading *rd = arg;
	json_t *root, *id, *fph, *t, *meta, *scheme;
	size_t len = d->text_len;
	json_error_t jerr;
	simhash_fp fp;
	char *m = NULL;
	int ret = -1;

	while (len && (d->text[len - 1] == ' ' || d->text[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	if (!(root = json_loadb(d->text, len, 0, &jerr)))
		return src_fail(b, d, "invalid JSON: %s", jerr.text);
	id = json_object_get(root, "id");
	fph = json_object_get(root, "fingerprint");
	t = json_object_get(root, "time");
	meta = json_object_get(root, "meta");
	scheme = json_object_get(root, "scheme");
	if (!json_is_string(id)) {
		src_fail(b, d, "missing string field \"id\"");
	} else if (!json_is_string(fph) ||
		   simhash_fp_parse(json_string_value(fph), json_string_length(fph), &fp)) {
		src_fail(b, d, "missing or invalid field \"fingerprint\" (hex digits)");
	} else if (fp.bits != rd->bits) {
		src_fail(b, d, "a %u-bit fingerprint for a store of %u-bit fingerprints", fp.bits,
			 rd->bits);
	} else if (scheme && (!json_is_string(scheme) ||
			      strcmp(json_string_value(scheme), rd->scheme))) {
		src_fail(b, d, "scheme %s, the store's is %s",
			 json_is_string(scheme) ? json_string_value(scheme) : "(not a string)",
			 rd->scheme);
	} else if (t && !json_is_integer(t)) {
		src_fail(b, d, "field \"time\" is not an integer");
	} else {
		if (meta && !json_is_string(meta) && !json_is_null(meta))
			m = json_dumps(meta, JSON_COMPACT | JSON_ENCODE_ANY);
		ret = pack(b, d, &fp, t ? (int64_t)json_integer_value(t) : 0,
			   json_string_value(id), json_string_length(id),
			   json_is_string(meta) ? json_string_value(meta) : m,
			   json_is_string(meta) ? json_string_length(meta) : m ? strlen(m) : 0);
	}
	free(m);
	json_decref(root);
	return ret;
}

/* Steps through a source batch's packed documents: *pos starts at 0; 1 and
 * the next document, or 0 after the last. */
static int unpack(const struct src_batch *b, size_t *pos, struct packed *p, const char **id,
		  const char **meta)
{
	if (*pos >= b->out.len)
		return 0;
	memcpy(p, b->out.p + *pos, sizeof *p);
	*id = b->out.p + *pos + sizeof *p;
	*meta = *id + p->id_len;
	*pos += sizeof *p + p->id_len + p->meta_len;
	return 1;
}

/* ---- writing, on the main thread */

struct put {
	simhash_store *st;
	const char *cmd;
	simhash_store_doc docs[BATCH_DOCS];
	size_t n;
	struct sbuf bytes; /* the ids and metadata of docs, back to back */
	uint64_t n_added;
};

static int put_flush(struct put *w)
{
	const char *at = w->bytes.p;
	simhash_error se;
	simhash_err e;

	for (size_t i = 0; i < w->n; i++) {
		w->docs[i].id = at;
		w->docs[i].meta = w->docs[i].meta_len ? at + w->docs[i].id_len : NULL;
		at += w->docs[i].id_len + w->docs[i].meta_len;
	}
	if (w->n && (e = simhash_store_put_many(w->st, w->docs, w->n, &se)) != SIMHASH_OK) {
		store_fail(w->cmd, &se);
		return -1;
	}
	w->n_added += w->n;
	w->n = 0;
	w->bytes.len = 0;
	return 0;
}

/* The batch hook of add and import. */
static int put_batch(struct src_batch *b, void *arg)
{
	struct put *w = arg;
	struct packed p;
	const char *id, *meta;
	size_t pos = 0;

	while (unpack(b, &pos, &p, &id, &meta)) {
		simhash_store_doc *sd = &w->docs[w->n];

		if (sbuf_add(&w->bytes, id, p.id_len) || sbuf_add(&w->bytes, meta, p.meta_len)) {
			cli_err("%s: out of memory", w->cmd);
			return -1;
		}
		sd->id_len = p.id_len;
		sd->meta_len = p.meta_len;
		sd->fp = p.fp;
		sd->time = p.time;
		if (++w->n == BATCH_DOCS && put_flush(w))
			return -1;
	}
	return 0;
}

/* Reads the inputs of argv[first ..] (none: standard input) into the store
 * at argv[first - 1]: add's texts, or import's lines (o NULL). */
static int put_all(const char *cmd, struct opts *o, int argc, char **argv, int first)
{
	static char *std_in[] = { "-" };
	struct put *w = xcalloc(1, sizeof *w);
	struct reading rd = { .meta_field = o->meta_field };
	struct src_opts so = { .cmd = cmd, .mode = o->mode, .text_field = o->text_field,
			       .id_field = o->id_field, .batch = put_batch, .arg = w };
	simhash_config cfg;
	struct source *src = NULL;
	struct progress prog;
	char **paths = first < argc ? argv + first : std_in;
	size_t n_paths = first < argc ? (size_t)(argc - first) : 1;
	int import = !strcmp(cmd, "store import"), ret = EXIT_FAIL;
	simhash_err e;

	w->cmd = cmd;
	if (!(w->st = store_open(argv[first - 1], 0)))
		goto out;
	simhash_config_init(&cfg);
	rd.multi = argc - first > 1;
	rd.scheme = simhash_store_scheme(w->st);
	rd.bits = simhash_store_bits(w->st);
	so.cfg = &cfg;
	so.raw = import;
	so.mode = import ? MODE_LINES : o->mode;
	so.doc = import ? import_doc : add_doc;
	so.n_threads = o->jobs ? (unsigned)o->jobs : cli_online_cores(STORE_MAX_JOBS);
	so.doc_arg = &rd;
	if ((e = simhash_store_config(w->st, &cfg, NULL)) || (e = src_new(&so, &src))) {
		cli_err("%s: %s", cmd, simhash_strerror(e));
		goto out;
	}
	progress_init_paths(&prog, paths, n_paths);
	ret = src_run(src, paths, n_paths, &prog);
	if (put_flush(w)) /* the documents before a bad one too */
		ret = EXIT_FAIL;
	if (!ret)
		printf("%s %llu documents\n", import ? "imported" : "added",
		       (unsigned long long)w->n_added);
out:
	src_free(src);
	simhash_store_close(w->st);
	sbuf_free(&w->bytes);
	free(w);
	return ret;
}

int store_cmd_add(int argc, char **argv)
{
	struct opts o;
	int ret, i;

	ret = store_parse("store add", INPUT_OPTS | BIT(OPT_META_FIELD) | BIT(OPT_JOBS), NULL,
			  argc, argv, &o, &i);
	if (!ret)
		ret = put_all("store add", &o, argc, argv, i + 1);
	free(o.fps);
	return ret < 0 ? EXIT_OK : ret;
}

int store_cmd_import(int argc, char **argv)
{
	struct opts o;
	int ret, i;

	ret = store_parse("store import", BIT(OPT_JOBS), NULL, argc, argv, &o, &i);
	if (!ret)
		ret = put_all("store import", &o, argc, argv, i + 1);
	free(o.fps);
	return ret < 0 ? EXIT_OK : ret;
}

/* ---- query */

struct query_run {
	simhash_store *st;
	simhash_store_results *r;
	struct opts *o;
	struct sbuf out;
};

/* Prints the matches of one query: text `QUERY<TAB>ID<TAB>DISTANCE` lines (a
 * tab or line feed in an id printed as a space), or one JSON object. */
static int query_one(struct query_run *q, const char *qid, size_t qid_len, const simhash_fp *fp)
{
	simhash_error se;
	simhash_err e = simhash_store_query(q->st, fp, (unsigned)q->o->k, q->o->limit, q->r, &se);
	size_t n = simhash_store_results_count(q->r);
	char hex[SIMHASH_HEX_MAX];
	int bad = 0;

	if (e) {
		store_fail("store query", &se);
		return -1;
	}
	if (q->o->json) {
		simhash_fp_format(fp, hex);
		bad |= sbuf_adds(&q->out, "{\"query\":") ||
		       sbuf_add_json_str(&q->out, qid, qid_len) ||
		       sbuf_adds(&q->out, ",\"fingerprint\":\"") || sbuf_adds(&q->out, hex) ||
		       sbuf_adds(&q->out, "\",\"matches\":[");
		for (size_t i = 0; i < n; i++)
			bad |= (i && sbuf_addc(&q->out, ',')) ||
			       store_add_json_doc(&q->out, simhash_store_results_get(q->r, i), 1);
		bad |= sbuf_adds(&q->out, "]}\n");
	}
	for (size_t i = 0; i < n && !q->o->json; i++) {
		const simhash_store_match *m = simhash_store_results_get(q->r, i);
		char num[32];

		snprintf(num, sizeof num, "\t%u\n", m->dist);
		for (size_t j = 0; j < qid_len; j++)
			bad |= sbuf_addc(&q->out, qid[j] == '\t' || qid[j] == '\n' ? ' ' : qid[j]);
		bad |= sbuf_addc(&q->out, '\t');
		for (size_t j = 0; j < m->id_len; j++)
			bad |= sbuf_addc(&q->out,
					 m->id[j] == '\t' || m->id[j] == '\n' ? ' ' : m->id[j]);
		bad |= sbuf_adds(&q->out, num);
	}
	if (bad) {
		cli_err("store query: out of memory");
		return -1;
	}
	return q->out.len > (1 << 16) ? store_write_out(stdout, &q->out) : 0;
}

/* query's doc hook: the fingerprint and the id of a text. */
static int query_doc(struct src_batch *b, const struct doc *d, void *arg)
{
	const struct reading *rd = arg;
	struct sbuf id = { 0 };
	int ret;

	if (src_raw_id(&id, d, rd->multi, 0))
		ret = src_fail(b, d, "out of memory");
	else
		ret = pack(b, d, &d->fp, 0, id.p ? id.p : "", id.len, NULL, 0);
	sbuf_free(&id);
	return ret;
}

static int query_batch(struct src_batch *b, void *arg)
{
	struct query_run *q = arg;
	struct packed p;
	const char *id, *meta;
	size_t pos = 0;

	while (unpack(b, &pos, &p, &id, &meta))
		if (query_one(q, id, p.id_len, &p.fp))
			return -1;
	return 0;
}

/* Each -f HEX. */
static int query_fps(struct query_run *q)
{
	const struct opts *o = q->o;
	simhash_fp fp;

	for (int f = 0; f < o->n_fps; f++) {
		if (simhash_fp_parse(o->fps[f], strlen(o->fps[f]), &fp)) {
			cli_err("store query: invalid fingerprint '%s' (expected 8, 16 or 32 hex digits)",
				o->fps[f]);
			return EXIT_USAGE;
		}
		if (fp.bits != simhash_store_bits(q->st)) {
			cli_err("store query: a %u-bit fingerprint for a store of %u-bit fingerprints",
				fp.bits, simhash_store_bits(q->st));
			return EXIT_FAIL;
		}
		if (query_one(q, o->fps[f], strlen(o->fps[f]), &fp))
			return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* The texts of argv[first ..] (none: standard input), on one thread. */
static int query_texts(struct query_run *q, int argc, char **argv, int first)
{
	static char *std_in[] = { "-" };
	struct reading rd = { .multi = argc - first > 1 };
	struct src_opts so = { .cmd = "store query", .mode = q->o->mode,
			       .text_field = q->o->text_field, .id_field = q->o->id_field,
			       .n_threads = 1, .doc = query_doc, .batch = query_batch, .arg = q,
			       .doc_arg = &rd };
	struct source *src = NULL;
	simhash_config cfg;
	simhash_err e;
	int ret;

	simhash_config_init(&cfg);
	so.cfg = &cfg;
	if ((e = simhash_store_config(q->st, &cfg, NULL)) || (e = src_new(&so, &src))) {
		cli_err("store query: %s", simhash_strerror(e));
		return EXIT_FAIL;
	}
	ret = src_run(src, first < argc ? argv + first : std_in,
		      first < argc ? (size_t)(argc - first) : 1, NULL);
	src_free(src);
	return ret;
}

int store_cmd_query(int argc, char **argv)
{
	struct query_run q = { 0 };
	struct opts o;
	int ret, i;

	ret = store_parse("store query", INPUT_OPTS | BIT(OPT_K) | BIT(OPT_LIMIT) | BIT(OPT_FP) |
				  BIT(OPT_JSON), NULL, argc, argv, &o, &i);
	if (ret)
		goto out;
	q.o = &o;
	if (o.n_fps && i + 1 < argc) {
		cli_err("store query: -f and input files exclude each other");
		ret = EXIT_USAGE;
		goto out;
	}
	if (!(q.st = store_open(argv[i], SIMHASH_STORE_RDONLY)) ||
	    simhash_store_results_new(&q.r)) {
		ret = EXIT_FAIL;
		goto out;
	}
	ret = o.n_fps ? query_fps(&q) : query_texts(&q, argc, argv, i + 1);
	store_write_out(stdout, &q.out);
out:
	sbuf_free(&q.out);
	simhash_store_results_free(q.r);
	simhash_store_close(q.st);
	free(o.fps);
	return ret < 0 ? EXIT_OK : ret;
}
