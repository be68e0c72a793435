/* fpfile.c - the binary fingerprint file: what `simhash fingerprint --format
 * bin` writes and `simhash pairs`, `dedup` and `index` read.
 *
 * Layout (every integer little-endian; see docs/format.md):
 *
 *	 0  magic "\x89SHF\r\n\x1a\n"  (catches text-mode transfers, like PNG's)
 *	 8  u32 format version (1)
 *	12  u32 byte order mark 0x01020304
 *	16  u32 bits (32, 64, 128)      20  u32 record size (8 or 16)
 *	24  u64 count
 *	32  u64 offset of the records   40  u64 offset of the id offsets
 *	48  u64 offset of the id bytes  56  u64 file size
 *	64  u32 scheme length           68  u32 flags (0)
 *	72  u64 body checksum: XXH3-64 of everything from the records on
 *	80  u64 header checksum: XXH3-64 of bytes 0..80 and the scheme
 *	88  the scheme string (no NUL), then zero padding to a multiple of 8
 *	    records: count * record size bytes
 *	    id offsets: count + 1 u64, relative to the id bytes, from 0, rising
 *	    id bytes
 *
 * Invariants checked at open, so that readers never step outside the map:
 *  1. magic, version <= ours, byte order mark, width and record size agree;
 *  2. the header checksum matches (a damaged header is never trusted);
 *  3. the sections lie in order inside the file and the file has exactly the
 *     size recorded (a truncated copy is refused, not read short);
 *  4. the last id offset equals the size of the id bytes. Single ids are
 *     checked on access (offsets rising), which costs nothing up front.
 * The body checksum is checked on demand (simhash_fpfile_verify), since it
 * reads the whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "../common/internal.h"

#define HEADER_LEN 88
#define BOM 0x01020304u

static const uint8_t magic[8] = { 0x89, 'S', 'H', 'F', '\r', '\n', 0x1a, '\n' };

struct simhash_fpfile_writer {
	unsigned bits;
	char scheme[SIMHASH_SCHEME_MAX];
	uint64_t count;
	sh_buf recs; /* count * record size bytes, little-endian */
	sh_buf ids;  /* id bytes */
	size_t ids_len;
	sh_buf offs; /* count + 1 u64, little-endian */
};

