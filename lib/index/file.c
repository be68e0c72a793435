/* file.c - saving an index to a file and opening it by memory map.
 *
 * Layout (docs/format.md), every integer little-endian, sections 64-byte aligned:
 *   header   96 bytes + 40 per table, then a u64 XXH3 of the header's bytes;
 *            bytes 88..95 hold the XXH3-64 of the body (every byte after the
 *            header's padding); format version 1 had neither (88 bytes)
 *   scheme   scheme_len bytes        user     user_len bytes
 *   ids      count u64               fps      count * bits/64 u64 (scan layout only)
 *   tables   per table: dir (2^dir_bits + 1 u32), fps (count * bits/64 u64), rows (count u32)
 * Invariants checked by open before any use: magic, byte order, version <=
 * ours, header checksum, file size equal to the header's, every section
 * inside the file. The body is not read at open (that keeps open O(1)); the
 * query path clamps directory offsets and rows, so a damaged body gives wrong
 * answers, never a read outside the mapping, and simhash_index_verify()
 * checks the body against its checksum (one pass over the file). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "ix.h"

#define MAGIC "SHINDEX\0"
#define BOM 0x01020304u
#define HDR_FIXED 96    /* format version 2 */
#define HDR_FIXED_V1 88 /* format version 1: no body checksum */
#define HDR_TABLE 40

simhash_err sh_ix_compact_copy(const simhash_index *ix, sh_ix_seg **out);

