/* test_kat.c - known-answer fingerprints (tests/data/kat/fingerprints.tsv)
 * through every code path: the library with its vector paths (AVX-512 votes,
 * AVX2 normalization, where the CPU has them), with the scalar paths
 * forced, and given in pieces of 5 bytes normalized in slices of 3
 * (simhash_fingerprint_begin; long rows taken in windows), with an interrupt
 * hook that never fires, asked after every unit of work and with every loop
 * reporting unit by unit, and the command (`simhash fingerprint`) with one and with three
 * threads. Every row also checks its scheme string, and that the scheme
 * string parses back to a config giving the same fingerprint.
 *
 * The table pins the fingerprint contract: the default scheme (v2) and every
 * feature mode, width, weight, hash and normalization option, on texts that
 * cover the empty text, one CJK character, invalid UTF-8, 4-byte characters,
 * NFKC and case folding (the ICU data), traditional characters (the OpenCC
 * table), HTML, repeats, and long texts in each length zone of v2. A failure
 * means fingerprints changed: that needs a new scheme version, not a new table.
 */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include "../test.h"
#include "simhash.h"
#include "commands.h"
#include "config_opts.h"
#include "util.h"

void sh_ctx_set_simd(simhash_ctx *ctx, int on);
simhash_err sh_ctx_set_stream(simhash_ctx *ctx, size_t slice, size_t min_chars);
void sh_ctx_set_intr_every(simhash_ctx *ctx, size_t every, size_t step);

static size_t hook_polls; /* the times it was asked, over the table */

static int never(void *arg)
{
	++*(size_t *)arg;
	return 0;
}

#define KAT "tests/data/kat/fingerprints.tsv"
#define MAX_ROWS 2048

struct row {
	char *opts, *scheme, *hex;
	char *text;
	size_t len;
};

static struct row rows[MAX_ROWS];
static size_t n_rows;
static char tmpdir[] = "/tmp/simhash-kat-XXXXXX";

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undoes gen.py's escapes in place; returns the length. */
static size_t unescape(char *s)
{
	size_t i = 0, k = 0;

	while (s[i]) {
		if (s[i] != '\\') {
			s[k++] = s[i++];
			continue;
		}
		switch (s[i + 1]) {
		case 'n': s[k++] = '\n'; i += 2; break;
		case 't': s[k++] = '\t'; i += 2; break;
		case 'r': s[k++] = '\r'; i += 2; break;
		case '\\': s[k++] = '\\'; i += 2; break;
		case 'x':
			s[k++] = (char)(hexval(s[i + 2]) * 16 + hexval(s[i + 3]));
			i += 4;
			break;
		default: s[k++] = s[i++]; break;
		}
	}
	s[k] = '\0';
	return k;
}

static int load(void)
{
	FILE *f = fopen(KAT, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		fprintf(stderr, "%s: cannot open (run from the repository root)\n", KAT);
		return 0;
	}
	while ((n = getline(&line, &cap, f)) > 0 && n_rows < MAX_ROWS) {
		char *a, *b, *c;
		struct row *r = &rows[n_rows];
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		a = strchr(line, '\t');
		b = a ? strchr(a + 1, '\t') : NULL;
		c = b ? strchr(b + 1, '\t') : NULL;
		if (!c) {
			fprintf(stderr, "%s: bad row %zu\n", KAT, n_rows + 1);
			break;
		}
		*a = *b = *c = '\0';
		r->opts = strdup(line);
		r->scheme = strdup(a + 1);
		r->text = strdup(b + 1);
		r->len = unescape(r->text);
		r->hex = strdup(c + 1);
		n_rows++;
	}
	free(line);
	fclose(f);
	return n_rows > 0;
}

