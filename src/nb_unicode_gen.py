#!/usr/bin/python3
"""Writes src/nb_unicode_tables.h, the Unicode tables of nb_unicode.c.

    /usr/bin/python3 src/nb_unicode_gen.py [OUTPUT]

Every table is probed from the running Python itself (its re module, str
methods and unicodedata), so that nbc's tokenizer sees text exactly as
scikit-learn does under that Python: Debian 12's /usr/bin/python3 (3.11,
Unicode 14.0.0) for the committed file.  What is probed, per code point c
(surrogates excluded; they cannot occur in UTF-8):

  word       re.match(r'\\w', c): \\w of a str pattern ((?u) or not)
  space      c.isspace(), asserted equal to re's \\s and to str.split()'s
             separators
  lower      c.lower() when it differs from c (one code point, or several:
             U+0130); U+03A3's context rule is nb_unicode.c's, from the
             two classes below
  ignorable, cased
             the classes of CPython's handle_capital_sigma (unicodeobject.c):
             (c + 'Σ').lower() ends in final sigma iff c is cased and not
             case-ignorable, ('A' + c + 'Σ').lower() iff c is either
  strip      NFKD(c) without its combining characters (unicodedata.combining
             non-zero): strip_accents_unicode per code point.  NFKD's
             canonical reordering moves combining characters only, which
             are dropped, so per code point is the whole string's result;
             strip_accents_ascii keeps the ASCII bytes of the same.  Hangul
             syllables are left to the C code's arithmetic (checked here).

The output: a two-stage table of flag bytes (a block index per
128 code points, identical blocks shared), a sorted array of
one-code-point lower mappings, the few longer ones, and a sorted array of
strip mappings into a pool of UTF-8 bytes.
"""

import re
import sys
import unicodedata

OUT = sys.argv[1] if len(sys.argv) > 1 else __file__.replace("nb_unicode_gen.py", "nb_unicode_tables.h")

WORD, SPACE, IGNORABLE, CASED, LOWER, STRIP = 1, 2, 4, 8, 16, 32
N = 0x110000
SIGMA = "\u03a3"
S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
T_COUNT, N_COUNT, S_COUNT = 28, 21 * 28, 11172

word_re = re.compile(r"\w")
space_re = re.compile(r"\s")


