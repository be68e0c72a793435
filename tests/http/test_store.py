"""test_store.py - the document routes of `simhash serve` over a real store,
called from test_api.py: add, get, query, check-and-insert, if_unique,
batches (all or none), delete, stats, restart, wrong widths; every answer
checked against an independent oracle (the CLI's fingerprints and a
brute-force Hamming search), and nothing stored changes on bad input."""
import os
import random
import subprocess
import urllib.parse

from common import Server, cli_fingerprint, make_store

TEXTS = [
    "the quick brown fox jumps over the lazy dog",
    "the quick brown fox jumped over the lazy dog",
    "the quick brown fox jumps over the lazy dog!",
    "a completely different sentence about databases and storage engines",
    "\u5929\u4e0b\u5927\u52bf\uff0c\u5206\u4e45\u5fc5\u5408\uff0c\u5408\u4e45\u5fc5\u5206",
    "\u5929\u4e0b\u5927\u52e2\uff0c\u5206\u4e45\u5fc5\u5408\uff0c\u5408\u4e45\u5fc5\u5206",
    "emoji \U0001F600\U0001F601 and caf\u00e9 cr\u00e8me br\u00fbl\u00e9e",
    "",
]
IDS = ["doc/1", "doc 2", "\u6587\u6863-3", "100%", "\U0001F600", "a?b#c", "plain", "x" * 400]


def dist(a, b):
    return bin(int(a, 16) ^ int(b, 16)).count("1")


def quote(i):
    return "/v1/documents/" + urllib.parse.quote(i, safe="")


def count(s):
    st, b, _ = s.request("GET", "/v1/stats")
    return b["store"]["documents"]


