/* index_read.c - the fingerprints `simhash index` takes: `HEX<TAB>ID` lines
 * of the text form (what `simhash fingerprint` prints), or a binary
 * fingerprint file (`--format bin`, recognised by its magic), whose ids are
 * escaped into the text form (idesc.h) so that an index holds the same names
 * whichever form it was built from. Ids of the text form are kept byte for
 * byte as read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "idesc.h"
#include "index_cmd.h"
#include "reader.h"
#include "util.h"

/* Reads `HEX<TAB>ID` lines of path ("-": stdin). want_bits: 0 any width the
 * first line sets (then *bits), else that width. Empty lines are skipped. */
int index_read_text(const char *path, unsigned *bits, line_fn fn, void *arg)
{
	struct reader r;
	struct sbuf buf = {0};
	struct chunk c;
	int ret = 0, got;

	if (reader_open(&r, path)) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		return -1;
	}
	while (ret == 0 && (got = reader_next(&r, 1 << 20, 1 << 16, &buf, &c)) > 0) {
		size_t pos = 0, len;
		const char *s;
		uint64_t line = c.first_line;
		for (; ret == 0 && chunk_next_line(&c, &pos, &s, &len); line++) {
			const char *tab = memchr(s, '\t', len);
			simhash_fp fp;
			if (len == 0)
				continue;
			if (!tab || simhash_fp_parse(s, (size_t)(tab - s), &fp) != SIMHASH_OK ||
			    fp.bits == 32) {
				cli_err("%s:%llu: %s", display_name(path), (unsigned long long)line,
					!tab ? "expected HEX<TAB>ID"
					: (tab - s == 8 && simhash_fp_parse(s, 8, &fp) == SIMHASH_OK)
						? "32-bit fingerprints cannot be indexed (64 or 128 bits)"
						: "invalid fingerprint (16 or 32 hex digits expected)");
				ret = -1;
				break;
			}
			if (*bits == 0)
				*bits = fp.bits;
			if (fp.bits != *bits) {
				cli_err("%s:%llu: a %u-bit fingerprint among %u-bit ones", display_name(path),
					(unsigned long long)line, fp.bits, *bits);
				ret = -1;
				break;
			}
			ret = fn(arg, &fp, tab + 1, len - (size_t)(tab + 1 - s), path, line);
		}
	}
	if (ret == 0 && got < 0) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		ret = -1;
	}
	sbuf_free(&buf);
	reader_close(&r);
	return ret;
}

static const unsigned char FPFILE_MAGIC[4] = {0x89, 'S', 'H', 'F'};

/* 1 if path is a binary fingerprint file (by its first bytes). */
static int is_fpfile(const char *path)
{
	unsigned char head[4];
	FILE *f;
	int yes = 0;

	if (!strcmp(path, "-"))
		return 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	yes = fread(head, 1, 4, f) == 4 && memcmp(head, FPFILE_MAGIC, 4) == 0;
	fclose(f);
	return yes;
}

/* Reads a binary fingerprint file (simhash fingerprint --format bin). Its
 * scheme must equal *scheme when both are set; *scheme takes it otherwise. */
static int read_bin(const char *path, unsigned *bits, const char **scheme, char *scheme_buf,
		    line_fn fn, void *arg)
{
	simhash_fpfile *f;
	const char *why = NULL;
	struct sbuf id = {0};
	simhash_err err = simhash_fpfile_open(path, &f, &why);
	uint64_t n;
	int ret = 0;

	if (err) {
		cli_err("%s: %s", path, why ? why : simhash_strerror(err));
		return -1;
	}
	if (simhash_fpfile_bits(f) == 32) {
		cli_err("%s: 32-bit fingerprints cannot be indexed (64 or 128 bits)", path);
		ret = -1;
		goto out;
	}
	if (*bits && simhash_fpfile_bits(f) != *bits) {
		cli_err("%s: %u-bit fingerprints among %u-bit ones", path, simhash_fpfile_bits(f), *bits);
		ret = -1;
		goto out;
	}
	*bits = simhash_fpfile_bits(f);
	if (simhash_fpfile_scheme(f)[0]) {
		if (*scheme && (*scheme)[0] && strcmp(*scheme, simhash_fpfile_scheme(f)) != 0) {
			cli_err("%s: its scheme %s is not the index's %s", path, simhash_fpfile_scheme(f), *scheme);
			ret = -1;
			goto out;
		}
		if (!*scheme || !(*scheme)[0]) {
			snprintf(scheme_buf, SIMHASH_SCHEME_MAX, "%s", simhash_fpfile_scheme(f));
			*scheme = scheme_buf;
		}
	}
	n = simhash_fpfile_count(f);
	for (uint64_t i = 0; i < n && ret == 0; i++) {
		simhash_fp fp;
		const char *s;
		size_t len;
		if (simhash_fpfile_get(f, i, &fp) || simhash_fpfile_id(f, i, &s, &len)) {
			cli_err("%s: damaged record %llu", path, (unsigned long long)i + 1);
			ret = -1;
			break;
		}
		id.len = 0;
		if (idesc_escape(&id, s, len)) {
			cli_err("out of memory");
			ret = -1;
			break;
		}
		ret = fn(arg, &fp, id.p ? id.p : "", id.len, path, i + 1);
	}
out:
	sbuf_free(&id);
	simhash_fpfile_close(f);
	return ret;
}

/* Either form. */
int index_read_any(const char *path, unsigned *bits, const char **scheme, char *scheme_buf,
		    line_fn fn, void *arg)
{
	if (is_fpfile(path))
		return read_bin(path, bits, scheme, scheme_buf, fn, arg);
	return index_read_text(path, bits, fn, arg);
}
