/* simhash.h - the public API of libsimhash: SimHash fingerprints of texts.
 *
 * A text is normalized (Unicode NFKC + case folding, optional HTML cleaning and
 * traditional-to-simplified Chinese folding), split into features (character
 * n-grams, words, or word shingles), each feature is hashed to the fingerprint
 * width and votes with its weight on every bit; a bit is 1 iff the weight of the
 * features whose hash has that bit set is strictly greater than half the total
 * weight (a tie gives 0).
 *
 * The conventions every function follows are stated once, below the error
 * codes ("conventions"). Fingerprints are a contract: the same text and
 * scheme give the same fingerprint in every version with the same scheme
 * string.
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for the init macros */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SIMHASH_API __attribute__((visibility("default")))
#else
#define SIMHASH_API
#endif

#define SIMHASH_VERSION_MAJOR 0
#define SIMHASH_VERSION_MINOR 1
#define SIMHASH_VERSION_PATCH 0

/* "MAJOR.MINOR.PATCH" of the library linked at run time. Thread safety: safe. */
SIMHASH_API const char *simhash_version(void);

/* Error codes. Released values never change; new ones are appended. */
typedef enum simhash_err {
	SIMHASH_OK = 0,
	SIMHASH_EINVAL = 1,   /* bad argument or configuration */
	SIMHASH_ENOMEM = 2,   /* out of memory */
	SIMHASH_EIO = 3,      /* a file could not be read or written */
	SIMHASH_EUTF8 = 4,    /* invalid UTF-8 and the config rejects it */
	SIMHASH_ECORRUPT = 5, /* a file or string is malformed */
	SIMHASH_EDEP = 6,     /* a library we rely on (ICU, OpenCC, OpenSSL) failed */
	SIMHASH_ESCHEME = 7,  /* fingerprints made under different schemes */
	SIMHASH_EVERSION = 8, /* a file written by a newer format version */
	SIMHASH_ENOSPC = 9,   /* no space left: the file system, or the store's map */
	SIMHASH_EINTR = 10,   /* stopped by the caller's interrupt hook */
} simhash_err;

/* A static, lowercase description of err; never NULL. Thread safety: safe. */
SIMHASH_API const char *simhash_strerror(simhash_err err);

/* ---------------------------------------------------------------- conventions
 *
 * 1. Results. Every function that can fail returns simhash_err (SIMHASH_OK
 *    is 0) and writes its results through out-parameters. Nothing here
 *    prints, exits or reads the environment.
 * 2. Error detail. A function that can tell more than its code (a file's
 *    line, a system errno, an offset in a text, a store's or an index
 *    file's message) takes `simhash_error *err` as its LAST parameter; NULL
 *    means no detail is wanted. On failure it fills all of *err: code, msg
 *    (never empty: at least simhash_strerror(code)), and os_err, line,
 *    offset and index where its comment says they apply (else 0). On
 *    success *err is left as it was. The detail belongs to the call, never
 *    to a handle, so threads sharing a handle (a store, an index) never see
 *    each other's errors. Functions without such a parameter tell their
 *    code only.
 * 3. Structs that grow: simhash_config, simhash_index_plan,
 *    simhash_index_stats and simhash_store_stats. Each starts with `size_t
 *    size`, set to the caller's sizeof by its init macro
 *    (simhash_config_init(), simhash_index_plan_init(),
 *    simhash_index_stats_init(), simhash_store_stats_init()) before the
 *    struct is passed; the library reads and writes only the first `size`
 *    bytes, so an older caller's struct is never overrun and a newer
 *    caller's extra fields are left alone. New fields go at the end; a
 *    struct that grows is never nested in another nor passed as an array
 *    (SIMHASH_EINVAL if size is smaller than the first release's struct).
 *    Every other public struct is a value whose layout never changes.
 * 4. One code per kind of mistake. A fingerprint of another width than the
 *    index, store, file or fingerprints it meets is SIMHASH_ESCHEME (the
 *    width is part of the scheme), from every function; SIMHASH_EINVAL is a
 *    bad argument of any other kind.
 * 5. Ownership. The creator frees; every _free and _close accepts NULL.
 *    Pointers into a handle are valid until the next call that writes it.
 * 6. Thread safety ends every comment: "safe", "one handle per thread", or
 *    "many readers, one writer".
 * 7. Test knobs live in the experimental section, which may change in any
 *    release; the caveats section at the end says what can surprise.
 */

/* The detail of a failure (convention 2): a value the caller owns, usually
 * on its stack, and one per thread like any output. Its layout never
 * changes; new kinds of detail go into msg. */
#define SIMHASH_ERROR_MSG_MAX 512
typedef struct simhash_error {
	simhash_err code;  /* what the function returned */
	int os_err;        /* the errno of the failed system call; 0: none */
	uint64_t line;     /* 1-based line of a text file at fault; 0: none */
	uint64_t offset;   /* SIMHASH_EUTF8: byte offset of the first invalid sequence */
	uint64_t index;    /* a batch: the number of the item at fault */
	char msg[SIMHASH_ERROR_MSG_MAX]; /* one line, no final period, NUL-terminated */
} simhash_error;

/* Writes "ICU 72.1, Unicode 15.0" (the versions normalization runs with; a
 * newer Unicode may normalize newly assigned characters differently) and a
 * NUL into buf. SIMHASH_EINVAL if cap is too small. Thread safety: safe. */
SIMHASH_API simhash_err simhash_unicode_version(char *buf, size_t cap);

/* ---------------------------------------------------------------- fingerprints */

/* A fingerprint of 32, 64 or 128 bits. w[0] holds bits 0..63 (bit 0 is the
 * least significant), w[1] bits 64..127; unused bits are zero. */
typedef struct simhash_fp {
	uint64_t w[2];
	unsigned bits;
} simhash_fp;

#define SIMHASH_HEX_MAX 33 /* 32 hex digits and a NUL */

/* Writes fp as 8, 16 or 32 lowercase hex digits, most significant first, and a
 * NUL into buf (at least SIMHASH_HEX_MAX bytes). Returns the number of digits,
 * 0 if fp->bits is not 32, 64 or 128. Thread safety: safe. */
SIMHASH_API size_t simhash_fp_format(const simhash_fp *fp, char *buf);

/* Parses exactly len bytes of hex digits (either case; 8, 16 or 32 of them, the
 * count giving the width) into *out. SIMHASH_ECORRUPT on anything else; *out is
 * then untouched. Thread safety: safe. */
SIMHASH_API simhash_err simhash_fp_parse(const char *hex, size_t len, simhash_fp *out);

#define SIMHASH_DIST_INVALID 0xffffffffu

/* Hamming distance of two fingerprints of the same width;
 * SIMHASH_DIST_INVALID if the widths differ. Thread safety: safe. */
SIMHASH_API unsigned simhash_hamming(const simhash_fp *a, const simhash_fp *b);

/* 1 - distance / width, in [0, 1]; -1 if the widths differ. Thread safety: safe. */
SIMHASH_API double simhash_similarity(const simhash_fp *a, const simhash_fp *b);

static inline unsigned simhash_hamming64(uint64_t a, uint64_t b)
{
	return (unsigned)__builtin_popcountll(a ^ b);
}

/* ---------------------------------------------------------------- configuration */

typedef enum simhash_features {
	SIMHASH_FEATURES_CHAR = 0,    /* overlapping n-grams of code points */
	SIMHASH_FEATURES_WORD = 1,    /* words (see simhash_tokenizer) */
	SIMHASH_FEATURES_SHINGLE = 2, /* n consecutive words, joined by a space */
	/* The default (scheme v2): char n-grams (one-bit MinHash of their set)
	 * for short texts, word 3-shingles (one-bit MinHash) for long ones, both
	 * by share of the bits in between (docs/algorithms.md). Needs hash XXH3, weight TF, no tf cap;
	 * ngram and ngram_cjk shape the char n-grams. */
	SIMHASH_FEATURES_AUTO = 3,
} simhash_features;

typedef enum simhash_tokenizer {
	/* Fast: a word is a maximal run of letters, digits and combining marks;
	 * every Han, Hiragana or Katakana character is a word by itself. */
	SIMHASH_TOKENIZER_SIMPLE = 0,
	/* ICU's word break iterator, with its dictionaries for Chinese, Japanese,
	 * Thai, Lao, Khmer and Burmese; only segments of letters, digits or
	 * ideographs are words. */
	SIMHASH_TOKENIZER_ICU = 1,
} simhash_tokenizer;

typedef enum simhash_hash {
	SIMHASH_HASH_XXH3 = 0,    /* XXH3 (64 or 128 bit, seed 0); 32 bit: low half */
	SIMHASH_HASH_FNV1 = 1,    /* FNV-1 of the fingerprint's width */
	SIMHASH_HASH_FNV1A = 2,   /* FNV-1a of the fingerprint's width */
	SIMHASH_HASH_MD5 = 3,     /* the last 4, 8 or all 16 digest bytes, big-endian */
} simhash_hash;

