"""simhash.dask - `simhash-dask dedup`: what `simhash dedup` does, on a Dask cluster.

    python3 -m simhash.dask dedup [OPTION]... -o DIR INPUT...

The job is a Dask program (futures on a distributed Client); it has no
scheduler of its own. Its stages:

1. read: every input is cut into partitions (a byte range of whole lines of
   a plain file, a whole compressed file, or a group of files in files mode);
   a worker reads its partition through fsspec, parses it and fingerprints
   it with the C library (threads, GIL released). A partition keeps only its
   fingerprints (and its ids); texts and records are re-read when needed.
   Document i of partition p has the global id base[p] + i, its position in
   the concatenation of the inputs, so "first" means what it means for
   `simhash dedup` on that concatenation.
2. pairs (Manku, Jain and Das Sarma's tables, on Dask): for each table t of
   the (k + 1)-block plan every fingerprint is keyed by its block t and
   shuffled by key (numpy arrays, never rows of Python objects); a bucket's
   groups go through the library's exact pairs engine (block_pairs), which
   reports a pair only from the first table whose block the two share, so
   every pair within k comes out exactly once and no global distinct is
   needed. A key held by more than --max-group fingerprints (copies, biased
   bits) is split into r sub-blocks by a hash of the id; the r (r + 1) / 2
   meetings of sub-blocks are compared in separate groups (a sub-block with
   itself, or one against another), so no task holds the whole key.
3. ids and verification: the pairs are shuffled to the partition of their
   first document, which attaches its id (and text), then to the partition
   of the second; there each candidate is verified (one library call, see
   DedupPolicy) and the pairs are written.
4. clusters: connected components by min-label propagation over vertex
   partitions (the partitions of stage 1, each holding only its documents
   that have a pair, and their edges); a label only ever moves along an
   edge, so no process holds all edges or all documents. The label found
   is the smallest global id of the component: its first document.
5. output: every worker writes DIR/part-NNNNN.*; then the client writes
   DIR/summary.json and DIR/_SUCCESS last.

With `simhash dedup`'s default decision (no -k, no --verify, no
fingerprint option), stages 1 to 3 sketch the texts and pair them by band
keys instead (simhash._dask_near), exact duplicates collapsed first for
clusters, keep and drop.

Invariants: (1) a task's result depends only on its inputs, so Dask may
re-run any task (a lost worker) and the output is the same; (2) a part file
is written to a temporary name and renamed, so a part is whole or absent;
(3) _SUCCESS is written only after every part and the summary.
"""
import argparse
import glob
import json
import math
import operator
import os
import sys
import tempfile
import time

import numpy as np

from . import _blocks, _core
from . import _dask_near as _near_stages

PROG = "simhash-dask"
FILES_PER_PART = 64
DEFAULT_BLOCKSIZE = 64 << 20
DEFAULT_MAX_GROUP = 100000
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3

# The fingerprint options of `simhash fingerprint`, by their command-line
# names; what each takes and its values come from the library's table
# (simhash_config_set, simhash_config_value_name).
FP_OPTIONS = ("bits", "compat", "features", "ngram", "ngram-cjk", "tokenizer", "hash", "weight",
              "tf-cap", "stopwords", "idf", "casefold", "no-casefold", "html", "no-html", "t2s",
              "no-t2s", "space", "punct", "max-repeat", "utf8", "char-votes", "scheme")
FILE_OPTIONS = ("stopwords", "idf", "scheme")


class JobError(Exception):
    """A failure to report as `simhash-dask: MESSAGE` with an exit status."""

    def __init__(self, message, status=EXIT_FAIL):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- the dedup policy
#
# The one place that decides the candidate distance and how a candidate pair
# is verified. `simhash dedup` today: -k defaults to 5 (13 with --verify), scaled
# by the width (x2 at 128 bits, /2 at 32); --verify SIM:T keeps a pair whose
# exact similarity (jaccard or cosine of the verify features) is >= T.


class DedupPolicy:
    """What decides a pair, as `simhash dedup` (cli/cmd_dedup.c) chooses it:
    with near, the default, the exact similarity of the two texts
    (simhash_near_*, stages in simhash._dask_near); else fingerprints within
    k, and with verify an exact similarity of the candidates."""

    DEFAULT_K = 5
    DEFAULT_K_VERIFY = 13

    def __init__(self, bits, k=None, verify=None, verify_features=None, near=False):
        self.near = near
        self.bits = bits
        self.how, self.threshold = verify if verify else (None, None)
        if k is None:
            k = (self.DEFAULT_K_VERIFY if verify else self.DEFAULT_K) * \
                (2 if bits == 128 else 1) // (2 if bits == 32 else 1)
        self.k = k
        self.vopts = _verify_config_opts(verify_features) if verify else None

    @property
    def verifies(self):
        return self.how is not None

    def verify_config(self):
        return _core.Config(**self.vopts)

    def check(self, vconfig, text_a, text_b):
        """The similarity of a candidate pair if it is kept, else None: one
        call into the library (simhash_text_similarity)."""
        cos, jac = vconfig.text_similarity(text_a, text_b)
        sim = jac if self.how == "jaccard" else cos
        return sim if sim >= self.threshold else None


def _verify_config_opts(spec):
    """The verify features' config, as `simhash dedup` builds it: word
    3-shingles by default, simple tokens, no t2s, tf weights."""
    opts = dict(features="shingle", ngram=3, tokenizer="simple", t2s=False, weight="tf")
    if spec is None:
        return opts
    if spec == "word":
        opts["features"] = "word"
        return opts
    for prefix, feat in (("shingle", "shingle"), ("char", "char")):
        if spec.startswith(prefix):
            rest = spec[len(prefix):]
            if rest and not (rest.isdigit() and 1 <= int(rest) <= 64):
                break
            opts["features"] = feat
            opts["ngram"] = int(rest) if rest else 3
            opts["ngram_cjk"] = 0
            return opts
    raise JobError("dedup: invalid --verify-features '%s' (expected shingleN, word or charN)"
                   % spec, EXIT_USAGE)


# ---------------------------------------------------------------- small helpers


def _display(path):
    return "<stdin>" if path == "-" else path


def _json_str(b):
    """A JSON string of id bytes exactly as the command writes it: invalid
    UTF-8 as U+FFFD, \\" \\\\ \\n \\t \\r and \\u00XX for other controls."""
    s = b.decode("utf-8", "replace")
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _format_real(v):
    """A JSON real id as jansson's caller formats it: the shortest of
    %.15g..%.17g that reads back exactly."""
    for prec in (15, 16):
        s = "%.*g" % (prec, v)
        if float(s) == v:
            return s
    return "%.17g" % v


def _write_atomic(path, chunks):
    """Writes byte chunks to path through a temporary file in its folder."""
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _threads(job):
    """C threads for one partition's fingerprints: the cluster's threads over
    the partitions (Dask already runs one task per worker thread), at most
    this worker's threads."""
    try:
        from distributed import get_worker
        w = get_worker()
        mine = max(1, int(getattr(w, "state", w).nthreads))
    except Exception:
        mine = 1
    return max(1, min(mine, job.get("c_threads", 1)))


# ---------------------------------------------------------------- reading partitions


def _open(path):
    import fsspec
    return fsspec.open(path, "rb", compression="infer").open()


def _read_block(spec):
    """The bytes of a partition: the lines that start in [start, end) of a
    plain file, or a whole compressed file."""
    with _open(spec["path"]) as f:
        if spec["whole"]:
            return f.read()
        start, end = spec["start"], spec["end"]
        if start:
            f.seek(start - 1)
            f.readline()  # the line that starts before the block ends at or after start - 1
        pos = f.tell()
        if pos >= end:
            return b""
        data = f.read(end - pos)
        if data and not data.endswith(b"\n"):
            data += f.readline()
        return data


def _count_lines(spec):
    return _read_block(spec).count(b"\n")


