#!/usr/bin/env python3
"""near_probe.py - writes lib/index/near_probe.h, the order in which an empty
bin of the banded MinHash (lib/index/near_bands.c) tries the other bins:
(a + t b) mod 72 for t = 1, 2, ..., a and b per bin from splitmix64."""
from math import gcd
import sys

M = (1 << 64) - 1
BINS = 72


def mix(z):
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9 & M
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb & M
    return z ^ (z >> 31)


def main():
    rows, starts, inverses = [], [], []
    for i in range(BINS):
        h = mix(i + 0x6a09e667f3bcc908)
        a, b = h % BINS, 1 + (h >> 32) % (BINS - 1)
        while gcd(b, BINS) != 1:
            b += 1
        rows.append([(a + t * b) % BINS for t in range(1, BINS + 1)])
        assert len(set(rows[-1])) == BINS
        starts.append(a)
        inverses.append(pow(b, -1, BINS))
        for t, f in enumerate(rows[-1], 1):  # bin f is tried t-th: (f - a) / b mod 72
            assert ((f - a) * inverses[-1] % BINS or BINS) == t
    out = ["/* near_probe.h - where an empty bin of near_bands.c looks for a filled one:",
           " * row i lists the 72 bins in the order bin i tries them, (a + t b) mod 72",
           " * for t = 1, 2, ..., a and b drawn per bin (b coprime with 72) by",
           " * splitmix64 of i + 0x6a09e667f3bcc908 (written by tools/near_probe.py). */",
           "static const unsigned char sh_nb_probe[72][72] = {"]
    out += ["\t{ " + ", ".join(map(str, r)) + " }," for r in rows]
    out.append("};")
    out += ["/* Row i as a progression: bin f is tried t-th, t = (f - a) c mod 72 (72 for",
            " * 0), a = sh_nb_probe_a[i] and c = sh_nb_probe_c[i] the inverse of b. */",
            "static const unsigned char sh_nb_probe_a[72] = { " + ", ".join(map(str, starts)) + " };",
            "static const unsigned char sh_nb_probe_c[72] = { " + ", ".join(map(str, inverses)) + " };"]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
