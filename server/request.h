/* request.h - reading a request's JSON body and its fields (request.c).
 * Each function returns 0, or sets an error answer in r and returns its
 * status: 400 for a body that is not JSON (or not UTF-8), 422 for JSON of
 * the wrong shape, 413 for a text over its limit. */
#ifndef SERVER_REQUEST_H
#define SERVER_REQUEST_H

#include <jansson.h>
#include "api.h"
#include "reply.h"

/* The body as a JSON object in *out (a new reference). */
int api_parse_body(const char *body, size_t len, json_t **out, struct api_reply *r);
/* 422 if obj has a key not in the NULL-terminated list keys. */
int api_check_keys(json_t *obj, const char *const *keys, struct api_reply *r);
/* The string field name of obj: *s and *len (NULL if absent and optional). */
int api_get_string(json_t *obj, const char *name, int required, const char **s, size_t *len,
		   struct api_reply *r);
/* A string field that holds a text: at most api->limits.max_text bytes. */
int api_get_text(struct api *api, json_t *obj, const char *name, int required, const char **s,
		 size_t *len, struct api_reply *r);
/* An optional boolean field; *out 0 when absent. */
int api_get_bool(json_t *obj, const char *name, int *out, struct api_reply *r);
/* An optional integer field in lo..hi; *out dflt when absent. */
int api_get_uint(json_t *obj, const char *name, unsigned long lo, unsigned long hi,
		 unsigned long dflt, unsigned long *out, struct api_reply *r);
/* The required "id": a string of 1..max_id bytes without NUL. */
int api_get_id(struct api *api, json_t *obj, const char **id, size_t *len, struct api_reply *r);
/* The fingerprint of a text with ctx (422 for invalid UTF-8). */
int api_text_fp(struct api *api, simhash_ctx *ctx, const char *text, size_t len, simhash_fp *fp,
		struct api_reply *r);
/* What to look for: "text", or "fingerprint" (with an optional "scheme"
 * that must be the server's), as a fingerprint of the server's width. */
int api_get_probe(struct api *api, simhash_ctx *ctx, json_t *obj, simhash_fp *fp,
		  struct api_reply *r);

#endif /* SERVER_REQUEST_H */