typedef enum simhash_weight {
	SIMHASH_WEIGHT_TF = 0,     /* occurrences */
	SIMHASH_WEIGHT_BINARY = 1, /* 1 per distinct feature */
	SIMHASH_WEIGHT_LOGTF = 2,  /* 1 + ln(occurrences) */
	SIMHASH_WEIGHT_TFIDF = 3,  /* occurrences * idf (needs config.idf) */
} simhash_weight;

typedef enum simhash_space {
	/* Whitespace (and dropped punctuation) between two non-CJK characters
	 * becomes one space; next to a Han, Hiragana or Katakana character it
	 * vanishes. */
	SIMHASH_SPACE_AUTO = 0,
	SIMHASH_SPACE_COLLAPSE = 1, /* every run becomes one space */
	SIMHASH_SPACE_DROP = 2,     /* removed altogether */
} simhash_space;

typedef enum simhash_punct {
	SIMHASH_PUNCT_DROP = 0, /* punctuation and symbols separate words, like spaces */
	SIMHASH_PUNCT_KEEP = 1, /* kept as characters (char n-grams only) */
} simhash_punct;

typedef enum simhash_utf8 {
	SIMHASH_UTF8_REPLACE = 0, /* each maximal invalid subsequence -> U+FFFD */
	SIMHASH_UTF8_REJECT = 1,  /* SIMHASH_EUTF8, with the offset in err->offset */
} simhash_utf8;

typedef enum simhash_compat {
	SIMHASH_COMPAT_NONE = 0,
	/* Bit-exact with the Python package `simhash` 2.1.2: lowercase, keep
	 * [\w\u4e00-\u9fcc]+ runs joined, 4-code-point windows, count weights, MD5.
	 * Every other feature option is ignored; bits is 64 or 128. */
	SIMHASH_COMPAT_PYTHON_SIMHASH = 1,
} simhash_compat;

typedef struct simhash_idf simhash_idf;
typedef struct simhash_stopwords simhash_stopwords;

/* A struct that grows (convention 3): fill with simhash_config_init(), then
 * set fields. New fields are appended; `size` tells the library which exist. */
typedef struct simhash_config {
	size_t size;
	unsigned bits;              /* 32, 64 (default) or 128 */
	simhash_compat compat;      /* SIMHASH_COMPAT_NONE */
	/* normalization */
	int casefold;               /* 1: Unicode NFKC + case folding (NFKC_Casefold) */
	int html;                   /* 0: 1 drops tags, comments, script/style, decodes entities */
	int t2s;                    /* 1: fold traditional Chinese characters to simplified */
	simhash_space space;        /* SIMHASH_SPACE_AUTO */
	simhash_punct punct;        /* SIMHASH_PUNCT_DROP */
	unsigned max_repeat;        /* 0: off; n: a run of one character longer than n is cut to n */
	simhash_utf8 utf8;          /* SIMHASH_UTF8_REPLACE */
	/* features */
	simhash_features features;  /* SIMHASH_FEATURES_AUTO (scheme v2; CHAR: v1) */
	unsigned ngram;             /* n of char n-grams and word shingles */
	unsigned ngram_cjk;         /* n of char n-grams that start at a Han, Kana
				     * character (these carry a syllable each); 0: ngram */
	simhash_tokenizer tokenizer; /* words for WORD and SHINGLE */
	/* feature hash and weights */
	simhash_hash hash;          /* SIMHASH_HASH_XXH3 */
	simhash_weight weight;      /* SIMHASH_WEIGHT_TF */
	unsigned tf_cap;            /* 0: off; n: occurrences above n are ignored */
	const simhash_stopwords *stopwords; /* NULL; borrowed, must outlive the ctx */
	const simhash_idf *idf;     /* NULL; borrowed, required by TFIDF */
	/* AUTO features only: 0 (default, scheme token "-cmh1"): the char
	 * n-gram bits of a short text are a one-bit MinHash of its n-gram set;
	 * 1: the signs of its centered n-gram votes, as v2 was first released
	 * ("-cen1"; uncentered unless ngram 3, ngram_cjk 2). */
	int auto_char_votes;
} simhash_config;

/* Fills *cfg with the defaults. size is the caller's sizeof *cfg (the macro
 * passes it): the library writes only min(size, its own sizeof) bytes and sets
 * cfg->size to that, so a library newer than the caller's header never writes
 * past the caller's struct, and reads only the fields the caller has (the
 * others keep their defaults). Thread safety: safe. */
SIMHASH_API void simhash_config_init_sized(simhash_config *cfg, size_t size);
/* The function of the first release, kept for its callers (a macro now). */
SIMHASH_API void(simhash_config_init)(simhash_config *cfg);
#define simhash_config_init(c) simhash_config_init_sized((c), sizeof *(c))

/* SIMHASH_OK if *cfg is consistent; else SIMHASH_EINVAL. Thread safety: safe. */
SIMHASH_API simhash_err simhash_config_check(const simhash_config *cfg);

/* Sets one option of *cfg by the name and value the command line uses for it
 * (without the leading "--"): "bits" "128", "features" "word", "ngram" "4",
 * "no-t2s" NULL, ... A flag takes value NULL; every other option a value.
 * "stopwords" and "idf" name files: load them and set the fields instead.
 * SIMHASH_EINVAL for an unknown name or a bad value; *cfg is then untouched.
 * Combinations are checked by simhash_config_check(). Thread safety: safe. */
SIMHASH_API simhash_err simhash_config_set(simhash_config *cfg, const char *name,
					   const char *value);

/* 1 if option name takes a value, 0 if it is a flag, -1 if simhash_config_set()
 * does not know it. Thread safety: safe. */
SIMHASH_API int simhash_config_option_takes_value(const char *name);

/* The i-th value simhash_config_set() takes for option name when the option
 * is one of named values, in the order of its enum (so for "features",
 * simhash_config_value_name("features", SIMHASH_FEATURES_WORD) is "word";
 * for "bits": "32", "64", "128"); NULL past the last value, for an option of
 * another kind or an unknown name. Thread safety: safe. */
SIMHASH_API const char *simhash_config_value_name(const char *name, unsigned i);

/* The default features (SIMHASH_FEATURES_AUTO, scheme v2) take tf weights, no
 * tf cap and XXH3 only. A caller that sets the weight, tf cap or hash but not
 * the features means the char n-grams of scheme v1: given features_named = 0,
 * this switches AUTO to CHAR in that case and changes nothing otherwise. The
 * command line, SQL and Python all settle options this way. Thread safety: safe. */
SIMHASH_API void simhash_config_settle_features(simhash_config *cfg, int features_named);

#define SIMHASH_SCHEME_MAX 256

/* Writes the canonical scheme string of cfg, for example
 * "v2/f64/auto3-cjk2-cen1-mh1/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop" (the default) or
 * "v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop", NUL-terminated, into buf (SIMHASH_SCHEME_MAX bytes). Two configs with the
 * same scheme give the same fingerprints. SIMHASH_EINVAL if cfg is invalid.
 * Thread safety: safe. */
SIMHASH_API simhash_err simhash_config_scheme(const simhash_config *cfg, char *buf, size_t cap);

/* Parses a scheme string that simhash_config_scheme() writes back into *cfg
 * (filled by simhash_config_init() first; fields the scheme does not name, such
 * as the UTF-8 policy, keep their values). Only canonical strings are accepted:
 * anything else is SIMHASH_ECORRUPT and *cfg is untouched. A scheme names its
 * IDF and stop-word tables by digest only: set cfg->idf and cfg->stopwords to
 * the tables before the call (simhash_scheme_tables() tells which are needed).
 * If a named table is missing or has another digest, every other field is
 * filled and the result is SIMHASH_ESCHEME; a stop-word table the scheme does
 * not name is dropped (set to NULL) where it would change fingerprints.
 * Thread safety: safe. */
SIMHASH_API simhash_err simhash_config_from_scheme(const char *scheme, simhash_config *cfg);

#define SIMHASH_SCHEME_IDF 1u       /* the scheme names an IDF table */
#define SIMHASH_SCHEME_STOPWORDS 2u /* the scheme names a stop-word table */

/* Which tables a (canonical) scheme names, and their digests (0 where none):
 * *which gets SIMHASH_SCHEME_IDF | SIMHASH_SCHEME_STOPWORDS bits. Any output
 * may be NULL. SIMHASH_ECORRUPT if scheme is not canonical. Thread safety: safe. */
SIMHASH_API simhash_err simhash_scheme_tables(const char *scheme, unsigned *which,
					      uint64_t *idf_digest, uint64_t *stopwords_digest);

/* ---------------------------------------------------------------- fingerprinting */

typedef struct simhash_ctx simhash_ctx;

/* Creates a context for cfg (copied; its idf and stopwords are borrowed).
 * Holds ICU and OpenCC objects and scratch buffers reused across calls.
 * Thread safety: safe; the ctx then is one handle per thread. */
SIMHASH_API simhash_err simhash_ctx_new(const simhash_config *cfg, simhash_ctx **out);
SIMHASH_API void simhash_ctx_free(simhash_ctx *ctx);

