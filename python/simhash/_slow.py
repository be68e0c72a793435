"""The slow path of Simhash: the vote of simhash 2.1.2 replayed with numpy,
operation for operation, for what the library's python-simhash mode does not
cover: a hashfunc of the caller's, f above 128, weights that are neither
Python ints nor floats (numpy scalars, Decimal, whole floats), changed class
constants or overridden steps. numpy's types decide the results there (a
uint8 row times a weight, float rows summed in list order), so the same
numpy operations in the same order are the only exact answer.
"""
import numbers

import numpy as np


def bitarray_from_bytes(b):
    """The bits of b, most significant first, as uint8 zeros and ones."""
    return np.unpackbits(np.frombuffer(b, dtype='>B'))


def sum_hashes(sh, digests):
    """Column sums of the digests laid end to end in rows of sh.f bits."""
    bits = sh._bitarray_from_bytes(b''.join(digests))
    return np.sum(np.reshape(bits, (-1, sh.f)), 0)


def _digest(sh, feature, mask):
    if not isinstance(feature, str):
        raise TypeError("a feature must be a str or a (str, weight) pair, not %s %r"
                        % (type(feature).__name__, feature))
    h = sh.hashfunc(feature.encode('utf-8'))
    if sh.hashfunc_returns_int:
        if not isinstance(h, numbers.Integral):
            raise TypeError("hashfunc returned %s for %r; it returned an int for b'test'"
                            % (type(h).__name__, feature))
        return (h & mask).to_bytes(sh.f_bytes, 'big')
    if not isinstance(h, (bytes, bytearray)):
        raise TypeError("hashfunc must return bytes or an unsigned int, not %s (for %r)"
                        % (type(h).__name__, feature))
    return h[-sh.f_bytes:]


def build_by_features(sh, features):
    """The value of Simhash.build_by_features(features) for sh's settings."""
    rows = []     # rows of per-bit sums, summed into one every batch_size rows
    pending = []  # digests (repeated weight times) of small int weights
    total = 0
    w = 1         # a bare string takes the weight of the last pair, as in 2.1.2
    mask = 2 ** sh.f - 1
    if isinstance(features, dict):
        features = features.items()
    for item in features:
        own_row = False
        if not isinstance(item, str):
            try:
                item, w = item
            except (TypeError, ValueError) as e:
                raise type(e)("a feature must be a str or a (str, weight) pair, not %s %r"
                              % (type(item).__name__, item)) from None
            own_row = w > sh.large_weight_cutoff or not isinstance(w, int)
        total += w
        h = _digest(sh, item, mask)
        if own_row:
            rows.append(sh._bitarray_from_bytes(h) * w)
        else:
            pending.append(h * w)
            if len(pending) >= sh.batch_size:
                rows.append(sh._sum_hashes(pending))
                pending = []
        if len(rows) >= sh.batch_size:
            rows = [np.sum(rows, 0)]
    if pending:
        rows.append(sh._sum_hashes(pending))
    combined = np.sum(rows, 0)
    return int.from_bytes(np.packbits(combined > total / 2).tobytes(), 'big')