def run(binary, tmp, T):
    folder = os.path.join(tmp, "store64")
    os.makedirs(folder)
    path = make_store(binary, folder)
    s = Server(binary, store=path)
    fps = {}
    for i, (id_, text) in enumerate(zip(IDS, TEXTS)):
        st, b, _ = s.request("POST", "/v1/documents",
                             {"id": id_, "text": text, "meta": {"title": "t%d" % i, "n": i}})
        fps[id_] = cli_fingerprint(binary, text.encode())
        T.check(st == 201 and b["id"] == id_ and b["fingerprint"] == fps[id_], "add", b)
    for i, id_ in enumerate(IDS):
        st, b, _ = s.request("GET", quote(id_))
        T.check(st == 200 and b["id"] == id_ and b["fingerprint"] == fps[id_]
                and b["meta"] == {"title": "t%d" % i, "n": i}, "get by percent-encoded id", b)
    st, b, _ = s.request("GET", quote("nope"))
    T.error(st, b, 404, "not_found", "get of a missing id")
    T.check(count(s) == len(IDS), "stats count")

    # Query by text and by fingerprint against a brute-force search.
    for k in (0, 3, 10, 20, 64):
        for probe in (TEXTS[0], TEXTS[4]):
            fp = cli_fingerprint(binary, probe.encode())
            want = sorted((dist(fp, f), i) for i, f in fps.items() if dist(fp, f) <= k)
            for q in ({"text": probe, "k": k, "limit": 100}, {"fingerprint": fp.upper(), "k": k, "limit": 100}):
                st, b, _ = s.request("POST", "/v1/query", q)
                got = [(m["distance"], m["id"]) for m in b.get("matches", [])]
                T.check(st == 200 and sorted(got) == want
                        and [d for d, _ in got] == sorted(d for d, _ in got),
                        "query k=%d equals brute force" % k, "%r vs %r" % (got, want))
    st, b, _ = s.request("POST", "/v1/query", {"text": TEXTS[0], "k": 64, "limit": 2})
    T.check(st == 200 and len(b["matches"]) == 2, "query limit", b)

    # Check-and-insert and if_unique.
    n = count(s)
    st, b, _ = s.request("POST", "/v1/documents", {"id": "dup", "text": TEXTS[1], "check": True, "k": 8})
    T.check(st == 201 and b["added"] and any(m["id"] == "doc 2" and m["distance"] == 0 for m in b["duplicates"])
            and all(m["id"] != "dup" for m in b["duplicates"]), "check returns the near-duplicates", b)
    st, b, _ = s.request("POST", "/v1/documents", {"id": "dup2", "text": TEXTS[1], "if_unique": True, "k": 8})
    T.check(st == 409 and b["error"]["code"] == "near_duplicate" and not b["added"]
            and len(b["duplicates"]) >= 2, "if_unique refuses a near-duplicate", b)
    st, b, _ = s.request("GET", quote("dup2"))
    T.check(st == 404, "a refused document is not stored")
    st, b, _ = s.request("POST", "/v1/documents", {"id": "uniq", "text": "zebra xylophone quartz", "if_unique": True, "k": 3})
    T.check(st == 201 and b["added"], "if_unique adds a unique text", b)
    T.check(count(s) == n + 2, "count after check and if_unique")

    # Bad input changes nothing stored.
    n = count(s)
    bad = [
        b'{"id": "z", "text": "x"', b'{"id": "z", "text": "\xff"}', b'{"id": 5, "text": "x"}',
        b'{"id": "z", "fingerprint": "0123abcd"}', b'{"id": "z", "fingerprint": "0123456789abcdef", "scheme": "v9"}',
        b'{"id": "z", "text": "x", "k": -1}', b'{"id": "z"}', b'{"documents": [{"id": "ok1", "text": "a"}, {"id": "bad", "text": 3}]}',
    ]
    for body in bad:
        for route in ("/v1/documents", "/v1/documents:batch"):
            st, b, _ = s.request("POST", route, body)
            T.check(400 <= st < 500, "bad input is a 4xx", "%s %r %r" % (route, body, b))
    st, b, _ = s.request("GET", quote("ok1"))
    T.check(st == 404, "a batch with a bad document stores none of it")
    T.check(count(s) == n, "bad input changes nothing stored", count(s))

    # Batches.
    docs = [{"id": "b%d" % i, "text": "batch text number %d" % i} for i in range(50)]
    st, b, _ = s.request("POST", "/v1/documents:batch", {"documents": docs})
    T.check(st == 200 and b["added"] == 50 and len(b["results"]) == 50, "batch of 50", b.get("added"))
    st, b, _ = s.request("GET", quote("b49"))
    T.check(st == 200 and b["fingerprint"] == cli_fingerprint(binary, b"batch text number 49"), "batch stored")
    st, b, _ = s.request("POST", "/v1/documents:batch", {"documents": [
        {"id": "c1", "text": TEXTS[0], "if_unique": True, "k": 3},
        {"id": "c2", "text": "nothing like the others at all, q", "if_unique": True, "k": 3}]})
    T.check(st == 200 and b["added"] == 1 and not b["results"][0]["added"] and b["results"][1]["added"],
            "batch with if_unique", b)

    # Replace and delete.
    st, b, _ = s.request("POST", "/v1/documents", {"id": "plain", "text": TEXTS[3]})
    st, b, _ = s.request("GET", quote("plain"))
    T.check(st == 200 and b["fingerprint"] == cli_fingerprint(binary, TEXTS[3].encode())
            and b["meta"] is None, "put replaces", b)
    n = count(s)
    st, b, _ = s.request("DELETE", quote("\U0001F600"))
    T.check(st == 200 and b["deleted"], "delete", b)
    st, b, _ = s.request("DELETE", quote("\U0001F600"))
    T.error(st, b, 404, "not_found", "delete of a missing id")
    st, b, _ = s.request("GET", quote("\U0001F600"))
    T.check(st == 404 and count(s) == n - 1, "deleted is gone")
    st, b, _ = s.request("POST", "/v1/query", {"text": TEXTS[6], "k": 0})
    T.check(st == 200 and all(m["id"] != "\U0001F600" for m in b["matches"]), "deleted is not found by query", b)

    # A second server on the same store is refused, and the first keeps going.
    try:
        Server(binary, store=path)
        T.check(False, "a second server on the same store is refused")
    except RuntimeError as e:
        T.check("lock" in str(e), "a second server on the same store is refused", str(e))
    T.check(count(s) >= 1, "the first server still serves")

    # Restart: everything acknowledged is still there.
    n = count(s)
    T.check(s.stop() == 0, "SIGTERM with a store exits 0")
    s = Server(binary, store=path)
    T.check(count(s) == n, "documents survive a restart")
    st, b, _ = s.request("GET", "/v1/stats")
    T.check(st == 200 and b["store"]["open_index"] == "checkpoint" and b["store"]["open_replayed"] > 0,
            "the restart maps the checkpoint and replays the changes since", b)
    st, b, _ = s.request("GET", quote("doc/1"))
    T.check(st == 200 and b["fingerprint"] == fps["doc/1"], "a document after restart", b)
    st, text, _ = s.request("GET", "/metrics")
    T.check(b"simhash_store_documents %d" % n in text, "metrics count documents")
    T.check(b"simhash_store_commits_total 0" in text and b"simhash_store_committed_writes_total" in text,
            "metrics count commits (none yet since this open)", text[-300:])
    st, _, _ = s.request("POST", "/v1/documents", {"id": "hist/1", "text": "one more"})
    st, text, _ = s.request("GET", "/metrics")
    T.check(b'simhash_store_commit_batch_size_bucket{le="1"} 1\n' in text and
            b'simhash_store_commit_batch_size_bucket{le="4096"} 1\n' in text and
            b'simhash_store_commit_batch_size_bucket{le="+Inf"} 1\n' in text and
            b"simhash_store_commit_batch_size_count 1\n" in text and
            b"simhash_store_commit_batch_size_sum 1\n" in text,
            "metrics: a histogram of commit batch sizes", text[-900:])
    s.stop()
    if subprocess.run([binary, "store", "verify", path], capture_output=True).returncode != 0:
        T.check(False, "store verify is clean after the tests")

    # SIGTERM while clients write: every acknowledged write is kept, exit 0.
    s = Server(binary, store=path)
    acked = []

    def writer(w):
        try:
            c = s.conn()
            for i in range(10000):
                st, b, _ = s.request("POST", "/v1/documents", {"id": "term-%d-%d" % (w, i), "text": "t %d %d" % (w, i)}, conn=c)
                if st != 201:
                    break
                acked.append(b["id"])
        except Exception:
            pass
    import threading
    import time
    ths = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in ths:
        t.start()
    time.sleep(0.3)
    T.check(s.stop() == 0, "SIGTERM under load exits 0")
    for t in ths:
        t.join()
    s = Server(binary, store=path)
    lost = [i for i in acked if s.request("GET", quote(i))[0] != 200]
    T.check(acked and not lost, "writes acknowledged before SIGTERM are kept", "%d of %d lost" % (len(lost), len(acked)))
    s.stop()
    r = subprocess.run([binary, "store", "verify", path], capture_output=True)
    T.check(r.returncode == 0, "store verify after SIGTERM under load", r.stdout + r.stderr)

    # A 128-bit store refuses 64-bit fingerprints.
    folder = os.path.join(tmp, "store128")
    os.makedirs(folder)
    path = make_store(binary, folder, "--bits", "128")
    s = Server(binary, store=path)
    st, b, _ = s.request("POST", "/v1/query", {"fingerprint": "0123456789abcdef"})
    T.error(st, b, 422, "wrong_width", "a 64-bit fingerprint for a 128-bit store")
    st, b, _ = s.request("POST", "/v1/documents", {"id": "w", "text": "wide"})
    T.check(st == 201 and len(b["fingerprint"]) == 32, "a 128-bit store fingerprints with 128 bits", b)
    s.stop()


