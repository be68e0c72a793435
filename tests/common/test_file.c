/* test_file.c - lib/common/file.c's error detail (simhash.h, convention 2):
 * a failed read or output file fills the caller's simhash_error with the
 * system's errno and its text, a refused path says why, and a success leaves
 * the detail as it was. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "test.h"
#include "simhash.h"

static char dir[64];

static void test_read_file_reports_the_errno(void)
{
	char path[128], *buf = NULL;
	size_t len = 0, cap = 0;
	simhash_error e;

	snprintf(path, sizeof path, "%s/missing", dir);
	memset(&e, 0xff, sizeof e);
	CHECK(simhash_read_file(path, &buf, &len, &cap, &e) == SIMHASH_EIO);
	CHECK(e.code == SIMHASH_EIO && e.os_err == ENOENT && e.line == 0 && e.offset == 0);
	CHECK_STR(e.msg, "no such file or directory");
	CHECK(simhash_read_file(dir, &buf, &len, &cap, &e) == SIMHASH_EIO);
	CHECK(e.os_err == EISDIR);
	CHECK(simhash_read_file(path, &buf, &len, &cap, NULL) == SIMHASH_EIO); /* no detail */
	CHECK(simhash_read_file(NULL, &buf, &len, &cap, &e) == SIMHASH_EINVAL);
	CHECK(e.code == SIMHASH_EINVAL && e.os_err == 0);
	CHECK_STR(e.msg, simhash_strerror(SIMHASH_EINVAL));
	free(buf);
}

static void test_outfile_says_why_a_path_is_refused(void)
{
	char path[128], link[128], *buf = NULL;
	size_t len = 0, cap = 0;
	simhash_outfile *f = NULL;
	simhash_error e;

	CHECK(simhash_outfile_open(dir, &f, &e) == SIMHASH_EINVAL);
	CHECK(f == NULL && e.code == SIMHASH_EINVAL && e.os_err == EISDIR);
	CHECK_STR(e.msg, "is a directory");
	snprintf(link, sizeof link, "%s/dangling", dir);
	snprintf(path, sizeof path, "%s/nowhere/x", dir);
	CHECK(symlink(path, link) == 0);
	CHECK(simhash_outfile_open(link, &f, &e) == SIMHASH_EINVAL);
	CHECK(e.os_err == ENOENT);
	CHECK_STR(e.msg, "dangling symbolic link");
	CHECK(simhash_outfile_open(path, &f, &e) == SIMHASH_EIO); /* no such folder */
	CHECK(e.os_err == ENOENT);
	unlink(link);
	/* a success leaves the detail as it was */
	snprintf(path, sizeof path, "%s/out", dir);
	strcpy(e.msg, "untouched");
	CHECK(simhash_outfile_open(path, &f, &e) == SIMHASH_OK);
	CHECK(f && simhash_outfile_write(f, "abc", 3, &e) == SIMHASH_OK);
	CHECK(f && simhash_outfile_commit(f, &e) == SIMHASH_OK);
	CHECK_STR(e.msg, "untouched");
	CHECK(simhash_read_file(path, &buf, &len, &cap, &e) == SIMHASH_OK);
	CHECK(len == 3 && memcmp(buf, "abc", 3) == 0);
	CHECK_STR(e.msg, "untouched");
	unlink(path);
	free(buf);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST(test_read_file_reports_the_errno),
		TEST(test_outfile_says_why_a_path_is_refused),
	};
	int rc;

	snprintf(dir, sizeof dir, "/tmp/test_file.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	rc = test_run("file", cases, sizeof cases / sizeof cases[0]);
	rmdir(dir);
	return rc;
}
