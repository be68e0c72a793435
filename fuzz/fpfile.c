/* fpfile.c - fuzz target for simhash_fpfile_open_mem and the readers.
 *
 * The input is a candidate binary fingerprint file. The target aborts unless:
 *  1. open either refuses with a reason (a non-empty string) or accepts;
 *  2. an accepted file gives every fingerprint and id without reading outside
 *     the input (ASan checks this), a width of 32, 64 or 128 with no bits
 *     above it, and ids that lie inside the input;
 *  3. writing the accepted fingerprints and ids again and opening the result
 *     gives the same fingerprints, ids and scheme (the round trip). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simhash.h"

#define FAIL(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "fpfile: invariant broken at %s:%d: ", __FILE__,      \
			__LINE__);                                                    \
		fprintf(stderr, __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                  \
		abort();                                                              \
	} while (0)

struct mem {
	uint8_t *p;
	size_t len, cap;
};

static int mem_write(const void *data, size_t len, void *arg)
{
	struct mem *m = arg;

	if (m->len + len > m->cap) {
		size_t cap = (m->len + len) * 2;
		uint8_t *p = realloc(m->p, cap);
		if (!p)
			return -1;
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->len, data, len);
	m->len += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	simhash_fpfile *f = NULL, *g = NULL;
	simhash_fpfile_writer *w = NULL;
	simhash_error why = { 0 };
	const char *id, *id2;
	struct mem m = { 0 };
	size_t len, len2;
	uint64_t i, n;
	simhash_fp fp, fp2;

	if (simhash_fpfile_open_mem(data, size, &f, &why) != SIMHASH_OK) {
		if (!why.msg[0])
			FAIL("refused without a reason");
		return 0;
	}
	n = simhash_fpfile_count(f);
	if (simhash_fpfile_writer_new(simhash_fpfile_bits(f), simhash_fpfile_scheme(f), &w))
		FAIL("writer refused an accepted file's width or scheme");
	for (i = 0; i < n; i++) {
		if (simhash_fpfile_get(f, i, &fp))
			FAIL("get %llu failed", (unsigned long long)i);
		if (fp.bits < 128 && fp.w[1])
			FAIL("bits above the width");
		if (fp.bits == 32 && fp.w[0] >> 32)
			FAIL("bits above 32");
		if (simhash_fpfile_id(f, i, &id, &len)) {
			id = "";
			len = 0;
		} else if ((const uint8_t *)id < data || (const uint8_t *)id + len > data + size) {
			FAIL("id outside the input");
		}
		if (simhash_fpfile_writer_add(w, &fp, id, len))
			FAIL("writer refused a fingerprint");
	}
	if (simhash_fpfile_writer_finish(w, mem_write, &m))
		FAIL("write failed");
	if (simhash_fpfile_open_mem(m.p, m.len, &g, &why))
		FAIL("written file refused: %s", why.msg);
	if (simhash_fpfile_count(g) != n || strcmp(simhash_fpfile_scheme(g), simhash_fpfile_scheme(f)))
		FAIL("count or scheme changed");
	for (i = 0; i < n; i++) {
		simhash_fpfile_get(f, i, &fp);
		simhash_fpfile_get(g, i, &fp2);
		if (simhash_hamming(&fp, &fp2) != 0)
			FAIL("fingerprint %llu changed", (unsigned long long)i);
		if (!simhash_fpfile_id(f, i, &id, &len) &&
		    (simhash_fpfile_id(g, i, &id2, &len2) || len != len2 || memcmp(id, id2, len)))
			FAIL("id %llu changed", (unsigned long long)i);
	}
	simhash_fpfile_close(g);
	simhash_fpfile_close(f);
	simhash_fpfile_writer_free(w);
	free(m.p);
	return 0;
}
