/* reply.c - answers of the JSON API: JSON bodies, error bodies, a
 * fingerprint as JSON. The bottom of server/: everything above builds its
 * answers with these, and these call nothing else of server/ (see reply.h
 * for the invariants).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reply.h"

void api_reply_free(struct api_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

int api_reply_json(struct api_reply *r, int status, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;

	json_decref(j);
	api_reply_free(r);
	r->type = "application/json";
	r->allow = NULL;
	if (!s) {
		static const char oom[] =
			"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
		r->status = 500;
		r->body = strdup(oom);
		r->len = r->body ? sizeof(oom) - 1 : 0;
		return r->status;
	}
	r->status = status;
	r->body = s;
	r->len = strlen(s);
	return status;
}

/* A message as one line of UTF-8: control characters (a quoted path or key
 * may hold any) become '?', and a character cut by the buffer's end is
 * dropped (json_string refuses invalid UTF-8). */
static json_t *message_json(char *msg)
{
	size_t i, n = strlen(msg);
	json_t *m;

	for (i = 0; i < n; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	for (i = 0; i < 4 && n > 0; i++, n--) {
		if ((m = json_stringn(msg, n)))
			return m;
	}
	return json_string("(message not UTF-8)");
}

int api_error(struct api_reply *r, int status, const char *code, const char *fmt, ...)
{
	char msg[512];
	json_t *m;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m = message_json(msg);
	return api_reply_json(r, status,
			      json_pack("{s:{s:s,s:o}}", "error", "code", code, "message", m));
}

json_t *api_fp_json(const simhash_fp *fp)
{
	char hex[SIMHASH_HEX_MAX];

	simhash_fp_format(fp, hex);
	return json_string(hex);
}
