/* driver.c - replays a fuzz corpus through LLVMFuzzerTestOneInput without
 * libFuzzer, so `make check` runs every input a fuzzer ever found (after
 * zstd's tests/fuzz/regression_driver.c).
 *
 * Arguments are files or directories; a directory contributes its files and
 * the files of its subdirectories (one level down), in name order, skipping
 * names that start with '.'. Each file is read whole and passed once. A target
 * reports a bad input by crashing (abort, sanitizer), so the last line,
 * "fuzz NAME: N passed, 0 failed", is only printed when every input passed.
 * Exit 0 on success, 1 if an argument cannot be read.
 *
 * Built with libFuzzer (-DSIMHASH_LIBFUZZER), libFuzzer brings its own main. */
#ifndef SIMHASH_LIBFUZZER

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole of path into a fresh buffer (never NULL on success, even
 * for an empty file, as libFuzzer never passes NULL). */
static int read_file(const char *path, uint8_t **out, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL, *tmp;
	size_t len = 0, cap = 0, n;

	if (!f)
		return -1;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			tmp = realloc(buf, cap);
			if (!tmp)
				goto out_free_buf;
			buf = tmp;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f))
		goto out_free_buf;
	fclose(f);
	*out = buf;
	*out_len = len;
	return 0;

out_free_buf:
	free(buf);
	fclose(f);
	return -1;
}

static int run_file(const char *path, size_t *n_run)
{
	uint8_t *data;
	size_t len;

	if (read_file(path, &data, &len) != 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno ? errno : EIO));
		return -1;
	}
	/* Named before the call so that a crash shows which input did it. */
	fprintf(stderr, "running %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	(*n_run)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs path: a file, or a directory walked down to `depth` more levels. */
static int run_path(const char *path, int depth, size_t *n_run)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **names = NULL, **tmp, *sub;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path, n_run);
	if (depth < 0)
		return 0;
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(names, cap * sizeof *names);
			if (!tmp)
				goto out_nomem;
			names = tmp;
		}
		sub = malloc(strlen(path) + strlen(e->d_name) + 2);
		if (!sub)
			goto out_nomem;
		sprintf(sub, "%s/%s", path, e->d_name);
		names[n++] = sub;
	}
	closedir(d);
	d = NULL;
	qsort(names, n, sizeof *names, cmp_names);
	for (i = 0; i < n && rc == 0; i++)
		rc = run_path(names[i], depth - 1, n_run);
	goto out_free_names;

out_nomem:
	fprintf(stderr, "fuzz: %s: out of memory\n", path);
	rc = -1;
	if (d)
		closedir(d);
out_free_names:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	size_t n_run = 0;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", name);
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (run_path(argv[i], 1, &n_run) != 0)
			return 1;
	printf("fuzz %s: %zu passed, 0 failed\n", name, n_run);
	return 0;
}

#endif /* SIMHASH_LIBFUZZER */
