"""test_api.py BINARY - `simhash serve` end to end: status and JSON body of
every endpoint, bad input of every kind (each the right 4xx with a message,
nothing stored changes, the server keeps serving), limits, timeouts, the
bearer token, metrics and graceful shutdown. Prints "http: N passed, N failed".

The store routes are tested when the binary has `simhash store`."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Counter, Server, cli_fingerprint, has_store_command, make_store  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
T = Counter("http")


def popcount_xor(a, b):
    return bin(int(a, 16) ^ int(b, 16)).count("1")


def test_stateless(s):
    st, body, _ = s.request("GET", "/healthz")
    T.check(st == 200 and body["status"] == "ok", "healthz", body)

    for text in ["hello world", "caf\u00e9 \U0001F600 \u4e2d\u6587\u7e41\u9ad4", "", "a" * 5000]:
        st, body, _ = s.request("POST", "/v1/fingerprint", {"text": text})
        want = cli_fingerprint(BIN, text.encode())
        T.check(st == 200 and body["fingerprint"] == want and body["bits"] == 64,
                "fingerprint equals the CLI's", "%r %r want %s" % (text[:20], body, want))
    scheme = subprocess.run([BIN, "scheme"], capture_output=True).stdout.decode().strip()
    T.check(body["scheme"] == scheme, "fingerprint scheme is `simhash scheme`", body)

    a, b = "the quick brown fox jumps over the lazy dog", "the quick brown fox jumped over a lazy dog"
    st, body, _ = s.request("POST", "/v1/compare", {"a": a, "b": b})
    cli = json.loads(subprocess.run([BIN, "compare", "--text", "--json", a, b],
                                    capture_output=True).stdout)
    T.check(st == 200 and body["a"] == cli_fingerprint(BIN, a.encode())
            and body["b"] == cli_fingerprint(BIN, b.encode()), "compare fingerprints", body)
    T.check(body["distance"] == popcount_xor(body["a"], body["b"]) == cli["distance"],
            "compare distance", body)
    T.check(abs(body["similarity"] - (1 - body["distance"] / 64)) < 1e-12, "compare similarity")
    T.check(abs(body["cosine"] - cli["cosine"]) < 1e-5 and abs(body["jaccard"] - cli["jaccard"]) < 1e-5,
            "compare cosine and jaccard equal the CLI's", "%r %r" % (body, cli))
    st, body, _ = s.request("POST", "/v1/compare", {"a": a, "b": a})
    T.check(st == 200 and body["distance"] == 0 and abs(body["cosine"] - 1) < 1e-9 and body["jaccard"] == 1,
            "compare a text with itself", body)

    st, body, r = s.request("GET", "/")
    T.check(st == 200 and "text/html" in r.getheader("Content-Type")
            and "Content-Security-Policy" in r.headers, "page at /")
    st, body, r = s.request("GET", "/app.js")
    T.check(st == 200 and "javascript" in r.getheader("Content-Type"), "app.js")


def test_bad_input(s):
    P = "/v1/fingerprint"
    st, b, _ = s.request("POST", P, b'{"text": "abc"')
    T.error(st, b, 400, "invalid_json", "malformed JSON")
    st, b, _ = s.request("POST", P, b"")
    T.error(st, b, 400, "empty_body", "empty body")
    st, b, _ = s.request("POST", P, b'{"text": "a\xffb"}')
    T.error(st, b, 400, "invalid_utf8", "invalid UTF-8 in the body")
    st, b, _ = s.request("POST", P, b'{"text": "\\ud800"}')
    T.check(st == 400, "a lone surrogate escape", b)
    st, b, _ = s.request("POST", P, {"text": 5})
    T.error(st, b, 422, "wrong_type", "text of the wrong type")
    st, b, _ = s.request("POST", P, [1, 2])
    T.error(st, b, 422, "not_an_object", "an array body")
    st, b, _ = s.request("POST", P, {"txt": "a"})
    T.error(st, b, 422, "unknown_field", "unknown field")
    st, b, _ = s.request("POST", P, {})
    T.error(st, b, 422, "missing_field", "missing text")
    st, b, _ = s.request("POST", P, b'{"text":"a","text":"b"}')
    T.error(st, b, 400, "invalid_json", "duplicate key")
    st, b, _ = s.request("POST", P, "{\"text\": \"x\"}", headers={"Content-Type": "text/plain"})
    T.error(st, b, 415, "unsupported_media_type", "text/plain body")
    st, b, _ = s.request("POST", "/v1/compare", {"a": "x", "b": None})
    T.error(st, b, 422, "wrong_type", "compare with b null")
    st, b, _ = s.request("GET", "/v1/nothing")
    T.error(st, b, 404, "not_found", "unknown route")
    st, b, r = s.request("DELETE", "/v1/fingerprint")
    T.error(st, b, 405, "method_not_allowed", "wrong method")
    T.check(r.getheader("Allow") == "POST", "405 has Allow", r.getheader("Allow"))
    st, b, r = s.request("POST", "/healthz", {})
    T.error(st, b, 405, "method_not_allowed", "POST to healthz")
    # Fingerprints of the wrong width or scheme are refused before the store.
    st, b, _ = s.request("POST", "/v1/query", {"fingerprint": "0123abcd", "k": 3})
    T.error(st, b, 422, "wrong_width", "a 32-bit fingerprint for 64-bit store")
    st, b, _ = s.request("POST", "/v1/query", {"fingerprint": "0123456789abcdeX"})
    T.error(st, b, 422, "bad_fingerprint", "a non-hex fingerprint")
    st, b, _ = s.request("POST", "/v1/query", {"fingerprint": "0123456789abcdef", "scheme": "v1/f64/other"})
    T.error(st, b, 422, "wrong_scheme", "a fingerprint of another scheme")
    st, b, _ = s.request("POST", "/v1/query", {"text": "x", "k": 65})
    T.error(st, b, 422, "out_of_range", "k over the width")
    st, b, _ = s.request("POST", "/v1/query", {"text": "x", "k": "3"})
    T.error(st, b, 422, "wrong_type", "k a string")
    st, b, _ = s.request("POST", "/v1/documents", {"id": 12, "text": "x"})
    T.error(st, b, 422, "wrong_type", "a number id")
    st, b, _ = s.request("POST", "/v1/documents", {"id": "", "text": "x"})
    T.error(st, b, 422, "bad_id", "an empty id")
    st, b, _ = s.request("POST", "/v1/documents", {"id": "a", "text": "x", "meta": "t"})
    T.error(st, b, 422, "wrong_type", "meta not an object")
    st, b, _ = s.request("POST", "/v1/documents:batch", {"documents": [{"id": "a", "text": "x"}, {"id": 1}]})
    T.error(st, b, 422, "wrong_type", "a bad document in a batch")
    T.check("documents[1]" in b["error"]["message"], "batch error names the document", b)
    st, b, _ = s.request("GET", "/v1/documents/%ff")
    T.error(st, b, 400, "bad_id", "an id that is not UTF-8")


def test_limits(binary):
    s = Server(binary, ["--max-text", "100", "--max-batch", "3", "--max-body", "2000"])
    st, b, _ = s.request("POST", "/v1/fingerprint", {"text": "a" * 101})
    T.error(st, b, 413, "text_too_large", "text over --max-text")
    st, b, _ = s.request("POST", "/v1/fingerprint", {"text": "a" * 100})
    T.check(st == 200, "text at --max-text", b)
    docs = [{"id": str(i), "text": "x"} for i in range(4)]
    st, b, _ = s.request("POST", "/v1/documents:batch", {"documents": docs})
    T.error(st, b, 413, "batch_too_large", "batch over --max-batch")
    st, b, _ = s.request("POST", "/v1/fingerprint", {"text": "a" * 95, "pad": "b" * 2000})
    T.error(st, b, 413, "body_too_large", "body over --max-body")
    # A chunked body has no length up front: counted, dropped, then 413.
    c = socket.create_connection(("127.0.0.1", s.port))
    c.sendall(b"POST /v1/fingerprint HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"a" * 1000
    for _ in range(5):
        c.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    c.sendall(b"0\r\n\r\n")
    reply = c.recv(65536).decode("latin-1")
    T.check(reply.startswith("HTTP/1.1 413"), "chunked body over the limit", reply[:80])
    c.close()
    st, b, _ = s.request("GET", "/healthz")
    T.check(st == 200, "serving after the limits")
    s.stop()

    # --max-connections: one more waits in the listen queue, unanswered,
    # until an open one closes; the open ones keep working.
    s = Server(binary, ["--max-connections", "2", "--threads", "1"])
    c1, c2 = s.conn(), s.conn()
    st1, _, _ = s.request("GET", "/healthz", conn=c1)
    st2, _, _ = s.request("GET", "/healthz", conn=c2)
    extra = socket.create_connection(("127.0.0.1", s.port))
    extra.settimeout(1)
    extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        early = extra.recv(100)
    except socket.timeout:
        early = None
    T.check(st1 == 200 and st2 == 200 and early is None, "no answer over --max-connections", early)
    st, _, _ = s.request("GET", "/healthz", conn=c1)
    T.check(st == 200, "open connections keep working at the limit")
    c1.close()
    extra.settimeout(10)
    late = extra.recv(100)
    T.check(late.startswith(b"HTTP/1.1 200"), "the waiting connection is served once one closes", late)
    extra.close()
    c2.close()
    s.stop()


def test_huge_body(s):
    """100 MB announced and sent: 413 as soon as the headers are read."""
    c = socket.create_connection(("127.0.0.1", s.port))
    c.settimeout(20)
    size = 100 * 1000 * 1000
    c.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % size)
    sent = 0
    block = b'{"text":"' + b"x" * (1 << 20)
    reply = b""
    try:
        while sent < size:
            c.sendall(block)
            sent += len(block)
            c.setblocking(False)
            try:
                reply += c.recv(65536)
            except BlockingIOError:
                pass
            c.setblocking(True)
            if reply:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    c.settimeout(10)
    try:
        while b"\r\n\r\n" not in reply:
            d = c.recv(65536)
            if not d:
                break
            reply += d
    except (ConnectionResetError, socket.timeout):
        pass
    c.close()
    head = reply.decode("latin-1")
    T.check(head.startswith("HTTP/1.1 413"), "a 100 MB body is 413", head[:100])
    T.check(sent < size, "413 before the whole 100 MB was sent", sent)
    st, b, _ = s.request("GET", "/healthz")
    T.check(st == 200, "serving after a 100 MB body")


def test_slow_client(binary):
    s = Server(binary, ["--idle-timeout", "1"])
    c = socket.create_connection(("127.0.0.1", s.port))
    c.sendall(b"POST /v1/fingerprint HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
    st, b, _ = s.request("GET", "/healthz")
    T.check(st == 200, "others are served while a client stalls")
    c.settimeout(5)
    t0 = time.time()
    try:
        data = c.recv(100)
    except (ConnectionResetError, socket.timeout):
        data = None
    T.check(data == b"" and time.time() - t0 < 4.5, "a stalled client is closed by --idle-timeout",
            repr(data))
    c.close()
    # A body that trickles in past --request-timeout is cut.
    s2 = Server(binary, ["--request-timeout", "1", "--idle-timeout", "5"])
    c = socket.create_connection(("127.0.0.1", s2.port))
    c.sendall(b"POST /v1/fingerprint HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100\r\n\r\n{")
    closed = False
    c.settimeout(1)
    for _ in range(6):
        time.sleep(0.4)
        try:
            c.sendall(b" ")
            if c.recv(100) == b"":
                closed = True
                break
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    T.check(closed, "a body trickling past --request-timeout is cut")
    c.close()
    st, b, _ = s2.request("GET", "/healthz")
    T.check(st == 200, "serving after a slow client")
    s2.stop()
    s.stop()


def test_token(binary, tmp):
    tok = os.path.join(tmp, "token")
    with open(tok, "w") as f:
        f.write("s3cret\n")
    s = Server(binary, ["--token-file", tok])
    st, b, r = s.request("POST", "/v1/documents", {"id": "a", "text": "x"})
    T.error(st, b, 401, "unauthorized", "a write without the token")
    T.check(r.getheader("WWW-Authenticate") == "Bearer", "401 asks for Bearer")
    st, b, _ = s.request("POST", "/v1/documents", {"id": "a", "text": "x"},
                         headers={"Authorization": "Bearer wrong!"})
    T.error(st, b, 401, "unauthorized", "a write with a wrong token")
    st, b, _ = s.request("DELETE", "/v1/documents/a")
    T.error(st, b, 401, "unauthorized", "a delete without the token")
    st, b, _ = s.request("POST", "/v1/fingerprint", {"text": "x"})
    T.check(st == 200, "reads need no token")
    st, b, _ = s.request("POST", "/v1/documents", {"id": "a", "text": "x"},
                         headers={"Authorization": "Bearer s3cret"})
    T.check(st != 401, "a write with the token passes", st)
    s.stop()


def test_metrics_and_shutdown(s):
    c = s.conn()
    for _ in range(3):  # keep-alive: three requests on one connection
        st, b, _ = s.request("POST", "/v1/fingerprint", {"text": "metrics"}, conn=c)
    c.close()
    # A request is counted when libmicrohttpd reports it complete, which may
    # come just after its answer reached us: read the metrics until the count
    # arrives (2 s at most).
    deadline = time.time() + 2
    while True:
        st, text, r = s.request("GET", "/metrics")
        text = text.decode()
        line = [l for l in text.splitlines()
                if l.startswith('simhash_http_requests_total{route="/v1/fingerprint",status="200"}')]
        if (line and int(line[0].split()[-1]) >= 7) or time.time() > deadline:
            break
        time.sleep(0.05)
    T.check(st == 200 and r.getheader("Content-Type").startswith("text/plain"), "metrics")
    T.check(line and int(line[0].split()[-1]) >= 7, "metrics count fingerprint requests", line)
    T.check('simhash_http_requests_total{route="/v1/fingerprint",status="400"}' in text,
            "metrics count errors by status")
    T.check('simhash_http_request_duration_seconds_bucket{route="/v1/fingerprint",le="+Inf"}' in text,
            "latency histogram")
    T.check("simhash_store_documents" not in text, "no store figures without a store")
    t0 = time.time()
    T.check(s.stop() == 0 and time.time() - t0 < 5, "SIGTERM stops the server with status 0")


def main():
    tmp = tempfile.mkdtemp(prefix="simhash-http-")
    s = Server(BIN)
    test_stateless(s)
    test_bad_input(s)
    test_huge_body(s)
    st, b, _ = s.request("GET", "/healthz")
    T.check(st == 200, "serving after every bad input")
    test_limits(BIN)
    test_slow_client(BIN)
    test_token(BIN, tmp)
    if has_store_command(BIN):
        import test_store
        test_store.run(BIN, tmp, T)
        test_store.run_tables(BIN, tmp, T)
    else:
        print("http: no `simhash store` command: store routes skipped")
    test_metrics_and_shutdown(s)
    subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
