/* file.c - whole-file reads and atomic output files, shared by the library
 * (IDF tables, stop words) and the commands (see simhash.h).
 *
 * Invariants of an simhash_outfile:
 *  1. tmp == NULL iff the target is written in place (a character device or
 *     a FIFO); then nothing is ever renamed or unlinked.
 *  2. Otherwise tmp names a file this handle created (O_EXCL) in the target's
 *     directory; it is renamed over target by commit() or unlinked, never
 *     left behind by a call that fails.
 *  3. target is the file the user meant: path, or the file a symbolic link at
 *     path points to, so the link survives and the file it names is replaced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

struct simhash_outfile {
	int fd;
	char *target;
	char *tmp;
};

static simhash_err os_fail(simhash_error *err, int e)
{
	return sh_error_os(err, e);
}

/* A path refused for what it is (SIMHASH_EINVAL); os_err says what, or 0. */
static simhash_err refuse(simhash_error *err, int os_err)
{
	sh_error_set(err, SIMHASH_EINVAL, "%s",
		     os_err == EISDIR ? "is a directory" :
		     os_err == ENOENT ? "dangling symbolic link" : "not a regular file");
	if (err)
		err->os_err = os_err;
	return SIMHASH_EINVAL;
}

static simhash_err grow(char **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	char *p;

	while (n < need) {
		if (n > SIZE_MAX / 2) {
			n = need;
			break;
		}
		n *= 2;
	}
	p = realloc(*buf, n);
	if (!p)
		return SIMHASH_ENOMEM;
	*buf = p;
	*cap = n;
	return SIMHASH_OK;
}

simhash_err simhash_read_fd(int fd, char **buf, size_t *len, size_t *cap, simhash_error *err)
{
	struct stat st;
	size_t want = 64 * 1024, asked;
	int regular = 0;
	ssize_t n;

	if (!buf || !len || !cap || *len > *cap)
		return sh_error_code(err, SIMHASH_EINVAL);
	/* A regular file is read in one call: asking for a byte more than its
	 * size, a short read is its end (the size is only a hint: the loop goes
	 * on if it grew). Anything else grows the buffer geometrically. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX / 2) {
		want = (size_t)st.st_size + 1;
		regular = 1;
	}
	for (;;) {
		if (*cap - *len < want && grow(buf, cap, *len + want))
			return os_fail(err, ENOMEM);
		asked = *cap - *len;
		n = read(fd, *buf + *len, asked);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return os_fail(err, errno);
		}
		*len += (size_t)n;
		if (n == 0 || (regular && (size_t)n < asked))
			break;
		want = *cap - *len ? 1 : *len;
	}
	if (*cap == *len && grow(buf, cap, *len + 1))
		return os_fail(err, ENOMEM);
	return SIMHASH_OK;
}

simhash_err simhash_read_file(const char *path, char **buf, size_t *len, size_t *cap,
			      simhash_error *err)
{
	simhash_err rc;
	int fd, e;

	if (!path)
		return sh_error_code(err, SIMHASH_EINVAL);
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return os_fail(err, errno);
	rc = simhash_read_fd(fd, buf, len, cap, err);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* Makes the rename durable. Best effort: the new file is in place already. */
static void sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	int fd;

	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

/* Creates a new temporary file next to target; 0 or the errno value (mode 0666 less the umask,
 * which the kernel applies). Names mix the clock, the pid and the handle's
 * address; O_EXCL makes a clash a retry, never a shared file. */
static int make_temp(simhash_outfile *f)
{
	size_t n = strlen(f->target);
	struct timespec ts;
	uint64_t x;

	int e;

	f->tmp = malloc(n + 24);
	if (!f->tmp)
		return ENOMEM;
	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^
	    (uint64_t)(uintptr_t)f;
	for (int attempt = 0; attempt < 100; attempt++) {
		x += 0x9e3779b97f4a7c15ull;
		uint64_t z = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		snprintf(f->tmp, n + 24, "%s.%06llx.tmp", f->target,
			 (unsigned long long)((z ^ (z >> 31)) & 0xffffff));
		f->fd = open(f->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666); /* RDWR: sh_outfile_map */
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST && errno != EINTR)
			break;
	}
	e = errno;
	free(f->tmp);
	f->tmp = NULL;
	return e; /* the errno value */
}

static void free_outfile(simhash_outfile *f)
{
	free(f->target);
	free(f->tmp);
	free(f);
}

