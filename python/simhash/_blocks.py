"""Buffer-protocol entry points for bulk work (the Dask job's kernels).

Each call goes into C once for a whole array: no per-element Python
conversion. Inputs are any C-contiguous buffers of the stated type (numpy
arrays, array('Q'), bytes); results come back as numpy arrays.

- fingerprint_blob(): the fingerprints of n texts given as one blob and
  their end offsets, on threads with the GIL released;
- block_keys(): block `table` of the block plan of each fingerprint;
- route(): one partition's records of a table cut into the buckets;
- block_pairs(): the pairs of one shuffled bucket of a table, through the
  library's exact pairs engine, each pair reported by its first shared
  table only (python/native_dask.c states the plan and why it is exact);
- parse_text_form(): `HEX<TAB>ID` lines into words and id offsets.
"""
import numpy as np

from . import _core
from ._native import ffi, lib

__all__ = ["fingerprint_blob", "block_keys", "block_pairs", "parse_text_form", "n_blocks",
           "splitmix", "route"]


def splitmix(x):
    """splitmix64 of each uint64 of x (numpy): the jobs' hash of keys and ids."""
    x = (x + np.uint64(0x9E3779B97F4A7C15))
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def n_blocks(k):
    """Tables of the block plan for distance k: k + 1 blocks (pigeonhole)."""
    return k + 1


def _u64(a):
    a = np.ascontiguousarray(a, dtype=np.uint64)
    return a, ffi.from_buffer("uint64_t[]", a)


def fingerprint_blob(config, blob, ends, threads=1):
    """The fingerprints of texts blob[ends[i-1]:ends[i]] under config, as a
    uint64 array of n x (bits / 64) words (one per text for 32 and 64 bits).
    Raises Utf8Error / Error with `.index` (the failing text) set."""
    n = len(ends)
    words = 2 if config.bits == 128 else 1
    if not n:
        return np.zeros(0, dtype=np.uint64)
    ends, ends_p = _u64(ends)
    out = np.empty(2 * n, dtype=np.uint64)
    err_index = ffi.new("size_t *")
    err_offset = ffi.new("size_t *")
    err = lib.shpy_fingerprints(config._cfg, ffi.from_buffer(blob), ffi.cast("size_t *", ends_p),
                                n, max(1, threads), ffi.from_buffer("uint64_t[]", out), err_index,
                                err_offset)
    if err:
        if err == lib.SIMHASH_EUTF8:
            e = _core.Utf8Error(err, "invalid UTF-8 at byte %d" % err_offset[0])
        else:
            msg = ffi.string(lib.simhash_strerror(err)).decode("utf-8", "replace")
            e = _core.Error(err, msg)
        e.index = err_index[0]
        raise e
    return out if words == 2 else out[0::2].copy()


def block_keys(fps, bits, k, table):
    """Block `table` of the (k + 1)-block plan of each fingerprint, as two
    uint64 arrays (low and high word of the block's value)."""
    fps, p = _u64(fps)
    n = len(fps) // (2 if bits == 128 else 1)
    lo = np.empty(n, dtype=np.uint64)
    hi = np.empty(n, dtype=np.uint64)
    if n:
        lib.shpy_block_keys(p, n, bits, n_blocks(k), table, ffi.from_buffer("uint64_t[]", lo),
                            ffi.from_buffer("uint64_t[]", hi))
    return lo, hi


def route(fps, bits, k, table, base, n_buckets, heavy=()):
    """One partition's records cut into n_buckets pieces by block `table`:
    (fps, gids) per bucket, each in input order (gids base + place), and the
    places of the records whose block value (lo, hi) is one of `heavy`
    (not in the pieces). A record's bucket is splitmix(lo ^ splitmix(hi ^
    table)) % n_buckets, splitmix() being this module's."""
    nw = 2 if bits == 128 else 1
    fps, p = _u64(fps)
    n = len(fps) // nw
    hv = sorted((int(h), int(lo)) for lo, h in heavy)
    h_lo = np.array([lo for _, lo in hv] or [0], dtype=np.uint64)
    h_hi = np.array([h for h, _ in hv] or [0], dtype=np.uint64)
    h_lo_p = ffi.from_buffer("uint64_t[]", h_lo)
    h_hi_p = ffi.from_buffer("uint64_t[]", h_hi)
    counts = np.zeros(n_buckets, dtype=np.uint64)
    n_heavy = ffi.new("size_t *")
    if lib.shpy_route_count(p, n, bits, n_blocks(k), table, n_buckets, h_lo_p, h_hi_p, len(hv),
                            ffi.from_buffer("uint64_t[]", counts), n_heavy):
        raise ValueError("route: %d buckets" % n_buckets)
    piece_fps = [np.empty(int(c) * nw, dtype=np.uint64) for c in counts]
    piece_gids = [np.empty(int(c), dtype=np.uint64) for c in counts]
    heavy_recs = np.empty(n_heavy[0], dtype=np.uint64)
    keep = [ffi.from_buffer("uint64_t[]", a) for a in piece_fps + piece_gids]
    at = np.empty(n_buckets, dtype=np.uint64)
    lib.shpy_route_scatter(p, n, bits, n_blocks(k), table, n_buckets, h_lo_p, h_hi_p, len(hv),
                           base, ffi.new("uint64_t *[]", keep[:n_buckets]),
                           ffi.new("uint64_t *[]", keep[n_buckets:]),
                           ffi.from_buffer("uint64_t[]", at),
                           ffi.from_buffer("uint64_t[]", heavy_recs))
    return list(zip(piece_fps, piece_gids)), heavy_recs


