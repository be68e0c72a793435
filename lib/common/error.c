/* error.c - error strings and the library version. */
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