simhash_err simhash_outfile_open(const char *path, simhash_outfile **out, simhash_error *err)
{
	simhash_outfile *f;
	struct stat st;
	int exists, e;

	if (!path || !*path || !out)
		return sh_error_code(err, SIMHASH_EINVAL);
	f = calloc(1, sizeof *f);
	if (!f)
		return os_fail(err, ENOMEM);
	f->fd = -1;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* write through the link: replace the file it names */
		f->target = realpath(path, NULL);
		if (!f->target) {
			e = errno;
			free_outfile(f);
			if (e == ENOENT)
				return refuse(err, ENOENT);
			return os_fail(err, e);
		}
	} else {
		f->target = strdup(path);
		if (!f->target) {
			free_outfile(f);
			return os_fail(err, ENOMEM);
		}
	}
	exists = stat(f->target, &st) == 0;
	if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		do
			f->fd = open(f->target, O_WRONLY | O_CLOEXEC);
		while (f->fd < 0 && errno == EINTR);
		if (f->fd < 0) {
			e = errno;
			free_outfile(f);
			return os_fail(err, e);
		}
		*out = f;
		return SIMHASH_OK;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		free_outfile(f);
		return refuse(err, S_ISDIR(st.st_mode) ? EISDIR : 0);
	}
	e = make_temp(f);
	if (e) {
		free_outfile(f);
		return os_fail(err, e);
	}
	if (exists) {
		/* keep what the file was: its mode, and its owner if we may */
		if (fchown(f->fd, st.st_uid, st.st_gid)) {
			/* not the owner: the new file is ours, as a plain write's
			 * replacement would be */
		}
		(void)fchmod(f->fd, st.st_mode & 07777);
	}
	*out = f;
	return SIMHASH_OK;
}

simhash_err simhash_outfile_write(simhash_outfile *f, const void *data, size_t len,
				  simhash_error *err)
{
	const char *p = data;
	ssize_t w;

	if (!f || (!data && len) || f->fd < 0)
		return sh_error_code(err, SIMHASH_EINVAL);
	while (len) {
		w = write(f->fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return os_fail(err, errno);
		}
		p += w;
		len -= (size_t)w;
	}
	return SIMHASH_OK;
}

simhash_err sh_outfile_pwrite(simhash_outfile *f, const void *data, size_t len, uint64_t off)
{
	const char *p = data;
	ssize_t w;

	if (!f || !f->tmp || (!data && len) || f->fd < 0)
		return SIMHASH_EINVAL;
	while (len) {
		w = pwrite(f->fd, p, len, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return os_fail(NULL, errno);
		}
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return SIMHASH_OK;
}

/* fallocate() rather than posix_fallocate(): where the file system cannot
 * allocate ahead, glibc's fallback writes every block, which costs what
 * the caller's own writes would. */
simhash_err sh_outfile_reserve(simhash_outfile *f, uint64_t len)
{
	int e;

	if (!f || !f->tmp || f->fd < 0 || len > (uint64_t)INT64_MAX)
		return SIMHASH_EINVAL;
	if (len == 0)
		return SIMHASH_OK;
	do
		e = fallocate(f->fd, 0, 0, (off_t)len) ? errno : 0;
	while (e == EINTR);
	if (e == 0)
		return SIMHASH_OK;
	(void)ftruncate(f->fd, 0); /* a partial allocation: the caller writes from 0 */
	errno = e;
	return e == ENOSPC || e == EDQUOT ? SIMHASH_ENOSPC : SIMHASH_EINVAL;
}

simhash_err sh_outfile_map(simhash_outfile *f, uint64_t off, size_t len, void **p)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), lead = off % page;
	void *m;

	if (!f || !f->tmp || f->fd < 0 || !p || len == 0)
		return SIMHASH_EINVAL;
	m = mmap(NULL, len + lead, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)(off - lead));
	if (m == MAP_FAILED)
		return errno == ENOMEM ? SIMHASH_ENOMEM : SIMHASH_EIO;
	*p = (char *)m + lead;
	return SIMHASH_OK;
}

/* The range's write-back starts now (sync_file_range, no wait): the disk
 * works while the caller fills the next range, and commit()'s fsync is
 * left the last range to wait for. */
void sh_outfile_unmap(simhash_outfile *f, void *p, uint64_t off, size_t len)
{
	uint64_t lead = off % (uint64_t)sysconf(_SC_PAGESIZE);

	if (!p)
		return;
	munmap((char *)p - lead, len + lead);
	if (f && f->fd >= 0)
		(void)sync_file_range(f->fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
}

const char *simhash_outfile_temp(const simhash_outfile *f)
{
	return f ? f->tmp : NULL;
}

void simhash_outfile_abort(simhash_outfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp)
		unlink(f->tmp);
	free_outfile(f);
}

simhash_err simhash_outfile_commit(simhash_outfile *f, simhash_error *err)
{
	int fd, e = 0;

	if (!f)
		return sh_error_code(err, SIMHASH_EINVAL);
	fd = f->fd;
	f->fd = -1;
	if (!f->tmp) {
		/* in place: a device or a FIFO has nothing to sync or rename */
		if (close(fd) && errno != EINTR)
			e = errno;
		free_outfile(f);
		return e ? os_fail(err, e) : SIMHASH_OK;
	}
	if (fsync(fd))
		e = errno;
	if (close(fd) && !e && errno != EINTR)
		e = errno;
	if (!e && rename(f->tmp, f->target))
		e = errno;
	if (e) {
		unlink(f->tmp);
		free_outfile(f);
		return os_fail(err, e);
	}
	sync_dir_of(f->target);
	free_outfile(f);
	return SIMHASH_OK;
}
