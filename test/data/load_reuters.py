#!/usr/bin/python3
"""Loads Reuters-21578 Grain (ModApte split) from Weka's ARFF files into
table ``reuters_grain``.

    load_reuters.py [DIR]

DIR holds ReutersGrain-train.arff and ReutersGrain-test.arff (default
/usr/share/doc/weka/examples, from Debian's weka package; also accepts
.arff.gz).  Connection settings come from the libpq environment variables.

Creates (replacing any previous one)

    reuters_grain(id int primary key, label text, body text, split text)

label is 'grain' (class-att 1) or 'other' (class-att 0); split is 'train'
or 'test' as in the ModApte files.  id numbers the training documents
1..n in file order, then the test documents.
"""

import gzip
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import arff  # noqa: E402
import pgload  # noqa: E402

DEFAULT_DIR = "/usr/share/doc/weka/examples"
LABELS = {"1": "grain", "0": "other"}

CREATE = """CREATE TABLE reuters_grain (
    id    int PRIMARY KEY,
    label text NOT NULL CHECK (label IN ('grain', 'other')),
    body  text NOT NULL,
    split text NOT NULL CHECK (split IN ('train', 'test'))
)"""


def read_arff(ddir, split):
    base = os.path.join(ddir, "ReutersGrain-%s.arff" % split)
    if os.path.exists(base):
        with open(base, "rb") as f:
            raw = f.read()
    elif os.path.exists(base + ".gz"):
        with gzip.open(base + ".gz", "rb") as f:
            raw = f.read()
    else:
        raise SystemExit("load_reuters: %s not found (apt-get install -y weka)" % base)
    rel = arff.parse(raw.decode("utf-8", errors="replace"))
    names = [a.name for a in rel.attributes]
    if names != ["Text", "class-att"]:
        raise SystemExit("load_reuters: unexpected attributes %r in %s" % (names, base))
    return rel.rows


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    ddir = argv[1] if len(argv) == 2 else DEFAULT_DIR
    rows = []
    for split in ("train", "test"):
        for text, cls in read_arff(ddir, split):
            if text is None or cls is None:
                raise SystemExit("load_reuters: missing value in %s" % split)
            rows.append([len(rows) + 1, LABELS[cls], pgload.clean_text(text), split])
    n = pgload.replace_table("reuters_grain", CREATE, ["id", "label", "body", "split"], rows)
    counts = {}
    for r in rows:
        counts[(r[1], r[3])] = counts.get((r[1], r[3]), 0) + 1
    print("reuters_grain: %d documents from %s (%s)" % (
        n, ddir, ", ".join("%s/%s %d" % (k[0], k[1], v) for k, v in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