/* The config the ctx was made with. Thread safety: one ctx per thread. */
SIMHASH_API const simhash_config *simhash_ctx_config(const simhash_ctx *ctx);

/* The caller's interrupt hook: returns nonzero to ask the work under way on
 * the ctx to stop. */
typedef int (*simhash_interrupt_fn)(void *arg);

/* Sets (fn NULL: removes) the interrupt hook of ctx. Every long-running step
 * of a call on ctx (HTML cleaning, UTF-8 decoding, normalization, word
 * breaking, the Python compatibility mode, stop words, the distinct
 * features, the votes, text similarity's sort and merge, streaming) reports
 * its work as it goes (bytes, characters or features) and calls fn(arg)
 * about once per 256 Ki units of it: a call returns within a few
 * milliseconds of CPU time of the first nonzero answer (bench/interrupt.sh
 * measures it; tens of milliseconds at most). Not interrupted: one ICU
 * word-break call on a run of Han characters with no space or punctuation
 * in it (the ICU tokenizer), and the UTF-8 check of --utf8 reject (GB/s).
 * When fn returns nonzero the call stops and returns SIMHASH_EINTR; its
 * outputs are untouched (an IDF document counts nothing), nothing is leaked,
 * and the ctx serves the next call as a new one would; an unfinished
 * simhash_fingerprint_begin() text keeps SIMHASH_EINTR as its error until
 * final. fn only answers: it must return (no longjmp or exception out of
 * it) and must not call the library on this ctx; typically it reads a flag
 * that a signal handler or another thread sets (PostgreSQL's
 * QueryCancelPending). A hook that never fires changes no result. Setting
 * the hook restarts its count. SIMHASH_EINVAL if ctx is NULL.
 * Thread safety: one ctx per thread; fn is called on the thread making the
 * call. */
SIMHASH_API simhash_err simhash_ctx_set_interrupt(simhash_ctx *ctx, simhash_interrupt_fn fn,
						  void *arg);

/* Fingerprints len bytes of UTF-8 text (a long one in windows, as
 * simhash_fingerprint_begin() does: memory beyond the text is bounded by its
 * distinct features). A text with no feature (empty, or only
 * spaces and punctuation) is fingerprinted as one empty feature; a text shorter
 * than one n-gram or shingle is one feature, the whole text. SIMHASH_EUTF8 if
 * the text is invalid UTF-8 and the config rejects it (err->offset: the byte
 * offset of the first invalid sequence); *out is then untouched.
 * Thread safety: one ctx per thread. */
SIMHASH_API simhash_err simhash_fingerprint(simhash_ctx *ctx, const char *text, size_t len,
					    simhash_fp *out, simhash_error *err);

/* The fingerprint of a text given in pieces, as simhash_fingerprint() gives
 * it for the pieces put together, bit for bit, for every config: begin, then
 * update with each piece (of any length; a piece may end inside a UTF-8
 * sequence), then final, which writes *out and ends the text. Memory stays
 * bounded by the text's distinct features and a window of about 1 MiB of
 * input, whatever the text's size, except under HTML cleaning, the ICU
 * tokenizer's word or shingle features and the Python compatibility mode,
 * which need the whole text and keep it. The first error (SIMHASH_ENOMEM,
 * SIMHASH_EUTF8 with err->offset counted from the first piece) is returned
 * by that update and again, with the same detail, by final; SIMHASH_EINVAL
 * for update or final without begin. simhash_fingerprint() on the same ctx
 * ends an unfinished text. Thread safety: one ctx per thread. */
SIMHASH_API simhash_err simhash_fingerprint_begin(simhash_ctx *ctx);
SIMHASH_API simhash_err simhash_fingerprint_update(simhash_ctx *ctx, const char *text,
						   size_t len, simhash_error *err);
SIMHASH_API simhash_err simhash_fingerprint_final(simhash_ctx *ctx, simhash_fp *out,
						  simhash_error *err);

/* Fingerprints the bytes read from fd up to its end, as simhash_fingerprint()
 * of them all, reading a slice at a time (simhash_fingerprint_begin(): memory
 * bounded whatever the size). *n_bytes (may be NULL) gets the bytes read.
 * SIMHASH_EIO with err->os_err set to errno if a read fails; SIMHASH_EUTF8
 * with err->offset. fd is left open. Thread safety: one ctx per thread. */
SIMHASH_API simhash_err simhash_fingerprint_fd(simhash_ctx *ctx, int fd, simhash_fp *out,
					       uint64_t *n_bytes, simhash_error *err);

/* A caller-supplied feature: len bytes (any bytes) and a finite weight. */
typedef struct simhash_feature {
	const char *data;
	size_t len;
	double weight;
} simhash_feature;

/* Fingerprints n features, each hashed with the ctx's hash and width and voting
 * with its weight. n == 0 gives the all-zero fingerprint. Under the Python
 * compatibility mode this equals Simhash([(feature, weight), ...]).
 * Thread safety: one ctx per thread. */
SIMHASH_API simhash_err simhash_fingerprint_features(simhash_ctx *ctx,
						     const simhash_feature *features, size_t n,
						     simhash_fp *out);

/* Calls fn(data, len, count, arg) for each distinct feature of text, in order of
 * first occurrence, with its number of occurrences (after stop words and before
 * weighting). The bytes are valid during the call only. fn returns nonzero to
 * stop early. SIMHASH_EINVAL under the Python compatibility mode, whose
 * features are not this library's; SIMHASH_EUTF8 with err->offset.
 * Thread safety: one ctx per thread. */
typedef int (*simhash_feature_fn)(const char *data, size_t len, uint32_t count, void *arg);
SIMHASH_API simhash_err simhash_features_each(simhash_ctx *ctx, const char *text, size_t len,
					      simhash_feature_fn fn, void *arg,
					      simhash_error *err);

/* Exact similarity of two texts under the ctx's features: the cosine of their
 * weighted feature vectors (tf-idf when the config has an IDF table, else the
 * config's weights) and the Jaccard index of their feature sets. Either output
 * may be NULL. Two texts without features have cosine and Jaccard 1.
 * SIMHASH_EINVAL under the Python compatibility mode; SIMHASH_EUTF8 with
 * err->offset in the text at fault. Thread safety: one ctx per thread. */
SIMHASH_API simhash_err simhash_text_similarity(simhash_ctx *ctx, const char *a, size_t a_len,
						const char *b, size_t b_len, double *cosine,
						double *jaccard, simhash_error *err);

/* Fingerprints n texts, text i being lens[i] bytes at texts[i], into out[i],
 * on n_ctxs threads, thread t using ctxs[t]: the calling thread is thread 0,
 * so one context makes no thread. The contexts must share one config; out[i]
 * is then what simhash_fingerprint() gives text i, whatever n_ctxs. On
 * failure returns the error of the lowest-numbered failing text, err->index
 * gets its number and, for SIMHASH_EUTF8, err->offset its offset in that
 * text; the outputs from that text on are unspecified.
 * SIMHASH_EINVAL if ctxs is NULL, n_ctxs 0, a context NULL, or n > 0 with
 * texts, lens or out NULL; SIMHASH_ENOMEM if the threads' state cannot be
 * allocated.
 * Thread safety: the contexts are one handle per thread, all held by the
 * call. */
SIMHASH_API simhash_err simhash_fingerprint_batch(simhash_ctx *const *ctxs, unsigned n_ctxs,
						  const char *const *texts, const size_t *lens,
						  size_t n, simhash_fp *out, simhash_error *err);

/* ---------------------------------------------------------------- IDF tables */

/* An IDF table maps a term (a feature's bytes) to its inverse document
 * frequency. Unknown terms get the median idf of the table (jieba's rule). */
SIMHASH_API simhash_err simhash_idf_new(simhash_idf **out);
SIMHASH_API void simhash_idf_free(simhash_idf *idf);

/* Counts the distinct features of one document (with ctx's features) towards
 * document frequencies. SIMHASH_EUTF8 with err->offset.
 * Thread safety: one idf and one ctx per thread. */
SIMHASH_API simhash_err simhash_idf_add_document(simhash_idf *idf, simhash_ctx *ctx,
						 const char *text, size_t len,
						 simhash_error *err);

/* Counts the distinct features of text (with ctx's features) into
 * *n_features, and those the table has a value for into *n_known: a table
 * made for other features (words against char n-grams, another language)
 * knows none, and every feature then gets the table's default. SIMHASH_EINVAL
 * under the Python compatibility mode; SIMHASH_EUTF8 with err->offset.
 * Thread safety: one ctx per thread, many readers of the idf. */
SIMHASH_API simhash_err simhash_idf_coverage(const simhash_idf *idf, simhash_ctx *ctx,
					     const char *text, size_t len, size_t *n_features,
					     size_t *n_known, simhash_error *err);

/* Turns counted document frequencies into idf = ln((1 + N) / (1 + df)) + 1
 * (smoothed, always > 0). Call after the last add_document, and after set():
 * results are the same without it, but unknown-term lookups then cost O(n). */
SIMHASH_API simhash_err simhash_idf_finish(simhash_idf *idf);

