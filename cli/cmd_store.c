/* cmd_store.c - `simhash store`: create, add, query, get, delete, expire,
 * stats, export, import and verify on a store (the library's LMDB store).
 * This file holds the dispatch, the options and the subcommands on stored
 * documents; add, import and query, which read documents, are in
 * store_docs.c (store_cmd.h).
 *
 * `verify` opens the store read-only, so it runs beside a writer (a running
 * `simhash serve`).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "commands.h"
#include "config_opts.h"
#include "store_cmd.h"
#include "util.h"

/* ---- the subcommands on stored documents */

static int st_create(int argc, char **argv)
{
	simhash_error err;
	struct cli_config cc;
	simhash_store *st;
	struct opts o;
	simhash_err e;
	int ret, i;

	cli_config_init(&cc);
	ret = store_parse("store create", 0, &cc, argc, argv, &o, &i);
	if (ret)
		goto out;
	if (i + 1 < argc) {
		cli_err("store create: unexpected argument '%s'", argv[i + 1]);
		ret = EXIT_USAGE;
		goto out;
	}
	if ((ret = cli_config_finish(&cc, "store create")) != EXIT_OK)
		goto out;
	e = simhash_store_create(argv[i], &cc.cfg, &st, &err);
	if (e) {
		cli_err("%s", err.msg);
		ret = e == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	simhash_store_close(st);
out:
	free(o.fps);
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}

/* get and delete: each ID argument. */
static int st_ids(int argc, char **argv, int del)
{
	const char *cmd = del ? "store delete" : "store get";
	simhash_store_results *r = NULL;
	struct sbuf out = { 0 };
	simhash_store *st;
	simhash_error se;
	struct opts o;
	int ret, i;

	ret = store_parse(cmd, 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 >= argc) {
		cli_err("%s: missing ID", cmd);
		return EXIT_USAGE;
	}
	if (!(st = store_open(argv[i], del ? 0 : SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	if (simhash_store_results_new(&r)) {
		simhash_store_close(st);
		return EXIT_FAIL;
	}
	for (int a = i + 1; a < argc; a++) {
		size_t len = strlen(argv[a]);
		simhash_err e;
		int found = 0;

		if (!len || len > SIMHASH_STORE_ID_MAX) {
			cli_err("%s: id must be 1 to %d bytes", cmd, SIMHASH_STORE_ID_MAX);
			ret = EXIT_FAIL;
			continue;
		}
		if (del) {
			e = simhash_store_delete(st, argv[a], len, &found, &se);
		} else {
			e = simhash_store_get(st, argv[a], len, r, &se);
			found = simhash_store_results_count(r) == 1;
			if (!e && found && (store_add_json_doc(&out, simhash_store_results_get(r, 0), 0) ||
					    sbuf_addc(&out, '\n')))
				e = SIMHASH_ENOMEM;
			store_write_out(stdout, &out);
		}
		if (e) {
			store_fail(cmd, &se);
			ret = EXIT_FAIL;
			break;
		}
		if (!found) {
			cli_err("%s: no document with id '%s'", cmd, argv[a]);
			ret = EXIT_FAIL;
		}
	}
	sbuf_free(&out);
	simhash_store_results_free(r);
	simhash_store_close(st);
	return ret;
}

static int st_get(int argc, char **argv) { return st_ids(argc, argv, 0); }
static int st_delete(int argc, char **argv) { return st_ids(argc, argv, 1); }

/* AGE: N seconds, or N followed by s, m, h or d. */
static int parse_age(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int64_t mul = 1;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || (end[0] && end[1]))
		return -1;
	switch (*end) {
	case 0: case 's': break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	default: return -1;
	}
	if (v > (unsigned long long)(INT64_MAX / mul))
		return -1;
	*out = (int64_t)v * mul;
	return 0;
}

static int st_expire(int argc, char **argv)
{
	simhash_store *st;
	struct opts o;
	int64_t age;
	size_t n;
	simhash_error se;
	simhash_err e;
	int ret, i;

	ret = store_parse("store expire", BIT(OPT_OLDER), NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!o.older || parse_age(o.older, &age)) {
		cli_err("store expire: %s --older-than AGE (N, Ns, Nm, Nh or Nd)",
			o.older ? "invalid" : "missing");
		return EXIT_USAGE;
	}
	if (i + 1 < argc) {
		cli_err("store expire: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = store_open(argv[i], 0)))
		return EXIT_FAIL;
	e = simhash_store_expire(st, (int64_t)time(NULL) - age, &n, &se);
	if (e)
		store_fail("store expire", &se);
	else
		printf("expired %zu documents\n", n);
	simhash_store_close(st);
	return e ? EXIT_FAIL : EXIT_OK;
}

static int st_stats(int argc, char **argv)
{
	simhash_store_stats s;
	simhash_store *st;
	simhash_error se;
	struct opts o;
	simhash_err e;
	int ret, i;

	int rebuilt;

	simhash_store_stats_init(&s);

	ret = store_parse("store stats", BIT(OPT_JSON), NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store stats: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = store_open(argv[i], SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	if ((e = simhash_store_stats_get(st, &s, &se)) != SIMHASH_OK) {
		store_fail("store stats", &se);
		simhash_store_close(st);
		return EXIT_FAIL;
	}
	rebuilt = s.open_replayed == UINT64_MAX;
	if (o.json)
		printf("{\"documents\":%llu,\"bits\":%u,\"scheme\":\"%s\",\"format_version\":%u,"
		       "\"file_bytes\":%llu,\"open_seconds\":%.3f,\"open_index\":\"%s\","
		       "\"open_replayed\":%llu}\n",
		       (unsigned long long)s.n_docs, s.bits, simhash_store_scheme(st),
		       s.format_version, (unsigned long long)s.file_bytes, s.open_seconds,
		       rebuilt ? "rebuilt" : "checkpoint",
		       rebuilt ? 0ull : (unsigned long long)s.open_replayed);
	else
		printf("documents\t%llu\nbits\t%u\nscheme\t%s\nformat_version\t%u\n"
		       "file_bytes\t%llu\nopen_seconds\t%.3f\nopen_index\t%s\nopen_replayed\t%llu\n",
		       (unsigned long long)s.n_docs, s.bits, simhash_store_scheme(st),
		       s.format_version, (unsigned long long)s.file_bytes, s.open_seconds,
		       rebuilt ? "rebuilt" : "checkpoint",
		       rebuilt ? 0ull : (unsigned long long)s.open_replayed);
	simhash_store_close(st);
	return EXIT_OK;
}

struct export_run {
	FILE *f;
	struct sbuf out;
	const char *scheme;
	int failed;
};

static int export_one(const simhash_store_match *m, void *arg)
{
	struct export_run *x = arg;

	if (store_add_json_doc(&x->out, m, 0)) {
		x->failed = 1;
		return 1;
	}
	/* the scheme goes in every line, as in `fingerprint --json` */
	x->out.len--;
	if (sbuf_adds(&x->out, ",\"scheme\":") ||
	    sbuf_add_json_str(&x->out, x->scheme, strlen(x->scheme)) || sbuf_adds(&x->out, "}\n")) {
		x->failed = 1;
		return 1;
	}
	if (x->out.len > (1 << 16) && store_write_out(x->f, &x->out)) {
		x->failed = 1;
		return 1;
	}
	return 0;
}

static int st_export(int argc, char **argv)
{
	struct export_run x = { stdout, { 0 }, NULL, 0 };
	simhash_store *st;
	simhash_error se;
	struct opts o;
	simhash_err e;
	int ret, i;

	ret = store_parse("store export", BIT(OPT_OUTPUT), NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store export: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = store_open(argv[i], SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	if (o.output && !(x.f = fopen(o.output, "w"))) {
		cli_err("%s: %s", o.output, strerror(errno));
		simhash_store_close(st);
		return EXIT_FAIL;
	}
	x.scheme = simhash_store_scheme(st);
	e = simhash_store_each(st, export_one, &x, &se);
	if (e)
		store_fail("store export", &se);
	else if (x.failed || store_write_out(x.f, &x.out) || (o.output && fflush(x.f)))
		cli_err("store export: %s", o.output ? o.output : "write failed");
	ret = e || x.failed ? EXIT_FAIL : EXIT_OK;
	if (o.output && fclose(x.f))
		ret = EXIT_FAIL;
	sbuf_free(&x.out);
	simhash_store_close(st);
	return ret;
}

static void verify_problem(const char *problem, void *arg)
{
	cli_err("%s: %s", (const char *)arg, problem);
}

static int st_verify(int argc, char **argv)
{
	simhash_store_stats s;
	simhash_store *st;
	simhash_error se;
	uint64_t n = 0;
	struct opts o;
	simhash_err e;
	int ret, i;

	ret = store_parse("store verify", 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store verify: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (!(st = store_open(argv[i], SIMHASH_STORE_RDONLY)))
		return EXIT_FAIL;
	simhash_store_stats_init(&s);
	e = simhash_store_verify(st, verify_problem, argv[i], &n, &se);
	if (e)
		store_fail("store verify", &se);
	else if (n)
		cli_err("%s: %llu problems", argv[i], (unsigned long long)n);
	else if (simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK)
		printf("%s: ok, %llu documents\n", argv[i], (unsigned long long)s.n_docs);
	simhash_store_close(st);
	return e || n ? EXIT_FAIL : EXIT_OK;
}

/* A store of an older format version is upgraded by any open for writing;
 * this one opens for nothing else, and says which it was. */
static int st_upgrade(int argc, char **argv)
{
	simhash_store *st;
	struct opts o;
	int ret, i;

	ret = store_parse("store upgrade", 0, NULL, argc, argv, &o, &i);
	free(o.fps);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (i + 1 < argc) {
		cli_err("store upgrade: unexpected argument '%s'", argv[i + 1]);
		return EXIT_USAGE;
	}
	if (simhash_store_open(argv[i], SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK) {
		simhash_store_close(st);
		printf("%s: format version %d already\n", argv[i], SIMHASH_STORE_FORMAT_VERSION);
		return EXIT_OK;
	}
	if (!(st = store_open(argv[i], 0)))
		return EXIT_FAIL;
	simhash_store_close(st);
	printf("%s: upgraded to format version %d\n", argv[i], SIMHASH_STORE_FORMAT_VERSION);
	return EXIT_OK;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subs[] = {
	{ "create", st_create }, { "add", store_cmd_add },       { "query", store_cmd_query },
	{ "get", st_get },       { "delete", st_delete }, { "expire", st_expire },
	{ "stats", st_stats },   { "export", st_export }, { "import", store_cmd_import },
	{ "verify", st_verify }, { "upgrade", st_upgrade },
};

int cmd_store(int argc, char **argv)
{
	if (argc < 2) {
		store_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		store_usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	cli_err("store: unknown command '%s' (see 'simhash store --help')", argv[1]);
	return EXIT_USAGE;
}
