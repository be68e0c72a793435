/* cmd_pairs.c - `simhash pairs`: every pair of fingerprints within -k, of
 * one set (a self-join) or across two (a join).
 *
 * Input: the text form `HEX<TAB>ID` or binary fingerprint files (fpinput.h).
 * Output: `ID_A<TAB>ID_B<TAB>DIST` per pair, ID_A the one first in the input
 * (in a join, the one of the first set), sorted by the input position of A,
 * then of B: the same bytes for every -j. Ids are written as read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "commands.h"
#include "config_opts.h"
#include "fpinput.h"
#include "outfile.h"
#include "util.h"

#define MAX_JOBS 256
#define OUT_BUF ((size_t)1 << 20)

enum { OPT_K, OPT_JOBS, OPT_OUTPUT, OPT_SELF, OPT_QUIET };

static const struct cli_opt opts[] = {
	[OPT_K] = { "max-dist", 'k', "K", "largest Hamming distance of a pair (default 3)" },
	[OPT_JOBS] = { "jobs", 'j', "N", "use N threads (default: the number of cores)" },
	[OPT_OUTPUT] = { "output", 'o', "FILE", "write to FILE atomically" },
	[OPT_SELF] = { "self", 0, NULL, "with several FILEs: one set, all pairs among them" },
	[OPT_QUIET] = { "quiet", 'q', NULL, "no summary line on standard error" },
	{ NULL, 0, NULL, NULL },
};

static void help(void)
{
	fputs("usage: simhash pairs [-k K] [OPTION]... [FILE]\n"
	      "       simhash pairs [-k K] [OPTION]... A B\n\n"
	      "Prints `ID_A<TAB>ID_B<TAB>DIST` for every pair of fingerprints within Hamming\n"
	      "distance K: among the fingerprints of FILE (standard input if none or -), or\n"
	      "between those of A and those of B. Input is the text form `HEX<TAB>ID` of\n"
	      "`simhash fingerprint` or its binary file (--format bin). Pairs come in input\n"
	      "order of ID_A, then of ID_B; the output is the same for every -j.\n"
	      "K is at most 8, 16 or 32 for 32-, 64- or 128-bit fingerprints.\n",
	      stdout);
	cli_opts_help(stdout, opts, 0);
}

/* Concatenates the sets of ins[0..n) into one (for --self). */
static int concat(struct fpinput *ins, size_t n, uint64_t **words, size_t *total)
{
	unsigned nw = ins[0].bits == 128 ? 2 : 1;
	size_t i, at = 0;

	*total = 0;
	for (i = 0; i < n; i++)
		*total += ins[i].n;
	*words = malloc((*total ? *total : 1) * nw * sizeof(**words));
	if (!*words) {
		cli_err("out of memory");
		return EXIT_FAIL;
	}
	for (i = 0; i < n; i++) {
		if (ins[i].n)
			memcpy(*words + at * nw, ins[i].fps, ins[i].n * nw * sizeof(**words));
		at += ins[i].n;
	}
	return EXIT_OK;
}

/* Which input and which index in it global index g of the concatenation is. */
static const struct fpinput *locate(const struct fpinput *ins, size_t n, uint64_t *g)
{
	size_t i;

	for (i = 0; i + 1 < n && *g >= ins[i].n; i++)
		*g -= ins[i].n;
	return &ins[i];
}

/* Fetches the ids the pairs name, from each input that keeps them in its file. */
static int fetch_ids(struct fpinput *ins, size_t n_in, int join, const simhash_pair *pairs,
		     size_t n_pairs)
{
	uint64_t *idx;
	size_t i, j, m;
	int ret = EXIT_OK;

	for (i = 0; i < n_in && ret == EXIT_OK; i++) {
		uint64_t base = 0;
		if (!ins[i].ids_in_file)
			continue;
		for (j = 0; !join && j < i; j++)
			base += ins[j].n;
		idx = malloc((2 * n_pairs + 1) * sizeof(*idx));
		if (!idx) {
			cli_err("out of memory");
			return EXIT_FAIL;
		}
		for (j = m = 0; j < n_pairs; j++) {
			uint64_t a = pairs[j].a, b = pairs[j].b;
			if (join) {
				if (i == 0)
					idx[m++] = a;
				else
					idx[m++] = b;
				continue;
			}
			if (a >= base && a - base < ins[i].n)
				idx[m++] = a - base;
			if (b >= base && b - base < ins[i].n)
				idx[m++] = b - base;
		}
		ret = fpinput_fetch(&ins[i], idx, m);
		free(idx);
	}
	return ret;
}

