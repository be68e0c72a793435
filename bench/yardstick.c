/* yardstick.c - the baseline of the pairs benchmarks: read a text file of
 * `HEX<TAB>ID` lines, parse every fingerprint and radix-sort them once (LSD,
 * 16 bits a pass, one thread). `simhash pairs` must find all pairs within k
 * in a small multiple of this time.
 *
 * Usage: yardstick FILE    prints "N SECONDS" (wall clock, read to sorted)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct stat st;
	char *buf, *p, *end;
	uint64_t *a, *b, *t, sum = 0;
	size_t n = 0, cap, i, *count;
	double t0 = now();
	ssize_t r;
	size_t got = 0;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st))
		return 2;
	buf = malloc((size_t)st.st_size + 1);
	while ((r = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)r;
	close(fd);
	cap = got / 17 + 1;
	a = malloc(cap * sizeof(*a));
	b = malloc(cap * sizeof(*b));
	count = malloc(65536 * sizeof(*count));
	for (p = buf, end = buf + got; p < end && n < cap; n++) {
		uint64_t v = 0;
		for (int j = 0; j < 16; j++) {
			unsigned c = (unsigned char)p[j];
			v = v << 4 | (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		}
		a[n] = v;
		p = memchr(p + 16, '\n', (size_t)(end - p - 16));
		if (!p)
			break;
		p++;
	}
	if (p == NULL)
		n++;
	for (unsigned pass = 0; pass < 4; pass++) {
		size_t s = 0, c;
		memset(count, 0, 65536 * sizeof(*count));
		for (i = 0; i < n; i++)
			count[a[i] >> (16 * pass) & 0xffff]++;
		for (i = 0; i < 65536; i++) {
			c = count[i];
			count[i] = s;
			s += c;
		}
		for (i = 0; i < n; i++)
			b[count[a[i] >> (16 * pass) & 0xffff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 1; i < n; i++)
		sum += a[i] < a[i - 1]; /* 0: sorted; printed so nothing is optimised away */
	printf("%zu %.3f %llu\n", n, now() - t0, (unsigned long long)sum);
	return 0;
}
