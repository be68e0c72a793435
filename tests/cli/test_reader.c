/* test_reader.c - the line chunker of the command line tool (cli/reader.c):
 * the --lines rules (CR before LF removed, empty lines kept, last line without
 * LF kept with its CR, empty input has no lines), chunk limits and numbering,
 * and lines larger than every buffer, from a file and through a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reader.h"
#include "test.h"

/* Writes data to a temporary file and returns its path (static buffer). */
static const char *temp_file(const char *data, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_reader.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
	return path;
}

/* Reads every line of path into lines (joined with '|') and returns the count. */
static size_t all_lines(const char *path, size_t max_bytes, size_t max_lines, char *out,
			size_t cap, size_t *n_chunks)
{
	struct sbuf buf = { 0 };
	struct reader r;
	struct chunk c;
	size_t n = 0, pos, len, used = 0;
	uint64_t expect_line = 1;
	const char *s;

	*n_chunks = 0;
	out[0] = '\0';
	CHECK(reader_open(&r, path) == 0);
	while (reader_next(&r, max_bytes, max_lines, &buf, &c) == 1) {
		size_t in_chunk = 0;

		CHECK_EQ_U64(c.first_line, expect_line);
		CHECK(c.n_lines >= 1 && c.n_lines <= max_lines);
		pos = 0;
		while (chunk_next_line(&c, &pos, &s, &len)) {
			used += (size_t)snprintf(out + used, cap - used, "%s%.*s", n ? "|" : "",
						 (int)len, s);
			n++;
			in_chunk++;
		}
		CHECK_EQ_U64(in_chunk, c.n_lines);
		expect_line += c.n_lines;
		(*n_chunks)++;
	}
	reader_close(&r);
	sbuf_free(&buf);
	return n;
}

static void test_lines_lose_lf_and_cr_before_it(void)
{
	const char *p = temp_file("a\r\nb\n\nc\r", 8);
	char out[64];
	size_t chunks;

	CHECK_EQ_U64(all_lines(p, 1 << 16, 100, out, sizeof(out), &chunks), 4);
	/* The last line has no LF, so its CR stays. */
	CHECK_STR(out, "a|b||c\r");
	unlink(p);
}

static void test_cr_without_lf_stays_inside_a_line(void)
{
	const char *p = temp_file("a\rb\r\r\n", 6);
	char out[64];
	size_t chunks;

	CHECK_EQ_U64(all_lines(p, 1 << 16, 100, out, sizeof(out), &chunks), 1);
	CHECK_STR(out, "a\rb\r");
	unlink(p);
}

static void test_empty_input_has_no_lines(void)
{
	const char *p = temp_file("", 0);
	char out[8];
	size_t chunks;

	CHECK_EQ_U64(all_lines(p, 1 << 16, 100, out, sizeof(out), &chunks), 0);
	CHECK_EQ_U64(chunks, 0);
	unlink(p);
}

static void test_one_newline_is_one_empty_line(void)
{
	const char *p = temp_file("\n", 1);
	char out[8];
	size_t chunks;

	CHECK_EQ_U64(all_lines(p, 1 << 16, 100, out, sizeof(out), &chunks), 1);
	CHECK_STR(out, "");
	unlink(p);
}

static void test_chunks_stop_at_max_lines_and_keep_numbering(void)
{
	const char *p = temp_file("1\n2\n3\n4\n5\n6\n7\n8\n9\n10", 20);
	char out[64];
	size_t chunks;

	CHECK_EQ_U64(all_lines(p, 1 << 16, 3, out, sizeof(out), &chunks), 10);
	CHECK_EQ_U64(chunks, 4);
	CHECK_STR(out, "1|2|3|4|5|6|7|8|9|10");
	unlink(p);
}

static void test_chunks_stop_once_max_bytes_reached(void)
{
	char data[1000], out[2000];
	const char *p;
	size_t chunks;

	memset(data, 'x', sizeof(data));
	for (size_t i = 9; i < sizeof(data); i += 10)
		data[i] = '\n'; /* 100 lines of 10 bytes */
	p = temp_file(data, sizeof(data));
	CHECK_EQ_U64(all_lines(p, 100, 1000, out, sizeof(out), &chunks), 100);
	CHECK_EQ_U64(chunks, 10);
	unlink(p);
}

/* A line bigger than the reader's buffer and the swap threshold, followed by
 * a short one, must come out whole and then the short one, numbered 1 and 2. */
static void check_huge_line(const char *path, size_t big)
{
	struct sbuf buf = { 0 };
	struct reader r;
	struct chunk c;
	size_t pos = 0, len, i, bad = 0;
	const char *s;

	CHECK(reader_open(&r, path) == 0);
	CHECK(reader_next(&r, 1 << 16, 4096, &buf, &c) == 1);
	CHECK_EQ_U64(c.n_lines, 1);
	CHECK_EQ_U64(c.first_line, 1);
	CHECK(chunk_next_line(&c, &pos, &s, &len));
	CHECK_EQ_U64(len, big);
	for (i = 0; i < len; i++)
		bad += s[i] != (char)('a' + i % 26);
	CHECK_EQ_U64(bad, 0);
	CHECK(reader_next(&r, 1 << 16, 4096, &buf, &c) == 1);
	CHECK_EQ_U64(c.first_line, 2);
	pos = 0;
	CHECK(chunk_next_line(&c, &pos, &s, &len));
	CHECK(len == 3 && !memcmp(s, "end", 3));
	CHECK(reader_next(&r, 1 << 16, 4096, &buf, &c) == 0);
	reader_close(&r);
	sbuf_free(&buf);
}

static char *huge_text(size_t big)
{
	char *data = malloc(big + 5);

	for (size_t i = 0; i < big; i++)
		data[i] = (char)('a' + i % 26);
	memcpy(data + big, "\nend\n", 5);
	return data;
}

static void test_huge_line_from_a_file(void)
{
	size_t big = (size_t)9 << 20;
	char *data = huge_text(big);
	const char *p = temp_file(data, big + 5);

	check_huge_line(p, big);
	unlink(p);
	free(data);
}

/* Through a pipe, reads return at most 64 KB: the scan must not restart. */
static void test_huge_line_through_a_pipe(void)
{
	size_t big = (size_t)9 << 20, off = 0;
	char *data = huge_text(big), path[32];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		while (off < big + 5 && (n = write(fds[1], data + off, big + 5 - off)) > 0)
			off += (size_t)n;
		_exit(0);
	}
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	check_huge_line(path, big);
	close(fds[0]);
	waitpid(pid, &status, 0);
	free(data);
}

static void test_missing_file_sets_errno(void)
{
	struct reader r;

	CHECK(reader_open(&r, "/nonexistent/test_reader") == -1);
	CHECK(errno == ENOENT);
}

TEST_MAIN("cli/reader", TEST(test_lines_lose_lf_and_cr_before_it),
	  TEST(test_cr_without_lf_stays_inside_a_line), TEST(test_empty_input_has_no_lines),
	  TEST(test_one_newline_is_one_empty_line),
	  TEST(test_chunks_stop_at_max_lines_and_keep_numbering),
	  TEST(test_chunks_stop_once_max_bytes_reached), TEST(test_huge_line_from_a_file),
	  TEST(test_huge_line_through_a_pipe), TEST(test_missing_file_sets_errno))
