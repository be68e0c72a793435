"""The bulk entry points of simhash._blocks (the Dask job's kernels) against
brute force: every pair within k comes out of exactly one table, once,
whether a key is compared whole or split into sub-block meetings."""
import random

import numpy as np
import pytest

from simhash import _blocks

SEED = 20240611


def brute(fps, k):
    out = set()
    for i in range(len(fps)):
        for j in range(i + 1, len(fps)):
            d = bin(fps[i] ^ fps[j]).count("1")
            if d <= k:
                out.add((i, j, d))
    return out


def words(fps, bits):
    if bits < 128:
        return np.array(fps, dtype=np.uint64)
    return np.array([w for v in fps for w in (v & (2**64 - 1), v >> 64)], dtype=np.uint64)


def near_set(rng, n, bits, p):
    fps = []
    while len(fps) < n:
        v = sum(1 << b for b in range(bits) if rng.random() < p)
        fps.append(v)
        for _ in range(rng.randrange(3)):
            w = v
            for b in rng.sample(range(bits), rng.randrange(6)):
                w ^= 1 << b
            fps.append(w)
    return fps[:n]


@pytest.mark.parametrize("bits,k,p", [(64, 0, 0.72), (64, 3, 0.5), (64, 3, 0.72), (64, 6, 0.72),
                                      (128, 6, 0.5), (128, 0, 0.72), (32, 3, 0.72),
                                      (64, 1, 0.72)])
def test_tables_find_every_pair_once(bits, k, p):
    rng = random.Random("%d-%d-%d-%s" % (SEED, bits, k, p))
    fps = near_set(rng, 400, bits, p)
    got = []
    for t in range(_blocks.n_blocks(k)):
        a, b, d = _blocks.block_pairs(words(fps, bits), np.arange(len(fps), dtype=np.uint64),
                                      bits, k, t)
        got += list(zip(a.tolist(), b.tolist(), d.tolist()))
    assert sorted(got) == sorted(brute(fps, k)), "seed %d" % SEED


def test_split_key_meetings_find_every_pair_once():
    # one block value held by every fingerprint, split into r sub-blocks: the
    # r (r + 1) / 2 meetings (cells) together give each pair once
    rng = random.Random(SEED)
    bits, k, r = 64, 3, 3
    base = rng.getrandbits(64)
    fps = []
    for _ in range(150):  # all share block 0 (bits 0..15); copies and near ones
        v = base
        for b in rng.sample(range(16, 64), rng.randrange(4)):
            v ^= 1 << b
        fps.append(v)
    fps += fps[:50]
    sub = [rng.randrange(r) for _ in fps]
    got = []
    for i in range(r):
        for j in range(i, r):
            members = [(m, 0 if sub[m] == i else 1) for m in range(len(fps)) if sub[m] in (i, j)]
            cell = ((i * r + j + 1) << 1) | (i != j)
            a, b, d = _blocks.block_pairs(
                words([fps[m] for m, _ in members], bits),
                np.array([m for m, _ in members], dtype=np.uint64), bits, k, 0,
                cells=np.full(len(members), cell, dtype=np.uint64),
                sides=np.array([s for _, s in members], dtype=np.uint8))
            got += list(zip(a.tolist(), b.tolist(), d.tolist()))
    want = brute(fps, k)  # table 0 is the first table every pair shares
    assert sorted(got) == sorted(want)
    assert len(got) == len(set(got))


def test_parse_text_form():
    data = b"0123456789abcdef\tone\n0123456789ABCDEF\ttwo\r\nffffffffffffffff\t\n"
    w, ids = _blocks.parse_text_form(data, 16)
    assert w.tolist() == [0x0123456789abcdef, 0x0123456789abcdef, 2**64 - 1]
    assert [data[ids[2 * i]:ids[2 * i + 1]] for i in range(3)] == [b"one", b"two", b""]
    with pytest.raises(ValueError) as e:
        _blocks.parse_text_form(b"0123456789abcdef\ta\n0123456789abcdeg\tb\n", 16)
    assert e.value.line == 2
    w, ids = _blocks.parse_text_form(b"", 16)
    assert len(w) == 0


