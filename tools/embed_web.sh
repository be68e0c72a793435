#!/bin/sh
# embed_web.sh FILE... - writes a C header holding the bytes of each file of
# the web page, and a table sh_web_files[] of {path, type, data, len} for
# server/static.c: web/index.html is served at "/", every other file at
# "/NAME". The page is compiled into the program, so `make install` has
# nothing more to install and the page always matches the program.
set -e
n=0
for f in "$@"; do
	printf 'static const unsigned char web_file_%d[] = {\n' "$n"
	od -An -v -tx1 "$f" | sed -e 's/ *$//' -e 's/^ */0x/' -e 's/  */, 0x/g' -e 's/$/,/' \
		-e '/^0x,$/d'
	printf '0x00 };\n'
	n=$((n + 1))
done
printf 'static const struct sh_static sh_web_files[] = {\n'
n=0
for f in "$@"; do
	name=$(basename "$f")
	case "$name" in
	*.html) type='text/html; charset=utf-8' ;;
	*.js) type='text/javascript; charset=utf-8' ;;
	*.css) type='text/css; charset=utf-8' ;;
	*.svg) type='image/svg+xml' ;;
	*.png) type='image/png' ;;
	*.ico) type='image/x-icon' ;;
	*) type='application/octet-stream' ;;
	esac
	path="/$name"
	[ "$name" = index.html ] && path=/
	size=$(wc -c < "$f")
	printf '\t{ "%s", "%s", web_file_%d, %d },\n' "$path" "$type" "$n" "$size"
	n=$((n + 1))
done
printf '};\n'