def hangul(c):
    s = c - S_BASE
    out = [L_BASE + s // N_COUNT, V_BASE + (s % N_COUNT) // T_COUNT]
    if s % T_COUNT:
        out.append(T_BASE + s % T_COUNT)
    return "".join(map(chr, out))


flags = [0] * N
lower1 = []         # (c, lower code point)
lower_multi = []    # (c, lower code points)
strip = []          # (c, stripped UTF-8 bytes)
for c in range(N):
    if 0xD800 <= c < 0xE000:
        continue
    ch = chr(c)
    f = 0
    if word_re.match(ch):
        f |= WORD
    sp = ch.isspace()
    assert sp == bool(space_re.match(ch)) == (len(("a" + ch + "b").split()) == 2), hex(c)
    if sp:
        f |= SPACE
    p1 = (ch + SIGMA).lower()[-1] == "\u03c2"
    p2 = ("A" + ch + SIGMA).lower()[-1] == "\u03c2"
    assert p2 or not p1, hex(c)
    if p1:
        f |= CASED
    elif p2:
        f |= IGNORABLE
    low = ch.lower()
    if low != ch:
        f |= LOWER
        if len(low) == 1:
            lower1.append((c, ord(low)))
        else:
            assert len(low) <= 3, hex(c)
            lower_multi.append((c, [ord(x) for x in low]))
    st = "".join(x for x in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(x))
    if st != ch:
        f |= STRIP
        if S_BASE <= c < S_BASE + S_COUNT:
            assert st == hangul(c), hex(c)
        else:
            strip.append((c, st.encode("utf-8")))
    flags[c] = f

# the C code's ASCII fast paths assume these
for c in range(128):
    assert flags[c] & WORD == (WORD if chr(c).isalnum() or c == 0x5F else 0)
    assert chr(c).lower() == (chr(c + 32) if 0x41 <= c <= 0x5A else chr(c))
    assert not flags[c] & STRIP
assert flags[0x3A3] & CASED and not flags[0x3A3] & IGNORABLE


def two_stage(shift):
    size = 1 << shift
    blocks, index = {}, []
    for start in range(0, N, size):
        b = tuple(flags[start:start + size])
        index.append(blocks.setdefault(b, len(blocks)))
    return blocks, index


# nb_unicode.h's NB_UC_SHIFT: 128 code points a block, a one-byte block index
SHIFT = 7
blocks, index = two_stage(SHIFT)
assert len(blocks) <= 256

pool = bytearray()
strip_rows = []
for c, b in strip:
    assert len(b) < 256
    strip_rows.append((c, len(pool), len(b)))
    pool += b


def growth(transform):
    """The most UTF-8 bytes out per byte in, and the code point that has it."""
    return max((len(transform(chr(c)).encode("utf-8")) / len(chr(c).encode("utf-8")), c)
               for c in range(N) if not 0xD800 <= c < 0xE000)


def stripped(s):
    return "".join(x for x in unicodedata.normalize("NFKD", s) if not unicodedata.combining(x))


lower_growth = growth(str.lower)
strip_growth = max(growth(stripped), growth(lambda s: stripped(s.lower())))


def rows(items, per_line, fmt):
    out = []
    for i in range(0, len(items), per_line):
        out.append("\t" + " ".join(fmt(x) + "," for x in items[i:i + per_line]))
    return "\n".join(out)


with open(OUT, "w", encoding="utf-8") as f:
    w = f.write
    w("/*\n * nb_unicode_tables.h — generated by src/nb_unicode_gen.py from Python %s's\n"
      " * re, str and unicodedata (Unicode %s); do not edit.  Regenerate with\n"
      " *   /usr/bin/python3 src/nb_unicode_gen.py\n"
      " * Included by nb_unicode.c only.\n */\n"
      % (sys.version.split()[0], unicodedata.unidata_version))
    w("#ifndef NB_UNICODE_TABLES_H\n#define NB_UNICODE_TABLES_H\n\n")
    w('#define NB_UNICODE_TABLES_VERSION "%s"\n\n' % unicodedata.unidata_version)
    w("/* the flag bits and block size written below */\n")
    for name, v in (("WORD", WORD), ("SPACE", SPACE), ("IGNORABLE", IGNORABLE), ("CASED", CASED),
                    ("LOWER", LOWER), ("STRIP", STRIP)):
        w('_Static_assert(NB_UC_%s == %d, "nb_unicode.h\'s flag bits");\n' % (name, v))
    w('_Static_assert(NB_UC_SHIFT == %d, "nb_unicode.h\'s block size");\n\n' % SHIFT)
    w("/* flags of code point c: nb_unicode_flags_block[nb_unicode_flags_index[c >> NB_UC_SHIFT]][c & NB_UC_MASK] */\n")
    w("const uint8_t nb_unicode_flags_index[%d] = {\n%s\n};\n\n" % (len(index), rows(index, 16, str)))
    ordered = sorted(blocks.items(), key=lambda kv: kv[1])
    w("const uint8_t nb_unicode_flags_block[%d][%d] = {\n" % (len(ordered), 1 << SHIFT))
    for b, _ in ordered:
        w("\t{\n%s\n\t},\n" % rows(list(b), 16, str).replace("\t", "\t\t"))
    w("};\n\n")
    w("/* c.lower() of one code point, sorted by c */\n")
    w("static const uint32_t lower_table[%d][2] = {\n%s\n};\n\n"
      % (len(lower1), rows(lower1, 4, lambda p: "{0x%04X, 0x%04X}" % p)))
    w("/* c.lower() of more than one code point, sorted by c */\n")
    w("static const struct\n{\n\tuint32_t\tcp;\n\tuint32_t\tn;\n\tuint32_t\tto[3];\n}\t\t\tlower_multi_table[%d] = {\n%s\n};\n\n"
      % (len(lower_multi), rows(lower_multi, 1, lambda p: "{0x%04X, %d, {%s}}" % (
          p[0], len(p[1]), ", ".join("0x%04X" % x for x in p[1] + [0] * (3 - len(p[1])))))))
    w("/* NFKD without combining characters, Hangul syllables aside: code point, offset in the pool, length */\n")
    w("static const uint32_t strip_table[%d][3] = {\n%s\n};\n\n"
      % (len(strip_rows), rows(strip_rows, 4, lambda r: "{0x%04X, %d, %d}" % r)))
    w("static const unsigned char strip_pool[%d] = {\n%s\n};\n\n"
      % (len(pool), rows(list(pool), 16, lambda b: "0x%02X" % b)))
    w("/*\n * The most UTF-8 bytes out per byte in, rounded up: lowercased %.3g (U+%04X),\n"
      " * stripped of accents, lowercased or not, %.3g (U+%04X)\n */\n" % (lower_growth + strip_growth))
    w("#define NB_UNICODE_LOWER_GROWTH %d\n" % -(-lower_growth[0] // 1))
    w("#define NB_UNICODE_STRIP_GROWTH %d\n\n" % -(-strip_growth[0] // 1))
    w("#endif\n")
print("wrote %s: block shift %d, %d blocks, %d lower, %d multi, %d strip, pool %d bytes"
      % (OUT, SHIFT, len(blocks), len(lower1), len(lower_multi), len(strip_rows), len(pool)))