/* Adds or replaces one term. SIMHASH_EINVAL for a value that is negative
 * (it would invert the vote of every bit) or not finite. Thread safety: one
 * writer. */
SIMHASH_API simhash_err simhash_idf_set(simhash_idf *idf, const char *term, size_t len, double value);

/* The idf of a term; the table's default (median) if absent.
 * Thread safety: many readers once filled. */
SIMHASH_API double simhash_idf_get(const simhash_idf *idf, const char *term, size_t len);
SIMHASH_API size_t simhash_idf_size(const simhash_idf *idf);

/* Loads `term<TAB>idf` lines, or jieba's idf.txt (`term idf`, split at the
 * last space). Blank lines and lines starting with '#' are skipped. A value
 * must be a finite number >= 0. SIMHASH_ECORRUPT with err->line, the 1-based
 * bad line; SIMHASH_EIO with err->os_err. Thread safety: safe. */
SIMHASH_API simhash_err simhash_idf_load(const char *path, simhash_idf **out, simhash_error *err);

/* Writes `term<TAB>idf` lines sorted by term, atomically (temp file, fsync,
 * rename). Terms that load could not read back (holding a tab or newline, or
 * starting with '#' or a byte-order mark) are skipped. SIMHASH_EIO with
 * err->os_err. Thread safety: many readers. */
SIMHASH_API simhash_err simhash_idf_save(const simhash_idf *idf, const char *path,
					 simhash_error *err);

/* A 64-bit digest of the table's contents, part of the scheme string. */
SIMHASH_API uint64_t simhash_idf_digest(const simhash_idf *idf);

/* Calls fn for every term that has a value, in ascending order of its bytes
 * (memcmp, shorter first), with the exact value; fn returns nonzero to stop.
 * The bytes are valid during the call only. SIMHASH_ENOMEM leaves fn
 * uncalled. Thread safety: many readers. */
typedef int (*simhash_idf_fn)(const char *term, size_t len, double value, void *arg);
SIMHASH_API simhash_err simhash_idf_each(const simhash_idf *idf, simhash_idf_fn fn, void *arg);

/* ---------------------------------------------------------------- stop words */

SIMHASH_API simhash_err simhash_stopwords_new(simhash_stopwords **out);
SIMHASH_API void simhash_stopwords_free(simhash_stopwords *sw);
/* Adds a word; compared with features (words) after normalization, so add
 * them normalized (lowercase). */
SIMHASH_API simhash_err simhash_stopwords_add(simhash_stopwords *sw, const char *word, size_t len);
SIMHASH_API int simhash_stopwords_has(const simhash_stopwords *sw, const char *word, size_t len);
/* One word per line; blank lines and '#' comments skipped. SIMHASH_ECORRUPT
 * with err->line (invalid UTF-8); SIMHASH_EIO with err->os_err. */
SIMHASH_API simhash_err simhash_stopwords_load(const char *path, simhash_stopwords **out,
					       simhash_error *err);
SIMHASH_API uint64_t simhash_stopwords_digest(const simhash_stopwords *sw);

/* ---------------------------------------------------------------- UTF-8 and files */

/* The library's UTF-8 rules (Unicode's table 3-7), for callers that check or
 * repair text around what they fingerprint. Thread safety: safe. */

/* Offset of the first byte of the first invalid sequence, or len if s is
 * valid UTF-8. */
SIMHASH_API size_t simhash_utf8_validate(const char *s, size_t len);

/* Bytes of the well-formed sequence at s[0] (1..4), or 0 if there is none;
 * then *bad_len (may be NULL) gets the length of its maximal subpart (>= 1). */
SIMHASH_API size_t simhash_utf8_seq(const char *s, size_t len, size_t *bad_len);

/* Writes s to out with every maximal invalid subsequence replaced by U+FFFD,
 * as Python's bytes.decode('utf-8', 'replace') does, and returns the bytes
 * written. out holds at least 3 * len bytes and does not overlap s. */
SIMHASH_API size_t simhash_utf8_repair(const char *s, size_t len, char *out);

/* Reading whole files and writing output files, the same way for the library
 * and its commands. Failures give SIMHASH_EIO (or SIMHASH_ENOMEM) with the
 * system's errno value in err->os_err for the caller's message. */

/* Reads fd to its end, appending to the malloc'ed buffer *buf (*len bytes
 * used of *cap; NULL, 0, 0 to start), which grows with realloc. On success
 * *cap > *len, room for a terminating NUL. A regular file is read in one go.
 * Thread safety: safe. */
SIMHASH_API simhash_err simhash_read_fd(int fd, char **buf, size_t *len, size_t *cap,
					simhash_error *err);
/* The same for the file at path. */
SIMHASH_API simhash_err simhash_read_file(const char *path, char **buf, size_t *len,
					  size_t *cap, simhash_error *err);

/* An output file that appears whole or not at all. open() makes a temporary
 * file next to the target (the target of a symbolic link, which stays a link),
 * commit() fsyncs it, renames it over the target and fsyncs the directory; an
 * existing file keeps its mode (and, where allowed, its owner); a new one gets
 * 0666 less the umask. A character device or a FIFO (/dev/null, a pipe) is
 * written in place, never replaced; a directory, a block device, a socket or
 * a dangling link is refused (SIMHASH_EINVAL; err->os_err EISDIR for a
 * directory, ENOENT for a dangling link, else 0). abort() or a failed write or commit
 * removes the temporary file; commit() and abort() free the handle.
 * Thread safety: one handle per thread. */
typedef struct simhash_outfile simhash_outfile;
SIMHASH_API simhash_err simhash_outfile_open(const char *path, simhash_outfile **out,
					     simhash_error *err);
SIMHASH_API simhash_err simhash_outfile_write(simhash_outfile *f, const void *data, size_t len,
					      simhash_error *err);
SIMHASH_API simhash_err simhash_outfile_commit(simhash_outfile *f, simhash_error *err);
SIMHASH_API void simhash_outfile_abort(simhash_outfile *f);
/* The temporary file's path, NULL when written in place: valid until commit()
 * or abort(), for a caller that must remove it from a signal handler. */
SIMHASH_API const char *simhash_outfile_temp(const simhash_outfile *f);

/* ---------------------------------------------------------------- index */

/* An exact in-memory Hamming index: a set of (fingerprint, id) pairs of one
 * width (64 or 128 bits) that answers "every stored pair within distance k of
 * q", for any k up to the max_dist given at creation, exactly as a brute-force
 * scan would (same ids, same distances, each stored pair once), sorted by
 * distance then id. The layout (multi-index hashing over m disjoint chunks with
 * radius probing, or a plain popcount scan) is chosen from the width, max_dist,
 * the number of fingerprints, their measured bit bias and a memory budget; see
 * docs/algorithms.md.
 *
 * Thread safety of every simhash_index_* call on one handle: many readers, one
 * writer, enforced inside by a read-write lock. Queries, count, stats, save and
 * the getters take it shared and run in parallel; build, insert, delete and the
 * setters take it exclusively (a query waits for a write in progress). Pointers
 * returned by the getters are valid until the next writing call. */

typedef struct simhash_match {
	uint64_t id;
	unsigned dist;
} simhash_match;

/* A caller-owned growable result array: zero-initialize it; each query replaces
 * its contents (n) and reuses its memory (cap). */
typedef struct simhash_matches {
	simhash_match *v;
	size_t n;
	size_t cap;
} simhash_matches;

/* Frees m->v and zeroes *m; accepts NULL. Thread safety: one array per thread. */
SIMHASH_API void simhash_matches_free(simhash_matches *m);

typedef struct simhash_index simhash_index;

#define SIMHASH_INDEX_MAX_DIST_64 16
#define SIMHASH_INDEX_MAX_DIST_128 32

/* An empty index for bits 64 or 128 and queries up to max_dist (0..16 at 64
 * bits, 0..32 at 128); SIMHASH_EINVAL otherwise. Thread safety: safe. */
SIMHASH_API simhash_err simhash_index_new(unsigned bits, unsigned max_dist, simhash_index **out);
/* Accepts NULL. Thread safety: no other call on ix may run or follow. */
SIMHASH_API void simhash_index_free(simhash_index *ix);

/* Records the scheme string of the fingerprinting config the fingerprints were
 * made with (at most SIMHASH_SCHEME_MAX - 1 bytes; "" clears it). It is saved
 * with the index. Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_set_scheme(simhash_index *ix, const char *scheme);
/* The scheme string, "" if none. Thread safety: many readers, one writer. */
SIMHASH_API const char *simhash_index_scheme(const simhash_index *ix);

