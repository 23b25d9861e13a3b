#!/usr/bin/env python3
"""Make a model that collides with a given one in size and header checksum.

    python3 test/collision/make_pair.py <model A in its text form (base64)> [ratio]

prints, in hex, the 16 bytes at offset 48 of a model B: A with those bytes
replaced is a valid nb_model of the same size and checksum as A, whose first
two classes have other document counts, so that it scores differently (the
second at least ratio times the first, 1 unless given).
sql/collision.sql makes B from A with them (overlay at byte 49), to check
that a model prepared for scoring never serves another model with the same
size and checksum.  A is a text[] model of format version 3: the counts F,
vector length and H come first (offsets 32 to 47), then the class document
counts.

The checksum (src/nb_format.c, nb_format_checksum) is nb_hash_bytes
(src/nb_hash.h) over the body, seeded with the hash of the first 24 header
bytes.  Each 8-byte word enters the state as h ^= f(w), then h = g(h), with f
and g invertible, so after changing word 0 of the body (the document count of
class 0) the word 1 that brings the state back to A's is
f^-1(s1 ^ s1' ^ f(w1)).  The script tries counts for class 0 until that word
is a document count the validator accepts (finite, positive and no smaller
than the class's documents per token), and checks that B's checksum is A's.
"""
import base64
import struct
import sys

MASK = (1 << 64) - 1
P1 = 0x9e3779b97f4a7c15
P2 = 0xbf58476d1ce4e5b9
SEED = 0x6e62632d6d6f646c
HEADER = 32
DOCS = HEADER + 16


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def f(w):
    return rotl(w * P2 & MASK, 31) * P1 & MASK


def f_inv(y):
    return rotl(y * pow(P1, -1, 1 << 64) & MASK, 33) * pow(P2, -1, 1 << 64) & MASK


def step(h, w):
    return (rotl(h ^ f(w), 27) * 5 + 0x52dce729) & MASK


def mix(x):
    x ^= x >> 33
    x = x * 0xff51afd7ed558ccd & MASK
    x ^= x >> 33
    x = x * 0xc4ceb9fe1a85ec53 & MASK
    x ^= x >> 33
    return x


def word(data, off):
    return struct.unpack_from("<Q", data, off)[0]


def hash_bytes(data, seed):
    n = len(data)
    h = seed ^ (n * P1 & MASK)
    off = 0
    while n - off >= 8:
        h = step(h, word(data, off))
        off += 8
    if off < n:
        h ^= f(word(data[off:] + bytes(8 - (n - off)), 0))
    return mix(h)


def checksum(model):
    return hash_bytes(model[HEADER:], hash_bytes(model[:24], SEED))


def collide(a, ratio):
    version, classes, tokens, entries = struct.unpack_from("<xxxxHxxIIQ", a, 0)
    features = struct.unpack_from("<I", a, HEADER)[0]
    if version != 3 or classes < 2 or features != 1:
        sys.exit("make_pair.py: needs a text[] model (format version 3) of two classes or more")
    if checksum(a) != word(a, 24):
        sys.exit("make_pair.py: the checksum here does not match the model's")
    # class document counts at 48 and 56; entry classes and documents per token after them
    docs = struct.unpack_from("<%dd" % classes, a, DOCS)
    body = DOCS + 8 * classes + 4 * classes + 8 * tokens
    entry_class = struct.unpack_from("<%dI" % entries, a, body)
    entry_docs = struct.unpack_from("<%dd" % entries, a, body + 4 * entries + 8 * entries)
    # the bag's rows per class (feature_present) may not exceed the documents
    least = max([d for c, d in zip(entry_class, entry_docs) if c == 1] + [docs[1]])

    h0 = hash_bytes(a[:24], SEED) ^ ((len(a) - HEADER) * P1 & MASK)
    for off in range(HEADER, DOCS, 8):
        h0 = step(h0, word(a, off))
    s1 = step(h0, word(a, DOCS))
    for k in range(1, 100000):
        d0 = docs[0] + k
        w0 = struct.unpack("<Q", struct.pack("<d", d0))[0]
        w1 = f_inv(step(h0, w0) ^ s1 ^ f(word(a, DOCS + 8)))
        d1 = struct.unpack("<d", struct.pack("<Q", w1))[0]
        # a count the validator takes, in a range that prints plainly
        if max(1.0, least, ratio * d0) <= d1 <= 1e6:
            b = bytearray(a)
            struct.pack_into("<dd", b, DOCS, d0, d1)
            assert len(b) == len(a) and checksum(bytes(b)) == word(a, 24) and b != a
            return bytes(b)
    sys.exit("make_pair.py: no colliding document counts found")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    ratio = float(sys.argv[2]) if len(sys.argv) == 3 else 1.0
    print(collide(base64.b64decode(sys.argv[1]), ratio)[DOCS:DOCS + 16].hex())
