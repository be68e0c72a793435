/* cmd_dedup.c - `simhash dedup`: find the near-duplicates of a corpus and
 * write pairs, clusters, or the records to keep or to drop.
 *
 * By default a pair is decided by the exact similarity of the two texts
 * (dedup_near.c). A fingerprint option (-k, --verify, --against or a
 * configuration flag) asks for fingerprints instead: all pairs within -k
 * (simhash_pairs_self()), optionally verified by the exact similarity of
 * the texts (dedup_verify.c), or each document's matches in an index
 * (--against, here). This file holds the options, that choice and the
 * command's steps; documents are read by dedup_read.c and written by
 * dedup_out.c (dedup.h shows how the files call one another).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "config_opts.h"
#include "dedup.h"
#include "idesc.h"
#include "jsonl.h"
#include "outfile.h"
#include "util.h"

#define MAX_JOBS 1024
/* Defaults of -k, from docs/quality.md (natural set, the default features of
 * scheme v2): without --verify the best F1 (k = 5); with it, a k whose
 * candidates hold nearly all the pairs with Jaccard >= 0.8 (k = 13: 99.3 %;
 * k = 9 is the first over 95 %) at a few thousand verifications, with room
 * for other data. 128 bits: the same scaled. */
#define DEFAULT_K 5
#define DEFAULT_K_VERIFY 13

enum { OPT_LINES, OPT_JSONL, OPT_TEXT_FIELD, OPT_ID_FIELD, OPT_JOBS, OPT_K, OPT_OUTPUT_MODE,
       OPT_OUT, OPT_VERIFY, OPT_VERIFY_FEATURES, OPT_QUIET, OPT_AGAINST, OPT_NEAR,
       OPT_EXPLAIN, OPT_EXHAUSTIVE };

static const struct cli_opt opts[] = {
	[OPT_LINES] = { "lines", 0, NULL, "one document per line; id: its line number" },
	[OPT_JSONL] = { "jsonl", 0, NULL, "one JSON object per line, with text and id fields" },
	[OPT_TEXT_FIELD] = { "text-field", 0, "NAME", "the text field of --jsonl (default: text)" },
	[OPT_ID_FIELD] = { "id-field", 0, "NAME", "the id field of --jsonl (default: id)" },
	[OPT_JOBS] = { "jobs", 'j', "N", "use N threads (default: the number of cores)" },
	[OPT_K] = { "max-dist", 'k', "K",
		    "largest Hamming distance of a candidate pair (default 5; 13 with --verify)" },
	[OPT_OUTPUT_MODE] = { "output", 0, "WHAT",
			      "pairs (default), clusters (JSON Lines), keep or drop (records)" },
	[OPT_OUT] = { "out", 'o', "FILE", "write to FILE atomically" },
	[OPT_VERIFY] = { "verify", 0, "SIM:T",
			 "keep pairs whose exact similarity is >= T: jaccard:T or cosine:T" },
	[OPT_VERIFY_FEATURES] = { "verify-features", 0, "F",
				  "features verified: shingle3 (default: word 3-shingles), word, "
				  "char3 (or any charN, shingleN)" },
	[OPT_QUIET] = { "quiet", 'q', NULL, "no summary line on standard error" },
	[OPT_AGAINST] = { "against", 0, "INDEX",
			  "find each document's near-duplicates in INDEX (simhash index build) "
			  "instead: pairs ID<TAB>INDEX_ID<TAB>DIST, keep/drop the documents "
			  "without/with one" },
	[OPT_NEAR] = { "near", 0, NULL,
		       "the default decision, by the exact similarity of the texts (see "
		       "below), stated: an error with -k, --verify or --against" },
	[OPT_EXPLAIN] = { "explain", 0, NULL,
			  "add why each pair is kept (features, shared, Jaccard, threshold); "
			  "not with -k" },
	[OPT_EXHAUSTIVE] = { "exhaustive", 0, NULL,
			     "every pair the decision accepts, by an exact join instead of "
			     "banded MinHash candidates (slow on large sets of short texts); "
			     "not with -k" },
	{ NULL, 0, NULL, NULL },
};

