/* index_file.c - fuzz target for simhash_index_open on arbitrary bytes.
 *
 * The input is written to a temporary file and opened. The target aborts
 * unless:
 *  1. open either fails with SIMHASH_ECORRUPT or SIMHASH_EVERSION and a
 *     non-empty reason, or succeeds;
 *  2. on an opened index, queries at every k up to max_dist return matches
 *     sorted by distance then id, each within k (a damaged body may give
 *     wrong answers, never a read outside the file: ASan watches);
 *  3. saving it and opening the copy gives the same answers (round trip).
 * The corpus holds small valid indexes of each layout and damaged copies. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simhash.h"

#define FAIL(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "index_file: invariant broken at %s:%d: ", __FILE__,  \
			__LINE__);                                                    \
		fprintf(stderr, __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                  \
		abort();                                                              \
	} while (0)

static void check_sorted(const simhash_matches *m, unsigned k)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].dist > k)
			FAIL("match at distance %u > k %u", m->v[i].dist, k);
		if (i && (m->v[i - 1].dist > m->v[i].dist ||
			  (m->v[i - 1].dist == m->v[i].dist && m->v[i - 1].id > m->v[i].id)))
			FAIL("matches out of order");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/simhash-fuzz-index-XXXXXX", copy[64];
	simhash_index *ix = NULL, *ix2 = NULL;
	simhash_matches a = {0}, b = {0};
	simhash_error why;
	simhash_err err;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	err = simhash_index_open(path, &ix, &why);
	if (err) {
		if ((err != SIMHASH_ECORRUPT && err != SIMHASH_EVERSION) || !why.msg[0] ||
		    why.code != err)
			FAIL("open gave %d (%s)", (int)err, why.msg);
		goto out;
	}
	snprintf(copy, sizeof copy, "%s.copy", path);
	if (simhash_index_save(ix, copy, NULL) != SIMHASH_OK || simhash_index_open(copy, &ix2, NULL) != SIMHASH_OK)
		FAIL("cannot save and reopen an opened index");
	for (unsigned k = 0; k <= simhash_index_max_dist(ix); k++) {
		simhash_fp q = {{0, 0}, simhash_index_bits(ix)};
		for (int i = 0; i < 4; i++) {
			q.w[0] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + k);
			if (q.bits == 128)
				q.w[1] = q.w[0] >> 7;
			if (simhash_index_query(ix, &q, k, &a) || simhash_index_query(ix2, &q, k, &b))
				FAIL("query failed");
			check_sorted(&a, k);
			if (a.n != b.n)
				FAIL("the saved copy answers %zu matches, the original %zu", b.n, a.n);
		}
	}
	unlink(copy);
out:
	simhash_matches_free(&a);
	simhash_matches_free(&b);
	simhash_index_free(ix);
	simhash_index_free(ix2);
	unlink(path);
	return 0;
}
