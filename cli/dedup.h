/* dedup.h - what the files of `simhash dedup` share. cmd_dedup.c (options,
 * --against, the command's steps) calls the others; they call one way:
 *
 *	dedup_read.c    documents read through the document source (source.h),
 *	                fingerprinted or sketched, in input order; their
 *	                records re-read by offset
 *	dedup_out.c     outputs of both decisions: pairs, clusters, keep/drop
 *	dedup_verify.c  --verify: the exact check of -k's candidate pairs
 *	dedup_near.c    the default decision: sketches joined, its own outputs
 *
 * dedup_out.c and dedup_verify.c call dedup_read.c; dedup_near.c calls
 * dedup_out.c (clusters take the member's field as a callback, so the
 * outputs never call the decision); none calls back into cmd_dedup.c.
 */
#ifndef CLI_DEDUP_H
#define CLI_DEDUP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "outfile.h"
#include "simhash.h"
#include "source.h"
#include "util.h"

#define DEDUP_ERR_MAX 512

enum output { OUT_PAIRS, OUT_CLUSTERS, OUT_KEEP, OUT_DROP };
enum verify { VERIFY_NONE, VERIFY_JACCARD, VERIFY_COSINE };

/* The command's options, as parsed. */
struct dedup_opts {
	unsigned jobs;
	long k;
	enum output output;
	enum verify verify;
	double threshold;
	const char *out;
	const char *vfeatures;
	const char *against;
	int quiet;
	int near;
	int explain;
	int exhaustive;
};

/* Per document, in input order. */
struct dedup_docs {
	size_t n, cap;
	unsigned nw;
	uint64_t *fps;
	uint64_t *rec_off; /* record's first byte in its input */
	uint64_t *rec_len; /* with its line break */
	uint32_t *src;     /* index of its input */
	uint64_t *id_off;  /* n + 1 offsets into ids */
	struct sbuf ids;
	/* the default (no -k, no --verify): each document's sketch (else NULL),
	 * its keys in the blocks of key_blocks, which hold nothing else */
	simhash_sketch *sk;
	void **key_blocks;
	size_t n_key_blocks;
};

/* How documents are read. */
struct dedup_run {
	enum mode mode;
	int multi;
	const char *text_field, *id_field;
	unsigned jsonl_flags;
	const simhash_config *cfg;
	int near; /* sketch documents for simhash_near_join() instead */
	int no_ids; /* keep or drop of lines or records: no id is ever written */
};

/* One input: where its records are re-read from. */
struct dedup_input {
	const char *path;
	int fd;    /* regular file or the spool of standard input; -1: files mode */
	FILE *spool;
};

/* ---- dedup_read.c */

/* Opens what verification and keep/drop re-read: each regular file, or a
 * spool for standard input (and any other stream). */
int dedup_open_inputs(struct dedup_input *ins, char **paths, size_t n, enum mode mode);
/* Flushes the spools (EXIT_OK or EXIT_FAIL after printing why). */
int dedup_flush_inputs(struct dedup_input *ins, size_t n);
void dedup_close_inputs(struct dedup_input *ins, size_t n);

/* Reads, fingerprints (or sketches) every document of the inputs on jobs
 * threads into docs, in input order, spooling the streams of ins. A
 * configuration the library refuses is reported before any input is read.
 * EXIT_OK, or the exit status after printing why. */
int dedup_read_all(const struct dedup_run *run, unsigned jobs, struct dedup_input *ins,
		   char **paths, size_t n_paths, struct dedup_docs *docs);
void dedup_docs_free(struct dedup_docs *d);

/* Reads document i's record (with its line break) into out. 0, or -1 with
 * errno set. */
int dedup_read_record(const struct dedup_input *ins, const struct dedup_docs *d, size_t i,
		      struct sbuf *out);

/* Records asked for in input order (keep, drop): a read-ahead window of
 * one input, so that neighbouring records cost one read per MiB instead of
 * one each. Zero-initialized; sbuf_free(&w->win) when done. */
struct dedup_records {
	struct sbuf win; /* bytes [off, off + win.len) of input src */
	uint64_t off;
	uint32_t src;
	int valid;
};

/* Document i's record through w: *p and *len point into w (valid until the
 * next call). 0, or -1 with errno set. */
int dedup_records_get(struct dedup_records *w, const struct dedup_input *ins,
		      const struct dedup_docs *d, size_t i, const char **p, size_t *len);

/* ---- dedup_out.c */

/* Writes b out once it holds 1 MiB, or whenever force; 0 or -1. */
int dedup_flush_out(struct outfile *out, struct sbuf *b, int force);
int dedup_add_id(struct sbuf *b, const struct dedup_docs *d, size_t i);

/* Appends a cluster member's field after its id (for instance ,"dist":3): m
 * compared with the first member, first. 0, or -1 if memory runs out. */
typedef int dedup_member_fn(struct sbuf *b, const struct dedup_docs *d, const void *arg,
			    size_t first, size_t m);
/* The member's Hamming distance to the first: ,"dist":D. */
dedup_member_fn dedup_member_dist;

/* ID_A<TAB>ID_B<TAB>DIST per pair, and <TAB>SIM if sims. */
int dedup_write_pairs(struct outfile *out, const struct dedup_docs *d,
		      const simhash_pair *pairs, size_t n, const double *sims);
/* JSON Lines, one per cluster of two or more; *n_clusters gets their number. */
int dedup_write_clusters(struct outfile *out, const struct dedup_docs *d, const uint64_t *cl,
			 dedup_member_fn *member, const void *arg, size_t *n_clusters);
/* Appends document i's record as keep and drop write it (through rec, a
 * read-ahead window), or in files mode its path and a newline. */
int dedup_add_record(struct sbuf *b, const struct dedup_run *run, const struct dedup_input *ins,
		     const struct dedup_docs *d, size_t i, struct dedup_records *rec);
/* The records to keep (keep = 1) or to drop. */
int dedup_write_records(struct outfile *out, const struct dedup_run *run,
			const struct dedup_input *ins, const struct dedup_docs *d,
			const uint64_t *cl, int keep);
/* Clusters of two or more: roots with a member other than themselves. */
size_t dedup_count_clusters(const uint64_t *cl, size_t n);

/* ---- dedup_verify.c */

/* Keeps the pairs whose exact similarity (how, with the features of vcfg) is
 * at least threshold; *sims gets the similarity of each kept pair. */
int dedup_verify(const struct dedup_run *run, const struct dedup_input *ins,
		 const struct dedup_docs *d, const simhash_config *vcfg, enum verify how,
		 double threshold, unsigned n_threads, simhash_pair *pairs, size_t *n_pairs,
		 double **sims);

/* ---- dedup_near.c */

/* The default decision over the sketched documents, written as o->output
 * says; *n_pairs (pairs output only) and *n_clusters for the summary. */
int dedup_near_run(const struct dedup_opts *o, const struct dedup_run *run,
		   const struct dedup_input *ins, const struct dedup_docs *d, size_t *n_pairs,
		   size_t *n_clusters);

#endif /* CLI_DEDUP_H */
