/* serve_exec.c - `simhash serve`: runs the HTTP service, which is its own
 * program, simhash-serve (cmd_serve.c and server/), the way git runs
 * git-remote-https.
 *
 * Why a second program: the service links libmicrohttpd, and with it the
 * GnuTLS chain (gnutls, nettle, p11-kit, idn2...), whose loading, relocation
 * and constructors cost every run about 2 ms of CPU. A `simhash fingerprint`
 * of one small file pays that for nothing; the command links none of it.
 *
 * Invariants:
 *  1. The service replaces this process (execv): same pid, so SIGTERM and
 *     SIGINT sent to `simhash serve` reach the server and stop it gracefully;
 *     its options, messages and exit statuses are the service's own.
 *  2. simhash-serve is looked for relative to this program's own path, never
 *     on PATH: next to it (the build tree, or an install into one bin/), then
 *     in ../libexec/simhash/ (what `make install` does). Where neither is
 *     there, one line names both paths tried, and the exit status is 1.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "util.h"

#define SERVE_PROG "simhash-serve"

/* The folder of the running program into dir (size PATH_MAX), or -1. */
static int self_dir(char *dir)
{
	ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

int cmd_serve_exec(int argc, char **argv)
{
	static const char *const rel[] = { "/" SERVE_PROG, "/../libexec/simhash/" SERVE_PROG };
	char dir[PATH_MAX], path[2][PATH_MAX + 64];
	int i, err = ENOENT;

	(void)argc;
	if (self_dir(dir)) {
		cli_err("serve: cannot find " SERVE_PROG ": /proc/self/exe: %s", strerror(errno));
		return EXIT_FAIL;
	}
	fflush(stdout);
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s%s", dir, rel[i]);
		argv[0] = path[i];
		execv(path[i], argv);
		if (errno != ENOENT)
			err = errno;
	}
	cli_err("serve: cannot run %s or %s: %s (the HTTP service is a program of its own)",
		path[0], path[1], strerror(err));
	return EXIT_FAIL;
}
