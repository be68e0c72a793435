/* same_text.h - whether two normalized texts are the same to the byte:
 * characters, offsets and classes. */
#ifndef SAME_TEXT_H
#define SAME_TEXT_H

#include <string.h>
#include "common/internal.h"

static inline int same_text(const sh_text *a, const sh_text *b)
{
	return a->len == b->len && a->n_chars == b->n_chars && !memcmp(a->s, b->s, a->len) &&
	       !memcmp(a->off, b->off, (a->n_chars + 1) * sizeof *a->off) &&
	       !memcmp(a->cls, b->cls, a->n_chars);
}

#endif
