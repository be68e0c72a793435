/* fp.c - fingerprints as values: hex text in and out, Hamming distance and
 * similarity.
 *
 * Hex form: 8, 16 or 32 digits, most significant first (w[1] before w[0] at
 * 128 bits); the digit count alone gives the width, so "00000000" is a 32-bit
 * zero and never a 64-bit one. Output is lowercase; input takes either case.
 * A width outside {32, 64, 128} is never formatted nor compared. Bits above the
 * width are ignored by the distance, so a fingerprint with stray high bits
 * still compares by its own width.
 */
#include "../common/internal.h"

static const char hex_digits[] = "0123456789abcdef";

static int width_ok(unsigned bits)
{
	return bits == 32 || bits == 64 || bits == 128;
}

/* Writes the low n_digits nibbles of v, most significant first. */
static void put_hex(uint64_t v, unsigned n_digits, char *buf)
{
	for (unsigned i = 0; i < n_digits; i++)
		buf[i] = hex_digits[(v >> (4 * (n_digits - 1 - i))) & 15];
}

size_t simhash_fp_format(const simhash_fp *fp, char *buf)
{
	if (!fp || !buf || !width_ok(fp->bits))
		return 0;
	switch (fp->bits) {
	case 32: put_hex(fp->w[0], 8, buf); break;
	case 64: put_hex(fp->w[0], 16, buf); break;
	default:
		put_hex(fp->w[1], 16, buf);
		put_hex(fp->w[0], 16, buf + 16);
		break;
	}
	buf[fp->bits / 4] = '\0';
	return fp->bits / 4;
}

/* Reads n_digits (at most 16) hex digits into *v; 0 on a non-digit. Without
 * branches per digit (random hex mispredicts half of them): '0'-'9' are
 * 0x30-0x39 and 'a'-'f', 'A'-'F' 0x61-0x66, 0x41-0x46, so the value is the
 * low nibble plus 9 when bit 6 is set, and validity is checked apart. */
static int get_hex(const char *s, size_t n_digits, uint64_t *v)
{
	uint64_t acc = 0;
	unsigned ok = 1;

	for (size_t i = 0; i < n_digits; i++) {
		unsigned c = (unsigned char)s[i];

		ok &= (c - '0' < 10u) | ((c | 0x20) - 'a' < 6u);
		acc = acc << 4 | ((c & 15) + 9 * (c >> 6 & 1));
	}
	*v = acc;
	return (int)ok;
}

simhash_err simhash_fp_parse(const char *hex, size_t len, simhash_fp *out)
{
	uint64_t hi = 0, lo = 0;

	if (!out || (!hex && len))
		return SIMHASH_EINVAL;
	if (len != 8 && len != 16 && len != 32)
		return SIMHASH_ECORRUPT;
	if (len == 32) {
		if (!get_hex(hex, 16, &hi) || !get_hex(hex + 16, 16, &lo))
			return SIMHASH_ECORRUPT;
	} else if (!get_hex(hex, len, &lo)) {
		return SIMHASH_ECORRUPT;
	}
	out->w[0] = lo;
	out->w[1] = hi;
	out->bits = (unsigned)len * 4;
	return SIMHASH_OK;
}

unsigned simhash_hamming(const simhash_fp *a, const simhash_fp *b)
{
	uint64_t x0, x1 = 0;

	if (!a || !b || a->bits != b->bits || !width_ok(a->bits))
		return SIMHASH_DIST_INVALID;
	x0 = a->w[0] ^ b->w[0];
	if (a->bits == 32)
		x0 &= 0xffffffffu;
	else if (a->bits == 128)
		x1 = a->w[1] ^ b->w[1];
	return (unsigned)(__builtin_popcountll(x0) + __builtin_popcountll(x1));
}

double simhash_similarity(const simhash_fp *a, const simhash_fp *b)
{
	unsigned d = simhash_hamming(a, b);

	if (d == SIMHASH_DIST_INVALID)
		return -1.0;
	return 1.0 - (double)d / (double)a->bits;
}
