"""The native API: Config, fingerprints of texts and features, errors.

A simhash_ctx is one handle per thread, so each Python thread keeps its own
contexts (threading.local), one per Config it used. cffi releases the GIL
during every library call: threads fingerprint in parallel.
"""
import os
import threading

from ._native import ffi, lib

__all__ = [
    "Error", "Config", "fingerprint", "fingerprints", "fingerprint_features",
    "text_similarity", "hamming", "scheme", "version",
]


class Error(Exception):
    """An error of libsimhash: `code` is the library's simhash_err, `str()`
    its message (simhash_strerror) with what was being done."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class InvalidArgument(Error, ValueError):
    """SIMHASH_EINVAL: a bad argument or configuration."""


class CorruptError(Error, ValueError):
    """SIMHASH_ECORRUPT: a file or string is malformed."""


class Utf8Error(Error, ValueError):
    """SIMHASH_EUTF8: invalid UTF-8 under utf8='reject'; `offset` is the byte."""


class FileError(Error, OSError):
    """SIMHASH_EIO: a file could not be read or written."""


class SchemeError(Error, ValueError):
    """SIMHASH_ESCHEME: fingerprints made under different schemes."""


_ERR_CLASS = {
    lib.SIMHASH_EINVAL: InvalidArgument,
    lib.SIMHASH_ECORRUPT: CorruptError,
    lib.SIMHASH_EUTF8: Utf8Error,
    lib.SIMHASH_EIO: FileError,
    lib.SIMHASH_ESCHEME: SchemeError,
}


def _raise(err, what=None):
    """Raises the exception of a non-zero simhash_err."""
    msg = ffi.string(lib.simhash_strerror(err)).decode("utf-8", "replace")
    if err == lib.SIMHASH_ENOMEM:
        raise MemoryError(msg)
    if what:
        msg = "%s: %s" % (what, msg)
    raise _ERR_CLASS.get(err, Error)(err, msg)


def version():
    """The version of libsimhash linked in, "MAJOR.MINOR.PATCH"."""
    return ffi.string(lib.simhash_version()).decode()


def _enc(text, what="text"):
    """UTF-8 bytes of a str (lone surrogates are an error), or bytes as given."""
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError("%s: %s at index %d cannot be encoded as UTF-8 "
                             "(a lone surrogate)" % (what, ascii(text[e.start]), e.start)) from None
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError("%s must be str or bytes, not %s" % (what, type(text).__name__))


def _value_names(option):
    """{name: value} of an option of named values, from the library's table."""
    names, i = {}, 0
    while True:
        p = lib.simhash_config_value_name(option.encode(), i)
        if p == ffi.NULL:
            return names
        names[ffi.string(p).decode()] = i
        i += 1


_ENUMS = {o: _value_names(o) for o in
          ("compat", "features", "tokenizer", "hash", "weight", "space", "punct", "utf8")}
_UINTS = {"ngram": (1, 64), "ngram_cjk": (0, 64), "tf_cap": (0, 2**32 - 1),
          "max_repeat": (0, 2**32 - 1)}
_BOOLS = ("casefold", "html", "t2s")

# python3-jieba's IDF table, as `simhash fingerprint --idf jieba` names it
JIEBA_IDF_PATH = "/usr/lib/python3/dist-packages/jieba/analyse/idf.txt"


def _load_table(kind, path):
    out = ffi.new("simhash_%s **" % kind)
    detail = ffi.new("simhash_error *")
    fn = lib.simhash_idf_load if kind == "idf" else lib.simhash_stopwords_load
    err = fn(os.fsencode(path), out, detail)
    if err:
        line = detail.line
        where = "%s:%d" % (os.fsdecode(path), line) if err == lib.SIMHASH_ECORRUPT and line \
            else os.fsdecode(path)
        _raise(err, where)
    free = lib.simhash_idf_free if kind == "idf" else lib.simhash_stopwords_free
    return ffi.gc(out[0], free)


def _idf_table(idf):
    if isinstance(idf, (str, bytes, os.PathLike)):
        return _load_table("idf", JIEBA_IDF_PATH if idf == "jieba" else idf)
    out = ffi.new("simhash_idf **")
    err = lib.simhash_idf_new(out)
    if err:
        _raise(err, "idf")
    tab = ffi.gc(out[0], lib.simhash_idf_free)
    items = idf.items() if hasattr(idf, "items") else idf
    for term, value in items:
        b = _enc(term, "idf term")
        err = lib.simhash_idf_set(tab, b, len(b), float(value))
        if err:
            _raise(err, "idf term %r" % (term,))
    err = lib.simhash_idf_finish(tab)
    if err:
        _raise(err, "idf")
    return tab


