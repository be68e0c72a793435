/* internal.h - helpers shared by the modules of lib/ (prefix sh_), never exported.
 * Layers run one way: hash -> normalize -> features -> fingerprint; a module
 * includes only those to its left and common/. */
#ifndef SH_INTERNAL_H
#define SH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "../simhash.h"

#define SH_UNUSED(x) ((void)(x))
#define SH_LIKELY(x) __builtin_expect(!!(x), 1)
#define SH_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* x86 intrinsics and target("...") attributes exist only on x86: elsewhere
 * (aarch64) every kernel takes its portable scalar twin, which gives the
 * same bits. SH_TARGET_POPCNT compiles a function with the popcnt
 * instruction on x86 and changes nothing elsewhere (__builtin_popcountll is
 * portable). */
#if defined(__x86_64__) || defined(__i386__)
#define SH_X86 1
#define SH_TARGET_POPCNT __attribute__((target("popcnt")))
#else
#define SH_X86 0
#define SH_TARGET_POPCNT
#endif

/* ---- cpu.c: the one CPU-feature probe. sh_cpu_has(SH_CPU_AVX2 | SH_CPU_POPCNT)
 * is 1 when the CPU has every feature asked for; always 0 outside x86. */
enum {
	SH_CPU_POPCNT = 1u << 0,
	SH_CPU_AVX2 = 1u << 1,
	SH_CPU_AVX512F = 1u << 2,
	SH_CPU_AVX512DQ = 1u << 3,
	SH_CPU_AVX512BW = 1u << 4,
	SH_CPU_AVX512VPOPCNTDQ = 1u << 5,
	SH_CPU_AVX512VBMI2 = 1u << 6,
	SH_CPU_AVX512VBMI = 1u << 7,
	SH_CPU_BMI2 = 1u << 8,
};
int sh_cpu_has(unsigned features);

/* ---- error.c: filling a caller's simhash_error (simhash.h, convention 2).
 * Each takes e == NULL (no detail wanted) and returns code. sh_error_set
 * zeroes *e and writes code and the formatted message; sh_error_code the
 * code and simhash_strerror(code); sh_error_os a failed system call's errno
 * (SIMHASH_ENOMEM for ENOMEM, else SIMHASH_EIO) and its text. */
