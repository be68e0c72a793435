/* commands.h - the subcommands main.c dispatches to. Each gets argv with
 * argv[0] = its own name and returns the exit status: EXIT_OK, EXIT_FAIL or
 * EXIT_USAGE (util.h). */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

int cmd_fingerprint(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_idf(int argc, char **argv);
int cmd_pairs(int argc, char **argv);
int cmd_dedup(int argc, char **argv);
int cmd_scheme(int argc, char **argv);
int cmd_serve_exec(int argc, char **argv); /* runs simhash-serve: serve_exec.c */
int cmd_store(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);

#endif /* CLI_COMMANDS_H */
