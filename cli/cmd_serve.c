/* cmd_serve.c - `simhash serve`: the HTTP service (server/) over a store.
 *
 * Without --store it serves /v1/fingerprint and /v1/compare (and the page)
 * with the configuration the flags give; the document routes answer 503.
 * With --store the configuration is the store's own, so fingerprints sent
 * and stored always share one scheme.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../server/api.h"
#include "../server/http.h"
#include "../server/metrics.h"
#include "commands.h"
#include "config_opts.h"
#include "util.h"

enum {
	OPT_STORE,
	OPT_LISTEN,
	OPT_TOKEN_FILE,
	OPT_THREADS,
	OPT_WRITERS,
	OPT_MAX_CONN,
	OPT_MAX_BODY,
	OPT_MAX_TEXT,
	OPT_MAX_BATCH,
	OPT_IDLE,
	OPT_REQ_TIMEOUT,
	OPT_HEADER_TIMEOUT,
	OPT_ALLOW_HOST,
	OPT_NO_TOKEN,
};

static const struct cli_opt opts[] = {
	[OPT_STORE] = { "store", 's', "PATH", "serve the store at PATH (simhash store create)" },
	[OPT_LISTEN] = { "listen", 'l', "HOST:PORT", "address to listen on (default 127.0.0.1:8080)" },
	[OPT_TOKEN_FILE] = { "token-file", 0, "FILE",
			     "writes need 'Authorization: Bearer TOKEN', TOKEN read from FILE" },
	[OPT_THREADS] = { "threads", 0, "N", "I/O threads (default 2)" },
	[OPT_WRITERS] = { "writers", 0, "N", "threads waiting on durable writes (default 64)" },
	[OPT_MAX_CONN] = { "max-connections", 0, "N", "open connections at most (default 1000)" },
	[OPT_MAX_BODY] = { "max-body", 0, "BYTES", "request body limit (default 16777216)" },
	[OPT_MAX_TEXT] = { "max-text", 0, "BYTES", "limit of one text (default 1048576)" },
	[OPT_MAX_BATCH] = { "max-batch", 0, "N", "documents in one batch (default 1000)" },
	[OPT_IDLE] = { "idle-timeout", 0, "SECONDS", "close silent connections (default 30)" },
	[OPT_REQ_TIMEOUT] = { "request-timeout", 0, "SECONDS",
			      "close a client whose request takes longer (default 60)" },
	[OPT_HEADER_TIMEOUT] = { "header-timeout", 0, "SECONDS",
				 "close a client whose request head takes longer (default 10)" },
	[OPT_ALLOW_HOST] = { "allow-host", 0, "NAME",
			     "answer requests with Host NAME too (repeatable; '*' for any)" },
	[OPT_NO_TOKEN] = { "no-token", 0, NULL,
			   "allow writes without a token on a non-loopback address" },
	{ NULL, 0, NULL, NULL },
};

static void help(void)
{
	fputs("usage: simhash serve [--store PATH] [--listen HOST:PORT] [OPTION]...\n\n"
	      "Serves the JSON API (docs/http.md) and a web page at '/'. Stops on SIGTERM\n"
	      "or SIGINT after finishing the requests in flight. The fingerprint flags\n"
	      "apply only without --store (a store keeps its own configuration).\n",
	      stdout);
	cli_opts_help(stdout, opts, 1);
}

/* Reads the token: the file's first line, without its end of line. */
static char *read_token(const char *path)
{
	struct sbuf b = { 0 };
	size_t n;

	if (read_path_all(path, &b)) {
		cli_err("serve: %s: %s", path, strerror(errno));
		return NULL;
	}
	for (n = 0; n < b.len && b.p[n] != '\n' && b.p[n] != '\r'; n++)
		;
	if (n == 0) {
		cli_err("serve: %s: the token file is empty", path);
		sbuf_free(&b);
		return NULL;
	}
	b.p[n] = '\0';
	return b.p;
}

static int num(const char *opt, const char *arg, unsigned long lo, unsigned long hi,
	       unsigned long *out)
{
	if (parse_uint(arg, lo, hi, out)) {
		cli_err("serve: --%s: expected a number in %lu..%lu, got '%s'", opt, lo, hi, arg);
		return -1;
	}
	return 0;
}

/* What the command line of `simhash serve` sets. */
struct serve_args {
	struct sh_serve_opts so;
	struct api api;
	struct cli_config cc;
	const char *store_path, *token_file;
	const char **hosts; /* --allow-host NAMEs, room for one per argument */
	char *token;
};

