"""check_dask.py BUILD [--fault] - `make dask-check`: simhash-dask dedup against
`simhash dedup` and `simhash pairs` on the same concatenated input.

Most jobs run on a cluster started here by hand (dask-scheduler and two
dask-worker processes on 127.0.0.1, stopped at the end, also on failure);
some on `--workers 2` (a LocalCluster of two processes), and one case must
give the same result both ways. Sets: uniform, biased (bits 1 with p =
0.72), clustered and many identical fingerprints, 32, 64 and 128 bits,
k = 0, 3, 6; texts as JSON Lines (split over plain and .gz files) and lines,
pairs / clusters / keep / drop, with and without --verify jaccard:0.8; bad
records, --keep-going, a non-empty output folder. With --fault (make
check-all): one worker process is killed while the pairs are shuffled and
the job must still give the same output.

Prints one line per case and `dask: N passed, N failed`; the seed is printed
so that a failure can be replayed (SEED=... in the environment).
"""
import gzip
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
FAULT = "--fault" in sys.argv
PY = "/usr/bin/python3"
SIMHASH = os.path.join(BUILD, "simhash")
ENV = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
SEED = int(os.environ.get("SEED", random.randrange(1 << 30)))
passed = failed = 0


def report(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   %s" % name)
    else:
        failed += 1
        print("FAIL %s %s (seed %d)" % (name, detail, SEED))
    sys.stdout.flush()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def job(args, out, sched=None, workers=2):
    cmd = [PY, "-m", "simhash.dask", "dedup", "-q", "-o", out] + args
    cmd += ["--scheduler", sched] if sched else ["--workers", str(workers)]
    return subprocess.run(cmd, env=ENV, capture_output=True, timeout=600)


def parts(out):
    lines = []
    for name in sorted(os.listdir(out)):
        if name.startswith("part-"):
            with open(os.path.join(out, name), "rb") as f:
                lines.extend(f.read().splitlines(keepends=True))
    return lines


def norm_pairs(lines):
    out = []
    for line in lines:
        f = line.rstrip(b"\n").split(b"\t")
        a, b = sorted(f[:2])
        out.append(b"\t".join([a, b] + f[2:]))
    return sorted(out)


def cli(args, stdin=None):
    r = subprocess.run([SIMHASH] + args, input=stdin, capture_output=True, timeout=600)
    if r.returncode:
        raise RuntimeError("simhash %s: %s" % (" ".join(args), r.stderr.decode()))
    return r.stdout.splitlines(keepends=True)


# ---------------------------------------------------------------- data


def rand_fp(rng, bits, p):
    if p == 0.5:
        return rng.getrandbits(bits)
    v = 0
    for i in range(bits):
        if rng.random() < p:
            v |= 1 << i
    return v


def flip(rng, v, bits, n):
    for i in rng.sample(range(bits), n):
        v ^= 1 << i
    return v


def fp_set(rng, shape, bits, n):
    fps = []
    if shape == "uniform" or shape == "biased":
        p = 0.72 if shape == "biased" else 0.5
        while len(fps) < n:
            v = rand_fp(rng, bits, p)
            fps.append(v)
            for _ in range(rng.randrange(3)):
                fps.append(flip(rng, v, bits, rng.randrange(8)))
    elif shape == "clustered":
        centres = [rng.getrandbits(bits) for _ in range(40)]
        while len(fps) < n:
            fps.append(flip(rng, rng.choice(centres), bits, rng.randrange(10)))
    elif shape == "identical":
        same = rng.getrandbits(bits)
        while len(fps) < n:
            r = rng.random()
            fps.append(same if r < 0.4 else flip(rng, same, bits, rng.randrange(1, 5)) if r < 0.6
                       else rng.getrandbits(bits))
    return fps[:n]


def write_fp_shards(d, fps, bits, n_shards, gz_last=True):
    lines = ["%0*x\tf%d\n" % (bits // 4, v, i) for i, v in enumerate(fps)]
    paths, per = [], (len(lines) + n_shards - 1) // n_shards
    for s in range(n_shards):
        chunk = "".join(lines[s * per:(s + 1) * per]).encode()
        path = os.path.join(d, "fp-%02d.tsv" % s)
        if gz_last and s == n_shards - 1:
            path += ".gz"
            with gzip.open(path, "wb") as f:
                f.write(chunk)
        else:
            with open(path, "wb") as f:
                f.write(chunk)
        paths.append(path)
    return paths, "".join(lines).encode()


WORDS = ("market river council bicycle lanes debate evening tuesday city rain storm "
         "school teacher student exam paper garden flower spring summer autumn winter "
         "train station ticket price rises falls bank loan rate policy energy solar wind "
         "coast harbour ship cargo port minister election vote party leader speech "
         "今天 天气 很好 我们 一起 公园 散步 新闻 报道 市场 价格").split()


def texts(rng, n):
    out = []
    while len(out) < n:
        base = [rng.choice(WORDS) for _ in range(rng.randrange(8, 60))]
        out.append(" ".join(base))
        for _ in range(rng.randrange(3)):
            t = list(base)
            for _ in range(rng.randrange(1, 4)):
                t[rng.randrange(len(t))] = rng.choice(WORDS)
            out.append(" ".join(t))
    return out[:n]


def write_jsonl_shards(d, docs, n_shards, name="doc"):
    recs = []
    for i, t in enumerate(docs):
        if i % 7 == 3:  # a numeric id, and a blank line now and then
            recs.append(json.dumps({"id": i, "text": t}, ensure_ascii=i % 2 == 0))
        else:
            recs.append(json.dumps({"text": t, "id": "%s-%d" % (name, i)}, ensure_ascii=False))
        if i % 50 == 10:
            recs.append("")
    per = (len(recs) + n_shards - 1) // n_shards
    paths = []
    for s in range(n_shards):
        data = "".join(r + "\n" for r in recs[s * per:(s + 1) * per]).encode()
        path = os.path.join(d, "%s-%02d.jsonl" % (name, s))
        if s % 2 == 1:
            path += ".gz"
            with gzip.open(path, "wb") as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
        paths.append(path)
    whole = os.path.join(d, "%s-all.jsonl" % name)
    with open(whole, "wb") as f:
        f.write("".join(r + "\n" for r in recs).encode())
    return paths, whole


# ---------------------------------------------------------------- cases


def case_fingerprints(tmp, sched, name, shape, bits, k, n, extra=(), workers=None, data=None):
    rng = random.Random("%d-%s" % (SEED, data or name))
    fps = fp_set(rng, shape, bits, n)
    d = tempfile.mkdtemp(dir=tmp)
    paths, whole = write_fp_shards(d, fps, bits, 3)
    out = os.path.join(d, "out")
    r = job(["--fingerprints", "-k", str(k), "--blocksize", "20000"] + list(extra) + paths, out,
            None if workers else sched)
    want = norm_pairs(cli(["pairs", "-q", "-k", str(k)], stdin=whole))
    if r.returncode:
        report(name, False, "exit %d: %s" % (r.returncode, r.stderr.decode()[-500:]))
        return None
    got = norm_pairs(parts(out))
    ok = got == want and os.path.exists(os.path.join(out, "_SUCCESS"))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    ok = ok and summary["pairs"] == len(want) and summary["documents"] == n
    report(name, ok, "%d pairs, want %d" % (len(got), len(want)))
    return got


def case_texts(tmp, sched, name, args, docs_args, paths, whole, workers=None, compare_pairs=True):
    d = tempfile.mkdtemp(dir=tmp)
    out = os.path.join(d, "out")
    r = job(args + paths, out, None if workers else sched)
    if r.returncode:
        report(name, False, "exit %d: %s" % (r.returncode, r.stderr.decode()[-800:]))
        return None
    own = ("--blocksize", "--max-group")  # the job's own options
    cargs = [a for i, a in enumerate(args) if a not in own and (not i or args[i - 1] not in own)]
    want = cli(["dedup", "-q"] + cargs + docs_args(whole))
    got = parts(out)
    if "pairs" in args or "--output" not in args:
        got, want = norm_pairs(got), norm_pairs(want)
    else:
        got, want = sorted(got), sorted(want)
    ok = got == want and os.path.exists(os.path.join(out, "_SUCCESS"))
    report(name, ok, "%d lines, want %d" % (len(got), len(want)))
    return got


def start_cluster(tmp):
    port = free_port()
    addr = "tcp://127.0.0.1:%d" % port
    logs = open(os.path.join(tmp, "cluster.log"), "wb")
    procs = [subprocess.Popen(["dask-scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--dashboard-address", ":0", "--no-show"], env=ENV, stdout=logs,
                              stderr=logs)]
    time.sleep(2)
    for _ in range(2):
        procs.append(subprocess.Popen(["dask-worker", addr, "--nworkers", "1", "--nthreads", "1",
                                       "--host", "127.0.0.1", "--dashboard-address", ":0",
                                       "--local-directory", tmp], env=ENV, stdout=logs,
                                      stderr=logs))
    sys.path.insert(0, os.path.join(BUILD, "python"))
    from distributed import Client
    with Client(addr, timeout=60) as c:
        c.wait_for_workers(2, timeout=60)
    return addr, procs


def stop_cluster(procs):
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    for p in reversed(procs):
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def fault_case(tmp, sched):
    """Kills one worker process while the pairs are shuffled (its nanny
    starts another); the job must finish with the same pairs."""
    from distributed import Client
    rng = random.Random("%d-fault" % SEED)
    fps = fp_set(rng, "biased", 64, 60000)
    d = tempfile.mkdtemp(dir=tmp)
    paths, whole = write_fp_shards(d, fps, 64, 4)
    out = os.path.join(d, "out")
    cmd = [PY, "-m", "simhash.dask", "dedup", "-q", "-o", out, "--scheduler", sched,
           "--fingerprints", "-k", "4", "--blocksize", "30000"] + paths
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed = None
    with Client(sched, timeout=60) as c:
        deadline = time.time() + 300
        while proc.poll() is None and time.time() < deadline and not killed:
            names = c.run_on_scheduler(lambda dask_scheduler: [
                str(k) for k, ts in dask_scheduler.tasks.items()
                if ts.state in ("processing", "memory")])
            if any(n.startswith(("compare", "route")) for n in names):
                pids = c.run(os.getpid)
                addr, pid = sorted(pids.items())[0]
                os.kill(pid, signal.SIGKILL)
                killed = addr
            time.sleep(0.05)
        o, e = proc.communicate(timeout=600)
    want = norm_pairs(cli(["pairs", "-q", "-k", "4"], stdin=whole))
    if proc.returncode:
        report("fault: a worker killed during the shuffle", False,
               "exit %d: %s" % (proc.returncode, e.decode()[-800:]))
        return
    got = norm_pairs(parts(out))
    report("fault: a worker killed during the shuffle (%s)" % ("killed" if killed else
                                                                "NOT killed"),
           bool(killed) and got == want and os.path.exists(os.path.join(out, "_SUCCESS")),
           "%d pairs, want %d" % (len(got), len(want)))


def main():
    print("dask: seed %d" % SEED)
    tmp = tempfile.mkdtemp(prefix="simhash-dask-")
    procs = []
    try:
        sched, procs = start_cluster(tmp)
        if FAULT:
            fault_case(tmp, sched)
            return
        run_all(tmp, sched)
    finally:
        stop_cluster(procs)
        shutil.rmtree(tmp, ignore_errors=True)
        print("dask: %d passed, %d failed" % (passed, failed))


def version_check_case():
    """A worker whose library version or scheme differs is refused before
    any work, with a message naming it (a stand-in client answers for the
    workers)."""
    sys.path.insert(0, os.path.join(BUILD, "python"))
    from simhash import _core, dask as sd
    cfg = _core.Config()

    class Client:
        def __init__(self, answers):
            self.answers = answers

        def run(self, fn, *args):
            return self.answers

    good = {"version": _core.version(), "scheme": cfg.scheme}
    for name, bad, want in (("version", dict(good, version="0.0.0-other"), "libsimhash 0.0.0"),
                            ("scheme", dict(good, scheme="v1/other"), "scheme v1/other")):
        try:
            sd._check_workers(Client({"tcp://a:1": good, "tcp://b:2": bad}), cfg)
            msg = None
        except sd.JobError as e:
            msg = str(e)
        report("a worker with another %s is refused" % name,
               msg is not None and "tcp://b:2" in msg and want in msg, repr(msg))
    report("workers that agree are accepted",
           sd._check_workers(Client({"tcp://a:1": good, "tcp://b:2": good}), cfg) == 2)


def run_all(tmp, sched):
    version_check_case()
    # fingerprints against `simhash pairs`
    for shape, bits, k, n in (("uniform", 64, 3, 3000), ("biased", 64, 3, 3000),
                              ("clustered", 64, 6, 2000), ("identical", 64, 3, 1500),
                              ("uniform", 128, 6, 2000), ("biased", 128, 0, 2000),
                              ("clustered", 64, 0, 2000), ("biased", 32, 3, 2000),
                              ("identical", 128, 6, 1000)):
        case_fingerprints(tmp, sched, "fingerprints %s %d bits k=%d" % (shape, bits, k), shape,
                          bits, k, n, extra=["--max-group", "100"])
    a = case_fingerprints(tmp, sched, "fingerprints biased k=3 on --workers 2", "biased", 64, 3,
                          3000, workers=2, data="same")
    b = case_fingerprints(tmp, sched, "fingerprints biased k=3 on --scheduler", "biased", 64, 3,
                          3000, data="same")
    report("--workers 2 and --scheduler give the same pairs", a is not None and a == b)

    # texts against `simhash dedup`
    rng = random.Random("%d-texts" % SEED)
    docs = texts(rng, 600)
    d = tempfile.mkdtemp(dir=tmp)
    paths, whole = write_jsonl_shards(d, docs, 4)
    one = lambda w: [w]  # noqa: E731
    for out in ("pairs", "clusters", "keep", "drop"):
        for verify in ([], ["--verify", "jaccard:0.8"]):
            for bits in (["--bits", "64"], ["--bits", "128"]) if not verify else (
                    ["--bits", "64"],):
                args = ["--jsonl", "--output", out] + verify + bits
                case_texts(tmp, sched, "jsonl %s" % " ".join(args[1:]), args, one, paths, whole)
    # the default decision (no -k): exact similarity, banded MinHash candidates;
    # texts short and long, with exact copies (collapsed for clusters, keep, drop)
    ndocs = docs[:300] + [docs[i] for i in range(0, 300, 7)] + \
        [" ".join([docs[i]] * 12) for i in range(300, 360)] + [docs[5]] * 40
    rng.shuffle(ndocs)
    nd = tempfile.mkdtemp(dir=tmp)
    npaths, nwhole = write_jsonl_shards(nd, ndocs, 3)
    for out in ("pairs", "clusters", "keep", "drop"):
        case_texts(tmp, sched, "jsonl default decision --output %s" % out,
                   ["--jsonl", "--output", out], one, npaths, nwhole)
    case_texts(tmp, sched, "jsonl --near --output clusters on --workers 2",
               ["--jsonl", "--near", "--output", "clusters"], one, npaths, nwhole, workers=2)
    case_texts(tmp, sched, "jsonl, inputs as a file:// URL and a glob", ["--jsonl", "-k", "5"], one,
               ["file://" + paths[0], os.path.join(d, "doc-0[1-3].jsonl*")], whole)
    case_texts(tmp, sched, "jsonl -k 0 --output clusters", ["--jsonl", "-k", "0", "--output",
                                                             "clusters"], one, paths, whole)
    case_texts(tmp, sched, "jsonl --output keep --blocksize 3000 on --workers 2",
               ["--jsonl", "-k", "5", "--output", "keep", "--blocksize", "3000"], one, paths, whole,
               workers=2)

    # --lines over two files: ids FILE:LINE as simhash dedup gives them
    ld = tempfile.mkdtemp(dir=tmp)
    lpaths = []
    for s in range(2):
        p = os.path.join(ld, "l%d.txt" % s)
        with open(p, "w") as f:
            f.write("\n".join(docs[s * 300:(s + 1) * 300]) + ("\n" if s == 0 else ""))
        lpaths.append(p)
    case_texts(tmp, sched, "lines over 2 files, default decision --output keep",
               ["--lines", "--output", "keep", "--blocksize", "20000"], lambda w: lpaths,
               lpaths, None)
    for out in ("pairs", "clusters", "drop"):
        args = ["--lines", "--output", out, "-k", "6", "--blocksize", "20000"]
        case_texts(tmp, sched, "lines over 2 files --output %s" % out,
                   args, lambda w: lpaths, lpaths, None)

    # files mode: each file a document, ids its path
    fd = tempfile.mkdtemp(dir=tmp)
    fpaths = []
    for i, t in enumerate(docs[:12]):
        p = os.path.join(fd, "d%02d.txt" % i)
        with open(p, "w") as f:
            f.write(t)
        fpaths.append(p)
    case_texts(tmp, sched, "files mode --output drop", ["--output", "drop", "-k", "8"],
               lambda w: fpaths, fpaths, None)

    # bad input
    bad = os.path.join(d, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"id": "x1", "text": "one"}\n{"id": "x2", "text": \n{"id": "x3", "text": "t"}\n')
    out = os.path.join(d, "badout")
    r = job(["--jsonl", "-k", "5", paths[0], bad], out, sched)
    err = r.stderr.decode()
    report("a broken record stops the job naming file:line, no _SUCCESS",
           r.returncode == 1 and "%s:2:" % bad in err and
           not os.path.exists(os.path.join(out, "_SUCCESS")), "exit %d: %s" % (r.returncode, err))
    out = os.path.join(d, "badout2")
    r = job(["--jsonl", "-k", "5", "--keep-going", "--output", "keep", paths[0], bad], out, sched)
    ok = r.returncode == 3 and not os.path.exists(os.path.join(out, "_SUCCESS"))
    if ok:
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        good = os.path.join(d, "good.jsonl")
        with open(paths[0], "rb") as f1, open(bad, "rb") as f2, open(good, "wb") as g:
            g.write(f1.read() + b"".join(l for i, l in enumerate(f2.readlines()) if i != 1))
        want = sorted(cli(["dedup", "-q", "--jsonl", "-k", "5", "--output", "keep", good]))
        ok = s["bad_records"] == 1 and s["bad"][0]["where"] == "%s:2" % bad and \
            sorted(parts(out)) == want
    report("--keep-going skips it, says so in summary.json and exit 3", ok,
           "exit %d: %s" % (r.returncode, r.stderr.decode()[-500:]))
    r = job(["--jsonl", "--near", "-k", "3", paths[0]], os.path.join(d, "near-k"), sched)
    report("--near with -k is refused", r.returncode == 2 and b"--near decides" in r.stderr,
           "exit %d: %s" % (r.returncode, r.stderr.decode()))
    r = job(["--jsonl", "-k", "5", paths[0]], out, sched)
    report("a non-empty output folder is refused", r.returncode == 1 and
           b"not empty" in r.stderr, "exit %d: %s" % (r.returncode, r.stderr.decode()))
    fpb = os.path.join(d, "bad.tsv")
    with open(fpb, "w") as f:
        f.write("0123456789abcdef\ta\n0123456789abcdeg\tb\n")
    r = job(["--fingerprints", fpb], os.path.join(d, "badfp"), sched)
    report("a malformed fingerprint line names file:line", r.returncode == 1 and
           ("%s:2: malformed fingerprint" % fpb).encode() in r.stderr, r.stderr.decode())


if __name__ == "__main__":
    main()
    sys.exit(1 if failed or not passed else 0)
