"""The drop-in Simhash against known answers of simhash 2.1.2 and against the
original package itself, run from its source in the same test, on random
inputs (seeded; the seed is printed on failure)."""
import hashlib
import json
import math
import os
import pickle
import random
import re

import pytest

import simhash
from simhash import Simhash
from conftest import VECTORS


def _rows(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#") and line.strip():
                yield line.rstrip("\n").split("\t")


def _features(js):
    return [x if isinstance(x, str) else tuple(x) for x in json.loads(js)]


def test_text_vectors_of_the_real_package():
    rows = list(_rows("python_simhash_vectors.tsv"))
    assert len(rows) == 80
    for text, dec, hexv in rows:
        sh = Simhash(json.loads(text))
        assert sh.value == int(dec), text
        assert "%016x" % sh.value == hexv


def test_feature_vectors_of_the_real_package():
    rows = list(_rows("python_simhash_feature_vectors.tsv"))
    assert len(rows) == 42
    for js, dec, _ in rows:
        assert Simhash(_features(js)).value == int(dec), js


def test_known_answers():
    assert Simhash(["aaa", "bbb"]).value == 57087923692560392
    assert Simhash([str(i) for i in range(500)]).value == 7984652473404407437
    assert Simhash(0).value == 0
    assert Simhash(4390059585430954713).value == 4390059585430954713
    assert Simhash(9223372036854775808).value == 9223372036854775808
    # no word character: the value of the empty feature, md5("")
    assert Simhash("").value == 0xe9800998ecf8427e
    assert Simhash("!? ...", f=128).value == 0xd41d8cd98f00b204e9800998ecf8427e
    assert Simhash([]).value == 0


def test_behaviour_of_the_original_tests():
    sh = Simhash('How are you? I AM fine. Thanks. And you?')
    sh2 = Simhash('How old are you ? :-) i am fine. Thanks. And you?')
    assert sh.distance(sh2) > 0
    assert sh2.distance(Simhash(sh2)) == 0
    assert Simhash('1').distance(Simhash('2')) != 0
    assert Simhash('你好　世界！　　呼噜。').distance(Simhash('你好，世界　呼噜')) == 0
    sh4 = Simhash('How are you? I Am fine. ablar ablar xyz blar blar blar blar blar blar blar Thanks.')
    sh5 = Simhash('How are you i am fine.ablar ablar xyz blar blar blar blar blar blar blar than')
    sh6 = Simhash('How are you i am fine.ablar ablar xyz blar blar blar blar blar blar blar thank')
    assert sh4.distance(sh6) < 3 and sh5.distance(sh6) < 3
    shs = [Simhash(s).value for s in ('aa', 'aaa', 'aaaa', 'aaaab', 'aaaaabb', 'aaaaabbb')]
    assert len(set(shs)) == len(shs)
    assert Simhash('My name is John') == Simhash('My name is John')
    assert Simhash('My name is John') != Simhash('My name actually is Jane')


def _tfidf(docs):
    """scikit-learn's TfidfVectorizer() defaults, written out: tokens of two
    or more word characters, lowercased; smooth idf; rows of unit length.
    Returns per document the (term, weight) pairs in column order."""
    toks = [re.findall(r"(?u)\b\w\w+\b", d.lower()) for d in docs]
    vocab = sorted({t for ts in toks for t in ts})
    col = {t: i for i, t in enumerate(vocab)}
    n = len(docs)
    df = {t: sum(1 for ts in toks if t in ts) for t in vocab}
    out = []
    for ts in toks:
        tf = {}
        for t in ts:
            tf[t] = tf.get(t, 0) + 1
        w = {t: c * (math.log((1 + n) / (1 + df[t])) + 1) for t, c in tf.items()}
        norm = math.sqrt(sum(v * v for v in w.values()))
        out.append(sorted(((t, v / norm) for t, v in w.items()), key=lambda p: col[p[0]]))
    return out


SPARSE_DATA = [
    'How are you? I Am fine. blar blar blar blar blar Thanks.',
    'How are you i am fine. blar blar blar blar blar than',
    'This is simhash test.',
    'How are you i am fine. blar blar blar blar blar thank1',
]


def test_sparse_float_features_as_zip_and_dict():
    rows = _tfidf(SPARSE_DATA)
    shs = [Simhash(zip([t for t, _ in r], [w for _, w in r])) for r in rows]
    assert shs[0].distance(shs[1]) != 0
    assert shs[2].distance(shs[3]) != 0
    assert shs[0].distance(shs[1]) < shs[2].distance(shs[3])
    assert Simhash(dict(rows[0])).value == 17583409636488780916
    assert Simhash(dict(rows[0])).value != Simhash(SPARSE_DATA[0]).value


def test_sparse_features_with_sklearn():
    tfv = pytest.importorskip("sklearn.feature_extraction.text")
    vec = tfv.TfidfVectorizer()
    D = vec.fit_transform(SPARSE_DATA)
    voc = {i: w for w, i in vec.vocabulary_.items()}
    D0 = D.getrow(0)
    assert Simhash(dict(zip([voc[j] for j in D0.indices], D0.data))).value == 17583409636488780916


def test_attributes_and_class_constants():
    sh = Simhash("abc", f=128)
    assert (sh.f, sh.f_bytes, sh.hashfunc_returns_int) == (128, 16, False)
    assert Simhash.batch_size == 200 and Simhash.large_weight_cutoff == 50
    assert sh.log.name == "simhash"
    assert isinstance(sh.value, int) and sh.value >= 0


def test_f_not_a_multiple_of_8_is_a_value_error():
    for f in (1, 7, 63, 65):
        with pytest.raises(ValueError, match="multiple of 8"):
            Simhash("abc", f=f)


def test_bad_input_raises():
    with pytest.raises(TypeError, match="Bad parameter"):
        Simhash(1.5)
    with pytest.raises(TypeError, match="Bad parameter"):
        Simhash(None)
    with pytest.raises(UnicodeEncodeError):
        Simhash(["\ud800"])
    with pytest.raises(UnicodeEncodeError):
        Simhash([("a\udfffb", 2)])

    def boom(b):
        raise RuntimeError("no hash today")
    with pytest.raises(RuntimeError, match="no hash today"):
        Simhash("abc", hashfunc=boom)
    with pytest.raises(TypeError, match="hashfunc must return bytes"):
        Simhash("abc", hashfunc=lambda b: "str")
    with pytest.raises(TypeError, match="hashfunc must return bytes"):
        Simhash("abc", hashfunc=lambda b: None)

    calls = []

    def late(b):
        calls.append(b)
        if len(calls) > 1:
            return "oops"
        return hashlib.md5(b).digest()
    with pytest.raises(TypeError):
        Simhash("abcdef", hashfunc=late)
    with pytest.raises((TypeError, ValueError)):
        Simhash([b"ab"])


def test_surrogates_in_text_are_not_word_characters():
    assert Simhash("ab\ud800cd").value == Simhash("abcd").value
    assert Simhash("\udc00\ud83d\ude00x", f=128).value == Simhash("x", f=128).value


def test_every_multiple_of_8_masks_the_wide_value():
    t = "The quick brown fox jumps over the lazy dog, 敏捷的棕色狐狸"
    v128 = Simhash(t, f=128).value
    for f in range(8, 129, 8):
        assert Simhash(t, f=f).value == v128 & ((1 << f) - 1), f


def test_pickle_round_trip():
    for sh in (Simhash("hello world"), Simhash("hello", f=128), Simhash(12345, f=32)):
        back = pickle.loads(pickle.dumps(sh))
        assert type(back) is Simhash
        assert (back.value, back.f) == (sh.value, sh.f)
        assert back.distance(sh) == 0
    sh = Simhash("abc", reg=r"\w")
    back = pickle.loads(pickle.dumps(sh))
    assert back.reg == r"\w" and back.value == sh.value


def test_distance_needs_the_same_width():
    with pytest.raises(AssertionError):
        Simhash("a").distance(Simhash("a", f=128))
    assert Simhash(0b1011, f=8).distance(Simhash(0, f=8)) == 3
    assert Simhash(1 << 70, f=64).distance(Simhash(0)) == 0


# ---------------------------------------------------------------- against the original

POOL = (
    "abcdefghijklmnopqrstuvwxyz" "ABCDEFGHIJKLMNOPQRSTUVWXYZ" "0123456789_" "      \t\n"
    ".,;:!?'\"-()[]" "àéîõüßÆøÅÇ" "ΣσςΑΒΓδεζ" "İıI" "ДЖЯжя" "e\u0301\u0308\u200d\u00ad"
    "你好世界中文字测试回家吃饭" "ひらがなカタカナ" "한국어" "²½Ⅷ①" "\U00020000\U0002a6d6\U00031350"
    "\U0001f600\U0001f44d\U0001f3fd" "\ud800\udfff" "\ufb01\u2126\u212a" "\x00\x7f\u3000"
)


def _random_text(rng):
    n = rng.choice([0, 1, 2, 3, 4, 5, 8, 20, 60, 200])
    if rng.random() < 0.3:  # repetitive text: counts above the cutoff
        unit = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 6)))
        return unit * rng.randint(1, 80)
    return "".join(rng.choice(POOL) for _ in range(n))


