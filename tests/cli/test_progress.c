/* test_progress.c - the progress line is drawn only where it cannot stand in
 * front of output: on a terminal, and not the terminal standard output is
 * written to (cli/progress.c). Uses pseudo-terminals; skips without them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
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

TEST_MAIN("progress", TEST(test_not_drawn_when_stdout_is_the_same_terminal))
