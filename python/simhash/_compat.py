"""The drop-in part: Simhash and SimhashIndex as the Python package `simhash`
2.1.2 has them, with the same values for every input (docs/compat.md).

Fast path: a text, or features with MD5, f a multiple of 8 up to 128, the
default pattern, batch size and cutoff, go to the library's python-simhash
mode. Every bit of the value votes on its own, so the value at f <= 64 is the
64-bit value masked to f bits, and at f <= 128 the 128-bit value masked.
Anything else (a hashfunc of the caller's, another `reg`, another f, weights
of types whose arithmetic numpy treats differently, changed class constants,
a subclass overriding the steps) takes _slow.py, which replays the original's
numpy arithmetic step by step.
"""
import hashlib
import logging
import math
import numbers
import re
from collections.abc import Iterable
from itertools import groupby

from . import _core
from ._core import _compat_text

__all__ = ["Simhash"]

_DEFAULT_REG = r'[\w\u4e00-\u9fcc]+'
_LOG = logging.getLogger("simhash")  # loggers are singletons: the same one
_EXACT_INT = 2 ** 53


def _hashfunc(x):
    """The default feature hash: the MD5 digest of the feature's UTF-8."""
    return hashlib.md5(x).digest()


def _default_reg(reg):
    if reg is _DEFAULT_REG or reg == _DEFAULT_REG:
        return True
    return (isinstance(reg, re.Pattern) and reg.pattern == _DEFAULT_REG
            and reg.flags == re.UNICODE)


_STEPS = ("build_by_text", "build_by_features", "_tokenize", "_slide", "_sum_hashes",
          "_bitarray_from_bytes")
_plain_cache = {}


def _plain(cls):
    """True if cls computes as Simhash does (a subclass overrides no step)."""
    r = _plain_cache.get(cls)
    if r is None:
        r = all(getattr(cls, s) is getattr(Simhash, s) for s in _STEPS)
        _plain_cache[cls] = r
    return r


def _features_for_library(items):
    """[(utf-8 bytes, weight)] for the library's python-simhash mode, or None
    where the library's rule for ints and floats (docs/compat.md) could differ
    from what numpy does with these weights."""
    out = []
    w = 1
    for x in items:
        if isinstance(x, str):
            # the original reuses the last pair's weight for a bare string
            if type(w) is not int or w != 1:
                return None
            feat = x
            fw = 1.0
        else:
            try:
                feat, w = x
            except Exception:
                return None
            tw = type(w)
            if tw is int or tw is bool:
                if not -_EXACT_INT <= w <= _EXACT_INT:
                    return None
            elif isinstance(w, float):  # float and numpy.float64 (a float subclass)
                if not math.isfinite(w) or w.is_integer():
                    return None
            else:
                return None
            if not isinstance(feat, str):
                return None
            fw = float(w)
        try:
            out.append((feat.encode("utf-8"), fw))
        except UnicodeError:
            return None
    return out


