/* static.h - the web page's files, embedded at build time (static.c). */
#ifndef SERVER_STATIC_H
#define SERVER_STATIC_H

#include <stddef.h>

struct sh_static {
	const char *path; /* "/", "/app.js" */
	const char *type; /* "text/html; charset=utf-8" */
	const unsigned char *data;
	size_t len;
};

/* The file served at path ("/index.html" is "/"), or NULL. */
const struct sh_static *sh_static_find(const char *path);

#endif /* SERVER_STATIC_H */