struct simhash_fpfile {
	const uint8_t *data;
	size_t len;
	int mapped;
	unsigned bits;
	unsigned rec_size;
	uint64_t count;
	const uint8_t *recs;
	const uint8_t *offs;
	const uint8_t *ids;
	uint64_t ids_len;
	char scheme[SIMHASH_SCHEME_MAX];
};

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static unsigned rec_size(unsigned bits)
{
	return bits == 128 ? 16 : 8;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

simhash_err simhash_fpfile_writer_new(unsigned bits, const char *scheme,
				      simhash_fpfile_writer **out)
{
	simhash_fpfile_writer *w;

	if (!out || (bits != 32 && bits != 64 && bits != 128) ||
	    (scheme && strlen(scheme) >= SIMHASH_SCHEME_MAX))
		return SIMHASH_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return SIMHASH_ENOMEM;
	w->bits = bits;
	if (scheme)
		strcpy(w->scheme, scheme);
	if (sh_buf_reserve(&w->offs, 8)) {
		free(w);
		return SIMHASH_ENOMEM;
	}
	sh_put_le64(w->offs.p, 0);
	*out = w;
	return SIMHASH_OK;
}

void simhash_fpfile_writer_free(simhash_fpfile_writer *w)
{
	if (!w)
		return;
	sh_buf_free(&w->recs);
	sh_buf_free(&w->ids);
	sh_buf_free(&w->offs);
	free(w);
}

simhash_err simhash_fpfile_writer_add(simhash_fpfile_writer *w, const simhash_fp *fp,
				      const char *id, size_t id_len)
{
	unsigned rs;
	uint8_t *p;

	if (!w || !fp || (id_len && !id))
		return SIMHASH_EINVAL;
	if (fp->bits != w->bits)
		return SIMHASH_ESCHEME;
	rs = rec_size(w->bits);
	if (sh_buf_reserve(&w->recs, (w->count + 1) * rs) ||
	    sh_buf_reserve(&w->offs, (w->count + 2) * 8) ||
	    sh_buf_reserve(&w->ids, w->ids_len + id_len))
		return SIMHASH_ENOMEM;
	p = (uint8_t *)w->recs.p + w->count * rs;
	sh_put_le64(p, fp->w[0]);
	if (rs == 16)
		sh_put_le64(p + 8, fp->w[1]);
	if (id_len)
		memcpy((char *)w->ids.p + w->ids_len, id, id_len);
	w->ids_len += id_len;
	w->count++;
	sh_put_le64((uint8_t *)w->offs.p + w->count * 8, w->ids_len);
	return SIMHASH_OK;
}

simhash_err simhash_fpfile_writer_finish(simhash_fpfile_writer *w, simhash_write_fn fn,
					 void *arg)
{
	static const uint8_t zeros[8];
	uint8_t h[HEADER_LEN];
	size_t slen, recs_off, offs_off, ids_off, size;
	size_t recs_len, offs_len;
	XXH3_state_t *st;
	uint64_t body;

	if (!w || !fn)
		return SIMHASH_EINVAL;
	slen = strlen(w->scheme);
	recs_off = pad8(HEADER_LEN + slen);
	recs_len = w->count * rec_size(w->bits);
	offs_off = recs_off + recs_len;
	offs_len = (w->count + 1) * 8;
	ids_off = offs_off + offs_len;
	size = ids_off + w->ids_len;

	st = XXH3_createState();
	if (!st)
		return SIMHASH_ENOMEM;
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, w->recs.p ? w->recs.p : zeros, recs_len);
	XXH3_64bits_update(st, w->offs.p, offs_len);
	XXH3_64bits_update(st, w->ids.p ? w->ids.p : zeros, w->ids_len);
	body = XXH3_64bits_digest(st);
	XXH3_freeState(st);

	memset(h, 0, sizeof(h));
	memcpy(h, magic, 8);
	put32(h + 8, SIMHASH_FPFILE_VERSION);
	put32(h + 12, BOM);
	put32(h + 16, w->bits);
	put32(h + 20, rec_size(w->bits));
	sh_put_le64(h + 24, w->count);
	sh_put_le64(h + 32, recs_off);
	sh_put_le64(h + 40, offs_off);
	sh_put_le64(h + 48, ids_off);
	sh_put_le64(h + 56, size);
	put32(h + 64, (uint32_t)slen);
	put32(h + 68, 0);
	sh_put_le64(h + 72, body);
	{
		XXH3_state_t *hs = XXH3_createState();
		if (!hs)
			return SIMHASH_ENOMEM;
		XXH3_64bits_reset(hs);
		XXH3_64bits_update(hs, h, 80);
		XXH3_64bits_update(hs, w->scheme, slen);
		sh_put_le64(h + 80, XXH3_64bits_digest(hs));
		XXH3_freeState(hs);
	}
	if (fn(h, HEADER_LEN, arg) || (slen && fn(w->scheme, slen, arg)) ||
	    (recs_off > HEADER_LEN + slen && fn(zeros, recs_off - HEADER_LEN - slen, arg)) ||
	    (recs_len && fn(w->recs.p, recs_len, arg)) || fn(w->offs.p, offs_len, arg) ||
	    (w->ids_len && fn(w->ids.p, w->ids_len, arg)))
		return SIMHASH_EIO;
	return SIMHASH_OK;
}

#define REFUSE(code, reason) return sh_error_set(e, (code), "%s", (reason))

/* Checks the header of data (invariants 1-4) and fills f. */
static simhash_err check(simhash_fpfile *f, const uint8_t *d, size_t len, simhash_error *e)
{
	uint64_t count, recs_off, offs_off, ids_off, size, slen;
	unsigned bits, rs;
	XXH3_state_t *st;
	uint64_t sum;

	if (len < 8 || memcmp(d, magic, 8))
		REFUSE(SIMHASH_ECORRUPT, "not a simhash fingerprint file (bad magic)");
	if (len < HEADER_LEN)
		REFUSE(SIMHASH_ECORRUPT, "truncated fingerprint file (header cut short)");
	if (get32(d + 8) > SIMHASH_FPFILE_VERSION)
		REFUSE(SIMHASH_EVERSION,
		       "fingerprint file of a newer format version than this program reads");
	if (get32(d + 8) == 0)
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with format version 0");
	if (get32(d + 12) != BOM)
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with a wrong byte order mark");
	slen = get32(d + 64);
	if (slen >= SIMHASH_SCHEME_MAX)
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with a malformed header");
	if (len < HEADER_LEN + slen)
		REFUSE(SIMHASH_ECORRUPT, "truncated fingerprint file (header cut short)");
	st = XXH3_createState();
	if (!st)
		return sh_error_code(e, SIMHASH_ENOMEM);
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, d, 80);
	XXH3_64bits_update(st, d + HEADER_LEN, slen);
	sum = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	if (sum != get64(d + 80))
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file header checksum mismatch");
	bits = get32(d + 16);
	rs = get32(d + 20);
	if ((bits != 32 && bits != 64 && bits != 128) || rs != rec_size(bits))
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with an unknown width");
	count = get64(d + 24);
	recs_off = get64(d + 32);
	offs_off = get64(d + 40);
	ids_off = get64(d + 48);
	size = get64(d + 56);
	if (count > (UINT64_MAX / 32) || recs_off < HEADER_LEN + slen || recs_off % 8 ||
	    offs_off != recs_off + count * rs || ids_off != offs_off + (count + 1) * 8 ||
	    size < ids_off)
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with a malformed header");
	if (size > len)
		REFUSE(SIMHASH_ECORRUPT, "truncated fingerprint file");
	if (size < len)
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with trailing bytes");
	if (get64(d + offs_off) != 0 || get64(d + ids_off - 8) != size - ids_off)
		REFUSE(SIMHASH_ECORRUPT, "fingerprint file with a malformed id section");
	f->data = d;
	f->len = len;
	f->bits = bits;
	f->rec_size = rs;
	f->count = count;
	f->recs = d + recs_off;
	f->offs = d + offs_off;
	f->ids = d + ids_off;
	f->ids_len = size - ids_off;
	memcpy(f->scheme, d + HEADER_LEN, slen);
	f->scheme[slen] = '\0';
	return SIMHASH_OK;
}

