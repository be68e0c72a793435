"""python_bench.py BUILD_PYTHON ORIGINAL CORPUS - the Python module's part of
`make bench`, each figure next to the original package `simhash` 2.1.2 (with
numpy) measured in the same run on the same data.

  case                          ours                          baseline
  Simhash(text).value en/zh     one call per document         the original, same docs
  fingerprints(texts) en/zh     one batch, threads=1 and 2    our Simhash(text) loop
  SimhashIndex.get_near_dups    N stored, k=3 (if the index   the original's SimhashIndex,
                                is built in)                  same fingerprints and queries

The original is slow (about 2 MB/s), so it runs on the first ORIG_DOCS
documents of each corpus and we run on those same documents (and on the whole
corpus, printed too). MB is 10^6 bytes of UTF-8 text. Best of RUNS runs, each
starting with cold caches (a new thread, new contexts).
Environment: RUNS (3), ORIG_DOCS (400), INDEX_N (1000000), INDEX_Q (20000).
"""
import gc
import importlib.util
import json
import os
import random
import resource
import sys
import threading
import time


def load_original(path):
    spec = importlib.util.spec_from_file_location("orig_simhash", os.path.join(path, "simhash", "__init__.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def process_cpu(fn):
    """The CPU time of the whole process while fn() runs."""
    gc.collect()
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def best(fn, runs):
    """(wall, cpu): the best wall time of fn() over runs and the best CPU time
    of the thread that ran it. Each run is in a new thread: our contexts are
    per thread and cache 4-gram hashes from text to text, so a new thread
    starts cold, as a new process would. On a busy machine the CPU time shows
    the speed the wall time hides (batches use other threads: wall only)."""
    t_best = [float("inf"), float("inf")]

    def run():
        gc.collect()
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        t_best[0] = min(t_best[0], time.perf_counter() - t0)
        t_best[1] = min(t_best[1], time.thread_time() - c0)
    for _ in range(runs):
        th = threading.Thread(target=run)
        th.start()
        th.join()
    return t_best


def texts_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def bench_texts(simhash, orig, corpus, runs, orig_docs):
    for lang in ("en", "zh"):
        texts = texts_of(os.path.join(corpus, lang + ".jsonl"))
        sub = texts[:orig_docs]
        mb_sub = sum(len(t.encode("utf-8")) for t in sub) / 1e6
        mb_all = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        S, O = simhash.Simhash, orig.Simhash
        ours = [S(t).value for t in sub]
        theirs = [O(t).value for t in sub]
        if ours != theirs:
            print("python %s: VALUES DIFFER from the original" % lang)
        w_orig, c_orig = best(lambda: [O(t).value for t in sub], 1)
        w_sub, c_sub = best(lambda: [S(t).value for t in sub], runs)
        w_all, c_all = best(lambda: [S(t).value for t in texts], runs)
        for what, mb, w, c in (("%d docs" % len(sub), mb_sub, w_sub, c_sub),
                               ("whole corpus", mb_all, w_all, c_all)):
            r = (mb / c) / (mb_sub / c_orig)
            print("python %s Simhash(text) %s: %6.1f MB/s (cpu %6.1f), original %5.2f MB/s "
                  "(cpu %5.2f): cpu %5.1fx, wall %5.1fx%s"
                  % (lang, what, mb / w, mb / c, mb_sub / w_orig, mb_sub / c_orig, r,
                     (mb / w) / (mb_sub / w_orig), "" if r >= 20 else " MISSED 20x"))
        t_all = w_all
        for threads in (1, 2):
            # a new Config each run: new (cold) contexts for the batch workers
            t_b = best(lambda: simhash.Config(compat="python-simhash").fingerprints(
                texts, threads=threads), runs)[0]
            line = ("python %s fingerprints(texts, threads=%d): %7.1f MB/s, %.2fx the Simhash loop"
                    % (lang, threads, mb_all / t_b, t_all / t_b))
            if threads == 1:
                # the process's CPU time (the batch runs on a worker thread):
                # the fair one-thread comparison on a machine shared with others
                p_b = min(process_cpu(lambda: simhash.Config(
                    compat="python-simhash").fingerprints(texts, threads=1)) for _ in range(runs))
                p_l = min(process_cpu(lambda: [S(t).value for t in texts]) for _ in range(runs))
                line += " (wall), %.2fx (process cpu)" % (p_l / p_b)
            print(line)


def random_fps(rng, n):
    return [rng.getrandbits(64) for _ in range(n)]


def bench_index(simhash, orig, n, n_q, runs):
    if not hasattr(simhash, "SimhashIndex") or n <= 0:
        print("python index: skipped")
        return
    rng = random.Random(12)
    fps = random_fps(rng, n)
    # queries: half stored fingerprints with up to 3 bits flipped, half random
    qs = []
    for i in range(n_q):
        if i % 2:
            v = fps[rng.randrange(n)]
            for _ in range(rng.randint(0, 3)):
                v ^= 1 << rng.randrange(64)
            qs.append(v)
        else:
            qs.append(rng.getrandbits(64))
    objs = [(str(i), simhash.Simhash(v)) for i, v in enumerate(fps)]
    gc.collect()
    before = rss_mb()
    t0 = time.perf_counter()
    idx = simhash.SimhashIndex(objs, k=3)
    t_build = time.perf_counter() - t0
    gc.collect()
    mem = (rss_mb() - before) * 1048576 / n
    qsh = [simhash.Simhash(v) for v in qs]
    t_ours = best(lambda: [idx.get_near_dups(q) for q in qsh], runs)[1]
    found = sum(len(idx.get_near_dups(q)) for q in qsh)
    del objs
    # the original on the same data: its memory too (about 1 GB at 1M)
    oobjs = [(str(i), orig.Simhash(v)) for i, v in enumerate(fps)]
    gc.collect()
    before = rss_mb()
    oidx = orig.SimhashIndex(oobjs, k=3)
    gc.collect()
    omem = (rss_mb() - before) * 1048576 / n
    oq = [orig.Simhash(v) for v in qs[: max(n_q // 10, 100)]]
    t_orig = best(lambda: [oidx.get_near_dups(q) for q in oq], 1)[1] / len(oq) * len(qs)
    ofound = sum(len(oidx.get_near_dups(orig.Simhash(v))) for v in qs[:200])
    mfound = sum(len(idx.get_near_dups(simhash.Simhash(v))) for v in qs[:200])
    r = t_orig / t_ours
    print("python index %d stored, k=3: get_near_dups %9.0f q/s (cpu), original %7.0f q/s: %6.1fx%s"
          % (n, n_q / t_ours, n_q / t_orig, r, "" if r >= 100 else " MISSED 100x"))
    print("python index: build %.1f s, %.0f bytes per stored fingerprint (RSS), original %.0f;"
          " %d matches, first 200 queries %d vs original %d%s"
          % (t_build, mem, omem, found, mfound, ofound, "" if mfound == ofound else " DIFFER"))


def main():
    build_py, orig_path, corpus = sys.argv[1:4]
    sys.path.insert(0, build_py)
    import simhash
    runs = int(os.environ.get("RUNS", "3"))
    orig = load_original(orig_path)
    bench_texts(simhash, orig, corpus, runs, int(os.environ.get("ORIG_DOCS", "400")))
    bench_index(simhash, orig, int(os.environ.get("INDEX_N", "1000000")),
                int(os.environ.get("INDEX_Q", "20000")), runs)
    print("python: peak RSS %.0f MB" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))


if __name__ == "__main__":
    main()
