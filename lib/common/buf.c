/* buf.c - growable scratch buffers: a handle keeps its buffers between calls so
 * the hot loops never allocate once the buffers have grown to the largest text. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"

void *sh_alloc_big(size_t len)
{
	size_t huge = (size_t)1 << 21;
	void *p;

	if (len > SIZE_MAX - huge)
		return NULL;
	if (len < huge / 2) /* a cache line at least, as the big ones */
		return aligned_alloc(64, len ? (len + 63) & ~(size_t)63 : 64);
	p = aligned_alloc(huge, (len + huge - 1) & ~(huge - 1));
#ifdef MADV_HUGEPAGE
	if (p)
		(void)madvise(p, (len + huge - 1) & ~(huge - 1), MADV_HUGEPAGE); /* advice only */
#endif
	return p;
}

void *sh_zalloc_written(size_t len)
{
	void *p = malloc(len ? len : 1);

	/* The barrier keeps the compiler from making this calloc() again. */
	__asm__ volatile("" : "+r"(p));
	if (!p)
		return NULL;
#ifdef MADV_POPULATE_WRITE
	{
		/* One call maps the whole pages, not a page fault per 4 KiB. */
		long page = sysconf(_SC_PAGESIZE);
		uintptr_t from, to;

		if (page > 0) {
			from = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
			to = ((uintptr_t)p + len) & ~((uintptr_t)page - 1);
			if (to > from)
				(void)madvise((void *)from, to - from, MADV_POPULATE_WRITE); /* advice */
		}
	}
#endif
	memset(p, 0, len);
	return p;
}

/* The capacity b grows to for n bytes: doubled from its own (256 at
 * first) until n fits; 0 if that overflows. */
static size_t grown(const sh_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;

	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return 0;
		cap *= 2;
	}
	return cap;
}

simhash_err sh_buf_reserve(sh_buf *b, size_t n)
{
	size_t cap;
	void *p;

	if (n <= b->cap)
		return SIMHASH_OK;
	cap = grown(b, n);
	p = cap ? realloc(b->p, cap) : NULL;
	if (!p)
		return SIMHASH_ENOMEM;
	b->p = p;
	b->cap = cap;
	return SIMHASH_OK;
}

simhash_err sh_buf_reserve_big(sh_buf *b, size_t n, size_t keep)
{
	size_t cap;
	void *p;

	if (n <= b->cap)
		return SIMHASH_OK;
	cap = grown(b, n);
	if (!cap)
		return SIMHASH_ENOMEM;
	if (cap < ((size_t)4 << 20))
		return sh_buf_reserve(b, n);
	if (keep > b->cap)
		keep = b->cap;
	/* realloc() would keep neither the alignment nor the advice */
	p = sh_alloc_big(cap);
	if (!p)
		return SIMHASH_ENOMEM;
	if (keep)
		memcpy(p, b->p, keep);
	free(b->p);
	b->p = p;
	b->cap = cap;
	return SIMHASH_OK;
}

void sh_buf_free(sh_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->cap = 0;
}
