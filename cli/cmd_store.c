/* cmd_store.c - `simhash store`: create, add, query, get, delete, expire,
 * stats, export, import and verify on a store (the library's LMDB store).
 *
 * Writes go in batches of up to BATCH_DOCS documents, one transaction each
 * (simhash_store_put_many), so `add` and `import` cost one fsync per batch.
 * Texts are fingerprinted with the store's own config, so a store's
 * fingerprints all share its scheme. `verify` opens the store read-only, so
 * it runs beside a writer (a running `simhash serve`).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "commands.h"
#include "config_opts.h"
#include "jsonl.h"
#include "progress.h"
#include "reader.h"
#include "util.h"

#define BATCH_DOCS 2048
#define CHUNK_BYTES ((size_t)256 << 10)
#define ERR_MAX SIMHASH_STORE_ERR_MAX

enum mode { MODE_FILES, MODE_LINES, MODE_JSONL };

/* What add and query read: files, lines or JSON Lines records. */
struct input {
	enum mode mode;
	const char *text_field, *id_field, *meta_field;
	int multi;              /* several inputs: a line's id is FILE:LINE */
	const char *cmd;        /* "store add": prefix of messages */
};

/* One document of the input, handed to a callback. */
struct doc {
	const char *text;
	size_t text_len;
	const char *id;
	size_t id_len;
	const char *meta; /* NULL: none */
	size_t meta_len;
	const char *path;
	uint64_t line; /* 0: a whole file */
};

typedef int (*doc_fn)(const struct doc *d, void *arg);

static simhash_store *open_store(const char *path, unsigned flags)
{
	char err[ERR_MAX];
	simhash_store *st;
	simhash_err e = simhash_store_open(path, flags, &st, err, sizeof err);

	if (e) {
		cli_err("%s", err[0] ? err : simhash_strerror(e));
		return NULL;
	}
	return st;
}

static void store_fail(simhash_store *st, const char *cmd, simhash_err e)
{
	char err[ERR_MAX];

	simhash_store_errmsg(st, err, sizeof err);
	cli_err("%s: %s", cmd, err[0] ? err : simhash_strerror(e));
}

static simhash_ctx *store_ctx(simhash_store *st, const char *cmd)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	simhash_err e;

	simhash_config_init(&cfg);
	if ((e = simhash_store_config(st, &cfg)) || (e = simhash_ctx_new(&cfg, &ctx))) {
		cli_err("%s: %s", cmd, simhash_strerror(e));
		return NULL;
	}
	return ctx;
}

/* "FILE:LINE: " or "FILE: " before a message about a document. */
static void doc_err(const struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void doc_err(const struct doc *d, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (d->line)
		cli_err("%s:%llu: %s", display_name(d->path), (unsigned long long)d->line, msg);
	else
		cli_err("%s: %s", display_name(d->path), msg);
}

static int fingerprint(simhash_ctx *ctx, const struct doc *d, simhash_fp *fp)
{
	simhash_err e = simhash_fingerprint(ctx, d->text, d->text_len, fp);

	if (e == SIMHASH_EUTF8)
		doc_err(d, "invalid UTF-8 at byte %zu", simhash_ctx_error_offset(ctx));
	else if (e)
		doc_err(d, "%s", simhash_strerror(e));
	return e ? -1 : 0;
}

/* One line of --lines or --jsonl input. */
static int do_line(const struct input *in, struct jsonl_rec *rec, struct sbuf *scratch,
		   const char *path, uint64_t line, const char *s, size_t len, doc_fn fn,
		   void *arg)
{
	struct doc d = { s, len, NULL, 0, NULL, 0, path, line };
	char err[ERR_MAX / 2];
	int meta_in_scratch = 0;
	json_t *meta;
	int ret;

	scratch->len = 0;
	if (in->mode == MODE_JSONL) {
		ret = jsonl_extract(s, len, in->text_field, in->id_field, 0, rec, err, sizeof err);
		if (ret == JSONL_BLANK)
			return 0;
		if (ret == JSONL_ERROR) {
			doc_err(&d, "%s", err);
			return -1;
		}
		d.text = rec->text;
		d.text_len = rec->text_len;
		d.id = rec->id;
		d.id_len = rec->id_len;
		meta = in->meta_field ? json_object_get(rec->root, in->meta_field) : NULL;
		if (json_is_string(meta)) {
			d.meta = json_string_value(meta);
			d.meta_len = json_string_length(meta);
		} else if (meta && !json_is_null(meta)) {
			char *m = json_dumps(meta, JSON_COMPACT | JSON_ENCODE_ANY);

			if (!m || sbuf_adds(scratch, m)) {
				free(m);
				doc_err(&d, "out of memory");
				return -1;
			}
			free(m);
			meta_in_scratch = 1;
			d.meta_len = scratch->len;
		}
	}
	if (!d.id) {
		size_t start = scratch->len;

		if ((in->multi && (sbuf_adds(scratch, path) || sbuf_addc(scratch, ':'))) ||
		    sbuf_add_u64(scratch, line)) {
			doc_err(&d, "out of memory");
			return -1;
		}
		d.id = scratch->p + start;
		d.id_len = scratch->len - start;
	}
	if (meta_in_scratch)
		d.meta = scratch->p; /* set last: adding the id may move scratch */
	return fn(&d, arg);
}

static int read_lines(const struct input *in, const char *path, doc_fn fn, void *arg)
{
	struct reader r;
	struct sbuf buf = { 0 }, scratch = { 0 };
	struct jsonl_rec rec;
	struct chunk c;
	int ret = 0, got;

	if (reader_open(&r, path)) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		return -1;
	}
	jsonl_rec_init(&rec);
	while (!ret && (got = reader_next(&r, CHUNK_BYTES, 4096, &buf, &c)) != 0) {
		uint64_t line = c.first_line;
		size_t pos = 0, len;
		const char *s;

		if (got < 0) {
			cli_err("%s:%llu: %s", display_name(path),
				(unsigned long long)(r.next_line + r.n_found), strerror(errno));
			ret = -1;
			break;
		}
		while (!ret && chunk_next_line(&c, &pos, &s, &len))
			ret = do_line(in, &rec, &scratch, path, line++, s, len, fn, arg);
	}
	jsonl_rec_free(&rec);
	sbuf_free(&buf);
	sbuf_free(&scratch);
	reader_close(&r);
	return ret;
}

