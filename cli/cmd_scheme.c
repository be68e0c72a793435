/* cmd_scheme.c - `simhash scheme [config flags]`: the canonical scheme string
 * of a configuration, so users of the plain text output can record which
 * scheme their fingerprints were made under. */
#include <stdio.h>
#include "commands.h"
#include "config_opts.h"
#include "util.h"

static void help(void)
{
	fputs("usage: simhash scheme [OPTION]...\n\n"
	      "Prints the scheme string of the configuration the options describe: two\n"
	      "fingerprints can be compared only if made under the same scheme.\n",
	      stdout);
	cli_opts_help(stdout, NULL, 1);
}

int cmd_scheme(int argc, char **argv)
{
	char scheme[SIMHASH_SCHEME_MAX];
	struct cli_config cc;
	struct cli_parse p;
	simhash_err err;
	int o, ret = EXIT_OK;

	cli_config_init(&cc);
	cli_parse_begin(&p, "scheme", NULL, &cc, argc, argv);
	while ((o = cli_parse_next(&p)) != CLI_END) {
		if (o == CLI_HELP)
			help();
		ret = o == CLI_HELP ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	if (p.optind < argc) {
		cli_err("scheme: unexpected argument '%s'", argv[p.optind]);
		ret = EXIT_USAGE;
		goto out;
	}
	ret = cli_config_finish(&cc, "scheme");
	if (ret)
		goto out;
	err = simhash_config_scheme(&cc.cfg, scheme, sizeof(scheme));
	if (err) {
		cli_err("scheme: %s", simhash_strerror(err));
		ret = EXIT_USAGE;
		goto out;
	}
	printf("%s\n", scheme);
out:
	cli_parse_end(&p);
	cli_config_free(&cc);
	return ret;
}
