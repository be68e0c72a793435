/* index_cmd.h - the rooms of `simhash index`: index_main.c dispatches to
 * cmd_index.c (the id table, the reading of fingerprints in the text form or
 * a binary fingerprint file, and build, add and delete), index_query.c (the
 * query) and index_info.c (plan, stats and verify); index_opts.c holds what
 * they all use (the options, their parser, opening an index), index_read.c
 * the rule for a line of the text form and the parallel read of a named
 * file that build uses. Uses run one way, from the dispatch down, never
 * back.
 */
#ifndef CLI_INDEX_CMD_H
#define CLI_INDEX_CMD_H

#include <stddef.h>
#include <stdint.h>
#include "config_opts.h"
#include "simhash.h"

enum { OPT_OUT, OPT_K, OPT_SCHEME, OPT_JOBS, OPT_N, OPT_BITS, OPT_MEMORY, OPT_BIAS, OPT_TEXT,
       OPT_LINES, OPT_JSONL, N_OPTS };

/* The options of a subcommand. */
struct args {
	const char *out, *scheme;
	unsigned long k, jobs, n, bits;
	double bias;
	unsigned long long memory;
	int have_k, have_n, text_mode; /* text_mode: 0, OPT_TEXT, OPT_LINES or OPT_JSONL */
};

/* Prints the usage of every subcommand and the options. */
void index_help(void);

/* Parses cmd's options (cc non-NULL: query's, with the config flags).
 * EXIT_OK, -1 after --help, or EXIT_USAGE after the message. */
int index_parse_args(const char *cmd, int argc, char **argv, struct args *a,
		     struct cli_config *cc, int *optind);

/* -1 after the message if k is out of range for bits (or an index built for
 * at most max). */
int index_check_k(const char *cmd, unsigned long k, unsigned bits, unsigned max);

/* The index at path; NULL after printing why. */
simhash_index *index_open(const char *path);

/* Called for each fingerprint read; nonzero stops the read. cmd_index.c
 * repeats this typedef (as C11 allows) where it has always been. */
typedef int (*line_fn)(void *arg, const simhash_fp *fp, const char *id, size_t id_len,
		       const char *path, uint64_t line);

/* Reads `HEX<TAB>ID` lines of path ("-": stdin) of the width *bits (0: the
 * first line's, set then). Empty lines are skipped. 0, or -1 after the
 * message. */
int index_read_text(const char *path, unsigned *bits, line_fn fn, void *arg);

/* Either form: a binary fingerprint file (its ids escaped, idesc.h; its
 * scheme must be *scheme when both are set, else *scheme takes it, kept in
 * scheme_buf) or the text form. */
int index_read_any(const char *path, unsigned *bits, const char **scheme, char *scheme_buf,
		   line_fn fn, void *arg);

/* The top 32 bits of the hash of an id, as the id table keys it. */
uint64_t index_name_hash(const char *s, size_t len);

/* The one rule for a non-empty line s (len bytes, its line end removed) of
 * the text form: NULL with *fp and where the id starts (*id_at), the line
 * being `HEX<TAB>ID` of width *bits (0: any width but 32, set then); or why
 * not (a static string, or written into buf). */
const char *index_parse_line(const char *s, size_t len, unsigned *bits, simhash_fp *fp,
			     size_t *id_at, char *buf, size_t buf_len);

/* A fingerprint line read (index_read.c): its id is len bytes at off bytes
 * into its block, and hash is index_name_hash of it. */
struct index_rec {
	simhash_fp fp;
	uint64_t hash;
	uint32_t off, len;
};

/* Takes the n fingerprint lines of one block of bytes bytes, whose ids lie
 * at base + rec[i].off, in input order; nonzero stops the read. */
typedef int (*index_block_fn)(void *arg, const struct index_rec *rec, size_t n,
			      const char *base, size_t bytes);

/* Reads the text form from the regular file path as index_read_text does
 * (the same lines, widths and messages), but mapped and parsed on n_threads
 * threads, handing the lines to fn block by block in input order. 0, -1
 * after the message, or 1 if path is no regular file or cannot be mapped (it
 * is then for index_read_text to read). */
int index_read_mapped(const char *path, unsigned *bits, unsigned n_threads, index_block_fn fn,
		      void *arg);

/* The subcommands; index_cmd_change adds (add 1) or deletes. */
int index_cmd_build(int argc, char **argv);
int index_cmd_change(int argc, char **argv, int add);
int index_cmd_query(int argc, char **argv);
int index_cmd_plan(int argc, char **argv);
int index_cmd_stats(int argc, char **argv);
int index_cmd_verify(int argc, char **argv);

#endif /* CLI_INDEX_CMD_H */