/* Calls fn for every document of the inputs (none: standard input). */
static int for_each_doc(const struct input *in, char **paths, int n_paths, doc_fn fn, void *arg)
{
	static char *std_in[] = { "-" };
	struct sbuf file = { 0 };
	int ret = 0;

	if (!n_paths) {
		paths = std_in;
		n_paths = 1;
	}
	for (int i = 0; i < n_paths && !ret; i++) {
		if (in->mode != MODE_FILES) {
			ret = read_lines(in, paths[i], fn, arg);
			continue;
		}
		if (read_path_all(paths[i], &file)) {
			cli_err("%s: %s", display_name(paths[i]), strerror(errno));
			ret = -1;
			break;
		}
		struct doc d = { file.p ? file.p : "", file.len, paths[i], strlen(paths[i]),
				 NULL, 0, paths[i], 0 };
		ret = fn(&d, arg);
	}
	sbuf_free(&file);
	return ret;
}

static uint64_t total_size(char **paths, int n)
{
	uint64_t total = 0;
	struct stat sb;

	for (int i = 0; i < n; i++)
		if (stat(paths[i], &sb) == 0 && S_ISREG(sb.st_mode))
			total += (uint64_t)sb.st_size;
	return total;
}

/* ---- batches of documents to put */

struct batch {
	simhash_store *st;
	const char *cmd;
	simhash_store_doc docs[BATCH_DOCS];
	size_t offs[BATCH_DOCS][2]; /* id and meta offsets in bytes */
	size_t n;
	struct sbuf bytes;
	uint64_t n_added, n_bytes;
	struct progress progress;
	simhash_ctx *ctx;
};

static int batch_flush(struct batch *b)
{
	simhash_err e;

	for (size_t i = 0; i < b->n; i++) {
		b->docs[i].id = b->bytes.p + b->offs[i][0];
		b->docs[i].meta = b->docs[i].meta_len ? b->bytes.p + b->offs[i][1] : NULL;
	}
	if (b->n && (e = simhash_store_put_many(b->st, b->docs, b->n)) != SIMHASH_OK) {
		progress_end(&b->progress);
		store_fail(b->st, b->cmd, e);
		return -1;
	}
	progress_add(&b->progress, b->n_bytes, b->n);
	b->n_added += b->n;
	b->n = 0;
	b->n_bytes = 0;
	b->bytes.len = 0;
	return 0;
}

