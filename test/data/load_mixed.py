#!/usr/bin/python3
"""Loads the data of nbc's mixed-feature parity suite (test/parity/mixed.py).

    load_mixed.py [--no-fashion] [--weka-dir DIR] [--fashion-dir DIR]

Connection settings come from the libpq environment variables.  Creates
(replacing any previous ones) two tables:

    nbc_mixed_rows(ds text, id int, label text, split text, weight float8,
                   complete bool, x float8[], x_miss float8[],
                   j jsonb, j_bool jsonb, j_miss jsonb, PRIMARY KEY (ds, id))

        ds: 'iris', 'wine', 'breast_cancer', 'digits' (scikit-learn's bundled
        copies, no download) and 'weather', 'vote', 'soybean', 'credit_g'
        (Weka's weather.nominal.arff, vote.arff, soybean.arff, credit-g.arff
        from Debian's weka package).  id numbers the rows from 0 in source
        order; split is 'test' for every 4th row (id % 4 = 3), else 'train';
        weight is a positive pseudo-random weight (uniform in [0.25, 4),
        numpy seed fixed per data set); complete: no missing value.

        scikit-learn sets: x is the feature vector, j the object
        {feature name: number}; x_miss, j_bool, j_miss are NULL.

        Weka sets: j has a string per nominal attribute, a number per numeric
        one and JSON null for Weka's missing value '?'.  j_bool is j with each
        two-valued nominal attribute whose labels are one "yes"-like (y, yes,
        true) and one other value turned into JSON true / false.  j_miss is
        j_bool with, for credit_g only, about 10% of the values deleted
        (numpy seed fixed); in j_miss a missing value is JSON null when id % 3
        is 1 or 2 and an absent key when id % 3 = 0.  For credit_g x is the
        vector of its 7 numeric attributes in file order and x_miss the same
        with NULL elements where j_miss lacks the value; for the other Weka
        sets x and x_miss are NULL.

    fashion_mnist(id int PRIMARY KEY, label text, split text, pixels float8[])

        Fashion-MNIST from Debian's dataset-fashion-mnist
        (/usr/share/datasets/fashion-mnist): 60,000 'train' rows (id 0..59999)
        then 10,000 'test' rows (id 60000..69999) in file order; label is the
        class name (T-shirt/top, Trouser, ...); pixels the 784 grey values
        0..255 row by row.  --no-fashion skips it.

Everything is loaded with COPY (test/data/pgload.py).  mixed.py reads the
same files through this module's readers (read_fashion) or exports the
loaded rows, so both sides see identical values.
"""

import argparse
import gzip
import json
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import arff  # noqa: E402
import pgload  # noqa: E402

WEKA_DIR = "/usr/share/doc/weka/examples"
FASHION_DIR = "/usr/share/datasets/fashion-mnist"

SKLEARN_SETS = ("iris", "wine", "breast_cancer", "digits")
WEKA_SETS = (("weather", "weather.nominal.arff"), ("vote", "vote.arff"),
             ("soybean", "soybean.arff"), ("credit_g", "credit-g.arff"))
HOLES = ("credit_g",)          # Weka sets whose j_miss / x_miss get artificial holes
HOLE_RATE = 0.1
TRUTHY = ("y", "yes", "true")

FASHION_LABELS = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")

CREATE_ROWS = """CREATE TABLE nbc_mixed_rows (
    ds       text NOT NULL,
    id       int NOT NULL,
    label    text NOT NULL,
    split    text NOT NULL CHECK (split IN ('train', 'test')),
    weight   float8 NOT NULL CHECK (weight > 0),
    complete bool NOT NULL,
    x        float8[],
    x_miss   float8[],
    j        jsonb NOT NULL,
    j_bool   jsonb,
    j_miss   jsonb,
    PRIMARY KEY (ds, id)
)"""
ROW_COLUMNS = ["ds", "id", "label", "split", "weight", "complete", "x", "x_miss", "j", "j_bool", "j_miss"]

CREATE_FASHION = """CREATE TABLE fashion_mnist (
    id     int PRIMARY KEY,
    label  text NOT NULL,
    split  text NOT NULL CHECK (split IN ('train', 'test')),
    pixels float8[] NOT NULL
)"""


def seed_of(ds, what):
    return zlib.crc32(("%s/%s" % (ds, what)).encode()) & 0x7fffffff


def split_of(i):
    return "test" if i % 4 == 3 else "train"


def weights_for(ds, n):
    import numpy as np
    return np.random.default_rng(seed_of(ds, "weight")).uniform(0.25, 4.0, n)


def pg_array(values):
    """A float8[] literal; repr() round-trips every double exactly."""
    return "{" + ",".join("NULL" if v is None else repr(float(v)) for v in values) + "}"


def jdump(obj):
    # floats as repr (exact); keys kept in source order, jsonb sorts them anyway
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def sklearn_rows():
    from sklearn import datasets
    rows = []
    for ds in SKLEARN_SETS:
        d = getattr(datasets, "load_" + ds)()
        names = [str(n) for n in d.feature_names]
        labels = [str(n) for n in d.target_names]
        w = weights_for(ds, len(d.target))
        for i, (xv, t) in enumerate(zip(d.data, d.target)):
            xs = [float(v) for v in xv]
            rows.append([ds, i, labels[t], split_of(i), repr(float(w[i])), "t",
                         pg_array(xs), None, jdump(dict(zip(names, xs))), None, None])
    return rows


def bool_attributes(rel):
    """{attribute index: truthy label} of two-valued nominal attributes with one yes-like label."""
    out = {}
    for k, a in enumerate(rel.attributes[:-1]):
        if a.kind == "nominal" and len(a.labels) == 2:
            yes = [v for v in a.labels if v.lower() in TRUTHY]
            if len(yes) == 1:
                out[k] = yes[0]
    return out


