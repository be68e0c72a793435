/* simhash.c - the PostgreSQL type `simhash` and the SQL functions over it.
 *
 * Invariants:
 *  1. A `simhash` value holds 8 or 16 payload bytes (64 or 128 bits), most
 *     significant first; nothing else is ever stored (input, recv and the casts
 *     check the width).
 *  2. One rule for two widths, the same in every function, operator class
 *     and index: the order is by width (every 64-bit value before every
 *     128-bit one), then by value, so equality, ordering, hashing, DISTINCT,
 *     sorts and ANALYZE take a column of both widths; simhash_within and
 *     `<@` are false across widths (a ball holds its own width only), so an
 *     index may skip entries of the other width without knowing whether
 *     their rows are visible; only distance and similarity, which need the
 *     same width, raise an error. k is 0..128 whatever the widths.
 *  3. simhash_fingerprint() gives the value `simhash fingerprint` prints for the
 *     same text and options: the options string is read with the library's own
 *     simhash_config_set(), the names and values of the command line.
 *  4. A simhash_ctx is cached per call site (fn_extra) for one options string
 *     and freed with the call site's memory context; there is no global state.
 *  5. No message quotes more than QUOTE_MAX bytes of an input, and every
 *     call into the library can be cancelled: each ctx carries the
 *     library's interrupt hook, set to interrupt_pending(), which only reads
 *     PostgreSQL's flags; the library polls it through every long step
 *     (whole-text options and simhash_text_similarity included) and returns
 *     SIMHASH_EINTR, and only then, out of the library, does
 *     CHECK_FOR_INTERRUPTS() raise the cancel (never a longjmp through it).
 */
#include "postgres.h"

#include <string.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "simhash_pg.h"

PG_MODULE_MAGIC;

/* ---------------------------------------------------------------- packing */

static void load_be(const uint8 *p, unsigned n_bytes, shpg_fp *fp)
{
	unsigned i;

	fp->w[0] = fp->w[1] = 0;
	fp->bits = n_bytes * 8;
	for (i = 0; i < n_bytes; i++) {
		unsigned bit = (n_bytes - 1 - i) * 8; /* of the byte's lowest bit */
		fp->w[bit / 64] |= (uint64)p[i] << (bit % 64);
	}
}

static void store_be(const shpg_fp *fp, uint8 *p)
{
	unsigned n_bytes = fp->bits / 8, i;

	for (i = 0; i < n_bytes; i++) {
		unsigned bit = (n_bytes - 1 - i) * 8;
		p[i] = (uint8)(fp->w[bit / 64] >> (bit % 64));
	}
}

static void width_error(size_t n_bytes)
{
	ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			errmsg("simhash: a fingerprint has 8 or 16 bytes, got %zu", n_bytes)));
}

/* s between quote marks q for a message, cut to its first QUOTE_MAX bytes (at
 * a character boundary) with its length when longer: an error on a huge
 * input must not copy it into the reply and the server log (invariant 5). */
#define QUOTE_MAX 40
static const char *quote(const char *s, char q)
{
	size_t len = strlen(s); /* a datum's text: under 1 GB */
	int cut;

	if (len <= QUOTE_MAX)
		return psprintf("%c%s%c", q, s, q);
	cut = pg_mbcliplen(s, (int)len, QUOTE_MAX);
	return psprintf("%c%.*s...%c (%zu bytes)", q, cut, s, q, len);
}

void shpg_unpack(const struct varlena *v, shpg_fp *out)
{
	size_t n = VARSIZE_ANY_EXHDR(v);

	if (n != 8 && n != 16)
		width_error(n);
	load_be((const uint8 *)VARDATA_ANY(v), (unsigned)n, out);
}

struct varlena *shpg_pack(const shpg_fp *fp)
{
	struct varlena *v;

	Assert(fp->bits == 64 || fp->bits == 128);
	v = palloc(VARHDRSZ + fp->bits / 8);
	SET_VARSIZE(v, VARHDRSZ + fp->bits / 8);
	store_be(fp, (uint8 *)VARDATA(v));
	return v;
}