def block_pairs(fps, gids, bits, k, table, cells=None, sides=None):
    """Every pair within k of one bucket of table `table` whose first shared
    block is that table's, as (a, b, dist) arrays, a < b global ids.
    fps: n x words uint64; gids: n uint64; cells (uint64) and sides (uint8):
    the sub-block meetings of split keys, or None."""
    fps, fp_p = _u64(fps)
    gids, gid_p = _u64(gids)
    n = len(gids)
    if cells is not None:
        cells, cell_p = _u64(cells)
        sides = np.ascontiguousarray(sides, dtype=np.uint8)
        side_p = ffi.from_buffer("uint8_t[]", sides)
    else:
        cell_p = side_p = ffi.NULL
    out_a = ffi.new("uint64_t **")
    out_b = ffi.new("uint64_t **")
    out_d = ffi.new("uint32_t **")
    n_out = ffi.new("size_t *")
    err = lib.shpy_block_pairs(fp_p, gid_p, cell_p, side_p, n, bits, n_blocks(k), table, k,
                               out_a, out_b, out_d, n_out)
    if err:
        _core._raise(err, "pairs")
    m = n_out[0]
    try:
        a = np.frombuffer(ffi.buffer(out_a[0], 8 * m), dtype=np.uint64).copy() if m else \
            np.zeros(0, np.uint64)
        b = np.frombuffer(ffi.buffer(out_b[0], 8 * m), dtype=np.uint64).copy() if m else \
            np.zeros(0, np.uint64)
        d = np.frombuffer(ffi.buffer(out_d[0], 4 * m), dtype=np.uint32).copy() if m else \
            np.zeros(0, np.uint32)
    finally:
        lib.shpy_free(out_a[0])
        lib.shpy_free(out_b[0])
        lib.shpy_free(out_d[0])
    return a, b, d


def parse_text_form(data, digits):
    """Parses `HEX<TAB>ID` lines of bytes data (HEX: `digits` hex digits).
    Returns (words, id_bounds) with id_bounds[2 i], [2 i + 1] the id's byte
    range in data; or raises ValueError with `.line` (1-based) set."""
    cap = data.count(b"\n") + 1
    words = np.empty(cap * (2 if digits == 32 else 1), dtype=np.uint64)
    ids = np.empty(2 * cap, dtype=np.uint64)
    n = lib.shpy_parse_fps(ffi.from_buffer(data), len(data), digits,
                           ffi.from_buffer("uint64_t[]", words), ffi.from_buffer("uint64_t[]", ids),
                           cap)
    if n < 0:
        e = ValueError("line %d is not HEX<TAB>ID" % -n)
        e.line = -n
        raise e
    return words[:n * (2 if digits == 32 else 1)], ids[:2 * n]


def line_ids(data, digits, lines):
    """The id byte ranges of some lines of text-form data that
    parse_text_form() has already accepted: `lines` ascending line numbers
    from 0; returns bounds as parse_text_form() gives them, for those lines
    only (line breaks are looked for, no fingerprint is parsed)."""
    lines = np.ascontiguousarray(lines, dtype=np.uint64)
    bounds = np.empty(2 * len(lines), dtype=np.uint64)
    if len(lines) and lib.shpy_line_ids(ffi.from_buffer(data), len(data), digits,
                                        ffi.from_buffer("uint64_t[]", lines), len(lines),
                                        ffi.from_buffer("uint64_t[]", bounds)):
        raise ValueError("the input changed since it was read")
    return bounds