static int write_pairs(struct outfile *out, struct fpinput *ins, size_t n_in, int join,
		       const simhash_pair *pairs, size_t n_pairs)
{
	struct sbuf b = { 0 };
	const char *id;
	size_t i, len;
	int ret = EXIT_OK;

	for (i = 0; i < n_pairs && ret == EXIT_OK; i++) {
		uint64_t a = pairs[i].a, bb = pairs[i].b;
		const struct fpinput *ia = join ? &ins[0] : locate(ins, n_in, &a);
		const struct fpinput *ib = join ? &ins[1] : locate(ins, n_in, &bb);

		fpinput_id(ia, a, &id, &len);
		if (sbuf_add(&b, id, len) || sbuf_addc(&b, '\t'))
			goto oom;
		fpinput_id(ib, bb, &id, &len);
		if (sbuf_add(&b, id, len) || sbuf_addc(&b, '\t') ||
		    sbuf_add_u64(&b, pairs[i].dist) || sbuf_addc(&b, '\n'))
			goto oom;
		if (b.len >= OUT_BUF) {
			if (outfile_write(out, b.p, b.len))
				ret = EXIT_FAIL;
			b.len = 0;
		}
	}
	if (ret == EXIT_OK && b.len && outfile_write(out, b.p, b.len))
		ret = EXIT_FAIL;
	sbuf_free(&b);
	return ret;
oom:
	sbuf_free(&b);
	cli_err("out of memory");
	return EXIT_FAIL;
}

/* Refuses inputs of different widths or schemes. */
static int check_inputs(const struct fpinput *ins, size_t n)
{
	const struct fpinput *w = NULL, *s = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (ins[i].bits && w && ins[i].bits != w->bits) {
			cli_err("pairs: %s holds %u-bit fingerprints, %s %u-bit ones (widths cannot "
				"be mixed)", display_name(w->path), w->bits,
				display_name(ins[i].path), ins[i].bits);
			return EXIT_FAIL;
		}
		if (ins[i].bits && !w)
			w = &ins[i];
		if (ins[i].scheme[0] && s && strcmp(ins[i].scheme, s->scheme)) {
			cli_err("pairs: %s has scheme %s, %s has %s (fingerprints of different "
				"schemes cannot be compared)", s->path, s->scheme, ins[i].path,
				ins[i].scheme);
			return EXIT_FAIL;
		}
		if (ins[i].scheme[0] && !s)
			s = &ins[i];
	}
	return EXIT_OK;
}

/* The command line of pairs. */
struct pairs_opts {
	unsigned long k;
	unsigned jobs; /* 0: the number of cores */
	const char *output;
	int self, quiet;
	char **paths;
	size_t n_paths;
};

/* Parses the options into *o. EXIT_OK, -1 after --help, or EXIT_USAGE. */
static int parse(int argc, char **argv, struct pairs_opts *o)
{
	static char *stdin_only[] = { "-", NULL };
	struct cli_parse p;
	unsigned long v;
	int c, ret = EXIT_OK;

	cli_parse_begin(&p, "pairs", opts, NULL, argc, argv);
	while (ret == EXIT_OK && (c = cli_parse_next(&p)) != CLI_END) {
		switch (c) {
		case CLI_HELP: help(); ret = -1; break;
		case CLI_BAD: ret = EXIT_USAGE; break;
		case OPT_K:
			if (parse_uint(p.arg, 0, 32, &o->k)) {
				cli_err("pairs: invalid -k '%s' (expected 0 to 16 for 64-bit, 0 to "
					"32 for 128-bit, 0 to 8 for 32-bit fingerprints)", p.arg);
				ret = EXIT_USAGE;
			}
			break;
		case OPT_JOBS:
			if (parse_uint(p.arg, 1, MAX_JOBS, &v)) {
				cli_err("pairs: invalid --jobs '%s' (expected 1 to %d)", p.arg, MAX_JOBS);
				ret = EXIT_USAGE;
			}
			o->jobs = (unsigned)v;
			break;
		case OPT_OUTPUT: o->output = p.arg; break;
		case OPT_SELF: o->self = 1; break;
		case OPT_QUIET: o->quiet = 1; break;
		}
	}
	o->paths = p.optind < argc ? argv + p.optind : stdin_only;
	o->n_paths = p.optind < argc ? (size_t)(argc - p.optind) : 1;
	cli_parse_end(&p);
	if (ret == EXIT_OK && o->n_paths > 2 && !o->self) {
		cli_err("pairs: expected one FILE, or two to join (or --self for one set of "
			"several files), got %zu", o->n_paths);
		ret = EXIT_USAGE;
	}
	return ret;
}