def weka_rows(wdir):
    import numpy as np
    rows = []
    for ds, fname in WEKA_SETS:
        path = os.path.join(wdir, fname)
        if not os.path.exists(path):
            raise SystemExit("load_mixed: %s not found (apt-get install -y weka)" % path)
        rel = arff.load(path)
        attrs = rel.attributes[:-1]
        if rel.attributes[-1].kind != "nominal":
            raise SystemExit("load_mixed: %s: last attribute is not a nominal class" % path)
        for a in attrs:
            if a.kind not in ("nominal", "numeric"):
                raise SystemExit("load_mixed: %s: attribute %r is %s" % (path, a.name, a.kind))
        bools = bool_attributes(rel)
        numeric = [k for k, a in enumerate(attrs) if a.kind == "numeric"]
        w = weights_for(ds, len(rel.rows))
        holes = np.random.default_rng(seed_of(ds, "holes")).random((len(rel.rows), len(attrs))) < HOLE_RATE
        for i, r in enumerate(rel.rows):
            if r[-1] is None:
                raise SystemExit("load_mixed: %s row %d has no class" % (path, i + 1))
            vals = r[:-1]
            j = {a.name: v for a, v in zip(attrs, vals)}
            jb = {a.name: (v == bools[k] if (k in bools and v is not None) else v)
                  for k, (a, v) in enumerate(zip(attrs, vals))}
            jm_vals = [None if (ds in HOLES and holes[i, k]) else v for k, v in enumerate(jb.values())]
            jm = {}
            for a, v in zip(attrs, jm_vals):
                if v is None and i % 3 == 0:
                    continue                 # absent key
                jm[a.name] = v
            x = pg_array([vals[k] for k in numeric]) if (ds in HOLES and numeric) else None
            xm = pg_array([jm_vals[k] for k in numeric]) if (ds in HOLES and numeric) else None
            complete = all(v is not None for v in vals)
            rows.append([ds, i, r[-1], split_of(i), repr(float(w[i])), "t" if complete else "f",
                         x, xm, jdump(j), jdump(jb), jdump(jm)])
    return rows


def _idx(path, magic, dims):
    with gzip.open(path, "rb") as f:
        data = f.read()
    m, = struct.unpack(">I", data[:4])
    if m != magic:
        raise SystemExit("load_mixed: %s: bad idx magic %#x" % (path, m))
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return shape, data[4 + 4 * dims:]


def read_fashion(fdir=FASHION_DIR):
    """[(split, images bytes, labels bytes, count)] for train then t10k; 784 bytes per image."""
    out = []
    for split, stem in (("train", "train"), ("test", "t10k")):
        ipath = os.path.join(fdir, "%s-images-idx3-ubyte.gz" % stem)
        lpath = os.path.join(fdir, "%s-labels-idx1-ubyte.gz" % stem)
        if not (os.path.exists(ipath) and os.path.exists(lpath)):
            raise SystemExit("load_mixed: %s not found (apt-get install -y dataset-fashion-mnist)" % ipath)
        (n, h, w), images = _idx(ipath, 0x803, 3)
        (nl,), labels = _idx(lpath, 0x801, 1)
        if (h, w) != (28, 28) or n != nl or len(images) != n * 784 or len(labels) != n:
            raise SystemExit("load_mixed: %s: unexpected shape %r / %d labels" % (ipath, (n, h, w), nl))
        out.append((split, images, labels, n))
    return out


def fashion_arrays(fdir=FASHION_DIR):
    """(X_train, y_train, X_test, y_test) as float64 / label-name numpy arrays, ids in file order."""
    import numpy as np
    parts = read_fashion(fdir)
    names = np.array(FASHION_LABELS, dtype=object)
    res = []
    for split, images, labels, n in parts:
        X = np.frombuffer(images, dtype=np.uint8).reshape(n, 784).astype(np.float64)
        y = names[np.frombuffer(labels, dtype=np.uint8)]
        res += [X, y]
    return tuple(res)


def fashion_copy_rows(fdir=FASHION_DIR):
    lut = [str(v) for v in range(256)]
    rid = 0
    for split, images, labels, n in read_fashion(fdir):
        for i in range(n):
            px = images[i * 784:(i + 1) * 784]
            yield [rid, FASHION_LABELS[labels[i]], split, "{" + ",".join([lut[b] for b in px]) + "}"]
            rid += 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-fashion", action="store_true", help="do not (re)load fashion_mnist")
    ap.add_argument("--weka-dir", default=WEKA_DIR)
    ap.add_argument("--fashion-dir", default=FASHION_DIR)
    args = ap.parse_args(argv[1:])

    rows = sklearn_rows() + weka_rows(args.weka_dir)
    n = pgload.replace_table("nbc_mixed_rows", CREATE_ROWS, ROW_COLUMNS, rows)
    counts = {}
    for r in rows:
        c = counts.setdefault(r[0], [0, 0, 0])
        c[0 if r[3] == "train" else 1] += 1
        c[2] += r[5] == "f"
    print("nbc_mixed_rows: %d rows (%s)" % (n, ", ".join(
        "%s %d/%d%s" % (ds, c[0], c[1], ", %d incomplete" % c[2] if c[2] else "")
        for ds, c in counts.items())))
    if not args.no_fashion:
        n = pgload.replace_table("fashion_mnist", CREATE_FASHION, ["id", "label", "split", "pixels"],
                                 fashion_copy_rows(args.fashion_dir))
        print("fashion_mnist: %d images from %s" % (n, args.fashion_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
