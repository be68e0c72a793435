/* store_path.h - a store test's scratch folder, made under /tmp on first use
 * with the name STORE_PATH_PREFIX.XXXXXX (define it before the include):
 * fresh_path(NAME) sets `path` to DIR/NAME with NAME's data, lock and saved
 * index files gone; cleanup() removes the folder and all in it. */
#ifndef STORE_PATH_H
#define STORE_PATH_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64];
static char path[160];

static void fresh_path(const char *name)
{
	char p[200];

	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX", STORE_PATH_PREFIX);
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	unlink(path);
	snprintf(p, sizeof p, "%s-lock", path);
	unlink(p);
	snprintf(p, sizeof p, "%s-index", path);
	unlink(p);
}

static void cleanup(void)
{
	char cmd[128];

	if (dir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
}
#endif
