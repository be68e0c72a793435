/* md5.c - MD5 digests through OpenSSL's EVP interface (libcrypto).
 *
 * MD5 is here for the Python `simhash` compatibility mode and for users who
 * chose it as the feature hash; it is not used for anything security-related.
 * The low-level MD5() call is deprecated in OpenSSL 3, so we use EVP_Digest().
 *
 * Cost: EVP_Digest() sets up and frees a digest context on every call, about
 * 1.2 us per short feature with OpenSSL 3.0 (a context kept between calls would
 * take about a third of that). Keeping one would be state outside a handle, so
 * a caller that needs faster MD5 must hold the context itself.
 *
 * EVP_Digest() fails only when no provider offers MD5 (a FIPS-only OpenSSL
 * configuration). sh_md5() cannot report that, so it writes an all-zero digest;
 * code that offers MD5 should check once, at setup, that sh_md5("") gives
 * d41d8cd98f00b204e9800998ecf8427e and answer SIMHASH_EDEP otherwise.
 */
#include <string.h>
#include <openssl/evp.h>
#include "../common/internal.h"

void sh_md5(const void *data, size_t len, uint8_t out[16])
{
	unsigned int n = 0;

	if (!EVP_Digest(data, len, out, &n, EVP_md5(), NULL) || n != 16)
		memset(out, 0, 16);
}