static void help(void)
{
	fputs("usage: simhash dedup [OPTION]... [FILE]...\n\n"
	      "Finds the near-duplicate documents among the FILEs (each a document, or with\n"
	      "--lines or --jsonl, each line) and writes, as --output says: `pairs`\n"
	      "(ID_A<TAB>ID_B<TAB>DIST<TAB>SIM; no SIM with -k alone), `clusters`\n"
	      "(JSON Lines: cluster, size and members with their similarity, or with -k\n"
	      "their distance, to the first member), `keep`\n"
	      "(the records of the first document of each cluster and of every other\n"
	      "document, byte for byte, in input order) or `drop` (the others).\n"
	      "A summary goes to standard error.\n\n"
	      "By default two documents are near-duplicates when their exact similarity\n"
	      "SIM reaches 0.8: the Jaccard index of the word 3-shingles of long texts,\n"
	      "and for texts of at most 176 characters 1 - (1 - J) / 3, J that of their\n"
	      "character 3-grams (2-grams in Chinese and Japanese); DIST is\n"
	      "round(100 (1 - SIM)). Candidate pairs come from banded MinHash (far\n"
	      "fewer than all pairs); each is checked exactly, and 99 % of the pairs\n"
	      "are found on the public sets (docs/quality.md); --exhaustive finds every\n"
	      "one, in time that grows faster than the input on large sets of short texts.\n"
	      "With -k, --verify, --against or a fingerprint option, pairs of\n"
	      "fingerprints within Hamming distance K are found instead (and with\n"
	      "--verify, kept when their exact similarity SIM reaches T).\n",
	      stdout);
	cli_opts_help(stdout, opts, 1);
}

/* --verify-features: shingleN, word or charN into cfg. */
static int parse_vfeatures(const char *s, simhash_config *cfg)
{
	unsigned long n = 3;

	if (!strcmp(s, "word")) {
		cfg->features = SIMHASH_FEATURES_WORD;
		return 0;
	}
	if (!strncmp(s, "shingle", 7)) {
		cfg->features = SIMHASH_FEATURES_SHINGLE;
		s += 7;
	} else if (!strncmp(s, "char", 4)) {
		cfg->features = SIMHASH_FEATURES_CHAR;
		s += 4;
	} else {
		return -1;
	}
	if (*s && parse_uint(s, 1, 64, &n))
		return -1;
	cfg->ngram = (unsigned)n;
	cfg->ngram_cjk = 0;
	return 0;
}

static int parse(int argc, char **argv, struct dedup_run *run, struct cli_config *cc,
		 struct dedup_opts *o, int *first)
{
	struct cli_parse p;
	unsigned long v;
	int c, ret = EXIT_OK;

