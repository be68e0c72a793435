/* index_main.c - `simhash index`: the table of its subcommands, as main.c
 * has for the commands. */
#include <string.h>
#include "commands.h"
#include "index_cmd.h"
#include "util.h"

int cmd_index(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (!strcmp(sub, "build"))
		return index_cmd_build(argc - 1, argv + 1);
	if (!strcmp(sub, "add"))
		return index_cmd_change(argc - 1, argv + 1, 1);
	if (!strcmp(sub, "delete"))
		return index_cmd_change(argc - 1, argv + 1, 0);
	if (!strcmp(sub, "query"))
		return index_cmd_query(argc - 1, argv + 1);
	if (!strcmp(sub, "plan"))
		return index_cmd_plan(argc - 1, argv + 1);
	if (!strcmp(sub, "stats"))
		return index_cmd_stats(argc - 1, argv + 1);
	if (!strcmp(sub, "verify"))
		return index_cmd_verify(argc - 1, argv + 1);
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		index_help();
		return EXIT_OK;
	}
	if (!sub[0])
		cli_err("index: expected build, add, delete, query, plan, stats or verify");
	else
		cli_err("index: unknown subcommand '%s'", sub);
	return EXIT_USAGE;
}
