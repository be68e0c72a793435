"""The default decision of `simhash dedup` (simhash_near_*) against a plain
Python reference, on small random texts (seeded; the seed is in the
assertion message): ASCII words, CJK, emoji, combining marks.

The reference takes a text's features from the library's own char and
shingle configs (their normalization is tested elsewhere) and does the rest
itself: the kind by code points, sets, Jaccard, the thresholds in integers,
the short texts' budget of n-grams not shared, the one similarity scale, and
the pairs and clusters by brute force."""
import random

import simhash
from simhash._near import DIFF, SHORT

CHARS = simhash.Config(features="char", ngram=3, ngram_cjk=2)
SHINGLES = simhash.Config(features="shingle", ngram=3, tokenizer="simple", t2s=False)
ALPHABET = ["the", "cat", "dog", "sat", "on", "mat", "猫", "狗", "坐", "在", "垫子", "上",
            "\U0001f600", "e\u0301", "Ａ", "ß", "ﬁ", "9", " ", " ", ",", "\u3002"]


def ref_sketch(text):
    kind = "chars" if len(text) <= SHORT else "shingles"  # code points of the input
    cfg = CHARS if kind == "chars" else SHINGLES
    return kind, {f for f, _ in cfg.features(text)}


def ref_decide(a, b):
    (ka, sa), (kb, sb) = ref_sketch(a), ref_sketch(b)
    if ka != kb:
        return False, 0.0
    shared, union = len(sa & sb), len(sa | sb)
    tenths = 4 if ka == "chars" else 8
    near = union == 0 or 10 * shared >= tenths * union
    if ka == "chars":
        near = near and union - shared <= DIFF
    jac = 1.0 if union == 0 else shared / union
    return near, (1 - (1 - jac) / 3) if ka == "chars" else jac


def random_text(rng, n_tokens):
    return "".join(rng.choice(ALPHABET) for _ in range(n_tokens))


def edit(rng, text):
    chars = list(text)
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(chars) + 1)
        if chars and rng.random() < 0.5:
            del chars[min(i, len(chars) - 1)]
        else:
            chars.insert(i, rng.choice(ALPHABET))
    return "".join(chars)


def sample(seed, n=40, long_share=0.3):
    rng = random.Random(seed)
    texts = []
    while len(texts) < n:
        if texts and rng.random() < 0.5:
            texts.append(edit(rng, rng.choice(texts)))
        else:
            texts.append(random_text(rng, rng.randint(0, 12) if rng.random() > long_share
                                     else rng.randint(100, 200)))
    return texts


def test_decision_matches_reference():
    for seed in range(30):
        texts = sample(seed)
        for i in range(len(texts)):
            for j in range(i, len(texts)):
                want_near, want_sim = ref_decide(texts[i], texts[j])
                v = simhash.near_similarity(texts[i], texts[j])
                assert v.near == want_near, (seed, texts[i], texts[j], v)
                assert abs(v.similarity - want_sim) < 1e-12, (seed, texts[i], texts[j], v)
                assert simhash.decide(simhash.sketch(texts[i]), simhash.sketch(texts[j])) == v


def test_budget_decides_longer_short_texts():
    """Short texts of 100 to 176 code points, edited a little or a lot: the
    budget of DIFF n-grams not shared decides some pairs that J >= 0.4
    alone would call near, and the library agrees with the reference."""
    rng = random.Random(17)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta"]
    budget_only = 0
    for _ in range(300):
        base = " ".join(rng.choice(words) + str(rng.randrange(100)) for _ in range(20))[:170]
        other = list(base)
        for _ in range(rng.randint(0, 40)):
            i = rng.randrange(len(other))
            other[i] = rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ")
        other = "".join(other)
        want_near, want_sim = ref_decide(base, other)
        v = simhash.near_similarity(base, other)
        assert v.kind == "chars" and v.near == want_near, (base, other, v)
        assert abs(v.similarity - want_sim) < 1e-12
        budget_only += not v.near and v.jaccard >= 0.4
    assert DIFF == 64
    assert budget_only > 10, budget_only


def test_kind_follows_code_points():
    assert SHORT == 176
    assert simhash.sketch("a" * SHORT)[0] == "chars"
    assert simhash.sketch("a" * (SHORT + 1))[0] == "shingles"
    assert simhash.sketch("猫" * SHORT)[0] == "chars"      # 3 bytes per code point
    assert simhash.sketch("")[1] == ()
    v = simhash.near_similarity("a" * 100, "a" * 300)    # one of each kind: never near
    assert v.kind is None and not v.near


def test_join_pairs_are_the_reference_pairs():
    """The join returns exactly the pairs the reference finds by brute
    force, with their similarity."""
    for seed in range(30):
        texts = sample(seed, n=30)
        got = simhash.near_pairs(texts, exhaustive=True)
        want = []
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                near, sim = ref_decide(texts[i], texts[j])
                if near:
                    want.append((i, j, sim))
        assert [p[:2] for p in got] == [p[:2] for p in want], seed
        for g, w in zip(got, want):
            assert abs(g[2] - w[2]) < 1e-12, (seed, g, w)


def test_band_pairs_are_the_reference_pairs_among_candidates():
    """The default join returns exactly the reference pairs whose texts
    share a band key, with their similarity; most pairs are among them."""
    found = total = 0
    for seed in range(30):
        texts = sample(seed, n=30)
        bands = [simhash.near_bands(simhash.sketch(t)) for t in texts]
        got = simhash.near_pairs(texts)
        want = []
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                near, sim = ref_decide(texts[i], texts[j])
                cand = any(x == y for x, y in zip(bands[i], bands[j]))
                total += near
                found += near and cand
                if near and cand:
                    want.append((i, j, sim))
        assert [p[:2] for p in got] == [p[:2] for p in want], seed
        for g, w in zip(got, want):
            assert abs(g[2] - w[2]) < 1e-12, (seed, g, w)
    assert found >= 0.9 * total, (found, total)


def test_clusters_and_dedup_follow_the_pairs():
    for seed in range(10):
        texts = sample(seed, n=30)
        parent = list(range(len(texts)))

        def find(x):
            while parent[x] != x:
                x = parent[x]
            return x
        for i, j, _ in simhash.near_pairs(texts):
            a, b = find(i), find(j)
            parent[max(a, b)] = min(a, b)
        want = [find(i) for i in range(len(texts))]
        assert simhash.near_clusters(texts) == want, seed
        keep = [i for i, r in enumerate(want) if r == i]
        assert simhash.dedup(texts, near=True) == keep, seed
        assert simhash.dedup(texts) == keep, seed     # the default for texts
        for i, j, _ in simhash.near_pairs(texts, exhaustive=True):
            a, b = find(i), find(j)
            parent[max(a, b)] = min(a, b)
        want = [find(i) for i in range(len(texts))]
        assert simhash.near_clusters(texts, exhaustive=True) == want, seed
        assert simhash.dedup(texts, exhaustive=True) == [i for i, r in enumerate(want) if r == i]


def test_repeated_boilerplate_is_one_cluster():
    texts = ["Unsubscribe from this list at any time."] * 5000 + ["Something else entirely."]
    rep = simhash.near_clusters(texts)
    assert rep == [0] * 5000 + [5000]
    assert len(simhash.near_pairs(texts[:50])) == 50 * 49 // 2