def _same(orig_sh, make):
    """make() gives what the original gives: the value, or the same exception type."""
    try:
        want = orig_sh()
    except Exception as e:  # noqa: BLE001 - the original's exception is the expectation
        with pytest.raises(type(e)):
            make()
        return
    assert make() == want


def test_random_texts_against_the_original(orig):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for i in range(300):
        t = _random_text(rng)
        f = rng.choice([64, 64, 128, 8, 32, 96, 136, 256])
        try:
            _same(lambda: orig.Simhash(t, f=f).value, lambda: Simhash(t, f=f).value)
        except AssertionError:
            raise AssertionError("seed %d, case %d: f=%d text %r" % (seed, i, f, t))


def _random_weight(rng):
    k = rng.random()
    if k < 0.35:
        return rng.randint(-3, 120)
    if k < 0.7:
        return rng.choice([rng.uniform(-5, 80), rng.random(), rng.uniform(0, 1e6)])
    if k < 0.8:
        return float(rng.randint(-3, 60))  # whole floats: numpy's float rows
    if k < 0.85:
        return rng.choice([True, False])
    import numpy as np
    return rng.choice([np.float64(rng.uniform(0, 60)), np.int64(rng.randint(-2, 90)),
                       np.float32(rng.uniform(0, 9)), np.float64(3.0)])


