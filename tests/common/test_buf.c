/* test_buf.c - the allocators of buf.c: sh_zalloc_written() gives zeros of
 * every size, also where malloc() hands back memory a previous owner wrote;
 * sh_alloc_big() aligns on 64 bytes and on 2 MiB from 1 MiB. */
#include <stdint.h>
#include "test.h"
#include "common/internal.h"

static int all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_zalloc_written_gives_zeros(void)
{
	static const size_t sizes[] = { 0, 1, 63, 4095, 4096, 4097, 42 * 1024, 256 * 1024,
					300 * 1024 + 5 };

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		unsigned char *dirty = malloc(sizes[i] + 1), *p;

		CHECK(dirty != NULL);
		if (!dirty)
			return;
		memset(dirty, 0xA5, sizes[i] + 1);
		free(dirty); /* the next malloc() of this size may get it back */
		p = sh_zalloc_written(sizes[i]);
		CHECK(p != NULL);
		if (p) {
			CHECK(all_zero(p, sizes[i]));
			if (sizes[i])
				p[sizes[i] - 1] = 1; /* writable to the end */
		}
		free(p);
	}
}

static void test_alloc_big_alignment(void)
{
	void *small = sh_alloc_big(100), *big = sh_alloc_big((size_t)3 << 20);

	CHECK(small && (uintptr_t)small % 64 == 0);
	CHECK(big && (uintptr_t)big % ((size_t)2 << 20) == 0);
	free(small);
	free(big);
}

TEST_MAIN("common/buf", TEST(test_zalloc_written_gives_zeros), TEST(test_alloc_big_alignment))