def _lines(data):
    """(lines without '\\n', records with it) of a block."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
        return lines, True
    return lines, False


def _parse_jsonl(line, text_field, id_field, replace):
    """(text bytes, id bytes or None), None for a blank line; raises
    ValueError(message) for a bad record, as cli/jsonl.c words it."""
    if not line.strip(b" \t\r"):
        return None
    try:
        s = line.decode("utf-8")
    except UnicodeDecodeError as e:
        if not replace:
            raise ValueError("invalid UTF-8 at byte %d" % e.start) from None
        s = line.decode("utf-8", "replace")
    big = []

    def parse_int(t):
        v = int(t)
        if not -2**63 <= v < 2**63:
            big.append(v)
        return v

    def bad_constant(name):
        raise ValueError("invalid JSON: invalid token near '%s'" % name)

    try:
        rec = json.loads(s, parse_int=parse_int, parse_constant=bad_constant)
    except ValueError as e:
        msg = str(e)
        raise ValueError(msg if msg.startswith("invalid JSON") else "invalid JSON: " + msg) \
            from None
    except RecursionError:
        raise ValueError("invalid JSON: too deeply nested") from None
    if not isinstance(rec, dict):
        raise ValueError("expected a JSON object")
    if text_field not in rec:
        raise ValueError('missing field "%s"' % text_field)
    text = rec[text_field]
    if not isinstance(text, str):
        raise ValueError('field "%s" is not a string' % text_field)
    try:
        tb = text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError('invalid JSON: invalid Unicode escape in field "%s"' % text_field) \
            from None
    v = rec.get(id_field)
    if v is None:
        return tb, None
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError('field "%s" is not a string or a number' % id_field)
    if isinstance(v, str):
        try:
            return tb, v.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError('invalid JSON: invalid Unicode escape in field "%s"' % id_field) \
                from None
    if isinstance(v, int) and not big:
        return tb, str(v).encode()
    return tb, _format_real(float(v)).encode()


def _docs(spec, job, data):
    """The documents of a partition: a list of (line index in the block,
    text bytes, id bytes) and a list of bad records (line number, message)."""
    mode = job["mode"]
    docs, bad = [], []
    if mode == "files":
        for j, path in enumerate(spec["files"]):
            docs.append((j, None, path.encode()))
        return docs, bad
    lines, _ = _lines(data)
    first = spec["first_line"]
    multi = job["multi"]
    disp = _display(spec["display"])
    for j, line in enumerate(lines):
        no = first + j
        if mode == "lines":
            text = line[:-1] if line.endswith(b"\r") else line
            ident = None
        else:
            try:
                r = _parse_jsonl(line[:-1] if line.endswith(b"\r") else line, job["text_field"],
                                 job["id_field"], job["utf8_replace"])
            except ValueError as e:
                bad.append((no, str(e)))
                if not job["keep_going"]:
                    break
                continue
            if r is None:
                continue
            text, ident = r
        if ident is None:  # the line number, with the file's name when there are several
            ident = ("%s:%d" % (disp, no) if multi else "%d" % no).encode()
        docs.append((j, text, ident))
    return docs, bad


def _texts(spec, job, data, docs):
    """The texts of docs (files mode reads each file)."""
    if job["mode"] != "files":
        return [d[1] for d in docs]
    out = []
    for path in spec["files"]:
        with _open(path) as f:
            out.append(f.read())
    return out


def _pack_ids(ids):
    off = np.zeros(len(ids) + 1, dtype=np.uint64)
    if ids:
        np.cumsum(np.fromiter(map(len, ids), dtype=np.uint64, count=len(ids)), out=off[1:])
    return b"".join(ids), off


def fingerprint_part(spec, job):
    """Stage 1 for one partition: {"fps", "lidx", "ids", "ids_off", "n",
    "bad", "error", "bytes"}; a file that cannot be read is an error."""
    try:
        return _fingerprint_part(spec, job)
    except OSError as e:
        where = e.filename or spec["display"]
        return {"fps": np.zeros(0, np.uint64), "lidx": np.zeros(0, np.uint32), "ids": b"",
                "ids_off": np.zeros(1, np.uint64), "n": 0, "bytes": 0, "bad": [],
                "error": "%s: %s" % (where, e.strerror or e)}


def _fingerprint_part(spec, job):
    if job["mode"] == "fingerprints":
        return _fingerprint_text_form(spec, job)
    data = b"" if job["mode"] == "files" else _read_block(spec)
    cfg = job["config"]
    docs, bad = _docs(spec, job, data)
    texts = _texts(spec, job, data, docs)
    error = None
    if bad and not job["keep_going"]:
        error = "%s:%d: %s" % (_display(spec["display"]), bad[0][0], bad[0][1])
        docs, texts = [], []
    near = job["policy"].near
    while True:
        ends = np.zeros(len(texts), dtype=np.uint64)
        if texts:
            np.cumsum(np.fromiter(map(len, texts), dtype=np.uint64, count=len(texts)), out=ends)
        try:
            if near:
                sk = _near_stages.sketch_texts(texts)
                fps = np.zeros(0, np.uint64)
            else:
                fps = _blocks.fingerprint_blob(cfg, b"".join(texts), ends, _threads(job))
            break
        except _core.Error as e:
            i = e.index
            where = (spec["files"][docs[i][0]] if job["mode"] == "files" else
                     "%s:%d" % (_display(spec["display"]), spec["first_line"] + docs[i][0]))
            if not job["keep_going"]:
                error = "%s: %s" % (where, e)
                docs, texts = [], []
                continue
            bad.append((where if job["mode"] == "files" else spec["first_line"] + docs[i][0],
                        str(e)))
            del docs[i]
            del texts[i]
    blob, off = _pack_ids([d[2] for d in docs])
    part = {"fps": fps, "lidx": np.array([d[0] for d in docs], dtype=np.uint32),
            "ids": blob, "ids_off": off, "n": len(docs), "bytes": sum(map(len, texts)),
            "error": error,
            "bad": [("%s:%s" % (_display(spec["display"]), no) if isinstance(no, int) else no,
                     msg) for no, msg in bad]}
    if near:
        part["kinds"], part["koff"], part["keys"], part["bands"] = sk
    return part


def _explain_fp_line(line, bits):
    """Why a text-form line is wrong, as `simhash pairs` says it."""
    if line.endswith(b"\r"):
        line = line[:-1]
    tab = line.find(b"\t")
    digits = tab if tab >= 0 else len(line)
    ok = all(chr(c) in "0123456789abcdefABCDEF" for c in line[:digits])
    if not line:
        return "empty line (expected HEX<TAB>ID)"
    if tab < 0:
        return "malformed line (expected HEX<TAB>ID)"
    if ok and digits in (8, 16, 32):
        return "a %d-bit fingerprint among %d-bit ones (widths cannot be mixed)" % (digits * 4,
                                                                                    bits)
    return "malformed fingerprint (expected 8, 16 or 32 hex digits, then a tab)"


def _fingerprint_text_form(spec, job):
    data = _read_block(spec)
    bits = job["bits"]
    digits = bits // 4
    bad = []
    chunks_w, chunks_i, lidx = [], [], []
    base_line = 0
    rest = data
    error = None
    while True:
        try:
            w, ids = _blocks.parse_text_form(rest, digits)
            chunks_w.append(w)
            chunks_i.append(ids + np.uint64(len(data) - len(rest)))
            lidx.append(np.arange(base_line, base_line + len(ids) // 2, dtype=np.uint32))
            break
        except ValueError as e:
            lines = rest.split(b"\n", e.line)
            line = lines[e.line - 1]
            no = spec["first_line"] + base_line + e.line - 1
            msg = "%s:%d: %s" % (_display(spec["display"]), no, _explain_fp_line(line, bits))
            head = b"\n".join(lines[:e.line - 1])
            if e.line > 1:
                head += b"\n"
                w, ids = _blocks.parse_text_form(head, digits)
                chunks_w.append(w)
                chunks_i.append(ids + np.uint64(len(data) - len(rest)))
                lidx.append(np.arange(base_line, base_line + len(ids) // 2, dtype=np.uint32))
            if not job["keep_going"]:
                error = msg
                break
            bad.append(("%s:%d" % (_display(spec["display"]), no), _explain_fp_line(line, bits)))
            skip = len(head) + len(line) + 1
            base_line += e.line
            rest = rest[skip:]
            if not rest:
                break
    fps = np.concatenate(chunks_w) if chunks_w else np.zeros(0, np.uint64)
    bounds = np.concatenate(chunks_i) if chunks_i else np.zeros(0, np.uint64)
    n = len(bounds) // 2
    if error:
        fps, bounds, n = np.zeros(0, np.uint64), np.zeros(0, np.uint64), 0
    # ids are re-read from the block when needed: only the fingerprints stay
    return {"fps": fps, "lidx": np.concatenate(lidx) if lidx and not error else
            np.zeros(0, np.uint32), "ids": None, "ids_off": None, "n": n, "bytes": len(data),
            "error": error, "bad": bad}


def part_meta(part):
    return {"n": part["n"], "error": part["error"], "bad": part["bad"], "bytes": part["bytes"]}


def _part_ids(part, spec, job, local):
    """The id bytes of documents `local` (indexes into the partition)."""
    if part["ids"] is not None:
        blob, off = part["ids"], part["ids_off"]
        return [blob[int(off[i]):int(off[i + 1])] for i in local]
    data = _read_block(spec)
    if part["bad"]:  # lines were skipped: find each id by its line
        return _ids_by_line(data, part, local)
    # only the wanted lines' breaks are found, in ascending order
    uniq, inv = np.unique(np.asarray(local, dtype=np.uint64), return_inverse=True)
    bounds = _blocks.line_ids(data, job["bits"] // 4, uniq)
    ids = [data[int(bounds[2 * j]):int(bounds[2 * j + 1])] for j in range(len(uniq))]
    return [ids[j] for j in inv]


def _ids_by_line(data, part, local):
    lines, _ = _lines(data)
    out = []
    for i in local:
        line = lines[int(part["lidx"][i])]
        if line.endswith(b"\r"):
            line = line[:-1]
        out.append(line[line.index(b"\t") + 1:])
    return out


def _part_texts(part, spec, job, local):
    """The texts of documents `local` of a partition, re-read."""
    if job["mode"] == "files":
        out = []
        for i in local:
            with _open(spec["files"][int(part["lidx"][i])]) as f:
                out.append(f.read())
        return out
    lines, _ = _lines(_read_block(spec))
    out = []
    for i in local:
        line = lines[int(part["lidx"][i])]
        if line.endswith(b"\r"):
            line = line[:-1]
        if job["mode"] == "lines":
            out.append(line)
        else:
            out.append(_parse_jsonl(line, job["text_field"], job["id_field"],
                                    job["utf8_replace"])[0])
    return out


# ---------------------------------------------------------------- stage 2: pairs


def _key_counts(lo, hi, bits, k):
    """(keys, counts) of the block values of one table: a bincount when a
    block has at most 24 bits (k >= 2 at 64 bits), else a sort."""
    width = -(-bits // _blocks.n_blocks(k))
    if width <= 24:
        c = np.bincount(lo.astype(np.int64), minlength=1 << width)
        keys = np.nonzero(c)[0].astype(np.uint64)
        return keys, np.zeros(len(keys), np.uint64), c[keys.astype(np.int64)]
    if not hi.any():
        u, c = np.unique(lo, return_counts=True)
        return u, np.zeros(len(u), np.uint64), c
    pairs = np.stack([lo, hi], axis=1).view([("lo", np.uint64), ("hi", np.uint64)])
    u, c = np.unique(pairs.reshape(-1), return_counts=True)
    return u["lo"].copy(), u["hi"].copy(), c


def heavy_candidates(part, job, threshold):
    """Per table, the block values held by at least `threshold` of this
    partition's fingerprints: a key held by more than max_group fingerprints
    overall is held by at least max_group / P of some partition's
    (pigeonhole), so these candidates cover every heavy key."""
    out = []
    for t in range(_blocks.n_blocks(job["k"])):
        lo, hi = _blocks.block_keys(part["fps"], job["bits"], job["k"], t)
        if not len(lo):
            out.append([])
            continue
        klo, khi, c = _key_counts(lo, hi, job["bits"], job["k"])
        sel = np.nonzero(c >= threshold)[0]
        out.append([(int(klo[i]), int(khi[i])) for i in sel])
    return out


def count_keys(part, job, wanted):
    """Per table, how many of this partition's fingerprints hold each key of
    wanted[table] (a sorted list of (lo, hi)): the candidates' exact counts."""
    out = []
    for t, keys in enumerate(wanted):
        if not keys or not part["n"]:
            out.append([0] * len(keys))
            continue
        lo, hi = _blocks.block_keys(part["fps"], job["bits"], job["k"], t)
        if not any(h for _, h in keys) and not hi.any():
            w = np.array([a for a, _ in keys], dtype=np.uint64)  # sorted
            idx = np.minimum(np.searchsorted(w, lo), len(w) - 1)
            hit = w[idx] == lo
            out.append([int(x) for x in np.bincount(idx[hit], minlength=len(w))])
            continue
        out.append([int(np.count_nonzero((lo == np.uint64(a)) & (hi == np.uint64(b))))
                    for a, b in keys])
    return out


