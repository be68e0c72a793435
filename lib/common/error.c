/* error.c - error strings, the caller's error detail (simhash_error) and
 * the copy-out of the structs that grow, and the library version. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

#define SH_STR2(x) #x
#define SH_STR(x) SH_STR2(x)

const char *simhash_version(void)
{
	return SH_STR(SIMHASH_VERSION_MAJOR) "." SH_STR(SIMHASH_VERSION_MINOR) "." SH_STR(
		SIMHASH_VERSION_PATCH);
}

const char *simhash_strerror(simhash_err err)
{
	switch (err) {
	case SIMHASH_OK: return "success";
	case SIMHASH_EINVAL: return "invalid argument";
	case SIMHASH_ENOMEM: return "out of memory";
	case SIMHASH_EIO: return "input/output error";
	case SIMHASH_EUTF8: return "invalid UTF-8";
	case SIMHASH_ECORRUPT: return "malformed data";
	case SIMHASH_EDEP: return "a library dependency failed";
	case SIMHASH_ESCHEME: return "fingerprint schemes differ";
	case SIMHASH_EVERSION: return "written by a newer format version";
	case SIMHASH_ENOSPC: return "no space left";
	case SIMHASH_EINTR: return "interrupted";
	}
	return "unknown error";
}

simhash_err sh_error_set(simhash_error *e, simhash_err code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	memset(e, 0, sizeof *e);
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	if (!e->msg[0])
		snprintf(e->msg, sizeof e->msg, "%s", simhash_strerror(code));
	return code;
}

simhash_err sh_error_code(simhash_error *e, simhash_err code)
{
	return sh_error_set(e, code, "%s", simhash_strerror(code));
}

const char *sh_errno_text(int err, char *buf, size_t cap)
{
	char tmp[256];
	const char *s = strerror_r(err, tmp, sizeof tmp); /* the GNU strerror_r */

	snprintf(buf, cap, "%s", s);
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

simhash_err sh_error_errno(simhash_error *e, simhash_err code, int os_err, int lower)
{
	char buf[256];

	if (!e)
		return code;
	if (lower)
		sh_error_set(e, code, "%s", sh_errno_text(os_err, buf, sizeof buf));
	else /* the GNU strerror_r: its text, in buf or static */
		sh_error_set(e, code, "%s", strerror_r(os_err, buf, sizeof buf));
	e->os_err = os_err;
	return code;
}

simhash_err sh_error_os(simhash_error *e, int os_err)
{
	return sh_error_errno(e, os_err == ENOMEM ? SIMHASH_ENOMEM : SIMHASH_EIO, os_err, 1);
}

simhash_err sh_results_copy(void *dst, const void *src, size_t own_size, size_t min_size)
{
	size_t size;

	memcpy(&size, dst, sizeof size);
	if (size < min_size || min_size < sizeof size)
		return SIMHASH_EINVAL;
	if (size > own_size)
		size = own_size;
	memcpy((char *)dst + sizeof size, (const char *)src + sizeof size, size - sizeof size);
	return SIMHASH_OK;
}
