/* index_info.c - `simhash index plan|stats|verify`: what an index would cost
 * (the library's plan for a width, k, n and bias), what a saved one holds,
 * and a check of its body against its checksum. */
#include <stdio.h>
#include "index_cmd.h"
#include "util.h"

static void print_plan(const simhash_index_plan *p)
{
	if (p->layout == SIMHASH_LAYOUT_SCAN) {
		printf("layout\tscan\n");
	} else {
		printf("layout\tmih\nchunks\t%u\ntables\t%u\nchunk_bits", p->n_chunks, p->n_tables);
		for (unsigned t = 0; t < p->n_chunks && t < SIMHASH_PLAN_MAX_TABLES; t++)
			printf("%c%u", t ? ',' : '\t', p->chunk_bits[t]);
		printf("\nradius");
		for (unsigned t = 0; t < p->n_tables; t++) {
			if (p->radius[t] == 0xffffffffu)
				printf("%c-", t ? ',' : '\t');
			else
				printf("%c%u", t ? ',' : '\t', p->radius[t]);
		}
		printf("\nprobes\t%.0f\n", p->probes);
	}
	printf("candidates\t%.0f\nquery_us\t%.2f\nscan_us\t%.2f\nbytes_per_fp\t%.1f\nmemory\t%llu\n",
	       p->candidates, p->query_ns / 1000, p->scan_ns / 1000, p->bytes_per_fp,
	       (unsigned long long)p->memory);
}

int index_cmd_plan(int argc, char **argv)
{
	struct args a;
	simhash_index_plan p;
	int optind, ret = index_parse_args("index plan", argc, argv, &a, NULL, &optind);

	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	simhash_index_plan_init(&p);
	if (optind < argc) {
		cli_err("index plan: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!a.have_n || !a.have_k) {
		cli_err("index plan: -n N and -k K are required");
		return EXIT_USAGE;
	}
	if (index_check_k("index plan", a.k, (unsigned)a.bits, 1000))
		return EXIT_USAGE;
	if (simhash_index_plan_make((unsigned)a.bits, (unsigned)a.k, a.n, a.bias, a.memory, &p)) {
		cli_err("index plan: invalid arguments");
		return EXIT_USAGE;
	}
	printf("bits\t%lu\nk\t%lu\nn\t%lu\nbias\t%.2f\n", a.bits, a.k, a.n, a.bias);
	print_plan(&p);
	return EXIT_OK;
}

int index_cmd_stats(int argc, char **argv)
{
	struct args a;
	simhash_index_stats st;
	simhash_index_plan p;
	simhash_index *ix;
	int optind, ret = index_parse_args("index stats", argc, argv, &a, NULL, &optind);

	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (argc - optind != 1) {
		cli_err("index stats: expected one INDEX");
		return EXIT_USAGE;
	}
	ix = index_open(argv[optind]);
	if (!ix)
		return EXIT_FAIL;
	simhash_index_stats_init(&st);
	simhash_index_plan_init(&p);
	simhash_index_get_stats(ix, &st);
	simhash_index_get_plan(ix, &p);
	printf("count\t%llu\nbits\t%u\nmax_dist\t%u\nscheme\t%s\n", (unsigned long long)st.count,
	       simhash_index_bits(ix), simhash_index_max_dist(ix),
	       simhash_index_scheme(ix)[0] ? simhash_index_scheme(ix) : "-");
	print_plan(&p);
	simhash_index_free(ix);
	return EXIT_OK;
}

/* The header is checked at every open; verify reads the body too. */
int index_cmd_verify(int argc, char **argv)
{
	struct args a;
	simhash_index *ix;
	simhash_error why;
	int optind, ret = index_parse_args("index verify", argc, argv, &a, NULL, &optind);

	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (argc - optind != 1) {
		cli_err("index verify: expected one INDEX");
		return EXIT_USAGE;
	}
	ix = index_open(argv[optind]);
	if (!ix)
		return EXIT_FAIL;
	if (simhash_index_verify(ix, &why) != SIMHASH_OK) {
		cli_err("%s: %s", argv[optind], why.msg);
		simhash_index_free(ix);
		return EXIT_FAIL;
	}
	printf("%s: ok, %llu fingerprints\n", argv[optind],
	       (unsigned long long)simhash_index_count(ix));
	simhash_index_free(ix);
	return EXIT_OK;
}