def route(part, base, job, table, heavy, n_buckets):
    """Table `table`'s records of one partition, cut into n_buckets pieces:
    each a dict of fps, gids and (for split keys) cells and sides. The
    records of keys that are not split go in one pass in C (_blocks.route());
    those of split keys, a few percent on biased bits, meet here."""
    fps = part["fps"]
    bits = job["bits"]
    nw = 2 if bits == 128 else 1
    normal, heavy_recs = _blocks.route(fps, bits, job["k"], table, base, n_buckets, heavy)
    extra = []  # (bucket, fps, gids, cells, sides) of split keys
    if len(heavy_recs):
        idx_all = heavy_recs.astype(np.int64)
        hf = fps.reshape(-1, nw)[idx_all]
        hg = heavy_recs + np.uint64(base)
        lo, hi = _blocks.block_keys(hf.reshape(-1), bits, job["k"], table)
        h = _blocks.splitmix(lo ^ _blocks.splitmix(hi ^ np.uint64(table)))
        for (klo, khi), r in heavy.items():
            idx = np.nonzero((lo == np.uint64(klo)) & (hi == np.uint64(khi)))[0]
            if not len(idx):
                continue
            sub = (_blocks.splitmix(hg[idx]) % np.uint64(r)).astype(np.int64)
            for j in range(r):
                a = np.minimum(sub, j)
                b = np.maximum(sub, j)
                cell = ((a * r + b + 1).astype(np.uint64) << np.uint64(1)) | \
                    (a != b).astype(np.uint64)
                side = (sub != a).astype(np.uint8)
                hb = (_blocks.splitmix(h[idx] ^ _blocks.splitmix(cell)) %
                      np.uint64(n_buckets)).astype(np.int64)
                extra.append((hb, hf[idx], hg[idx], cell, side))
    pieces = []
    for j in range(n_buckets):
        piece = {"fps": normal[j][0], "gids": normal[j][1]}
        if extra:
            hf_j = [x[1][x[0] == j] for x in extra]
            piece["hfps"] = np.concatenate(hf_j).reshape(-1) if hf_j else np.zeros(0, np.uint64)
            piece["hgids"] = np.concatenate([x[2][x[0] == j] for x in extra])
            piece["hcells"] = np.concatenate([x[3][x[0] == j] for x in extra])
            piece["hsides"] = np.concatenate([x[4][x[0] == j] for x in extra])
        pieces.append(piece)
    return pieces


