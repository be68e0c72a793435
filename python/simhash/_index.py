"""Indexes on the library's exact Hamming index (simhash_index_*).

Index is the native one: integer fingerprints of 64 or 128 bits with integer
ids, any k up to the max_dist it was made for, batch queries on threads, save
and open by memory map.

SimhashIndex is the drop-in for simhash 2.1.2's: the original keeps k + 1
dicts of string buckets and, by the pigeonhole principle, returns exactly the
ids of the stored (id, Simhash) pairs within distance k, as strings. The
library's index returns exactly that set too, without the buckets. Each
distinct str(obj_id) gets an integer handle; a stored pair is (the value
masked to f bits, the handle), so adding a pair twice stores it once and
deleting an absent one does nothing, as in the original. bucket_size() counts
the bucket keys the original would have created, from the values it has seen
(8 bytes each at f <= 64).
"""
import logging
import operator
import os
import tempfile
import threading
from array import array

from . import _core
from ._native import ffi, lib

__all__ = ["Index", "SimhashIndex"]

_M64 = (1 << 64) - 1
_tls = threading.local()
_query_ids = lib.shpy_index_query_ids
_query_log = lib.shpy_index_query_log
_IDS_CAP = 64


def _matches_new():
    return ffi.gc(ffi.new("simhash_matches *"), lib.simhash_matches_free)


def _matches():
    """This thread's result array, reused by every query."""
    m = _tls.__dict__.get("m")
    if m is None:
        m = _tls.m = ffi.gc(ffi.new("simhash_matches *"), lib.simhash_matches_free)
    return m


def _new_index(bits, max_dist):
    out = ffi.new("simhash_index **")
    err = lib.simhash_index_new(bits, max_dist, out)
    if err:
        _core._raise(err, "index of %d bits, max_dist %d" % (bits, max_dist))
    return ffi.gc(out[0], lib.simhash_index_free)


def _open_index(path):
    out = ffi.new("simhash_index **")
    why = ffi.new("simhash_error *")
    err = lib.simhash_index_open(os.fsencode(path), out, why)
    if err:
        msg = ffi.string(why.msg).decode("utf-8", "replace")
        if msg == ffi.string(lib.simhash_strerror(err)).decode():
            msg = ""  # no more than the code, which _raise adds
        _core._raise(err, "%s: %s" % (os.fsdecode(path), msg) if msg else os.fsdecode(path))
    return ffi.gc(out[0], lib.simhash_index_free)


def _save_index(ix, path):
    err = lib.simhash_index_save(ix, os.fsencode(path), ffi.NULL)
    if err:
        _core._raise(err, os.fsdecode(path))


