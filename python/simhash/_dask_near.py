"""The stages of `simhash-dask dedup` for `simhash dedup`'s default decision
(the exact similarity of two texts, simhash_near_* in the library), on the
shuffles of simhash.dask:

1. each partition sketches its documents (one library call each: the
   distinct feature keys and the kind) and takes their band keys
   (simhash_near_bands);
2. for clusters, keep and drop, exact duplicates (the same sketch) are
   collapsed first: sketches are shuffled by a hash of their keys, and each
   document whose sketch equals an earlier one's gets an edge to the first
   (so a line repeated 100,000 times costs linear work); pairs lists every
   pair, so nothing is collapsed for it;
3. every remaining document's band keys are shuffled by key; each bucket
   lists the pairs of documents that share a key (a pair found in several
   bands is listed once in the end: attach() keeps one of each);
4. the pairs are shuffled to the partition of each side, which attaches its
   sketch, and checked there by simhash_near_decide().
The pairs are those of `simhash dedup` (simhash_near_band_join): the near
pairs among those sharing a band key, a pure function of the texts; with
exact duplicates collapsed, the components are the same.
"""
import numpy as np

from . import _blocks, _core, _near
from ._native import ffi, lib

BANDS = lib.SIMHASH_NEAR_BANDS


def sketch_texts(texts):
    """(kinds, koff, keys, bands) of texts (bytes): kinds uint8[n], koff
    uint64[n + 1] offsets into keys (each sketch's keys ascending), bands
    uint64[n, BANDS]. Raises _core.Error with .index on a failed text."""
    nd = _near._handle()
    n = len(texts)
    sk = ffi.new("simhash_sketch *")
    out = ffi.new("uint64_t[]", BANDS)
    kinds = np.zeros(n, dtype=np.uint8)
    koff = np.zeros(n + 1, dtype=np.uint64)
    bands = np.zeros((n, BANDS), dtype=np.uint64)
    keys = []
    for i, t in enumerate(texts):
        err = lib.simhash_near_sketch(nd, t, len(t), sk)
        if err:
            try:
                _core._raise(err, "sketch")
            except _core.Error as e:
                e.index = i
                raise
        kinds[i] = sk.kind
        m = sk.n_keys
        keys.append(np.frombuffer(ffi.buffer(sk.keys, 8 * m), dtype=np.uint64).copy()
                    if m else np.zeros(0, np.uint64))
        koff[i + 1] = koff[i] + m
        lib.simhash_near_bands(sk, out)
        bands[i] = np.frombuffer(ffi.buffer(out, 8 * BANDS), dtype=np.uint64)
    return kinds, koff, (np.concatenate(keys) if keys else np.zeros(0, np.uint64)), bands


def _sketch_of(part, i):
    s, e = int(part["koff"][i]), int(part["koff"][i + 1])
    return int(part["kinds"][i]), part["keys"][s:e]


# ---------------------------------------------------------------- exact duplicates


def _sketch_hashes(part):
    """A hash of each sketch (kind, size and keys), for grouping only."""
    n = part["n"]
    koff = part["koff"].astype(np.int64)
    mixed = _blocks.splitmix(part["keys"])
    sums = np.zeros(n, dtype=np.uint64)
    nonempty = koff[1:] > koff[:-1]
    if len(mixed):
        red = np.add.reduceat(mixed, koff[:-1][nonempty]) if nonempty.any() else []
        sums[nonempty] = red
    head = np.diff(koff).astype(np.uint64) ^ (part["kinds"].astype(np.uint64) << np.uint64(56))
    return _blocks.splitmix(sums ^ _blocks.splitmix(head))