def compare(job, table, *pieces):
    """The pairs of one bucket of table `table`: {"a", "b", "d"} arrays."""
    fps = [p["fps"] for p in pieces]
    gids = [p["gids"] for p in pieces]
    n_normal = sum(len(g) for g in gids)
    cells = sides = None
    if any("hgids" in p for p in pieces):
        fps += [p["hfps"] for p in pieces if "hgids" in p]
        gids += [p["hgids"] for p in pieces if "hgids" in p]
        n_heavy = sum(len(p["hgids"]) for p in pieces if "hgids" in p)
        cells = np.concatenate([np.zeros(n_normal, np.uint64)] +
                               [p["hcells"] for p in pieces if "hgids" in p])
        sides = np.concatenate([np.zeros(n_normal, np.uint8)] +
                               [p["hsides"] for p in pieces if "hgids" in p])
        assert len(cells) == n_normal + n_heavy
    fps = np.concatenate(fps) if fps else np.zeros(0, np.uint64)
    gids = np.concatenate(gids) if gids else np.zeros(0, np.uint64)
    a, b, d = _blocks.block_pairs(fps, gids, job["bits"], job["k"], table, cells, sides)
    return {"a": a, "b": b, "d": d}


# ---------------------------------------------------------------- shuffles of pair chunks


def _owner(bounds, g):
    """The partition of each global id: bounds[p] <= g < bounds[p + 1]."""
    return np.searchsorted(bounds, g, side="right") - 1


def split_by(chunk, field, bounds):
    """A pair chunk cut into one piece per partition of chunk[field]."""
    n_parts = len(bounds) - 1
    if not len(chunk["a"]):
        return [None] * n_parts
    own = _owner(bounds, chunk[field])
    if n_parts <= 65535:
        own = own.astype(np.uint16)  # radix sorted
    order = np.argsort(own, kind="stable")
    cuts = np.searchsorted(own[order], np.arange(n_parts + 1))
    out = []
    for p in range(n_parts):
        s, e = cuts[p], cuts[p + 1]
        if s == e:
            out.append(None)
            continue
        sel = order[s:e]
        piece = {}
        for key, v in chunk.items():
            piece[key] = v[sel] if isinstance(v, np.ndarray) else [v[i] for i in sel]
        out.append(piece)
    return out


def _concat(pieces):
    pieces = [p for p in pieces if p is not None]
    if not pieces:
        return {"a": np.zeros(0, np.uint64), "b": np.zeros(0, np.uint64),
                "d": np.zeros(0, np.uint32)}
    out = {}
    for key in pieces[0]:
        if isinstance(pieces[0][key], np.ndarray):
            out[key] = np.concatenate([p[key] for p in pieces])
        else:
            out[key] = [x for p in pieces for x in p[key]]
    return out


def attach(part, spec, job, base, field, want_text, *pieces):
    """The pairs whose document `field` ("a" or "b") is in this partition,
    with that document's id (and text) attached."""
    chunk = _concat(pieces)
    local = (chunk[field] - np.uint64(base)).astype(np.int64)
    if len(local):
        uniq, inv = np.unique(local, return_inverse=True)
        ids = _part_ids(part, spec, job, uniq)
        chunk["id" + field] = [ids[i] for i in inv]
        if want_text:
            texts = _part_texts(part, spec, job, uniq)
            chunk["t" + field] = [texts[i] for i in inv]
    else:
        chunk["id" + field] = []
        if want_text:
            chunk["t" + field] = []
    return chunk


def finish_pairs(chunk, job, out_path):
    """Verifies the pairs (with --verify), writes them to out_path if the
    output is pairs, and returns the kept edges {"a", "b"} and their count."""
    policy = job["policy"]
    n = len(chunk["a"])
    keep = np.ones(n, dtype=bool)
    sims = None
    if policy.verifies and n:
        vcfg = policy.verify_config()
        sims = []
        for i in range(n):
            s = policy.check(vcfg, chunk["ta"][i], chunk["tb"][i])
            if s is None:
                keep[i] = False
            sims.append(s)
    if out_path is not None:
        lines = []
        for i in range(n):
            if not keep[i]:
                continue
            line = b"%s\t%s\t%d" % (chunk["ida"][i], chunk["idb"][i], chunk["d"][i])
            if sims is not None:
                line += b"\t%.6f" % sims[i]
            lines.append(line + b"\n")
        _write_atomic(out_path, lines)
    return {"a": chunk["a"][keep], "b": chunk["b"][keep], "n": int(keep.sum())}


def attach_near(part, spec, job, base, field, *pieces):
    """As attach(), for the default decision: the pairs whose document
    `field` is here, each once, with that document's id and sketch."""
    chunk = _concat(pieces)
    chunk.pop("d", None)
    if field == "a":
        chunk = _near_stages.unique_pairs(chunk)
    local = (chunk[field] - np.uint64(base)).astype(np.int64)
    if len(local):
        uniq, inv = np.unique(local, return_inverse=True)
        ids = _part_ids(part, spec, job, uniq)
        chunk["id" + field] = [ids[i] for i in inv]
    else:
        chunk["id" + field] = []
    return _near_stages.attach_sketches(part, base, field, chunk)


def finish_near(chunk, job, out_path):
    """The default decision on each pair (simhash_near_decide); the near ones
    written to out_path if the output is pairs; returns them as edges."""
    n = len(chunk["a"])
    keep = np.zeros(n, dtype=bool)
    lines = []
    for i in range(n):
        near, sim = _near_stages.decide(int(chunk["kinda"][i]), chunk["ka"][i],
                                        int(chunk["kindb"][i]), chunk["kb"][i])
        if near:
            keep[i] = True
            if out_path is not None:
                lines.append(_near_stages.line(chunk["ida"][i], chunk["idb"][i], sim))
    if out_path is not None:
        _write_atomic(out_path, lines)
    return {"a": chunk["a"][keep], "b": chunk["b"][keep], "n": int(keep.sum())}


def members_near(state, part, spec, job, base, bounds):
    """Every vertex as (root, gid, id, sketch), cut by the root's partition."""
    verts, label = state["verts"], state["label"]
    local = (verts - np.uint64(base)).astype(np.int64)
    ids = _part_ids(part, spec, job, local) if len(local) else []
    sk = [_near_stages._sketch_of(part, int(i)) for i in local]
    return split_by({"a": label, "b": verts, "id": ids, "fp": sk}, "a", bounds)


def write_clusters_near(clusters, first_number, out_path):
    """As write_clusters(), each member with its similarity to the first."""
    lines = []
    for n, cl in enumerate(clusters):
        root = cl[0][2]
        mem = ",".join(_near_stages.member(_json_str(ident), _near_stages.decide(
            root[0], root[1], sk[0], sk[1])[1]) for _, ident, sk in cl)
        lines.append(('{"cluster":%d,"size":%d,"members":[%s]}\n'
                      % (first_number + n, len(cl), mem)).encode())
    _write_atomic(out_path, lines)
    return len(clusters)


# ---------------------------------------------------------------- stage 4: components


def vertex_state(bounds, p, *pieces):
    """Partition p's documents that have an edge: their sorted global ids,
    each one's label (itself at first) and the edges leaving them."""
    ch = _concat(pieces)
    u = ch["a"].astype(np.uint64)
    v = ch["b"].astype(np.uint64)
    verts = np.unique(u)
    return {"verts": verts, "label": verts.copy(), "eu": u, "ev": v,
            "active": np.ones(len(verts), dtype=bool)}


def orient(edges, bounds):
    """The edges both ways, cut by the partition of their first end."""
    both = {"a": np.concatenate([edges["a"], edges["b"]]),
            "b": np.concatenate([edges["b"], edges["a"]])}
    return split_by(both, "a", bounds)


def propose(state, bounds):
    """Each active vertex offers its label to its neighbours, one piece per
    partition of the neighbour."""
    verts, label = state["verts"], state["label"]
    pos = np.searchsorted(verts, state["eu"])
    sel = state["active"][pos] if len(pos) else np.zeros(0, dtype=bool)
    offers = {"a": state["ev"][sel], "b": label[pos[sel]]}
    return split_by(offers, "a", bounds)