	cli_parse_begin(&p, "dedup", opts, cc, argc, argv);
	while (ret == EXIT_OK && (c = cli_parse_next(&p)) != CLI_END) {
		switch (c) {
		case CLI_HELP: help(); ret = -1; break;
		case CLI_BAD: ret = EXIT_USAGE; break;
		case OPT_LINES: run->mode = MODE_LINES; break;
		case OPT_JSONL: run->mode = MODE_JSONL; break;
		case OPT_TEXT_FIELD: run->text_field = p.arg; break;
		case OPT_ID_FIELD: run->id_field = p.arg; break;
		case OPT_OUT: o->out = p.arg; break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_VERIFY_FEATURES: o->vfeatures = p.arg; break;
		case OPT_AGAINST: o->against = p.arg; break;
		case OPT_EXPLAIN: o->explain = 1; break;
		case OPT_NEAR: o->near = 1; break;
		case OPT_EXHAUSTIVE: o->exhaustive = 1; break;
		case OPT_JOBS:
			if (parse_uint(p.arg, 1, MAX_JOBS, &v)) {
				cli_err("dedup: invalid --jobs '%s' (expected 1 to %d)", p.arg, MAX_JOBS);
				ret = EXIT_USAGE;
			}
			o->jobs = (unsigned)v;
			break;
		case OPT_K:
			if (parse_uint(p.arg, 0, 32, &v)) {
				cli_err("dedup: invalid -k '%s' (expected 0 to 16 for 64-bit, 0 to 32 "
					"for 128-bit, 0 to 8 for 32-bit fingerprints)", p.arg);
				ret = EXIT_USAGE;
			}
			o->k = (long)v;
			break;
		case OPT_OUTPUT_MODE:
			if (!strcmp(p.arg, "pairs"))
				o->output = OUT_PAIRS;
			else if (!strcmp(p.arg, "clusters"))
				o->output = OUT_CLUSTERS;
			else if (!strcmp(p.arg, "keep"))
				o->output = OUT_KEEP;
			else if (!strcmp(p.arg, "drop"))
				o->output = OUT_DROP;
			else {
				cli_err("dedup: unknown --output '%s' (expected pairs, clusters, keep "
					"or drop)", p.arg);
				ret = EXIT_USAGE;
			}
			break;
		case OPT_VERIFY: {
			const char *colon = strchr(p.arg, ':');
			char *end = NULL;
			if (colon && !strncmp(p.arg, "jaccard:", 8))
				o->verify = VERIFY_JACCARD;
			else if (colon && !strncmp(p.arg, "cosine:", 7))
				o->verify = VERIFY_COSINE;
			if (colon)
				o->threshold = strtod(colon + 1, &end);
			if (!o->verify || !end || *end || end == colon + 1 || !(o->threshold >= 0) ||
			    o->threshold > 1) {
				cli_err("dedup: invalid --verify '%s' (expected jaccard:T or cosine:T, "
					"T from 0 to 1)", p.arg);
				ret = EXIT_USAGE;
			}
			break;
		}
		}
	}
	*first = p.optind;
	cli_parse_end(&p);
	return ret;
}

/* Appends the id string of the index's id (idesc.h's names section), or
 * the number itself for an index without names. */
static int add_index_name(const struct idesc_names *nm, uint64_t id, struct sbuf *out)
{
	const char *s;
	size_t len;

	if (idesc_names_get(nm, id, &s, &len) == 0)
		return sbuf_add(out, s, len);
	return sbuf_add_u64(out, id);
}

/* --against: each document's matches in the index. Pairs mode prints them;
 * keep/drop mark the documents with a match in cl (cl[i] = 0 for "has one"). */
