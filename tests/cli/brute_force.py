#!/usr/bin/env python3
"""brute_force.py SIMHASH - the command's exact answers against brute force.

Random sets of five shapes (uniform bits; biased, each bit 1 with p = 0.72;
clustered around a few centres; concentrated, most of the set one
fingerprint and the rest a bit or two from it; sparse, at most three bits
set), with near-duplicates planted at distances 0..12 and ids that hold
CJK characters and emoji, at 32, 64 and 128 bits. Each case checks against
a pair-by-pair scan in Python:
  1. `simhash pairs -k K [-j N]` on one set (the self-join), and on two (the
     join, 32 bits included);
  2. `simhash index build` of one set, `index add` of the other, `index
     delete` of some of the first, then `index query -k Q [-j N]` of
     fingerprints near stored ones and of random ones.
Prints one line per failing case and "brute: N passed, N failed"; exits 1
if any failed. Deterministic (fixed seeds).
"""
import functools
import os
import random
import subprocess
import sys
import tempfile

CASES = 25


def popcount(x):
    return bin(x).count("1")


def run(sh, args, inp=None):
    r = subprocess.run([sh] + args, input=inp, capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r.stdout


def make_set(rnd, n, bits, shape):
    if shape == "uniform":
        fps = [rnd.getrandbits(bits) for _ in range(n)]
    elif shape == "biased":
        fps = [sum((rnd.random() < 0.72) << b for b in range(bits)) for _ in range(n)]
    elif shape == "clustered":
        centres = [rnd.getrandbits(bits) for _ in range(max(1, n // 40))]
        fps = []
        for _ in range(n):
            f = rnd.choice(centres)
            for _ in range(rnd.randint(0, 8)):
                f ^= 1 << rnd.randrange(bits)
            fps.append(f)
    elif shape == "concentrated":
        v = rnd.getrandbits(bits)
        fps = [v if rnd.random() < 0.6 else v ^ (1 << rnd.randrange(bits)) ^ (1 << rnd.randrange(bits))
               for _ in range(n)]
    else:
        fps = [functools.reduce(lambda a, b: a | b, [1 << rnd.randrange(bits) for _ in range(rnd.randint(0, 3))], 0)
               for _ in range(n)]
    for _ in range(n // 4):  # planted near-duplicates
        f = rnd.choice(fps)
        for _ in range(rnd.randint(0, 12)):
            f ^= 1 << rnd.randrange(bits)
        fps.append(f)
    return fps


def text(fps, ids, bits):
    return "".join("%0*x\t%s\n" % (bits // 4, f, i) for f, i in zip(fps, ids))


def check_case(sh, tmp, seed):
    rnd = random.Random(seed)
    bits = rnd.choice([32, 64, 128])
    shape = rnd.choice(["uniform", "biased", "clustered", "concentrated", "sparse"])
    kmax = {32: 8, 64: 16, 128: 32}[bits]
    k = rnd.choice([0, 1, 3, kmax, rnd.randint(0, kmax)])
    a = make_set(rnd, rnd.choice([1, 40, 300]), bits, shape)
    b = make_set(rnd, rnd.choice([1, 40, 300]), bits, shape)
    ida = ["文%d" % i if i % 3 else "a%d😀" % i for i in range(len(a))]
    idb = ["b%d" % i for i in range(len(b))]
    pa, pb = os.path.join(tmp, "a.tsv"), os.path.join(tmp, "b.tsv")
    with open(pa, "w", encoding="utf-8") as f:
        f.write(text(a, ida, bits))
    with open(pb, "w", encoding="utf-8") as f:
        f.write(text(b, idb, bits))
    what = "seed %d: %d bits, %s, k %d" % (seed, bits, shape, k)
    j = str(rnd.choice([1, 2]))

    got = run(sh, ["pairs", "-k", str(k), "-j", j, pa]).splitlines()
    want = ["%s\t%s\t%d" % (ida[x], ida[y], popcount(a[x] ^ a[y]))
            for x in range(len(a)) for y in range(x + 1, len(a)) if popcount(a[x] ^ a[y]) <= k]
    if sorted(got) != sorted(want):
        return "%s: pairs gave %d pairs, brute force %d" % (what, len(got), len(want))

    got = run(sh, ["pairs", "-k", str(k), "-j", j, pa, pb]).splitlines()
    want = ["%s\t%s\t%d" % (ida[x], idb[y], popcount(a[x] ^ b[y]))
            for x in range(len(a)) for y in range(len(b)) if popcount(a[x] ^ b[y]) <= k]
    if sorted(got) != sorted(want):
        return "%s: the join gave %d pairs, brute force %d" % (what, len(got), len(want))

    if bits == 32:  # the index takes 64 and 128 bits
        return None
    kb = min(kmax, k + rnd.randint(0, 3))
    ix = os.path.join(tmp, "ix")
    run(sh, ["index", "build", pa, "-o", ix, "-k", str(kb)])
    run(sh, ["index", "add", ix, pb])
    gone = set(x for x in range(len(a)) if rnd.random() < 0.3)
    pd = os.path.join(tmp, "d.tsv")
    with open(pd, "w", encoding="utf-8") as f:
        f.write(text([a[x] for x in sorted(gone)], [ida[x] for x in sorted(gone)], bits))
    run(sh, ["index", "delete", ix, pd])
    live = [(a[x], ida[x]) for x in range(len(a)) if x not in gone] + list(zip(b, idb))
    qs = [rnd.choice(a + b) ^ (1 << rnd.randrange(bits)) for _ in range(15)]
    qs += [rnd.getrandbits(bits) for _ in range(5)]
    qk = rnd.randint(0, kb)
    got = run(sh, ["index", "query", ix, "-k", str(qk), "-j", str(rnd.choice([1, 2]))],
              text(qs, ["q%d" % i for i in range(len(qs))], bits)).splitlines()
    want = []
    for qi, q in enumerate(qs):
        want += ["q%d\t%s\t%d" % (qi, i, popcount(f ^ q)) for f, i in live if popcount(f ^ q) <= qk]
    if sorted(got) != sorted(want):
        return "%s: index query -k %d (built for %d) gave %d matches, brute force %d" % (
            what, qk, kb, len(got), len(want))
    return None


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: brute_force.py SIMHASH\n")
        return 2
    sh = os.path.abspath(sys.argv[1])
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(CASES):
            try:
                err = check_case(sh, tmp, seed)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                err = "seed %d: %s" % (seed, e)
            if err:
                print(err)
                failed += 1
            else:
                passed += 1
    print("brute: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