def _random_features(rng):
    n = rng.choice([0, 1, 2, 5, 50, 199, 200, 201, 450, 700])
    mode = rng.random()
    feats = []
    for _ in range(n):
        name = "".join(rng.choice(POOL[:120]) for _ in range(rng.randint(0, 5)))
        if mode < 0.25:
            feats.append(name)
        elif mode < 0.85:
            feats.append((name, _random_weight(rng)))
        else:
            feats.append(name if rng.random() < 0.5 else (name, _random_weight(rng)))
    return feats


def test_random_features_against_the_original(orig):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for i in range(150):
        feats = _random_features(rng)
        f = rng.choice([64, 64, 128, 16, 72])
        as_dict = rng.random() < 0.2
        arg = (lambda: dict((x, 1) if isinstance(x, str) else x for x in feats)) if as_dict \
            else (lambda: iter(feats)) if rng.random() < 0.3 else (lambda: list(feats))
        try:
            _same(lambda: orig.Simhash(arg(), f=f).value, lambda: Simhash(arg(), f=f).value)
        except AssertionError:
            raise AssertionError("seed %d, case %d: f=%d features %r" % (seed, i, f, feats))


def test_hashfunc_and_reg_against_the_original(orig):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    funcs = [
        lambda b: hashlib.sha1(b).digest(),
        lambda b: int.from_bytes(hashlib.sha256(b).digest(), "big"),
        lambda b: hashlib.md5(b).digest()[:4],  # shorter than f/8: rows straddle digests
        lambda b: len(b) * 2654435761,
    ]
    for i in range(60):
        t = _random_text(rng)
        hf = rng.choice(funcs)
        f = rng.choice([32, 64, 128])
        reg = rng.choice([r"[\w\u4e00-\u9fcc]+", r"\w+", r"[a-z]+", re.compile(r"\S+")])
        try:
            _same(lambda: orig.Simhash(t, f=f, hashfunc=hf, reg=reg).value,
                  lambda: Simhash(t, f=f, hashfunc=hf, reg=reg).value)
            feats = _random_features(rng)
            _same(lambda: orig.Simhash(list(feats), f=f, hashfunc=hf).value,
                  lambda: Simhash(list(feats), f=f, hashfunc=hf).value)
        except AssertionError:
            raise AssertionError("seed %d, case %d" % (seed, i))


def test_changed_class_constants_against_the_original(orig):
    feats = [("w%d" % i, (i % 7) + 0.5 if i % 3 else i % 60) for i in range(900)]

    class Mine(Simhash):
        batch_size = 7
        large_weight_cutoff = 3

    class Theirs(orig.Simhash):
        batch_size = 7
        large_weight_cutoff = 3
    assert Mine(feats).value == Theirs(feats).value
    assert Mine("some text " * 50).value == Theirs("some text " * 50).value