static int batch_add(struct batch *b, const struct doc *d, const simhash_fp *fp, int64_t time)
{
	simhash_store_doc *sd = &b->docs[b->n];

	if (!d->id_len || d->id_len > SIMHASH_STORE_ID_MAX) {
		doc_err(d, "id must be 1 to %d bytes", SIMHASH_STORE_ID_MAX);
		return -1;
	}
	if (d->meta_len > SIMHASH_STORE_META_MAX) {
		doc_err(d, "metadata over %d bytes", SIMHASH_STORE_META_MAX);
		return -1;
	}
	b->offs[b->n][0] = b->bytes.len;
	if (sbuf_add(&b->bytes, d->id, d->id_len)) {
		doc_err(d, "out of memory");
		return -1;
	}
	b->offs[b->n][1] = b->bytes.len;
	if (d->meta_len && sbuf_add(&b->bytes, d->meta, d->meta_len)) {
		doc_err(d, "out of memory");
		return -1;
	}
	sd->id_len = d->id_len;
	sd->meta_len = d->meta_len;
	sd->fp = *fp;
	sd->time = time;
	b->n_bytes += d->text_len;
	return ++b->n == BATCH_DOCS ? batch_flush(b) : 0;
}

static int add_one(const struct doc *d, void *arg)
{
	struct batch *b = arg;
	simhash_fp fp;

	return fingerprint(b->ctx, d, &fp) ? -1 : batch_add(b, d, &fp, 0);
}

/* ---- the subcommands */

enum { OPT_LINES, OPT_JSONL, OPT_TEXT_FIELD, OPT_ID_FIELD, OPT_META_FIELD, OPT_K, OPT_LIMIT,
       OPT_FP, OPT_JSON, OPT_OLDER, OPT_OUTPUT };

static const struct cli_opt input_opts[] = {
	[OPT_LINES] = { "lines", 0, NULL, "one document per line; id: its line number" },
	[OPT_JSONL] = { "jsonl", 0, NULL, "one JSON object per line, with text, id and meta fields" },
	[OPT_TEXT_FIELD] = { "text-field", 0, "NAME", "the text field of --jsonl (default: text)" },
	[OPT_ID_FIELD] = { "id-field", 0, "NAME", "the id field of --jsonl (default: id)" },
	[OPT_META_FIELD] = { "meta-field", 0, "NAME",
			     "the metadata field of --jsonl (default: meta), stored as is" },
	[OPT_K] = { "max-distance", 'k', "K", "query: match within K differing bits (default 3)" },
	[OPT_LIMIT] = { "limit", 0, "N", "query: at most N matches per document (default: all)" },
	[OPT_FP] = { "fingerprint", 'f', "HEX", "query: this fingerprint (repeatable)" },
	[OPT_JSON] = { "json", 0, NULL, "print JSON" },
	[OPT_OLDER] = { "older-than", 0, "AGE", "expire: AGE as N, Ns, Nm, Nh or Nd" },
	[OPT_OUTPUT] = { "output", 'o', "FILE", "export: write to FILE" },
	{ NULL, 0, NULL, NULL },
};

struct opts {
	struct input in;
	unsigned long k, limit;
	char **fps;
	int n_fps;
	int json;
	const char *older, *output;
	int seen[OPT_OUTPUT + 1];
};

static void store_usage(FILE *f)
{
	fputs("usage: simhash store COMMAND PATH [OPTION]... [ARG]...\n\n"
	      "A persistent store of fingerprints: the LMDB file PATH, PATH-lock and PATH-index.\n\n"
	      "Commands:\n"
	      "  create PATH [CONFIG]...        make a store for the config's fingerprints\n"
	      "  add PATH [FILE]...             add texts (files, --lines or --jsonl)\n"
	      "  query PATH [-k K] [FILE]...    near-duplicates of texts or -f HEX\n"
	      "  get PATH ID...                 print documents as JSON\n"
	      "  delete PATH ID...              delete documents\n"
	      "  expire PATH --older-than AGE   delete documents added before now - AGE\n"
	      "  stats PATH [--json]            counts and the scheme\n"
	      "  export PATH [-o FILE]          all documents as JSON Lines\n"
	      "  import PATH [FILE]...          add documents from export's JSON Lines\n"
	      "  verify PATH                    check every invariant; exit 1 on a problem\n"
	      "  upgrade PATH                   rewrite an older store in this format version\n",
	      f);
}

/* Parses a subcommand's options: allowed is a bit set of OPT_*; config:
 * whether the fingerprint config flags are taken (create). */
static int parse(const char *cmd, unsigned allowed, struct cli_config *cc, int argc, char **argv,
		 struct opts *o, int *optind)
{
	struct cli_parse p;
	int c, ret = EXIT_OK;

