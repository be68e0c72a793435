/* main.c - the simhash command: a table of subcommands and a lookup, like
 * git's git.c. Options common to all (--help, --version) are handled here;
 * everything else belongs to a cmd_<name>.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "util.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd commands[] = {
	{ "fingerprint", cmd_fingerprint, "print the fingerprint of each document" },
	{ "compare", cmd_compare, "compare two texts, files or fingerprints" },
	{ "idf", cmd_idf, "build an IDF table from a corpus" },
	{ "dedup", cmd_dedup, "find near-duplicate documents: pairs, clusters, keep, drop" },
	{ "pairs", cmd_pairs, "all pairs of fingerprints within a distance" },
	{ "serve", cmd_serve_exec, "serve the HTTP API and web page over a store" },
	{ "store", cmd_store, "a persistent store of fingerprints: add, query, verify" },
	{ "index", cmd_index, "build, change and query an exact Hamming index" },
	{ "scheme", cmd_scheme, "print the scheme string of a configuration" },
	{ "version", cmd_version, "print the version" },
	{ "help", cmd_help, "show help for simhash or one command" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	size_t i;

	fputs("usage: simhash COMMAND [OPTION]... [ARG]...\n\n"
	      "SimHash fingerprints of texts, for finding near-duplicates.\n\nCommands:\n",
	      f);
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'simhash COMMAND --help' for a command's options; 'man simhash' for more.\n", f);
}

int cmd_help(int argc, char **argv)
{
	const struct cmd *c;
	char help[] = "--help";
	char *args[] = { NULL, help, NULL };

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	c = find(argv[1]);
	if (!c || c->fn == cmd_help) {
		cli_err("help: unknown command '%s'", argv[1]);
		return EXIT_USAGE;
	}
	args[0] = argv[1];
	return c->fn(2, args);
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int ret;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	c = find(argv[1]);
	if (!c) {
		if (argv[1][0] == '-')
			cli_err("unknown option '%s' (a command comes first: see 'simhash --help')",
				argv[1]);
		else
			cli_err("unknown command '%s' (see 'simhash --help')", argv[1]);
		return EXIT_USAGE;
	}
	ret = c->fn(argc - 1, argv + 1);
	if (fflush(stdout) || ferror(stdout)) {
		cli_err("standard output: %s", strerror(errno));
		return EXIT_FAIL;
	}
	return ret;
}