void shpg_check_k(int64 k)
{
	if (k < 0 || k > SHPG_MAX_K)
		ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				errmsg("simhash: distance " INT64_FORMAT " out of range", k),
				errhint("k is between 0 and 128, whatever the width.")));
}

void shpg_check_widths(const shpg_fp *a, const shpg_fp *b)
{
	if (a->bits != b->bits)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("simhash: cannot compare a %u-bit and a %u-bit fingerprint",
				       a->bits, b->bits)));
}

void shpg_ball_unpack(const shpg_ball *b, shpg_fp *fp, int *k)
{
	size_t n = VARSIZE(b) - offsetof(shpg_ball, bytes);

	if (n != 8 && n != 16)
		width_error(n);
	load_be(b->bytes, (unsigned)n, fp);
	*k = b->k;
}

/* ---------------------------------------------------------------- text and binary forms */

/* Parses s (16 or 32 hex digits, spaces around allowed) or raises an error. */
static void parse_hex(const char *s, shpg_fp *fp)
{
	const char *end;
	size_t len;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
		end--;
	len = (size_t)(end - s);
	if (simhash_fp_parse(s, len, fp) != SIMHASH_OK || fp->bits == 32)
		ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("simhash: invalid fingerprint %s", quote(s, '"')),
				errdetail("A fingerprint is 16 or 32 hex digits (64 or 128 bits).")));
}

PG_FUNCTION_INFO_V1(simhash_in);
Datum simhash_in(PG_FUNCTION_ARGS)
{
	shpg_fp fp;

	parse_hex(PG_GETARG_CSTRING(0), &fp);
	PG_RETURN_POINTER(shpg_pack(&fp));
}

PG_FUNCTION_INFO_V1(simhash_out);
Datum simhash_out(PG_FUNCTION_ARGS)
{
	shpg_fp fp;
	char *buf = palloc(SIMHASH_HEX_MAX);

	PG_GETARG_SIMHASH(0, &fp);
	simhash_fp_format(&fp, buf);
	PG_RETURN_CSTRING(buf);
}

PG_FUNCTION_INFO_V1(simhash_recv);
Datum simhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo msg = (StringInfo)PG_GETARG_POINTER(0);
	int n = msg->len - msg->cursor;
	shpg_fp fp;

	if (n != 8 && n != 16)
		width_error((size_t)(n < 0 ? 0 : n));
	load_be((const uint8 *)pq_getmsgbytes(msg, n), (unsigned)n, &fp);
	PG_RETURN_POINTER(shpg_pack(&fp));
}

PG_FUNCTION_INFO_V1(simhash_send);
Datum simhash_send(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_GETARG_VARLENA_PP(0);
	StringInfoData buf;
	shpg_fp fp;

	shpg_unpack(v, &fp);
	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(v), (int)VARSIZE_ANY_EXHDR(v));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* simhash_ball: the radius query of the index operator, text form 'HEX/K'. */
static shpg_ball *ball_make(const shpg_fp *fp, int64 k)
{
	shpg_ball *b;
	size_t size = offsetof(shpg_ball, bytes) + fp->bits / 8;

	shpg_check_k(k);
	b = palloc0(size);
	SET_VARSIZE(b, size);
	b->k = (int32)k;
	store_be(fp, b->bytes);
	return b;
}

PG_FUNCTION_INFO_V1(simhash_ball_in);
Datum simhash_ball_in(PG_FUNCTION_ARGS)
{
	char *s = pstrdup(PG_GETARG_CSTRING(0));
	char *slash = strrchr(s, '/'), *end;
	shpg_fp fp;
	long k;

	if (!slash)
		ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("simhash: invalid ball %s", quote(s, '"')),
				errdetail("A ball is a fingerprint and a distance: HEX/K.")));
	*slash = '\0';
	parse_hex(s, &fp);
	k = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || *end)
		ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("simhash: invalid distance %s", quote(slash + 1, '"'))));
	PG_RETURN_POINTER(ball_make(&fp, k));
}

PG_FUNCTION_INFO_V1(simhash_ball_out);
Datum simhash_ball_out(PG_FUNCTION_ARGS)
{
	shpg_ball *b = (shpg_ball *)PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	char hex[SIMHASH_HEX_MAX];
	shpg_fp fp;
	int k;

	shpg_ball_unpack(b, &fp, &k);
	simhash_fp_format(&fp, hex);
	PG_RETURN_CSTRING(psprintf("%s/%d", hex, k));
}

