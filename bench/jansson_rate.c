/* jansson_rate.c - the JSON library's own rate, the baseline of `simhash
 * fingerprint --jsonl`: parse each line of FILE with jansson (json_loadb) and
 * take its "text" field, nothing else.
 *
 * Usage: jansson_rate FILE
 * Prints the number of records and of text bytes (UTF-8, as jansson returns
 * them); speed.sh divides the text bytes by the time timeit measures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

int main(int argc, char **argv)
{
	unsigned long long n_recs = 0, text_bytes = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	json_error_t jerr;
	json_t *root, *text;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: jansson_rate FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		root = json_loadb(line, (size_t)len, 0, &jerr);
		if (!root) {
			fprintf(stderr, "jansson_rate: %s:%d: %s\n", argv[1], jerr.line, jerr.text);
			return 1;
		}
		text = json_object_get(root, "text");
		if (json_is_string(text))
			text_bytes += json_string_length(text);
		n_recs++;
		json_decref(root);
	}
	printf("%llu %llu\n", n_recs, text_bytes);
	free(line);
	fclose(f);
	return 0;
}