/* The pairs within k of the inputs: a join of two, or one set (several files
 * concatenated). *total gets the number of fingerprints. EXIT_OK, or
 * EXIT_FAIL after the message. */
static int find_pairs(const struct pairs_opts *o, struct fpinput *ins, unsigned bits, int join,
		      simhash_pair **pairs, size_t *n_pairs, size_t *total)
{
	uint64_t *cat = NULL;
	simhash_err err;
	int ret;

	if (join) {
		err = simhash_pairs_join(ins[0].fps, ins[0].n, ins[1].fps, ins[1].n, bits,
					 (unsigned)o->k, o->jobs, pairs, n_pairs);
		*total = ins[0].n + ins[1].n;
	} else if (o->n_paths == 1) {
		err = simhash_pairs_self(ins[0].fps, ins[0].n, bits, (unsigned)o->k, o->jobs, pairs,
					 n_pairs);
		*total = ins[0].n;
	} else {
		ret = concat(ins, o->n_paths, &cat, total);
		if (ret)
			return ret;
		err = simhash_pairs_self(cat, *total, bits, (unsigned)o->k, o->jobs, pairs, n_pairs);
		free(cat);
	}
	if (err) {
		cli_err("pairs: %s", simhash_strerror(err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cmd_pairs(int argc, char **argv)
{
	struct pairs_opts o = { .k = 3 };
	struct outfile out;
	struct fpinput *ins = NULL;
	unsigned bits = 0;
	int ret, join;
	size_t n_pairs = 0, total = 0, i;
	simhash_pair *pairs = NULL;
	double t0 = cli_now();

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	join = o.n_paths == 2 && !o.self;
	if (!o.jobs)
		o.jobs = cli_online_cores(MAX_JOBS);
	ins = xcalloc(o.n_paths, sizeof(*ins));
	for (i = 0; i < o.n_paths && ret == EXIT_OK; i++)
		ret = fpinput_read(&ins[i], o.paths[i], o.jobs);
	if (ret == EXIT_OK)
		ret = check_inputs(ins, o.n_paths);
	if (ret)
		goto out;
	for (i = 0; i < o.n_paths; i++)
		if (ins[i].bits)
			bits = ins[i].bits;
	if (!bits)
		bits = 64; /* nothing read: no pairs, but -k is still checked */
	if (o.k > bits / 4) {
		cli_err("pairs: -k %lu is out of range for %u-bit fingerprints (0 to %u)", o.k, bits,
			bits / 4);
		ret = EXIT_USAGE;
		goto out;
	}
	ret = find_pairs(&o, ins, bits, join, &pairs, &n_pairs, &total);
	if (!ret)
		ret = fetch_ids(ins, o.n_paths, join, pairs, n_pairs);
	if (!ret)
		ret = outfile_open(&out, o.output);
	if (ret)
		goto out;
	ret = write_pairs(&out, ins, o.n_paths, join, pairs, n_pairs);
	if (ret)
		outfile_abort(&out);
	else
		ret = outfile_commit(&out);
	if (ret == EXIT_OK && !o.quiet && isatty(STDERR_FILENO))
		fprintf(stderr, "simhash: pairs: %zu fingerprints, %zu pairs within %lu, %.2f s\n",
			total, n_pairs, o.k, cli_now() - t0);
out:
	simhash_pairs_free(pairs);
	for (i = 0; i < o.n_paths; i++)
		fpinput_free(&ins[i]);
	free(ins);
	return ret;
}