def absorb(state, *pieces):
    """Takes the smallest label offered to each vertex; a vertex whose label
    fell is active in the next round."""
    offers = _concat(pieces)
    label = state["label"].copy()
    if len(offers["a"]):
        pos = np.searchsorted(state["verts"], offers["a"])
        np.minimum.at(label, pos, offers["b"].astype(np.uint64))
    active = label < state["label"]
    return {"verts": state["verts"], "label": label, "eu": state["eu"], "ev": state["ev"],
            "active": active}


def n_active(state):
    return int(state["active"].sum())


def members(state, part, spec, job, base, bounds):
    """Every vertex as (root, gid, id, fingerprint), cut by the root's partition."""
    verts, label = state["verts"], state["label"]
    local = (verts - np.uint64(base)).astype(np.int64)
    ids = _part_ids(part, spec, job, local) if len(local) else []
    nw = 2 if job["bits"] == 128 else 1
    fps = part["fps"].reshape(-1, nw)[local] if len(local) else np.zeros((0, nw), np.uint64)
    ch = {"a": label, "b": verts, "id": ids, "fp": list(fps)}
    return split_by(ch, "a", bounds)


def group_clusters(*pieces):
    """The clusters rooted in this partition: sorted by root, members sorted."""
    ch = _concat(pieces)
    if not len(ch["a"]):
        return []
    order = np.lexsort((ch["b"], ch["a"]))
    clusters = []
    cur = None
    for i in order:
        root = int(ch["a"][i])
        if root != cur:
            clusters.append([])
            cur = root
        clusters[-1].append((int(ch["b"][i]), ch["id"][i], ch["fp"][i]))
    return clusters


def write_clusters(clusters, first_number, out_path):
    lines = []
    for n, cl in enumerate(clusters):
        root_fp = cl[0][2]
        mem = ",".join('{"id":%s,"dist":%d}' % (
            _json_str(ident), sum(bin(int(x) ^ int(y)).count("1") for x, y in zip(root_fp, fp)))
            for _, ident, fp in cl)
        lines.append(('{"cluster":%d,"size":%d,"members":[%s]}\n'
                      % (first_number + n, len(cl), mem)).encode())
    _write_atomic(out_path, lines)
    return len(clusters)


def write_records(part, spec, job, base, state, keep, out_path):
    """The records of this partition to keep (first of a cluster, or alone)
    or to drop, byte for byte, in input order."""
    n = part["n"]
    dropped = np.zeros(n, dtype=bool)
    if state is not None and len(state["verts"]):
        sel = state["label"] != state["verts"]
        dropped[(state["verts"][sel] - np.uint64(base)).astype(np.int64)] = True
    want = ~dropped if keep else dropped
    out = []
    if job["mode"] == "files":
        for i in np.nonzero(want)[0]:
            out.append(spec["files"][int(part["lidx"][i])].encode() + b"\n")
    else:
        data = _read_block(spec)
        lines, ends_nl = _lines(data)
        last = len(lines) - 1
        for i in np.nonzero(want)[0]:
            j = int(part["lidx"][i])
            out.append(lines[j] + (b"\n" if j < last or ends_nl else b""))
    _write_atomic(out_path, out)
    return int(dropped.sum())


# ---------------------------------------------------------------- the client


def _build_parser():
    from ._native import lib  # the library's option table
    p = argparse.ArgumentParser(
        prog=PROG + " dedup", add_help=False,
        description="Finds the near-duplicate documents among the INPUTs on a Dask cluster "
                    "and writes what `simhash dedup` writes for their concatenation, as "
                    "DIR/part-NNNNN.* files, then DIR/summary.json and DIR/_SUCCESS.")
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="paths, globs (expanded in sorted order) or fsspec URLs; .gz read "
                        "compressed")
    p.add_argument("-o", "--out", metavar="DIR", help="output folder (required; must not "
                   "exist or be empty)")
    g = p.add_argument_group("input")
    g.add_argument("--lines", action="store_true", help="one document per line")
    g.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    g.add_argument("--fingerprints", action="store_true",
                   help="text-form HEX<TAB>ID files: write what `simhash pairs` writes")
    g.add_argument("--text-field", default="text", metavar="NAME")
    g.add_argument("--id-field", default="id", metavar="NAME")
    g = p.add_argument_group("dedup")
    g.add_argument("-k", "--max-dist", metavar="K",
                   help="largest Hamming distance of a candidate pair (default 5; 13 with "
                        "--verify; 3 with --fingerprints)")
    g.add_argument("--verify", metavar="SIM:T",
                   help="keep pairs whose exact similarity is >= T: jaccard:T or cosine:T")
    g.add_argument("--verify-features", metavar="F",
                   help="features verified: shingle3 (default), word, charN, shingleN")
    g.add_argument("--near", action="store_true",
                   help="the default decision, by the exact similarity of the texts, stated: "
                        "an error with -k or --verify")
    g.add_argument("--output", default="pairs", metavar="WHAT",
                   help="pairs (default), clusters (JSON Lines), keep or drop (records)")
    g = p.add_argument_group("cluster")
    g.add_argument("--scheduler", metavar="ADDRESS", help="use a running Dask scheduler")
    g.add_argument("--workers", metavar="N",
                   help="start a LocalCluster of N worker processes (default: one per core)")
    g.add_argument("--blocksize", metavar="BYTES", default=str(DEFAULT_BLOCKSIZE),
                   help="bytes per partition of a plain file (default 64 MiB)")
    g.add_argument("--max-group", metavar="N", default=str(DEFAULT_MAX_GROUP),
                   help="split a block key held by more fingerprints than N (default %d)"
                        % DEFAULT_MAX_GROUP)
    g.add_argument("--keep-going", action="store_true",
                   help="skip bad records (listed in summary.json; exit status 3, no _SUCCESS)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary line")
    g.add_argument("-h", "--help", action="store_true", help="show this help")
    g = p.add_argument_group("fingerprint options (as `simhash fingerprint`)")
    for name in FP_OPTIONS:
        flags = ["--" + name] + (["-n"] if name == "ngram" else [])
        takes = 1 if name in FILE_OPTIONS else lib.simhash_config_option_takes_value(name.encode())
        if takes < 0:
            continue
        values = [v for v in _core._value_names(name)] if takes else []
        if name == "bits":
            values = ["32", "64", "128"]
        meta = "|".join(values) if values else ("FILE" if name in FILE_OPTIONS[:2] else
                                                "STRING" if name == "scheme" else "N")
        if takes:
            g.add_argument(*flags, dest="fp_" + name, action=_FpOption, metavar=meta)
        else:
            g.add_argument(*flags, dest="fp_" + name, action=_FpOption, nargs=0)
    return p


class _FpOption(argparse.Action):
    """Collects fingerprint options in command-line order."""

    def __call__(self, parser, ns, values, option_string=None):
        name = self.dest[3:]
        lst = getattr(ns, "fp_options", None)
        if lst is None:
            lst = []
            ns.fp_options = lst
        lst.append((name, values if self.nargs != 0 else None))


def _usage_error(msg):
    raise JobError(msg, EXIT_USAGE)


def _int_arg(value, name, lo, hi):
    try:
        v = int(value)
    except (TypeError, ValueError):
        v = None
    if v is None or not lo <= v <= hi:
        _usage_error("dedup: invalid %s '%s' (expected %d to %d)" % (name, value, lo, hi))
    return v