PG_FUNCTION_INFO_V1(simhash_ball_make);
Datum simhash_ball_make(PG_FUNCTION_ARGS)
{
	shpg_fp fp;

	PG_GETARG_SIMHASH(0, &fp);
	PG_RETURN_POINTER(ball_make(&fp, PG_GETARG_INT32(1)));
}

/* ---------------------------------------------------------------- comparison */

/* The order of the type (invariant 2): by width, then by value. */
static int cmp_args(FunctionCallInfo fcinfo)
{
	shpg_fp a, b;

	PG_GETARG_SIMHASH(0, &a);
	PG_GETARG_SIMHASH(1, &b);
	if (a.bits != b.bits)
		return a.bits < b.bits ? -1 : 1;
	if (a.w[1] != b.w[1])
		return a.w[1] < b.w[1] ? -1 : 1;
	if (a.w[0] != b.w[0])
		return a.w[0] < b.w[0] ? -1 : 1;
	return 0;
}

#define CMP_FN(name, expr)                            \
	PG_FUNCTION_INFO_V1(name);                    \
	Datum name(PG_FUNCTION_ARGS)                  \
	{                                             \
		int c = cmp_args(fcinfo);             \
		PG_RETURN_BOOL(expr);                 \
	}

CMP_FN(simhash_eq, c == 0)
CMP_FN(simhash_ne, c != 0)
CMP_FN(simhash_lt, c < 0)
CMP_FN(simhash_le, c <= 0)
CMP_FN(simhash_gt, c > 0)
CMP_FN(simhash_ge, c >= 0)

PG_FUNCTION_INFO_V1(simhash_cmp);
Datum simhash_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(cmp_args(fcinfo));
}

PG_FUNCTION_INFO_V1(simhash_pg_hash);
Datum simhash_pg_hash(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_GETARG_VARLENA_PP(0);
	shpg_fp fp;

	shpg_unpack(v, &fp);
	return hash_any((const unsigned char *)VARDATA_ANY(v), (int)VARSIZE_ANY_EXHDR(v));
}

PG_FUNCTION_INFO_V1(simhash_hash_extended);
Datum simhash_hash_extended(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_GETARG_VARLENA_PP(0);
	shpg_fp fp;

	shpg_unpack(v, &fp);
	return hash_any_extended((const unsigned char *)VARDATA_ANY(v), (int)VARSIZE_ANY_EXHDR(v),
				 PG_GETARG_INT64(1));
}

/* ---------------------------------------------------------------- distance */

PG_FUNCTION_INFO_V1(simhash_distance);
Datum simhash_distance(PG_FUNCTION_ARGS)
{
	shpg_fp a, b;

	PG_GETARG_SIMHASH(0, &a);
	PG_GETARG_SIMHASH(1, &b);
	shpg_check_widths(&a, &b);
	PG_RETURN_INT32((int32)shpg_distance(&a, &b));
}

PG_FUNCTION_INFO_V1(simhash_pg_similarity);
Datum simhash_pg_similarity(PG_FUNCTION_ARGS)
{
	shpg_fp a, b;

	PG_GETARG_SIMHASH(0, &a);
	PG_GETARG_SIMHASH(1, &b);
	shpg_check_widths(&a, &b);
	PG_RETURN_FLOAT8(1.0 - (double)shpg_distance(&a, &b) / a.bits);
}

PG_FUNCTION_INFO_V1(simhash_within);
Datum simhash_within(PG_FUNCTION_ARGS)
{
	shpg_fp a, b;

	PG_GETARG_SIMHASH(0, &a);
	PG_GETARG_SIMHASH(1, &b);
	shpg_check_k(PG_GETARG_INT32(2));
	PG_RETURN_BOOL(a.bits == b.bits && shpg_distance(&a, &b) <= (unsigned)PG_GETARG_INT32(2));
}

/* fp <@ ball: the index operator, simhash_within(fp, ball's centre, ball's k).
 * A ball holds fingerprints of its own width only (invariant 2). */