	memset(o, 0, sizeof *o);
	o->in.mode = MODE_FILES;
	o->in.text_field = "text";
	o->in.id_field = "id";
	o->in.meta_field = "meta";
	o->in.cmd = cmd;
	o->k = 3;
	o->fps = xcalloc((size_t)argc + 1, sizeof *o->fps);
	cli_parse_begin(&p, cmd, input_opts, cc, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_END) {
		if (c == CLI_HELP) {
			store_usage(stdout);
			cli_opts_help(stdout, cc ? NULL : input_opts, cc != NULL);
			ret = -1;
			break;
		}
		if (c == CLI_BAD) {
			ret = EXIT_USAGE;
			break;
		}
		if (!(allowed & (1u << c))) {
			cli_err("%s: option --%s does not apply", cmd, input_opts[c].name);
			ret = EXIT_USAGE;
			break;
		}
		o->seen[c] = 1;
		switch (c) {
		case OPT_LINES: o->in.mode = MODE_LINES; break;
		case OPT_JSONL: o->in.mode = MODE_JSONL; break;
		case OPT_TEXT_FIELD: o->in.text_field = p.arg; break;
		case OPT_ID_FIELD: o->in.id_field = p.arg; break;
		case OPT_META_FIELD: o->in.meta_field = p.arg; break;
		case OPT_K:
			if (parse_uint(p.arg, 0, 128, &o->k)) {
				cli_err("%s: invalid -k '%s' (expected 0 to 128)", cmd, p.arg);
				ret = EXIT_USAGE;
			}
			break;
		case OPT_LIMIT:
			if (parse_uint(p.arg, 1, 1000000000, &o->limit)) {
				cli_err("%s: invalid --limit '%s'", cmd, p.arg);
				ret = EXIT_USAGE;
			}
			break;
		case OPT_FP: o->fps[o->n_fps++] = (char *)p.arg; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_OLDER: o->older = p.arg; break;
		case OPT_OUTPUT: o->output = p.arg; break;
		}
		if (ret)
			break;
	}
	if (!ret && o->seen[OPT_LINES] && o->seen[OPT_JSONL]) {
		cli_err("%s: --lines and --jsonl exclude each other", cmd);
		ret = EXIT_USAGE;
	}
	*optind = p.optind;
	cli_parse_end(&p);
	if (!ret && *optind >= argc) {
		cli_err("%s: missing store PATH", cmd);
		ret = EXIT_USAGE;
	}
	return ret;
}

#define BIT(o) (1u << (o))
#define INPUT_OPTS (BIT(OPT_LINES) | BIT(OPT_JSONL) | BIT(OPT_TEXT_FIELD) | BIT(OPT_ID_FIELD))