def _config(opts):
    """The fingerprint Config of the options, as `simhash fingerprint` reads them."""
    kw, plain = {}, []
    names = [n for n, _ in opts]
    if "scheme" in names:
        others = [n for n in names if n not in ("scheme", "utf8", "idf", "stopwords")]
        if others:
            _usage_error("dedup: --scheme cannot be combined with --%s" % others[0])
    for name, value in opts:
        if name == "idf":
            kw["idf"] = value
        elif name == "stopwords":
            kw["stopwords"] = value
        elif name == "scheme":
            kw["scheme"] = value
        else:
            plain.append((name, value))
    for name, value in plain:
        cfg = _core.ffi.new("simhash_config *")
        _core.lib.simhash_config_init(cfg)
        if value is not None and _core.lib.simhash_config_set(cfg, name.encode(), value.encode()):
            vals = list(_core._value_names(name)) if name != "bits" else ["32", "64", "128"]
            _usage_error("dedup: invalid --%s '%s' (expected %s)"
                         % (name, value, "|".join(vals) if vals else "a number"))
    if plain:
        kw["options"] = plain
    if kw.get("idf") is not None and not os.path.exists(kw["idf"]) and kw["idf"] != "jieba":
        raise JobError("%s: No such file or directory" % kw["idf"])
    if kw.get("stopwords") is not None and not os.path.exists(kw["stopwords"]):
        raise JobError("%s: No such file or directory" % kw["stopwords"])
    try:
        return _core.Config(**kw)
    except _core.FileError as e:
        raise JobError(str(e)) from None
    except (ValueError, TypeError) as e:
        raise JobError("dedup: %s" % e, EXIT_USAGE) from None


def _expand(inputs):
    """Paths and globs, each glob expanded in sorted order (fsspec for URLs)."""
    out = []
    for arg in inputs:
        if any(c in arg for c in "*?["):
            if "://" in arg:
                import fsspec
                fs, _, paths = fsspec.get_fs_token_paths(arg)
                found = sorted(fs.unstrip_protocol(x) for x in paths)
            else:
                found = sorted(glob.glob(arg))
            if not found:
                raise JobError("%s: no such file" % arg)
            out.extend(found)
        else:
            out.append(arg)
    return out


def _size(path):
    import fsspec
    fs, p = fsspec.core.url_to_fs(path)
    try:
        if fs.isdir(p):
            raise JobError("%s: Is a directory" % path)
        return fs.size(p)
    except FileNotFoundError:
        raise JobError("%s: No such file or directory" % path) from None
    except PermissionError:
        raise JobError("%s: Permission denied" % path) from None


def _compressed(path):
    from fsspec.utils import infer_compression
    return infer_compression(path) is not None


def _plan_parts(paths, job, blocksize):
    specs = []
    if job["mode"] == "files":
        for p in paths:
            _size(p)
        for i in range(0, len(paths), FILES_PER_PART):
            specs.append({"files": paths[i:i + FILES_PER_PART], "path": paths[i],
                          "display": paths[i], "first_line": 0})
        return specs
    for i, p in enumerate(paths):
        size = _size(p)
        if _compressed(p) or size <= blocksize:
            specs.append({"path": p, "display": p, "whole": _compressed(p), "start": 0,
                          "end": size, "file": i, "first_line": 1})
            continue
        for s in range(0, size, blocksize):
            specs.append({"path": p, "display": p, "whole": False, "start": s,
                          "end": min(size, s + blocksize), "file": i, "first_line": 1})
    return specs


def _first_line(path):
    with _open(path) as f:
        return f.readline(64)


def _check_out_dir(d):
    if os.path.exists(d):
        if not os.path.isdir(d):
            raise JobError("%s: exists and is not a folder" % d)
        if os.listdir(d):
            raise JobError("%s: the output folder is not empty (a job ran into it?); empty it "
                           "or name another" % d)
    else:
        try:
            os.makedirs(d)
        except OSError as e:
            raise JobError("%s: %s" % (d, e.strerror)) from None


def _worker_identity(config):
    """Run on every worker: its library version and the scheme it gives the
    job's options."""
    from simhash import _core as core
    return {"version": core.version(), "scheme": config.scheme if config is not None else None}


def _task_seconds(dask_scheduler=None):
    """Run on the scheduler: the seconds its tasks spent, per kind of task
    and per activity (compute, transfer, ...)."""
    return {name: {k: round(v, 2) for k, v in tp.all_durations.items() if v >= 0.01}
            for name, tp in dask_scheduler.task_prefixes.items()}


