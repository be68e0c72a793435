/* reply.h - an answer of the JSON API and the helpers that make one
 * (reply.c): the bottom of server/, calling nothing else in it.
 *
 * Invariants:
 *  1. Every answer has a status in 200..599, a static content type and a
 *     malloc'd body; an error body is {"error": {"code": "...", "message":
 *     "..."}}, code a fixed identifier, message one line of UTF-8.
 *  2. Each helper that sets an answer frees the body it held first, so an
 *     answer may be set again (a batch prefixes a document's error).
 */
#ifndef SERVER_REPLY_H
#define SERVER_REPLY_H

#include <jansson.h>
#include <stddef.h>
#include "simhash.h"

/* An answer: status, content type (static) and a malloc'd body. */
struct api_reply {
	int status;
	const char *type;
	char *body;
	size_t len;
	const char *allow; /* 405: the Allow header (static); else NULL */
};

void api_reply_free(struct api_reply *r);

/* Takes j (a reference, NULL for none) and makes its compact text the body
 * of a JSON answer with status; 500 if it cannot be dumped. Returns
 * r->status. */
int api_reply_json(struct api_reply *r, int status, json_t *j);

/* Sets r to an error answer. Returns r->status. */
int api_error(struct api_reply *r, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A fingerprint as a JSON string of lowercase hex digits (a new reference). */
json_t *api_fp_json(const simhash_fp *fp);

#endif /* SERVER_REPLY_H */