/* An opaque byte string kept and saved with the index for its user (the CLI
 * keeps its string ids there: docs/format.md). set copies len bytes (len 0
 * clears it); get gives a pointer valid until the next writing call (for an
 * opened index, into the mapped file). Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_set_user(simhash_index *ix, const void *data, size_t len);
SIMHASH_API void simhash_index_user(const simhash_index *ix, const void **data, size_t *len);

/* Adds n fingerprints packed as bits/64 words each (w[0] first) with their
 * ids; pairs already present are skipped. threads: worker threads for the
 * sorts and tables (0 = 1). Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_build(simhash_index *ix, const uint64_t *fps,
					    const uint64_t *ids, size_t n, unsigned threads);
/* Adds one pair; a pair already present changes nothing. SIMHASH_ESCHEME if
 * the width differs from the index's. Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_insert(simhash_index *ix, const simhash_fp *fp, uint64_t id);
/* Removes one pair; *found (may be NULL) = 1 if it was there, else 0.
 * SIMHASH_ESCHEME if the width differs from the index's.
 * Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_delete(simhash_index *ix, const simhash_fp *fp, uint64_t id,
					     int *found);
/* Number of pairs stored. Thread safety: many readers, one writer. */
SIMHASH_API size_t simhash_index_count(const simhash_index *ix);
SIMHASH_API unsigned simhash_index_bits(const simhash_index *ix);
SIMHASH_API unsigned simhash_index_max_dist(const simhash_index *ix);

/* All stored (id, dist) with dist <= k (k <= max_dist, else SIMHASH_EINVAL; q
 * of the index's width, else SIMHASH_ESCHEME), sorted by dist then id, each
 * stored pair once. Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_query(const simhash_index *ix, const simhash_fp *q, unsigned k,
					    simhash_matches *out);
/* n queries at once on `threads` threads (0 = 1): outs[i] gets the answer to
 * qs[i], exactly as simhash_index_query. Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_query_batch(const simhash_index *ix, const simhash_fp *qs,
						  size_t n, unsigned k, unsigned threads,
						  simhash_matches *outs);

typedef enum simhash_layout {
	SIMHASH_LAYOUT_SCAN = 0, /* every fingerprint compared (popcount, SIMD) */
	SIMHASH_LAYOUT_MIH = 1,  /* multi-index hashing: m chunk tables, radius probing */
} simhash_layout;

#define SIMHASH_PLAN_MAX_TABLES 33

/* A layout and its expected cost per query, for a width, k, n and bias. A
 * struct that grows (convention 3): simhash_index_plan_init() first. */
typedef struct simhash_index_plan {
	size_t size;
	simhash_layout layout;
	unsigned bits, k;
	uint64_t n;
	unsigned n_chunks;   /* m: the bits split into m disjoint chunks (MIH) */
	unsigned n_tables;   /* tables built: min(m, k + 1); 0 for a scan */
	unsigned chunk_bits[SIMHASH_PLAN_MAX_TABLES]; /* width of each table's chunk */
	unsigned radius[SIMHASH_PLAN_MAX_TABLES];     /* probing radius at k; UINT_MAX: skipped */
	double probes;       /* expected bucket look-ups per query */
	double candidates;   /* expected fingerprints compared per query */
	double query_ns;     /* expected time per query, nanoseconds (model) */
	double scan_ns;      /* a full scan per query under the same model */
	double bytes_per_fp; /* memory per stored pair, ids included */
	uint64_t memory;     /* total bytes */
} simhash_index_plan;

/* Sets s->size to the caller's sizeof *s and every other byte to zero: the
 * init of the structs that grow and hold only results (convention 3). */
#define SIMHASH_RESULTS_INIT_(s) ((void)memset((s), 0, sizeof *(s)), (s)->size = sizeof *(s))
#define simhash_index_plan_init(p) SIMHASH_RESULTS_INIT_(p)

/* Chooses the layout for n fingerprints of `bits` and queries up to k whose
 * bits are each 1 with probability p_one (0.5: uniform) within `memory` bytes
 * (0: no limit); the cheapest of every MIH split and the scan under a cost
 * model (docs/algorithms.md). out->size set by simhash_index_plan_init().
 * Thread safety: safe. */
SIMHASH_API simhash_err simhash_index_plan_make(unsigned bits, unsigned k, uint64_t n, double p_one,
						uint64_t memory, simhash_index_plan *out);

/* Counters of an index; a struct that grows (convention 3):
 * simhash_index_stats_init() first. */
typedef struct simhash_index_stats {
	size_t size;
	uint64_t count;      /* live pairs */
	uint64_t dead;       /* deleted pairs not yet compacted away */
	unsigned segments;   /* immutable segments (inserts go to small new ones) */
	uint64_t memory;     /* bytes of tables, ids and fingerprints (mapped included) */
	int mapped;          /* 1: the largest segment lives in a mapped file */
} simhash_index_stats;
#define simhash_index_stats_init(s) SIMHASH_RESULTS_INIT_(s)

/* Fills *st (st->size set by simhash_index_stats_init()). Thread safety: many
 * readers, one writer. */
SIMHASH_API simhash_err simhash_index_get_stats(const simhash_index *ix, simhash_index_stats *st);
/* The layout of the largest segment into *plan (plan->size set by
 * simhash_index_plan_init()). Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_get_plan(const simhash_index *ix, simhash_index_plan *plan);

/* Writes the index to path atomically (temp file, fsync, rename), compacted
 * into one segment with its tables, so that open needs no rebuild. The file
 * is little-endian with a magic, format version, width, scheme, count and a
 * header checksum (docs/format.md). SIMHASH_EIO with err->os_err; SIMHASH_EINVAL
 * for a path that cannot be replaced (err->msg says why).
 * Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_save(const simhash_index *ix, const char *path,
					   simhash_error *err);
/* Builds the index of n fingerprints straight into the file at path: the same
 * bytes as simhash_index_build into the empty ix, then simhash_index_save,
 * but each table is built (on `threads` threads, 0 = 1), written and freed
 * in turn, so memory holds the rows and one table, never the whole index.
 * fps and ids are the caller's and serve as scratch: they are left sorted by
 * (fp, id) with repeated pairs removed. ix gives the width, max_dist,
 * layout, scheme and user bytes and must be empty (else SIMHASH_EINVAL); it
 * is not changed. Errors as simhash_index_save's. Thread safety: many
 * readers, one writer. */
SIMHASH_API simhash_err simhash_index_build_file(const simhash_index *ix, uint64_t *fps, uint64_t *ids,
						 size_t n, unsigned threads, const char *path,
						 simhash_error *err);
/* Opens a saved index by memory map, in time independent of its size; the
 * header is checked before use. SIMHASH_EIO if unreadable (err->os_err),
 * SIMHASH_EVERSION if written by a newer format version, SIMHASH_ECORRUPT if
 * not a valid index (wrong magic, truncated, bad checksum); err->msg says
 * why ("bad magic: not a simhash index", "format version 9 is newer than
 * this library's 1", "truncated: ..."). Inserts and deletes after open stay
 * in memory until saved. Thread safety: safe. */
SIMHASH_API simhash_err simhash_index_open(const char *path, simhash_index **out,
					   simhash_error *err);
/* Checks the body of an index opened from a file against the checksum its
 * header records (one pass over the file; open checks the header only):
 * SIMHASH_ECORRUPT with "body checksum mismatch" in err->msg if it differs.
 * SIMHASH_OK for an index built in memory or a file of format version 1,
 * which records none. Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_verify(const simhash_index *ix, simhash_error *err);

/* ---------------------------------------------------------------- all pairs, clusters, fingerprint files */

/* A binary fingerprint file: a header (magic, format version, byte order mark,
 * width, record size, count, the scheme string of the fingerprinting config,
 * checksums), then `count` fixed-size records (little-endian 64-bit words: one
 * per fingerprint of 32 or 64 bits, two - w[0], w[1] - of 128 bits), then the
 * ids (strings of any bytes). Layout in docs/format.md. */
#define SIMHASH_FPFILE_VERSION 1

typedef struct simhash_fpfile simhash_fpfile;
typedef struct simhash_fpfile_writer simhash_fpfile_writer;

/* Writes len bytes somewhere; returns 0, or nonzero to stop the write. */
typedef int (*simhash_write_fn)(const void *data, size_t len, void *arg);

/* A writer for fingerprints of `bits` (32, 64, 128) under `scheme` (NULL or ""
 * when unknown, as for fingerprints read from the text form; at most
 * SIMHASH_SCHEME_MAX - 1 bytes). It keeps records and ids in memory until
 * simhash_fpfile_writer_finish(). Thread safety: one handle per thread. */
SIMHASH_API simhash_err simhash_fpfile_writer_new(unsigned bits, const char *scheme,
						  simhash_fpfile_writer **out);
SIMHASH_API void simhash_fpfile_writer_free(simhash_fpfile_writer *w);

/* Appends one fingerprint (of the writer's width, else SIMHASH_ESCHEME) and
 * its id (id_len bytes, any bytes). Thread safety: one handle per thread. */
SIMHASH_API simhash_err simhash_fpfile_writer_add(simhash_fpfile_writer *w, const simhash_fp *fp,
						  const char *id, size_t id_len);

/* Writes the whole file through fn, in order; SIMHASH_EIO if fn fails. The
 * caller makes it atomic (temporary file, fsync, rename).
 * Thread safety: one handle per thread. */
SIMHASH_API simhash_err simhash_fpfile_writer_finish(simhash_fpfile_writer *w,
						     simhash_write_fn fn, void *arg);

