/* outfile.c - atomic output files (see outfile.h).
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

static char *volatile pending_tmp;

static void remove_pending(void)
{
	char *tmp = pending_tmp;

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

int outfile_open(struct outfile *o, const char *path)
{
	size_t len;
	mode_t mask;

	memset(o, 0, sizeof(*o));
	o->fd = STDOUT_FILENO;
	if (!path || !strcmp(path, "-"))
		return EXIT_OK;
	watch_exits();
	o->path = path;
	len = strlen(path);
	o->tmp = xmalloc(len + 8);
	memcpy(o->tmp, path, len);
	memcpy(o->tmp + len, ".XXXXXX", 8);
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0) {
		cli_err("%s: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return EXIT_FAIL;
	}
	pending_tmp = o->tmp;
	/* mkstemp makes the file 0600; give it the mode a plain create would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, 0666 & ~mask)) {
		/* keep 0600 rather than fail */
	}
	return EXIT_OK;
}

int outfile_write(struct outfile *o, const void *data, size_t n)
{
	const char *p = data;
	ssize_t w;

	while (n) {
		w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			cli_err("%s: %s", o->path ? o->path : "standard output", strerror(errno));
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fail(struct outfile *o, const char *what)
{
	cli_err("%s: %s", what, strerror(errno));
	outfile_abort(o);
	return EXIT_FAIL;
}

int outfile_commit(struct outfile *o)
{
	int fd = o->fd;

	if (!o->tmp)
		return EXIT_OK;
	o->fd = -1;
	if (fsync(fd)) {
		close(fd);
		return fail(o, o->path);
	}
	if (close(fd))
		return fail(o, o->path);
	if (rename(o->tmp, o->path))
		return fail(o, o->path);
	pending_tmp = NULL;
	free(o->tmp);
	o->tmp = NULL;
	return EXIT_OK;
}

void outfile_abort(struct outfile *o)
{
	if (!o->tmp)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	unlink(o->tmp);
	pending_tmp = NULL;
	free(o->tmp);
	o->tmp = NULL;
}
