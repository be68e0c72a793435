"""The native API: Config against the `simhash` command of the same build
(scheme strings and fingerprints), batches against single calls, errors."""
import pickle
import random
import subprocess
import threading

import pytest

import simhash
from simhash import Config

TEXTS = [
    "",
    "Hello, World!",
    "The quick brown fox jumps over the lazy dog.",
    "你好，世界。我们回家吃饭吧",
    "Ünïcödé ΣΊΣΥΦΟΣ straße \U0001f600 \U00020000 émoji 👍🏽",
    "<p>Some <b>HTML</b> &amp; entities</p>",
    "word " * 300,
]

OPTION_SETS = [
    {},
    {"bits": 128},
    {"bits": 32, "hash": "fnv1a"},
    {"features": "word", "tokenizer": "icu"},
    {"features": "shingle", "ngram": 2, "weight": "logtf"},
    {"casefold": False, "t2s": False, "html": True, "space": "collapse", "punct": "keep"},
    {"ngram": 5, "ngram_cjk": 1, "hash": "md5", "weight": "binary", "tf_cap": 3, "max_repeat": 2},
    {"compat": "python-simhash"},
    {"compat": "python-simhash", "bits": 128},
    {"features": "auto", "bits": 128},
    {"weight": "logtf"},
]


def _cli_args(opts):
    args = []
    for k, v in opts.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            args.append(flag if v else "--no-" + k.replace("_", "-"))
        else:
            args += [flag, str(v)]
    return args