/* Opens a fingerprint file by memory map and checks it: magic, version, byte
 * order, header checksum, and that the file holds all the header promises.
 * SIMHASH_ECORRUPT (not such a file, bad checksum, truncated),
 * SIMHASH_EVERSION (a newer format version), SIMHASH_EIO (cannot read;
 * err->os_err). err->msg gets the reason, such as "not a simhash
 * fingerprint file (bad magic)". The body checksum is checked by
 * simhash_fpfile_verify() only (it reads everything).
 * Thread safety: safe; the handle then is many readers. */
SIMHASH_API simhash_err simhash_fpfile_open(const char *path, simhash_fpfile **out,
					    simhash_error *err);
/* The same on len bytes in memory, which must outlive the handle. */
SIMHASH_API simhash_err simhash_fpfile_open_mem(const void *data, size_t len,
						simhash_fpfile **out, simhash_error *err);
SIMHASH_API void simhash_fpfile_close(simhash_fpfile *f);

/* Recomputes the body checksum: SIMHASH_OK or SIMHASH_ECORRUPT. */
SIMHASH_API simhash_err simhash_fpfile_verify(const simhash_fpfile *f);

SIMHASH_API unsigned simhash_fpfile_bits(const simhash_fpfile *f);
SIMHASH_API uint64_t simhash_fpfile_count(const simhash_fpfile *f);
/* The scheme string, NUL-terminated; "" if the writer did not know it. */
SIMHASH_API const char *simhash_fpfile_scheme(const simhash_fpfile *f);

/* Fingerprint i (< count) into *out. Thread safety: many readers. */
SIMHASH_API simhash_err simhash_fpfile_get(const simhash_fpfile *f, uint64_t i, simhash_fp *out);

/* The records as words (1 per fingerprint, 2 for 128 bits), ready for
 * simhash_pairs_self(); NULL on a big-endian host (use _get()).
 * Valid until close. Thread safety: many readers. */
SIMHASH_API const uint64_t *simhash_fpfile_words(const simhash_fpfile *f);

/* Id i (< count): *id points into the file (not NUL-terminated), *len bytes.
 * SIMHASH_ECORRUPT if the id section is inconsistent. Thread safety: many readers. */
SIMHASH_API simhash_err simhash_fpfile_id(const simhash_fpfile *f, uint64_t i, const char **id,
					  size_t *len);

/* ---- all pairs within a distance */

/* A pair of fingerprints at Hamming distance dist: in a self-join a < b are
 * indexes into the one set; in a join a indexes the first set, b the second. */
typedef struct simhash_pair {
	uint64_t a;
	uint64_t b;
	unsigned dist;
} simhash_pair;

/* Fingerprints as words: one uint64_t each of 32 or 64 bits (the upper 32 bits
 * of a 32-bit one zero), two (w[0], w[1]) of 128 bits, as simhash_fp.w holds
 * them and simhash_fpfile_words() returns them. */

/* Every pair i < j of the n fingerprints with distance <= max_dist, exactly
 * (the pairs a brute-force scan finds, identical fingerprints included as
 * distance 0), each once, sorted by a then b, into a malloc'ed array that
 * simhash_pairs_free() releases. max_dist <= bits / 4 (8, 16, 32); n < 2^32.
 * Uses n_threads threads (0: 1); the result does not depend on it. Memory:
 * 12 bytes per fingerprint of 64 bits (20 of 128) beyond the input, plus the
 * result. Thread safety: safe. */
SIMHASH_API simhash_err simhash_pairs_self(const uint64_t *fps, size_t n, unsigned bits,
					   unsigned max_dist, unsigned n_threads,
					   simhash_pair **out, size_t *n_out);

/* Every pair (i in a, j in b) with distance <= max_dist, sorted by i then j.
 * Same limits and guarantees (n_a + n_b < 2^32). Thread safety: safe. */
SIMHASH_API simhash_err simhash_pairs_join(const uint64_t *a, size_t n_a, const uint64_t *b,
					   size_t n_b, unsigned bits, unsigned max_dist,
					   unsigned n_threads, simhash_pair **out, size_t *n_out);

SIMHASH_API void simhash_pairs_free(simhash_pair *pairs);

/* ---- clusters */

/* Connected components of the graph whose edges are the n_pairs pairs (of a
 * self-join over n items): cluster[i] gets, for each item i < n, the index of
 * its representative, the first (smallest index) member of its component; an
 * item without pairs is its own representative. Thread safety: safe. */
SIMHASH_API simhash_err simhash_clusters(size_t n, const simhash_pair *pairs, size_t n_pairs,
					 uint64_t *cluster);

/* ---------------------------------------------------------------- near-duplicates by exact similarity */

/* What `simhash dedup` decides with no -k and no --verify (docs/quality.md,
 * "Near-duplicates out of the box"). Two texts are near-duplicates when the
 * Jaccard index J of their feature sets, |A and B| / |A or B|, reaches the
 * threshold of their kind; the features follow the text's length (and so
 * its script, through what a character is), never a labelled set:
 *  - short, at most SIMHASH_NEAR_SHORT code points of input: the set of its
 *    character 3-grams (2-grams from a Han or Kana character, which carries a
 *    syllable), normalized as the default config does (NFKC and case folding,
 *    traditional Chinese folded to simplified, punctuation dropped); a text
 *    shorter than n is one feature; threshold J >= SIMHASH_NEAR_T_SHORT,
 *    and at most SIMHASH_NEAR_DIFF_SHORT of the pair's features not shared
 *    (|A xor B| <= 64: so J >= max(0.4, 1 - 64 / |A or B|));
 *  - long: the set of its word 3-shingles (simple tokenizer, NFKC and case
 *    folding); threshold J >= SIMHASH_NEAR_T_LONG, the shingle Jaccard of the
 *    `natural` set's definition of a near-duplicate.
 * One threshold on one scale: the similarity S = simhash_near_similarity()
 * is J for long texts and 1 - (1 - J) / 3 for short ones, and a pair is near
 * iff S >= 0.8 (and, for short texts, the budget holds). The factor 3: on a short text an edit (a typo, a changed
 * word, a prefix or suffix) removes about three times the share of n-grams
 * that it removes of a long text's shingles relative to its length, so the
 * same reader's judgment sits at 1 - J = 0.6 for short texts and 0.2 for long
 * ones (measured on the public sets, docs/quality.md). The budget: an edit
 * (a typo, a word, a prefix) changes about the same number of n-grams
 * whatever the text's length, so a near pair of short texts differs by a
 * bounded count of them (about 50 at the 99th percentile on the public
 * sets, at every length), while J >= 0.4 alone lets two texts of 176
 * characters differ by up to about 150: templated mails that share their
 * header lines and no sentence.
 * The threshold thus rises from 0.4 (up to 106 n-grams in all) to about 0.64
 * at 176 characters, on the way to the long texts' 0.8. A short and a long
 * text are never near-duplicates. Feature keys are 64-bit XXH3, as
 * everywhere in the library.
 */
#define SIMHASH_NEAR_SHORT 176
#define SIMHASH_NEAR_T_SHORT 0.4
#define SIMHASH_NEAR_T_LONG 0.8
#define SIMHASH_NEAR_DIFF_SHORT 64

typedef enum simhash_near_kind {
	SIMHASH_NEAR_CHARS = 1,    /* a short text: char 3-grams (CJK: 2-grams) */
	SIMHASH_NEAR_SHINGLES = 2, /* a long text: word 3-shingles */
} simhash_near_kind;

/* What the decision needs of one text: its distinct feature keys, ascending. */
typedef struct simhash_sketch {
	const uint64_t *keys;
	size_t n_keys;
	simhash_near_kind kind;
} simhash_sketch;

/* The similarity of a pair of a kind on the one scale of the threshold 0.8:
 * long texts, their Jaccard index; short texts, 1 - (1 - J) / 3 (J >= 0.4
 * is similarity >= 0.8). Thread safety: safe. */
SIMHASH_API double simhash_near_similarity(simhash_near_kind kind, double jaccard);

/* The decision on one pair, and why. */
typedef struct simhash_near_verdict {
	int near;                /* 1: near-duplicates */
	simhash_near_kind kind;  /* of the pair; 0 when the kinds differ */
	double jaccard;          /* |shared| / (n_a + n_b - shared); 0 when kinds differ */
	double threshold;        /* of the pair: near iff jaccard reaches it (the
				  * kind's, or for short texts 1 - 64 / union
				  * when that is higher) */
	size_t shared, n_a, n_b; /* distinct features in common, of a, of b */
} simhash_near_verdict;

typedef struct simhash_near simhash_near;

/* A handle for sketching texts (two contexts and scratch space).
 * Thread safety: one handle per thread. */
SIMHASH_API simhash_err simhash_near_new(simhash_near **out);
SIMHASH_API void simhash_near_free(simhash_near *nd);

/* The sketch of len bytes of UTF-8 text (invalid bytes become U+FFFD). Its
 * keys point into nd: valid until the next call on nd; copy them to keep
 * them. A text without features (empty, punctuation only) has no keys.
 * Thread safety: one handle per thread. */
