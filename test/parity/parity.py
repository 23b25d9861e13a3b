#!/usr/bin/python3
"""Parity of nbc against scikit-learn on real data (SpamAssassin, Reuters Grain).

Run by test/parity/run.sh, which loads the data first.  Needs a database
reachable through the libpq environment variables with nbc installed and the
tables spamassassin and reuters_grain loaded (test/data/load_*.py).

Tokens are made in SQL only (a text[] from regexp_matches over lower(body),
and to_tsvector('english', body)) and exported as they are to Python, so
both sides see identical token lists.  Count matrices use the training
vocabulary only (nbc ignores tokens it never saw in training too).

Prints one TAP-style line per check, "ok - ..." or "not ok - ...: detail",
and closes with "N passed, N failed".  Exits 1 when a check failed.

    parity.py [--quick] [--only SUBSTRING]...
"""

import argparse
import collections
import inspect
import json
import math
import sys
import time

import numpy as np
import psycopg2
import scipy.sparse as sp
from sklearn.metrics import mutual_info_score
from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB

TOL = 1e-9          # nbc vs scikit-learn and vs the independent MI computation
MERGE_TOL = 1e-12   # merged model vs the model trained at once

# key: a text key unique within the data set; class_prior: the class_prior case
DATASETS = collections.OrderedDict([
    ("spamassassin", dict(
        source="SELECT folder || '/' || msg_id AS key, label, split, body FROM spamassassin",
        class_prior={"ham": 0.3, "spam": 0.7})),
    ("reuters_grain", dict(
        source="SELECT lpad(id::text, 6, '0') AS key, label, split, body FROM reuters_grain",
        class_prior={"grain": 0.3, "other": 0.7})),
])

# The token regexp (applied to lower(body)).  Runs in SQL only.
TOKEN_RE = r"\w\w+"

# input name -> SQL expression of the per-document features
INPUTS = collections.OrderedDict([
    ("text[]", "tokens"),
    ("tsvector", "tsv"),
    ("strip(tsvector)", "strip(tsv)"),
])

KINDS = ("multinomial", "bernoulli", "complement")


# --------------------------------------------------------------------------
# reporting

class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def check(self, ok, desc, detail=""):
        if ok:
            self.passed += 1
            print("ok - %s%s" % (desc, " (%s)" % detail if detail else ""))
        else:
            self.failed += 1
            self.failures.append(desc)
            print("not ok - %s: %s" % (desc, detail))
        sys.stdout.flush()

    def note(self, msg):
        for line in str(msg).splitlines():
            print("# " + line)
        sys.stdout.flush()


R = Report()


def fmt(x):
    return "%.3g" % x if x is not None else "n/a"


# --------------------------------------------------------------------------
# database

class DB:
    def __init__(self):
        self.conn = psycopg2.connect("")
        self.conn.autocommit = True
        self.conn.set_client_encoding("UTF8")

    def execute(self, sql, args=None):
        with self.conn.cursor() as cur:
            cur.execute(sql, args)

    def query(self, sql, args=None):
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchall()


def prepare_sql(db):
    """Token table and every model, built once."""
    db.execute("SET client_min_messages = warning")
    db.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    db.execute("DROP TABLE IF EXISTS nbc_parity_models, nbc_parity_docs")
    db.execute("""CREATE TABLE nbc_parity_docs (
        ds text, key text, label text NOT NULL, split text NOT NULL,
        half int NOT NULL, weight float8 NOT NULL, tokens text[] NOT NULL, tsv tsvector NOT NULL,
        PRIMARY KEY (ds, key))""")
    for ds, spec in DATASETS.items():
        # half: the two disjoint parts for nb_merge; weight: 0.5 + (hash % 7) / 4
        db.execute("""INSERT INTO nbc_parity_docs
            SELECT %s, s.key, s.label, s.split,
                   get_byte(decode(md5(s.key), 'hex'), 0) %% 2,
                   0.5 + (get_byte(decode(md5(s.key), 'hex'), 1) %% 7) / 4.0,
                   ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), %s, 'g') AS m),
                   to_tsvector('english', s.body)
            FROM (""" + spec["source"] + """) s""", (ds, TOKEN_RE))
    db.execute("ANALYZE nbc_parity_docs")
    db.execute("""CREATE TABLE nbc_parity_models (
        ds text, input text, weighted bool, part text, model nb_model,
        PRIMARY KEY (ds, input, weighted, part))""")
    for inp, col in INPUTS.items():
        for weighted in (False, True):
            args = "label, %s%s" % (col, ", weight" if weighted else "")
            db.execute("""INSERT INTO nbc_parity_models
                SELECT ds, %s, %s, 'all', nb_train(""" + args + """)
                FROM nbc_parity_docs WHERE split = 'train' GROUP BY ds""", (inp, weighted))
            db.execute("""INSERT INTO nbc_parity_models
                SELECT ds, %s, %s, 'h' || half, nb_train(""" + args + """)
                FROM nbc_parity_docs WHERE split = 'train' GROUP BY ds, half""", (inp, weighted))


