/* index_query.c - `simhash index query`: every stored fingerprint within -k
 * of each query, `QUERY_ID<TAB>MATCH_ID<TAB>DIST` per match, nearest first.
 *
 * Queries are fingerprints in the text form or a binary fingerprint file
 * (index_read_any), or texts (--text, --lines, --jsonl) that the document
 * source (source.h) fingerprints with the config flags, whose scheme must be
 * the index's. A text's query id is its text-form id, as `simhash
 * fingerprint` prints it (escaped, idesc.h), so a text queried here and its
 * `fingerprint` line piped in give the same output. Queries go to the library
 * QBATCH at a time (simhash_index_query_batch on -j threads) and their
 * matches are printed in input order, so the output is the same for every
 * -j. Match ids are the index's names (idesc.h), read in place from the
 * mapped file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "idesc.h"
#include "index_cmd.h"
#include "jsonl.h"
#include "source.h"
#include "util.h"

#define QBATCH 4096

struct qrun {
	const simhash_index *ix;
	struct idesc_names names;
	unsigned k, jobs, bits;
	simhash_fp q[QBATCH];
	struct sbuf qid;           /* ids of the batch's queries, back to back */
	size_t qid_off[QBATCH + 1];
	size_t n;
	simhash_matches out[QBATCH];
	struct sbuf line;
	int multi;                 /* texts of several inputs: ids are FILE:LINE */
};

/* The name of id; "?" if the index has none for it. */
static const char *match_name(const struct qrun *r, uint64_t id, size_t *len)
{
	const char *s;

	if (idesc_names_get(&r->names, id, &s, len) == 0)
		return s;
	*len = 1;
	return "?";
}

static int qrun_flush(struct qrun *r)
{
	simhash_err err;

	if (r->n == 0)
		return 0;
	err = simhash_index_query_batch(r->ix, r->q, r->n, r->k, r->jobs, r->out);
	if (err) {
		cli_err("index query: %s", simhash_strerror(err));
		return -1;
	}
	for (size_t i = 0; i < r->n; i++) {
		const char *qid = r->qid.p + r->qid_off[i];
		size_t qlen = r->qid_off[i + 1] - r->qid_off[i];
		for (size_t j = 0; j < r->out[i].n; j++) {
			size_t mlen;
			const char *mid = match_name(r, r->out[i].v[j].id, &mlen);
			r->line.len = 0;
			if (sbuf_add(&r->line, qid, qlen) || sbuf_addc(&r->line, '\t') ||
			    sbuf_add(&r->line, mid, mlen) || sbuf_addc(&r->line, '\t') ||
			    sbuf_add_u64(&r->line, r->out[i].v[j].dist) || sbuf_addc(&r->line, '\n'))
				return -1;
			if (fwrite(r->line.p, 1, r->line.len, stdout) != r->line.len) {
				cli_err("index query: write error: %s", strerror(errno));
				return -1;
			}
		}
	}
	r->n = 0;
	r->qid.len = 0;
	return 0;
}

static int qrun_add(struct qrun *r, const simhash_fp *fp, const char *id, size_t len)
{
	if (r->n == QBATCH && qrun_flush(r))
		return -1;
	r->q[r->n] = *fp;
	r->qid_off[r->n] = r->qid.len;
	if (sbuf_add(&r->qid, id, len))
		return -1;
	r->n++;
	r->qid_off[r->n] = r->qid.len;
	return 0;
}

static int query_line(void *arg, const simhash_fp *fp, const char *id, size_t id_len,
		      const char *path, uint64_t line)
{
	(void)path, (void)line;
	return qrun_add(arg, fp, id, id_len);
}

/* ---- texts: fingerprinted by the document source with the config flags */

/* The doc hook, on a worker: the fingerprint, the id's length, the id. */
static int text_doc(struct src_batch *b, const struct doc *d, void *arg)
{
	const struct qrun *r = arg;
	size_t at = b->out.len;
	uint64_t id_len = 0; /* set once the id is in */

	if (sbuf_add(&b->out, &d->fp, sizeof d->fp) || sbuf_add(&b->out, &id_len, 8) ||
	    src_text_id(&b->out, d, r->multi))
		return src_fail(b, NULL, "out of memory");
	id_len = b->out.len - at - sizeof d->fp - 8;
	memcpy(b->out.p + at + sizeof d->fp, &id_len, 8);
	return 0;
}

/* The batch hook: the batch's texts become queries, in input order. */
static int text_batch(struct src_batch *b, void *arg)
{
	struct qrun *r = arg;
	simhash_fp fp;
	uint64_t id_len;

	for (size_t pos = 0; pos < b->out.len; pos += sizeof fp + 8 + id_len) {
		memcpy(&fp, b->out.p + pos, sizeof fp);
		memcpy(&id_len, b->out.p + pos + sizeof fp, 8);
		if (qrun_add(r, &fp, b->out.p + pos + sizeof fp + 8, (size_t)id_len)) {
			cli_err("index query: out of memory");
			return -1;
		}
	}
	return 0;
}

