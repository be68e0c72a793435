"""serve_load.py PORT N PROBES_FILE - loads N documents with seeded random
64-bit fingerprints into a running `simhash serve` through
POST /v1/documents:batch (1000 per batch, one keep-alive connection), and
writes 10,000 of them, each with 0 to 3 bits flipped, one hex per line, to
PROBES_FILE for the query benchmark. A tenth of the documents are planted
near-duplicates of another (1 to 3 bits flipped). Prints the load rate."""
import http.client
import json
import random
import sys
import time

port, n, probes_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(20261122)
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
fps = []
t0 = time.time()
batch = []


def flip(fp, k):
    for _ in range(k):
        fp ^= 1 << rng.randrange(64)
    return fp


for i in range(n):
    if fps and rng.random() < 0.1:
        fp = flip(rng.choice(fps[-1000:]), rng.randint(1, 3))
    else:
        fp = rng.getrandbits(64)
    if len(fps) < 100000:
        fps.append(fp)
    batch.append({"id": "doc-%d" % i, "fingerprint": "%016x" % fp})
    if len(batch) == 1000 or i == n - 1:
        c.request("POST", "/v1/documents:batch", body=json.dumps({"documents": batch}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit("load failed: %d %s" % (r.status, body[:200]))
        batch = []
with open(probes_path, "w") as f:
    for _ in range(10000):
        f.write("%016x\n" % flip(rng.choice(fps), rng.randint(0, 3)))
dt = time.time() - t0
print("loaded %d documents in %.1f s (%.0f documents/s through the batch route)" % (n, dt, n / dt))