def run_tables(binary, tmp, T):
    """A store created with stop words and an IDF table: the server
    fingerprints with the store's tables (the files are gone by then), as
    `simhash fingerprint` does with the same options."""
    folder = os.path.join(tmp, "store-tables")
    os.makedirs(folder)
    corpus = os.path.join(folder, "c.txt")
    sw, idf = os.path.join(folder, "sw.txt"), os.path.join(folder, "idf.tsv")
    with open(corpus, "w") as f:
        f.write("".join(t + "\n" for t in TEXTS if t))
    with open(sw, "w") as f:
        f.write("the\na\nand\n")
    subprocess.run([binary, "idf", "build", "--features", "word", "-o", idf, corpus], check=True)
    opts = ["--features", "word", "--stopwords", sw, "--weight", "tfidf", "--idf", idf]
    want = {t: cli_fingerprint(binary, t.encode(), *opts) for t in TEXTS}
    path = make_store(binary, folder, *opts)
    os.unlink(sw)
    os.unlink(idf)
    s = Server(binary, store=path)
    for t in TEXTS:
        st, b, _ = s.request("POST", "/v1/fingerprint", {"text": t})
        T.check(st == 200 and b["fingerprint"] == want[t], "fingerprint with the store's tables",
                "%r %r want %s" % (t[:20], b, want[t]))
    st, b, _ = s.request("POST", "/v1/documents", {"id": "t0", "text": TEXTS[0]})
    T.check(st == 201 and b["fingerprint"] == want[TEXTS[0]], "add with the store's tables", b)
    st, b, _ = s.request("POST", "/v1/query", {"text": TEXTS[0], "k": 0})
    T.check(st == 200 and [m["id"] for m in b["matches"]] == ["t0"], "query with the store's tables", b)
    s.stop()
    r = subprocess.run([binary, "store", "verify", path], capture_output=True)
    T.check(r.returncode == 0, "store verify of a store with tables", r.stdout + r.stderr)
