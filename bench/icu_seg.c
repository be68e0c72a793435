/* icu_seg.c - the segmenter's own speed, the baseline of `--features word
 * --tokenizer icu`: ICU's word break iterator (root locale, so Chinese goes
 * through its dictionary, as in lib/normalize/words.c) over each FILE, read
 * as baseline.c reads it, every boundary visited once.
 *
 * Usage: icu_seg FILE...
 * Prints the number of bytes and of boundaries. One iterator for the whole
 * run, re-pointed at each text with ubrk_setUText (what a ctx does).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <unicode/ubrk.h>
#include <unicode/utext.h>

/* Reads path whole into *buf (grown as needed); returns its length or -1. */
static long read_all(const char *path, char **buf, size_t *cap)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (;;) {
		if (len == *cap) {
			*cap *= 2;
			*buf = realloc(*buf, *cap);
			if (!*buf)
				n = -1;
		}
		n = *buf ? read(fd, *buf + len, *cap - len) : -1;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return n < 0 ? -1 : (long)len;
}

int main(int argc, char **argv)
{
	UErrorCode st = U_ZERO_ERROR;
	UBreakIterator *bi = ubrk_open(UBRK_WORD, "", NULL, 0, &st);
	UText *ut = NULL;
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	unsigned long long bytes = 0, n_breaks = 0;
	long len;
	int i;

	if (U_FAILURE(st) || !buf) {
		fprintf(stderr, "icu_seg: %s\n", u_errorName(st));
		return 1;
	}
	for (i = 1; i < argc; i++) {
		len = read_all(argv[i], &buf, &cap);
		if (len < 0) {
			perror(argv[i]);
			return 1;
		}
		ut = utext_openUTF8(ut, buf, len, &st);
		ubrk_setUText(bi, ut, &st);
		if (U_FAILURE(st)) {
			fprintf(stderr, "icu_seg: %s: %s\n", argv[i], u_errorName(st));
			return 1;
		}
		while (ubrk_next(bi) != UBRK_DONE)
			n_breaks++;
		bytes += (unsigned long long)len;
	}
	printf("%llu %llu\n", bytes, n_breaks);
	utext_close(ut);
	ubrk_close(bi);
	free(buf);
	return 0;
}