def _stopword_table(words):
    if isinstance(words, (str, bytes, os.PathLike)):
        return _load_table("stopwords", words)
    out = ffi.new("simhash_stopwords **")
    err = lib.simhash_stopwords_new(out)
    if err:
        _raise(err, "stopwords")
    tab = ffi.gc(out[0], lib.simhash_stopwords_free)
    for w in words:
        b = _enc(w, "stop word")
        err = lib.simhash_stopwords_add(tab, b, len(b))
        if err:
            _raise(err, "stop word %r" % (w,))
    return tab


class Config:
    """A fingerprinting configuration: every option of `simhash fingerprint`,
    as keyword arguments with the same names (dashes become underscores).

    bits: 32, 64 or 128; compat: "none" or "python-simhash"; features: "char",
    "word" or "shingle"; ngram, ngram_cjk; tokenizer: "simple" or "icu"; hash:
    "xxh3", "fnv1", "fnv1a" or "md5"; weight: "tf", "binary", "logtf" or
    "tfidf"; tf_cap; stopwords: a file or an iterable of words; idf: a file,
    "jieba", or a mapping term -> idf; casefold, html, t2s: bool; space:
    "auto", "collapse" or "drop"; punct: "drop" or "keep"; max_repeat; utf8:
    "replace" or "reject". Options left out keep the library's defaults.

    A Config is immutable; `scheme` is its canonical scheme string.
    """

    __slots__ = ("_cfg", "_idf", "_stopwords", "_opts", "_scheme", "_batch_lock", "_batch",
                 "__weakref__")

    def __init__(self, **opts):
        cfg = ffi.new("simhash_config *")
        lib.simhash_config_init(cfg)
        self._idf = self._stopwords = None
        for name, value in opts.items():
            if name == "bits":
                if isinstance(value, bool) or value not in (32, 64, 128):
                    raise ValueError("bits must be 32, 64 or 128, not %r" % (value,))
                cfg.bits = value
            elif name in _ENUMS:
                names = _ENUMS[name]
                if value not in names:
                    raise ValueError("%s must be one of %s, not %r"
                                     % (name, ", ".join(repr(n) for n in names), value))
                setattr(cfg, name, names[value])
            elif name in _UINTS:
                lo, hi = _UINTS[name]
                if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                    raise ValueError("%s must be an integer in %d..%d, not %r" % (name, lo, hi, value))
                setattr(cfg, name, value)
            elif name in _BOOLS:
                if not isinstance(value, bool):
                    raise TypeError("%s must be True or False, not %r" % (name, value))
                setattr(cfg, name, int(value))
            elif name == "idf":
                if value is not None:
                    self._idf = _idf_table(value)
                    cfg.idf = self._idf
                    if "weight" not in opts and "weight" not in _option_names(opts):
                        cfg.weight = lib.SIMHASH_WEIGHT_TFIDF
            elif name == "stopwords":
                if value is not None:
                    self._stopwords = _stopword_table(value)
                    cfg.stopwords = self._stopwords
            elif name == "options":
                _set_options(cfg, value)
            elif name == "scheme":
                pass  # applied last, below
            else:
                raise TypeError("Config() got an unexpected keyword argument %r" % name)
        # As on the command line: a weight, tf cap or hash without features
        # means the char n-grams of scheme v1.
        lib.simhash_config_settle_features(
            cfg, int("features" in opts or "features" in _option_names(opts)))
        if opts.get("scheme") is not None:
            _apply_scheme(cfg, opts["scheme"])
        err = lib.simhash_config_check(cfg)
        if err:
            if cfg.weight == lib.SIMHASH_WEIGHT_TFIDF and cfg.idf == ffi.NULL:
                _raise(err, "config: weight 'tfidf' needs an idf table")
            if cfg.compat == lib.SIMHASH_COMPAT_PYTHON_SIMHASH:
                _raise(err, "config: compat 'python-simhash' takes bits 64 or 128")
            _raise(err, "config")
        buf = ffi.new("char[]", lib.SIMHASH_SCHEME_MAX)
        err = lib.simhash_config_scheme(cfg, buf, lib.SIMHASH_SCHEME_MAX)
        if err:
            _raise(err, "config")
        self._cfg = cfg
        self._batch_lock = threading.Lock()
        self._batch = []  # contexts kept for fingerprints(), one per worker thread
        self._opts = dict(opts)
        self._scheme = ffi.string(buf).decode()

    @property
    def scheme(self):
        """The canonical scheme string, e.g. "v1/f64/char3/xxh3/tf/nfkc-cf+t2s/sp-auto"."""
        return self._scheme

    @property
    def bits(self):
        return self._cfg.bits

    def __repr__(self):
        return "Config(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self._opts.items()))

    def __eq__(self, other):
        if not isinstance(other, Config):
            return NotImplemented
        return self._scheme == other._scheme

    def __hash__(self):
        return hash(self._scheme)

    def __reduce__(self):
        return (_config_from_opts, (self._opts,))

    # the per-thread context of this config
    def _ctx(self):
        d = _tls.__dict__.get("ctxs")
        if d is None:
            d = _tls.ctxs = {}
        ctx = d.get(id(self))
        if ctx is None or ctx[0] is not self:
            out = ffi.new("simhash_ctx **")
            err = lib.simhash_ctx_new(self._cfg, out)
            if err:
                _raise(err, "context")
            ctx = (self, ffi.gc(out[0], lib.simhash_ctx_free))
            if len(d) > 64:
                d.clear()
            d[id(self)] = ctx
        return ctx[1]

    def _batch_ctxs(self, n):
        """n contexts for a batch (a `simhash_ctx *[]`), with _batch_lock held,
        or None if another batch holds them. Each works on one thread at a
        time; kept, they keep their caches from batch to batch."""
        if not self._batch_lock.acquire(blocking=False):
            return None
        try:
            while len(self._batch) < n:
                out = ffi.new("simhash_ctx **")
                err = lib.simhash_ctx_new(self._cfg, out)
                if err:
                    _raise(err, "context")
                self._batch.append(ffi.gc(out[0], lib.simhash_ctx_free))
            return ffi.new("simhash_ctx *[]", self._batch[:n])
        except BaseException:
            self._batch_lock.release()
            raise

    def fingerprint(self, text):
        """The fingerprint of a text (str or UTF-8 bytes) as an int."""
        return fingerprint(text, self)

    def fingerprints(self, texts, threads=0):
        """The fingerprints of many texts, computed on `threads` threads."""
        return fingerprints(texts, self, threads=threads)

    def fingerprint_features(self, features):
        """The fingerprint of features: strings (weight 1), (feature, weight)
        pairs or a mapping feature -> weight."""
        return fingerprint_features(features, self)

    def text_similarity(self, a, b):
        """Exact (cosine, jaccard) of two texts' feature vectors."""
        return text_similarity(a, b, self)

    def features(self, text):
        """The distinct features of a text with their counts, in order of
        first occurrence: a list of (str, int)."""
        b = _enc(text)
        ctx = self._ctx()
        blob = ffi.new("char **")
        ends = ffi.new("size_t **")
        counts = ffi.new("uint32_t **")
        n = ffi.new("size_t *")
        err = lib.shpy_features_list(ctx, b, len(b), blob, ends, counts, n)
        if err:
            _raise(err, "features")
        try:
            m = n[0]
            if not m:
                return []
            e = ends[0]
            raw = ffi.unpack(blob[0], e[m - 1])
            res = []
            start = 0
            for i in range(m):
                res.append((raw[start:e[i]].decode("utf-8", "replace"), counts[0][i]))
                start = e[i]
            return res
        finally:
            lib.shpy_free(blob[0])
            lib.shpy_free(ends[0])
            lib.shpy_free(counts[0])


