/* outfile.c - output files (see outfile.h): standard output, or the
 * library's atomic simhash_outfile, whose rules (write through symbolic links,
 * in place for devices and FIFOs, keep the mode) the library documents.
 *
 * The one piece of process-wide state of the command lives here: the name of
 * the temporary file being written, so that an exit or a fatal signal can
 * remove it. A command writes at most one output file at a time; the handler
 * only calls unlink(), which is async-signal-safe.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "outfile.h"
#include "util.h"

static const char *volatile pending_tmp;

static void remove_pending(void)
{
	const char *tmp = pending_tmp;

	if (tmp)
		unlink(tmp);
}

static void on_signal(int sig)
{
	remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void watch_exits(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static int done;
	struct sigaction sa;
	size_t i;

	if (done)
		return;
	done = 1;
	atexit(remove_pending);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* The message for a failed open of path. */
static void open_failed(const char *path, simhash_err err, int os_err)
{
	if (err == SIMHASH_EINVAL && os_err == ENOENT)
		cli_err("%s: dangling symbolic link", path);
	else if (err == SIMHASH_EINVAL && os_err != EISDIR)
		cli_err("%s: not a regular file, character device or FIFO: not replacing it",
			path);
	else
		cli_err("%s: %s", path, os_err ? strerror(os_err) : simhash_strerror(err));
}

int outfile_open(struct outfile *o, const char *path)
{
	simhash_err err;
	simhash_error e;

	memset(o, 0, sizeof(*o));
	o->fd = STDOUT_FILENO;
	if (!path || !strcmp(path, "-"))
		return EXIT_OK;
	watch_exits();
	o->path = path;
	err = simhash_outfile_open(path, &o->file, &e);
	if (err) {
		open_failed(path, err, e.os_err);
		return EXIT_FAIL;
	}
	o->fd = -1;
	pending_tmp = simhash_outfile_temp(o->file);
	return EXIT_OK;
}

int outfile_write(struct outfile *o, const void *data, size_t n)
{
	const char *p = data;
	simhash_error e;
	ssize_t w;

	if (o->file) {
		if (simhash_outfile_write(o->file, data, n, &e)) {
			cli_err("%s: %s", o->path, strerror(e.os_err));
			return -1;
		}
		return 0;
	}
	while (n) {
		w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			cli_err("%s: %s", "standard output", strerror(errno));
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int outfile_commit(struct outfile *o)
{
	simhash_outfile *f = o->file;
	simhash_error e;

	if (!f)
		return EXIT_OK;
	o->file = NULL;
	pending_tmp = NULL;
	if (simhash_outfile_commit(f, &e)) {
		cli_err("%s: %s", o->path, strerror(e.os_err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

void outfile_abort(struct outfile *o)
{
	simhash_outfile *f = o->file;

	if (!f)
		return;
	o->file = NULL;
	pending_tmp = NULL;
	simhash_outfile_abort(f);
}
