"""test_trust_store.py - the service over a store that goes wrong:

1. a record that fails its checksum (one bit flipped in the LMDB file, in the
   live copy of a document's metadata, found as `simhash store verify` tells):
   GET answers 500 with code "corrupt" and the server logs it; the other
   documents answer 200, /healthz 200;
2. a full disk: the store on a 2 MB tmpfs (mounted here as root; skipped
   where mounting is not permitted), documents with random incompressible
   metadata added until a write answers 507 "insufficient_storage"; then
   /healthz answers 200 with "writable": false while reads answer 200; after
   the tmpfs grows, writes are accepted and "writable" is true again; every
   acknowledged document is there, and `simhash store verify` passes;
3. /metrics: committed_writes counts the write requests, not the
   checkpoints the store takes in the background.

Usage: python3 tests/http/test_trust_store.py build/simhash"""
import base64
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse

from common import Counter, Server, make_store

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/simhash"
T = Counter("http trust (store)")


def doc_path(i):
    return "/v1/documents/" + urllib.parse.quote(i, safe="")


def verify(path):
    return subprocess.run([BIN, "store", "verify", path], capture_output=True)


def test_corrupt(tmp):
    path = make_store(BIN, tmp)
    s = Server(BIN, store=path)
    metas = {}
    for i in range(8):
        metas["c%d" % i] = {"k": "m%d-%s" % (i, os.urandom(8).hex())}
        st, b, _ = s.request("POST", "/v1/documents",
                             {"id": "c%d" % i, "text": "text number %d" % i, "meta": metas["c%d" % i]})
        T.check(st == 201, "add", b)
    T.check(s.stop() == 0, "stopped")
    data = bytearray(open(path, "rb").read())
    needle = metas["c3"]["k"].encode()
    hit = False
    for m in re.finditer(re.escape(needle), bytes(data)):
        data[m.start() + 4] ^= 2
        open(path, "wb").write(data)
        if verify(path).returncode != 0:
            hit = True
            break
        data[m.start() + 4] ^= 2
        open(path, "wb").write(data)
    T.check(hit, "a flip in the live copy of the metadata fails store verify")
    s = Server(BIN, store=path)
    st, b, _ = s.request("GET", doc_path("c3"))
    T.error(st, b, 500, "corrupt", "GET of a record that fails its checksum")
    T.check(isinstance(b, dict) and "c3" in b.get("error", {}).get("message", ""),
            "the message names the id", b)
    st, b, _ = s.request("GET", doc_path("c4"))
    T.check(st == 200 and b["meta"] == metas["c4"], "the other documents answer", b)
    st, b, _ = s.request("GET", "/healthz")
    T.check(st == 200 and b.get("status") == "ok", "/healthz", b)
    s.proc.send_signal(15)
    s.proc.wait(timeout=30)
    log = s.proc.stderr.read().decode()
    T.check("c3" in log and "checksum" in log, "the server logs the corrupt record", log)


def mount_tmpfs(folder, size):
    if os.geteuid() != 0:
        return False
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", folder],
                       capture_output=True)
    return r.returncode == 0


def health(s):
    st, b, _ = s.request("GET", "/healthz")
    return st, b


def test_disk_full(tmp):
    folder = os.path.join(tmp, "small")
    os.makedirs(folder)
    if not mount_tmpfs(folder, "2m"):
        print("http trust (store): cannot mount a tmpfs (not root, or not permitted): "
              "disk-full case skipped")
        return
    try:
        disk_full_cycle(folder)
    finally:
        subprocess.run(["umount", "-l", folder], capture_output=True)


