/* store_opts.c - what the subcommands of `simhash store` share (see
 * store_cmd.h): opening a store and reporting its errors, the options of
 * every subcommand with their parser and --help, and a stored document as
 * JSON. Nothing here calls a subcommand. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_cmd.h"

simhash_store *store_open(const char *path, unsigned flags)
{
	simhash_error err;
	simhash_store *st;
	simhash_err e = simhash_store_open(path, flags, &st, &err);

	if (e) {
		cli_err("%s", err.msg);
		return NULL;
	}
	return st;
}

void store_fail(const char *cmd, const simhash_error *err)
{
	cli_err("%s: %s", cmd, err->msg);
}

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
	[OPT_JOBS] = { "jobs", 'j', "N", "add, import: use N threads (default: the number of cores)" },
	{ NULL, 0, NULL, NULL },
};

void store_usage(FILE *f)
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

int store_parse(const char *cmd, unsigned allowed, struct cli_config *cc, int argc, char **argv,
		struct opts *o, int *optind)
{
	struct cli_parse p;
	int c, ret = EXIT_OK;

	memset(o, 0, sizeof *o);
	o->mode = MODE_FILES;
	o->text_field = "text";
	o->id_field = "id";
	o->meta_field = "meta";
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
		case OPT_LINES: o->mode = MODE_LINES; break;
		case OPT_JSONL: o->mode = MODE_JSONL; break;
		case OPT_TEXT_FIELD: o->text_field = p.arg; break;
		case OPT_ID_FIELD: o->id_field = p.arg; break;
		case OPT_META_FIELD: o->meta_field = p.arg; break;
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
		case OPT_JOBS:
			if (parse_uint(p.arg, 1, STORE_MAX_JOBS, &o->jobs)) {
				cli_err("%s: invalid --jobs '%s' (expected 1 to %d)", cmd, p.arg,
					STORE_MAX_JOBS);
				ret = EXIT_USAGE;
			}
			break;
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
int store_add_json_doc(struct sbuf *out, const simhash_store_match *m, int dist)
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

int store_write_out(FILE *f, struct sbuf *b)
{
	int ret = b->len && fwrite(b->p, 1, b->len, f) != b->len ? -1 : 0;

	b->len = 0;
	return ret;
}
