/* pairs.c - every pair of fingerprints within a distance, for the quality
 * report: reads `HEX<TAB>ID` lines (the text form of `simhash fingerprint`)
 * and prints `ID_A<TAB>ID_B<TAB>DISTANCE` for each pair with distance <= kmax,
 * ID_A before ID_B in input order (the scorer's convention). A brute-force
 * all-pairs scan: 8,000 fingerprints are 32 million pairs, a fraction of a
 * second. Usage: pairs KMAX < fingerprints.tsv > pairs.tsv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "simhash.h"

int main(int argc, char **argv)
{
	size_t cap = 1024, n = 0;
	simhash_fp *fp = malloc(cap * sizeof *fp);
	char **id = malloc(cap * sizeof *id);
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	unsigned kmax;

	if (argc != 2 || !fp || !id) {
		fprintf(stderr, "usage: pairs KMAX < fingerprints.tsv\n");
		return 2;
	}
	kmax = (unsigned)atoi(argv[1]);
	while ((len = getline(&line, &lcap, stdin)) > 0) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (n == cap) {
			cap *= 2;
			fp = realloc(fp, cap * sizeof *fp);
			id = realloc(id, cap * sizeof *id);
			if (!fp || !id)
				return 1;
		}
		if (simhash_fp_parse(line, (size_t)(tab - line), &fp[n]) != SIMHASH_OK) {
			fprintf(stderr, "pairs: bad fingerprint: %s\n", line);
			return 1;
		}
		id[n++] = strdup(tab + 1);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			unsigned d = simhash_hamming(&fp[i], &fp[j]);
			if (d <= kmax)
				printf("%s\t%s\t%u\n", id[i], id[j], d);
		}
	return 0;
}
