/* test_fpfile.c - the binary fingerprint file: round trips at every width,
 * and refusal of a wrong magic, a newer version, a damaged header, a
 * truncated or extended body, with the reason given. */
#include <stdint.h>
#include "simhash.h"
#include "test.h"

struct mem {
	unsigned char *p;
	size_t len, cap;
};

static int mem_write(const void *data, size_t len, void *arg)
{
	struct mem *m = arg;

	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->p = realloc(m->p, m->cap);
		if (!m->p)
			return -1;
	}
	memcpy(m->p + m->len, data, len);
	m->len += len;
	return 0;
}

static uint64_t rng_state = 42;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Writes n random fingerprints of `bits` with ids "id<i>" (id 3: empty, id 5
 * with a tab and 4-byte UTF-8) into m; returns the fingerprints. */
static simhash_fp *make_file(unsigned bits, size_t n, const char *scheme, struct mem *m)
{
	simhash_fpfile_writer *w;
	simhash_fp *fps = calloc(n + 1, sizeof(*fps));
	char id[64];

	CHECK(simhash_fpfile_writer_new(bits, scheme, &w) == SIMHASH_OK);
	for (size_t i = 0; i < n; i++) {
		fps[i].bits = bits;
		fps[i].w[0] = bits == 32 ? rnd() & 0xffffffffu : rnd();
		fps[i].w[1] = bits == 128 ? rnd() : 0;
		if (i == 3)
			id[0] = 0;
		else if (i == 5)
			snprintf(id, sizeof(id), "a\tb\xf0\x9f\x98\x80");
		else
			snprintf(id, sizeof(id), "id%zu", i);
		CHECK(simhash_fpfile_writer_add(w, &fps[i], id, strlen(id)) == SIMHASH_OK);
	}
	CHECK(simhash_fpfile_writer_finish(w, mem_write, m) == SIMHASH_OK);
	simhash_fpfile_writer_free(w);
	return fps;
}

static void test_round_trip_every_width(void)
{
	static const unsigned widths[] = { 32, 64, 128 };

	for (size_t wi = 0; wi < 3; wi++)
		for (size_t n = 0; n < 40; n += 13) {
			struct mem m = { 0 };
			simhash_fp *fps = make_file(widths[wi], n, "v1/test", &m);
			simhash_fpfile *f = NULL;
			const char *id;
			size_t len;
			char want[64];

			CHECK(simhash_fpfile_open_mem(m.p, m.len, &f, NULL) == SIMHASH_OK);
			if (!f)
				continue;
			CHECK(simhash_fpfile_verify(f) == SIMHASH_OK);
			CHECK_EQ_U64(simhash_fpfile_bits(f), widths[wi]);
			CHECK_EQ_U64(simhash_fpfile_count(f), n);
			CHECK_STR(simhash_fpfile_scheme(f), "v1/test");
			for (size_t i = 0; i < n; i++) {
				simhash_fp fp;
				const uint64_t *words = simhash_fpfile_words(f);
				unsigned nw = widths[wi] == 128 ? 2 : 1;

				CHECK(simhash_fpfile_get(f, i, &fp) == SIMHASH_OK);
				CHECK(simhash_hamming(&fp, &fps[i]) == 0);
				CHECK_EQ_U64(words[i * nw], fps[i].w[0]);
				CHECK(simhash_fpfile_id(f, i, &id, &len) == SIMHASH_OK);
				if (i == 3)
					want[0] = 0;
				else if (i == 5)
					snprintf(want, sizeof(want), "a\tb\xf0\x9f\x98\x80");
				else
					snprintf(want, sizeof(want), "id%zu", i);
				CHECK(len == strlen(want) && !memcmp(id, want, len));
			}
			CHECK(simhash_fpfile_get(f, n, &(simhash_fp){ 0 }) == SIMHASH_EINVAL);
			simhash_fpfile_close(f);
			free(fps);
			free(m.p);
		}
}

/* Opens len bytes of m; *why gets the message of a failure. */
static simhash_err open_why(struct mem *m, size_t len, const char **why)
{
	static simhash_error e;
	simhash_fpfile *f = NULL;
	simhash_err err = simhash_fpfile_open_mem(m->p, len, &f, &e);

	if (err)
		*why = e.msg;

	simhash_fpfile_close(f);
	return err;
}

static void test_bad_files_are_refused_with_a_reason(void)
{
	struct mem m = { 0 };
	simhash_fp *fps = make_file(64, 10, "", &m);
	const char *why = NULL;

	CHECK(open_why(&m, m.len, &why) == SIMHASH_OK);
	/* truncated anywhere: header or body */
	CHECK(open_why(&m, m.len - 1, &why) == SIMHASH_ECORRUPT);
	CHECK_STR(why, "truncated fingerprint file");
	CHECK(open_why(&m, 40, &why) == SIMHASH_ECORRUPT);
	CHECK_STR(why, "truncated fingerprint file (header cut short)");
	CHECK(open_why(&m, 0, &why) == SIMHASH_ECORRUPT);
	/* a newer version */
	m.p[8] = 2;
	CHECK(open_why(&m, m.len, &why) == SIMHASH_EVERSION);
	CHECK(strstr(why, "newer") != NULL);
	m.p[8] = 1;
	/* a damaged header byte (the count) */
	m.p[24] ^= 1;
	CHECK(open_why(&m, m.len, &why) == SIMHASH_ECORRUPT);
	CHECK_STR(why, "fingerprint file header checksum mismatch");
	m.p[24] ^= 1;
	/* a damaged body byte: open trusts the header, verify finds it */
	m.p[m.len - 2] ^= 1;
	{
		simhash_fpfile *f = NULL;
		CHECK(simhash_fpfile_open_mem(m.p, m.len, &f, NULL) == SIMHASH_OK);
		CHECK(simhash_fpfile_verify(f) == SIMHASH_ECORRUPT);
		simhash_fpfile_close(f);
	}
	/* a wrong magic */
	m.p[1] = 'X';
	CHECK(open_why(&m, m.len, &why) == SIMHASH_ECORRUPT);
	CHECK_STR(why, "not a simhash fingerprint file (bad magic)");
	free(fps);
	free(m.p);
}

static void test_writer_refuses_other_widths(void)
{
	simhash_fpfile_writer *w;
	simhash_fp fp = { { 1, 0 }, 32 };

	CHECK(simhash_fpfile_writer_new(48, NULL, &w) == SIMHASH_EINVAL);
	CHECK(simhash_fpfile_writer_new(64, NULL, &w) == SIMHASH_OK);
	/* a width mismatch is SIMHASH_ESCHEME everywhere (simhash.h, convention 4) */
	CHECK(simhash_fpfile_writer_add(w, &fp, "x", 1) == SIMHASH_ESCHEME);
	simhash_fpfile_writer_free(w);
	simhash_fpfile_writer_free(NULL);
	simhash_fpfile_close(NULL);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST(test_round_trip_every_width),
		TEST(test_bad_files_are_refused_with_a_reason),
		TEST(test_writer_refuses_other_widths),
	};
	return test_run("fpfile", cases, sizeof(cases) / sizeof(cases[0]));
}