def _option_names(opts):
    return [name for name, _ in opts.get("options") or ()]


def _set_options(cfg, options):
    """Applies (name, value) pairs as the command line names them ("ngram",
    "4"; "no-t2s", None) through the library's own table, simhash_config_set."""
    for name, value in options:
        if name in ("stopwords", "idf", "scheme"):
            raise TypeError("give %s as its own keyword argument, not in options" % name)
        takes = lib.simhash_config_option_takes_value(name.encode())
        if takes < 0:
            raise ValueError("unknown option %r" % name)
        if (value is None) != (takes == 0):
            raise ValueError("option %r %s" % (name, "takes a value" if takes else
                                                 "is a flag without a value"))
        arg = ffi.NULL if value is None else str(value).encode()
        if lib.simhash_config_set(cfg, name.encode(), arg):
            names = [n for n in _value_names(name)]
            raise ValueError("invalid --%s %r%s" % (name, value, " (expected %s)" % "|".join(names)
                                                   if names else " (expected a number)"))


def _apply_scheme(cfg, scheme):
    """The configuration a scheme string names, keeping the UTF-8 policy and
    the IDF and stop-word tables (as `--scheme` does)."""
    utf8 = cfg.utf8
    err = lib.simhash_config_from_scheme(scheme.encode(), cfg)
    if err == lib.SIMHASH_ESCHEME:
        _raise(err, "scheme %r: its IDF or stop-word table is missing or differs" % scheme)
    if err:
        _raise(err, "invalid scheme %r" % scheme)
    cfg.utf8 = utf8


