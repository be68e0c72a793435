/* store_cmd.h - the rooms of `simhash store`: cmd_store.c holds the dispatch
 * and the subcommands on stored documents (create, get, delete, expire,
 * stats, export, verify, upgrade); store_docs.c those that read documents
 * through the document source (add, import, query). Below them,
 * store_opts.c: the options of every subcommand, their parser, and the
 * helpers that open a store, report its errors and print its documents as
 * JSON. Uses run one way: the subcommands call down, never the other way.
 */
#ifndef CLI_STORE_CMD_H
#define CLI_STORE_CMD_H

#include <stdio.h>
#include "config_opts.h"
#include "source.h"
#include "util.h"

enum { OPT_LINES, OPT_JSONL, OPT_TEXT_FIELD, OPT_ID_FIELD, OPT_META_FIELD, OPT_K, OPT_LIMIT,
       OPT_FP, OPT_JSON, OPT_OLDER, OPT_OUTPUT, OPT_JOBS, N_STORE_OPTS };

#define BIT(o) (1u << (o))
#define INPUT_OPTS (BIT(OPT_LINES) | BIT(OPT_JSONL) | BIT(OPT_TEXT_FIELD) | BIT(OPT_ID_FIELD))
#define STORE_MAX_JOBS 1024

/* A subcommand's options. */
struct opts {
	enum mode mode;
	const char *text_field, *id_field, *meta_field;
	unsigned long k, limit, jobs; /* jobs 0: the number of cores */
	char **fps;
	int n_fps;
	int json;
	const char *older, *output;
	int seen[N_STORE_OPTS];
};

/* Parses a subcommand's options: allowed is a bit set of OPT_*; cc non-NULL:
 * the fingerprint config flags are taken (create). *optind gets the store
 * PATH's index. EXIT_OK, -1 after --help, or EXIT_USAGE after the message.
 * o->fps is always allocated: free it. */
int store_parse(const char *cmd, unsigned allowed, struct cli_config *cc, int argc, char **argv,
		struct opts *o, int *optind);

/* Prints the usage of every subcommand. */
void store_usage(FILE *f);

/* Opens the store at path; NULL after printing why. */
simhash_store *store_open(const char *path, unsigned flags);

/* Prints "CMD: the store's message" of a failed call. */
void store_fail(const char *cmd, const simhash_error *err);

/* Appends {"id":...,"fingerprint":"HEX"[,"distance":N],"time":T[,"meta":...]}. */
int store_add_json_doc(struct sbuf *out, const simhash_store_match *m, int dist);

/* Writes b to f and empties it. 0, or -1 if the write failed. */
int store_write_out(FILE *f, struct sbuf *b);

/* The subcommands of store_docs.c. */
int store_cmd_add(int argc, char **argv);
int store_cmd_import(int argc, char **argv);
int store_cmd_query(int argc, char **argv);

#endif /* CLI_STORE_CMD_H */
