"""SimhashIndex against the original package's (same ids, same bucket_size,
same set semantics) and Index against a brute-force scan, on random and
clustered fingerprints (seeded; the seed is printed on failure)."""
import pickle
import random

import pytest

import simhash
from simhash import Index, Simhash, SimhashIndex

DATA = {
    1: 'How are you? I Am fine. blar blar blar blar blar Thanks.',
    2: 'How are you i am fine. blar blar blar blar blar than',
    3: 'This is simhash test.',
    4: 'How are you i am fine. blar blar blar blar blar thank1',
}


def test_the_original_suites_scenario():
    index = SimhashIndex([(str(k), Simhash(v)) for k, v in DATA.items()], k=10)
    s1 = Simhash('How are you i am fine.ablar ablar xyz blar blar blar blar blar blar blar thank')
    assert len(index.get_near_dups(s1)) == 3
    index.delete('1', Simhash(DATA[1]))
    assert len(index.get_near_dups(s1)) == 2
    index.delete('1', Simhash(DATA[1]))
    assert len(index.get_near_dups(s1)) == 2
    index.add('1', Simhash(DATA[1]))
    assert len(index.get_near_dups(s1)) == 3
    index.add('1', Simhash(DATA[1]))
    assert sorted(index.get_near_dups(s1)) == ['1', '2', '4']