# --------------------------------------------------------------------------
# the Python side: identical token lists, count matrices

class Docs:
    """One data set's documents as exported from SQL, for one input kind."""

    def __init__(self, keys, labels, splits, weights, bags):
        self.keys = keys
        self.labels = labels
        self.splits = splits
        self.weights = np.asarray(weights, dtype=np.float64)
        self.bags = bags  # list of {token: count}
        train = [i for i, s in enumerate(splits) if s == "train"]
        test = [i for i, s in enumerate(splits) if s == "test"]
        self.train, self.test = train, test
        self.vocab = sorted(set(t for i in train for t in bags[i]))
        self.col = {t: j for j, t in enumerate(self.vocab)}
        self.X_train = self._matrix(train)
        self.X_test = self._matrix(test)
        self.y_train = np.array([labels[i] for i in train], dtype=object)
        self.w_train = self.weights[train]
        self.test_keys = [keys[i] for i in test]

    def _matrix(self, rows):
        indptr, indices, data = [0], [], []
        col = self.col
        for i in rows:
            items = sorted((col[t], c) for t, c in self.bags[i].items() if t in col)
            indices.extend(j for j, _ in items)
            data.extend(c for _, c in items)
            indptr.append(len(indices))
        return sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                              np.asarray(indptr, dtype=np.int64)), shape=(len(rows), len(self.vocab)))