/* Splits opts ("-": none) into argv after argv0 and the extra arguments. */
static int make_argv(const char *argv0, const char *opts, char **extra, int n_extra,
		     char **argv, char *buf, size_t cap)
{
	int argc = 0;
	char *tok;

	argv[argc++] = (char *)argv0;
	snprintf(buf, cap, "%s", strcmp(opts, "-") ? opts : "");
	for (tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	for (int i = 0; i < n_extra; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;
	return argc;
}

/* The config the options of a row describe, through the command's parser. */
static int row_config(const struct row *r, struct cli_config *cc)
{
	struct cli_parse p;
	char *argv[32], buf[512];
	int argc = make_argv("kat", r->opts, NULL, 0, argv, buf, sizeof buf), o, ok = 1;

	cli_config_init(cc);
	cli_parse_begin(&p, "kat", NULL, cc, argc, argv);
	while ((o = cli_parse_next(&p)) != CLI_END)
		ok = 0;
	cli_parse_end(&p);
	return ok && cli_config_finish(cc, "kat") == EXIT_OK;
}

static int fp_is(simhash_ctx *ctx, const struct row *r, int simd, const char *path)
{
	simhash_fp fp;
	char hex[SIMHASH_HEX_MAX];
	size_t polls = 0;

	sh_ctx_set_simd(ctx, simd != 0);
	if (simd == 3) {
		/* a hook that never fires */
		sh_ctx_set_intr_every(ctx, 1, 1);
		simhash_err err = simhash_ctx_set_interrupt(ctx, never, &polls);
		if (!err)
			err = simhash_fingerprint(ctx, r->text, r->len, &fp, NULL);
		simhash_ctx_set_interrupt(ctx, NULL, NULL);
		hook_polls += polls;
		if (err)
			return 0;
	} else if (simd == 2) {
		/* in pieces of 5 bytes, normalized in slices of 3 */
		simhash_err err = sh_ctx_set_stream(ctx, 3, 1);
		if (!err)
			err = simhash_fingerprint_begin(ctx);
		for (size_t i = 0; !err && i < r->len; i += 5)
			err = simhash_fingerprint_update(ctx, r->text + i, r->len - i < 5 ? r->len - i : 5, NULL);
		if (err || simhash_fingerprint_final(ctx, &fp, NULL) != SIMHASH_OK)
			return 0;
	} else if (simhash_fingerprint(ctx, r->text, r->len, &fp, NULL) != SIMHASH_OK) {
		return 0;
	}
	simhash_fp_format(&fp, hex);
	if (strcmp(hex, r->hex)) {
		fprintf(stderr, "%s: options '%s', text '%.40s': %s, table %s\n", path, r->opts,
			r->text, hex, r->hex);
		return 0;
	}
	return 1;
}

static void test_library_paths_give_the_table(void)
{
	size_t bad = 0;

	CHECK(n_rows > 500);
	for (size_t i = 0; i < n_rows; i++) {
		struct cli_config cc;
		simhash_config back;
		simhash_ctx *ctx = NULL, *ctx2 = NULL;
		char s[SIMHASH_SCHEME_MAX];

		if (!row_config(&rows[i], &cc)) {
			fprintf(stderr, "row %zu: options '%s' refused\n", i + 1, rows[i].opts);
			bad++;
			continue;
		}
		if (simhash_config_scheme(&cc.cfg, s, sizeof s) || strcmp(s, rows[i].scheme)) {
			fprintf(stderr, "row %zu: scheme %s, table %s\n", i + 1, s, rows[i].scheme);
			bad++;
		}
		if (simhash_ctx_new(&cc.cfg, &ctx) || !fp_is(ctx, &rows[i], 1, "vector") ||
		    !fp_is(ctx, &rows[i], 0, "scalar") || !fp_is(ctx, &rows[i], 2, "in pieces") ||
		    !fp_is(ctx, &rows[i], 3, "with a hook"))
			bad++;
		/* the scheme string alone selects the same fingerprints */
		simhash_config_init(&back);
		back.idf = cc.cfg.idf;
		back.stopwords = cc.cfg.stopwords;
		if (simhash_config_from_scheme(rows[i].scheme, &back) ||
		    simhash_ctx_new(&back, &ctx2) || !fp_is(ctx2, &rows[i], 1, "from scheme"))
			bad++;
		simhash_ctx_free(ctx);
		simhash_ctx_free(ctx2);
		cli_config_free(&cc);
	}
	CHECK(bad == 0);
	CHECK(hook_polls > 100000); /* asked all along (each long row: thousands) */
}

/* Runs `simhash fingerprint -j JOBS OPTS FILES...` in-process; output in out. */
static int run_cli(const char *opts, const char *jobs, char **files, int n, const char *out)
{
	char *argv[64], buf[512], *extra[40];
	int argc, fd, saved, ret;

	extra[0] = "-j";
	extra[1] = (char *)jobs;
	for (int i = 0; i < n; i++)
		extra[2 + i] = files[i];
	argc = make_argv("fingerprint", opts, extra, n + 2, argv, buf, sizeof buf);
	fflush(stdout);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	saved = dup(1);
	dup2(fd, 1);
	close(fd);
	ret = cmd_fingerprint(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return ret;
}

static void test_command_with_one_and_many_threads_gives_the_table(void)
{
	size_t i = 0, bad = 0;

	if (!mkdtemp(tmpdir)) {
		CHECK(0);
		return;
	}
	while (i < n_rows) {
		char *files[32], out[64], line[256];
		size_t j = i;
		int n = 0;

		/* one group: the rows of one option string, in table order */
		while (j < n_rows && !strcmp(rows[j].opts, rows[i].opts) && n < 32) {
			char path[64];
			FILE *f;
			snprintf(path, sizeof path, "%s/t%02d", tmpdir, n);
			f = fopen(path, "wb");
			fwrite(rows[j].text, 1, rows[j].len, f);
			fclose(f);
			files[n++] = strdup(path);
			j++;
		}
		snprintf(out, sizeof out, "%s/out", tmpdir);
		for (int t = 0; t < 2; t++) {
			FILE *f;
			size_t k = i;
			if (run_cli(rows[i].opts, t ? "3" : "1", files, n, out) != 0) {
				fprintf(stderr, "cli: options '%s' failed\n", rows[i].opts);
				bad++;
				continue;
			}
			f = fopen(out, "r");
			while (f && fgets(line, sizeof line, f) && k < j) {
				line[strcspn(line, "\t")] = '\0';
				if (strcmp(line, rows[k].hex)) {
					fprintf(stderr, "cli -j %s: options '%s', row %zu: %s, table %s\n",
						t ? "3" : "1", rows[i].opts, k + 1, line, rows[k].hex);
					bad++;
				}
				k++;
			}
			if (f)
				fclose(f);
			if (k != j) {
				fprintf(stderr, "cli: options '%s': %zu lines, want %zu\n", rows[i].opts,
					k - i, j - i);
				bad++;
			}
		}
		for (int f = 0; f < n; f++) {
			unlink(files[f]);
			free(files[f]);
		}
		unlink(out);
		i = j;
	}
	rmdir(tmpdir);
	CHECK(bad == 0);
}

static void test_load(void)
{
	CHECK(load());
}

TEST_MAIN("kat",
	  TEST(test_load),
	  TEST(test_library_paths_give_the_table),
	  TEST(test_command_with_one_and_many_threads_gives_the_table))
