/* test.h - a tiny test harness: CHECK() records a failure with file and line
 * and goes on; TEST_MAIN() runs the listed tests and prints
 * "NAME: N passed, N failed", exiting 1 on any failure. */
#ifndef TEST_H
#define TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int t_passed, t_failed, t_cur_failed;

/* A seeded random stream for property tests (splitmix64): the same seed
 * gives the same inputs, so a failure names a seed that reproduces it. */
static inline uint64_t *test_rng(void)
{
	static uint64_t state;
	return &state;
}

static inline void test_rnd_seed(uint64_t seed)
{
	*test_rng() = seed;
}

static inline uint64_t test_rnd(void)
{
	uint64_t z = (*test_rng() += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
			t_cur_failed++;                                               \
		}                                                                     \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                            \
	do {                                                                          \
		unsigned long long a_ = (unsigned long long)(a);                      \
		unsigned long long b_ = (unsigned long long)(b);                      \
		if (a_ != b_) {                                                       \
			fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu (%016llx != %016llx)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_, a_, b_);          \
			t_cur_failed++;                                               \
		}                                                                     \
	} while (0)

#define CHECK_STR(a, b)                                                               \
	do {                                                                          \
		const char *a_ = (a), *b_ = (b);                                      \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                              \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",  \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",       \
				b_ ? b_ : "(null)");                                  \
			t_cur_failed++;                                               \
		}                                                                     \
	} while (0)

typedef void (*test_fn)(void);
struct test_case {
	const char *name;
	test_fn fn;
};
#define TEST(name) {#name, name}

static inline int test_run(const char *suite, const struct test_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		t_cur_failed = 0;
		cases[i].fn();
		if (t_cur_failed) {
			fprintf(stderr, "FAIL %s/%s\n", suite, cases[i].name);
			t_failed++;
		} else {
			t_passed++;
		}
	}
	printf("%s: %d passed, %d failed\n", suite, t_passed, t_failed);
	return t_failed ? 1 : 0;
}

#define TEST_MAIN(suite, ...)                                                        \
	int main(void)                                                                \
	{                                                                             \
		static const struct test_case cases_[] = {__VA_ARGS__};               \
		return test_run(suite, cases_, sizeof cases_ / sizeof cases_[0]);     \
	}

#endif
