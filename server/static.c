/* static.c - the web page (web/) served at "/": its files are compiled in by
 * tools/embed_web.sh, so the program needs no data directory at run time. */
#include <string.h>
#include "static.h"
#include "web_files.h"

const struct sh_static *sh_static_find(const char *path)
{
	size_t i;

	if (!strcmp(path, "/index.html"))
		path = "/";
	for (i = 0; i < sizeof(sh_web_files) / sizeof(sh_web_files[0]); i++)
		if (!strcmp(sh_web_files[i].path, path))
			return &sh_web_files[i];
	return NULL;
}
