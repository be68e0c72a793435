"""pairs(), clusters() and dedup() against brute force (seeded)."""
import random

import pytest

import simhash


def _clustered(rng, n, bits):
    centers = [rng.getrandbits(bits) for _ in range(max(n // 10, 1))]
    out = []
    for _ in range(n):
        v = rng.choice(centers)
        for _ in range(rng.randint(0, 5)):
            v ^= 1 << rng.randrange(bits)
        out.append(v)
    return out


def test_pairs_equal_brute_force():
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for bits in (32, 64, 128):
        fps = _clustered(rng, 400, bits)
        other = _clustered(rng, 100, bits)
        for k in (0, 2, 5, bits // 4):
            want = [(i, j, (fps[i] ^ fps[j]).bit_count()) for i in range(len(fps))
                    for j in range(i + 1, len(fps)) if (fps[i] ^ fps[j]).bit_count() <= k]
            assert simhash.pairs(fps, k, bits=bits, threads=2) == want, "seed %d" % seed
            want = [(i, j, (a ^ b).bit_count()) for i, a in enumerate(fps)
                    for j, b in enumerate(other) if (a ^ b).bit_count() <= k]
            assert simhash.pairs(fps, k, other=other, bits=bits) == want, "seed %d" % seed


def test_clusters_are_connected_components():
    fps = [0b0000, 0b0001, 0b0011, 0b1111 << 20, 0b0111, 0b111 << 50]
    # 0-1-2-4 chained at distance 1; the others alone
    assert simhash.clusters(fps, 1) == [0, 0, 0, 3, 0, 5]
    assert simhash.clusters([], 3) == []


def test_dedup_of_texts_and_fingerprints():
    texts = ["the same text, more or less " * 5, "the same text, more or less " * 5 + "!",
             "something else entirely, about cats and dogs", "the same text, more or less " * 5]
    assert simhash.dedup(texts, 3) == [0, 2]
    assert simhash.dedup([simhash.Simhash(t) for t in texts], 3) == [0, 2]
    assert simhash.dedup(texts, 3, config=simhash.Config(bits=128)) == [0, 2]


def test_pairs_errors():
    with pytest.raises(ValueError, match="max_dist"):
        simhash.pairs([1, 2], 17)
    with pytest.raises(ValueError, match="not a fingerprint"):
        simhash.pairs([1, -2], 1)
    with pytest.raises(ValueError, match="bits must be"):
        simhash.pairs([1], 1, bits=48)
