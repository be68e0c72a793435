"""python_arrays.py BUILD_PYTHON SIMHASH [N] [NQ] - Index with numpy arrays
in and out against the command line, on the same index and queries.

N stored 64-bit fingerprints (uniform, seeded; default 10 million) go into
Index.build(numpy_array, threads=1) (timed, process CPU) and, as text-form
lines with the row number as id, into `simhash index build -k 3` (not
timed). NQ queries (default 300,000; half of them stored fingerprints with
0 to 3 bits flipped, half random) are answered by Index.query_arrays(numpy
array, k=3, threads=1) and by the whole `simhash index query -k 3 -j 1`
process (reading the query file, writing its answers to a file), best of 3
each, interleaved, process CPU time (user + system). The two must give the
same (query, id, distance) triples. Target (issue 18): Python >= 1.0x the
command's queries/s.
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402

import simhash  # noqa: E402

SH = sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000_000
NQ = int(sys.argv[4]) if len(sys.argv) > 4 else 300_000


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def write_tsv(path, fps, prefix):
    with open(path, "w") as f:
        step = 1 << 20
        for a in range(0, len(fps), step):
            f.write("".join("%016x\t%s%d\n" % (int(v), prefix, a + i)
                            for i, v in enumerate(fps[a:a + step].tolist())))


def main():
    rng = np.random.default_rng(18)
    fps = rng.integers(0, 2**64, size=N, dtype=np.uint64)
    qs = rng.integers(0, 2**64, size=NQ, dtype=np.uint64)
    planted = rng.integers(0, N, size=NQ // 2)
    flips = np.zeros(NQ // 2, dtype=np.uint64)
    for _ in range(3):  # up to 3 random bits (a repeated bit flips back)
        on = rng.integers(0, 2, size=NQ // 2).astype(bool)
        bit = rng.integers(0, 64, size=NQ // 2).astype(np.uint64)
        flips ^= np.where(on, np.uint64(1) << bit, np.uint64(0))
    qs[:NQ // 2] = fps[planted] ^ flips
    with tempfile.TemporaryDirectory() as tmp:
        stored, queries = os.path.join(tmp, "fps.tsv"), os.path.join(tmp, "q.tsv")
        idx, out = os.path.join(tmp, "fps.idx"), os.path.join(tmp, "out.tsv")
        write_tsv(stored, fps, "")
        write_tsv(queries, qs, "")
        subprocess.run([SH, "index", "build", "-j", "2", "-k", "3", stored, "-o", idx], check=True)
        os.unlink(stored)
        t0 = time.process_time()
        ix = simhash.Index(64, max_dist=3)
        ix.build(fps, threads=1)
        build_cpu = time.process_time() - t0
        best_py = best_cli = float("inf")
        for _ in range(3):
            c0 = child_cpu()
            with open(out, "wb") as f:
                subprocess.run([SH, "index", "query", idx, "-k", "3", "-j", "1", queries],
                               stdout=f, check=True)
            best_cli = min(best_cli, child_cpu() - c0)
            t0 = time.process_time()
            offsets, ids, dists = ix.query_arrays(qs, k=3, threads=1)
            best_py = min(best_py, time.process_time() - t0)
        # the same triples, in the same order within a query
        cli = np.loadtxt(out, dtype=np.uint64, delimiter="\t", ndmin=2)
        qidx = np.repeat(np.arange(NQ, dtype=np.uint64), np.diff(offsets.astype(np.int64)))
        same = (len(cli) == len(ids) and (cli[:, 0] == qidx).all() and (cli[:, 1] == ids).all()
                and (cli[:, 2] == dists).all())
    ratio = best_cli / best_py
    print("python Index.build(numpy, threads=1) %d stored: %.2f s cpu" % (N, build_cpu))
    print("python Index.query_arrays(numpy, k=3, threads=1): %9.0f q/s  simhash index query -j 1: "
          "%9.0f q/s (whole process)  ratio %.2fx %s (>= 1.0x)  %d matches, %s"
          % (NQ / best_py, NQ / best_cli, ratio, "ok" if ratio >= 1.0 else "MISSED", len(ids),
             "same triples" if same else "TRIPLES DIFFER"))


main()
