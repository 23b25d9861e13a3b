#!/usr/bin/python3
"""Parity of nb_tokens against scikit-learn's CountVectorizer analyzers.

Run by test/parity/run.sh after the loaders (tables spamassassin and
fortunes, see test/data).  nb_tokens(body, options) must be, element for
element, CountVectorizer(**options).build_analyzer()(body):

  * the default options on every SpamAssassin message and every Russian
    and Chinese fortune;
  * every meaningful combination of analyzer (word, char, char_wb),
    ngram_range ([1,1], [1,2], [2,3]), lowercase, strip_accents (null,
    ascii, unicode) and, for the word analyzer, token_pattern (both
    supported ones) and stop_words (null, english): 108 combinations, each
    on SAMPLE messages of each corpus (the first by md5 of their key);
  * every code point (surrogates and NUL aside) in documents of CHUNK code
    points: each followed by "#" under char 1-grams (every lowercase and
    strip_accents combination: str.lower() and NFKD per code point), under
    char_wb (white space) and under the word analyzer with \\b\\w+\\b (\\w);
    and each between a cased letter and a capital sigma ("A" c "Σ#" c "Σ#")
    for the final sigma rule's classes.

Prints one TAP-style line per check and closes with "N passed, N failed";
exits 1 when a check failed.

    tokens.py [--sample N]
"""

import argparse
import itertools
import sys
import time
import warnings

from report import Report

try:
    import psycopg2.extras
    from sklearn.feature_extraction.text import CountVectorizer
except ImportError as e:  # report it as a failed check, not a bare traceback
    print("not ok - tokens prerequisites: %s (Debian: python3-sklearn python3-psycopg2; "
          "run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

from db import DB  # noqa: E402 (after the prerequisites are checked)

SAMPLE = 150        # messages per corpus and combination
CHUNK = 32768       # code points per document of the per-code-point check
PATTERNS = (r"(?u)\b\w\w+\b", r"(?u)\b\w+\b")

# corpus name -> SQL of (key, body), in a fixed order
CORPORA = {
    "spamassassin": "SELECT folder || '/' || msg_id, body FROM spamassassin ORDER BY md5(folder || '/' || msg_id)",
    "fortunes-ru": "SELECT label || '/' || n, body FROM fortunes WHERE lang = 'ru' ORDER BY md5(label || '/' || n)",
    "fortunes-zh": "SELECT label || '/' || n, body FROM fortunes WHERE lang = 'zh' ORDER BY md5(label || '/' || n)",
}

R = Report()


def analyzer(opts):
    """scikit-learn's analyzer for the options of nb_tokens."""
    kw = dict(opts)
    if "ngram_range" in kw:
        kw["ngram_range"] = tuple(kw["ngram_range"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the stop words' consistency warning
        return CountVectorizer(**kw).build_analyzer()


def nb_tokens(db, bodies, opts):
    """nb_tokens of each body, in one query."""
    rows = db.query("SELECT nb_tokens(b, %s::jsonb) FROM unnest(%s::text[]) WITH ORDINALITY AS u(b, i) ORDER BY i",
                    (psycopg2.extras.Json(opts), bodies))
    return [r[0] for r in rows]


def compare(db, what, docs, opts):
    """One check: nb_tokens against the analyzer on every (key, body) of docs."""
    an = analyzer(opts)
    got = nb_tokens(db, [b for _, b in docs], opts)
    tokens = 0
    for (key, body), g in zip(docs, got):
        want = an(body)
        tokens += len(want)
        if g != want:
            at = next((i for i, (x, y) in enumerate(zip(g, want)) if x != y), min(len(g), len(want)))
            R.check(False, what, "%s: %d tokens, scikit-learn %d; first difference at %d: %r, scikit-learn %r"
                    % (key, len(g), len(want), at, g[at:at + 3], want[at:at + 3]))
            return
    R.check(True, what, "%d documents, %d tokens" % (len(docs), tokens))


def grid():
    """Every meaningful option set of the grid."""
    for analyzer_name, ngram, lower, strip in itertools.product(
            ("word", "char", "char_wb"), ([1, 1], [1, 2], [2, 3]), (True, False), (None, "ascii", "unicode")):
        base = {"analyzer": analyzer_name, "ngram_range": ngram, "lowercase": lower, "strip_accents": strip}
        if analyzer_name != "word":
            yield base
            continue
        for pattern, stop in itertools.product(PATTERNS, (None, "english")):
            yield dict(base, token_pattern=pattern, stop_words=stop)


def code_point_docs():
    """Documents of every code point but the surrogates and NUL, CHUNK at a time."""
    cps = [c for c in range(1, 0x110000) if not 0xD800 <= c < 0xE000]
    return [cps[i:i + CHUNK] for i in range(0, len(cps), CHUNK)]


def check_code_points(db):
    chunks = code_point_docs()
    spaced = [("U+%04X.." % c[0], "".join(chr(x) + "#" for x in c)) for c in chunks]
    sigma = [("U+%04X.." % c[0], "".join("A%sΣ#%sΣ#" % (chr(x), chr(x)) for x in c)) for c in chunks]
    for lower, strip in itertools.product((True, False), (None, "ascii", "unicode")):
        compare(db, "every code point, char 1-grams, lowercase %s, strip_accents %s" % (lower, strip),
                spaced, {"analyzer": "char", "lowercase": lower, "strip_accents": strip})
    compare(db, "every code point, char_wb 1-grams (white space)", spaced, {"analyzer": "char_wb"})
    compare(db, "every code point, word \\b\\w+\\b (word characters)", spaced,
            {"token_pattern": PATTERNS[1], "lowercase": False})
    compare(db, "every code point, word \\b\\w+\\b, lowercased, strip_accents unicode", spaced,
            {"token_pattern": PATTERNS[1], "strip_accents": "unicode"})
    compare(db, "every code point between a cased letter and a capital sigma (final sigma)", sigma,
            {"analyzer": "char"})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=SAMPLE, help="messages per corpus and combination")
    args = ap.parse_args()
    db = DB()
    start = time.time()
    corpora = {name: db.query(sql) for name, sql in CORPORA.items()}
    for name, docs in corpora.items():
        compare(db, "tokens: defaults, %s, all messages" % name, docs, {})
    n_sets = 0
    for opts in grid():
        n_sets += 1
        for name, docs in corpora.items():
            compare(db, "tokens: %s, %s" % (name, " ".join("%s=%s" % kv for kv in opts.items())),
                    docs[:args.sample], opts)
    R.note("%d option sets, %d messages of each corpus" % (n_sets, args.sample))
    check_code_points(db)
    R.note("%.1f s" % (time.time() - start))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