def _fps(rng, n, f, kind):
    if kind == "uniform":
        return [rng.getrandbits(f) for _ in range(n)]
    if kind == "biased":  # each bit 1 with p = 0.72
        return [sum(1 << b for b in range(f) if rng.random() < 0.72) for _ in range(n)]
    centers = [rng.getrandbits(f) for _ in range(max(n // 20, 1))]
    out = []
    for _ in range(n):
        v = rng.choice(centers)
        for _ in range(rng.randint(0, 6)):
            v ^= 1 << rng.randrange(f)
        out.append(v)
    return out


def _flip(rng, v, f, n):
    for _ in range(n):
        v ^= 1 << rng.randrange(f)
    return v


def test_random_operations_against_the_original(orig):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for case in range(12):
        f = rng.choice([64, 64, 128, 32, 16])
        k = rng.choice([0, 1, 2, 3, 5, 8, 17 if f >= 64 else 4])
        kind = rng.choice(["uniform", "biased", "clustered"])
        vals = _fps(rng, rng.randint(0, 300), f, kind)
        objs = [(rng.choice([str(i), i, "id,%d" % (i % 7)]), v) for i, v in enumerate(vals)]
        mine = SimhashIndex([(i, Simhash(v, f=f)) for i, v in objs], f=f, k=k)
        theirs = orig.SimhashIndex([(i, orig.Simhash(v, f=f)) for i, v in objs], f=f, k=k)
        for step in range(150):
            op = rng.random()
            v = _flip(rng, rng.choice(vals), f, rng.randint(0, k + 2)) if vals and op < 0.8 \
                else rng.getrandbits(f)
            if op < 0.6:
                got = mine.get_near_dups(Simhash(v, f=f))
                want = theirs.get_near_dups(orig.Simhash(v, f=f))
                assert len(got) == len(set(got))
                assert sorted(got) == sorted(want), "seed %d case %d step %d" % (seed, case, step)
            elif op < 0.8:
                i = rng.choice([str(rng.randrange(len(vals) + 1)), "new"])
                mine.add(i, Simhash(v, f=f))
                theirs.add(i, orig.Simhash(v, f=f))
            else:
                i, w = rng.choice(objs) if objs and rng.random() < 0.7 else ("absent", v)
                mine.delete(i, Simhash(w, f=f))
                theirs.delete(i, orig.Simhash(w, f=f))
        assert mine.bucket_size() == theirs.bucket_size(), "seed %d case %d" % (seed, case)
        assert mine.offsets == theirs.offsets
        s = Simhash(vals[0] if vals else 5, f=f)
        assert list(mine.get_keys(s)) == list(theirs.get_keys(orig.Simhash(s.value, f=f)))
        back = pickle.loads(pickle.dumps(mine))
        q = Simhash(rng.getrandbits(f), f=f)
        assert sorted(back.get_near_dups(q)) == sorted(mine.get_near_dups(q))
        assert back.bucket_size() == mine.bucket_size()


def test_width_mismatch_is_an_assertion_error():
    index = SimhashIndex([("a", Simhash("x"))])
    with pytest.raises(AssertionError):
        index.get_near_dups(Simhash("x", f=128))


def _brute(pairs, q, k):
    return sorted(((i, (q ^ v).bit_count()) for v, i in pairs if (q ^ v).bit_count() <= k),
                  key=lambda p: (p[1], p[0]))


def test_index_equals_a_scan(tmp_path):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for bits in (64, 128):
        for kind in ("uniform", "biased", "clustered"):
            vals = _fps(rng, 2000, bits, kind)
            ix = Index(bits, max_dist=12)
            ix.build(vals[:1500], threads=2)
            for i, v in enumerate(vals[1500:], 1500):
                ix.add(v, i)
            pairs = {(v, i) for i, v in enumerate(vals)}
            for i in range(0, 2000, 7):
                assert ix.delete(vals[i], i)
                pairs.discard((vals[i], i))
            assert not ix.delete(vals[0], 0)
            assert len(ix) == len(pairs)
            qs = [_flip(rng, rng.choice(vals), bits, rng.randint(0, 8)) for _ in range(60)]
            for k in (0, 3, 12):
                want = [_brute(pairs, q, k) for q in qs]
                assert [ix.query(q, k) for q in qs] == want, "seed %d" % seed
                assert ix.query_batch(qs, k, threads=2) == want, "seed %d" % seed
            path = tmp_path / ("ix%d%s" % (bits, kind))
            ix.scheme = simhash.Config(bits=bits)
            ix.save(str(path))
            back = Index.open(str(path))
            assert back.scheme == simhash.Config(bits=bits).scheme
            assert [back.query(q, 5) for q in qs] == [_brute(pairs, q, 5) for q in qs]
            un = pickle.loads(pickle.dumps(ix))
            assert [un.query(q, 5) for q in qs] == [_brute(pairs, q, 5) for q in qs]


def test_index_errors():
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        Index(32)
    with pytest.raises(ValueError, match="max_dist"):
        Index(64, max_dist=40)
    ix = Index(64, max_dist=4)
    with pytest.raises(ValueError, match="k must be"):
        ix.query(0, 5)
    with pytest.raises(ValueError, match="does not fit"):
        ix.add(1 << 64, 1)
    with pytest.raises(TypeError, match="a fingerprint is an int"):
        ix.add("abc", 1)
    with pytest.raises(ValueError, match="an id is"):
        ix.add(5, -1)
    with pytest.raises(simhash.Error) as e:
        Index.open("/nonexistent/index")
    assert isinstance(e.value, OSError)


def test_queries_from_many_threads(orig):
    import threading
    rng = random.Random(3)
    vals = _fps(rng, 500, 64, "clustered")
    objs = [(str(i), v) for i, v in enumerate(vals)]
    mine = SimhashIndex([(i, Simhash(v)) for i, v in objs], k=3)
    theirs = orig.SimhashIndex([(i, orig.Simhash(v)) for i, v in objs], k=3)
    qs = [_flip(rng, rng.choice(vals), 64, rng.randint(0, 4)) for _ in range(400)]
    want = [sorted(theirs.get_near_dups(orig.Simhash(q))) for q in qs]
    got = {}

    def run(t):
        got[t] = [sorted(mine.get_near_dups(Simhash(q))) for q in qs]
    ts = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(g == want for g in got.values())
    assert mine.bucket_size() == theirs.bucket_size()


def test_values_outside_the_width_are_taken_modulo_2_to_the_f(orig):
    vals = [0, 1, 2**64 - 1, 0x0123456789ABCDEF]
    mine = SimhashIndex([(str(i), Simhash(v)) for i, v in enumerate(vals)], k=2)
    theirs = orig.SimhashIndex([(str(i), orig.Simhash(v)) for i, v in enumerate(vals)], k=2)
    for q in [-1, -2, 2**64, 2**64 + 1, 2**70 + 0x0123456789ABCDEF, True]:
        got = sorted(mine.get_near_dups(Simhash(q)))
        assert got == sorted(theirs.get_near_dups(orig.Simhash(q))), q
        assert got == sorted(mine.get_near_dups(Simhash(q % 2**64))), q


def _csr_equals(ix, qs, k, offsets, ids, dists):
    """query() of each q, against the CSR answer."""
    assert len(offsets) == len(qs) + 1 and offsets[0] == 0
    assert len(ids) == len(dists) == offsets[len(qs)]
    for j, q in enumerate(qs):
        a, b = int(offsets[j]), int(offsets[j + 1])
        got = list(zip((int(x) for x in ids[a:b]), (int(x) for x in dists[a:b])))
        if got != ix.query(q, k):
            return False
    return True


def test_arrays_in_and_out_without_numpy():
    """array('Q') in, array('Q') / array('B') out: the same answers as
    query() and as brute force, for 1 and several threads, 64 and 128 bits
    (128: rows of two words, bits 0..63 first)."""
    from array import array
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for bits in (64, 128):
        vals = _fps(rng, 3000, bits, "biased")
        words = array("Q")
        for v in vals:
            words.extend([v & (2**64 - 1), v >> 64] if bits == 128 else [v])
        ix = Index(bits, max_dist=6)
        ix.build(words, threads=1)
        ix2 = Index(bits, max_dist=6)
        ix2.build(vals)
        assert len(ix) == len(ix2)
        pairs = {(v, i) for i, v in enumerate(vals)}
        qs = [_flip(rng, rng.choice(vals), bits, rng.randint(0, 6)) for _ in range(700)]
        qwords = array("Q")
        for q in qs:
            qwords.extend([q & (2**64 - 1), q >> 64] if bits == 128 else [q])
        for threads in (1, 3):
            offsets, ids, dists = ix.query_arrays(qwords, k=4, threads=threads)
            assert isinstance(offsets, array) and offsets.typecode == "Q", "seed %d" % seed
            assert isinstance(dists, array) and dists.typecode == "B"
            assert _csr_equals(ix, qs, 4, offsets, ids, dists), "seed %d" % seed
            for j in range(0, len(qs), 50):
                a, b = offsets[j], offsets[j + 1]
                assert list(zip(ids[a:b], dists[a:b])) == _brute(pairs, qs[j], 4), "seed %d" % seed
        # an iterable of ints takes the same path out
        assert ix.query_arrays(qs[:20], k=2) == ix.query_arrays(qwords[:20 * (bits // 64)], k=2)
        assert ix.query_arrays([], k=1) == (array("Q", [0]), array("Q"), array("B"))


def test_numpy_arrays_in_and_out():
    np = pytest.importorskip("numpy")
    seed = random.randrange(2**32)
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
    ids = rng.permutation(5000).astype(np.uint64) * 7
    ix = Index(64, max_dist=5)
    ix.build(fps, ids=ids, threads=2)
    ref = Index(64, max_dist=5)
    ref.build([int(v) for v in fps], ids=[int(i) for i in ids])
    qs = fps[::3].copy()
    qs[::2] ^= np.uint64(0b1011)
    offsets, out_ids, dists = ix.query_arrays(qs, k=5, threads=1)
    assert offsets.dtype == np.uint64 and out_ids.dtype == np.uint64 and dists.dtype == np.uint8
    assert _csr_equals(ref, [int(q) for q in qs], 5, offsets, out_ids, dists), "seed %d" % seed
    # threads and a strided view (copied once) give the same arrays
    o2, i2, d2 = ix.query_arrays(fps[::3] ^ np.where(np.arange(len(qs)) % 2 == 0,
                                                     np.uint64(0b1011), np.uint64(0)),
                                 k=5, threads=4)
    assert (o2 == offsets).all() and (i2 == out_ids).all() and (d2 == dists).all()
    o3, i3, d3 = ix.query_arrays(np.repeat(qs, 2)[::2], k=5)
    assert (o3 == offsets).all() and (i3 == out_ids).all()
    # numpy integer scalars are fingerprints and ids
    assert ix.query(fps[10], 0) == [(int(ids[10]), 0)]
    ix.add(np.uint64(12345), np.uint64(99999))
    assert ix.query(np.int64(12345), 0) == [(99999, 0)]
    # default ids follow len(self); 128 bits as (n, 2) rows
    ix128 = Index(128, max_dist=4)
    rows = rng.integers(0, 2**64, size=(300, 2), dtype=np.uint64)
    ix128.build(rows)
    v = int(rows[42, 0]) | int(rows[42, 1]) << 64
    assert ix128.query(v, 0) == [(42, 0)]
    o, i, d = ix128.query_arrays(rows[40:45], k=0)
    assert o.tolist() == [0, 1, 2, 3, 4, 5] and i.tolist() == [40, 41, 42, 43, 44]
    with pytest.raises(TypeError, match="uint64"):
        ix.build(np.arange(5, dtype=np.int32))
    with pytest.raises(ValueError, match="5 fingerprints but 4 ids"):
        ix.build(fps[:5], ids=ids[:4])
    with pytest.raises(ValueError, match="shape"):
        ix.query_arrays(np.zeros((3, 2), dtype=np.uint64))