static int st_create(int argc, char **argv)
{
	char err[ERR_MAX];
	struct cli_config cc;
	simhash_store *st;
	struct opts o;
	simhash_err e;
	int ret, i;

	cli_config_init(&cc);
	ret = parse("store create", 0, &cc, argc, argv, &o, &i);
	if (ret)
		goto out;
	if (i + 1 < argc) {
		cli_err("store create: unexpected argument '%s'", argv[i + 1]);
		ret = EXIT_USAGE;
		goto out;
	}
	if ((ret = cli_config_finish(&cc, "store create")) != EXIT_OK)
		goto out;
	e = simhash_store_create(argv[i], &cc.cfg, &st, err, sizeof err);
	if (e) {
		cli_err("%s", err[0] ? err : simhash_strerror(e));
		ret = e == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	simhash_store_close(st);
out:
	free(o.fps);
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}

static int st_add(int argc, char **argv)
{
	struct batch *b;
	struct opts o;
	int ret, i;

	ret = parse("store add", INPUT_OPTS | BIT(OPT_META_FIELD), NULL, argc, argv, &o, &i);
	if (ret) {
		free(o.fps);
		return ret < 0 ? EXIT_OK : ret;
	}
	b = xcalloc(1, sizeof *b);
	b->cmd = "store add";
	o.in.multi = argc - i - 1 > 1;
	if (!(b->st = open_store(argv[i], 0)) || !(b->ctx = store_ctx(b->st, "store add"))) {
		ret = EXIT_FAIL;
		goto out;
	}
	progress_init(&b->progress, total_size(argv + i + 1, argc - i - 1));
	/* on a bad document, the ones before it are still added */
	ret = for_each_doc(&o.in, argv + i + 1, argc - i - 1, add_one, b) ? EXIT_FAIL : EXIT_OK;
	if (batch_flush(b))
		ret = EXIT_FAIL;
	progress_end(&b->progress);
	if (!ret)
		printf("added %llu documents\n", (unsigned long long)b->n_added);
out:
	simhash_ctx_free(b->ctx);
	simhash_store_close(b->st);
	sbuf_free(&b->bytes);
	free(b);
	free(o.fps);
	return ret;
}

/* Appends metadata as JSON: objects and arrays as they are, anything else as
 * a string (what add and import store for a string). */
static int add_json_meta(struct sbuf *out, const void *meta, size_t len)
{
	const char *m = meta;
	size_t i = 0;

	while (i < len && (m[i] == ' ' || m[i] == '\t' || m[i] == '\n' || m[i] == '\r'))
		i++;
	if (i < len && (m[i] == '{' || m[i] == '[')) {
		json_t *j = json_loadb(m, len, JSON_DECODE_ANY, NULL);

		if (j) {
			json_decref(j);
			return sbuf_add(out, m, len);
		}
	}
	return sbuf_add_json_str(out, m, len);
}

/* {"id":...,"fingerprint":"HEX"[,"distance":N],"time":T[,"meta":...]} */
static int add_json_doc(struct sbuf *out, const simhash_store_match *m, int dist)
{
	char hex[SIMHASH_HEX_MAX];
	char num[64];

	simhash_fp_format(&m->fp, hex);
	if (sbuf_adds(out, "{\"id\":") || sbuf_add_json_str(out, m->id, m->id_len) ||
	    sbuf_adds(out, ",\"fingerprint\":\"") || sbuf_adds(out, hex) || sbuf_addc(out, '"'))
		return -1;
	if (dist) {
		snprintf(num, sizeof num, ",\"distance\":%u", m->dist);
		if (sbuf_adds(out, num))
			return -1;
	}
	snprintf(num, sizeof num, ",\"time\":%lld", (long long)m->time);
	if (sbuf_adds(out, num))
		return -1;
	if (m->meta_len && (sbuf_adds(out, ",\"meta\":") || add_json_meta(out, m->meta, m->meta_len)))
		return -1;
	return sbuf_addc(out, '}');
}

static int write_out(FILE *f, struct sbuf *b)
{
	int ret = b->len && fwrite(b->p, 1, b->len, f) != b->len ? -1 : 0;

	b->len = 0;
	return ret;
}

struct query_run {
	simhash_store *st;
	simhash_ctx *ctx;
	simhash_store_results *r;
	struct opts *o;
	struct sbuf out;
};

/* Prints the matches of one query: text `QUERY<TAB>ID<TAB>DISTANCE` lines, or
 * one JSON object. */
static int query_one(struct query_run *q, const char *qid, size_t qid_len, const simhash_fp *fp)
{
	simhash_err e = simhash_store_query(q->st, fp, (unsigned)q->o->k, q->o->limit, q->r);
	size_t n = simhash_store_results_count(q->r);
	char hex[SIMHASH_HEX_MAX];
	int bad = 0;

	if (e) {
		store_fail(q->st, "store query", e);
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
			       add_json_doc(&q->out, simhash_store_results_get(q->r, i), 1);
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
	return q->out.len > (1 << 16) ? write_out(stdout, &q->out) : 0;
}

static int query_doc(const struct doc *d, void *arg)
{
	struct query_run *q = arg;
	simhash_fp fp;

	return fingerprint(q->ctx, d, &fp) ? -1 : query_one(q, d->id, d->id_len, &fp);
}

static int st_query(int argc, char **argv)
{
	struct query_run q = { 0 };
	struct opts o;
	int ret, i;

	ret = parse("store query", INPUT_OPTS | BIT(OPT_K) | BIT(OPT_LIMIT) | BIT(OPT_FP) |
			    BIT(OPT_JSON), NULL, argc, argv, &o, &i);
	if (ret) {
		free(o.fps);
		return ret < 0 ? EXIT_OK : ret;
	}
	q.o = &o;
	o.in.multi = argc - i - 1 > 1;
	if (o.n_fps && i + 1 < argc) {
		cli_err("store query: -f and input files exclude each other");
		ret = EXIT_USAGE;
		goto out;
	}
	if (!(q.st = open_store(argv[i], SIMHASH_STORE_RDONLY)) ||
	    simhash_store_results_new(&q.r)) {
		ret = EXIT_FAIL;
		goto out;
	}
	for (int f = 0; f < o.n_fps && !ret; f++) {
		simhash_fp fp;

		if (simhash_fp_parse(o.fps[f], strlen(o.fps[f]), &fp)) {
			cli_err("store query: invalid fingerprint '%s' (expected 8, 16 or 32 hex digits)",
				o.fps[f]);
			ret = EXIT_USAGE;
		} else if (fp.bits != simhash_store_bits(q.st)) {
			cli_err("store query: a %u-bit fingerprint for a store of %u-bit fingerprints",
				fp.bits, simhash_store_bits(q.st));
			ret = EXIT_FAIL;
		} else if (query_one(&q, o.fps[f], strlen(o.fps[f]), &fp)) {
			ret = EXIT_FAIL;
		}
	}
	if (!o.n_fps) {
		if (!(q.ctx = store_ctx(q.st, "store query")))
			ret = EXIT_FAIL;
		else if (for_each_doc(&o.in, argv + i + 1, argc - i - 1, query_doc, &q))
			ret = EXIT_FAIL;
	}
	write_out(stdout, &q.out);
out:
	sbuf_free(&q.out);
	simhash_ctx_free(q.ctx);
	simhash_store_results_free(q.r);
	simhash_store_close(q.st);
	free(o.fps);
	return ret;
}

/* get and delete: each ID argument. */
static int st_ids(int argc, char **argv, int del)
{
	const char *cmd = del ? "store delete" : "store get";
	simhash_store_results *r = NULL;
	struct sbuf out = { 0 };
	simhash_store *st;
	struct opts o;
	int ret, i;

	ret = parse(cmd, 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 >= argc) {
		cli_err("%s: missing ID", cmd);
		return EXIT_USAGE;
	}
	if (!(st = open_store(argv[i], del ? 0 : SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	if (simhash_store_results_new(&r)) {
		simhash_store_close(st);
		return EXIT_FAIL;
	}
	for (int a = i + 1; a < argc; a++) {
		size_t len = strlen(argv[a]);
		simhash_err e;
		int found = 0;

		if (!len || len > SIMHASH_STORE_ID_MAX) {
			cli_err("%s: id must be 1 to %d bytes", cmd, SIMHASH_STORE_ID_MAX);
			ret = EXIT_FAIL;
			continue;
		}
		if (del) {
			e = simhash_store_delete(st, argv[a], len, &found);
		} else {
			e = simhash_store_get(st, argv[a], len, r);
			found = simhash_store_results_count(r) == 1;
			if (!e && found && (add_json_doc(&out, simhash_store_results_get(r, 0), 0) ||
					    sbuf_addc(&out, '\n')))
				e = SIMHASH_ENOMEM;
			write_out(stdout, &out);
		}
		if (e) {
			store_fail(st, cmd, e);
			ret = EXIT_FAIL;
			break;
		}
		if (!found) {
			cli_err("%s: no document with id '%s'", cmd, argv[a]);
			ret = EXIT_FAIL;
		}
	}
	sbuf_free(&out);
	simhash_store_results_free(r);
	simhash_store_close(st);
	return ret;
}

static int st_get(int argc, char **argv) { return st_ids(argc, argv, 0); }
static int st_delete(int argc, char **argv) { return st_ids(argc, argv, 1); }

/* AGE: N seconds, or N followed by s, m, h or d. */
static int parse_age(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int64_t mul = 1;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || (end[0] && end[1]))
		return -1;
	switch (*end) {
	case 0: case 's': break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	default: return -1;
	}
	if (v > (unsigned long long)(INT64_MAX / mul))
		return -1;
	*out = (int64_t)v * mul;
	return 0;
}

static int st_expire(int argc, char **argv)
{
	simhash_store *st;
	struct opts o;
	int64_t age;
	size_t n;
	simhash_err e;
	int ret, i;

	ret = parse("store expire", BIT(OPT_OLDER), NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!o.older || parse_age(o.older, &age)) {
		cli_err("store expire: %s --older-than AGE (N, Ns, Nm, Nh or Nd)",
			o.older ? "invalid" : "missing");
		return EXIT_USAGE;
	}
	if (i + 1 < argc) {
		cli_err("store expire: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = open_store(argv[i], 0)))
		return EXIT_FAIL;
	e = simhash_store_expire(st, (int64_t)time(NULL) - age, &n);
	if (e)
		store_fail(st, "store expire", e);
	else
		printf("expired %zu documents\n", n);
	simhash_store_close(st);
	return e ? EXIT_FAIL : EXIT_OK;
}

static int st_stats(int argc, char **argv)
{
	simhash_store_stats s = { .size = sizeof s };
	simhash_store *st;
	struct opts o;
	simhash_err e;
	int ret, i;

	int rebuilt;

	ret = parse("store stats", BIT(OPT_JSON), NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store stats: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = open_store(argv[i], SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	if ((e = simhash_store_stats_get(st, &s)) != SIMHASH_OK) {
		store_fail(st, "store stats", e);
		simhash_store_close(st);
		return EXIT_FAIL;
	}
	rebuilt = s.open_replayed == UINT64_MAX;
	if (o.json)
		printf("{\"documents\":%llu,\"bits\":%u,\"scheme\":\"%s\",\"format_version\":%u,"
		       "\"file_bytes\":%llu,\"open_seconds\":%.3f,\"open_index\":\"%s\","
		       "\"open_replayed\":%llu}\n",
		       (unsigned long long)s.n_docs, s.bits, simhash_store_scheme(st),
		       s.format_version, (unsigned long long)s.file_bytes, s.open_seconds,
		       rebuilt ? "rebuilt" : "checkpoint",
		       rebuilt ? 0ull : (unsigned long long)s.open_replayed);
	else
		printf("documents\t%llu\nbits\t%u\nscheme\t%s\nformat_version\t%u\n"
		       "file_bytes\t%llu\nopen_seconds\t%.3f\nopen_index\t%s\nopen_replayed\t%llu\n",
		       (unsigned long long)s.n_docs, s.bits, simhash_store_scheme(st),
		       s.format_version, (unsigned long long)s.file_bytes, s.open_seconds,
		       rebuilt ? "rebuilt" : "checkpoint",
		       rebuilt ? 0ull : (unsigned long long)s.open_replayed);
	simhash_store_close(st);
	return EXIT_OK;
}

struct export_run {
	FILE *f;
	struct sbuf out;
	const char *scheme;
	int failed;
};

static int export_one(const simhash_store_match *m, void *arg)
{
	struct export_run *x = arg;

	if (add_json_doc(&x->out, m, 0)) {
		x->failed = 1;
		return 1;
	}
	/* the scheme goes in every line, as in `fingerprint --json` */
	x->out.len--;
	if (sbuf_adds(&x->out, ",\"scheme\":") ||
	    sbuf_add_json_str(&x->out, x->scheme, strlen(x->scheme)) || sbuf_adds(&x->out, "}\n")) {
		x->failed = 1;
		return 1;
	}
	if (x->out.len > (1 << 16) && write_out(x->f, &x->out)) {
		x->failed = 1;
		return 1;
	}
	return 0;
}

static int st_export(int argc, char **argv)
{
	struct export_run x = { stdout, { 0 }, NULL, 0 };
	simhash_store *st;
	struct opts o;
	simhash_err e;
	int ret, i;

	ret = parse("store export", BIT(OPT_OUTPUT), NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store export: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = open_store(argv[i], SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	if (o.output && !(x.f = fopen(o.output, "w"))) {
		cli_err("%s: %s", o.output, strerror(errno));
		simhash_store_close(st);
		return EXIT_FAIL;
	}
	x.scheme = simhash_store_scheme(st);
	e = simhash_store_each(st, export_one, &x);
	if (e)
		store_fail(st, "store export", e);
	else if (x.failed || write_out(x.f, &x.out) || (o.output && fflush(x.f)))
		cli_err("store export: %s", o.output ? o.output : "write failed");
	ret = e || x.failed ? EXIT_FAIL : EXIT_OK;
	if (o.output && fclose(x.f))
		ret = EXIT_FAIL;
	sbuf_free(&x.out);
	simhash_store_close(st);
	return ret;
}

/* import reads export's lines: id (string), fingerprint (hex of the store's
 * width), time and meta (optional), scheme (optional; must be the store's). */
struct import_run {
	struct batch *b;
	const char *scheme;
	unsigned bits;
};

static int import_line(const char *path, uint64_t line, const char *s, size_t len,
		       struct import_run *im)
{
	struct doc d = { "", 0, NULL, 0, NULL, 0, path, line };
	json_t *root, *id, *fph, *t, *meta, *scheme;
	json_error_t jerr;
	simhash_fp fp;
	char *m = NULL;
	int ret = -1;

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	if (!(root = json_loadb(s, len, 0, &jerr))) {
		doc_err(&d, "invalid JSON: %s", jerr.text);
		return -1;
	}
	id = json_object_get(root, "id");
	fph = json_object_get(root, "fingerprint");
	t = json_object_get(root, "time");
	meta = json_object_get(root, "meta");
	scheme = json_object_get(root, "scheme");
	if (!json_is_string(id)) {
		doc_err(&d, "missing string field \"id\"");
	} else if (!json_is_string(fph) ||
		   simhash_fp_parse(json_string_value(fph), json_string_length(fph), &fp)) {
		doc_err(&d, "missing or invalid field \"fingerprint\" (hex digits)");
	} else if (fp.bits != im->bits) {
		doc_err(&d, "a %u-bit fingerprint for a store of %u-bit fingerprints", fp.bits,
			im->bits);
	} else if (scheme && (!json_is_string(scheme) ||
			      strcmp(json_string_value(scheme), im->scheme))) {
		doc_err(&d, "scheme %s, the store's is %s",
			json_is_string(scheme) ? json_string_value(scheme) : "(not a string)",
			im->scheme);
	} else if (t && !json_is_integer(t)) {
		doc_err(&d, "field \"time\" is not an integer");
	} else {
		d.id = json_string_value(id);
		d.id_len = json_string_length(id);
		if (json_is_string(meta)) {
			d.meta = json_string_value(meta);
			d.meta_len = json_string_length(meta);
		} else if (meta && !json_is_null(meta)) {
			m = json_dumps(meta, JSON_COMPACT | JSON_ENCODE_ANY);
			d.meta = m;
			d.meta_len = m ? strlen(m) : 0;
		}
		ret = batch_add(im->b, &d, &fp, t ? (int64_t)json_integer_value(t) : 0);
	}
	free(m);
	json_decref(root);
	return ret;
}

static int st_import(int argc, char **argv)
{
	static char *std_in[] = { "-" };
	struct import_run im;
	struct batch *b;
	struct opts o;
	int ret, i, n_paths;
	char **paths;

	ret = parse("store import", 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	b = xcalloc(1, sizeof *b);
	b->cmd = "store import";
	if (!(b->st = open_store(argv[i], 0))) {
		free(b);
		return EXIT_FAIL;
	}
	im.b = b;
	im.scheme = simhash_store_scheme(b->st);
	im.bits = simhash_store_bits(b->st);
	paths = argc - i - 1 ? argv + i + 1 : std_in;
	n_paths = argc - i - 1 ? argc - i - 1 : 1;
	progress_init(&b->progress, total_size(paths, n_paths));
	for (int f = 0; f < n_paths && !ret; f++) {
		struct sbuf buf = { 0 };
		struct reader r;
		struct chunk c;
		int got;

		if (reader_open(&r, paths[f])) {
			cli_err("%s: %s", display_name(paths[f]), strerror(errno));
			ret = EXIT_FAIL;
			break;
		}
		while (!ret && (got = reader_next(&r, CHUNK_BYTES, 4096, &buf, &c)) != 0) {
			uint64_t line = c.first_line;
			size_t pos = 0, len;
			const char *s;

			if (got < 0) {
				cli_err("%s: %s", display_name(paths[f]), strerror(errno));
				ret = EXIT_FAIL;
				break;
			}
			while (!ret && chunk_next_line(&c, &pos, &s, &len))
				if (import_line(paths[f], line++, s, len, &im))
					ret = EXIT_FAIL;
		}
		sbuf_free(&buf);
		reader_close(&r);
	}
	if (batch_flush(b)) /* the documents before a bad line too */
		ret = EXIT_FAIL;
	progress_end(&b->progress);
	if (!ret)
		printf("imported %llu documents\n", (unsigned long long)b->n_added);
	simhash_store_close(b->st);
	sbuf_free(&b->bytes);
	free(b);
	return ret;
}

static void verify_problem(const char *problem, void *arg)
{
	cli_err("%s: %s", (const char *)arg, problem);
}

static int st_verify(int argc, char **argv)
{
	simhash_store_stats s = { .size = sizeof s };
	simhash_store *st;
	uint64_t n = 0;
	struct opts o;
	simhash_err e;
	int ret, i;

	ret = parse("store verify", 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store verify: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = open_store(argv[i], SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	e = simhash_store_verify(st, verify_problem, argv[i], &n);
	if (e)
		store_fail(st, "store verify", e);
	else if (n)
		cli_err("%s: %llu problems", argv[i], (unsigned long long)n);
	else if (simhash_store_stats_get(st, &s) == SIMHASH_OK)
		printf("%s: ok, %llu documents\n", argv[i], (unsigned long long)s.n_docs);
	simhash_store_close(st);
	return e || n ? EXIT_FAIL : EXIT_OK;
}

/* A store of an older format version is upgraded by any open for writing;
 * this one opens for nothing else, and says which it was. */
static int st_upgrade(int argc, char **argv)
{
	simhash_store *st;
	struct opts o;
	int ret, i;

	ret = parse("store upgrade", 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store upgrade: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (simhash_store_open(argv[i], SIMHASH_STORE_RDONLY, &st, NULL, 0) == SIMHASH_OK) {
		simhash_store_close(st);
		printf("%s: format version %d already\n", argv[i], SIMHASH_STORE_FORMAT_VERSION);
		return EXIT_OK;
	}
	if (!(st = open_store(argv[i], 0)))
		return EXIT_FAIL;
	simhash_store_close(st);
	printf("%s: upgraded to format version %d\n", argv[i], SIMHASH_STORE_FORMAT_VERSION);
	return EXIT_OK;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subs[] = {
	{ "create", st_create }, { "add", st_add },       { "query", st_query },
	{ "get", st_get },       { "delete", st_delete }, { "expire", st_expire },
	{ "stats", st_stats },   { "export", st_export }, { "import", st_import },
	{ "verify", st_verify }, { "upgrade", st_upgrade },
};

int cmd_store(int argc, char **argv)
{
	if (argc < 2) {
		store_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		store_usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	cli_err("store: unknown command '%s' (see 'simhash store --help')", argv[1]);
	return EXIT_USAGE;
}