static int against_index(const char *path, const struct dedup_docs *d, unsigned k,
			 const simhash_config *cfg, struct outfile *out, enum output mode,
			 size_t *n_pairs, const struct dedup_input *ins, const struct dedup_run *run)
{
	char scheme[SIMHASH_SCHEME_MAX];
	simhash_error why;
	struct idesc_names names;
	const void *user;
	size_t user_len;
	simhash_index *ix = NULL;
	simhash_matches m = { 0 };
	struct sbuf b = { 0 };
	struct dedup_records rec = { 0 };
	simhash_err err;
	size_t i, j;
	int ret = EXIT_OK;

	err = simhash_index_open(path, &ix, &why);
	if (err) {
		cli_err("%s: %s", path, why.msg);
		return EXIT_FAIL;
	}
	simhash_config_scheme(cfg, scheme, sizeof(scheme));
	if (!simhash_index_scheme(ix) || !simhash_index_scheme(ix)[0]) {
		cli_err("%s: the index records no scheme (build it with --scheme), so its "
			"fingerprints cannot be compared with texts", path);
		ret = EXIT_FAIL;
		goto done;
	}
	if (strcmp(simhash_index_scheme(ix), scheme)) {
		cli_err("%s: the index has scheme %s, these options give %s", path,
			simhash_index_scheme(ix), scheme);
		ret = EXIT_FAIL;
		goto done;
	}
	if (simhash_index_bits(ix) != cfg->bits || k > simhash_index_max_dist(ix)) {
		cli_err("%s: -k %u is out of range for this index (0 to %u)", path, k,
			simhash_index_max_dist(ix));
		ret = EXIT_USAGE;
		goto done;
	}
	simhash_index_user(ix, &user, &user_len);
	if (idesc_names_parse(user, user_len, &names))
		names.n = 0; /* damaged: every id as its number */
	*n_pairs = 0;
	for (i = 0; i < d->n && ret == EXIT_OK; i++) {
		simhash_fp fp = { { d->fps[i * d->nw], d->nw == 2 ? d->fps[i * d->nw + 1] : 0 },
				  cfg->bits };
		err = simhash_index_query(ix, &fp, k, &m);
		if (err) {
			cli_err("%s: %s", path, simhash_strerror(err));
			ret = EXIT_FAIL;
			break;
		}
		*n_pairs += m.n;
		if (mode == OUT_PAIRS) {
			for (j = 0; j < m.n; j++) {
				dedup_add_id(&b, d, i);
				sbuf_addc(&b, '\t');
				add_index_name(&names, m.v[j].id, &b);
				sbuf_addc(&b, '\t');
				sbuf_add_u64(&b, m.v[j].dist);
				if (sbuf_addc(&b, '\n'))
					ret = EXIT_FAIL;
			}
		} else if ((m.n == 0) == (mode == OUT_KEEP)) {
			ret = dedup_add_record(&b, run, ins, d, i, &rec);
		}
		if (ret == EXIT_OK && dedup_flush_out(out, &b, 0))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && dedup_flush_out(out, &b, 1))
		ret = EXIT_FAIL;
done:
	sbuf_free(&b);
	sbuf_free(&rec.win);
	simhash_matches_free(&m);
	simhash_index_free(ix);
	return ret;
}


/* What the steps of cmd_dedup() share; one cleanup frees it. */
struct dedup_cmd {
	struct dedup_run run;
	struct dedup_opts o;
	struct cli_config cc;
	struct dedup_docs docs;
	struct dedup_input *ins;
	char **paths;
	size_t n_paths;
	simhash_ctx *vctx; /* made only to check --verify-features up front */
	simhash_config vcfg;
	double t0;
};

/* Chooses the decision (the default, unless a fingerprint option asks for
 * fingerprints), refuses options that do not go with it, and sets -k. */
