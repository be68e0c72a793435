"""Near-duplicates by exact similarity: the decision `simhash dedup` makes
with no -k and no --verify (simhash_near_* in simhash.h), for the command,
this module and a cluster job alike.

- sketch(text) -> (kind, keys): what the decision reads of one text;
- decide(a, b) -> Verdict for two sketches, near_similarity(a, b) for two texts;
- near_pairs(texts) -> [(i, j, similarity)]: every pair the command prints;
- near_clusters(texts) -> [first member of i's cluster];
- near_bands(sketch) -> the band keys of the candidate stage.
Both take exhaustive=True for the exact join (`simhash dedup --exhaustive`):
every pair the decision accepts, not only those among the candidates.
"""
import threading
from collections import namedtuple

from . import _core
from ._native import ffi, lib

__all__ = ["sketch", "decide", "near_similarity", "near_pairs", "near_clusters", "near_bands",
           "Verdict", "THRESHOLD", "SHORT", "DIFF", "BANDS"]

THRESHOLD = 0.8   # on the one similarity scale (simhash_near_similarity)
SHORT = 176       # code points: at most this is a short text (SIMHASH_NEAR_SHORT)
DIFF = 64         # short texts: at most this many n-grams not shared (SIMHASH_NEAR_DIFF_SHORT)
BANDS = 24        # band keys of a sketch (SIMHASH_NEAR_BANDS)
_KINDS = {1: "chars", 2: "shingles"}

Verdict = namedtuple("Verdict", "near kind similarity jaccard threshold shared n_a n_b")
Verdict.__doc__ = ("near: bool; kind: 'chars' (short texts), 'shingles' (long) or None "
                   "(one of each: never near); similarity: on the 0.8 scale; jaccard of the "
                   "feature sets and the pair's threshold (the kind's, or for short texts "
                   "1 - DIFF / union when higher: at most DIFF n-grams not shared); shared, "
                   "n_a, n_b: distinct features")

_tls = threading.local()


def _handle():
    nd = getattr(_tls, "near", None)
    if nd is None:
        out = ffi.new("simhash_near **")
        err = lib.simhash_near_new(out)
        if err:
            _core._raise(err, "near")
        nd = ffi.gc(out[0], lib.simhash_near_free)
        _tls.near = nd
    return nd


def sketch(text):
    """(kind, keys) of a text: 'chars' or 'shingles', and its distinct feature
    keys (64-bit ints), ascending."""
    b = _core._enc(text)
    sk = ffi.new("simhash_sketch *")
    err = lib.simhash_near_sketch(_handle(), b, len(b), sk)
    if err:
        _core._raise(err, "sketch")
    return _KINDS[sk.kind], tuple(ffi.unpack(sk.keys, sk.n_keys)) if sk.n_keys else ()


def _c_sketch(sk, keep):
    kind, keys = sk
    try:  # an array of uint64 (numpy, array('Q')): its memory as it is
        arr = ffi.from_buffer("uint64_t[]", keys)
    except TypeError:  # a tuple of ints, as sketch() gives
        arr = ffi.new("uint64_t[]", list(keys) or [0])
    keep.append(arr)
    c = ffi.new("simhash_sketch *")
    c.keys = arr
    c.n_keys = len(keys)
    c.kind = 1 if kind == "chars" else 2
    return c


def _verdict(v):
    kind = _KINDS.get(v.kind)
    sim = lib.simhash_near_similarity(v.kind, v.jaccard) if kind else 0.0
    return Verdict(bool(v.near), kind, sim, v.jaccard, v.threshold, v.shared, v.n_a, v.n_b)


def decide(a, b):
    """The Verdict on two sketches (as sketch() returns them)."""
    keep = []
    v = ffi.new("simhash_near_verdict *")
    lib.simhash_near_decide(_c_sketch(a, keep), _c_sketch(b, keep), v)
    return _verdict(v)


def near_similarity(a, b):
    """The Verdict on two texts: simhash_near_texts()."""
    ba, bb = _core._enc(a, "a"), _core._enc(b, "b")
    v = ffi.new("simhash_near_verdict *")
    err = lib.simhash_near_texts(_handle(), ba, len(ba), bb, len(bb), v)
    if err:
        _core._raise(err, "near_similarity")
    return _verdict(v)


def _sketches(texts):
    keep, arr = [], ffi.new("simhash_sketch[]", max(1, len(texts)))
    for i, t in enumerate(texts):
        kind, keys = sketch(t)
        k = ffi.new("uint64_t[]", list(keys) or [0])
        keep.append(k)
        arr[i].keys = k
        arr[i].n_keys = len(keys)
        arr[i].kind = 1 if kind == "chars" else 2
    return arr, keep


def near_bands(sk):
    """The SIMHASH_NEAR_BANDS band keys (64-bit ints) of a sketch (as
    sketch() returns it): two texts are candidates when one key is equal."""
    keep = []
    out = ffi.new("uint64_t[]", BANDS)
    lib.simhash_near_bands(_c_sketch(sk, keep), out)
    return tuple(out)


def near_pairs(texts, exhaustive=False):
    """The near-duplicate pairs (i, j, similarity), i < j, sorted, exact
    duplicates included: what `simhash dedup --output pairs` prints (with
    exhaustive=True, every pair the decision accepts)."""
    texts = list(texts)
    n = len(texts)
    arr, keep = _sketches(texts)
    same = ffi.new("uint64_t[]", max(1, n))
    out = ffi.new("simhash_near_pair **")
    n_out = ffi.new("size_t *")
    join = lib.simhash_near_join if exhaustive else lib.simhash_near_band_join
    err = join(arr, n, same, out, n_out)
    if err:
        _core._raise(err, "near_pairs")
    try:
        groups = {}
        for i in range(n):
            groups.setdefault(same[i], []).append(i)
        kinds = {i: arr[i].kind for i in range(n)}
        res = []
        for members in groups.values():
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    res.append((members[x], members[y], 1.0))
        for k in range(n_out[0]):
            p = out[0][k]
            sim = lib.simhash_near_similarity(kinds[p.a], p.jaccard)
            for i in groups[p.a]:
                for j in groups[p.b]:
                    res.append((min(i, j), max(i, j), sim))
        res.sort()
        return res
    finally:
        lib.simhash_near_pairs_free(out[0])


def near_clusters(texts, exhaustive=False):
    """For each text, the index of the first member of its cluster (connected
    components of near_pairs), as `simhash dedup --output clusters` groups."""
    texts = list(texts)
    arr, keep = _sketches(texts)
    cl = ffi.new("uint64_t[]", max(1, len(texts)))
    clusters = lib.simhash_near_clusters if exhaustive else lib.simhash_near_band_clusters
    err = clusters(arr, len(texts), cl)
    if err:
        _core._raise(err, "near_clusters")
    return list(ffi.unpack(cl, len(texts))) if texts else []
