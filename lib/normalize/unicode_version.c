/* unicode_version.c - which ICU, and so which Unicode data, normalizes texts.
 *
 * NFKC_Casefold and the character classes follow the Unicode version of the
 * ICU the library runs with; a newer Unicode can normalize a newly assigned
 * character differently, so fingerprints of texts holding it can change.
 * This names the versions, for `simhash version` and bug reports; the
 * known-answer tests (tests/data/kat/) pin the behaviour on known characters.
 */
#include <stdio.h>
#include <unicode/uchar.h>
#include <unicode/uversion.h>
#include "../common/internal.h"

simhash_err simhash_unicode_version(char *buf, size_t cap)
{
	UVersionInfo icu, uni;
	char a[U_MAX_VERSION_STRING_LENGTH], b[U_MAX_VERSION_STRING_LENGTH];
	int n;

	if (!buf || !cap)
		return SIMHASH_EINVAL;
	u_getVersion(icu);
	u_getUnicodeVersion(uni);
	u_versionToString(icu, a);
	u_versionToString(uni, b);
	n = snprintf(buf, cap, "ICU %s, Unicode %s", a, b);
	return n > 0 && (size_t)n < cap ? SIMHASH_OK : SIMHASH_EINVAL;
}
