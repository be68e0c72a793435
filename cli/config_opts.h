/* config_opts.h - the command line options every command shares: one table of
 * the fingerprint configuration flags (--bits, --features, ...), and one
 * parser that takes a command's own options plus, if it wants them, those.
 *
 * A command runs the parser like getopt:
 *
 *	struct cli_parse p;
 *	cli_parse_begin(&p, "fingerprint", opts, &cc, argc, argv);
 *	while ((o = cli_parse_next(&p)) != CLI_END) {
 *		if (o == CLI_HELP) ...; if (o == CLI_BAD) return EXIT_USAGE;
 *		switch (o) { case OPT_LINES: ...; }   (index into opts, p.arg its argument)
 *	}
 *	operands are argv[p.optind .. argc)
 */
#ifndef CLI_CONFIG_OPTS_H
#define CLI_CONFIG_OPTS_H

#include <stdio.h>
#include "simhash.h"

/* Where python3-jieba (Debian) installs its IDF table; `--idf jieba` names it. */
#define JIEBA_IDF_PATH "/usr/lib/python3/dist-packages/jieba/analyse/idf.txt"

/* One option of a command. */
struct cli_opt {
	const char *name; /* long name, without "--"; NULL ends a table */
	int short_name;   /* 0: none */
	const char *arg;  /* NULL: a flag; else the argument's name in --help */
	const char *help;
};

/* The configuration the flags build, and the files they name. */
struct cli_config {
	simhash_config cfg;
	const char *stopwords_path;
	const char *idf_path;
	simhash_stopwords *stopwords; /* loaded by cli_config_finish */
	simhash_idf *idf;
	const char *scheme;  /* --scheme: replaces the configuration flags */
	unsigned long set;   /* bit i: configuration option i was given */
};

#define CLI_END (-1)
#define CLI_HELP (-2)
#define CLI_BAD (-3) /* a usage error, already reported */

struct cli_parse {
	const char *cmd;            /* "fingerprint": prefix of messages */
	const struct cli_opt *opts; /* the command's own options */
	struct cli_config *cc;      /* NULL: no configuration flags */
	int argc;
	char **argv;
	const char *arg; /* argument of the option just returned */
	int optind;      /* first operand, once CLI_END is returned */
	void *longopts;
	char shortopts[128];
};

void cli_config_init(struct cli_config *cc);

/* Loads the stop word and IDF files and checks the combination. Returns
 * EXIT_OK, EXIT_FAIL (a file could not be loaded) or EXIT_USAGE, having printed
 * the message. */
int cli_config_finish(struct cli_config *cc, const char *cmd);
void cli_config_free(struct cli_config *cc);

void cli_parse_begin(struct cli_parse *p, const char *cmd, const struct cli_opt *opts,
		     struct cli_config *cc, int argc, char **argv);
/* The index in opts of the next option, CLI_HELP, CLI_BAD or CLI_END. */
int cli_parse_next(struct cli_parse *p);
void cli_parse_end(struct cli_parse *p);

/* Prints an option table for --help; the configuration flags, with the
 * library's defaults, if config is nonzero. */
void cli_opts_help(FILE *f, const struct cli_opt *opts, int config);

#endif /* CLI_CONFIG_OPTS_H */