class Simhash(object):
    """A SimHash fingerprint, as the `simhash` package 2.1.2 computes it.

    `value` is a text (str), an int (kept as it is), another Simhash, an
    iterable of features (strings of weight 1, (feature, weight) pairs), or
    a dict feature -> weight. `f` is the width in bits, a multiple of 8.
    `reg` is the pattern of what a text keeps (its runs are joined), and
    `hashfunc` maps a feature's UTF-8 bytes to bytes (the last f/8 are used)
    or to an unsigned int.
    """

    # as in the original: a weight above the cutoff, or not an int, makes its
    # own row; smaller ones are summed batch_size at a time
    large_weight_cutoff = 50
    batch_size = 200

    def __init__(self, value, f=64, reg=_DEFAULT_REG, hashfunc=_hashfunc, log=None):
        if f % 8:
            raise ValueError('f must be a multiple of 8')
        self.f = f
        self.f_bytes = f // 8
        self.reg = reg
        self.value = None
        self.hashfunc = hashfunc
        if hashfunc is _hashfunc:
            self.hashfunc_returns_int = False
        else:
            self.hashfunc_returns_int = isinstance(hashfunc(b"test"), numbers.Integral)
        self.log = _LOG if log is None else log

        if isinstance(value, Simhash):
            self.value = value.value
        elif isinstance(value, str):
            self.build_by_text(str(value))
        elif isinstance(value, Iterable):
            self.build_by_features(value)
        elif isinstance(value, numbers.Integral):
            self.value = value
        else:
            raise TypeError('Bad parameter with type {}'.format(type(value)))

    def __eq__(self, other):
        """Compares two Simhash objects by value."""
        return self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        if isinstance(self.value, int) and self.value >= 0:
            return "Simhash(0x%0*x, f=%r)" % ((self.f + 3) // 4 if isinstance(self.f, int) else 1,
                                              self.value, self.f)
        return "Simhash(%r, f=%r)" % (self.value, self.f)

    def __reduce__(self):
        reg = None if _default_reg(self.reg) else self.reg
        hf = None if self.hashfunc is _hashfunc else self.hashfunc
        return (_unpickle, (type(self), self.value, self.f, reg, hf))

    def _fast(self):
        """The width of the library mode to use (64 or 128), or 0: slow path."""
        f = self.f
        if type(f) is not int or not 0 < f <= 128 or self.hashfunc is not _hashfunc:
            return 0
        cls = type(self)
        if cls is not Simhash and not _plain(cls):
            return 0
        if self.batch_size != 200 or self.large_weight_cutoff != 50:
            return 0
        return 64 if f <= 64 else 128

    def _slide(self, content, width=4):
        return [content[i:i + width] for i in range(max(len(content) - width + 1, 1))]

    def _tokenize(self, content):
        content = content.lower()
        content = ''.join(re.findall(self.reg, content))
        return self._slide(content)

    def build_by_text(self, content):
        bits = self._fast() if type(content) is str and _default_reg(self.reg) else 0
        if bits:
            v = _compat_text(bits, content.encode("utf-8", "surrogatepass"))
            self.value = v if self.f == bits else v & ((1 << self.f) - 1)
            return None
        features = self._tokenize(content)
        features = {k: sum(1 for _ in g) for k, g in groupby(sorted(features))}
        return self.build_by_features(features)

    def build_by_features(self, features):
        """`features` is an iterable of unweighted tokens (weight 1), of
        (token, weight) pairs, or a dict token -> weight."""
        if isinstance(features, dict):
            features = features.items()
        bits = self._fast()
        if bits:
            items = list(features)
            conv = _features_for_library(items)
            if conv is not None:
                v = _core._run_features(_core._compat_config(bits), conv)
                self.value = v if self.f == bits else v & ((1 << self.f) - 1)
                return None
            features = items
        from . import _slow
        self.value = _slow.build_by_features(self, features)
        return None

    def _sum_hashes(self, digests):
        from . import _slow
        return _slow.sum_hashes(self, digests)

    @staticmethod
    def _bitarray_from_bytes(b):
        from . import _slow
        return _slow.bitarray_from_bytes(b)

    def distance(self, another):
        """Hamming distance to another Simhash of the same f."""
        if self.f != another.f:
            raise AssertionError("distance of a %r-bit and a %r-bit Simhash" % (self.f, another.f))
        x = (self.value ^ another.value) & ((1 << self.f) - 1)
        return bin(x).count("1")


def _unpickle(cls, value, f, reg, hashfunc):
    obj = cls.__new__(cls)
    obj.f = f
    obj.f_bytes = f // 8
    obj.reg = _DEFAULT_REG if reg is None else reg
    obj.value = value
    obj.hashfunc = _hashfunc if hashfunc is None else hashfunc
    obj.hashfunc_returns_int = (False if hashfunc is None
                                else isinstance(obj.hashfunc(b"test"), numbers.Integral))
    obj.log = _LOG
    return obj