static int check_opts(struct dedup_cmd *c)
{
	struct dedup_opts *o = &c->o;
	unsigned bits = c->cc.cfg.bits;

	c->run.cfg = &c->cc.cfg;
	c->run.jsonl_flags = c->cc.cfg.utf8 == SIMHASH_UTF8_REPLACE ? JSONL_REPLACE_UTF8 : 0;
	/* the default: the exact decision per pair, unless a fingerprint
	 * option (-k, --verify, --against or a configuration flag) asks for
	 * fingerprints */
	c->run.near = o->near || (o->k < 0 && !o->verify && !o->against && !c->cc.set &&
				  !c->cc.scheme);
	if (o->exhaustive && !c->run.near) {
		cli_err("dedup: --exhaustive is for the default decision (without -k, --verify, "
			"--against or fingerprint options)");
		return EXIT_USAGE;
	}
	if (o->near && (o->k >= 0 || o->verify || o->against)) {
		cli_err("dedup: --near decides by exact similarity: without -k, --verify or --against");
		return EXIT_USAGE;
	}
	if (o->explain && !c->run.near) {
		cli_err("dedup: --explain is for the default decision (without -k, --verify, "
			"--against or fingerprint options)");
		return EXIT_USAGE;
	}
	if (o->k < 0)
		o->k = (o->verify ? DEFAULT_K_VERIFY : DEFAULT_K) * (bits == 128 ? 2 : 1) /
		       (bits == 32 ? 2 : 1);
	if (o->k > bits / 4) {
		cli_err("dedup: -k %ld is out of range for %u-bit fingerprints (0 to %u)", o->k,
			bits, bits / 4);
		return EXIT_USAGE;
	}
	if (o->against && (o->verify || o->output == OUT_CLUSTERS)) {
		cli_err("dedup: --against writes pairs, keep or drop, without --verify");
		return EXIT_USAGE;
	}
	if (o->vfeatures && !o->verify) {
		cli_err("dedup: --verify-features needs --verify");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* --verify's configuration: word 3-shingles by default, or --verify-features. */
static int verify_config(struct dedup_cmd *c)
{
	simhash_config vc;
	simhash_err err;

	simhash_config_init(&vc);
	vc.features = SIMHASH_FEATURES_SHINGLE;
	vc.ngram = 3;
	vc.tokenizer = SIMHASH_TOKENIZER_SIMPLE;
	vc.t2s = 0;
	vc.weight = SIMHASH_WEIGHT_TF;
	if (c->o.vfeatures && parse_vfeatures(c->o.vfeatures, &vc)) {
		cli_err("dedup: invalid --verify-features '%s' (expected shingleN, word or "
			"charN)", c->o.vfeatures);
		return EXIT_USAGE;
	}
	err = simhash_ctx_new(&vc, &c->vctx); /* checks the config up front */
	if (err) {
		cli_err("dedup: verify: %s", simhash_strerror(err));
		return EXIT_FAIL;
	}
	c->vcfg = vc;
	return EXIT_OK;
}

/* Reads and fingerprints (or sketches) the FILEs, or standard input. */
static int read_docs(struct dedup_cmd *c, int argc, char **argv, int first)
{
	static char *stdin_only[] = { "-", NULL };
	int ret;

	c->paths = first < argc ? argv + first : stdin_only;
	c->n_paths = first < argc ? (size_t)(argc - first) : 1;
	c->run.multi = c->n_paths > 1;
	c->run.no_ids = (c->o.output == OUT_KEEP || c->o.output == OUT_DROP) &&
			c->run.mode != MODE_FILES;
	if (!c->o.jobs)
		c->o.jobs = cli_online_cores(MAX_JOBS);
	c->docs.nw = c->cc.cfg.bits == 128 ? 2 : 1;
	c->ins = xcalloc(c->n_paths, sizeof(*c->ins));
	ret = dedup_open_inputs(c->ins, c->paths, c->n_paths, c->run.mode);
	if (ret)
		return ret;
	ret = dedup_read_all(&c->run, c->o.jobs, c->ins, c->paths, c->n_paths, &c->docs);
	if (dedup_flush_inputs(c->ins, c->n_paths))
		ret = EXIT_FAIL;
	return ret;
}

/* --against: pairs with the index's documents, or keep/drop by them. */
static int run_against(struct dedup_cmd *c)
{
	struct outfile out;
	size_t n_pairs = 0;
	int ret;

	ret = outfile_open(&out, c->o.out);
	if (ret)
		return ret;
	ret = against_index(c->o.against, &c->docs, (unsigned)c->o.k, c->run.cfg, &out,
			    c->o.output, &n_pairs, c->ins, &c->run);
	if (ret)
		outfile_abort(&out);
	else
		ret = outfile_commit(&out);
	if (ret == EXIT_OK && !c->o.quiet)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu pairs with %s, %.2f s\n",
			c->docs.n, n_pairs, c->o.against, cli_now() - c->t0);
	return ret;
}

/* The default decision (dedup_near.c) and its summary. */
static int run_near(struct dedup_cmd *c)
{
	size_t n_pairs, n_clusters;
	int ret;

	ret = dedup_near_run(&c->o, &c->run, c->ins, &c->docs, &n_pairs, &n_clusters);
	if (ret == EXIT_OK && !c->o.quiet && c->o.output == OUT_PAIRS)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu pairs, %zu clusters, %.2f s\n",
			c->docs.n, n_pairs, n_clusters, cli_now() - c->t0);
	else if (ret == EXIT_OK && !c->o.quiet)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu clusters, %.2f s\n",
			c->docs.n, n_clusters, cli_now() - c->t0);
	return ret;
}

