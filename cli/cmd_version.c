/* cmd_version.c - `simhash version`: the version of the command and of the
 * library it runs with (they differ only with a shared library swapped in). */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "config_opts.h"
#include "util.h"

#define STR2(x) #x
#define STR(x) STR2(x)
#define CLI_VERSION STR(SIMHASH_VERSION_MAJOR) "." STR(SIMHASH_VERSION_MINOR) "." STR(SIMHASH_VERSION_PATCH)

int cmd_version(int argc, char **argv)
{
	struct cli_parse p;
	char uv[64];
	int o, ret = EXIT_OK;

	cli_parse_begin(&p, "version", NULL, NULL, argc, argv);
	while ((o = cli_parse_next(&p)) != CLI_END) {
		if (o == CLI_HELP) {
			fputs("usage: simhash version\n\nPrints the version of simhash and of libsimhash, and the ICU and Unicode\nversions texts are normalized with.\n",
			      stdout);
			cli_opts_help(stdout, NULL, 0);
			goto out;
		}
		ret = EXIT_USAGE;
		goto out;
	}
	if (p.optind < argc) {
		cli_err("version: unexpected argument '%s'", argv[p.optind]);
		ret = EXIT_USAGE;
		goto out;
	}
	if (strcmp(simhash_version(), CLI_VERSION))
		printf("simhash %s (libsimhash %s)\n", CLI_VERSION, simhash_version());
	else
		printf("simhash %s\n", CLI_VERSION);
	if (simhash_unicode_version(uv, sizeof uv) == SIMHASH_OK)
		printf("%s\n", uv);
out:
	cli_parse_end(&p);
	return ret;
}