simhash_err simhash_fpfile_open_mem(const void *data, size_t len, simhash_fpfile **out,
				    simhash_error *e)
{
	simhash_fpfile *f;
	simhash_err err;

	if (!out || (!data && len))
		return sh_error_code(e, SIMHASH_EINVAL);
	f = calloc(1, sizeof(*f));
	if (!f)
		return sh_error_code(e, SIMHASH_ENOMEM);
	err = check(f, data ? data : (const void *)"", len, e);
	if (err) {
		free(f);
		return err;
	}
	*out = f;
	return SIMHASH_OK;
}

simhash_err simhash_fpfile_open(const char *path, simhash_fpfile **out, simhash_error *e)
{
	struct stat s;
	void *map;
	simhash_err err;
	int fd;

	if (!path || !out)
		return sh_error_code(e, SIMHASH_EINVAL);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int os_err = errno;

		sh_error_set(e, SIMHASH_EIO, "cannot open");
		if (e)
			e->os_err = os_err;
		return SIMHASH_EIO;
	}
	if (fstat(fd, &s) || !S_ISREG(s.st_mode)) {
		close(fd);
		return sh_error_set(e, SIMHASH_EIO, "not a regular file");
	}
	if (s.st_size == 0) {
		close(fd);
		REFUSE(SIMHASH_ECORRUPT, "not a simhash fingerprint file (empty)");
	}
	map = mmap(NULL, (size_t)s.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		REFUSE(SIMHASH_EIO, "cannot map the file");
	err = simhash_fpfile_open_mem(map, (size_t)s.st_size, out, e);
	if (err) {
		munmap(map, (size_t)s.st_size);
		return err;
	}
	(*out)->mapped = 1;
	return SIMHASH_OK;
}

void simhash_fpfile_close(simhash_fpfile *f)
{
	if (!f)
		return;
	if (f->mapped)
		munmap((void *)f->data, f->len);
	free(f);
}

simhash_err simhash_fpfile_verify(const simhash_fpfile *f)
{
	const uint8_t *body;

	if (!f)
		return SIMHASH_EINVAL;
	body = f->recs;
	if (XXH3_64bits(body, f->len - (size_t)(body - f->data)) != get64(f->data + 72))
		return SIMHASH_ECORRUPT;
	return SIMHASH_OK;
}

unsigned simhash_fpfile_bits(const simhash_fpfile *f)
{
	return f ? f->bits : 0;
}

uint64_t simhash_fpfile_count(const simhash_fpfile *f)
{
	return f ? f->count : 0;
}

const char *simhash_fpfile_scheme(const simhash_fpfile *f)
{
	return f ? f->scheme : "";
}

simhash_err simhash_fpfile_get(const simhash_fpfile *f, uint64_t i, simhash_fp *out)
{
	const uint8_t *p;

	if (!f || !out || i >= f->count)
		return SIMHASH_EINVAL;
	p = f->recs + i * f->rec_size;
	out->w[0] = get64(p);
	out->w[1] = f->rec_size == 16 ? get64(p + 8) : 0;
	out->bits = f->bits;
	if (f->bits == 32)
		out->w[0] &= 0xffffffffu;
	return SIMHASH_OK;
}

const uint64_t *simhash_fpfile_words(const simhash_fpfile *f)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return f ? (const uint64_t *)(const void *)f->recs : NULL;
#else
	SH_UNUSED(f);
	return NULL;
#endif
}

simhash_err simhash_fpfile_id(const simhash_fpfile *f, uint64_t i, const char **id, size_t *len)
{
	uint64_t a, b;

	if (!f || !id || !len || i >= f->count)
		return SIMHASH_EINVAL;
	a = get64(f->offs + i * 8);
	b = get64(f->offs + i * 8 + 8);
	if (a > b || b > f->ids_len)
		return SIMHASH_ECORRUPT;
	*id = (const char *)f->ids + a;
	*len = (size_t)(b - a);
	return SIMHASH_OK;
}