PG_FUNCTION_INFO_V1(simhash_in_ball);
Datum simhash_in_ball(PG_FUNCTION_ARGS)
{
	shpg_ball *ball = (shpg_ball *)PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	shpg_fp a, c;
	int k;

	PG_GETARG_SIMHASH(0, &a);
	shpg_ball_unpack(ball, &c, &k);
	PG_RETURN_BOOL(a.bits == c.bits && shpg_distance(&a, &c) <= (unsigned)k);
}

PG_FUNCTION_INFO_V1(simhash_bits);
Datum simhash_bits(PG_FUNCTION_ARGS)
{
	shpg_fp fp;

	PG_GETARG_SIMHASH(0, &fp);
	PG_RETURN_INT32((int32)fp.bits);
}

/* ---------------------------------------------------------------- casts */

PG_FUNCTION_INFO_V1(simhash_to_bigint);
Datum simhash_to_bigint(PG_FUNCTION_ARGS)
{
	shpg_fp fp;

	PG_GETARG_SIMHASH(0, &fp);
	if (fp.bits != 64)
		ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				errmsg("simhash: only a 64-bit fingerprint fits in a bigint, this one has %u bits",
				       fp.bits)));
	PG_RETURN_INT64((int64)fp.w[0]);
}

PG_FUNCTION_INFO_V1(simhash_from_bigint);
Datum simhash_from_bigint(PG_FUNCTION_ARGS)
{
	shpg_fp fp = { { (uint64)PG_GETARG_INT64(0), 0 }, 64 };

	PG_RETURN_POINTER(shpg_pack(&fp));
}

PG_FUNCTION_INFO_V1(simhash_to_bytea);
Datum simhash_to_bytea(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_GETARG_VARLENA_PP(0);
	size_t n = VARSIZE_ANY_EXHDR(v);
	bytea *out;

	if (n != 8 && n != 16)
		width_error(n);
	out = palloc(VARHDRSZ + n);
	SET_VARSIZE(out, VARHDRSZ + n);
	memcpy(VARDATA(out), VARDATA_ANY(v), n);
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(simhash_from_bytea);
Datum simhash_from_bytea(PG_FUNCTION_ARGS)
{
	bytea *b = PG_GETARG_BYTEA_PP(0);
	shpg_fp fp;

	shpg_unpack((struct varlena *)b, &fp);
	PG_RETURN_POINTER(shpg_pack(&fp));
}

/* ---------------------------------------------------------------- options and contexts */

static void option_error(const char *msg)
{
	ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("simhash: %s", msg),
			errhint("Options are those of `simhash fingerprint`, such as '--bits 128 --features word'.")));
}

/* Reads options (the command line's: --name VALUE, --name=VALUE, -n N, flags)
 * into *cfg, raising an error for anything `simhash fingerprint` would refuse
 * or that names a file of the server. */
