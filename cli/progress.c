/* progress.c - the progress line (see progress.h). */
#include <stdio.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "progress.h"
#include "util.h"

#define LARGE_BYTES ((uint64_t)16 << 20)
#define LARGE_DOCS 10000

int progress_may_draw(int out_fd, int err_fd)
{
	struct stat out, err;

	if (!isatty(err_fd))
		return 0;
	if (!isatty(out_fd))
		return 1;
	/* Output lines would land after a drawn line's text: draw only when
	 * standard output is another terminal. */
	if (fstat(out_fd, &out) || fstat(err_fd, &err))
		return 0;
	return out.st_rdev != err.st_rdev;
}

void progress_init(struct progress *p, uint64_t total_bytes)
{
	p->tty = progress_may_draw(STDOUT_FILENO, STDERR_FILENO);
	p->shown = 0;
	p->total_bytes = total_bytes;
	p->bytes = 0;
	p->docs = 0;
	p->start = p->tty ? cli_now() : 0;
	p->last = p->start;
}

void progress_init_paths(struct progress *p, char *const *paths, size_t n)
{
	/* The sizes serve the drawn line only: without it, a stat() per file
	 * would cost a run over many small files about a tenth of its time. */
	progress_init(p, 0);
	if (p->tty)
		p->total_bytes = cli_total_size(paths, n);
}

void progress_add(struct progress *p, uint64_t bytes, uint64_t docs)
{
	double t, mb, rate;
	char line[128];
	int n;

	p->bytes += bytes;
	p->docs += docs;
	if (!p->tty)
		return;
	if (p->total_bytes <= LARGE_BYTES && p->bytes <= LARGE_BYTES && p->docs <= LARGE_DOCS)
		return;
	t = cli_now();
	if (t - p->last < 0.1)
		return;
	p->last = t;
	mb = (double)p->bytes / 1e6;
	rate = t > p->start ? mb / (t - p->start) : 0;
	if (p->total_bytes)
		n = snprintf(line, sizeof(line), "\r%3.0f%%  %llu docs  %.1f MB  %.1f MB/s\033[K",
			     100.0 * (double)p->bytes / (double)p->total_bytes,
			     (unsigned long long)p->docs, mb, rate);
	else
		n = snprintf(line, sizeof(line), "\r%llu docs  %.1f MB  %.1f MB/s\033[K",
			     (unsigned long long)p->docs, mb, rate);
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) > 0)
		p->shown = 1;
}

void progress_stage(struct progress *p, const char *text)
{
	char line[160];
	int n;

	if (!p->tty ||
	    (p->total_bytes <= LARGE_BYTES && p->bytes <= LARGE_BYTES && p->docs <= LARGE_DOCS))
		return;
	n = snprintf(line, sizeof(line), "\r%s\033[K", text);
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) > 0)
		p->shown = 1;
}

void progress_end(struct progress *p)
{
	if (p->shown && write(STDERR_FILENO, "\r\033[K", 4) < 0) {
		/* the terminal is gone; nothing to erase */
	}
	p->shown = 0;
}