def export_docs(db, ds, inp):
    if inp == "text[]":
        rows = db.query("""SELECT key, label, split, weight, tokens FROM nbc_parity_docs
                           WHERE ds = %s ORDER BY key""", (ds,))
        bags = [collections.Counter(r[4]) for r in rows]
    else:
        col = INPUTS[inp]
        # nbc counts a lexeme once per position, once if it has none (stripped)
        rows = db.query("""SELECT d.key, d.label, d.split, d.weight, u.lx, u.cnt
                           FROM nbc_parity_docs d LEFT JOIN LATERAL (
                               SELECT array_agg(lexeme) AS lx,
                                      array_agg(coalesce(cardinality(positions), 1)) AS cnt
                               FROM unnest(""" + col + """)) u ON true
                           WHERE d.ds = %s ORDER BY d.key""", (ds,))
        bags = []
        for r in rows:
            bag = {}
            for t, c in zip(r[4] or [], r[5] or []):
                if t in bag:
                    raise RuntimeError("duplicate lexeme %r in a tsvector" % t)
                bag[t] = float(c)
            bags.append(bag)
    return Docs([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                [r[3] for r in rows], bags)


_FORCE_ALPHA = "force_alpha" in inspect.signature(MultinomialNB).parameters


def sk_estimator(kind, alpha, fit_prior, class_prior):
    kw = dict(alpha=alpha, fit_prior=fit_prior, class_prior=class_prior)
    if _FORCE_ALPHA:
        kw["force_alpha"] = True
    if kind == "multinomial":
        return MultinomialNB(**kw)
    if kind == "bernoulli":
        return BernoulliNB(binarize=0.0, **kw)   # presence: count > 0
    if kind == "complement":
        return ComplementNB(norm=False, **kw)
    raise ValueError(kind)


# --------------------------------------------------------------------------
# checks

def parse_json(s):
    if s is None:
        return None
    if isinstance(s, (dict, list)):
        return s
    return json.loads(s)


def as_float(v):
    """A jsonb number, or a non-finite value however nbc spells it."""
    if v is None:
        return float("-inf")
    if isinstance(v, str):
        return float(v)   # "-Infinity", "NaN", ...
    return float(v)


def option_sets(ds):
    cp = DATASETS[ds]["class_prior"]
    out = [("NULL options (defaults)", None, ("multinomial", 1.0, True, None))]
    for kind in KINDS:
        out.append(("%s alpha=1" % kind, {"kind": kind}, (kind, 1.0, True, None)))
        out.append(("%s alpha=0.1" % kind, {"kind": kind, "alpha": 0.1}, (kind, 0.1, True, None)))
        out.append(("%s fit_prior=false" % kind, {"kind": kind, "fit_prior": False},
                    (kind, 1.0, False, None)))
        out.append(("%s class_prior=%s" % (kind, json.dumps(cp, sort_keys=True)),
                    {"kind": kind, "class_prior": cp},
                    (kind, 1.0, True, [cp[c] for c in sorted(cp)])))
    return out


def model_sql(ds, inp, weighted, part="all"):
    return ("(SELECT model FROM nbc_parity_models WHERE ds = %s AND input = %s "
            "AND weighted = %s AND part = %s)"), (ds, inp, weighted, part)


def run_case(db, docs, ds, inp, weighted, name, opts, skargs, cache):
    desc = "%s %s%s %s" % (ds, inp, " weighted" if weighted else "", name)
    col = INPUTS[inp]
    msql, margs = model_sql(ds, inp, weighted)
    ojson = None if opts is None else json.dumps(opts)
    t0 = time.time()
    try:
        rows = db.query(
            "SELECT d.key, nb_predict(m, " + col + ", %s::jsonb), "
            "nb_predict_proba(m, " + col + ", %s::jsonb)::text, "
            "nb_predict_log_proba(m, " + col + ", %s::jsonb)::text "
            "FROM nbc_parity_docs d, " + msql + " AS mm(m) "
            "WHERE d.ds = %s AND d.split = 'test' ORDER BY d.key",
            (ojson, ojson, ojson) + margs + (ds,))
    except psycopg2.Error as e:
        R.check(False, desc + ": query", str(e).strip().splitlines()[0])
        return
    t_sql = time.time() - t0

    # scikit-learn, fit once per (data, options)
    ck = (ds, inp, weighted, skargs[0], skargs[1], skargs[2], tuple(skargs[3] or ()))
    if ck not in cache:
        est = sk_estimator(*skargs)
        est.fit(docs.X_train, docs.y_train, sample_weight=docs.w_train if weighted else None)
        cache[ck] = (list(est.classes_), est.predict_proba(docs.X_test),
                     est.predict_log_proba(docs.X_test), est.predict(docs.X_test))
    classes, P, LP, PRED = cache[ck]

    index = {k: i for i, k in enumerate(docs.test_keys)}
    if len(rows) != len(index) or any(r[0] not in index for r in rows):
        R.check(False, desc + ": test documents", "nbc returned %d rows for %d test documents"
                % (len(rows), len(index)))
        return
    worst_p = (0.0, None)
    worst_lp = (0.0, None)
    bad_shape = []
    nonfinite_mismatch = []
    pred_mismatch = []
    for key, pred, pj, lpj in rows:
        i = index[key]
        p, lp = parse_json(pj), parse_json(lpj)
        if not isinstance(p, dict) or sorted(p) != classes or not isinstance(lp, dict) or sorted(lp) != classes:
            bad_shape.append((key, pj, lpj))
            continue
        for c, cls in enumerate(classes):
            e = abs(as_float(p[cls]) - P[i, c])
            if not e <= worst_p[0]:   # also NaN
                worst_p = (e if e == e else float("inf"), (key, cls, p[cls], P[i, c]))
            a, b = as_float(lp[cls]), LP[i, c]
            if math.isfinite(a) and math.isfinite(b):
                e = abs(a - b)
                if e > worst_lp[0]:
                    worst_lp = (e, (key, cls, a, b))
            elif not (a == b):
                nonfinite_mismatch.append((key, cls, lp[cls], b))
        if pred != PRED[i]:
            pred_mismatch.append((key, pred, PRED[i], dict(zip(classes, LP[i])), lp))

    if bad_shape:
        R.check(False, desc + ": result shape", "%d documents, e.g. %s: %r / %r"
                % ((len(bad_shape),) + bad_shape[0]))
        return
    e, w = worst_p
    R.check(e <= TOL, desc + ": nb_predict_proba",
            "max abs err %s%s" % (fmt(e), "" if w is None else
                                  " at doc %s class %s: nbc %r sklearn %r" % w))
    e, w = worst_lp
    detail = "max abs err %s%s" % (fmt(e), "" if w is None else
                                   " at doc %s class %s: nbc %r sklearn %r" % w)
    if nonfinite_mismatch:
        detail += "; %d non-finite mismatches, e.g. doc %s class %s: nbc %r sklearn %r" % (
            (len(nonfinite_mismatch),) + nonfinite_mismatch[0])
    R.check(e <= TOL and not nonfinite_mismatch, desc + ": nb_predict_log_proba", detail)
    if pred_mismatch:
        k, a, b, sl, nl = pred_mismatch[0]
        R.check(False, desc + ": nb_predict",
                "%d of %d differ, e.g. doc %s: nbc %r sklearn %r (sklearn log-proba %r, nbc %r)"
                % (len(pred_mismatch), len(rows), k, a, b, sl, nl))
    else:
        R.check(True, desc + ": nb_predict", "%d docs, sql %.1fs" % (len(rows), t_sql))


def presence_stats(docs, weighted):
    """Per class (weighted) document counts and docs containing each token."""
    classes = sorted(set(docs.y_train))
    w = docs.w_train if weighted else np.ones(len(docs.y_train))
    Xb = (docs.X_train > 0).astype(np.float64).tocsc()
    Nc = np.array([w[docs.y_train == c].sum() for c in classes])
    njc = np.vstack([np.asarray(Xb[np.flatnonzero(docs.y_train == c)].T @ w[docs.y_train == c]).ravel()
                     for c in classes])
    return classes, Nc, njc


def murphy_mi(Nc, njc):
    """Murphy (2012) eq. 3.76, in nats, 0 log 0 = 0."""
    N = Nc.sum()
    pi = Nc / N                        # (C,)
    theta = njc / Nc[:, None]          # (C, V)
    theta_j = (pi[:, None] * theta).sum(axis=0)
    mi = np.zeros(njc.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        for c in range(len(Nc)):
            t = theta[c]
            a = np.where(t > 0, t * pi[c] * np.log(t / theta_j), 0.0)
            b = np.where(t < 1, (1 - t) * pi[c] * np.log((1 - t) / (1 - theta_j)), 0.0)
            mi += a + b
    return mi


def check_mutual_info(db, docs, ds, inp, weighted):
    desc = "%s %s%s nb_mutual_info" % (ds, inp, " weighted" if weighted else "")
    msql, margs = model_sql(ds, inp, weighted)
    try:
        rows = db.query("SELECT t.feature, t.mutual_info, t.ord FROM nb_mutual_info(" + msql +
                        ") WITH ORDINALITY AS t(feature, mutual_info, ord) ORDER BY t.ord", margs)
    except psycopg2.Error as e:
        R.check(False, desc + ": query", str(e).strip().splitlines()[0])
        return
    feats = [r[0] for r in rows]
    vals = [r[1] for r in rows]
    ok = len(feats) == len(set(feats)) and set(feats) == set(docs.vocab)
    R.check(ok, desc + ": one row per training token",
            "%d rows, %d distinct, vocabulary %d, missing %d, extra %d" % (
                len(feats), len(set(feats)), len(docs.vocab),
                len(set(docs.vocab) - set(feats)), len(set(feats) - set(docs.vocab))))
    # ordering: mutual_info descending, ties by feature in byte order
    bad = None
    for k in range(len(rows) - 1):
        a, b = rows[k], rows[k + 1]
        if a[1] > b[1] or (a[1] == b[1] and a[0].encode("utf-8") < b[0].encode("utf-8")):
            continue
        bad = (k + 1, a[0], a[1], b[0], b[1])
        break
    ties = sum(1 for k in range(len(rows) - 1) if rows[k][1] == rows[k + 1][1])
    R.check(bad is None, desc + ": ordered by mutual_info desc, ties by feature",
            "%d tied neighbours" % ties if bad is None else
            "rows %d/%d out of order: (%r, %r) then (%r, %r)" % ((bad[0], bad[0] + 1) + bad[1:]))

    classes, Nc, njc = presence_stats(docs, weighted)
    mi = murphy_mi(Nc, njc)
    nbc = {f: v for f, v in zip(feats, vals)}
    err, worst = 0.0, None
    for j, t in enumerate(docs.vocab):
        if t not in nbc:
            continue
        v = nbc[t]
        e = abs(v - mi[j]) if v is not None else float("inf")
        if not e <= err:
            err, worst = e, (t, v, mi[j])
    R.check(err <= TOL, desc + ": values vs Murphy eq. 3.76 (numpy)",
            "max abs err %s over %d tokens%s" % (fmt(err), len(docs.vocab),
                                                   "" if worst is None else
                                                   ", worst %r: nbc %r numpy %r" % worst))
    if weighted:
        return
    # spot check against scikit-learn: the 10 highest, 40 spread over the rest
    ranked = [f for f in feats if f in docs.col]
    pick = ranked[:10] + [ranked[int(k)] for k in np.linspace(10, len(ranked) - 1, 40)] if len(ranked) > 50 else ranked
    Xb = (docs.X_train > 0).tocsc()
    err, worst = 0.0, None
    for t in pick:
        presence = np.asarray(Xb[:, docs.col[t]].todense()).ravel().astype(int)
        ref = mutual_info_score(docs.y_train, presence)
        e = abs(nbc[t] - ref)
        if not e <= err:
            err, worst = e, (t, nbc[t], ref)
    R.check(err <= TOL, desc + ": %d features vs sklearn mutual_info_score" % len(pick),
            "max abs err %s%s" % (fmt(err), "" if worst is None else ", worst %r: nbc %r sklearn %r" % worst))


def check_classes(db, docs, ds, inp, weighted):
    desc = "%s %s%s nb_classes" % (ds, inp, " weighted" if weighted else "")
    msql, margs = model_sql(ds, inp, weighted)
    try:
        rows = db.query("SELECT label, documents, prior FROM nb_classes(" + msql + ")", margs)
    except psycopg2.Error as e:
        R.check(False, desc, str(e).strip().splitlines()[0])
        return
    w = docs.w_train if weighted else np.ones(len(docs.y_train))
    classes = sorted(set(docs.y_train))
    docs_c = {c: float(w[docs.y_train == c].sum()) for c in classes}
    total = sum(docs_c.values())
    got = {r[0]: (r[1], r[2]) for r in rows}
    if sorted(got) != classes or len(rows) != len(classes):
        R.check(False, desc, "labels %r, expected %r" % ([r[0] for r in rows], classes))
        return
    err = max(max(abs(got[c][0] - docs_c[c]), abs(got[c][1] - docs_c[c] / total)) for c in classes)
    R.check(err <= TOL, desc, "max abs err %s; %s" % (
        fmt(err), ", ".join("%s %g docs prior %.6f" % (c, got[c][0], got[c][1]) for c in classes)))


def check_merge(db, ds, inp, weighted):
    desc = "%s %s%s nb_merge" % (ds, inp, " weighted" if weighted else "")
    col = INPUTS[inp]
    whole, wargs = model_sql(ds, inp, weighted, "all")
    h0, h0args = model_sql(ds, inp, weighted, "h0")
    h1, h1args = model_sql(ds, inp, weighted, "h1")
    agg = ("(SELECT nb_merge(model ORDER BY part DESC) FROM nbc_parity_models WHERE ds = %s AND input = %s "
           "AND weighted = %s AND part IN ('h0', 'h1'))")
    sel = []
    for kind in KINDS:
        o = "'%s'::jsonb" % json.dumps({"kind": kind})
        for m in ("w", "mg", "ag"):
            sel.append("nb_predict_proba(%s, %s, %s)::text" % (m, col, o))
            sel.append("nb_predict(%s, %s, %s)" % (m, col, o))
    try:
        rows = db.query(
            "SELECT d.key, " + ", ".join(sel) + " FROM nbc_parity_docs d, "
            "(SELECT " + whole + ", nb_merge(" + h0 + ", " + h1 + "), " + agg + ") AS mm(w, mg, ag) "
            "WHERE d.ds = %s AND d.split = 'test'",
            wargs + h0args + h1args + (ds, inp, weighted) + (ds,))
        cls = db.query(
            "SELECT (SELECT array_agg(c ORDER BY c.label) FROM nb_classes(" + whole + ") c)::text, "
            "(SELECT array_agg(c ORDER BY c.label) FROM nb_classes(nb_merge(" + h0 + ", " + h1 + ")) c)::text",
            wargs + h0args + h1args)
    except psycopg2.Error as e:
        R.check(False, desc + ": query", str(e).strip().splitlines()[0])
        return
    for name, off in (("nb_merge(a, b)", 1), ("aggregate nb_merge(model)", 2)):
        err, worst, npred = 0.0, None, 0
        for r in rows:
            for k, kind in enumerate(KINDS):
                base = 1 + 6 * k
                pw, pm = parse_json(r[base]), parse_json(r[base + 2 * off])
                if pw is None or pm is None or sorted(pw) != sorted(pm):
                    err, worst = float("inf"), (r[0], kind, pw, pm)
                    continue
                for c in pw:
                    e = abs(as_float(pw[c]) - as_float(pm[c]))
                    if not e <= err:
                        err, worst = e, (r[0], kind + " " + c, pw[c], pm[c])
                if r[base + 1] != r[base + 1 + 2 * off]:
                    npred += 1
        R.check(err <= MERGE_TOL and npred == 0,
                desc + ": %s of the two halves predicts as the whole (3 kinds)" % name,
                "max abs err %s, %d labels differ over %d docs%s" % (
                    fmt(err), npred, len(rows),
                    "" if worst is None or err <= MERGE_TOL else
                    "; worst doc %s %s: whole %r merged %r" % worst))
    if cls:
        # documents are sums of multiples of 1/4: exact in any order
        R.check(cls[0][0] == cls[0][1], desc + ": nb_classes of the merge equals the whole",
                "%s" % cls[0][0] if cls[0][0] == cls[0][1] else "whole %s merged %s" % cls[0])


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[],
                    help="run only checks whose data set / input contain this (repeatable)")
    ap.add_argument("--no-prepare", action="store_true",
                    help="reuse nbc_parity_docs / nbc_parity_models from an earlier run")
    args = ap.parse_args()

    t_start = time.time()
    db = DB()
    if not args.no_prepare:
        t0 = time.time()
        prepare_sql(db)
        R.note("tokens and models built in SQL in %.1fs" % (time.time() - t0))

    for ds in DATASETS:
        for inp in INPUTS:
            if args.only and not any(o in "%s %s" % (ds, inp) for o in args.only):
                continue
            t0 = time.time()
            docs = export_docs(db, ds, inp)
            R.note("%s %s: %d train / %d test documents, vocabulary %d, exported in %.1fs" % (
                ds, inp, len(docs.train), len(docs.test), len(docs.vocab), time.time() - t0))
            cache = {}
            weighted_opts = (False, True)
            for weighted in weighted_opts:
                check_classes(db, docs, ds, inp, weighted)
                sets = option_sets(ds)
                if inp == "strip(tsvector)":
                    # stripped tsvectors: the default and alpha=1 of each kind
                    sets = [s for s in sets if s[0] == "NULL options (defaults)" or s[0].endswith("alpha=1")]
                if weighted:
                    sets = [s for s in sets if s[0] != "NULL options (defaults)"]
                for name, opts, skargs in sets:
                    run_case(db, docs, ds, inp, weighted, name, opts, skargs, cache)
                if inp != "strip(tsvector)":
                    check_mutual_info(db, docs, ds, inp, weighted)
                    check_merge(db, ds, inp, weighted)
    R.note("total %.1fs" % (time.time() - t_start))
    if R.failures:
        R.note("failed: " + "; ".join(R.failures))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