def _config_from_opts(opts):
    return Config(**opts)


_tls = threading.local()
_DEFAULT = None


def _default_config():
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Config()
    return _DEFAULT


_COMPAT = {}


def _compat_config(f):
    """The python-simhash config whose values, masked to f bits, are
    Simhash(text, f).value (f <= 128: each bit votes on its own)."""
    bits = 64 if f <= 64 else 128
    c = _COMPAT.get(bits)
    if c is None:
        c = _COMPAT[bits] = Config(compat="python-simhash", bits=bits)
    return c


def _compat_text(bits, data):
    """The python-simhash value (bits 64 or 128) of UTF-8 bytes, through this
    thread's context and result buffer."""
    try:
        ctxs = _tls.compat
    except AttributeError:
        ctxs = _tls.compat = {}
    c = ctxs.get(bits)
    if c is None:
        c = ctxs[bits] = (_compat_config(bits)._ctx(), ffi.new("uint64_t[3]"))
    ctx, out = c
    err = lib.shpy_fingerprint(ctx, data, len(data), out)
    if err:
        _raise(err, "Simhash")
    return out[0] if bits == 64 else out[0] | out[1] << 64


def _check_f(f):
    if isinstance(f, bool) or not isinstance(f, int) or f <= 0 or f % 8 or f > 128:
        raise ValueError("f must be a multiple of 8 from 8 to 128, not %r" % (f,))


def _value(out, bits):
    return out[0] if bits <= 64 else out[0] | out[1] << 64


def _resolve(config, f):
    """(Config, mask or None) for the module-level functions."""
    if config is not None:
        if f is not None:
            raise TypeError("give config or f, not both")
        if not isinstance(config, Config):
            raise TypeError("config must be a simhash.Config, not %s" % type(config).__name__)
        return config, None
    f = 64 if f is None else f
    _check_f(f)
    return _compat_config(f), (None if f in (64, 128) else (1 << f) - 1)


