/* source.h - the one document source of the commands: files, lines or JSON
 * Lines records with their ids, fingerprinted in parallel and handed on in
 * input order. `fingerprint`, `dedup`, `store add`, `store import` and
 * `index query` read their documents through it.
 *
 * The main thread cuts the input into batches - a few files, or about 64 KB
 * of whole lines - and the pool (pool.h) runs them on -j workers, each with
 * its own simhash_ctx; JSON is parsed there too. On the worker, each document
 * is fingerprinted (unless the command asks for raw records) and handed to
 * the command's doc hook, which appends what the command needs to the batch's
 * out buffer: a formatted line, a record to store, a query. Batches come back
 * in submission order to the command's batch hook, on the main thread, so
 * what a command writes is the same for every -j, and memory stays bounded by
 * the batches in flight (2 per worker, plus 2) and the longest line.
 *
 * Errors: a document that fails (a bad record, invalid UTF-8 under
 * --utf8 reject, an unreadable file) stops the run with status 1 after the
 * documents before it have gone through the batch hook (whatever -j); with
 * keep_going it is reported (`FILE:LINE: what`, in input order) and skipped,
 * and the run ends with status 1. Running out of memory always stops.
 *
 * `dedup` keeps, per document, a fingerprint or a near sketch (the source
 * then only parses: no_fingerprint) and where to read the text again for
 * verification and keep/drop (doc->input, rec_off and rec_len); doc->worker
 * selects per-worker state such as its simhash_near. A stream it cannot read
 * twice (standard input, a pipe) it spools through the tee hook, which sees
 * every piece of input as it is read, so rec_off is an offset in the spool.
 */
#ifndef CLI_SOURCE_H
#define CLI_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "simhash.h"
#include "util.h"

struct jsonl_rec;
struct progress;

/* What a document is: a whole file, a line, or a JSON Lines record. */
enum mode { MODE_FILES, MODE_LINES, MODE_JSONL };

/* One document, on the worker, valid during the doc hook only. */
struct doc {
	const char *path;  /* its input as given; "-" is standard input */
	uint32_t input;    /* the index of that input among src_run's paths */
	uint64_t line;     /* its line number, from 1; 0 for a whole file */
	const char *text;  /* NULL for a file fingerprinted as a stream */
	size_t text_len;
	const struct jsonl_rec *rec; /* MODE_JSONL: the parsed record (id, fields) */
	uint64_t rec_off;  /* the record's first byte in its input (0 for a file) */
	uint64_t rec_len;  /* its bytes, with the line break; a file's size */
	simhash_fp fp;     /* unless the source is raw or no_fingerprint */
	simhash_ctx *ctx;  /* the worker's context */
	unsigned worker;   /* the worker's number, 0 .. n_threads - 1 */
};

/* A batch, as the doc hook fills it and the batch hook takes it. */
struct src_batch {
	struct sbuf out;   /* the doc hook's output, in input order */
	uint64_t n_docs;   /* documents handed to the doc hook */
	uint64_t n_bytes;  /* input bytes, for the progress line */
	struct src_private *priv;
};

/* Worker side: appends what the command keeps of d to b->out; 0, or -1
 * after src_fail(). Main thread side: takes a finished batch (it holds the
 * documents before a failing one too); 0, or -1 after printing why, which
 * stops the run. */
typedef int (*src_doc_fn)(struct src_batch *b, const struct doc *d, void *arg);
typedef int (*src_batch_fn)(struct src_batch *b, void *arg);

/* Main thread, MODE_LINES and MODE_JSONL: the len bytes at data are the next
 * piece of input `input` (the index among src_run's paths), whole lines, in
 * input order, before any of their documents reach a worker. 0, or -1 with a
 * message in err, which stops the run. */
typedef int (*src_tee_fn)(uint32_t input, const char *data, size_t len, void *arg, char *err,
			  size_t err_size);

struct src_opts {
	const char *cmd;            /* "fingerprint": the prefix of setup messages */
	enum mode mode;
	const simhash_config *cfg;  /* the config of every worker's ctx */
	int raw;                    /* hand on records unfingerprinted (store import) */
	int whole_files;            /* read a file into memory (doc->text) to fingerprint it */
	int no_fingerprint;         /* parse records, leave the rest to the doc hook (files
				     * are read whole): dedup's near sketches */
	int keep_going;
	const char *text_field;     /* MODE_JSONL */
	const char *id_field;
	unsigned jsonl_flags;       /* of jsonl_extract() */
	unsigned n_threads;
	src_doc_fn doc;
	src_batch_fn batch;
	src_tee_fn tee;             /* optional */
	void *arg;                  /* of the batch and tee hooks, and of the doc hook ... */
	void *doc_arg;              /* ... unless this is set */
};

struct source;

/* Makes the workers, and worker 0's context, so that a config the library
 * refuses is reported before any input is read. SIMHASH_OK, or the error of
 * simhash_ctx_new (nothing printed); SIMHASH_ENOMEM. */
simhash_err src_new(const struct src_opts *o, struct source **out);

/* Runs the documents of paths[0 .. n_paths) through the hooks, drawing
 * progress on p (may be NULL). EXIT_OK, or EXIT_FAIL once the errors are
 * printed. */
int src_run(struct source *s, char *const *paths, size_t n_paths, struct progress *p);

/* Whether src_run skipped bad input (keep_going). */
int src_had_errors(const struct source *s);

/* Accepts NULL. */
void src_free(struct source *s);

/* Records why d fails, as "FILE:LINE: msg" (a whole file: "FILE: msg";
 * d NULL: msg alone, which stops even keep_going). Returns -1. */
int src_fail(struct src_batch *b, const struct doc *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends the text form's id of d (idesc.h's escape): the record's own id,
 * else the path of a file, else the line number, after "PATH:" if multi
 * (several inputs). */
int src_text_id(struct sbuf *out, const struct doc *d, int multi);

/* The same id as raw bytes, unescaped (what the store keeps, what dedup
 * prints); with several inputs a line's "PATH:" is the path as given, or
 * as messages name it ("<stdin>" for "-") if shown. */
int src_raw_id(struct sbuf *out, const struct doc *d, int multi, int shown);

#endif /* CLI_SOURCE_H */
