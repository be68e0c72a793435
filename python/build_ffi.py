"""build_ffi.py - builds simhash._native, the cffi (API mode) binding of libsimhash.

Usage: build_ffi.py OUTDIR LIBSIMHASH_A [EXTRA_CFLAGS]

Compiles python/native.c (small C helpers that keep per-call Python overhead
low and run batches on threads) and python/native_dask.c (the cluster job's
kernels), as one unit, against lib/simhash.h, links libsimhash.a
statically with the libraries it needs (pkg-config), and writes the
extension into OUTDIR/simhash/. Run with Debian's /usr/bin/python3.
"""
import os
import shlex
import subprocess
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIB_PKGS = ["icu-uc", "icu-i18n", "libxxhash", "libcrypto", "lmdb"]

CDEF = r"""
typedef enum simhash_err {
    SIMHASH_OK = 0, SIMHASH_EINVAL = 1, SIMHASH_ENOMEM = 2, SIMHASH_EIO = 3,
    SIMHASH_EUTF8 = 4, SIMHASH_ECORRUPT = 5, SIMHASH_EDEP = 6, SIMHASH_ESCHEME = 7,
    ...
} simhash_err;
typedef enum simhash_features { SIMHASH_FEATURES_CHAR, SIMHASH_FEATURES_WORD,
    SIMHASH_FEATURES_SHINGLE, SIMHASH_FEATURES_AUTO, ... } simhash_features;
typedef enum simhash_tokenizer { SIMHASH_TOKENIZER_SIMPLE, SIMHASH_TOKENIZER_ICU, ...
} simhash_tokenizer;
typedef enum simhash_hash { SIMHASH_HASH_XXH3, SIMHASH_HASH_FNV1, SIMHASH_HASH_FNV1A,
    SIMHASH_HASH_MD5, ... } simhash_hash;
typedef enum simhash_weight { SIMHASH_WEIGHT_TF, SIMHASH_WEIGHT_BINARY,
    SIMHASH_WEIGHT_LOGTF, SIMHASH_WEIGHT_TFIDF, ... } simhash_weight;
typedef enum simhash_space { SIMHASH_SPACE_AUTO, SIMHASH_SPACE_COLLAPSE,
    SIMHASH_SPACE_DROP, ... } simhash_space;
typedef enum simhash_punct { SIMHASH_PUNCT_DROP, SIMHASH_PUNCT_KEEP, ... } simhash_punct;
typedef enum simhash_utf8 { SIMHASH_UTF8_REPLACE, SIMHASH_UTF8_REJECT, ... } simhash_utf8;
typedef enum simhash_compat { SIMHASH_COMPAT_NONE, SIMHASH_COMPAT_PYTHON_SIMHASH, ...
} simhash_compat;

typedef struct simhash_idf simhash_idf;
typedef struct simhash_stopwords simhash_stopwords;
typedef struct simhash_ctx simhash_ctx;

typedef struct simhash_fp { uint64_t w[2]; unsigned bits; } simhash_fp;
typedef struct simhash_error {
    simhash_err code;
    int os_err;
    uint64_t line;
    uint64_t offset;
    uint64_t index;
    char msg[...];
} simhash_error;

typedef struct simhash_config {
    size_t size;
    unsigned bits;
    simhash_compat compat;
    int casefold;
    int html;
    int t2s;
    simhash_space space;
    simhash_punct punct;
    unsigned max_repeat;
    simhash_utf8 utf8;
    simhash_features features;
    unsigned ngram;
    unsigned ngram_cjk;
    simhash_tokenizer tokenizer;
    simhash_hash hash;
    simhash_weight weight;
    unsigned tf_cap;
    const simhash_stopwords *stopwords;
    const simhash_idf *idf;
    int auto_char_votes;
    ...;
} simhash_config;

#define SIMHASH_SCHEME_MAX ...

const char *simhash_version(void);
const char *simhash_strerror(simhash_err err);
void simhash_config_init(simhash_config *cfg);
simhash_err simhash_config_check(const simhash_config *cfg);
void simhash_config_settle_features(simhash_config *cfg, int features_named);
const char *simhash_config_value_name(const char *name, unsigned i);
simhash_err simhash_config_scheme(const simhash_config *cfg, char *buf, size_t cap);

simhash_err simhash_ctx_new(const simhash_config *cfg, simhash_ctx **out);
void simhash_ctx_free(simhash_ctx *ctx);
simhash_err simhash_text_similarity(simhash_ctx *ctx, const char *a, size_t a_len,
                                    const char *b, size_t b_len, double *cosine,
                                    double *jaccard, simhash_error *err);

simhash_err simhash_idf_new(simhash_idf **out);
void simhash_idf_free(simhash_idf *idf);
simhash_err simhash_idf_set(simhash_idf *idf, const char *term, size_t len, double value);
simhash_err simhash_idf_finish(simhash_idf *idf);
simhash_err simhash_idf_load(const char *path, simhash_idf **out, simhash_error *err);
size_t simhash_idf_size(const simhash_idf *idf);
simhash_err simhash_stopwords_new(simhash_stopwords **out);
void simhash_stopwords_free(simhash_stopwords *sw);
simhash_err simhash_stopwords_add(simhash_stopwords *sw, const char *word, size_t len);
simhash_err simhash_stopwords_load(const char *path, simhash_stopwords **out,
                                   simhash_error *err);

typedef struct simhash_match { uint64_t id; unsigned dist; } simhash_match;
typedef struct simhash_matches { simhash_match *v; size_t n; size_t cap; } simhash_matches;
typedef struct simhash_index simhash_index;
#define SIMHASH_INDEX_MAX_DIST_64 ...
#define SIMHASH_INDEX_MAX_DIST_128 ...
typedef enum simhash_layout { SIMHASH_LAYOUT_SCAN, SIMHASH_LAYOUT_MIH, ... } simhash_layout;
typedef struct simhash_index_plan {
    size_t size;
    simhash_layout layout;
    unsigned bits, k;
    uint64_t n;
    unsigned n_chunks;
    unsigned n_tables;
    double probes;
    double candidates;
    double query_ns;
    double scan_ns;
    double bytes_per_fp;
    uint64_t memory;
    ...;
} simhash_index_plan;
typedef struct simhash_index_stats {
    size_t size;
    uint64_t count;
    uint64_t dead;
    unsigned segments;
    uint64_t memory;
    int mapped;
    ...;
} simhash_index_stats;
void simhash_matches_free(simhash_matches *m);
simhash_err simhash_index_new(unsigned bits, unsigned max_dist, simhash_index **out);
void simhash_index_free(simhash_index *ix);
simhash_err simhash_index_set_scheme(simhash_index *ix, const char *scheme);
const char *simhash_index_scheme(const simhash_index *ix);
simhash_err simhash_index_set_user(simhash_index *ix, const void *data, size_t len);
void simhash_index_user(const simhash_index *ix, const void **data, size_t *len);
simhash_err simhash_index_build(simhash_index *ix, const uint64_t *fps, const uint64_t *ids,
                                size_t n, unsigned threads);
size_t simhash_index_count(const simhash_index *ix);
unsigned simhash_index_bits(const simhash_index *ix);
unsigned simhash_index_max_dist(const simhash_index *ix);
simhash_err simhash_index_get_stats(const simhash_index *ix, simhash_index_stats *st);
simhash_err simhash_index_get_plan(const simhash_index *ix, simhash_index_plan *plan);
simhash_err simhash_index_save(const simhash_index *ix, const char *path, simhash_error *err);
simhash_err simhash_index_open(const char *path, simhash_index **out, simhash_error *err);

typedef struct simhash_pair { uint64_t a; uint64_t b; unsigned dist; } simhash_pair;
simhash_err simhash_pairs_self(const uint64_t *fps, size_t n, unsigned bits, unsigned max_dist,
                               unsigned n_threads, simhash_pair **out, size_t *n_out);
simhash_err simhash_pairs_join(const uint64_t *a, size_t n_a, const uint64_t *b, size_t n_b,
                               unsigned bits, unsigned max_dist, unsigned n_threads,
                               simhash_pair **out, size_t *n_out);
void simhash_pairs_free(simhash_pair *pairs);
simhash_err simhash_clusters(size_t n, const simhash_pair *pairs, size_t n_pairs,
                             uint64_t *cluster);

typedef enum simhash_near_kind { SIMHASH_NEAR_CHARS = 1, SIMHASH_NEAR_SHINGLES = 2 } simhash_near_kind;
typedef struct simhash_sketch { const uint64_t *keys; size_t n_keys; simhash_near_kind kind; } simhash_sketch;
typedef struct simhash_near_verdict {
    int near; simhash_near_kind kind; double jaccard; double threshold;
    size_t shared, n_a, n_b;
} simhash_near_verdict;
typedef struct simhash_near simhash_near;
simhash_err simhash_near_new(simhash_near **out);
void simhash_near_free(simhash_near *nd);
simhash_err simhash_near_sketch(simhash_near *nd, const char *text, size_t len, simhash_sketch *out);
double simhash_near_similarity(simhash_near_kind kind, double jaccard);
void simhash_near_decide(const simhash_sketch *a, const simhash_sketch *b, simhash_near_verdict *out);
simhash_err simhash_near_texts(simhash_near *nd, const char *a, size_t a_len, const char *b,
                               size_t b_len, simhash_near_verdict *out);
typedef struct simhash_near_pair { uint64_t a; uint64_t b; double jaccard; } simhash_near_pair;
simhash_err simhash_near_join(const simhash_sketch *docs, size_t n, uint64_t *same,
                              simhash_near_pair **out, size_t *n_out);
void simhash_near_pairs_free(simhash_near_pair *pairs);
simhash_err simhash_near_clusters(const simhash_sketch *docs, size_t n, uint64_t *cluster);
#define SIMHASH_NEAR_BANDS 24
void simhash_near_bands(const simhash_sketch *sk, uint64_t out[24]);
simhash_err simhash_near_band_join(const simhash_sketch *docs, size_t n, uint64_t *same,
                                   simhash_near_pair **out, size_t *n_out);
simhash_err simhash_near_band_clusters(const simhash_sketch *docs, size_t n, uint64_t *cluster);

/* python/native.c, python/native_dask.c */
int shpy_index_insert(simhash_index *ix, uint64_t lo, uint64_t hi, uint64_t id);
int shpy_index_delete(simhash_index *ix, uint64_t lo, uint64_t hi, uint64_t id, int *found);
int shpy_index_query(const simhash_index *ix, uint64_t lo, uint64_t hi, unsigned k,
                     simhash_matches *m);
long shpy_index_query_n(const simhash_index *ix, uint64_t lo, uint64_t hi, unsigned k,
                        simhash_matches *m);
typedef struct shpy_log shpy_log;
shpy_log *shpy_log_new(void);
void shpy_log_free(shpy_log *log);
size_t shpy_log_take(shpy_log *log, uint64_t **values);
long shpy_index_query_log(const simhash_index *ix, uint64_t v, unsigned k, simhash_matches *m,
                          uint64_t *ids, size_t cap, shpy_log *log);
long shpy_index_query_ids(const simhash_index *ix, uint64_t lo, uint64_t hi, unsigned k,
                          simhash_matches *m, uint64_t *ids, size_t cap);
int shpy_index_query_batch(const simhash_index *ix, const uint64_t *qs, size_t n, unsigned k,
                           unsigned threads, uint64_t **ids, unsigned **dists, size_t **ends);
int shpy_fingerprint(simhash_ctx *ctx, const char *text, size_t len, uint64_t *out);
int shpy_features(simhash_ctx *ctx, const char *blob, const size_t *ends,
                  const double *weights, size_t n, uint64_t *out);
int shpy_fingerprints(const simhash_config *cfg, const char *blob, const size_t *ends,
                      size_t n, unsigned n_threads, uint64_t *out, size_t *err_index,
                      size_t *err_offset);
int shpy_fingerprints_ctx(simhash_ctx **ctxs, unsigned n_threads, const char *blob,
                          const size_t *ends, size_t n, uint64_t *out, size_t *err_index,
                          size_t *err_offset);
int shpy_features_list(simhash_ctx *ctx, const char *text, size_t len,
                       char **blob, size_t **ends, uint32_t **counts, size_t *n);
int shpy_index_build_seq(simhash_index *ix, const uint64_t *fps, size_t n, uint64_t start,
                         unsigned threads);
int shpy_index_query_arrays(const simhash_index *ix, const uint64_t *qs, size_t n, unsigned k,
                            unsigned threads, uint64_t *offsets, uint64_t **ids, uint8_t **dists);
void shpy_free(void *p);
void shpy_block_keys(const uint64_t *fps, size_t n, unsigned bits, unsigned n_blocks,
                     unsigned table, uint64_t *key_lo, uint64_t *key_hi);
int shpy_route_count(const uint64_t *fps, size_t n, unsigned bits, unsigned n_blocks,
                     unsigned table, uint64_t n_buckets, const uint64_t *h_lo,
                     const uint64_t *h_hi, size_t n_heavy, uint64_t *counts,
                     size_t *n_heavy_recs);
void shpy_route_scatter(const uint64_t *fps, size_t n, unsigned bits, unsigned n_blocks,
                        unsigned table, uint64_t n_buckets, const uint64_t *h_lo,
                        const uint64_t *h_hi, size_t n_heavy, uint64_t base,
                        uint64_t **piece_fps, uint64_t **piece_gids, uint64_t *at,
                        uint64_t *heavy_recs);
int shpy_block_pairs(const uint64_t *fps, const uint64_t *gids, const uint64_t *cells,
                     const uint8_t *sides, size_t n, unsigned bits, unsigned n_blocks,
                     unsigned table, unsigned max_dist, uint64_t **out_a, uint64_t **out_b,
                     uint32_t **out_d, size_t *n_out);
long shpy_parse_fps(const char *buf, size_t len, unsigned digits, uint64_t *words,
                    uint64_t *ids, size_t cap);
int shpy_line_ids(const char *buf, size_t len, unsigned digits, const uint64_t *want,
                  size_t n_want, uint64_t *ids);
simhash_err simhash_config_set(simhash_config *cfg, const char *name, const char *value);
int simhash_config_option_takes_value(const char *name);
simhash_err simhash_config_from_scheme(const char *scheme, simhash_config *cfg);
"""


NATIVE_SOURCES = ("native.c", "native_dask.c")


def pkg(args):
    return shlex.split(subprocess.check_output(["pkg-config"] + args + LIB_PKGS, text=True))


def main():
    outdir, libpath = sys.argv[1], sys.argv[2]
    extra = shlex.split(sys.argv[3]) if len(sys.argv) > 3 else []
    source = ""
    for name in NATIVE_SOURCES:  # one unit: the helpers, then the cluster job's kernels
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            source += f.read()
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    libs = pkg(["--libs"])
    ffi.set_source(
        "simhash._native",
        source,
        include_dirs=[os.path.join(ROOT, "lib")],
        extra_compile_args=["-std=gnu11", "-O2", "-Wall"] + pkg(["--cflags"]) + extra,
        extra_objects=[os.path.abspath(libpath)],
        extra_link_args=libs + ["-lpthread", "-lm"] + extra,
    )
    tmp = os.path.join(outdir, "ffi-tmp")
    os.makedirs(tmp, exist_ok=True)
    so = ffi.compile(tmpdir=tmp, verbose=False)
    dest = os.path.join(outdir, "simhash", os.path.basename(so))
    os.replace(so, dest)
    print(dest)


if __name__ == "__main__":
    main()