SIMHASH_API simhash_err simhash_near_sketch(simhash_near *nd, const char *text, size_t len,
					    simhash_sketch *out);

/* The decision on two sketches: near iff both have the same kind and
 * jaccard >= the kind's threshold, and for short texts at most
 * SIMHASH_NEAR_DIFF_SHORT keys not shared (two sketches without keys:
 * jaccard 1), decided in integers.
 * Symmetric. Thread safety: safe. */
SIMHASH_API void simhash_near_decide(const simhash_sketch *a, const simhash_sketch *b,
				     simhash_near_verdict *out);

/* The decision on two texts: sketches both, then simhash_near_decide().
 * Thread safety: one handle per thread. */
SIMHASH_API simhash_err simhash_near_texts(simhash_near *nd, const char *a, size_t a_len,
					   const char *b, size_t b_len, simhash_near_verdict *out);

/* A near-duplicate pair of a join: a < b, indexes into its sketches. */
typedef struct simhash_near_pair {
	uint64_t a;
	uint64_t b;
	double jaccard;
} simhash_near_pair;

/* Every near-duplicate pair of n sketches, exactly: the pairs for which
 * simhash_near_decide() says near, with no candidate missed (prefix
 * filtering, lib/index/near_join.c), so any other exact method (a cluster
 * job testing its own candidates with simhash_near_decide()) finds the same
 * pairs. Exact duplicates are collapsed first:
 * same[i] gets the first j <= i whose sketch is identical to i's (same kind
 * and keys; same[i] == i for the first of each), and the pairs, sorted by a
 * then b, are those between such first members only (two texts with the
 * same sketch have jaccard 1; a caller that wants every pair expands them).
 * *out is malloc'ed (simhash_near_pairs_free()); n < 2^32. Memory: about 12
 * bytes per key beyond the input, plus the result. Thread safety: safe. */
SIMHASH_API simhash_err simhash_near_join(const simhash_sketch *docs, size_t n, uint64_t *same,
					  simhash_near_pair **out, size_t *n_out);
SIMHASH_API void simhash_near_pairs_free(simhash_near_pair *pairs);

/* The clusters of the same join without listing its pairs: cluster[i] gets
 * the first (smallest index) member of i's connected component of near pairs
 * and exact duplicates, as simhash_clusters() would from every pair; a pair
 * whose two sides are already connected is not verified. Thread safety:
 * safe. */
SIMHASH_API simhash_err simhash_near_clusters(const simhash_sketch *docs, size_t n,
					      uint64_t *cluster);

/* The default's candidate stage: the pairs above that share one of
 * SIMHASH_NEAR_BANDS band keys of banded MinHash over the sketches' keys
 * (lib/index/near_bands.c), each checked by simhash_near_decide()'s exact
 * test. A pair at J = 0.4 is a candidate with probability about 0.80, at
 * J = 0.6 0.997, at J = 0.8 all but surely; measured on the public sets,
 * 98.8 % (Chinese) and 99.2 % (English) of the short pairs of the exact join
 * and 99.7 % of the long ones. Every pair listed is near; the result is a pure
 * function of the sketches (any grouping of the same band keys, for example
 * a cluster job's shuffle, checking each pair in the first band whose keys
 * agree, finds the same pairs). */
#define SIMHASH_NEAR_BANDS 24

/* The band keys of a sketch. Thread safety: safe. */
SIMHASH_API void simhash_near_bands(const simhash_sketch *sk, uint64_t out[SIMHASH_NEAR_BANDS]);

/* As simhash_near_join(), with the candidates of the bands: same[] and *out
 * as there. Memory: about 300 bytes per distinct sketch, plus the
 * result. Thread safety: safe. */
SIMHASH_API simhash_err simhash_near_band_join(const simhash_sketch *docs, size_t n,
					       uint64_t *same, simhash_near_pair **out,
					       size_t *n_out);

/* As simhash_near_clusters(), with the candidates of the bands: the
 * connected components of the pairs simhash_near_band_join() lists and of
 * the exact duplicates. Thread safety: safe. */
SIMHASH_API simhash_err simhash_near_band_clusters(const simhash_sketch *docs, size_t n,
						   uint64_t *cluster);

/* ---------------------------------------------------------------- store */

/* A persistent store of documents on LMDB: one data file PATH and its lock
 * file PATH-lock. A document is a string id (any bytes but NUL-free UTF-8 is
 * expected; 1..SIMHASH_STORE_ID_MAX bytes), a fingerprint of the store's
 * width, its insertion time (Unix seconds) and optional metadata (any bytes,
 * at most SIMHASH_STORE_META_MAX, for example a small JSON object). The store
 * records a magic number, its format version, the fingerprint config and its
 * scheme string; fingerprints of any other scheme must not be put in it.
 *
 * Writes are durable when the call returns SIMHASH_OK: every write goes
 * through one writer thread inside the handle, which takes all the writes
 * queued by any number of threads into one LMDB transaction and one fsync
 * (group commit), then wakes their callers. Reads (get, query, each) run in
 * the caller's thread on an LMDB read transaction and never wait for writes.
 * The search structure is the library's exact index (simhash_index) in
 * memory, answering k up to 12 (32-bit and 64-bit stores) or 24 (128-bit);
 * a larger k scans the documents (slower, same answers). It
 * is updated after each commit, so a query sees every write acknowledged
 * before it started. The index is saved to PATH-index at checkpoints: at
 * create, in the background whenever the changes since the last one reach
 * a sixteenth of the store (at least 4096), and at a clean close when one is
 * due. Open maps the last
 * checkpoint and replays the changes made since it (additions from "docs",
 * deletions from a log kept in the same transactions), so an open after a
 * crash costs a bulk build of at most about a sixteenth of the store; without
 * a usable checkpoint it rebuilds the index from every document.
 *
 * One process at a time opens a store for writing (an exclusive lock on the
 * data file; a second writer gets SIMHASH_EIO "store is locked"). Read-only
 * handles may be opened alongside by other processes: they see a snapshot of
 * the index taken at their open and the documents as committed.
 *
 * Errors: SIMHASH_EIO (file, lock, LMDB failures), SIMHASH_ENOSPC (a write
 * found no space: the file system is full, or the LMDB map; nothing of the
 * failed write is kept, and writes succeed again once there is space),
 * SIMHASH_ECORRUPT (not a store, wrong format version, malformed record, a
 * record that fails its checksum: never returned with a changed value; the
 * message names the store and the id), SIMHASH_ESCHEME (a
 * fingerprint of another width), SIMHASH_EINVAL (bad argument, write on a
 * read-only handle). Every store function that can fail takes `err` last
 * (convention 2): its msg names the store, the id or LMDB's message. */
typedef struct simhash_store simhash_store;

#define SIMHASH_STORE_FORMAT_VERSION 3
#define SIMHASH_STORE_ID_MAX 480      /* bytes: LMDB's key limit, less our framing */
#define SIMHASH_STORE_META_MAX 65536  /* bytes of metadata per document */
#define SIMHASH_STORE_BATCH_BUCKETS 13 /* simhash_store_stats.commit_batches */

enum {
	SIMHASH_STORE_RDONLY = 1, /* open read-only: writes give SIMHASH_EINVAL */
};

/* Creates a new store at path (which must not exist) for fingerprints made
 * with cfg (copied, with its stop word and IDF tables written into the store).
 * On failure *out is NULL. Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_create(const char *path, const simhash_config *cfg,
					     simhash_store **out, simhash_error *err);

/* Opens an existing store; flags: 0 or SIMHASH_STORE_RDONLY. Maps the last
 * checkpoint of the index and replays the changes since it, else rebuilds
 * the index from the stored fingerprints. A store of format version 2 is
 * upgraded to version 3 (a checksum in every record) by an open for writing,
 * in one transaction; a read-only open refuses it (SIMHASH_ECORRUPT, the
 * message says what to run). On failure *out is NULL. Do not open one store
 * twice in one process (LMDB's rule). Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_open(const char *path, unsigned flags, simhash_store **out,
					   simhash_error *err);

/* Stops a background checkpoint and the writer thread (after committing what
 * is queued), saves the index of a writing handle to PATH-index when a
 * checkpoint is due (else the next open replays the changes since the last
 * one), and closes the store. Accepts NULL.
 * Thread safety: no other call on st may be running or follow. */
SIMHASH_API void simhash_store_close(simhash_store *st);

/* The store's scheme string, valid until close. Thread safety: safe. */
SIMHASH_API const char *simhash_store_scheme(const simhash_store *st);

/* The store's fingerprint width: 32, 64 or 128. Thread safety: safe. */
SIMHASH_API unsigned simhash_store_bits(const simhash_store *st);

/* Fills *cfg (initialized by the caller with simhash_config_init) with the
 * config the store was created with; its idf and stopwords point to tables
 * owned by st, valid until close. simhash_ctx_new(cfg) then fingerprints texts
 * under the store's scheme. Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_config(const simhash_store *st, simhash_config *cfg,
					     simhash_error *err);

/* A document to write. time: Unix seconds; 0 means now. */
typedef struct simhash_store_doc {
	const char *id;
	size_t id_len;
	simhash_fp fp;
	const void *meta; /* may be NULL when meta_len is 0 */
	size_t meta_len;
	int64_t time;
} simhash_store_doc;

