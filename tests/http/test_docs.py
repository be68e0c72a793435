"""test_docs.py BINARY DOC - runs the examples of docs/http.md against a
fresh `simhash serve`, in the order they appear: each ```http block that
starts with a method is a request, sent as written; the next ```http block,
starting with "HTTP/1.1 STATUS", is its answer. The status must match, the
headers shown must be there with those values, and a JSON body must hold every
field shown with the value shown ("..." matches anything; numbers within
1e-9 relative; an object shown may hold fewer fields than the answer, an array
must have as many elements). A text body: each line shown must start a line
of the answer, up to a "..." standing for its value. Without `simhash store`
only the examples that need no store are run. Prints "docs: N passed, N failed"."""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Counter, Server, has_store_command, make_store  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
DOC = sys.argv[2]
T = Counter("docs")
STATELESS = ("/v1/fingerprint", "/v1/compare", "/v1/nothing")


def blocks(text):
    return re.findall(r"```http\n(.*?)```", text, re.S)


def parse(block):
    head, _, body = block.partition("\n\n")
    lines = head.strip("\n").split("\n")
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers[k.strip()] = v.strip()
    return lines[0], headers, body.rstrip("\n")


def matches(shown, got, where="$"):
    """None if got matches shown, else where it differs."""
    if shown == "...":
        return None
    if isinstance(shown, dict):
        if not isinstance(got, dict):
            return where
        for k, v in shown.items():
            if k not in got:
                return where + "." + k + " missing"
            d = matches(v, got[k], where + "." + k)
            if d:
                return d
        return None
    if isinstance(shown, list):
        if not isinstance(got, list) or len(got) != len(shown):
            return where + " length"
        for i, (a, b) in enumerate(zip(shown, got)):
            d = matches(a, b, "%s[%d]" % (where, i))
            if d:
                return d
        return None
    if isinstance(shown, float) or isinstance(got, float):
        ok = isinstance(got, (int, float)) and not isinstance(got, bool) and \
            abs(shown - got) <= 1e-9 * max(1, abs(shown))
        return None if ok else "%s: %r != %r" % (where, got, shown)
    return None if shown == got and type(shown) is type(got) else "%s: %r != %r" % (where, got, shown)


def main():
    text = open(DOC).read()
    bs = blocks(text)
    store = has_store_command(BIN)
    tmp = tempfile.mkdtemp(prefix="simhash-docs-")
    s = Server(BIN, store=make_store(BIN, tmp) if store else None)
    n = 0
    i = 0
    while i < len(bs):
        req_line, req_headers, req_body = parse(bs[i])
        if req_line.startswith("HTTP/") or i + 1 >= len(bs):
            T.check(False, "an answer without its request", req_line)
            i += 1
            continue
        resp_line, resp_headers, resp_body = parse(bs[i + 1])
        i += 2
        method, path = req_line.split()[:2]
        if not store and path not in STATELESS:
            continue
        n += 1
        body = (req_body + "\n").encode() if req_body else None
        st, got, r = s.request(method, path, body=body, headers=req_headers)
        want_status = int(resp_line.split()[1])
        what = "%s %s" % (method, path)
        if not T.check(st == want_status, what + ": status", "%d, doc says %d: %r" % (st, want_status, got)):
            continue
        for k, v in resp_headers.items():
            T.check(r.getheader(k) == v, what + ": header " + k, r.getheader(k))
        if isinstance(got, (dict, list)):
            d = matches(json.loads(resp_body), got)
            T.check(d is None, what + ": body", "%s in %r" % (d, got))
        else:
            lines = got.decode().split("\n")
            for l in resp_body.split("\n"):
                prefix = l.split("...")[0]
                T.check(any(x.startswith(prefix) for x in lines), what + ": line", l)
    T.check(n >= (19 if store else 5), "examples run", n)
    s.stop()
    T.done()


if __name__ == "__main__":
    main()