static void parse_options(const char *opts, simhash_config *cfg)
{
	char *s = pstrdup(opts), *save = NULL, *tok, *name, *value;
	const char *scheme = NULL;
	int takes, features_named = 0, n_named = 0;

	simhash_config_init(cfg);
	for (tok = strtok_r(s, " \t\n\r", &save); tok; tok = strtok_r(NULL, " \t\n\r", &save)) {
		value = NULL;
		if (!strncmp(tok, "--", 2)) {
			name = tok + 2;
			if ((value = strchr(name, '=')))
				*value++ = '\0';
		} else if (!strncmp(tok, "-n", 2)) {
			name = "ngram";
			if (tok[2])
				value = tok + 2;
		} else {
			option_error(psprintf("unexpected %s in options (an option starts with --)",
					      quote(tok, '\'')));
		}
		if (!strcmp(name, "stopwords") || !strcmp(name, "idf"))
			option_error(psprintf("--%s names a file of the server and is not available in SQL",
					      name)); /* a known name: short */
		if (!strcmp(name, "scheme")) {
			if (!value && !(value = strtok_r(NULL, " \t\n\r", &save)))
				option_error("option '--scheme' needs an argument");
			scheme = value;
			continue;
		}
		n_named++;
		if (!strcmp(name, "features"))
			features_named = 1;
		takes = simhash_config_option_takes_value(name);
		if (takes < 0)
			option_error(psprintf("unknown option %s", quote(psprintf("--%s", name), '\'')));
		if (takes && !value) {
			value = strtok_r(NULL, " \t\n\r", &save);
			if (!value)
				option_error(psprintf("option '--%s' needs an argument", name)); /* known */
		} else if (!takes && value) {
			option_error(psprintf("option '--%s' takes no argument", name)); /* known */
		}
		if (simhash_config_set(cfg, name, value) != SIMHASH_OK)
			option_error(psprintf("invalid --%s %s", name, quote(value ? value : "", '\'')));
	}
	/* as on the command line: --weight, --tf-cap or --hash alone mean v1 char n-grams */
	simhash_config_settle_features(cfg, features_named);
	if (scheme) {
		if (n_named)
			option_error("--scheme cannot be combined with other options in SQL");
		if (simhash_config_from_scheme(scheme, cfg) != SIMHASH_OK)
			option_error(psprintf("invalid --scheme %s (see `simhash scheme`)",
					      quote(scheme, '\'')));
	}
	if (cfg->compat == SIMHASH_COMPAT_NONE && cfg->weight == SIMHASH_WEIGHT_TFIDF)
		option_error("--weight tfidf needs --idf, which is not available in SQL");
	if (cfg->bits == 32)
		option_error("the simhash type holds 64 or 128 bits, not 32");
	if (simhash_config_check(cfg) != SIMHASH_OK)
		option_error(psprintf("options %s do not make a valid configuration",
				      quote(opts, '\'')));
	pfree(s);
}

/* The context of one call site, for the options it last saw. */
struct ctx_cache {
	char *opts;
	simhash_ctx *ctx;
	MemoryContextCallback cb;
};

static void ctx_cache_free(void *arg)
{
	struct ctx_cache *c = arg;

	simhash_ctx_free(c->ctx);
	c->ctx = NULL;
}

/* The library's interrupt hook (invariant 5): whether a cancel or a
 * termination is pending that CHECK_FOR_INTERRUPTS() will act on now. Other
 * interrupts (barriers, parallel messages, ...) wait for the end of the call,
 * as they would for any function that checks between rows: stopping for
 * them would start the work again. */
static int interrupt_pending(void *arg)
{
	return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED() &&
	       (QueryCancelPending || ProcDiePending);
}

/* After SIMHASH_EINTR: raises the pending cancel or termination. Returns
 * only if PostgreSQL let it go (then the caller runs the call again, which
 * stops again only for a new interrupt). */
static void take_interrupt(void)
{
	CHECK_FOR_INTERRUPTS();
}

static void lib_error(simhash_err err)
{
	ereport(ERROR, (errcode(err == SIMHASH_ENOMEM ? ERRCODE_OUT_OF_MEMORY : ERRCODE_INTERNAL_ERROR),
			errmsg("simhash: %s", simhash_strerror(err))));
}

static simhash_ctx *get_ctx(FunctionCallInfo fcinfo, const char *opts)
{
	struct ctx_cache *c = fcinfo->flinfo->fn_extra;
	simhash_config cfg;
	simhash_err err;

	if (c && !strcmp(c->opts, opts))
		return c->ctx;
	parse_options(opts, &cfg);
	if (!c) {
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof *c);
		c->cb.func = ctx_cache_free;
		c->cb.arg = c;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, &c->cb);
		fcinfo->flinfo->fn_extra = c;
	}
	simhash_ctx_free(c->ctx);
	c->ctx = NULL;
	if (c->opts)
		pfree(c->opts);
	c->opts = NULL;
	err = simhash_ctx_new(&cfg, &c->ctx);
	if (!err)
		err = simhash_ctx_set_interrupt(c->ctx, interrupt_pending, NULL);
	if (err)
		lib_error(err);
	c->opts = MemoryContextStrdup(fcinfo->flinfo->fn_mcxt, opts);
	return c->ctx;
}

/* The UTF-8 bytes of argument n: text in the server's encoding is converted,
 * bytea is taken as it is (invalid UTF-8 then meets the --utf8 policy). */