def route_dups(part, base, n_buckets):
    """The sketches of a partition cut by their hash into n_buckets pieces:
    gids, hashes, kinds, sizes and keys."""
    h = _sketch_hashes(part)
    koff = part["koff"].astype(np.int64)
    sizes = np.diff(koff)
    bucket = (h % np.uint64(n_buckets)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    cuts = np.searchsorted(bucket[order], np.arange(n_buckets + 1))
    pieces = []
    for j in range(n_buckets):
        idx = order[cuts[j]:cuts[j + 1]]
        # the keys of these documents, in this order, without a loop per document
        take = np.repeat(koff[:-1][idx], sizes[idx]) + (
            np.arange(int(sizes[idx].sum())) -
            np.repeat(np.cumsum(sizes[idx]) - sizes[idx], sizes[idx]))
        pieces.append({"gid": np.uint64(base) + idx.astype(np.uint64), "h": h[idx],
                       "kind": part["kinds"][idx], "size": sizes[idx],
                       "keys": part["keys"][take] if len(take) else np.zeros(0, np.uint64)})
    return pieces


def dup_edges(*pieces):
    """Edges {"a": document, "b": the first document with the same sketch}
    for every document that is not the first of its sketch."""
    gid = np.concatenate([p["gid"] for p in pieces]) if pieces else np.zeros(0, np.uint64)
    a_out, b_out = [], []
    if len(gid):
        h = np.concatenate([p["h"] for p in pieces])
        kind = np.concatenate([p["kind"] for p in pieces])
        size = np.concatenate([p["size"] for p in pieces])
        koff = np.zeros(len(gid) + 1, dtype=np.int64)
        np.cumsum(size, out=koff[1:])
        keys = np.concatenate([p["keys"] for p in pieces])
        order = np.lexsort((gid, h))
        i = 0
        while i < len(order):
            j = i + 1
            while j < len(order) and h[order[j]] == h[order[i]]:
                j += 1
            firsts = []  # the first of each distinct sketch in this run
            for q in order[i:j]:
                mine = keys[koff[q]:koff[q + 1]]
                for f in firsts:
                    if kind[f] == kind[q] and size[f] == size[q] and \
                            np.array_equal(keys[koff[f]:koff[f + 1]], mine):
                        a_out.append(gid[q])
                        b_out.append(gid[f])
                        break
                else:
                    firsts.append(q)
            i = j
    return {"a": np.array(a_out, dtype=np.uint64), "b": np.array(b_out, dtype=np.uint64)}


def not_first(base, n, *pieces):
    """Which documents of a partition have an earlier identical sketch."""
    mask = np.zeros(n, dtype=bool)
    for p in pieces:
        if p is not None and len(p["a"]):
            mask[(p["a"] - np.uint64(base)).astype(np.int64)] = True
    return mask


# ---------------------------------------------------------------- bands


def route_bands(part, base, skip, n_buckets):
    """Each document's band keys (but those of `skip`), cut by key into
    n_buckets pieces of {"key", "gid"}."""
    n = part["n"]
    keep = np.nonzero(~skip)[0] if skip is not None else np.arange(n)
    keys = part["bands"][keep].reshape(-1)
    gids = np.repeat(np.uint64(base) + keep.astype(np.uint64), BANDS)
    bucket = (keys % np.uint64(n_buckets)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    cuts = np.searchsorted(bucket[order], np.arange(n_buckets + 1))
    return [{"key": keys[order[cuts[j]:cuts[j + 1]]], "gid": gids[order[cuts[j]:cuts[j + 1]]]}
            for j in range(n_buckets)]


def band_pairs(*pieces):
    """The pairs (a < b) of documents sharing a band key in this bucket."""
    key = np.concatenate([p["key"] for p in pieces]) if pieces else np.zeros(0, np.uint64)
    gid = np.concatenate([p["gid"] for p in pieces]) if pieces else np.zeros(0, np.uint64)
    order = np.lexsort((gid, key))
    key, gid = key[order], gid[order]
    starts = np.nonzero(np.r_[True, key[1:] != key[:-1]])[0] if len(key) else np.zeros(0, int)
    ends = np.r_[starts[1:], len(key)].astype(np.int64)
    a_out, b_out = [], []
    for s, e in zip(starts, ends):
        if e - s < 2:
            continue
        g = gid[s:e]
        ii, jj = np.triu_indices(e - s, 1)
        a_out.append(g[ii])
        b_out.append(g[jj])
    if not a_out:
        return {"a": np.zeros(0, np.uint64), "b": np.zeros(0, np.uint64)}
    return {"a": np.concatenate(a_out), "b": np.concatenate(b_out)}


def unique_pairs(chunk):
    """The chunk's pairs, each (a, b) once (a pair sharing several bands is
    listed by each)."""
    a, b = chunk["a"], chunk["b"]
    if len(a) < 2:
        return chunk
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    first = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]
    return {"a": a[first], "b": b[first]}


def attach_sketches(part, base, field, chunk):
    """Chunk's pairs with the sketch of document `field` attached."""
    local = (chunk[field] - np.uint64(base)).astype(np.int64)
    chunk["kind" + field] = part["kinds"][local] if len(local) else np.zeros(0, np.uint8)
    chunk["k" + field] = [_sketch_of(part, int(i))[1] for i in local]
    return chunk


def decide(kind_a, keys_a, kind_b, keys_b):
    """simhash.decide() on two sketches given as a kind code and a uint64
    array of keys: (near, similarity)."""
    v = _near.decide((_near._KINDS[kind_a], keys_a), (_near._KINDS[kind_b], keys_b))
    return v.near, v.similarity


def line(id_a, id_b, sim):
    """A pair as `simhash dedup` prints it: ID_A ID_B DIST SIM."""
    return b"%s\t%s\t%d\t%.6f\n" % (id_a, id_b, int(100 * (1 - sim) + 0.5), sim)


def member(ident_json, sim):
    return '{"id":%s,"sim":%.6f}' % (ident_json, sim)
