"""flip.py SIMHASH - the command against flipped bits in a store's LMDB file,
as an operator (or an attacker with the disk) would flip them.

25 documents with random metadata, each added by its own `simhash store add`
(so older copies of their pages linger in LMDB's free pages); then for each
document, every copy in the file of its fingerprint (8 bytes, little- and
big-endian) and of its metadata's JSON text gets one bit flipped, one copy at
a time, and:
  - `store get` never prints a changed document: it prints the original, or
    exits 1 with "fails its checksum" naming the store and the id;
  - when get refuses, `store verify` exits 1 too;
  - for every document, the copy get reads (the live one) is found and
    refused, for the fingerprint and for the metadata;
  - the file restored, verify passes again.
(tests/store/test_store_checksum.c tells live copies from stale ones with
LMDB's own reading of the file; this checks the command's exit statuses.)
Prints "flip: N passed, N failed"."""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/simhash")
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL flip: %s" % what, flush=True)


def run(*args):
    return subprocess.run([BIN] + list(args), capture_output=True)


def copies(data, needle):
    out, i = [], data.find(needle)
    while i >= 0:
        out.append(i)
        i = data.find(needle, i + 1)
    return out


def main():
    seed = random.randrange(1 << 30)
    rnd = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="simhash-flip-")
    path = os.path.join(tmp, "s.db")
    try:
        run("store", "create", path)
        for i in range(25):
            doc = {"id": "doc-%d" % i, "text": "document %d about %d things" % (i, i * 37),
                   "meta": {"r": "%032x" % rnd.getrandbits(128), "n": i}}
            r = subprocess.run([BIN, "store", "add", path, "--jsonl"],
                               input=(json.dumps(doc) + "\n").encode(), capture_output=True)
            check(r.returncode == 0, "add %d" % i)
        docs = [json.loads(l) for l in run("store", "export", path).stdout.splitlines()]
        check(len(docs) == 25, "25 documents exported")
        orig = open(path, "rb").read()
        for d in docs:
            fp = int(d["fingerprint"], 16)
            meta = json.dumps(d["meta"], separators=(",", ":")).encode()
            want = {k: d[k] for k in ("id", "fingerprint", "time", "meta")}
            for part, needles in (("fingerprint", [struct.pack("<Q", fp), struct.pack(">Q", fp)]),
                                  ("metadata", [meta])):
                refused = 0
                for needle in needles:
                    for off in copies(orig, needle):
                        b = bytearray(orig)
                        b[off + rnd.randrange(len(needle))] ^= 1 << rnd.randrange(8)
                        open(path, "wb").write(b)
                        g = run("store", "get", path, d["id"])
                        v = run("store", "verify", path)
                        if g.returncode == 0:
                            got = json.loads(g.stdout)
                            check(got == want, "%s %s at %d: get printed %r" % (d["id"], part, off, got))
                        else:
                            err = g.stderr.decode()
                            check("fails its checksum" in err and path in err and d["id"] in err,
                                  "%s %s at %d: get's message %r" % (d["id"], part, off, err))
                            check(v.returncode == 1,
                                  "%s %s at %d: get refused, verify exited %d" % (d["id"], part, off, v.returncode))
                            refused += 1
                check(refused >= 1, "%s: the live copy of its %s refused" % (d["id"], part))
        open(path, "wb").write(orig)
        check(run("store", "verify", path).returncode == 0, "restored: verify passes")
    finally:
        shutil.rmtree(tmp)
    if failed:
        print("flip: seed %d" % seed)
    print("flip: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