def _index_bytes(ix):
    """The saved form of an index, as bytes."""
    fd, path = tempfile.mkstemp(prefix="simhash-index-")
    os.close(fd)
    try:
        _save_index(ix, path)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def _index_from_bytes(data):
    fd, path = tempfile.mkstemp(prefix="simhash-index-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return _open_index(path)  # mapped: the mapping outlives the name
    finally:
        os.unlink(path)


def _new_log():
    log = lib.shpy_log_new()
    if log == ffi.NULL:
        raise MemoryError("SimhashIndex: no memory for its log")
    return ffi.gc(log, lib.shpy_log_free)


_U64_FORMATS = frozenset(("Q", "L", "=Q", "=L", "<Q", "<L", "@Q", "@L"))


def _u64_buffer(obj, words, what):
    """A uint64 buffer (numpy array, array('Q'), memoryview...) as
    (cdata uint64_t[], number of fingerprints of `words` words, the object
    to keep alive while C reads it), without converting one element; None if
    obj has no buffer interface. At words == 2 a buffer holds n rows of two
    words (shape (n, 2), or flat), bits 0..63 first. A non-contiguous buffer
    is copied once, in C."""
    if isinstance(obj, (bytes, bytearray, str)):
        return None
    try:
        mv = memoryview(obj)
    except TypeError:
        return None
    if mv.itemsize != 8 or mv.format not in _U64_FORMATS:
        raise TypeError("%s: a buffer of uint64 is expected, not of format %r (itemsize %d)"
                        % (what, mv.format, mv.itemsize))
    if mv.ndim == 2 and words == 2 and mv.shape[1] == 2:
        n = mv.shape[0]
    elif mv.ndim == 1 and mv.shape[0] % words == 0:
        n = mv.shape[0] // words
    else:
        raise ValueError("%s: a buffer of shape %r does not hold %d-word fingerprints"
                         % (what, mv.shape, words))
    if not mv.c_contiguous:
        mv = memoryview(mv.tobytes()).cast("Q")
    if n == 0:
        return ffi.new("uint64_t[]", 1), 0, None
    return ffi.from_buffer("uint64_t[]", mv), n, mv


def _u64_out(n, like_numpy):
    """A zeroed uint64 array of n: numpy's when the input was numpy's."""
    if like_numpy:
        import numpy
        return numpy.zeros(n, dtype=numpy.uint64)
    return array("Q", bytes(8 * n))


def _is_numpy(obj):
    return type(obj).__module__ == "numpy"


def _threads(threads):
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError("threads must be an integer >= 0, not %r" % (threads,))
    return threads or _core._cpu_count()


class Index:
    """An exact Hamming index of fingerprints (ints of `bits` = 64 or 128)
    with integer ids (0 .. 2**64 - 1), answering every stored pair within
    distance k <= max_dist (default: 16 at 64 bits, 32 at 128), sorted by
    distance then id. Thread safety: many readers, one writer (a lock inside).
    """

    __slots__ = ("_ix", "_bits", "__weakref__")

    def __init__(self, bits=64, max_dist=None, *, scheme=None):
        if bits not in (64, 128) or isinstance(bits, bool):
            raise ValueError("bits must be 64 or 128, not %r" % (bits,))
        limit = lib.SIMHASH_INDEX_MAX_DIST_64 if bits == 64 else lib.SIMHASH_INDEX_MAX_DIST_128
        if max_dist is None:
            max_dist = limit
        if isinstance(max_dist, bool) or not isinstance(max_dist, int) or not 0 <= max_dist <= limit:
            raise ValueError("max_dist must be an integer in 0..%d at %d bits, not %r"
                             % (limit, bits, max_dist))
        self._ix = _new_index(bits, max_dist)
        self._bits = bits
        if scheme is not None:
            self.scheme = scheme

    @classmethod
    def open(cls, path):
        """Opens an index saved by save(), by memory map (no rebuild)."""
        self = cls.__new__(cls)
        self._ix = _open_index(path)
        self._bits = lib.simhash_index_bits(self._ix)
        return self

    def save(self, path):
        """Writes the index to path atomically, ready for open()."""
        _save_index(self._ix, path)

    def __reduce__(self):
        return (_index_unpickle, (_index_bytes(self._ix),))

    @property
    def bits(self):
        return self._bits

    @property
    def max_dist(self):
        return lib.simhash_index_max_dist(self._ix)

    @property
    def scheme(self):
        """The scheme string of the fingerprints' config, "" if unknown."""
        return ffi.string(lib.simhash_index_scheme(self._ix)).decode("utf-8", "replace")

    @scheme.setter
    def scheme(self, value):
        if isinstance(value, _core.Config):
            value = value.scheme
        err = lib.simhash_index_set_scheme(self._ix, value.encode("utf-8"))
        if err:
            _core._raise(err, "scheme")

    def __len__(self):
        return lib.simhash_index_count(self._ix)

    def _fp(self, fp):
        if fp.__class__ is not int:
            if isinstance(fp, bool):
                raise TypeError("a fingerprint is an int, not bool")
            if hasattr(fp, "value") and isinstance(fp.value, int):
                fp = fp.value  # a Simhash
            else:
                try:
                    fp = operator.index(fp)  # numpy's integers too
                except TypeError:
                    raise TypeError("a fingerprint is an int, not %s" % type(fp).__name__) from None
        if fp < 0 or fp >> self._bits:
            raise ValueError("fingerprint %#x does not fit in %d bits" % (fp, self._bits))
        return fp

    @staticmethod
    def _id(i):
        if i.__class__ is not int and not isinstance(i, bool):
            try:
                i = operator.index(i)
            except TypeError:
                pass
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= _M64:
            raise ValueError("an id is an integer in 0..2**64-1, not %r" % (i,))
        return i

    def build(self, fps, ids=None, threads=0):
        """Adds many fingerprints at once (ids: the same number of ints;
        default: len(self), len(self) + 1, ...). Pairs already there are skipped.
        fps (and ids) may be uint64 buffers (a numpy array, array('Q')): read
        in place, not element by element; 128-bit fingerprints as rows of two
        words (bits 0..63 first)."""
        words = self._bits // 64
        buf = _u64_buffer(fps, words, "build")
        if buf is not None:
            self._build_buffer(buf, ids, _threads(threads))
            return
        fps = [self._fp(v) for v in fps]
        n = len(fps)
        if ids is None:
            start = len(self)
            ids = range(start, start + n)
        ids = [self._id(i) for i in ids]
        if len(ids) != n:
            raise ValueError("build: %d fingerprints but %d ids" % (n, len(ids)))
        if self._bits == 64:
            words = ffi.new("uint64_t[]", fps or [0])
        else:
            flat = []
            for v in fps:
                flat.append(v & _M64)
                flat.append(v >> 64)
            words = ffi.new("uint64_t[]", flat or [0])
        err = lib.simhash_index_build(self._ix, words, ffi.new("uint64_t[]", ids or [0]), n,
                                      _threads(threads))
        if err:
            _core._raise(err, "build")

    def _build_buffer(self, buf, ids, threads):
        words, n, keep = buf
        if ids is None:
            err = lib.shpy_index_build_seq(self._ix, words, n, len(self), threads)
        else:
            idbuf = _u64_buffer(ids, 1, "build: ids")
            if idbuf is None:
                idl = [self._id(i) for i in ids]
                idbuf = (ffi.new("uint64_t[]", idl or [0]), len(idl), None)
            if idbuf[1] != n:
                raise ValueError("build: %d fingerprints but %d ids" % (n, idbuf[1]))
            err = lib.simhash_index_build(self._ix, words, idbuf[0], n, threads)
        if err:
            _core._raise(err, "build")

    def query_arrays(self, fps, k=None, threads=0):
        """Every query of fps (a uint64 buffer such as a numpy array or
        array('Q'), or any iterable of ints) at once, CSR style: returns
        (offsets, ids, distances), query i's answers being ids[offsets[i]:
        offsets[i + 1]] with their distances, nearest first then by id, as
        query() gives them. numpy arrays (uint64, uint64, uint8) when fps is
        one, else array('Q'), array('Q'), array('B'). threads: 0 = every CPU."""
        words = self._bits // 64
        k = self._k(k)
        buf = _u64_buffer(fps, words, "query_arrays")
        like_numpy = _is_numpy(fps)
        if buf is None:
            vals = [self._fp(v) for v in fps]
            flat = vals if words == 1 else [w for v in vals for w in (v & _M64, v >> 64)]
            buf = (ffi.new("uint64_t[]", flat or [0]), len(vals), None)
        qs, n, keep = buf
        offsets = _u64_out(n + 1, like_numpy)
        ids = ffi.new("uint64_t **")
        dists = ffi.new("uint8_t **")
        err = lib.shpy_index_query_arrays(self._ix, qs, n, k, _threads(threads),
                                          ffi.from_buffer("uint64_t[]", offsets), ids, dists)
        if err:
            _core._raise(err, "query_arrays")
        try:
            total = int(offsets[n])
            out_ids = _u64_out(total, like_numpy)
            if like_numpy:
                import numpy
                out_d = numpy.zeros(total, dtype=numpy.uint8)
            else:
                out_d = array("B", bytes(total))
            if total:
                ffi.memmove(ffi.from_buffer("uint64_t[]", out_ids), ids[0], 8 * total)
                ffi.memmove(ffi.from_buffer("uint8_t[]", out_d), dists[0], total)
            return offsets, out_ids, out_d
        finally:
            lib.shpy_free(ids[0])
            lib.shpy_free(dists[0])

    def add(self, fp, id):
        """Adds one (fingerprint, id) pair; adding it again changes nothing."""
        fp = self._fp(fp)
        err = lib.shpy_index_insert(self._ix, fp & _M64, fp >> 64, self._id(id))
        if err:
            _core._raise(err, "add")

    def delete(self, fp, id):
        """Removes one pair; True if it was there."""
        fp = self._fp(fp)
        found = ffi.new("int *")
        err = lib.shpy_index_delete(self._ix, fp & _M64, fp >> 64, self._id(id), found)
        if err:
            _core._raise(err, "delete")
        return bool(found[0])

    def _k(self, k):
        if k is None:
            return self.max_dist
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.max_dist:
            raise ValueError("k must be an integer in 0..%d (the index's max_dist), not %r"
                             % (self.max_dist, k))
        return k

    def query(self, fp, k=None):
        """[(id, distance)] of every stored pair within k of fp, nearest first."""
        fp = self._fp(fp)
        m = _matches()
        err = lib.shpy_index_query(self._ix, fp & _M64, fp >> 64, self._k(k), m)
        if err:
            _core._raise(err, "query")
        v = m.v
        return [(v[i].id, v[i].dist) for i in range(m.n)]

    def query_batch(self, fps, k=None, threads=0):
        """query() of each fingerprint, computed on threads; a list of lists."""
        fps = [self._fp(v) for v in fps]
        n = len(fps)
        if not n:
            return []
        if self._bits == 64:
            qs = ffi.new("uint64_t[]", fps)
        else:
            flat = []
            for v in fps:
                flat.append(v & _M64)
                flat.append(v >> 64)
            qs = ffi.new("uint64_t[]", flat)
        ids = ffi.new("uint64_t **")
        dists = ffi.new("unsigned **")
        ends = ffi.new("size_t **")
        err = lib.shpy_index_query_batch(self._ix, qs, n, self._k(k), _threads(threads),
                                         ids, dists, ends)
        if err:
            _core._raise(err, "query_batch")
        try:
            e = ffi.unpack(ends[0], n)
            total = e[-1]
            idl = ffi.unpack(ids[0], total) if total else []
            dl = ffi.unpack(dists[0], total) if total else []
            res = []
            start = 0
            for end in e:
                res.append(list(zip(idl[start:end], dl[start:end])))
                start = end
            return res
        finally:
            lib.shpy_free(ids[0])
            lib.shpy_free(dists[0])
            lib.shpy_free(ends[0])

    def stats(self):
        """Counts, memory and layout of the index, as a dict."""
        st = ffi.new("simhash_index_stats *", {"size": ffi.sizeof("simhash_index_stats")})
        p = ffi.new("simhash_index_plan *", {"size": ffi.sizeof("simhash_index_plan")})
        err = lib.simhash_index_get_stats(self._ix, st)
        if not err:
            err = lib.simhash_index_get_plan(self._ix, p)
        if err:
            _core._raise(err, "stats")
        return {
            "count": st.count, "dead": st.dead, "segments": st.segments, "memory": st.memory,
            "mapped": bool(st.mapped),
            "layout": "mih" if p.layout == lib.SIMHASH_LAYOUT_MIH else "scan",
            "n_chunks": p.n_chunks, "n_tables": p.n_tables, "bytes_per_fp": p.bytes_per_fp,
        }

    def __repr__(self):
        return "Index(bits=%d, max_dist=%d, count=%d)" % (self._bits, self.max_dist, len(self))


def _index_unpickle(data):
    self = Index.__new__(Index)
    self._ix = _index_from_bytes(data)
    self._bits = lib.simhash_index_bits(self._ix)
    return self


class SimhashIndex(object):
    """The index of simhash 2.1.2: (obj_id, Simhash) pairs of width f,
    get_near_dups() gives the ids (as str) of the pairs within distance k."""

    def __init__(self, objs, f=64, k=2, log=None):
        """`objs` is a list of (obj_id, simhash); `f` as for Simhash; `k` the
        tolerance."""
        self.k = k
        self.f = f
        count = len(objs)
        self.log = logging.getLogger("simhash") if log is None else log
        self.log.info('Initializing %s data.', count)
        self._mask = (1 << f) - 1
        self._handles = {}   # str(obj_id) -> handle
        self._ids = []       # handle -> str(obj_id)
        self._seen = array("Q") if f <= 64 else []
        self._pending = []
        self._bufs = []
        # queries of a 64-bit index log their values in C (cheaper per query)
        self._log = None
        self._scan = None
        bits = 64 if f <= 64 else 128
        limit = lib.SIMHASH_INDEX_MAX_DIST_64 if bits == 64 else lib.SIMHASH_INDEX_MAX_DIST_128
        if (type(f) is int and 0 < f <= 128 and type(k) is int
                and 0 <= k <= min(limit, f)):
            self._ix = _new_index(bits, k)
            if bits == 64:
                self._log = _new_log()
        else:
            # outside what the library's index takes (f above 128, k above
            # its max_dist): every stored pair compared, still exact
            self._ix = None
            self._scan = set()
        self._whole = self._log is not None and f == 64
        self._bulk(objs)

    def _handle(self, obj_id):
        key = str(obj_id)
        h = self._handles.get(key)
        if h is None:
            h = self._handles[key] = len(self._ids)
            self._ids.append(key)
        return h

    def _val(self, simhash):
        if simhash.f != self.f:
            raise AssertionError("a %r-bit Simhash in a %r-bit SimhashIndex" % (simhash.f, self.f))
        return int(simhash.value) & self._mask

    def _bulk(self, objs):
        if self._ix is None:
            for obj_id, sh in objs:
                self.add(obj_id, sh)
            return
        vals = []
        hs = []
        for obj_id, sh in objs:
            vals.append(self._val(sh))
            hs.append(self._handle(obj_id))
        if not vals:
            return
        self._seen.extend(vals)
        if self.f <= 64:
            words = ffi.new("uint64_t[]", vals)
        else:
            flat = []
            for v in vals:
                flat.append(v & _M64)
                flat.append(v >> 64)
            words = ffi.new("uint64_t[]", flat)
        err = lib.simhash_index_build(self._ix, words, ffi.new("uint64_t[]", hs), len(vals),
                                      _core._cpu_count())
        if err:
            _core._raise(err, "SimhashIndex")

    def _note(self, v):
        """Remembers a value for bucket_size(): a list, packed 64 Ki at a time."""
        p = self._pending
        p.append(v)
        if len(p) >= 65536:
            self._seen.extend(p)
            p.clear()

    def _all_seen(self):
        self._seen.extend(self._pending)
        self._pending.clear()
        if self._log is not None:
            out = ffi.new("uint64_t **")
            n = lib.shpy_log_take(self._log, out)
            try:
                if n:
                    self._seen.extend(ffi.unpack(out[0], n))
            finally:
                lib.shpy_free(out[0])
        return self._seen

    def get_near_dups(self, simhash):
        """The ids (str) of the stored pairs within distance k of simhash."""
        if simhash.f != self.f:
            raise AssertionError("a %r-bit Simhash in a %r-bit SimhashIndex" % (simhash.f, self.f))
        v = simhash.value
        if self._whole:
            # f == 64: cffi's conversion to uint64_t checks the range, so the
            # common case (an int in range) needs no test of its own here
            pool = self._bufs
            try:
                mb = pool.pop()
            except IndexError:
                mb = (_matches_new(), ffi.new("uint64_t[]", _IDS_CAP))
            buf = mb[1]
            try:
                n = _query_log(self._ix, v, self.k, mb[0], buf, _IDS_CAP, self._log)
            except (OverflowError, TypeError):
                n = _query_log(self._ix, int(v) & _M64, self.k, mb[0], buf, _IDS_CAP, self._log)
            if n == 1:
                res = [self._ids[buf[0]]]
                pool.append(mb)
                return res
            if n == 0:
                pool.append(mb)
                return []
            return self._answer(n, mb)
        if v.__class__ is not int or v < 0 or v > self._mask:
            v = int(v) & self._mask
        ix = self._ix
        if ix is None:
            self._note(v)
            return list({i for w, i in self._scan if (v ^ w).bit_count() <= self.k})
        # result buffers: taken from the pool for the call (list.pop and
        # append are atomic, so a thread never shares one), made when empty
        pool = self._bufs
        try:
            mb = pool.pop()
        except IndexError:
            mb = (_matches_new(), ffi.new("uint64_t[]", _IDS_CAP))
        m, buf = mb
        if self._log is not None:
            n = _query_log(ix, v, self.k, m, buf, _IDS_CAP, self._log)
        else:
            self._note(v)
            n = _query_ids(ix, v & _M64, v >> 64, self.k, m, buf, _IDS_CAP)
        if n <= 0:
            pool.append(mb)
            if n:
                _core._raise(-n, "get_near_dups")
            return []
        return self._answer(n, mb)

    def _answer(self, n, mb):
        """The ids of a query's n > 0 matches (or raises for n < 0); gives
        the buffers mb back to the pool."""
        m, buf = mb
        try:
            if n < 0:
                _core._raise(-n, "get_near_dups")
            ids = self._ids
            if n == 1:
                return [ids[buf[0]]]
            if n <= _IDS_CAP:
                return list({ids[h] for h in ffi.unpack(buf, n)})
            mv = m.v
            return list({ids[mv[i].id] for i in range(n)})
        finally:
            self._bufs.append(mb)

    def add(self, obj_id, simhash):
        """Stores (obj_id, simhash); storing it again changes nothing."""
        v = self._val(simhash)
        self._note(v)
        if self._ix is None:
            self._scan.add((v, str(obj_id)))
            return
        err = lib.shpy_index_insert(self._ix, v & _M64, v >> 64, self._handle(obj_id))
        if err:
            _core._raise(err, "add")

    def delete(self, obj_id, simhash):
        """Removes (obj_id, simhash) if stored."""
        v = self._val(simhash)
        self._note(v)
        if self._ix is None:
            self._scan.discard((v, str(obj_id)))
            return
        h = self._handles.get(str(obj_id))
        if h is None:
            return
        err = lib.shpy_index_delete(self._ix, v & _M64, v >> 64, h, ffi.NULL)
        if err:
            _core._raise(err, "delete")

    @property
    def offsets(self):
        """Where the original's k + 1 key chunks start."""
        return [self.f // (self.k + 1) * i for i in range(self.k + 1)]

    def _chunks(self, value):
        offsets = self.offsets
        for i, offset in enumerate(offsets):
            if i == len(offsets) - 1:
                m = 2 ** (self.f - offset) - 1
            else:
                m = 2 ** (offsets[i + 1] - offset) - 1
            yield i, value >> offset & m

    def get_keys(self, simhash):
        """The original's bucket keys of simhash, 'CHUNK:I' in hex."""
        for i, c in self._chunks(simhash.value):
            yield '%x:%x' % (c, i)

    def bucket_size(self):
        """The number of buckets the original would hold: the distinct keys
        of every value added, deleted or queried."""
        keys = set()
        for v in set(self._all_seen()):
            keys.update(self._chunks(v))
        return len(keys)

    def __len__(self):
        return len(self._scan) if self._ix is None else lib.simhash_index_count(self._ix)

    def __reduce__(self):
        state = {
            "k": self.k, "f": self.f, "ids": self._ids, "seen": self._all_seen(),
            "index": None if self._ix is None else _index_bytes(self._ix),
            "scan": self._scan,
        }
        return (_simhash_index_unpickle, (type(self), state))


def _simhash_index_unpickle(cls, state):
    self = cls.__new__(cls)
    self.k = state["k"]
    self.f = state["f"]
    self.log = logging.getLogger("simhash")
    self._mask = (1 << self.f) - 1
    self._ids = state["ids"]
    self._handles = {key: h for h, key in enumerate(self._ids)}
    self._seen = state["seen"]
    self._pending = []
    self._bufs = []
    self._scan = state["scan"]
    self._ix = None if state["index"] is None else _index_from_bytes(state["index"])
    self._log = None
    if self._ix is not None and lib.simhash_index_bits(self._ix) == 64:
        self._log = _new_log()
    self._whole = self._log is not None and self.f == 64
    return self