static uint64_t align64(uint64_t x)
{
	return (x + 63) & ~(uint64_t)63;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static double getd(const uint8_t *p)
{
	uint64_t u = get64(p);
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static void putd(uint8_t *p, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	sh_put_le64(p, u);
}

typedef struct sect {
	const void *p;
	uint64_t len;
	uint64_t off;
} sect;

/* XXH3-64 of the body as write_file writes it: from the end of the header's
 * padding, each section after its zero padding, then the final padding. */
static uint64_t body_sum(const sect *sec, size_t n_sec, uint64_t body_off)
{
	static const uint8_t zero[64];
	XXH3_state_t *x = XXH3_createState();
	uint64_t pos = body_off, sum;

	if (!x)
		return 0;
	XXH3_64bits_reset(x);
	for (size_t i = 0; i < n_sec; i++) {
		XXH3_64bits_update(x, zero, sec[i].off - pos);
		if (sec[i].len)
			XXH3_64bits_update(x, sec[i].p, sec[i].len);
		pos = sec[i].off + sec[i].len;
	}
	XXH3_64bits_update(x, zero, align64(pos) - pos);
	sum = XXH3_64bits_digest(x);
	XXH3_freeState(x);
	return sum;
}

static int write_all(simhash_outfile *f, const void *p, size_t len)
{
	return simhash_outfile_write(f, p, len, NULL) != SIMHASH_OK;
}

/* Header and section list of s; the body is written from the sections. The
 * body's checksum is computed from the sections, unless they are still to be
 * built (build): then the header holds 0 until seal() puts it in. */
static size_t layout(const simhash_index *ix, const sh_ix_seg *s, uint8_t *hdr, sect *sec,
		     size_t *n_sec, int build)
{
	const void *user;
	size_t user_len, hdr_len = HDR_FIXED + HDR_TABLE * s->n_tables + 8, ns = 0;
	uint64_t off, words = ix->words;

	simhash_index_user(ix, &user, &user_len);
	memset(hdr, 0, hdr_len);
	off = align64(hdr_len);
	sec[ns++] = (sect){ix->scheme, strlen(ix->scheme), off};
	off = align64(off + sec[ns - 1].len);
	sec[ns++] = (sect){user, user_len, off};
	off = align64(off + user_len);
	sec[ns++] = (sect){s->ids, s->n * 8, off};
	off = align64(off + s->n * 8);
	sec[ns++] = (sect){s->fps, s->n_tables ? 0 : s->n * 8 * words, off};
	off = align64(off + sec[ns - 1].len);
	for (unsigned t = 0; t < s->n_tables; t++) {
		const sh_ix_table *tb = &s->tab[t];
		uint8_t *d = hdr + HDR_FIXED + HDR_TABLE * t;
		sec[ns++] = (sect){tb->dir, (((uint64_t)1 << tb->dir_bits) + 1) * 4, off};
		off = align64(off + sec[ns - 1].len);
		sec[ns++] = (sect){tb->fps, s->n * 8 * words, off};
		off = align64(off + sec[ns - 1].len);
		sec[ns++] = (sect){tb->rows, s->n * 4, off};
		off = align64(off + sec[ns - 1].len);
		put32(d, tb->start), put32(d + 4, tb->width), put32(d + 8, tb->dir_bits);
		sh_put_le64(d + 16, sec[ns - 3].off);
		sh_put_le64(d + 24, sec[ns - 2].off);
		sh_put_le64(d + 32, sec[ns - 1].off);
	}
	memcpy(hdr, MAGIC, 8);
	put32(hdr + 8, SH_IX_FORMAT_VERSION);
	put32(hdr + 12, BOM);
	put32(hdr + 16, ix->bits);
	put32(hdr + 20, ix->max_dist);
	sh_put_le64(hdr + 24, s->n);
	put32(hdr + 32, s->n_tables ? s->plan.n_chunks : 0);
	put32(hdr + 36, s->n_tables);
	put32(hdr + 40, (uint32_t)sec[0].len);
	sh_put_le64(hdr + 48, user_len);
	sh_put_le64(hdr + 56, off);
	putd(hdr + 64, s->plan.probes);
	putd(hdr + 72, s->plan.candidates);
	putd(hdr + 80, s->plan.query_ns);
	sh_put_le64(hdr + 88, build ? 0 : body_sum(sec, ns, align64(hdr_len)));
	sh_put_le64(hdr + hdr_len - 8, sh_key(hdr, hdr_len - 8));
	*n_sec = ns;
	return hdr_len;
}

/* Puts the body's checksum into a header that layout() made. */
static void seal(uint8_t *hdr, size_t hdr_len, uint64_t sum)
{
	sh_put_le64(hdr + 88, sum);
	sh_put_le64(hdr + hdr_len - 8, sh_key(hdr, hdr_len - 8));
}

/* Writes len bytes to f (none when f is NULL) and adds them to the body's
 * checksum x (when not NULL). */
static int put(simhash_outfile *f, XXH3_state_t *x, const void *p, size_t len)
{
	if (x && len)
		XXH3_64bits_update(x, p, len);
	return f && len && write_all(f, p, len);
}

/* Writes header and sections to f, or only hashes the body into x when f
 * is NULL. build: s has its geometry but no tables yet; each table is then
 * built (on `threads` threads) into the same two buffers just before its
 * sections are written, so one table at a time is in memory and its pages
 * are faulted in once. hdr: the header from layout(), written first. */
static simhash_err write_file(sh_ix_seg *s, unsigned words, simhash_outfile *f, XXH3_state_t *x,
			      int build, unsigned threads, const uint8_t *hdr, size_t hdr_len,
			      sect *sec, size_t n_sec)
{
	static const uint8_t zero[64];
	uint64_t pos = align64(hdr_len), *fps = NULL;
	uint32_t *rows = NULL;
	simhash_err err = SIMHASH_OK;

	/* the header's padding is outside the body's checksum */
	if (put(f, NULL, hdr, hdr_len) || put(f, NULL, zero, pos - hdr_len))
		return SIMHASH_EIO;
	for (size_t i = 0; i < n_sec && !err; i++) {
		size_t t = (i - 4) / 3;
		if (build && i >= 4 && (i - 4) % 3 == 0) {
			err = sh_ix_table_fill(s, words, &s->tab[t], threads, fps, rows, NULL, NULL);
			if (err)
				break;
			fps = (uint64_t *)s->tab[t].fps, rows = (uint32_t *)s->tab[t].rows;
			sec[i].p = s->tab[t].dir, sec[i + 1].p = fps, sec[i + 2].p = rows;
		}
		if (put(f, x, zero, sec[i].off - pos) || put(f, x, sec[i].p, sec[i].len))
			err = SIMHASH_EIO;
		pos = sec[i].off + sec[i].len;
		if (build && i >= 4 && (i - 4) % 3 == 2) {
			free((void *)s->tab[t].dir);
			s->tab[t].dir = NULL, s->tab[t].fps = NULL, s->tab[t].rows = NULL;
		}
	}
	if (!err && put(f, x, zero, align64(pos) - pos))
		err = SIMHASH_EIO;
	if (build) { /* after an error: the directory in hand */
		for (unsigned t = 0; t < s->n_tables; t++)
			if (s->tab[t].dir) {
				free((void *)s->tab[t].dir);
				s->tab[t].dir = NULL, s->tab[t].fps = NULL, s->tab[t].rows = NULL;
			}
		free(fps), free(rows);
	}
	return err;
}

/* Builds the file in place in f's temporary file, its space reserved, one
 * window of a shared mapping at a time: each section before the tables,
 * then each table's directory, fingerprints and rows, filled straight into
 * the file (no copy through write(), and the page faults spread over the
 * fill's threads). Each window is hashed into x, in file order, before it is
 * unmapped: unwritten bytes (the padding) read as the zeros write_file puts
 * there, so the bytes and the checksum are write_file's. At most one window
 * is mapped: the resident file pages stay under the largest window (a table,
 * or the user section), and the pages unmapped are the kernel's to write
 * back. The header is left for the caller. The tables share one scratch for
 * their two-level scatter (scratch: n * (8 * words + 4) bytes, or NULL);
 * without it they are scattered in one pass, to the same bytes. */
static simhash_err build_mapped(sh_ix_seg *s, unsigned words, simhash_outfile *f, XXH3_state_t *x,
				unsigned threads, uint64_t body_off, sect *sec, size_t n_sec,
				uint64_t size, void *scratch)
{
	simhash_err err = SIMHASH_OK;
	uint64_t lo = 0, *sfps = scratch;
	uint32_t *srows = scratch ? (uint32_t *)(sfps + s->n * words) : NULL;
	uint8_t *w;

	/* windows: each of scheme, user, ids and fps (scan layout), then
	 * each table's three sections together */
	for (size_t i = 0, step; i < n_sec && !err; i += step) {
		uint64_t hi;
		size_t t = (i - 4) / 3;

		step = i < 4 ? 1 : 3;
		hi = i + step < n_sec ? sec[i + step].off : size;
		if (hi == lo)
			continue;
		err = sh_outfile_map(f, lo, (size_t)(hi - lo), (void **)&w);
		if (err)
			break;
		if (i < 4) {
			if (sec[i].len)
				memcpy(w + (sec[i].off - lo), sec[i].p, sec[i].len);
		} else {
			err = sh_ix_table_fill(s, words, &s->tab[t], threads,
					       (uint64_t *)(w + (sec[i + 1].off - lo)),
					       (uint32_t *)(w + (sec[i + 2].off - lo)), sfps, srows);
			if (!err) {
				memcpy(w + (sec[i].off - lo), s->tab[t].dir, sec[i].len);
				free((void *)s->tab[t].dir);
			}
			s->tab[t].dir = NULL, s->tab[t].fps = NULL, s->tab[t].rows = NULL;
		}
		if (!err) {
			uint64_t from = lo > body_off ? lo : body_off;
			XXH3_64bits_update(x, w + (from - lo), hi - from);
		}
		sh_outfile_unmap(f, w, lo, (size_t)(hi - lo));
		lo = hi;
	}
	return err;
}

/* Builds s's tables while writing them, and the body's checksum with them;
 * the header is written again at the end with the checksum in it. Built in
 * a mapping of the file where its space can be reserved (build_mapped), else
 * through write(). A target written in place (a FIFO, a device) cannot be
 * rewritten: there the tables are built twice, once for the checksum and
 * once to write them. */
static simhash_err build_file(const simhash_index *ix, sh_ix_seg *s, simhash_outfile *f,
			      unsigned threads, void *scratch)
{
	uint8_t hdr[HDR_FIXED + HDR_TABLE * SIMHASH_PLAN_MAX_TABLES + 8];
	sect sec[4 + 3 * SIMHASH_PLAN_MAX_TABLES];
	size_t n_sec, hdr_len = layout(ix, s, hdr, sec, &n_sec, 1);
	int in_place = simhash_outfile_temp(f) == NULL;
	XXH3_state_t *x = XXH3_createState();
	uint64_t size = get64(hdr + 56);
	simhash_err err = SIMHASH_EINVAL;

	if (!x)
		return SIMHASH_ENOMEM;
	XXH3_64bits_reset(x);
	if (!in_place)
		err = sh_outfile_reserve(f, size);
	if (err == SIMHASH_OK)
		err = build_mapped(s, ix->words, f, x, threads, align64(hdr_len), sec, n_sec, size,
				   scratch);
	else if (err == SIMHASH_EINVAL) /* no reserved space: written */
		err = write_file(s, ix->words, in_place ? NULL : f, x, 1, threads, hdr, hdr_len, sec, n_sec);
	if (!err) {
		seal(hdr, hdr_len, XXH3_64bits_digest(x));
		if (in_place)
			err = write_file(s, ix->words, f, NULL, 1, threads, hdr, hdr_len, sec, n_sec);
		else
			err = sh_outfile_pwrite(f, hdr, hdr_len, 0);
	}
	XXH3_freeState(x);
	return err;
}

/* Writes a built segment: the body's checksum comes from its sections. */
static simhash_err save_file(const simhash_index *ix, sh_ix_seg *s, simhash_outfile *f)
{
	uint8_t hdr[HDR_FIXED + HDR_TABLE * SIMHASH_PLAN_MAX_TABLES + 8];
	sect sec[4 + 3 * SIMHASH_PLAN_MAX_TABLES];
	size_t n_sec, hdr_len = layout(ix, s, hdr, sec, &n_sec, 0);

	return write_file(s, ix->words, f, NULL, 0, 1, hdr, hdr_len, sec, n_sec);
}

/* The library's one atomic writer: temp file, fsync, rename, fsync of the
 * directory; an existing file keeps its mode. */
static simhash_err write_atomic(const simhash_index *ix, sh_ix_seg *s, const char *path, int build,
				unsigned threads, void *scratch, simhash_error *e)
{
	simhash_outfile *f;
	simhash_err err = simhash_outfile_open(path, &f, e);
	int os_err;

	if (err)
		return err;
	err = build ? build_file(ix, s, f, threads, scratch) : save_file(ix, s, f);
	os_err = errno; /* of the write, mapping or sync that failed (SIMHASH_EIO) */
	if (!err)
		return simhash_outfile_commit(f, e);
	simhash_outfile_abort(f);
	if (err == SIMHASH_EIO && os_err)
		return sh_error_errno(e, err, os_err, 1);
	return sh_error_code(e, err);
}

simhash_err simhash_index_save(const simhash_index *ix, const char *path, simhash_error *e)
{
	sh_ix_seg *tmp_seg = NULL;
	const sh_ix_seg *s;
	simhash_err err;

	if (!ix || !path || !*path)
		return sh_error_code(e, SIMHASH_EINVAL);
	pthread_rwlock_rdlock((pthread_rwlock_t *)&ix->lock);
	if (ix->n_seg == 1 && ix->seg[0]->n_dead == 0) {
		s = ix->seg[0];
	} else {
		err = sh_ix_compact_copy(ix, &tmp_seg);
		if (err) {
			sh_error_code(e, err);
			goto out_unlock;
		}
		s = tmp_seg;
	}
	err = write_atomic(ix, (sh_ix_seg *)s, path, 0, 1, NULL, e);
out_unlock:
	pthread_rwlock_unlock((pthread_rwlock_t *)&ix->lock);
	sh_ix_seg_free(tmp_seg);
	return err;
}

simhash_err simhash_index_build_file(const simhash_index *ix, uint64_t *fps, uint64_t *ids, size_t n,
				     unsigned threads, const char *path, simhash_error *e)
{
	sh_ix_seg *s;
	simhash_index_plan plan;
	simhash_err err;
	void *scratch;

	if (!ix || !path || !*path || (n && (!fps || !ids)) || n > UINT32_MAX || ix->n_seg)
		return sh_error_code(e, SIMHASH_EINVAL);
	/* one scratch for the sort (16 bytes a row) and then the tables'
	 * scatter (8 * words + 4): fresh pages cost their zeroing once.
	 * Without it, the sort makes its own and the tables go in one pass. */
	scratch = n ? sh_ix_alloc_big(n * (ix->words == 1 ? 16 : 20), 0) : NULL;
	n = sh_ix_sort_unique_buf(fps, ids, n, ix->words, threads, scratch);
	if (n == SIZE_MAX || n == 0) {
		free(scratch);
		return n ? sh_error_code(e, SIMHASH_ENOMEM) : simhash_index_save(ix, path, e);
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		free(scratch);
		return sh_error_code(e, SIMHASH_ENOMEM);
	}
	/* the segment simhash_index_build would make, its tables still to come */
	s->n = n, s->fps = fps, s->ids = ids;
	err = sh_ix_plan_data(ix->bits, ix->max_dist, fps, n, (simhash_layout)ix->force, ix->force_m, &plan);
	if (!err) {
		sh_ix_seg_geometry(s, ix->bits, &plan);
		pthread_rwlock_rdlock((pthread_rwlock_t *)&ix->lock);
		err = write_atomic(ix, s, path, 1, threads, scratch, e);
		pthread_rwlock_unlock((pthread_rwlock_t *)&ix->lock);
	} else {
		sh_error_code(e, err);
	}
	free(s);
	free(scratch);
	return err;
}

/* A failed system call: its errno's text as the system words it. */
static simhash_err os_fail(simhash_error *e, int os_err)
{
	return sh_error_errno(e, SIMHASH_EIO, os_err, 0);
}

/* What the fixed header of a file says, once check_header has checked it. */
typedef struct hdr {
	uint32_t version, bits, max_dist, n_chunks, n_tables, scheme_len;
	uint64_t n, user_len;
	uint64_t fixed, len;    /* the fixed part; all of it (table entries, checksum) */
} hdr;

/* Checks the header of a file of size len at p: magic, byte order, version,
 * checksum, and values a reader can trust. */
static simhash_err check_header(const uint8_t *p, uint64_t len, hdr *h, simhash_error *e)
{
	uint64_t size;

	if (len == 0)
		return sh_error_set(e, SIMHASH_ECORRUPT, "empty file, not a simhash index");
	if (memcmp(p, MAGIC, len < 8 ? (size_t)len : 8) != 0)
		return sh_error_set(e, SIMHASH_ECORRUPT, "bad magic: not a simhash index");
	if (len < 16)
		return sh_error_set(e, SIMHASH_ECORRUPT, "truncated: %llu bytes", (unsigned long long)len);
	if (get32(p + 12) != BOM)
		return sh_error_set(e, SIMHASH_ECORRUPT, "unknown byte order mark");
	h->version = get32(p + 8);
	if (h->version > SH_IX_FORMAT_VERSION)
		return sh_error_set(e, SIMHASH_EVERSION, "format version %u is newer than this library's %u",
			    h->version, SH_IX_FORMAT_VERSION);
	if (h->version == 0)
		return sh_error_set(e, SIMHASH_ECORRUPT, "format version 0 is invalid");
	h->fixed = h->version >= 2 ? HDR_FIXED : HDR_FIXED_V1;
	if (len < h->fixed + 8)
		return sh_error_set(e, SIMHASH_ECORRUPT, "truncated header");
	h->n_tables = get32(p + 36);
	if (h->n_tables > SIMHASH_PLAN_MAX_TABLES)
		return sh_error_set(e, SIMHASH_ECORRUPT, "bad header: %u tables", h->n_tables);
	h->len = h->fixed + HDR_TABLE * (uint64_t)h->n_tables + 8;
	if (len < h->len)
		return sh_error_set(e, SIMHASH_ECORRUPT, "truncated header");
	if (get64(p + h->len - 8) != sh_key(p, h->len - 8))
		return sh_error_set(e, SIMHASH_ECORRUPT, "header checksum mismatch");
	h->bits = get32(p + 16), h->max_dist = get32(p + 20), h->n = get64(p + 24);
	h->n_chunks = get32(p + 32), h->scheme_len = get32(p + 40);
	h->user_len = get64(p + 48), size = get64(p + 56);
	if (size != len)
		return sh_error_set(e, SIMHASH_ECORRUPT, "truncated: the header says %llu bytes, the file has %llu",
			    (unsigned long long)size, (unsigned long long)len);
	if ((h->bits != 64 && h->bits != 128) ||
	    h->max_dist > (h->bits == 64 ? SIMHASH_INDEX_MAX_DIST_64 : SIMHASH_INDEX_MAX_DIST_128) ||
	    h->n > UINT32_MAX || h->scheme_len >= SIMHASH_SCHEME_MAX ||
	    (h->n_tables && (h->n_chunks < h->bits / 64 || h->n_chunks > SIMHASH_PLAN_MAX_TABLES ||
			     h->n_tables != (h->n_chunks < h->max_dist + 1 ? h->n_chunks : h->max_dist + 1))))
		return sh_error_set(e, SIMHASH_ECORRUPT, "bad header values");
	return SIMHASH_OK;
}

/* Points s's tables into the mapping from *off on, each where the header
 * says; 1 if one is not (then *bad_table is its number, or UINT_MAX when a
 * section runs past len). */
static int load_tables(const uint8_t *p, uint64_t len, const hdr *h, sh_ix_seg *s, uint64_t *off,
		       unsigned *bad_table)
{
	uint64_t words = h->bits / 64, n = h->n;

	for (unsigned t = 0, start = 0; t < h->n_tables; t++) {
		const uint8_t *d = p + h->fixed + HDR_TABLE * t;
		sh_ix_table *tb = &s->tab[t];
		unsigned w = h->bits / h->n_chunks + (t < h->bits % h->n_chunks);
		sh_ix_table_geometry(tb, h->bits, start, w, n);
		*bad_table = t;
		if (get32(d) != start || get32(d + 4) != w || get32(d + 8) != tb->dir_bits ||
		    get64(d + 16) != *off)
			return 1;
		*bad_table = UINT_MAX;
		start += w;
		tb->dir = (const uint32_t *)(p + *off);
		*off = align64(*off + (((uint64_t)1 << tb->dir_bits) + 1) * 4);
		if (get64(d + 24) != *off || *off + n * 8 * words > len)
			return 1;
		tb->fps = (const uint64_t *)(p + *off);
		*off = align64(*off + n * 8 * words);
		if (get64(d + 32) != *off || *off + n * 4 > len)
			return 1;
		tb->rows = (const uint32_t *)(p + *off);
		*off = align64(*off + n * 4);
	}
	return 0;
}

/* Points ix and s into the mapping, section by section in the order
 * layout() writes them. */
static simhash_err load_sections(const uint8_t *p, uint64_t len, const hdr *h, simhash_index *ix,
				 sh_ix_seg *s, simhash_error *e)
{
	uint64_t off = align64(h->len), n = h->n, words = h->bits / 64;
	unsigned bad_table;

	ix->bits = h->bits, ix->words = (unsigned)words, ix->max_dist = h->max_dist;
	ix->file_version = h->version;
	ix->body_off = align64(h->len);
	ix->body_sum = h->version >= 2 ? get64(p + 88) : 0;
	if (off + h->scheme_len > len)
		goto out_trunc;
	memcpy(ix->scheme, p + off, h->scheme_len);
	ix->scheme[h->scheme_len] = 0;
	if (memchr(ix->scheme, 0, h->scheme_len))
		return sh_error_set(e, SIMHASH_ECORRUPT, "bad scheme string");
	off = align64(off + h->scheme_len);
	if (h->user_len > len || off + h->user_len > len)
		goto out_trunc;
	ix->user_ext = p + off, ix->user_len = h->user_len;
	off = align64(off + h->user_len);
	if (off + n * 8 > len)
		goto out_trunc;
	s->ids = (const uint64_t *)(p + off);
	off = align64(off + n * 8);
	s->n = n;
	s->mapped = 1;
	if (!h->n_tables) {
		if (off + n * 8 * words > len)
			goto out_trunc;
		s->fps = (const uint64_t *)(p + off);
		off = align64(off + n * 8 * words);
	}
	if (load_tables(p, len, h, s, &off, &bad_table)) {
		if (bad_table != UINT_MAX)
			return sh_error_set(e, SIMHASH_ECORRUPT, "bad table %u in the header", bad_table);
		goto out_trunc;
	}
	if (off > len)
		goto out_trunc;
	s->n_tables = h->n_tables;
	return SIMHASH_OK;
out_trunc:
	return sh_error_set(e, SIMHASH_ECORRUPT, "truncated or inconsistent sections");
}

/* The plan of a loaded segment: what the header recorded, the rest derived
 * as the planner derives it. */
static void load_plan(const uint8_t *p, uint64_t len, const hdr *h, sh_ix_seg *s)
{
	uint32_t bits = h->bits, n_chunks = h->n_chunks, n_tables = h->n_tables;

	s->plan.layout = n_tables ? SIMHASH_LAYOUT_MIH : SIMHASH_LAYOUT_SCAN;
	s->plan.bits = bits, s->plan.k = h->max_dist, s->plan.n = h->n;
	s->plan.n_chunks = n_chunks, s->plan.n_tables = n_tables;
	for (unsigned t = 0; t < n_chunks && t < SIMHASH_PLAN_MAX_TABLES; t++) {
		s->plan.chunk_bits[t] = bits / n_chunks + (t < bits % n_chunks);
		s->plan.radius[t] = t < n_tables ? sh_ix_radius(n_chunks, h->max_dist, t) : UINT32_MAX;
	}
	s->plan.probes = getd(p + 64), s->plan.candidates = getd(p + 72), s->plan.query_ns = getd(p + 80);
	s->plan.scan_ns = sh_ix_scan_ns(bits, h->n);
	s->plan.memory = len;
	s->plan.bytes_per_fp = h->n ? (double)len / (double)h->n : 0;
}

/* Checks the header of a file of size len at p; fills ix and its segment. */
static simhash_err check_and_load(const uint8_t *p, uint64_t len, simhash_index *ix, sh_ix_seg *s,
				  simhash_error *e)
{
	hdr h = {0};
	simhash_err err = check_header(p, len, &h, e);

	if (!err)
		err = load_sections(p, len, &h, ix, s, e);
	if (err)
		return err;
	if (h.n_tables)
		sh_ix_seg_bias(s, h.bits);
	load_plan(p, len, &h, s);
	return SIMHASH_OK;
}

simhash_err simhash_index_open(const char *path, simhash_index **out, simhash_error *e)
{
	simhash_index *ix = NULL;
	sh_ix_seg *s = NULL;
	struct stat st;
	void *map = NULL;
	simhash_err err;
	int fd;

	if (!path || !out)
		return sh_error_code(e, SIMHASH_EINVAL);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return os_fail(e, errno);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return sh_error_set(e, SIMHASH_EIO, "not a regular file");
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			close(fd);
			return os_fail(e, errno);
		}
	}
	close(fd);
	err = simhash_index_new(64, 0, &ix);
	if (err)
		goto out_unmap;
	s = calloc(1, sizeof *s);
	err = SIMHASH_ENOMEM;
	if (!s)
		goto out_free;
	err = check_and_load(map, (uint64_t)st.st_size, ix, s, e);
	if (err)
		goto out_free;
	ix->map = map, ix->map_len = (size_t)st.st_size;
	ix->count = s->n;
	if (s->n) {
		ix->seg = malloc(sizeof *ix->seg);
		err = SIMHASH_ENOMEM;
		if (!ix->seg)
			goto out_free_keep_map;
		ix->seg[0] = s;
		ix->n_seg = ix->cap_seg = 1;
	} else {
		sh_ix_seg_free(s);
	}
	*out = ix;
	return SIMHASH_OK;
out_free_keep_map:
	map = NULL; /* simhash_index_free unmaps it */
out_free:
	sh_ix_seg_free(s);
	simhash_index_free(ix);
out_unmap:
	if (map)
		munmap(map, (size_t)st.st_size);
	if (err == SIMHASH_ENOMEM) /* the other failures said why */
		sh_error_code(e, err);
	return err;
}

simhash_err simhash_index_verify(const simhash_index *ix, simhash_error *e)
{
	const uint8_t *p;

	if (!ix)
		return sh_error_code(e, SIMHASH_EINVAL);
	if (!ix->map || ix->file_version < 2)
		return SIMHASH_OK; /* in memory, or a version 1 file: nothing recorded */
	p = ix->map;
	if (ix->body_off > ix->map_len ||
	    XXH3_64bits(p + ix->body_off, ix->map_len - ix->body_off) != ix->body_sum)
		return sh_error_set(e, SIMHASH_ECORRUPT, "body checksum mismatch");
	return SIMHASH_OK;
}