def test_scheme_and_fingerprints_equal_the_command(simhash_build):
    if simhash_build is None:
        pytest.skip("no simhash command beside the module")
    for opts in OPTION_SETS:
        cfg = Config(**opts)
        args = _cli_args(opts)
        out = subprocess.run([simhash_build, "scheme"] + args, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == cfg.scheme, opts
        data = "".join(t.replace("\n", " ") + "\n" for t in TEXTS)
        out = subprocess.run([simhash_build, "fingerprint", "--lines"] + args, input=data,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        want = [int(line.split("\t")[0], 16) for line in out.stdout.splitlines()]
        got = [cfg.fingerprint(t.replace("\n", " ")) for t in TEXTS]
        assert got == want, opts


def test_compat_config_equals_simhash():
    for t in TEXTS:
        assert Config(compat="python-simhash").fingerprint(t) == simhash.Simhash(t).value
        assert simhash.fingerprint(t, f=128) == simhash.Simhash(t, f=128).value
        assert simhash.fingerprint(t, f=24) == simhash.Simhash(t, f=24).value


def test_batch_equals_single_calls_for_every_thread_count():
    rng = random.Random(7)
    texts = ["".join(rng.choice("abc xyz 你好世界🙂\U00020000") for _ in range(rng.randint(0, 300)))
             for _ in range(500)]
    for cfg in (Config(), Config(bits=128, features="word")):
        single = [cfg.fingerprint(t) for t in texts]
        for threads in (0, 1, 2, 3, 8):
            assert cfg.fingerprints(texts, threads=threads) == single
    single = [simhash.Simhash(t).value for t in texts]
    assert simhash.fingerprints(iter(texts), threads=2) == single
    assert simhash.fingerprints(texts, f=128) == [simhash.Simhash(t, f=128).value for t in texts]
    assert simhash.fingerprints([]) == []
    assert simhash.fingerprints([b"abc", "abc"]) == [simhash.Simhash("abc").value] * 2


def test_python_threads_each_get_their_own_context():
    cfg = Config(bits=128)
    texts = ["text number %d, with some words" % i for i in range(300)]
    want = [cfg.fingerprint(t) for t in texts]
    got = {}

    def run(k):
        got[k] = [cfg.fingerprint(t) for t in texts]
    ts = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(v == want for v in got.values())


def test_features_and_text_similarity():
    cfg = Config(features="word")
    assert cfg.features("a b a c") == [("a", 2), ("b", 1), ("c", 1)]
    cos, jac = cfg.text_similarity("a b c", "a b d")
    assert jac == pytest.approx(2 / 4)
    assert cos == pytest.approx(2 / 3)
    assert simhash.text_similarity("same text", "same text") == (pytest.approx(1.0), pytest.approx(1.0))
    fp = cfg.fingerprint_features([("a", 2), ("b", 1), ("c", 1)])
    assert fp == cfg.fingerprint("a b a c")


def test_idf_and_stopwords_from_python_objects(tmp_path):
    idf = {"rare": 9.0, "common": 0.1}
    cfg = Config(features="word", idf=idf)
    assert "tfidf" in cfg.scheme
    a = cfg.fingerprint("rare common common common")
    p = tmp_path / "idf.tsv"
    p.write_text("rare\t9.0\ncommon\t0.1\n")
    assert Config(features="word", idf=str(p)).fingerprint("rare common common common") == a
    sw = Config(features="word", stopwords=["the", "a"])
    assert sw.fingerprint("the cat a dog") == sw.fingerprint("cat dog")
    assert Config(features="word").fingerprint("the cat a dog") != sw.fingerprint("cat dog")


def test_config_pickles_and_compares_by_scheme():
    cfg = Config(bits=128, ngram=4)
    back = pickle.loads(pickle.dumps(cfg))
    assert back == cfg and back.scheme == cfg.scheme
    assert Config() != cfg
    assert "ngram=4" in repr(cfg)


def test_errors_carry_the_library_message():
    with pytest.raises(ValueError, match="bits must be 32, 64 or 128"):
        Config(bits=48)
    with pytest.raises(ValueError, match="hash must be one of"):
        Config(hash="sha1")
    with pytest.raises(TypeError, match="unexpected keyword"):
        Config(colour="blue")
    with pytest.raises(simhash.InvalidArgument, match="compat 'python-simhash' takes bits 64 or 128"):
        Config(compat="python-simhash", bits=32)
    with pytest.raises(simhash.InvalidArgument, match="needs an idf table"):
        Config(weight="tfidf")
    with pytest.raises(simhash.FileError) as e:
        Config(idf="/nonexistent/idf.txt")
    assert e.value.code == 3 and "nonexistent" in str(e.value)
    with pytest.raises(simhash.Utf8Error, match="invalid UTF-8 at byte 2"):
        Config(utf8="reject").fingerprint(b"ab\xffcd")
    with pytest.raises(simhash.Utf8Error, match="text 1: invalid UTF-8 at byte 1"):
        Config(utf8="reject").fingerprints([b"ok", b"a\xc3"])
    with pytest.raises(ValueError, match="lone surrogate"):
        Config().fingerprint("a\ud800b")
    with pytest.raises(TypeError, match="must be str or bytes"):
        Config().fingerprint(12)
    with pytest.raises(TypeError, match="must be str or bytes"):
        simhash.fingerprints(["a", None])
    with pytest.raises(simhash.InvalidArgument, match="compat"):
        Config(compat="python-simhash").text_similarity("a", "b")
    with pytest.raises(simhash.InvalidArgument):
        Config().fingerprint_features([("a", float("nan"))])
    with pytest.raises(ValueError, match="multiple of 8"):
        simhash.fingerprint("a", f=12)
    # replaced, not rejected, by default: as Python's decode('utf-8', 'replace')
    assert Config().fingerprint(b"ab\xffcd") == Config().fingerprint("ab\ufffdcd")


def test_type_stub_covers_every_public_name():
    import ast
    import os
    stub = os.path.join(os.path.dirname(simhash.__file__), "__init__.pyi")
    tree = ast.parse(open(stub, encoding="utf-8").read())
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert set(simhash.__all__) <= names, set(simhash.__all__) - names
    assert os.path.exists(os.path.join(os.path.dirname(simhash.__file__), "py.typed"))