static int query_texts(struct qrun *r, struct cli_config *cc, enum mode mode, char **paths,
		       int n_paths)
{
	static char *std_in[] = { "-" };
	char scheme[SIMHASH_SCHEME_MAX];
	const char *want = simhash_index_scheme(r->ix);
	struct src_opts so = { .cmd = "index query", .mode = mode, .text_field = "text",
			       .id_field = "id", .jsonl_flags = JSONL_REPLACE_UTF8,
			       .n_threads = r->jobs, .doc = text_doc, .batch = text_batch,
			       .arg = r };
	struct source *src = NULL;
	int ret;

	if (!want[0]) {
		cli_err("index query: the index records no scheme: build it with --scheme to query texts");
		return EXIT_USAGE;
	}
	ret = cli_config_finish(cc, "index query");
	if (ret)
		return ret;
	cc->cfg.bits = r->bits;
	if (simhash_config_scheme(&cc->cfg, scheme, sizeof scheme) || strcmp(scheme, want) != 0) {
		cli_err("index query: the index's scheme is %s, the options give %s", want, scheme);
		return EXIT_USAGE;
	}
	so.cfg = &cc->cfg;
	if (src_new(&so, &src)) {
		cli_err("index query: cannot set up fingerprinting");
		return EXIT_FAIL;
	}
	r->multi = n_paths > 1;
	if (n_paths == 0)
		paths = std_in, n_paths = 1;
	ret = src_run(src, paths, (size_t)n_paths, NULL);
	src_free(src);
	return ret;
}

/* ---- the subcommand */

/* The queries of the inputs after the index: fingerprints or texts. */
static int query_inputs(struct qrun *r, const struct args *a, struct cli_config *cc, int argc,
			char **argv, int first)
{
	unsigned bits = r->bits;
	char scheme_buf[SIMHASH_SCHEME_MAX];
	const char *scheme = simhash_index_scheme(r->ix);
	int ret = 0;

	if (a->text_mode)
		return query_texts(r, cc,
				   a->text_mode == OPT_TEXT ? MODE_FILES
				   : a->text_mode == OPT_LINES ? MODE_LINES : MODE_JSONL,
				   argv + first, argc - first);
	if (first == argc)
		ret = index_read_text("-", &bits, query_line, r);
	for (int i = first; i < argc && ret == 0; i++)
		ret = index_read_any(argv[i], &bits, &scheme, scheme_buf, query_line, r);
	return ret ? EXIT_FAIL : EXIT_OK;
}

int index_cmd_query(int argc, char **argv)
{
	struct cli_config cc;
	struct args a;
	struct qrun *r = NULL;
	simhash_index *ix = NULL;
	const void *user;
	size_t user_len;
	int optind, ret;

	cli_config_init(&cc);
	ret = index_parse_args("index query", argc, argv, &a, &cc, &optind);
	if (ret) {
		cli_config_free(&cc);
		return ret < 0 ? EXIT_OK : ret;
	}
	if (optind == argc) {
		cli_err("index query: expected INDEX [FILE]...");
		ret = EXIT_USAGE;
		goto out;
	}
	if (!a.have_k) {
		cli_err("index query: -k K is required");
		ret = EXIT_USAGE;
		goto out;
	}
	ix = index_open(argv[optind]);
	if (!ix) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (index_check_k("index query", a.k, simhash_index_bits(ix), simhash_index_max_dist(ix))) {
		ret = EXIT_USAGE;
		goto out;
	}
	r = xcalloc(1, sizeof *r);
	simhash_index_user(ix, &user, &user_len);
	if (idesc_names_parse(user, user_len, &r->names)) {
		cli_err("%s: damaged id section", argv[optind]);
		ret = EXIT_FAIL;
		goto out_free;
	}
	r->ix = ix, r->k = (unsigned)a.k, r->jobs = (unsigned)a.jobs;
	r->bits = simhash_index_bits(ix);
	ret = query_inputs(r, &a, &cc, argc, argv, optind + 1);
	if (ret == EXIT_OK)
		ret = qrun_flush(r) || fflush(stdout) ? EXIT_FAIL : EXIT_OK;
out_free:
	for (size_t i = 0; i < QBATCH; i++)
		simhash_matches_free(&r->out[i]);
	sbuf_free(&r->qid);
	sbuf_free(&r->line);
	free(r);
out:
	simhash_index_free(ix);
	cli_config_free(&cc);
	return ret;
}
