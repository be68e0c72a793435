/* cmd_serve.c - `simhash serve`: the HTTP service (server/) over a store, as
 * the program simhash-serve, which `simhash serve` runs in its own place
 * (serve_exec.c says why). argv is serve's own: argv[0] the program, then
 * the options, so simhash-serve also runs by itself.
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

/* What the command line sets besides the server's options and limits. */
struct serve_args {
	const char *store_path, *token_file;
	const char **hosts; /* --allow-host NAMEs */
};

/* Parses the options into so, api's limits and sa. EXIT_OK, -1 after
 * --help, or EXIT_USAGE after the message. */
static int parse(struct cli_parse *p, int argc, char **argv, struct sh_serve_opts *so,
		 struct api *api, struct serve_args *sa)
{
	unsigned long v;
	int o;

	while ((o = cli_parse_next(p)) != CLI_END) {
		if (o == CLI_HELP) {
			help();
			return -1;
		}
		if (o == CLI_BAD)
			return EXIT_USAGE;
		switch (o) {
		case OPT_STORE: sa->store_path = p->arg; break;
		case OPT_LISTEN: so->listen = p->arg; break;
		case OPT_TOKEN_FILE: sa->token_file = p->arg; break;
		case OPT_THREADS:
			if (num("threads", p->arg, 1, 64, &v)) return EXIT_USAGE;
			so->threads = (unsigned)v;
			break;
		case OPT_WRITERS:
			if (num("writers", p->arg, 0, 1024, &v)) return EXIT_USAGE;
			so->writers = (unsigned)v;
			break;
		case OPT_MAX_CONN:
			if (num("max-connections", p->arg, 1, 100000, &v)) return EXIT_USAGE;
			so->max_connections = (unsigned)v;
			break;
		case OPT_MAX_BODY:
			if (num("max-body", p->arg, 1, 1ul << 30, &v)) return EXIT_USAGE;
			api->limits.max_body = v;
			break;
		case OPT_MAX_TEXT:
			if (num("max-text", p->arg, 1, 1ul << 30, &v)) return EXIT_USAGE;
			api->limits.max_text = v;
			break;
		case OPT_MAX_BATCH:
			if (num("max-batch", p->arg, 1, 1000000, &v)) return EXIT_USAGE;
			api->limits.max_batch = v;
			break;
		case OPT_IDLE:
			if (num("idle-timeout", p->arg, 1, 86400, &v)) return EXIT_USAGE;
			so->idle_timeout = (unsigned)v;
			break;
		case OPT_REQ_TIMEOUT:
			if (num("request-timeout", p->arg, 1, 86400, &v)) return EXIT_USAGE;
			so->request_timeout = (unsigned)v;
			break;
		case OPT_HEADER_TIMEOUT:
			if (num("header-timeout", p->arg, 1, 86400, &v)) return EXIT_USAGE;
			so->header_timeout = (unsigned)v;
			break;
		case OPT_ALLOW_HOST:
			if (!p->arg[0]) {
				cli_err("serve: --allow-host: expected a host name, got ''");
				return EXIT_USAGE;
			}
			sa->hosts[so->n_allow_hosts++] = p->arg;
			break;
		case OPT_NO_TOKEN: so->no_token = 1; break;
		}
	}
	if (p->optind < argc) {
		cli_err("serve: unexpected argument '%s'", argv[p->optind]);
		return EXIT_USAGE;
	}
	if (so->no_token && sa->token_file) {
		cli_err("serve: --no-token and --token-file exclude each other");
		return EXIT_USAGE;
	}
	so->allow_hosts = sa->hosts;
	return EXIT_OK;
}

static int serve(int argc, char **argv)
{
	struct sh_serve_opts so;
	struct serve_args sa = { NULL, NULL, NULL };
	struct cli_config cc;
	struct cli_parse p;
	struct api api;
	char *token = NULL, err[512];
	int ret;

	memset(&api, 0, sizeof(api));
	sa.hosts = calloc((size_t)argc + 1, sizeof(*sa.hosts));
	if (!sa.hosts) {
		cli_err("serve: out of memory");
		return EXIT_FAIL;
	}
	api_limits_init(&api.limits);
	sh_serve_opts_init(&so);
	cli_config_init(&cc);
	cli_parse_begin(&p, "serve", opts, &cc, argc, argv);
	ret = parse(&p, argc, argv, &so, &api, &sa);
	if (ret) {
		ret = ret < 0 ? EXIT_OK : ret;
		goto out;
	}
	if ((ret = cli_config_finish(&cc, "serve")))
		goto out;
	ret = EXIT_FAIL;
	if (sa.token_file && !(token = read_token(sa.token_file)))
		goto out;
	so.token = token;
	api.cfg = cc.cfg;
	if (sa.store_path && sh_store_open(&api, sa.store_path, err, sizeof(err))) {
		cli_err("serve: %s", err);
		goto out;
	}
	if (simhash_config_scheme(&api.cfg, api.scheme, sizeof(api.scheme))) {
		cli_err("serve: invalid configuration");
		goto out_store;
	}
	if (sh_metrics_new(&api.metrics)) {
		cli_err("serve: out of memory");
		goto out_store;
	}
	api.started = (uint64_t)time(NULL);
	sh_serve_block_signals();
	if (sh_serve_run(&api, &so, err, sizeof(err))) {
		cli_err("serve: %s", err);
		goto out_metrics;
	}
	ret = EXIT_OK;
out_metrics:
	sh_metrics_free(api.metrics);
out_store:
	if (sh_store_close(&api, err, sizeof(err))) {
		cli_err("serve: %s", err);
		ret = EXIT_FAIL;
	}
out:
	free(sa.hosts);
	free(token);
	cli_parse_end(&p);
	cli_config_free(&cc);
	return ret;
}

int main(int argc, char **argv)
{
	int ret = serve(argc, argv);

	if (fflush(stdout) || ferror(stdout)) {
		cli_err("standard output: %s", strerror(errno));
		return EXIT_FAIL;
	}
	return ret;
}
