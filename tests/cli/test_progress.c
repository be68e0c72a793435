/* test_progress.c - the progress line is drawn only where it cannot stand in
 * front of output: on a terminal, and not the terminal standard output is
 * written to (cli/progress.c). Uses pseudo-terminals; skips without them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "progress.h"
#include "test.h"

/* Opens a new pseudo-terminal; *slave gets its terminal side. -1 if none. */
static int open_pty(int *slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	char *name;

	if (m < 0 || grantpt(m) || unlockpt(m) || !(name = ptsname(m))) {
		if (m >= 0)
			close(m);
		return -1;
	}
	*slave = open(name, O_RDWR | O_NOCTTY);
	if (*slave < 0) {
		close(m);
		return -1;
	}
	return m;
}

static void test_not_drawn_when_stdout_is_the_same_terminal(void)
{
	int sa, sb, sa2, ma = open_pty(&sa), mb = open_pty(&sb), p[2];

	if (ma < 0 || mb < 0) {
		printf("no pseudo-terminals: skipped\n");
		return;
	}
	sa2 = open(ptsname(ma), O_RDWR | O_NOCTTY); /* the same terminal, another fd */
	CHECK(pipe(p) == 0);
	CHECK(progress_may_draw(sa, sa) == 0);
	CHECK(progress_may_draw(sa2, sa) == 0);
	CHECK(progress_may_draw(sb, sa) == 1);  /* output on another terminal */
	CHECK(progress_may_draw(p[1], sa) == 1); /* output to a pipe or file */
	CHECK(progress_may_draw(sa, p[1]) == 0); /* stderr not a terminal */
	close(p[0]);
	close(p[1]);
	close(sa2);
	close(sa);
	close(sb);
	close(ma);
	close(mb);
}

/* A stage (index build after its reading) is drawn under the counts' rules:
 * not for a small input, and erased by progress_end(). Standard error is
 * pointed at a pseudo-terminal and standard output at a pipe meanwhile. */
static void test_stage_drawn_for_large_inputs_only(void)
{
	int s, m = open_pty(&s), p[2], out, err;
	struct progress pr;
	char got[256];
	ssize_t n;
	static const char want[] = "\rbuilding\033[K\r\033[K";

	if (m < 0) {
		printf("no pseudo-terminals: skipped\n");
		return;
	}
	CHECK(pipe(p) == 0);
	out = dup(STDOUT_FILENO), err = dup(STDERR_FILENO);
	fflush(stdout);
	dup2(p[1], STDOUT_FILENO), dup2(s, STDERR_FILENO);
	progress_init(&pr, 0);
	progress_stage(&pr, "small"); /* no bytes or documents yet */
	CHECK(pr.shown == 0);
	pr.docs = 20000; /* large now (progress_add would also draw the count) */
	progress_stage(&pr, "building");
	CHECK(pr.shown == 1);
	progress_end(&pr);
	dup2(out, STDOUT_FILENO), dup2(err, STDERR_FILENO);
	close(out), close(err);
	/* the terminal hands the bytes on asynchronously: wait for them (up to
	 * 10 s, for a loaded machine), then for anything more (0.2 s) */
	for (n = 0;;) {
		struct pollfd pf = {m, POLLIN, 0};
		ssize_t r;
		if (poll(&pf, 1, n < (ssize_t)sizeof want - 1 ? 10000 : 200) <= 0)
			break;
		r = read(m, got + n, sizeof got - 1 - (size_t)n);
		if (r <= 0)
			break;
		n += r;
	}
	CHECK(n == (ssize_t)sizeof want - 1);
	CHECK(n > 0 && memcmp(got, want, sizeof want - 1) == 0);
	close(p[0]), close(p[1]), close(s), close(m);
}

TEST_MAIN("progress", TEST(test_not_drawn_when_stdout_is_the_same_terminal),
	  TEST(test_stage_drawn_for_large_inputs_only))
