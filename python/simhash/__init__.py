"""simhash: SimHash fingerprints of texts on libsimhash.

Two APIs in one package:
- the drop-in for the `simhash` package 2.1.2: Simhash and SimhashIndex, with
  the same values and results, computed in C;
- the native API: Config (every option of `simhash fingerprint`),
  fingerprint(), fingerprints() (a batch on threads), fingerprint_features(),
  text_similarity(), Index, pairs(), clusters() and dedup();
- near-duplicates by exact similarity, as `simhash dedup` decides with no
  options: sketch(), decide(), near_similarity(), near_pairs(),
  near_clusters(), and dedup(texts) without max_dist.
"""
from ._core import (Config, CorruptError, Error, FileError, InvalidArgument, SchemeError,
                    Utf8Error, fingerprint, fingerprint_features, fingerprints, hamming,
                    scheme, text_similarity, version)
from ._compat import Simhash, _hashfunc  # noqa: F401 (the original names it too)
from ._index import Index, SimhashIndex
from ._pairs import clusters, dedup, pairs
from ._near import decide, near_bands, near_clusters, near_pairs, near_similarity, sketch

__all__ = [
    "Simhash", "SimhashIndex", "Index", "Config", "Error", "InvalidArgument", "CorruptError",
    "Utf8Error", "FileError", "SchemeError", "fingerprint", "fingerprints",
    "fingerprint_features", "text_similarity", "pairs", "clusters", "dedup", "hamming",
    "scheme", "version", "sketch", "decide", "near_similarity", "near_pairs", "near_clusters", "near_bands",
]
__version__ = "0.1.0"
