/* index_opts.c - the options of every `simhash index` subcommand, their
 * parser and --help, the check of -k against an index's width, and opening
 * an index with a message naming the file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "index_cmd.h"
#include "util.h"

static const struct cli_opt opts[] = {
	[OPT_OUT] = { "output", 'o', "INDEX", "build: the index file to write" },
	[OPT_K] = { "max-dist", 'k', "K", "build: largest query distance (default 3 at 64 bits, 6 at 128); query: the distance" },
	[OPT_SCHEME] = { "scheme", 0, "S", "build: the scheme string of the fingerprints (see simhash scheme)" },
	[OPT_JOBS] = { "jobs", 'j', "N", "threads (default: 1)" },
	[OPT_N] = { "count", 'n', "N", "plan: the number of fingerprints" },
	[OPT_BITS] = { "bits", 0, "B", "plan: 64 (default) or 128" },
	[OPT_MEMORY] = { "memory", 0, "BYTES", "plan: memory budget (default: none)" },
	[OPT_BIAS] = { "bias", 0, "P", "plan: probability of a 1 bit (default 0.5; English ~0.72)" },
	[OPT_TEXT] = { "text", 0, NULL, "query: each FILE is a text to fingerprint (id: its path)" },
	[OPT_LINES] = { "lines", 0, NULL, "query: each line of the FILEs is a text (id: its line number)" },
	[OPT_JSONL] = { "jsonl", 0, NULL, "query: JSON Lines with text and id fields" },
	{ NULL, 0, NULL, NULL },
};

/* query takes the configuration flags, whose -n and --bits are the n-gram
 * size and width: it gets only its own options. */
static const struct cli_opt query_opts[] = {
	{ "max-dist", 'k', "K", "the largest distance of a match" },
	{ "jobs", 'j', "N", "threads (default: 1)" },
	{ "text", 0, NULL, "each FILE is a text to fingerprint (id: its path)" },
	{ "lines", 0, NULL, "each line of the FILEs is a text (id: its line number)" },
	{ "jsonl", 0, NULL, "JSON Lines with text and id fields" },
	{ NULL, 0, NULL, NULL },
};
static const int query_map[] = { OPT_K, OPT_JOBS, OPT_TEXT, OPT_LINES, OPT_JSONL };

void index_help(void)
{
	fputs("usage: simhash index build [FILE]... -o INDEX [-k K] [--scheme S] [-j N]\n"
	      "       simhash index add INDEX [FILE]...\n"
	      "       simhash index delete INDEX [FILE]...\n"
	      "       simhash index query INDEX -k K [-j N] [FILE]...\n"
	      "       simhash index query INDEX -k K --text|--lines|--jsonl [config flags] [FILE]...\n"
	      "       simhash index plan -n N -k K [--bits B] [--memory BYTES] [--bias P]\n"
	      "       simhash index stats INDEX\n"
	      "       simhash index verify INDEX\n\n"
	      "An exact Hamming index: every stored fingerprint within distance K of a query.\n"
	      "Fingerprints are read as `HEX<TAB>ID` lines (simhash fingerprint's output)\n"
	      "from the FILEs or standard input; query prints QUERY_ID<TAB>MATCH_ID<TAB>DIST\n"
	      "per match, nearest first. Texts given to query are fingerprinted with the\n"
	      "config flags, whose scheme must be the index's.\n",
	      stdout);
	cli_opts_help(stdout, opts, 0);
}

/* A number option's argument into *out: EXIT_OK, or EXIT_USAGE after
 * "CMD: invalid FLAG 'ARG' (expected WHAT)" if it is not in [min, max]. */
static int num_arg(const char *cmd, const char *flag, const char *arg, unsigned long min,
		   unsigned long max, const char *what, unsigned long *out)
{
	if (!parse_uint(arg, min, max, out))
		return EXIT_OK;
	cli_err("%s: invalid %s '%s' (expected %s)", cmd, flag, arg, what);
	return EXIT_USAGE;
}

int index_parse_args(const char *cmd, int argc, char **argv, struct args *a,
		     struct cli_config *cc, int *optind)
{
	struct cli_parse p;
	int o, ret = EXIT_OK;
	char *end;

	memset(a, 0, sizeof *a);
	a->jobs = 1, a->bits = 64, a->bias = 0.5;
	cli_parse_begin(&p, cmd, cc ? query_opts : opts, cc, argc, argv);
	while ((o = cli_parse_next(&p)) != CLI_END) {
		if (cc && o >= 0)
			o = query_map[o];
		switch (o) {
		case CLI_HELP: index_help(); ret = -1; goto out;
		case CLI_BAD: ret = EXIT_USAGE; goto out;
		case OPT_OUT: a->out = p.arg; break;
		case OPT_SCHEME: a->scheme = p.arg; break;
		case OPT_K:
			if ((ret = num_arg(cmd, "-k", p.arg, 0, 1000,
					   "0 to 16 at 64 bits, 0 to 32 at 128", &a->k)))
				goto out;
			a->have_k = 1;
			break;
		case OPT_JOBS:
			if ((ret = num_arg(cmd, "--jobs", p.arg, 1, 64, "1 to 64", &a->jobs)))
				goto out;
			break;
		case OPT_N:
			if ((ret = num_arg(cmd, "-n", p.arg, 0, 4294967295ul, "0 to 4294967295", &a->n)))
				goto out;
			a->have_n = 1;
			break;
		case OPT_BITS:
			if (parse_uint(p.arg, 64, 128, &a->bits) || (a->bits != 64 && a->bits != 128)) {
				cli_err("%s: invalid --bits '%s' (expected 64 or 128)", cmd, p.arg);
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_MEMORY:
			errno = 0;
			a->memory = strtoull(p.arg, &end, 10);
			if (errno || end == p.arg || *end) {
				cli_err("%s: invalid --memory '%s' (expected bytes)", cmd, p.arg);
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_BIAS:
			a->bias = strtod(p.arg, &end);
			if (end == p.arg || *end || !(a->bias >= 0 && a->bias <= 1)) {
				cli_err("%s: invalid --bias '%s' (expected 0 to 1)", cmd, p.arg);
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_TEXT: case OPT_LINES: case OPT_JSONL:
			if (a->text_mode && a->text_mode != o) {
				cli_err("%s: --text, --lines and --jsonl exclude each other", cmd);
				ret = EXIT_USAGE;
				goto out;
			}
			a->text_mode = o;
			break;
		}
	}
	*optind = p.optind;
out:
	cli_parse_end(&p);
	return ret;
}

int index_check_k(const char *cmd, unsigned long k, unsigned bits, unsigned max)
{
	unsigned lim = bits == 64 ? SIMHASH_INDEX_MAX_DIST_64 : SIMHASH_INDEX_MAX_DIST_128;
	if (max < lim)
		lim = max;
	if (k > lim) {
		if (max < (bits == 64 ? SIMHASH_INDEX_MAX_DIST_64 : SIMHASH_INDEX_MAX_DIST_128))
			cli_err("%s: -k %lu is out of range: this index was built for 0 to %u", cmd, k, lim);
		else
			cli_err("%s: -k %lu is out of range for %u-bit fingerprints (0 to %u)", cmd, k, bits, lim);
		return -1;
	}
	return 0;
}

simhash_index *index_open(const char *path)
{
	simhash_index *ix = NULL;
	simhash_error why;
	simhash_err err = simhash_index_open(path, &ix, &why);
	if (err) {
		cli_err("%s: %s", path, why.msg);
		return NULL;
	}
	return ix;
}
