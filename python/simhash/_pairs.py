"""All pairs within a distance, clusters and dedup, on the library's exact
all-pairs join (simhash_pairs_*, simhash_clusters)."""
from array import array

from . import _core
from ._native import ffi, lib

__all__ = ["pairs", "clusters", "dedup"]

_M64 = (1 << 64) - 1


def _width(fps, bits):
    if bits is None:
        bits = 128 if any(v >> 64 for v in fps) else 64
    if bits not in (32, 64, 128) or isinstance(bits, bool):
        raise ValueError("bits must be 32, 64 or 128, not %r" % (bits,))
    return bits


def _words(fps, bits, what):
    for i, v in enumerate(fps):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v >> bits:
            raise ValueError("%s %d: %r is not a fingerprint of %d bits" % (what, i, v, bits))
    if bits <= 64:
        return ffi.new("uint64_t[]", fps or [0])
    flat = []
    for v in fps:
        flat.append(v & _M64)
        flat.append(v >> 64)
    return ffi.new("uint64_t[]", flat or [0])


def _check_dist(max_dist, bits):
    if isinstance(max_dist, bool) or not isinstance(max_dist, int) or not 0 <= max_dist <= bits // 4:
        raise ValueError("max_dist must be an integer in 0..%d at %d bits, not %r"
                         % (bits // 4, bits, max_dist))


def _run(fps, max_dist, other, bits, threads):
    """The simhash_pair array (owned, freed by the caller) and its length."""
    fps = [v.value if hasattr(v, "value") else v for v in fps]
    other = None if other is None else [v.value if hasattr(v, "value") else v for v in other]
    bits = _width(fps + (other or []), bits)
    _check_dist(max_dist, bits)
    out = ffi.new("simhash_pair **")
    n_out = ffi.new("size_t *")
    n_threads = _core._cpu_count() if not threads else threads
    a = _words(fps, bits, "fingerprint")
    if other is None:
        err = lib.simhash_pairs_self(a, len(fps), bits, max_dist, n_threads, out, n_out)
    else:
        b = _words(other, bits, "other fingerprint")
        err = lib.simhash_pairs_join(a, len(fps), b, len(other), bits, max_dist, n_threads,
                                     out, n_out)
    if err:
        _core._raise(err, "pairs")
    return out[0], n_out[0], len(fps)


def _unpack(p, n):
    if not n:
        return [], [], []
    assert ffi.sizeof("simhash_pair") == 24
    w = array("Q")
    w.frombytes(ffi.buffer(p, 24 * n))
    return w[0::3], w[1::3], [d & 0xffffffff for d in w[2::3]]


def pairs(fps, max_dist=3, *, other=None, bits=None, threads=0):
    """Every pair (i, j, distance) of fingerprints (ints, or Simhash objects)
    within max_dist (at most bits / 4), exactly, sorted by i then j: i < j
    within fps, or, given `other`, i in fps and j in other. bits: 32, 64 or
    128 (default: 64, or 128 if a value needs it). Runs on `threads` threads
    (0: one per core)."""
    p, n, _ = _run(fps, max_dist, other, bits, threads)
    try:
        a, b, d = _unpack(p, n)
        return list(zip(a, b, d))
    finally:
        lib.simhash_pairs_free(p)


def clusters(fps, max_dist=3, *, bits=None, threads=0):
    """For each fingerprint, the index of the first member of its cluster
    (the connected components of the pairs within max_dist)."""
    p, n, n_items = _run(fps, max_dist, None, bits, threads)
    try:
        rep = ffi.new("uint64_t[]", max(n_items, 1))
        err = lib.simhash_clusters(n_items, p, n, rep)
        if err:
            _core._raise(err, "clusters")
        return list(ffi.unpack(rep, n_items)) if n_items else []
    finally:
        lib.simhash_pairs_free(p)


def dedup(items, max_dist=None, *, config=None, f=None, bits=None, threads=0, near=None,
          exhaustive=False):
    """The indexes of the items to keep, in order: the first of each cluster
    of near-duplicates. Texts with no other option are decided as `simhash
    dedup` decides them by default (exact similarity, simhash._near; also
    near=True, and exhaustive=True for every pair). With max_dist, config, f
    or bits, or for fingerprints (ints, Simhash objects), the items are
    fingerprinted (under config, or as Simhash(text, f) without one) and
    clustered within max_dist (default 3)."""
    items = list(items)
    texts = bool(items) and all(isinstance(x, (str, bytes)) for x in items)
    fp_options = max_dist is not None or config is not None or f is not None or bits is not None
    if near is None:
        near = not fp_options and (texts or not items)
    if near:
        if items and not texts:
            raise TypeError("dedup(near=True) takes texts")
        if fp_options:
            raise TypeError("dedup(near=True) takes no max_dist, config, f or bits")
        from ._near import near_clusters
        rep = near_clusters(items, exhaustive=exhaustive)
        return [i for i, r in enumerate(rep) if r == i]
    if max_dist is None:
        max_dist = 3
    if texts:
        fps = _core.fingerprints(items, config, f=f, threads=threads)
        if bits is None:
            bits = config.bits if config is not None else (64 if (f or 64) <= 64 else 128)
            if bits < 64 and config is None:
                bits = 64
    else:
        fps = items
    rep = clusters(fps, max_dist, bits=bits, threads=threads)
    return [i for i, r in enumerate(rep) if r == i]
