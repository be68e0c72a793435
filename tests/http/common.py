"""common.py - what the HTTP tests share: start `simhash serve` on 127.0.0.1
and a free port, send requests with the standard library only, count results.

Every server started here is stopped at exit, also when a test fails."""
import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SERVERS = []


def _cleanup():
    for s in SERVERS:
        s.kill()


atexit.register(_cleanup)


class Server:
    """A running `simhash serve`; args are extra command line arguments."""

    def __init__(self, binary, args=(), store=None):
        self.binary = binary
        self.args = list(args)
        self.store = store
        self.proc = None
        self.port = None
        self.start()
        SERVERS.append(self)

    def start(self):
        cmd = [self.binary, "serve", "--listen", "127.0.0.1:0"] + self.args
        if self.store:
            cmd += ["--store", self.store]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening on http://127.0.0.1:"):
            err = self.proc.stderr.read().decode()
            raise RuntimeError("server did not start: %r %r" % (line, err))
        self.port = int(line.rsplit(":", 1)[1])

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def stop(self):
        """SIGTERM, then the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)

    def conn(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, conn=None):
        """(status, parsed JSON or text, headers). body: bytes, str or a JSON value."""
        own = conn is None
        c = conn or self.conn()
        h = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        if body is not None:
            h.setdefault("Content-Type", "application/json")
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        if own:
            c.close()
        ctype = r.getheader("Content-Type", "")
        if ctype.startswith("application/json"):
            data = json.loads(data)
        return r.status, data, r


class Counter:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s %s" % (self.name, what, detail), flush=True)
        return cond

    def error(self, st, body, status, code, what):
        """An error answer: status, and a body {"error": {"code", "message"}}."""
        ok = (
            st == status
            and isinstance(body, dict)
            and isinstance(body.get("error"), dict)
            and body["error"].get("code") == code
            and isinstance(body["error"].get("message"), str)
            and body["error"]["message"]
        )
        return self.check(ok, what, "got %r %r, expected %d %s" % (st, body, status, code))

    def done(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def has_store_command(binary):
    r = subprocess.run([binary, "store", "--help"], capture_output=True)
    return r.returncode == 0


def make_store(binary, folder, *flags):
    path = os.path.join(folder, "store")
    subprocess.run([binary, "store", "create", path] + list(flags), check=True,
                   capture_output=True)
    return path


def cli_fingerprint(binary, text, *flags):
    """The hex `simhash fingerprint` prints for text (an independent oracle)."""
    r = subprocess.run([binary, "fingerprint"] + list(flags) + ["-"], input=text,
                       capture_output=True, check=True)
    return r.stdout.decode().split("\t")[0]