def test_line_ids_are_parse_text_form_ids():
    rng = random.Random(SEED + 7)
    for digits in (8, 16, 32):
        lines = []
        for i in range(300):
            ident = "".join(rng.choice("ab\t c\u00e9\u6f22") for _ in range(rng.randrange(6)))
            end = rng.choice(["\n", "\r\n"])
            lines.append("%0*x\t%s%s" % (digits, rng.getrandbits(4 * digits), ident, end))
        if rng.random() < 0.5:
            lines[-1] = lines[-1].rstrip("\r\n")  # a last line without its break
        data = "".join(lines).encode()
        _, want = _blocks.parse_text_form(data, digits)
        some = sorted(rng.sample(range(300), 40)) + [299]
        got = _blocks.line_ids(data, digits, some)
        assert got.tolist() == [int(want[2 * i + h]) for i in some for h in (0, 1)]
    with pytest.raises(ValueError):
        _blocks.line_ids(b"0123456789abcdef\tone\n", 16, [1])


def test_block_keys_cover_the_bits():
    fps = np.array([0x0123456789abcdef], dtype=np.uint64)
    keys = [int(_blocks.block_keys(fps, 64, 3, t)[0][0]) for t in range(4)]
    assert keys == [0xcdef, 0x89ab, 0x4567, 0x0123]


def reference_route(fps, bits, k, table, base, n_buckets, heavy):
    """route() as numpy did it: the records of each bucket in input order,
    and the places of the heavy keys' records."""
    nw = 2 if bits == 128 else 1
    lo, hi = _blocks.block_keys(fps, bits, k, table)
    bucket = _blocks.splitmix(lo ^ _blocks.splitmix(hi ^ np.uint64(table))) % np.uint64(n_buckets)
    is_heavy = np.zeros(len(lo), dtype=bool)
    for klo, khi in heavy:
        is_heavy |= (lo == np.uint64(klo)) & (hi == np.uint64(khi))
    fp2 = fps.reshape(-1, nw)
    pieces = []
    for j in range(n_buckets):
        sel = np.nonzero((bucket == np.uint64(j)) & ~is_heavy)[0]
        pieces.append((fp2[sel].reshape(-1), sel.astype(np.uint64) + np.uint64(base)))
    return pieces, np.nonzero(is_heavy)[0].astype(np.uint64)


@pytest.mark.parametrize("bits,k,p", [(64, 3, 0.72), (64, 0, 0.5), (128, 6, 0.72), (32, 3, 0.9),
                                      (128, 0, 0.5)])
def test_route_is_the_numpy_route(bits, k, p):
    # biased bits make frequent block values: some are made heavy (not
    # routed), some heavy keys are absent from the partition
    rng = random.Random("%d-route-%d-%d-%s" % (SEED, bits, k, p))
    fps = words(near_set(rng, 3000, bits, p), bits)
    for table in range(_blocks.n_blocks(k)):
        lo, hi = _blocks.block_keys(fps, bits, k, table)
        vals, counts = np.unique(np.stack([lo, hi], axis=1), axis=0, return_counts=True)
        top = [(int(a), int(b)) for (a, b), c in zip(vals, counts) if c >= 5][:7]
        for heavy in ([], top, top + [(2**40 + 3, 1)]):
            for n_buckets in (1, 3, 17):
                base = rng.randrange(10**9)
                got, got_heavy = _blocks.route(fps, bits, k, table, base, n_buckets,
                                               {h: 2 for h in heavy})
                want, want_heavy = reference_route(fps, bits, k, table, base, n_buckets, heavy)
                assert got_heavy.tolist() == want_heavy.tolist()
                assert len(got) == n_buckets
                for (gf, gg), (wf, wg) in zip(got, want):
                    assert gf.tolist() == wf.tolist() and gg.tolist() == wg.tolist()
    empty, none = _blocks.route(np.zeros(0, np.uint64), bits, k, 0, 5, 4)
    assert [len(f) for f, _ in empty] == [0] * 4 and len(none) == 0
