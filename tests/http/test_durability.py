"""test_durability.py BINARY [CYCLES] - every acknowledged write survives
SIGKILL. Each cycle starts `simhash serve` on the same store, lets several
clients add documents at once (plain adds, check-and-insert and batches),
kills the server with SIGKILL at a random moment, restarts it and checks
that every document whose add got a 2xx is there with the right fingerprint
(deletes too: a document whose delete was acknowledged is gone). At the end
`simhash store verify` must be clean. The seed is printed; SEED=N repeats a
run. Prints "durability: N passed, N failed"."""
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Counter, Server, has_store_command, make_store  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
CYCLES = int(sys.argv[2]) if len(sys.argv) > 2 else 20
CLIENTS = 4
T = Counter("durability")


def client(port, cid, cycle, rng, acked, deleted, stop):
    """Adds documents until the server dies; records what was acknowledged."""
    n = 0
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while not stop.is_set():
            kind = rng.random()
            if kind < 0.15:
                docs = [{"id": "c%d-%d-%d-%d" % (cycle, cid, n, j),
                         "text": "batch %d %d %d %d words" % (cycle, cid, n, j)} for j in range(5)]
                body = {"documents": docs}
                route = "/v1/documents:batch"
            else:
                docs = [{"id": "c%d-%d-%d" % (cycle, cid, n),
                         "text": "document %d of client %d in cycle %d \U0001F600" % (n, cid, cycle)}]
                body = dict(docs[0])
                if kind < 0.5:
                    body["check"] = True
                route = "/v1/documents"
            n += 1
            c.request("POST", route, body=json.dumps(body), headers={"Content-Type": "application/json"})
            r = c.getresponse()
            data = json.loads(r.read())
            if 200 <= r.status < 300:
                if route == "/v1/documents":
                    acked[docs[0]["id"]] = data["fingerprint"]
                else:
                    for d in data["results"]:
                        acked[d["id"]] = d["fingerprint"]
            if acked and rng.random() < 0.05:
                victim = rng.choice(sorted(acked))
                # Until its answer, the delete may or may not have happened.
                acked.pop(victim, None)
                c.request("DELETE", "/v1/documents/" + urllib.parse.quote(victim, safe=""))
                r = c.getresponse()
                r.read()
                if r.status == 200:
                    deleted.add(victim)
    except (OSError, http.client.HTTPException, ValueError):
        pass  # the server was killed


def main():
    if not has_store_command(BIN):
        print("durability: no `simhash store` command: skipped")
        print("durability: 0 passed, 0 failed")
        return
    seed = int(os.environ.get("SEED", random.randrange(1 << 30)))
    print("durability: seed %d, %d cycles" % (seed, CYCLES), flush=True)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="simhash-durability-")
    path = make_store(BIN, tmp)
    acked, deleted = {}, set()
    t0 = time.time()
    for cycle in range(CYCLES):
        s = Server(BIN, store=path)
        # Everything acknowledged so far is there; everything deleted is gone.
        c = s.conn()
        missing = 0
        for id_, fp in sorted(acked.items()):
            c.request("GET", "/v1/documents/" + urllib.parse.quote(id_, safe=""))
            r = c.getresponse()
            b = json.loads(r.read())
            if r.status != 200 or b["fingerprint"] != fp:
                missing += 1
        back = 0
        for id_ in sorted(deleted):
            c.request("GET", "/v1/documents/" + urllib.parse.quote(id_, safe=""))
            r = c.getresponse()
            r.read()
            back += r.status != 404
        c.close()
        T.check(missing == 0, "cycle %d: every acknowledged document is there" % cycle,
                "%d of %d missing (seed %d)" % (missing, len(acked), seed))
        T.check(back == 0, "cycle %d: acknowledged deletes stay deleted" % cycle,
                "%d came back (seed %d)" % (back, seed))
        stop = threading.Event()
        threads = [threading.Thread(target=client, args=(s.port, i, cycle, random.Random(rng.random()),
                                                         acked, deleted, stop))
                   for i in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.05, 0.4))
        s.kill()
        stop.set()
        for t in threads:
            t.join()
    s = Server(BIN, store=path)
    st, b, _ = s.request("GET", "/v1/stats")
    T.check(st == 200 and b["store"]["documents"] >= len(acked), "final count",
            "%r vs %d" % (b, len(acked)))
    s.stop()
    r = subprocess.run([BIN, "store", "verify", path], capture_output=True)
    T.check(r.returncode == 0, "store verify is clean after %d kills" % CYCLES,
            (r.stdout + r.stderr).decode()[-500:])
    print("durability: %d documents acknowledged in %d cycles, %.1f s" % (len(acked), CYCLES, time.time() - t0))
    subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