def _peak_memory():
    """Run on every worker: its process's peak resident memory in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def _check_workers(client, config):
    want = {"version": _core.version(), "scheme": config.scheme if config else None}
    try:
        got = client.run(_worker_identity, config)
    except Exception as e:
        raise JobError("a worker cannot run simhash (is the module installed on every "
                       "node?): %s: %s" % (type(e).__name__, e)) from None
    if not got:
        raise JobError("the cluster has no workers")
    for addr, ident in sorted(got.items()):
        if ident["version"] != want["version"]:
            raise JobError("worker %s has libsimhash %s, this client %s: install the same "
                           "version on every node" % (addr, ident["version"], want["version"]))
        if ident["scheme"] != want["scheme"]:
            raise JobError("worker %s gives scheme %s for these options, this client %s"
                           % (addr, ident["scheme"], want["scheme"]))
    return len(got)


class _Stages:
    def __init__(self, quiet, client):
        self.times = {}
        self.quiet = quiet
        self.client = client
        self.tty = sys.stderr.isatty()

    def wait(self, name, futures):
        from distributed import progress, wait
        if not self.quiet and self.tty and futures:
            sys.stderr.write("%s:\n" % name)
            progress(futures)
            sys.stderr.write("\n")
        wait(futures)

    def time(self, name, t0):
        self.times[name] = round(self.times.get(name, 0) + time.time() - t0, 3)


def _start_client(args):
    from distributed import Client, LocalCluster
    if args.scheduler:
        return Client(args.scheduler, set_as_default=True), None
    n = _int_arg(args.workers, "--workers", 1, 1024) if args.workers else _core._cpu_count()
    cores = _core._cpu_count()
    cluster = LocalCluster(n_workers=n, threads_per_worker=max(1, cores // n), processes=True,
                           dashboard_address=None, silence_logs=50)
    return Client(cluster, set_as_default=True), cluster


def _submit_shuffle(client, inputs, split_fn, n_out, *args):
    """Splits each input future into n_out pieces; returns, per output j,
    the futures of piece j of every input."""
    splits = [client.submit(split_fn, x, *args) for x in inputs]
    return splits, [[client.submit(operator.getitem, s, j) for s in splits]
                    for j in range(n_out)]


def run(args):
    """Runs one job; returns its exit status."""
    if args.verify:
        how, _, t = args.verify.partition(":")
        try:
            thr = float(t)
        except ValueError:
            thr = -1
        if how not in ("jaccard", "cosine") or not 0 <= thr <= 1 or not t:
            _usage_error("dedup: invalid --verify '%s' (expected jaccard:T or cosine:T, T from "
                         "0 to 1)" % args.verify)
        verify = (how, thr)
    else:
        verify = None
    if args.verify_features and not verify:
        _usage_error("dedup: --verify-features needs --verify")
    if args.output not in ("pairs", "clusters", "keep", "drop"):
        _usage_error("dedup: unknown --output '%s' (expected pairs, clusters, keep or drop)"
                     % args.output)
    modes = [m for m in ("lines", "jsonl", "fingerprints") if getattr(args, m)]
    if len(modes) > 1:
        _usage_error("dedup: give one of --lines, --jsonl and --fingerprints")
    mode = modes[0] if modes else "files"
    if mode == "fingerprints":
        if verify or args.output != "pairs":
            _usage_error("dedup: --fingerprints writes pairs, without --verify")
        if getattr(args, "fp_options", None):
            _usage_error("dedup: --fingerprints takes no fingerprint options")
    near = mode != "fingerprints" and args.max_dist is None and not verify and \
        not getattr(args, "fp_options", None)
    if args.near and not near:
        _usage_error("dedup: --near decides by exact similarity: without -k, --verify or "
                     "--fingerprints")
    if not args.out:
        _usage_error("dedup: -o DIR is required")
    if not args.inputs:
        _usage_error("dedup: no INPUT (standard input cannot be shared with workers)")
    blocksize = _int_arg(args.blocksize, "--blocksize", 1, 1 << 50)
    max_group = _int_arg(args.max_group, "--max-group", 2, 1 << 40)
    paths = _expand(args.inputs)
    if mode == "fingerprints":
        config = None
        first = _first_line(paths[0]) if _size(paths[0]) else b""
        tab = first.find(b"\t")
        bits = tab * 4 if tab in (8, 16, 32) else 0
        if not bits:
            if not first:
                bits = 64
            else:
                raise JobError("%s:1: %s" % (paths[0], _explain_fp_line(first.rstrip(b"\n"),
                                                                         64)))
        k = 3 if args.max_dist is None else _int_arg(args.max_dist, "-k", 0, bits // 4)
        policy = DedupPolicy(bits, k)
        scheme = None
    else:
        config = _config(getattr(args, "fp_options", None) or [])
        bits = config.bits
        k = None if args.max_dist is None else _int_arg(args.max_dist, "-k", 0, 32)
        policy = DedupPolicy(bits, k, verify, args.verify_features, near=near)
        if not near and policy.k > bits // 4:
            _usage_error("dedup: -k %d is out of range for %d-bit fingerprints (0 to %d)"
                         % (policy.k, bits, bits // 4))
        if policy.verifies:
            try:
                policy.verify_config()
            except (ValueError, _core.Error) as e:
                raise JobError("dedup: verify: %s" % e) from None
        scheme = config.scheme
    job = {"mode": mode, "config": config, "bits": bits, "k": None if near else policy.k,
           "policy": policy,
           "multi": len(paths) > 1, "text_field": args.text_field, "id_field": args.id_field,
           "keep_going": args.keep_going,
           "utf8_replace": config is None or config._cfg.utf8 == _core.lib.SIMHASH_UTF8_REPLACE}
    specs = _plan_parts(paths, job, blocksize)
    _check_out_dir(args.out)
    out_dir = os.path.abspath(args.out)
    client, cluster = _start_client(args)
    try:
        return _run_job(client, args, job, specs, out_dir, scheme, max_group)
    except JobError:
        raise
    except Exception as e:  # a task failed: say what, leave no _SUCCESS
        raise JobError("dedup: %s: %s" % (type(e).__name__, e)) from None
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _run_job(client, args, job, specs, out_dir, scheme, max_group):
    t_start = time.time()
    n_workers = _check_workers(client, job["config"])
    job["c_threads"] = -(-sum(client.nthreads().values()) // max(1, len(specs)))
    st = _Stages(args.quiet, client)

    # 1. read and fingerprint
    t0 = time.time()
    if job["mode"] != "files":
        # line numbers of a file cut into several partitions: count each one's lines
        files = [s["file"] for s in specs]
        multi = [i for i, s in enumerate(specs) if files.count(s["file"]) > 1]
        if multi:
            counts = client.gather(client.map(_count_lines, [specs[i] for i in multi],
                                              pure=False))
            for i, c in zip(multi, counts):
                specs[i]["count"] = c
            for i in range(1, len(specs)):
                if files[i - 1] == files[i]:
                    specs[i]["first_line"] = specs[i - 1]["first_line"] + specs[i - 1]["count"]
    parts = client.map(fingerprint_part, specs, job=job, pure=False)
    st.wait("read and fingerprint", parts)
    metas = client.gather(client.map(part_meta, parts))
    st.time("fingerprint", t0)
    for m in metas:
        if m["error"]:
            raise JobError(m["error"])
    bad = [b for m in metas for b in m["bad"]]
    sizes = np.array([m["n"] for m in metas], dtype=np.uint64)
    bounds = np.zeros(len(specs) + 1, dtype=np.uint64)
    np.cumsum(sizes, out=bounds[1:])
    n_docs = int(bounds[-1])
    n_parts = len(specs)

    write = args.output == "pairs"
    if job["policy"].near:
        edges, dups, n_pairs, n_buckets = _near_pairs(client, args, job, parts, specs, bounds,
                                                       n_workers, st, out_dir)
    else:
        edges, n_pairs, n_buckets = _fp_pairs(client, args, job, parts, specs, bounds,
                                              n_workers, st, out_dir, max_group)
        dups = []
    k, bits = job["k"], job["bits"]

    n_clusters = n_dropped = None
    if job["mode"] != "fingerprints":
        # 4. connected components by min-label propagation (for pairs only
        # to count the clusters and the records kept, as the summary says)
        t0 = time.time()
        _, by_u = _submit_shuffle(client, edges + dups, orient, n_parts, bounds)
        states = [client.submit(vertex_state, bounds, p, *by_u[p]) for p in range(n_parts)]
        rounds = 0
        while True:
            rounds += 1
            _, offers = _submit_shuffle(client, states, propose, n_parts, bounds)
            states = [client.submit(absorb, states[p], *offers[p]) for p in range(n_parts)]
            active = sum(client.gather(client.map(n_active, states)))
            if not active:
                break
        st.time("components", t0)
        job_info_rounds = rounds
        # 5. clusters or records
        t0 = time.time()
        if args.output == "clusters":
            near = job["policy"].near
            mem = [client.submit(members_near if near else members, states[p], parts[p],
                                 specs[p], job, int(bounds[p]), bounds) for p in range(n_parts)]
            grouped = [client.submit(group_clusters, *[client.submit(operator.getitem, m, p)
                                                       for m in mem])
                       for p in range(n_parts)]
            counts = client.gather(client.map(len, grouped))
            firsts = np.concatenate([[1], 1 + np.cumsum(counts)])
            wrote = [client.submit(write_clusters_near if near else write_clusters,
                                   grouped[p], int(firsts[p]),
                                   os.path.join(out_dir, "part-%05d.jsonl" % p))
                     for p in range(n_parts)]
            st.wait("clusters", wrote)
            n_clusters = int(sum(client.gather(wrote)))
            n_dropped = None
        elif args.output in ("keep", "drop"):
            ext = "jsonl" if job["mode"] == "jsonl" else "txt"
            wrote = [client.submit(write_records, parts[p], specs[p], job, int(bounds[p]),
                                   states[p], args.output == "keep",
                                   os.path.join(out_dir, "part-%05d.%s" % (p, ext)))
                     for p in range(n_parts)]
            st.wait("records", wrote)
            n_dropped = int(sum(client.gather(wrote)))
        if args.output != "clusters":
            roots = client.gather([client.submit(_n_roots, s) for s in states])
            n_clusters = int(sum(r[0] for r in roots))
            n_dropped = int(sum(r[1] for r in roots))
        st.time("output", t0)
    else:
        job_info_rounds = 0

    summary = {"documents": n_docs, "pairs": int(n_pairs), "clusters": n_clusters,
               "kept": None if n_dropped is None else n_docs - n_dropped,
               "dropped": n_dropped, "k": k, "bits": bits, "scheme": scheme,
               "output": args.output, "verify": args.verify, "inputs": len(set(
                   s["path"] for s in specs)), "partitions": n_parts, "workers": n_workers,
               "buckets": n_buckets, "component_rounds": job_info_rounds,
               "bad_records": len(bad), "bad": [{"where": w, "error": e} for w, e in bad[:1000]],
               "seconds": dict(st.times, total=round(time.time() - t_start, 3))}
    try:  # where the workers' time went: seconds of compute, transfer, ... per task kind
        summary["task_seconds"] = client.run_on_scheduler(_task_seconds)
    except Exception:
        pass
    try:
        summary["worker_peak_memory"] = client.run(_peak_memory)
    except Exception:  # not on Linux: left out
        pass
    if args.output == "clusters":
        summary["kept"] = summary["dropped"] = None
    if n_clusters is not None and args.output == "clusters":
        roots = client.gather([client.submit(_n_roots, s) for s in states])
        summary["dropped"] = int(sum(r[1] for r in roots))
        summary["kept"] = n_docs - summary["dropped"]
    _write_atomic(os.path.join(out_dir, "summary.json"),
                  [json.dumps(summary, indent=1).encode() + b"\n"])
    if bad:
        for w, e in bad[:10]:
            sys.stderr.write("%s: skipped %s: %s\n" % (PROG, w, e))
        sys.stderr.write("%s: dedup: %d bad records skipped (summary.json lists them); no "
                         "_SUCCESS\n" % (PROG, len(bad)))
        return EXIT_SKIPPED
    _write_atomic(os.path.join(out_dir, "_SUCCESS"), [])
    if not args.quiet:
        sys.stderr.write("%s: dedup: %d documents, %d pairs%s, %.2f s\n" % (
            PROG, n_docs, n_pairs, "" if n_clusters is None else ", %d clusters" % n_clusters,
            time.time() - t_start))
    return EXIT_OK


def _fp_pairs(client, args, job, parts, specs, bounds, n_workers, st, out_dir, max_group):
    """Stages 2 and 3 by fingerprints: the pairs within k (verified with
    --verify), written for --output pairs; (edges, pair count, buckets)."""
    n_parts = len(specs)
    n_docs = int(bounds[-1])
    write = args.output == "pairs"
    t0 = time.time()
    k = job["k"]
    # about 6 million records a bucket: fewer pieces to route and fetch
    # (2 million made the job 5 to 8 % slower at 40 million)
    n_buckets = max(2 * n_workers, int(math.ceil(n_docs / 6e6)), 1)
    # the keys held more than max_group times: candidates from every
    # partition, then their exact counts (both small lists)
    threshold = max(2, max_group // max(1, n_parts))
    cands = client.gather(client.map(heavy_candidates, parts, job=job, threshold=threshold))
    wanted = [sorted({key for per_part in cands for key in per_part[t]})
              for t in range(_blocks.n_blocks(k))]
    exact = client.gather(client.map(count_keys, parts, job=job, wanted=wanted)) \
        if any(wanted) else []
    chunks = []
    window = []  # the tables in flight: two at a time, so that shuffles overlap
    for t in range(_blocks.n_blocks(k)):
        heavy = {}
        for i, key in enumerate(wanted[t]):
            c = sum(per_part[t][i] for per_part in exact)
            if c > max_group:
                heavy[key] = int(math.ceil(c / max_group))
        routed = [client.submit(route, part, int(bounds[p]), job, t, heavy, n_buckets)
                  for p, part in enumerate(parts)]
        pieces = [[client.submit(operator.getitem, r, j) for r in routed]
                  for j in range(n_buckets)]
        # only the results are kept: the scheduler frees each piece once used
        window.append([client.submit(compare, job, t, *pieces[j]) for j in range(n_buckets)])
        del routed, pieces
        if len(window) == 2:
            st.wait("pairs, table %d of %d" % (t, _blocks.n_blocks(k)), window[0])
            chunks.extend(window.pop(0))
    for w in window:
        st.wait("pairs, last table", w)
        chunks.extend(w)
    st.time("pairs", t0)

    # 3. ids (and texts) joined to the pairs, verification, pairs written
    t0 = time.time()
    want_text = job["policy"].verifies
    _, by_a = _submit_shuffle(client, chunks, split_by, n_parts, "a", bounds)
    with_a = [client.submit(attach, parts[p], specs[p], job, int(bounds[p]), "a", want_text,
                            *by_a[p]) for p in range(n_parts)]
    _, by_b = _submit_shuffle(client, with_a, split_by, n_parts, "b", bounds)
    with_b = [client.submit(attach, parts[p], specs[p], job, int(bounds[p]), "b", want_text,
                            *by_b[p]) for p in range(n_parts)]
    edges = [client.submit(finish_pairs, with_b[p], job,
                           os.path.join(out_dir, "part-%05d.tsv" % p) if write else None)
             for p in range(n_parts)]
    st.wait("ids%s and pairs" % (", verification" if want_text else ""), edges)
    del chunks, by_a, with_a, by_b, with_b
    n_pairs = sum(client.gather([client.submit(operator.getitem, e, "n") for e in edges]))
    st.time("verify" if want_text else "ids", t0)

    return edges, n_pairs, n_buckets


def _near_pairs(client, args, job, parts, specs, bounds, n_workers, st, out_dir):
    """Stages 2 and 3 of the default decision (simhash._dask_near): exact
    duplicates collapsed unless the output is pairs, the pairs sharing a
    band key, each checked once; (edges, duplicate edges, pair count,
    buckets)."""
    n_parts = len(specs)
    n_docs = int(bounds[-1])
    n_buckets = max(2 * n_workers, int(math.ceil(n_docs * _near_stages.BANDS / 2e6)), 1)
    write = args.output == "pairs"
    t0 = time.time()
    dups = []
    skips = [None] * n_parts
    if not write:
        routed = [client.submit(_near_stages.route_dups, part, int(bounds[p]), n_buckets)
                  for p, part in enumerate(parts)]
        pieces = [[client.submit(operator.getitem, r, j) for r in routed]
                  for j in range(n_buckets)]
        dups = [client.submit(_near_stages.dup_edges, *pieces[j]) for j in range(n_buckets)]
        st.wait("exact duplicates", dups)
        _, by_a = _submit_shuffle(client, dups, split_by, n_parts, "a", bounds)
        skips = [client.submit(_near_stages.not_first, int(bounds[p]), int(bounds[p + 1] -
                                                                             bounds[p]), *by_a[p])
                 for p in range(n_parts)]
        del routed, pieces, by_a
    routed = [client.submit(_near_stages.route_bands, part, int(bounds[p]), skips[p], n_buckets)
              for p, part in enumerate(parts)]
    pieces = [[client.submit(operator.getitem, r, j) for r in routed] for j in range(n_buckets)]
    chunks = [client.submit(_near_stages.band_pairs, *pieces[j]) for j in range(n_buckets)]
    st.wait("pairs sharing a band", chunks)
    del routed, pieces
    st.time("pairs", t0)
    t0 = time.time()
    _, by_a = _submit_shuffle(client, chunks, split_by, n_parts, "a", bounds)
    with_a = [client.submit(attach_near, parts[p], specs[p], job, int(bounds[p]), "a", *by_a[p])
              for p in range(n_parts)]
    _, by_b = _submit_shuffle(client, with_a, split_by, n_parts, "b", bounds)
    with_b = [client.submit(attach_near, parts[p], specs[p], job, int(bounds[p]), "b", *by_b[p])
              for p in range(n_parts)]
    edges = [client.submit(finish_near, with_b[p], job,
                           os.path.join(out_dir, "part-%05d.tsv" % p) if write else None)
             for p in range(n_parts)]
    st.wait("ids, sketches and the exact decision", edges)
    del chunks, by_a, with_a, by_b, with_b
    n_pairs = sum(client.gather([client.submit(operator.getitem, e, "n") for e in edges]))
    st.time("verify", t0)
    return edges, dups, n_pairs, n_buckets


def _n_roots(state):
    """Clusters of two or more rooted in this partition: vertices that are
    their own label (a vertex here has an edge)."""
    own = int((state["label"] == state["verts"]).sum())
    return own, len(state["verts"]) - own


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write("usage: %s dedup [OPTION]... -o DIR INPUT...\n\n"
                         "Commands:\n  dedup   near-duplicates of a corpus on a Dask cluster "
                         "(%s dedup --help)\n" % (PROG, PROG))
        return EXIT_OK if argv else EXIT_USAGE
    if argv[0] != "dedup":
        sys.stderr.write("%s: unknown command '%s' (expected dedup)\n" % (PROG, argv[0]))
        return EXIT_USAGE
    parser = _build_parser()

    def error(message):
        raise JobError("dedup: %s" % message, EXIT_USAGE)
    parser.error = error
    try:
        args = parser.parse_args(argv[1:])
        if args.help:
            parser.print_help(sys.stdout)
            return EXIT_OK
        return run(args)
    except JobError as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return e.status
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130


if __name__ == "__main__":
    sys.exit(main())