def fingerprint(text, config=None, *, f=None):
    """The fingerprint of one text (str or UTF-8 bytes) as an int.

    With a Config, under it; without one, Simhash(text, f).value of the
    python-simhash compatible mode (f = 64 unless given, a multiple of 8 up
    to 128)."""
    cfg, mask = _resolve(config, f)
    if cfg._cfg.compat and isinstance(text, str):
        b = text.encode("utf-8", "surrogatepass")
    else:
        b = _enc(text)
    out = ffi.new("uint64_t[3]")  # out[2]: the offset of invalid UTF-8
    err = lib.shpy_fingerprint(cfg._ctx(), b, len(b), out)
    if err:
        if err == lib.SIMHASH_EUTF8:
            raise Utf8Error(err, "text: invalid UTF-8 at byte %d" % out[2])
        _raise(err, "fingerprint")
    v = _value(out, cfg._cfg.bits)
    return v if mask is None else v & mask


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def fingerprints(texts, config=None, *, f=None, threads=0):
    """The fingerprints of an iterable of texts (str or bytes), as a list of
    ints in the same order, computed in C on `threads` threads (0: one per
    core) with the GIL released. Config and f as in fingerprint()."""
    cfg, mask = _resolve(config, f)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError("threads must be an integer >= 0, not %r" % (threads,))
    # the compat mode takes lone surrogates as Python's `re` does: not word
    # characters (as invalid UTF-8 they become U+FFFD, not one either)
    errors = "surrogatepass" if cfg._cfg.compat else "strict"
    enc = []
    for i, t in enumerate(texts):
        if type(t) is str:
            try:
                enc.append(t.encode("utf-8", errors))
                continue
            except UnicodeEncodeError:
                pass
        enc.append(_enc(t, "text %d" % i))
    n = len(enc)
    if not n:
        return []
    blob = b"".join(enc)
    ends = ffi.new("size_t[]", n)
    pos = 0
    for i, e in enumerate(enc):
        pos += len(e)
        ends[i] = pos
    out = ffi.new("uint64_t[]", 2 * n)
    err_index = ffi.new("size_t *")
    err_offset = ffi.new("size_t *")
    n_threads = threads or _cpu_count()
    pool = cfg._batch_ctxs(n_threads)
    if pool is None:  # another batch of this config is running: contexts of its own
        err = lib.shpy_fingerprints(cfg._cfg, blob, ends, n, n_threads, out, err_index,
                                    err_offset)
    else:
        try:
            err = lib.shpy_fingerprints_ctx(pool, n_threads, blob, ends, n, out, err_index,
                                            err_offset)
        finally:
            cfg._batch_lock.release()
    if err:
        if err == lib.SIMHASH_EUTF8:
            raise Utf8Error(err, "text %d: invalid UTF-8 at byte %d" % (err_index[0], err_offset[0]))
        _raise(err, "text %d" % err_index[0])
    if cfg._cfg.bits <= 64:
        res = list(ffi.unpack(out, 2 * n)[0::2])
    else:
        u = ffi.unpack(out, 2 * n)
        res = [u[2 * i] | u[2 * i + 1] << 64 for i in range(n)]
    if mask is not None:
        res = [v & mask for v in res]
    return res


def _feature_arrays(items):
    """(blob, ends, weights) of (bytes, float) pairs."""
    n = len(items)
    ends = ffi.new("size_t[]", max(n, 1))
    weights = ffi.new("double[]", max(n, 1))
    pos = 0
    for i, (b, w) in enumerate(items):
        pos += len(b)
        ends[i] = pos
        weights[i] = w
    return b"".join(b for b, _ in items), ends, weights


def _run_features(cfg, items):
    blob, ends, weights = _feature_arrays(items)
    out = ffi.new("uint64_t[2]")
    err = lib.shpy_features(cfg._ctx(), blob, ends, weights, len(items), out)
    if err:
        _raise(err, "features")
    return _value(out, cfg._cfg.bits)


def fingerprint_features(features, config=None, *, f=None):
    """The fingerprint of features: an iterable of strings or bytes (weight
    1) or of (feature, weight) pairs, or a mapping feature -> weight. Weights
    must be finite numbers. Without a Config: the python-simhash mode (see
    Simhash for the exact drop-in, which also honours Python's int/float
    distinction)."""
    cfg, mask = _resolve(config, f)
    if hasattr(features, "items"):
        features = features.items()
    items = []
    for x in features:
        if isinstance(x, (str, bytes)):
            items.append((_enc(x, "feature"), 1.0))
        else:
            feat, w = x
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                try:
                    w = float(w)
                except (TypeError, ValueError):
                    raise TypeError("weight of feature %r must be a number, not %s"
                                    % (feat, type(w).__name__)) from None
            items.append((_enc(feat, "feature"), float(w)))
    v = _run_features(cfg, items)
    return v if mask is None else v & mask


def text_similarity(a, b, config=None):
    """Exact similarity of two texts under a Config (default: Config()):
    (cosine, jaccard) of their weighted feature vectors and feature sets."""
    cfg = _default_config() if config is None else config
    if not isinstance(cfg, Config):
        raise TypeError("config must be a simhash.Config, not %s" % type(cfg).__name__)
    ba, bb = _enc(a, "a"), _enc(b, "b")
    cos = ffi.new("double *")
    jac = ffi.new("double *")
    err = lib.simhash_text_similarity(cfg._ctx(), ba, len(ba), bb, len(bb), cos, jac, ffi.NULL)
    if err:
        if err == lib.SIMHASH_EINVAL and cfg._cfg.compat:
            _raise(err, "text_similarity: not available under compat 'python-simhash'")
        _raise(err, "text_similarity")
    return cos[0], jac[0]


def hamming(a, b):
    """Hamming distance of two fingerprints given as ints."""
    return (a ^ b).bit_count()


def scheme(**opts):
    """The scheme string of Config(**opts)."""
    return Config(**opts).scheme