/* One of serve's own options: 0, or -1 after printing why. */
static int set_opt(struct serve_args *a, int o, const char *arg)
{
	unsigned long v;

	switch (o) {
	case OPT_STORE: a->store_path = arg; break;
	case OPT_LISTEN: a->so.listen = arg; break;
	case OPT_TOKEN_FILE: a->token_file = arg; break;
	case OPT_THREADS:
		if (num("threads", arg, 1, 64, &v)) return -1;
		a->so.threads = (unsigned)v;
		break;
	case OPT_WRITERS:
		if (num("writers", arg, 0, 1024, &v)) return -1;
		a->so.writers = (unsigned)v;
		break;
	case OPT_MAX_CONN:
		if (num("max-connections", arg, 1, 100000, &v)) return -1;
		a->so.max_connections = (unsigned)v;
		break;
	case OPT_MAX_BODY:
		if (num("max-body", arg, 1, 1ul << 30, &v)) return -1;
		a->api.limits.max_body = v;
		break;
	case OPT_MAX_TEXT:
		if (num("max-text", arg, 1, 1ul << 30, &v)) return -1;
		a->api.limits.max_text = v;
		break;
	case OPT_MAX_BATCH:
		if (num("max-batch", arg, 1, 1000000, &v)) return -1;
		a->api.limits.max_batch = v;
		break;
	case OPT_IDLE:
		if (num("idle-timeout", arg, 1, 86400, &v)) return -1;
		a->so.idle_timeout = (unsigned)v;
		break;
	case OPT_REQ_TIMEOUT:
		if (num("request-timeout", arg, 1, 86400, &v)) return -1;
		a->so.request_timeout = (unsigned)v;
		break;
	case OPT_HEADER_TIMEOUT:
		if (num("header-timeout", arg, 1, 86400, &v)) return -1;
		a->so.header_timeout = (unsigned)v;
		break;
	case OPT_ALLOW_HOST:
		if (!arg[0]) {
			cli_err("serve: --allow-host: expected a host name, got ''");
			return -1;
		}
		a->hosts[a->so.n_allow_hosts++] = arg;
		break;
	case OPT_NO_TOKEN: a->so.no_token = 1; break;
	}
	return 0;
}

/* EXIT_OK, EXIT_USAGE after printing why, or -1 after --help. */
static int parse(int argc, char **argv, struct serve_args *a)
{
	struct cli_parse p;
	int o, ret = EXIT_USAGE;

	cli_parse_begin(&p, "serve", opts, &a->cc, argc, argv);
	while ((o = cli_parse_next(&p)) != CLI_END) {
		if (o == CLI_HELP) {
			help();
			ret = -1;
			goto out;
		}
		if (o == CLI_BAD || set_opt(a, o, p.arg))
			goto out;
	}
	if (p.optind < argc) {
		cli_err("serve: unexpected argument '%s'", argv[p.optind]);
		goto out;
	}
	if (a->so.no_token && a->token_file) {
		cli_err("serve: --no-token and --token-file exclude each other");
		goto out;
	}
	a->so.allow_hosts = a->hosts;
	ret = EXIT_OK;
out:
	cli_parse_end(&p);
	return ret;
}

/* Opens the store (if any) and serves until a signal ends it. EXIT_OK, or
 * EXIT_FAIL after printing why. */
static int serve(struct serve_args *a)
{
	char err[512];
	int ret = EXIT_FAIL;

	if (a->token_file && !(a->token = read_token(a->token_file)))
		return EXIT_FAIL;
	a->so.token = a->token;
	a->api.cfg = a->cc.cfg;
	if (a->store_path && sh_store_open(&a->api, a->store_path, err, sizeof(err))) {
		cli_err("serve: %s", err);
		return EXIT_FAIL;
	}
	if (simhash_config_scheme(&a->api.cfg, a->api.scheme, sizeof(a->api.scheme))) {
		cli_err("serve: invalid configuration");
		goto out_store;
	}
	if (sh_metrics_new(&a->api.metrics)) {
		cli_err("serve: out of memory");
		goto out_store;
	}
	a->api.started = (uint64_t)time(NULL);
	sh_serve_block_signals();
	if (sh_serve_run(&a->api, &a->so, err, sizeof(err))) {
		cli_err("serve: %s", err);
		goto out_metrics;
	}
	ret = EXIT_OK;
out_metrics:
	sh_metrics_free(a->api.metrics);
out_store:
	if (sh_store_close(&a->api, err, sizeof(err))) {
		cli_err("serve: %s", err);
		ret = EXIT_FAIL;
	}
	return ret;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.hosts = calloc((size_t)argc + 1, sizeof(*a.hosts));
	if (!a.hosts) {
		cli_err("serve: out of memory");
		return EXIT_FAIL;
	}
	api_limits_init(&a.api.limits);
	sh_serve_opts_init(&a.so);
	cli_config_init(&a.cc);
	ret = parse(argc, argv, &a);
	if (ret == EXIT_OK)
		ret = cli_config_finish(&a.cc, "serve");
	if (ret == EXIT_OK)
		ret = serve(&a);
	free(a.hosts);
	free(a.token);
	cli_config_free(&a.cc);
	return ret < 0 ? EXIT_OK : ret;
}