/* By fingerprints: all pairs within -k, verified if asked, then clusters. */
static int run_kpairs(struct dedup_cmd *c)
{
	const struct dedup_docs *d = &c->docs;
	simhash_pair *pairs = NULL;
	size_t n_pairs = 0, n_clusters = 0;
	uint64_t *cl = NULL;
	double *sims = NULL;
	struct outfile out;
	simhash_err err;
	int ret = EXIT_FAIL;

	err = simhash_pairs_self(d->fps, d->n, c->cc.cfg.bits, (unsigned)c->o.k, c->o.jobs,
				 &pairs, &n_pairs);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		goto out;
	}
	if (c->o.verify) {
		ret = dedup_verify(&c->run, c->ins, d, &c->vcfg, c->o.verify, c->o.threshold,
				   c->o.jobs, pairs, &n_pairs, &sims);
		if (ret)
			goto out;
	}
	cl = xmalloc((d->n ? d->n : 1) * sizeof(*cl));
	if (simhash_clusters(d->n, pairs, n_pairs, cl)) {
		cli_err("dedup: clusters: invalid pairs");
		ret = EXIT_FAIL;
		goto out;
	}
	ret = outfile_open(&out, c->o.out);
	if (ret)
		goto out;
	if (c->o.output == OUT_PAIRS)
		ret = dedup_write_pairs(&out, d, pairs, n_pairs, sims);
	else if (c->o.output == OUT_CLUSTERS)
		ret = dedup_write_clusters(&out, d, cl, dedup_member_dist, NULL, &n_clusters);
	else
		ret = dedup_write_records(&out, &c->run, c->ins, d, cl, c->o.output == OUT_KEEP);
	if (ret) {
		outfile_abort(&out);
		goto out;
	}
	ret = outfile_commit(&out);
	if (c->o.output != OUT_CLUSTERS)
		n_clusters = dedup_count_clusters(cl, d->n);
	if (ret == EXIT_OK && !c->o.quiet)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu pairs, %zu clusters, %.2f s\n",
			d->n, n_pairs, n_clusters, cli_now() - c->t0);
out:
	simhash_pairs_free(pairs);
	free(sims);
	free(cl);
	return ret;
}

int cmd_dedup(int argc, char **argv)
{
	struct dedup_cmd c = {
		.run = { .mode = MODE_FILES, .text_field = "text", .id_field = "id" },
		.o = { .k = -1 },
		.t0 = cli_now(),
	};
	int first, ret;

	cli_config_init(&c.cc);
	ret = parse(argc, argv, &c.run, &c.cc, &c.o, &first);
	if (ret)
		goto out_config;
	ret = cli_config_finish(&c.cc, "dedup");
	if (ret)
		goto out_config;
	ret = check_opts(&c);
	if (ret == EXIT_OK && c.o.verify)
		ret = verify_config(&c);
	if (ret)
		goto out_config;
	ret = read_docs(&c, argc, argv, first);
	if (ret)
		goto out;
	if (c.o.against)
		ret = run_against(&c);
	else if (c.run.near)
		ret = run_near(&c);
	else
		ret = run_kpairs(&c);
out:
	dedup_close_inputs(c.ins, c.n_paths);
	free(c.ins);
	dedup_docs_free(&c.docs);
out_config:
	simhash_ctx_free(c.vctx);
	cli_config_free(&c.cc);
	return ret < 0 ? EXIT_OK : ret;
}
