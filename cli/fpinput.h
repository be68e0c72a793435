/* fpinput.h - reads a set of fingerprints for `pairs` (and any command that
 * takes fingerprints): the text form `HEX<TAB>ID` that `simhash fingerprint`
 * prints, or the binary fingerprint file (recognised by its magic).
 *
 * Text is parsed in large blocks of whole lines, each cut into one slice per
 * thread; the result does not depend on their number. A regular file is
 * parsed straight from a read-only mapping (no copy, no fresh pages for the
 * text); standard input and pipes are read into memory by read(). Memory: 8
 * bytes per fingerprint (16 at 128 bits), 8 more for where its id starts,
 * plus either the input's bytes (the mapping of a file, or the bytes read
 * from a stream; files up to FPINPUT_IDS_IN_MEMORY bytes) or, for bigger
 * files, nothing more: their pages are given back as the parse moves on and
 * the ids asked for are fetched later by offset (fpinput_fetch). A binary
 * file is memory-mapped: nothing is copied. A mapped file must not be
 * truncated while it is read.
 */
#ifndef CLI_FPINPUT_H
#define CLI_FPINPUT_H

#include <stddef.h>
#include <stdint.h>
#include "simhash.h"
#include "util.h"

#ifndef FPINPUT_IDS_IN_MEMORY /* bytes; tests build with less */
#define FPINPUT_IDS_IN_MEMORY ((uint64_t)1 << 30)
#endif

struct fpinput {
	const char *path;     /* as given; "-" is standard input */
	unsigned bits;        /* 0 for an empty input */
	size_t n;
	const uint64_t *fps;  /* n words (2n at 128 bits), as simhash_pairs_self takes */
	uint64_t *words;      /* owned copy behind fps, for text input */
	simhash_fpfile *file; /* binary input */
	char scheme[SIMHASH_SCHEME_MAX]; /* "" unless the binary file names it */
	/* text ids: in memory, id i starts at text[off[i]] and ends at its line's
	 * end; or in the file, id i starting at byte off[i] */
	int ids_in_file;
	const char *text;     /* the whole input: the mapping, or arena */
	size_t text_len;
	struct sbuf arena;    /* a stream's bytes, read */
	void *map;            /* a regular file's read-only mapping, or NULL */
	size_t map_len, map_released;
	uint64_t *off;
	/* ids fetched from the file: fetched[j] is the id of index want[j] */
	uint64_t *want;
	size_t n_want;
	uint64_t *want_off; /* n_want + 1 offsets into fetched_arena */
	struct sbuf fetched_arena;
};

/* Reads path ("-": standard input) on n_threads threads. EXIT_OK, or
 * EXIT_FAIL after printing why ("FILE:LINE: ..." for a malformed line). */
int fpinput_read(struct fpinput *in, const char *path, unsigned n_threads);

/* Makes the ids of the n indexes idx (any order, repeats allowed) available
 * to fpinput_id, reading them from the file if they are not in memory.
 * EXIT_OK or EXIT_FAIL after printing why. */
int fpinput_fetch(struct fpinput *in, const uint64_t *idx, size_t n);

/* The id of fingerprint i: in memory, a binary file, or fetched. */
void fpinput_id(const struct fpinput *in, uint64_t i, const char **id, size_t *len);

void fpinput_free(struct fpinput *in);

#endif /* CLI_FPINPUT_H */