static const char *utf8_arg(FunctionCallInfo fcinfo, int n, size_t *len)
{
	struct varlena *v = PG_GETARG_VARLENA_PP(n);
	const char *p = VARDATA_ANY(v);
	int l = (int)VARSIZE_ANY_EXHDR(v);
	char *conv;

	if (get_fn_expr_argtype(fcinfo->flinfo, n) != BYTEAOID && GetDatabaseEncoding() != PG_UTF8 &&
	    GetDatabaseEncoding() != PG_SQL_ASCII) {
		conv = pg_server_to_any(p, l, PG_UTF8);
		if (conv != p)
			l = (int)strlen(conv);
		p = conv;
	}
	*len = (size_t)l;
	return p;
}

static const char *opts_arg(FunctionCallInfo fcinfo, int n)
{
	if (PG_NARGS() <= n)
		return "";
	return text_to_cstring(PG_GETARG_TEXT_PP(n));
}

static void text_error(const simhash_error *e, simhash_err err)
{
	if (err == SIMHASH_EUTF8)
		ereport(ERROR, (errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				errmsg("simhash: invalid UTF-8 at byte %llu", (unsigned long long)e->offset),
				errhint("The option --utf8 replace turns invalid bytes into U+FFFD.")));
	lib_error(err);
}

/* ---------------------------------------------------------------- fingerprints of texts */

/* simhash_fingerprint() of text, cancellable anywhere inside (invariant 5):
 * the library stops within a few milliseconds of work of a cancel, whatever
 * the options, and streams a long text itself (memory bounded by its
 * distinct features from 8 MiB on). */
static simhash_err fingerprint(simhash_ctx *ctx, const char *text, size_t len, shpg_fp *fp,
			       simhash_error *e)
{
	simhash_err err;

	while ((err = simhash_fingerprint(ctx, text, len, fp, e)) == SIMHASH_EINTR)
		take_interrupt();
	return err;
}

PG_FUNCTION_INFO_V1(simhash_fingerprint_text);
Datum simhash_fingerprint_text(PG_FUNCTION_ARGS)
{
	const char *opts = opts_arg(fcinfo, 1);
	simhash_ctx *ctx = get_ctx(fcinfo, opts);
	const char *text;
	simhash_error e;
	simhash_err err;
	shpg_fp fp;
	size_t len;

	text = utf8_arg(fcinfo, 0, &len);
	err = fingerprint(ctx, text, len, &fp, &e);
	if (err)
		text_error(&e, err);
	PG_RETURN_POINTER(shpg_pack(&fp));
}

PG_FUNCTION_INFO_V1(simhash_scheme);
Datum simhash_scheme(PG_FUNCTION_ARGS)
{
	const char *opts = opts_arg(fcinfo, 0);
	char buf[SIMHASH_SCHEME_MAX];
	simhash_config cfg;
	simhash_err err;

	parse_options(opts, &cfg);
	err = simhash_config_scheme(&cfg, buf, sizeof buf);
	if (err)
		lib_error(err);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

PG_FUNCTION_INFO_V1(simhash_pg_text_similarity);
Datum simhash_pg_text_similarity(PG_FUNCTION_ARGS)
{
	const char *opts = opts_arg(fcinfo, 2);
	simhash_ctx *ctx = get_ctx(fcinfo, opts);
	const char *a, *b;
	size_t a_len, b_len;
	double cosine, jaccard;
	simhash_error e;
	simhash_err err;
	TupleDesc desc;
	Datum values[2];
	bool nulls[2] = { false, false };

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("simhash: simhash_text_similarity returns a record")));
	if (simhash_ctx_config(ctx)->compat != SIMHASH_COMPAT_NONE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("simhash: text similarity is not defined under --compat")));
	a = utf8_arg(fcinfo, 0, &a_len);
	b = utf8_arg(fcinfo, 1, &b_len);
	while ((err = simhash_text_similarity(ctx, a, a_len, b, b_len, &cosine, &jaccard, &e)) ==
	       SIMHASH_EINTR)
		take_interrupt();
	if (err)
		text_error(&e, err);
	desc = BlessTupleDesc(desc);
	values[0] = Float8GetDatum(cosine);
	values[1] = Float8GetDatum(jaccard);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