def disk_full_cycle(folder):
    path = make_store(BIN, folder)
    s = Server(BIN, store=path)
    st, b = health(s)
    T.check(st == 200 and b.get("writable") is True, "healthz: writable at start", b)
    acked = {}
    full = None
    for i in range(2000):
        meta = {"r": base64.b64encode(os.urandom(2400)).decode()}
        st, b, _ = s.request("POST", "/v1/documents",
                             {"id": "d%d" % i, "text": "document %d" % i, "meta": meta})
        if st == 201:
            acked["d%d" % i] = meta
            continue
        full = (st, b)
        break
    T.check(full is not None, "the 2 MB tmpfs filled up", len(acked))
    if full is None:
        s.kill()
        return
    T.error(full[0], full[1], 507, "insufficient_storage", "a write past the space")
    st, b = health(s)
    T.check(st == 200 and b.get("writable") is False and b.get("status") == "ok",
            "healthz: 200, writable false while full", b)
    # more writes fail the same way; reads answer
    for j in range(3):
        st, b, _ = s.request("POST", "/v1/documents",
                             {"id": "x%d" % j, "text": "x",
                              "meta": {"r": base64.b64encode(os.urandom(3000)).decode()}})
        T.error(st, b, 507, "insufficient_storage", "writes go on failing with 507")
    some = list(acked)[:: max(1, len(acked) // 10)]
    for i in some:
        st, b, _ = s.request("GET", doc_path(i))
        T.check(st == 200 and b["meta"] == acked[i], "reads answer while full", (st, i))
    st, b, _ = s.request("POST", "/v1/query", {"text": "document 1", "k": 3})
    T.check(st == 200, "queries answer while full", st)
    st, b, _ = s.request("GET", "/healthz")
    T.check(b.get("writable") is False, "still not writable before any write succeeds", b)
    # grow the space: writes come back
    r = subprocess.run(["mount", "-o", "remount,size=16m", folder], capture_output=True)
    T.check(r.returncode == 0, "tmpfs grown", r.stderr)
    meta = {"r": base64.b64encode(os.urandom(2400)).decode()}
    st, b, _ = s.request("POST", "/v1/documents", {"id": "after", "text": "after", "meta": meta})
    T.check(st == 201, "a write is accepted once there is space", (st, b))
    if st == 201:
        acked["after"] = meta
    st, b = health(s)
    T.check(st == 200 and b.get("writable") is True, "healthz: writable again", b)
    missing = 0
    for i, m in acked.items():
        st, b, _ = s.request("GET", doc_path(i))
        missing += not (st == 200 and b["meta"] == m)
    T.check(missing == 0, "every acknowledged document is there (%d)" % len(acked), missing)
    T.check(s.stop() == 0, "stopped")
    r = verify(path)
    T.check(r.returncode == 0, "store verify passes after the disk was full", r.stderr)
    s = Server(BIN, store=path)
    st, b, _ = s.request("GET", "/v1/stats")
    T.check(st == 200 and b["store"]["documents"] == len(acked),
            "after a restart the store holds exactly the acknowledged documents", b)
    s.stop()


def metric(text, name):
    if isinstance(text, bytes):
        text = text.decode()
    m = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
    return int(m.group(1)) if m else None


def test_committed_writes_exclude_checkpoints(tmp):
    folder = os.path.join(tmp, "ckpt")
    os.makedirs(folder)
    path = make_store(BIN, folder)
    s = Server(BIN, store=path)
    n_req = 0
    # 5 batches of 1,000: past the 4,096 changes that start a checkpoint
    for j in range(5):
        docs = [{"id": "b%d-%d" % (j, i), "fingerprint": "%016x" % ((j * 1000 + i) * 0x9e3779b97f4a7c15 % (1 << 64))}
                for i in range(1000)]
        st, b, _ = s.request("POST", "/v1/documents:batch", {"documents": docs})
        T.check(st == 200, "batch", (st, b if st != 200 else ""))
        n_req += 1
    for i in range(3):
        st, b, _ = s.request("DELETE", doc_path("b0-%d" % i))
        T.check(st == 200, "delete", b)
        n_req += 1
    checkpoints = 0
    for _ in range(600):
        st, b, _ = s.request("GET", "/v1/stats")
        checkpoints = b["store"]["checkpoints"]
        if checkpoints:
            break
        time.sleep(0.1)
    T.check(checkpoints >= 1, "a checkpoint was taken", checkpoints)
    st, b, _ = s.request("GET", "/v1/stats")
    T.check(b["store"]["committed_writes"] == n_req,
            "stats: committed_writes counts the write requests only", b["store"])
    st, text, _ = s.request("GET", "/metrics")
    T.check(metric(text, "simhash_store_committed_writes_total") == n_req,
            "metrics: committed_writes counts the write requests only",
            metric(text, "simhash_store_committed_writes_total"))
    s.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="simhash-trust-")
    try:
        os.makedirs(os.path.join(tmp, "corrupt"))
        test_corrupt(os.path.join(tmp, "corrupt"))
        test_disk_full(tmp)
        test_committed_writes_exclude_checkpoints(tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