/* A document read back, or a match of a query (dist: its Hamming distance to
 * the query; 0 for get and each). Its pointers belong to the results object
 * (or, in simhash_store_each, to the callback's call). */
typedef struct simhash_store_match {
	const char *id; /* NUL-terminated too */
	size_t id_len;
	simhash_fp fp;
	unsigned dist;
	const void *meta;
	size_t meta_len;
	int64_t time;
} simhash_store_match;

/* Results of get, query and check_and_put: owned by the caller, reused across
 * calls (each call replaces the contents). Thread safety: one per thread. */
typedef struct simhash_store_results simhash_store_results;
SIMHASH_API simhash_err simhash_store_results_new(simhash_store_results **out);
SIMHASH_API void simhash_store_results_free(simhash_store_results *r);
SIMHASH_API size_t simhash_store_results_count(const simhash_store_results *r);
/* Match i < count, valid until the next call filling r; NULL if i is out of range. */
SIMHASH_API const simhash_store_match *simhash_store_results_get(const simhash_store_results *r,
								 size_t i);

/* Adds a document, or replaces the one with the same id (new fingerprint,
 * meta and time). Durable on return. SIMHASH_ESCHEME if doc->fp.bits is not
 * the store's width. Thread safety: safe (writes of all threads are group-committed). */
SIMHASH_API simhash_err simhash_store_put(simhash_store *st, const simhash_store_doc *doc,
					  simhash_error *err);

/* Adds or replaces n documents in one transaction: all or none. Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_put_many(simhash_store *st, const simhash_store_doc *docs,
					       size_t n, simhash_error *err);

/* Atomic check-and-put: finds the stored documents within max_dist of doc->fp
 * (into r, nearest first, at most max_results of them, 0: all), then, unless
 * if_unique is set and one was found, puts doc; *added (may be NULL) says
 * whether it did. No other write comes between the check and the put. A stored
 * document with doc's own id is not counted as a duplicate of it.
 * Thread safety: safe; r one per thread. */
SIMHASH_API simhash_err simhash_store_check_and_put(simhash_store *st, const simhash_store_doc *doc,
						    unsigned max_dist, size_t max_results,
						    int if_unique, simhash_store_results *r,
						    int *added, simhash_error *err);

/* Deletes the document with this id; *deleted (may be NULL) says whether there
 * was one. Durable on return. Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_delete(simhash_store *st, const char *id, size_t id_len,
					     int *deleted, simhash_error *err);

/* Deletes every document put before time `before` (Unix seconds); *n_deleted
 * (may be NULL) gets their number. Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_expire(simhash_store *st, int64_t before, size_t *n_deleted,
					     simhash_error *err);

/* Looks a document up by id: r holds it (count 1) or nothing (count 0).
 * Thread safety: safe; r one per thread. */
SIMHASH_API simhash_err simhash_store_get(simhash_store *st, const char *id, size_t id_len,
					  simhash_store_results *r, simhash_error *err);

/* The documents within max_dist of fp, nearest first (ties by id), at most
 * max_results (0: all). SIMHASH_ESCHEME if fp's width is not the store's.
 * Thread safety: safe; r one per thread. */
SIMHASH_API simhash_err simhash_store_query(simhash_store *st, const simhash_fp *fp,
					    unsigned max_dist, size_t max_results,
					    simhash_store_results *r, simhash_error *err);

/* Calls fn(doc, arg) for every document in insertion order, on one snapshot
 * (writes made meanwhile, by fn too, are not seen); doc is valid during the
 * call. fn returns nonzero to stop. Thread safety: safe. */
typedef int (*simhash_store_each_fn)(const simhash_store_match *doc, void *arg);
SIMHASH_API simhash_err simhash_store_each(simhash_store *st, simhash_store_each_fn fn, void *arg,
					   simhash_error *err);

/* Counters of a store; a struct that grows (convention 3):
 * simhash_store_stats_init() first. */
typedef struct simhash_store_stats {
	size_t size;
	uint64_t n_docs;        /* documents stored */
	unsigned bits;
	unsigned format_version;
	uint64_t file_bytes;    /* size of the data file in use (pages used) */
	uint64_t n_commits;     /* write transactions committed since open */
	uint64_t n_committed;   /* write requests acknowledged since open */
	uint64_t max_batch;     /* most requests in one commit since open */
	double open_seconds;    /* time the open took (index rebuild included) */
	uint64_t open_replayed; /* changes (additions, deletions) replayed onto the
				 * mapped checkpoint at open; UINT64_MAX: the index
				 * was rebuilt from every document */
	uint64_t n_checkpoints; /* checkpoints installed since open */
	uint64_t checkpoint_delta; /* changes since the last checkpoint */
	/* commits since open by the write requests each carried: [0] one,
	 * [i] from 2^(i-1) + 1 to 2^i (a commit carries at most 4096) */
	uint64_t commit_batches[SIMHASH_STORE_BATCH_BUCKETS];
} simhash_store_stats;
#define simhash_store_stats_init(s) SIMHASH_RESULTS_INIT_(s)

/* Fills *out (out->size set by simhash_store_stats_init()). Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_stats_get(simhash_store *st, simhash_store_stats *out,
						simhash_error *err);

/* Saves the index of the latest committed state to PATH-index now (a
 * checkpoint; the store also takes them by itself in the background, see
 * docs/format.md), so that an open after a crash maps it and replays only
 * the changes made since. Blocks for a full build of the index; writes and
 * reads go on meanwhile. SIMHASH_EINVAL on a read-only handle.
 * Thread safety: safe (checkpoints run one at a time). */
SIMHASH_API simhash_err simhash_store_checkpoint(simhash_store *st, simhash_error *err);

/* Checks every invariant on one snapshot: magic, format version, the stored
 * config gives the stored scheme, each record well-formed, ids and document
 * numbers map one to one, every fingerprint of the store's width, and the
 * in-memory index holds exactly the stored documents. Calls fn(problem, arg)
 * for each problem found (fn may be NULL); *n_problems gets their number.
 * Returns SIMHASH_OK when it could check (problems or not).
 * Thread safety: safe. */
typedef void (*simhash_store_problem_fn)(const char *problem, void *arg);
SIMHASH_API simhash_err simhash_store_verify(simhash_store *st, simhash_store_problem_fn fn,
					     void *arg, uint64_t *n_problems, simhash_error *err);

/* ---------------------------------------------------------------- experimental
 * Test knobs: they may change or go in any release. */

/* Overrides the automatic layout of the segments an index builds from now
 * on (for tests and benchmarks): -1 automatic (the default),
 * SIMHASH_LAYOUT_SCAN, or SIMHASH_LAYOUT_MIH with n_chunks chunks (bits/64
 * .. min(max_dist + 1, 33); 0: the plan's choice). Results never depend on
 * it, only speed and memory. Thread safety: many readers, one writer. */
SIMHASH_API simhash_err simhash_index_set_layout(simhash_index *ix, int layout, unsigned n_chunks);

/* simhash_store_open with LMDB's map limited to map_bytes (0: the default,
 * 1 TiB; LMDB raises a limit below the data already stored to its size):
 * writes past it fail with SIMHASH_ENOSPC, as on a full file system. A later
 * open without the limit lifts it. Thread safety: safe. */
SIMHASH_API simhash_err simhash_store_open_mapped(const char *path, unsigned flags,
						  size_t map_bytes, simhash_store **out,
						  simhash_error *err);

/* ---------------------------------------------------------------- caveats
 *
 * - Fingerprints compare only under one scheme string (simhash_ctx_scheme()):
 *   a store or index records its scheme and width and refuses others; the
 *   text form (HEX<TAB>ID) does not carry it, so record it beside the file.
 * - Handles are not shared between threads unless their comment says so:
 *   one simhash_ctx, simhash_near or writer per thread; an index is many
 *   readers or one writer; a store takes any number of threads.
 * - A store is an LMDB environment (one data file and its -lock file): open
 *   it once per process; do not keep using a store handle in the child of a
 *   fork(); keep it off network file systems, whose locks LMDB cannot trust.
 *   Its map reserves 1 TiB of address space (sparse) unless opened with a
 *   limit. A record that fails its checksum is refused, never returned
 *   changed; LMDB's free pages may keep stale copies of old records, which
 *   no read returns and verify does not read.
 * - A saved index is mapped, not copied: replace its file by writing a new
 *   one and renaming it (as simhash_index_save does), never by rewriting or
 *   truncating it in place while an index opened from it is in use.
 * - Interrupt callbacks (simhash_ctx_set_interrupt) run on the calling
 *   thread in the middle of a call; they must only read a flag.
 * - The near-duplicate joins hold every sketch's keys in memory (8 bytes per
 *   distinct feature); the band join finds the pairs among its candidates
 *   (about 99 % of the exact join's on the public sets), the exact join all
 *   of them in time that grows faster than the input on short texts.
 */

#ifdef __cplusplus
}
#endif
#endif /* SIMHASH_H */