simhash_err sh_error_set(simhash_error *e, simhash_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
simhash_err sh_error_code(simhash_error *e, simhash_err code);
simhash_err sh_error_os(simhash_error *e, int os_err);
/* code with a failed system call's errno and its text (lowercased if lower,
 * else as the system words it). */
simhash_err sh_error_errno(simhash_error *e, simhash_err code, int os_err, int lower);
/* A lowercase strerror(err) in buf (thread-safe); returns buf. */
const char *sh_errno_text(int err, char *buf, size_t cap);

/* Copies the results of a struct that grows (simhash.h, convention 3) from
 * src, the library's own of own_size bytes, into dst, whose first field (its
 * size, set by the caller) says how many bytes it holds: only those, and at
 * most own_size; dst's size stays. SIMHASH_EINVAL if dst's size is below
 * min_size. */
simhash_err sh_results_copy(void *dst, const void *src, size_t own_size, size_t min_size);

/* splitmix64's finalizer: a cheap bijective mix, for order-independent digests. */
static inline uint64_t sh_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Experiments only: a build with -DSH_EXP_SEED=N (N > 0) remixes every
 * feature hash of the char n-gram and auto paths, and the keys the bands of
 * near_bands.c take, with seed N, so quality can
 * be judged over several hash functions. Release builds leave it 0: the
 * identity. */
#ifndef SH_EXP_SEED
#define SH_EXP_SEED 0
#endif
static inline uint64_t sh_exp_mix(uint64_t h, unsigned which)
{
#if SH_EXP_SEED
	return sh_mix64(h ^ ((uint64_t)SH_EXP_SEED * 0x9e3779b97f4a7c15ull + which));
#else
	(void)which;
	return h;
#endif
}

/* Stores v little-endian: hash inputs have a stated byte order. */
static inline void sh_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the caller's interrupt hook (simhash_ctx_set_interrupt) */

/* Long loops report the work they have done in units (a byte of input, a
 * character, a feature: each a few to a few tens of nanoseconds), at most
 * `step` units at a time; once `every` units have gathered the hook is
 * asked. The ctx owns one and lends its sub-objects a pointer; NULL or a
 * NULL fn means no hook, and costs a load and a branch per report. */
typedef struct sh_intr {
	simhash_interrupt_fn fn;
	void *arg;
	size_t every; /* units between two calls of fn */
	size_t step;  /* the most units a loop does between two reports */
	size_t due;   /* units left before the next call */
} sh_intr;

#define SH_INTR_EVERY ((size_t)1 << 18)
#define SH_INTR_STEP ((size_t)1 << 14)

/* Counts `work` units; 1 if the hook was due and asked to stop (the caller
 * then returns SIMHASH_EINTR at once), else 0. */
static inline int sh_intr_poll(sh_intr *in, size_t work)
{
	if (SH_LIKELY(!in || !in->fn))
		return 0;
	if (in->due > work) {
		in->due -= work;
		return 0;
	}
	in->due = in->every;
	return in->fn(in->arg) != 0;
}

/* The most units a loop may do before it reports them (without a hook:
 * more than any text has). */
static inline size_t sh_intr_step(const sh_intr *in)
{
	return in && in->fn ? in->step : SIZE_MAX / 4;
}

/* For a loop over units i = 0, 1, ... with *poll_at starting at
 * sh_intr_step(in): reports a step of work when i reaches *poll_at. 1 if
 * the hook asked to stop. */
static inline int sh_intr_at(sh_intr *in, size_t i, size_t *poll_at)
{
	if (SH_LIKELY(i < *poll_at))
		return 0;
	*poll_at = i + sh_intr_step(in);
	return sh_intr_poll(in, sh_intr_step(in));
}

/* ---- fingerprint/config.c */

/* Bytes of simhash_config in the first release (through idf): the least a
 * caller's config may have. */
#define SH_CONFIG_V1_SIZE (offsetof(simhash_config, idf) + sizeof(const simhash_idf *))

/* Copies a caller's config of src->size bytes into a full one: fields the
 * caller's struct lacks get their defaults; dst->size becomes sizeof *dst. */
void sh_config_copy(simhash_config *dst, const simhash_config *src);

/* ---- utf8.c */

/* Decodes the code point at s[i] (i < len) into *cp and returns the bytes it
 * takes. An invalid sequence gives *cp = 0xFFFD, *bad = 1 and the length of its
 * maximal subpart (at least 1), exactly as Python's bytes.decode('utf-8',
 * 'replace') does; otherwise *bad = 0. */
size_t sh_utf8_next(const uint8_t *s, size_t len, size_t i, uint32_t *cp, int *bad);
/* The offset of the first byte >= 0x80 in s[i..len), or len: ASCII skipped
 * eight bytes at a time. */
size_t sh_utf8_ascii_end(const uint8_t *s, size_t i, size_t len);

/* Appends the UTF-8 encoding of cp (<= 0x10FFFF) to out; returns bytes written (1..4). */
size_t sh_utf8_put(uint8_t *out, uint32_t cp);

/* Offset of the first invalid byte in s, or len if s is valid UTF-8. */
size_t sh_utf8_validate(const uint8_t *s, size_t len);

/* ---- buf.c: growable scratch arrays owned by a handle */
typedef struct sh_buf {
	void *p;
	size_t cap; /* bytes */
} sh_buf;

/* Ensures b holds at least n bytes; contents are kept. 0 or SIMHASH_ENOMEM. */
simhash_err sh_buf_reserve(sh_buf *b, size_t n);
/* sh_buf_reserve() for a buffer that may grow to megabytes and is written
 * through once per use (a normalizer's output): from 4 MiB it moves to
 * sh_alloc_big() memory, a page fault per 2 MiB instead of per 4 KiB, and
 * only its first `keep` bytes are kept (the rest of a grown buffer is
 * neither copied nor touched). */
simhash_err sh_buf_reserve_big(sh_buf *b, size_t n, size_t keep);
void sh_buf_free(sh_buf *b);

/* malloc() for a big array read at random, aligned on 64 bytes; from 1 MiB,
 * on 2 MiB and rounded up to it, with transparent huge pages asked for (a
 * TLB miss per access otherwise, and a page fault per 4 KiB when first
 * written: the join's scratch arrays made a third of the page faults of
 * `dedup` on 300,000 short lines). Freed with free(). */
void *sh_alloc_big(size_t len);
/* calloc() for a table of a context that is read before it is written (a
 * lookup table filled on first use): its zeros are written now. A fresh page
 * read first maps the kernel's shared zero page, and the write that follows
 * must flush that mapping from every CPU the process runs on: an interrupt to
 * the other CPUs per page once a second thread runs. Freed with free(). */
void *sh_zalloc_written(size_t len);

/* ---- hash/ */

/* Hashes len bytes with algorithm h at width bits (32, 64, 128) into out:
 * out[0] bits 0..63, out[1] bits 64..127 (0 below 128 bits). */
void sh_hash(simhash_hash h, unsigned bits, const void *data, size_t len, uint64_t out[2]);

/* XXH3 64-bit, seed 0: the key of dedup tables, IDF tables and stop words. */
uint64_t sh_key(const void *data, size_t len);
/* XXH3 64-bit with a seed: the store's record checksums (store/record.c). */
uint64_t sh_key_seed(const void *data, size_t len, uint64_t seed);

/* MD5 digest of len bytes (md5.c, our own RFC 1321). */
void sh_md5(const void *data, size_t len, uint8_t out[16]);
/* MD5's 64 round constants (RFC 1321, 3.4), shared by md5.c and md5_x16.c. */
extern const uint32_t sh_md5_k[64];
/* Thirty-two MD5s of messages of at most 16 bytes, as prepared words: w[i][lane]
 * is little-endian word i of the lane's padded block (the message, 0x80, zeros;
 * words 5..13 and 15 are zero), bitlen[lane] its length in bits (word 14).
 * st[k][lane] is state word k of the digest (digest bytes 4k..4k+3, little-
 * endian). level: sh_md5_short_simd()'s answer (2 AVX-512, 1 AVX2, 0 scalar)
 * or lower; every level gives the same words. */
int sh_md5_short_simd(void);
void sh_md5_short_x32(int level, const uint32_t w[5][32], const uint32_t bitlen[32],
		      uint32_t st[4][32]);

uint32_t sh_fnv1_32(const void *data, size_t len);
uint32_t sh_fnv1a_32(const void *data, size_t len);
uint64_t sh_fnv1_64(const void *data, size_t len);
uint64_t sh_fnv1a_64(const void *data, size_t len);
void sh_fnv1_128(const void *data, size_t len, uint64_t out[2]);
void sh_fnv1a_128(const void *data, size_t len, uint64_t out[2]);

/* ---- features/idf.c, features/stopwords.c: lookups by sh_key() of the term */
double sh_idf_get_key(const simhash_idf *idf, uint64_t key);
/* Whether the table has a value for the term of this key. */
int sh_idf_has_key(const simhash_idf *idf, uint64_t key);
/* Counting one document's features, for simhash_idf_add_document() in
 * fingerprint/idf_doc.c (features come from the layer above, so the call is
 * made there): begin, the feature callback once per distinct feature, then
 * commit, which counts them all or, after an error, nothing. */
void sh_idf_doc_begin(simhash_idf *idf);
int sh_idf_doc_feature(const char *data, size_t len, uint32_t count, void *arg);
simhash_err sh_idf_doc_commit(simhash_idf *idf);
int sh_stopwords_has_key(const simhash_stopwords *sw, uint64_t key);
/* For the store's tables (store/tables.c): the idf of unknown terms, and a
 * stop-word set as its keys (a set keeps no words), sorted ascending, in a
 * malloc'd array. */
double sh_idf_default(const simhash_idf *idf);
/* Room for n_terms new terms of n_bytes in all (one allocation, not many). */
simhash_err sh_idf_reserve(simhash_idf *idf, size_t n_terms, size_t n_bytes);
simhash_err sh_stopwords_keys(const simhash_stopwords *sw, uint64_t **out, size_t *n);
simhash_err sh_stopwords_add_key(simhash_stopwords *sw, uint64_t key);



/* ---- fingerprint/compat.c: the Python `simhash` 2.1.2 compatibility mode */
typedef struct sh_compat sh_compat;
simhash_err sh_compat_new(sh_compat **out);
void sh_compat_free(sh_compat *c);
/* The ctx's interrupt hook, polled by sh_compat_text() and _features(). */
void sh_compat_set_intr(sh_compat *c, sh_intr *intr);
/* For tests: the sixteen-lane MD5 off (0) or on where the CPU has it. */
void sh_compat_set_simd(sh_compat *c, int on);
/* Tests: the MD5 path by level (0 memo table, 1 AVX2, 2 AVX-512), capped at the CPU's. */
void sh_compat_set_simd_level(sh_compat *c, int level);
/* Simhash(text, f=bits).value for bits 64 or 128, where text is the Python str
 * whose code points are cps[0..n) (already decoded; invalid UTF-8 replaced). */
simhash_err sh_compat_text(sh_compat *c, const uint32_t *cps, size_t n, unsigned bits,
			   simhash_fp *out);
/* Simhash([(feature, weight), ...], f=bits).value; a weight that is integral
 * and within +-2^53 is treated as a Python int, any other as a float. */
simhash_err sh_compat_features(sh_compat *c, const simhash_feature *f, size_t n, unsigned bits,
			       simhash_fp *out);

/* ---- normalize/: text -> normalized characters */

/* Classes of a normalized character. */
enum { SH_C_WORD = 0, SH_C_CJK = 1, SH_C_PUNCT = 2, SH_C_SPACE = 3 };

/* A normalized text: UTF-8 bytes s[0..len), n_chars characters, character i
 * at s[off[i] .. off[i+1]) (off[n_chars] == len) of class cls[i]. The arrays
 * belong to the sh_norm that filled them and stay valid until its next call. */
typedef struct sh_text {
	const uint8_t *s;
	size_t len;
	const uint32_t *off;
	const uint8_t *cls;
	size_t n_chars;
} sh_text;

/* The simple tokenizer's next word: the first at or after character i that
 * starts before `to` - a run of SH_C_WORD characters (which may run past
 * `to`) or one SH_C_CJK character - as [*start, *end). 0 when there is none. */
static inline int sh_next_word(const sh_text *t, size_t i, size_t to, size_t *start,
			       size_t *end)
{
	while (i < to && t->cls[i] != SH_C_WORD && t->cls[i] != SH_C_CJK)
		i++;
	if (i >= to)
		return 0;
	*start = i;
	*end = i + 1;
	if (t->cls[i] == SH_C_WORD)
		while (*end < t->n_chars && t->cls[*end] == SH_C_WORD)
			++*end;
	return 1;
}

/* Whether the eight char n-grams of ng (<= 3) characters from character i
 * (all within t) are all of one-byte characters: their fixed-length hash
 * applies. */
static inline int sh_text_one_byte8(const sh_text *t, size_t i, unsigned ng)
{
	return ng <= 3 && t->off[i + 7 + ng] - t->off[i] == 7 + ng;
}

typedef struct sh_norm sh_norm;
simhash_err sh_norm_new(const simhash_config *cfg, sh_norm **out);
void sh_norm_free(sh_norm *n);
/* The ctx's interrupt hook: HTML cleaning, decoding and normalization poll
 * it and stop with SIMHASH_EINTR (the next run starts afresh). */
void sh_norm_set_intr(sh_norm *n, sh_intr *intr);
/* Normalizes len bytes of UTF-8. SIMHASH_EUTF8 (with *bad_offset) only when
 * the config rejects invalid UTF-8. */
simhash_err sh_norm_run(sh_norm *n, const uint8_t *in, size_t len, sh_text *out,
			size_t *bad_offset);
/* Streaming: the output of sh_norm_run() for the concatenation of the fed
 * pieces, taken in windows. sh_norm_begin() starts (SIMHASH_EINVAL with HTML
 * cleaning, which needs the whole text); each piece given to sh_norm_feed()
 * must end where sh_norm_cut() allows (or be the last); sh_norm_view() shows
 * the characters not yet consumed; sh_norm_consume() drops the first k of
 * them (k < n_chars: the last character stays, the rules look back at it);
 * sh_norm_end() finishes and shows the rest. Offsets in a view are relative
 * to its first character. A SIMHASH_EUTF8 offset counts from the first piece. */
simhash_err sh_norm_begin(sh_norm *n);
simhash_err sh_norm_feed(sh_norm *n, const uint8_t *in, size_t len, size_t *bad_offset);
void sh_norm_view(sh_norm *n, sh_text *out);
void sh_norm_consume(sh_norm *n, size_t k);
simhash_err sh_norm_end(sh_norm *n, sh_text *out);
/* The largest p < len (0 if none) where a piece of in[0..len) may end: before
 * an ASCII byte, or inside a run of non-ASCII bytes where no UTF-8 sequence
 * straddles p, never between an ASCII byte and a non-ASCII one (a combining
 * mark composes with the character before it). */
size_t sh_norm_cut(const uint8_t *in, size_t len);
/* For tests: the vector paths (ASCII runs, AVX2 and AVX-512; text mixing
 * ASCII and three-byte characters, mixed.c) off (0) or on where the CPU
 * has them. */
void sh_norm_set_simd(sh_norm *n, int on);
/* For tests: the slice of a non-ASCII run handled at once (0: the default,
 * 1 MiB); tests make it tiny to cross slice ends often. */
void sh_norm_set_slice(sh_norm *n, size_t bytes);
/* For tests: on (the default) or off, the canonical ordering of long
 * combining runs ahead of ICU (lib/normalize/reorder.c). */
void sh_norm_set_reorder(sh_norm *n, int on);
/* For tests: on (the default) or off, the table mapping of characters that
 * NFKC_Casefold maps alone, whatever their neighbours (normalize.c's
 * SH_LAZY); off, ICU normalizes each of them in its segment. */
void sh_norm_set_mapped(sh_norm *n, int on);
/* The class (SH_C_*) of a non-ASCII code point c after normalization, or -1
 * if it vanishes (a format character such as a joiner). Thread safety: safe. */
int sh_norm_classify(uint32_t c);
/* Decodes UTF-8 into code points (invalid sequences replaced), for the compat mode. */
simhash_err sh_norm_decode(sh_norm *n, const uint8_t *in, size_t len, const uint32_t **cps,
			   size_t *n_cps);

/* html.c: drops tags, comments, script/style bodies and decodes entities into
 * *out (grown as needed, kept by the caller); a tag becomes one space. The
 * output is never longer than the input. */
simhash_err sh_html_strip(sh_buf *out, const uint8_t *in, size_t len, size_t *out_len,
			  sh_intr *intr);

/* t2s.c: a per-character traditional -> simplified table built from OpenCC. */
typedef struct sh_t2s sh_t2s;
simhash_err sh_t2s_new(sh_t2s **out);
void sh_t2s_free(sh_t2s *t);
uint32_t sh_t2s_map(const sh_t2s *t, uint32_t cp);

/* words.c: word spans of a normalized text. */
typedef struct sh_span {
	uint32_t start, len;
} sh_span;
typedef struct sh_words sh_words;
simhash_err sh_words_new(simhash_tokenizer tok, sh_words **out);
void sh_words_free(sh_words *w);
void sh_words_set_intr(sh_words *w, sh_intr *intr);
/* Fills *spans (valid until the next call) with the words of t. */
simhash_err sh_words_run(sh_words *w, const sh_text *t, const sh_span **spans, size_t *n);

/* ---- features/features.c: the features of a normalized text */
typedef struct sh_feats sh_feats;
simhash_err sh_feats_new(const simhash_config *cfg, sh_feats **out);
void sh_feats_free(sh_feats *f);
/* The ctx's interrupt hook, for the words and stop words. */
void sh_feats_set_intr(sh_feats *f, sh_intr *intr);
/* Prepares the features of t and returns their number in *n, at least 1: a
 * text without features has one, the empty feature; a text shorter than one
 * n-gram or shingle has one, the whole text. */
simhash_err sh_feats_prepare(sh_feats *f, const sh_text *t, size_t *n);
/* The bytes of feature i < n of the prepared text, valid until the next call;
 * returns 0 (and sets nothing) for a char n-gram position whose window does
 * not fit before the end of the text, which is no feature. */
int sh_feats_get(sh_feats *f, size_t i, const uint8_t **p, size_t *len);
/* When the features are the overlapping n-grams of the text's characters,
 * returns n, sets *t and *ngc (n at CJK characters); else 0. Lets the hot
 * loop read them in place. */
unsigned sh_feats_char_ngrams(const sh_feats *f, const sh_text **t, unsigned *ngc);
/* Whether the prepared text had no feature (its one feature is the empty one). */
int sh_feats_none(const sh_feats *f);

/* Distinct features with their occurrence counts, in order of first occurrence. */
typedef struct sh_uniq {
	uint64_t key;   /* sh_key() of the bytes */
	uint32_t count;
	uint32_t first; /* index of the first occurrence */
} sh_uniq;
typedef struct sh_dedup sh_dedup;
simhash_err sh_dedup_new(sh_dedup **out);
void sh_dedup_free(sh_dedup *d);
void sh_dedup_set_intr(sh_dedup *d, sh_intr *intr);
/* Counts the n prepared features of f; *u (valid until the next call on d)
 * gets the distinct ones. */
simhash_err sh_dedup_run(sh_dedup *d, sh_feats *f, size_t n, const sh_uniq **u, size_t *n_uniq);

/* The weight of a distinct feature under cfg (tf cap, binary, log-tf, tf-idf). */
double sh_weight(const simhash_config *cfg, const sh_uniq *u);
/* ---- index/pairs.c: simhash_pairs_self, with the SIMD compare on (simd 1,
 * where the CPU has it) or off (0), so tests run both paths, and n_threads
 * threads however small the set. */
simhash_err sh_pairs_self_path(const uint64_t *fps, size_t n, unsigned bits, unsigned max_dist,
			       unsigned n_threads, int simd, simhash_pair **out, size_t *n_out);

/* Writes len bytes at offset off of f's file (a temporary file, not a
 * target written in place): for a header whose checksum comes last. */
simhash_err sh_outfile_pwrite(simhash_outfile *f, const void *p, size_t len, uint64_t off);
/* Gives f's temporary file its final size len with every block allocated,
 * so that stores through a mapping of it cannot meet a full disk (a SIGBUS)
 * later: SIMHASH_OK; SIMHASH_ENOSPC when the space is not there; SIMHASH_EINVAL
 * when the file system cannot allocate ahead or f is written in place (the
 * file is then left empty for the caller to write). */
simhash_err sh_outfile_reserve(simhash_outfile *f, uint64_t len);
/* Maps bytes [off, off + len) of a reserved file writable and shared (stores
 * reach the file, and commit()'s fsync writes them); *p points at byte off. */
simhash_err sh_outfile_map(simhash_outfile *f, uint64_t off, size_t len, void **p);
/* Undoes sh_outfile_map(f, off, len, &p); the stores stay in the file, and
 * their write-back to the disk starts (commit() still waits for it). */
void sh_outfile_unmap(simhash_outfile *f, void *p, uint64_t off, size_t len);

/* ---- fingerprint/near.c: the threshold of a kind of sketch in tenths
 * (SIMHASH_NEAR_T_SHORT, SIMHASH_NEAR_T_LONG), for exact integer tests:
 * J >= T iff 10 * shared >= tenths * union. A filter that drops pairs below
 * J >= T drops no near pair (sh_near_accept() asks J >= T and more). */
static inline uint64_t sh_near_tenths(simhash_near_kind kind)
{
	return kind == SIMHASH_NEAR_CHARS ? 4 : 8;
}

/* The decision in integers, for simhash_near_decide() and the joins alike:
 * two sketches of one kind sharing `shared` of `union_` distinct keys are
 * near iff J >= T and, for short texts, at most SIMHASH_NEAR_DIFF_SHORT keys
 * are not shared; two empty sketches are near. */
static inline int sh_near_accept(simhash_near_kind kind, uint64_t shared, uint64_t union_)
{
	if (union_ == 0)
		return 1;
	if (10 * shared < sh_near_tenths(kind) * union_)
		return 0;
	return kind != SIMHASH_NEAR_CHARS || union_ - shared <= SIMHASH_NEAR_DIFF_SHORT;
}

/* ---- fingerprint/sketch_sort.c: sorts k[0..n) ascending (tmp: room for n)
 * and drops repeats if distinct; returns how many keys stay. simd: the
 * AVX-512 path where it serves (sh_sketch_sort_simd() says whether the CPU
 * has it), the same keys. Any keys; fastest on keys whose top bits spread. */
size_t sh_sketch_sort(uint64_t *k, size_t n, uint64_t *tmp, int simd, int distinct);
int sh_sketch_sort_simd(void);

/* ---- index/near_join.c: (key, index) entries sorted by key, ascending i
 * within a key (the band join's buckets, the exact duplicates): a stable
 * scatter on the top bits, then one insertion pass (the keys are uniform
 * hashes; qsort where they are not). The scratch is made once for up to n
 * entries and reused; free accepts a zeroed one. */
typedef struct sh_near_ent {
	uint64_t key;
	uint32_t i;    /* an index: a sketch, a first member */
	uint32_t band; /* the band join's band */
} sh_near_ent;
typedef struct sh_near_sort {
	sh_near_ent *tmp;
	uint32_t *start; /* counters: a run holds fewer than 2^32 entries */
	unsigned bits;
} sh_near_sort;
simhash_err sh_near_sort_init(sh_near_sort *s, size_t n);
/* e[0..n) sorted, into s's scratch (valid until the next run or the free):
 * returns it. */
sh_near_ent *sh_near_sort_into(sh_near_sort *s, sh_near_ent *e, size_t n);
void sh_near_sort_free(sh_near_sort *s);

/* ---- index/near_join.c: exact duplicates among n sketches: same[i] gets
 * the first j <= i whose sketch is identical to i's (same kind and keys). */
simhash_err sh_near_collapse(const simhash_sketch *d, size_t n, uint64_t *same);
/* What the exact join (near_join.c) and the band join (near_bands.c) share:
 * the root of i in union-find p (halving the path); a pair appended to out
 * (a < b); cluster[i] from the components of uf over the first members
 * rep[0..n_reps) (any order) and same[]; the pairs sorted by (a, b) and
 * handed to *out (the buffer freed, *out NULL if out is); and the public
 * entry points around a join `run`, which gets cluster (components) or
 * out (pairs). */
static inline uint32_t sh_near_find(uint32_t *p, uint32_t i)
{
	while (p[i] != i) {
		p[i] = p[p[i]];
		i = p[i];
	}
	return i;
}
simhash_err sh_near_emit(sh_buf *out, size_t *n_out, uint64_t a, uint64_t b, double jac);
simhash_err sh_near_components(const uint64_t *rep, size_t n_reps, uint32_t *uf,
			       const uint64_t *same, size_t n, uint64_t *cluster);
simhash_err sh_near_result(sh_buf *buf, size_t n_buf, simhash_near_pair **out, size_t *n_out);
typedef simhash_err (*sh_near_run_fn)(const simhash_sketch *docs, size_t n, uint64_t *same,
				      uint64_t *cluster, simhash_near_pair **out, size_t *n_out);
simhash_err sh_near_pairs_of(sh_near_run_fn run, const simhash_sketch *docs, size_t n,
			     uint64_t *same, simhash_near_pair **out, size_t *n_out);
simhash_err sh_near_clusters_of(sh_near_run_fn run, const simhash_sketch *docs, size_t n,
				uint64_t *cluster);
/* ---- index/near_keys.c: the band keys of simhash_near_bands() on the
 * path asked for: level SH_NEAR_KEYS_PORTABLE, SH_NEAR_KEYS_AVX512 (AVX-512
 * F and DQ: Skylake-SP Xeons on) or SH_NEAR_KEYS_VBMI (with the VBMI
 * densification), at most sh_near_keys_level(); with tab (made once, for
 * many sketches) the portable densification looks its rows up in tab; and
 * with bits (zeroed, SH_NEAR_SUMMARY_WORDS words) the bit set of
 * near_bands.c's summary in the same pass, returning how many bits are set
 * (0 without bits). Every path gives the same keys and bits; the tests
 * compare them. */
enum { SH_NEAR_KEYS_PORTABLE, SH_NEAR_KEYS_AVX512, SH_NEAR_KEYS_VBMI };
#define SH_NEAR_SUMMARY_WORDS 6
typedef struct sh_near_table sh_near_table;
int sh_near_keys_level(void);
simhash_err sh_near_table_new(sh_near_table **out);
void sh_near_table_free(sh_near_table *t);
size_t sh_near_band_keys(const simhash_sketch *sk, uint64_t out[SIMHASH_NEAR_BANDS], int level,
			 const sh_near_table *tab, uint64_t bits[SH_NEAR_SUMMARY_WORDS]);
/* simhash_near_band_join() and simhash_near_band_clusters() on the paths of
 * other CPUs: level 0 the portable ones (band keys with the densification
 * table, summaries, the large buckets' bounds one pair at a time), 1 the
 * AVX-512 ones without VBMI or VPOPCNTDQ (Skylake-SP, Cascade Lake), 2 all
 * the CPU has; the same results, which the tests compare. */
simhash_err sh_near_band_join_path(int level, const simhash_sketch *docs, size_t n,
				   uint64_t *same, simhash_near_pair **out, size_t *n_out);
simhash_err sh_near_band_clusters_path(int level, const simhash_sketch *docs, size_t n,
				       uint64_t *cluster);
#endif
