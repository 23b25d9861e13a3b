#!/usr/bin/python3
"""Parity of nb_cross_validate against scikit-learn's cross_validate.

Run by test/parity/run.sh (suite "crossval"), which loads the data first:
tables spamassassin and reuters_grain (test/data/load_spamassassin.py,
load_reuters.py) and nbc_mixed_rows (test/data/load_mixed.py).

For every data set the folds are nb_cross_validate's own (5 folds by the
rows' contents, computed here in SQL from the documented rule: rows numbered
by label in byte order, then by the 64-bit hash of their features, fold =
number mod 5) and given to scikit-learn as a PredefinedSplit.  For every
option set of the grid, nbc's mean and population standard deviation over
the folds of accuracy, macro F1 and log loss must equal scikit-learn's
cross_validate (scoring accuracy, f1_macro, neg_log_loss; np.mean, np.std
of the fold scores) within 1e-9, but complement's log loss, which nbc
reports as NULL (its scores are not probabilities):

  * token bags (SpamAssassin, Reuters Grain; text[] of regexp tokens of
    lower(body), made in SQL and exported as they are): a Pipeline of
    CountVectorizer (fitted on the training folds, so its vocabulary is the
    out-of-fold model's) and MultinomialNB / BernoulliNB(binarize=0) /
    ComplementNB(norm=False) with the grid's alpha and fit_prior (TEXT_GRID,
    SMALL_TEXT_GRID);
  * Gaussian features (iris, wine, breast_cancer from nbc_mixed_rows, as
    float8[] and as jsonb objects): GaussianNB with the grid's
    var_smoothing, and priors uniform for fit_prior false.

Also: the count form (folds => 5) equals the fold-column form with the
documented folds exactly, which checks the documented fold assignment.

Prints one TAP-style line per check and closes with "N passed, N failed".
"""

import inspect
import json
import sys
import time

from report import Report, fmt

try:
    import numpy as np
    import psycopg2
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.metrics import log_loss
    from sklearn.model_selection import PredefinedSplit, cross_validate
    from sklearn.naive_bayes import BernoulliNB, ComplementNB, GaussianNB, MultinomialNB
    from sklearn.pipeline import Pipeline
except ImportError as e:
    print("not ok - crossval prerequisites: %s (Debian: python3-sklearn python3-psycopg2; "
          "run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

from db import DB  # noqa: E402 (after the prerequisites are checked)

TOL = 1e-9
FOLDS = 5
R = Report()

TOKEN_RE = r"\w\w+"
TEXT_GRID = ([{"kind": k, "alpha": a, "fit_prior": f} for k in ("multinomial", "bernoulli")
              for a in (0.1, 1) for f in (True, False)]
             + [{"kind": "complement", "alpha": a} for a in (0.1, 1)])
# scikit-learn fits CountVectorizer again for every fold and option set, which
# on SpamAssassin costs minutes: there, every kind and both values of each
# option, not every combination
SMALL_TEXT_GRID = [{"kind": "multinomial", "alpha": 0.1, "fit_prior": True},
                   {"kind": "multinomial", "alpha": 1, "fit_prior": False},
                   {"kind": "bernoulli", "alpha": 0.1, "fit_prior": False},
                   {"kind": "bernoulli", "alpha": 1, "fit_prior": True},
                   {"kind": "complement", "alpha": 0.1}]
TEXT_SETS = [("spamassassin", "SELECT folder || '/' || msg_id AS key, label, body FROM spamassassin",
              SMALL_TEXT_GRID),
             ("reuters_grain", "SELECT lpad(id::text, 6, '0') AS key, label, body FROM reuters_grain",
              TEXT_GRID)]
GAUSS_SETS = ("iris", "wine", "breast_cancer")
GAUSS_GRID = [{"var_smoothing": v, "fit_prior": f} for v in (1e-9, 1e-5, 1e-2) for f in (True, False)]
# the documented hash of each type of features
HASH = {"text[]": "hash_array_extended(%s COLLATE \"C\", 0)",
        "float8[]": "hash_array_extended(%s, 0)",
        "jsonb": "jsonb_hash_extended(%s, 0)"}

_FORCE = {"force_alpha": True} if "force_alpha" in inspect.signature(MultinomialNB).parameters else {}


def identity(x):
    return x


def sk_estimator(opts, n_classes):
    kind = opts.get("kind", "multinomial")
    if "var_smoothing" in opts:
        priors = None if opts.get("fit_prior", True) else np.full(n_classes, 1.0 / n_classes)
        return GaussianNB(var_smoothing=opts["var_smoothing"], priors=priors)
    kw = dict(alpha=opts.get("alpha", 1.0), **_FORCE)
    if kind == "complement":
        return ComplementNB(norm=False, **kw)
    kw["fit_prior"] = opts.get("fit_prior", True)
    if kind == "bernoulli":
        return BernoulliNB(binarize=0.0, **kw)
    return MultinomialNB(**kw)


def folded(rel, features, ftype):
    """rel's rows with the documented fold (5 folds), as SQL."""
    return ("SELECT label, %s AS features, (row_number() OVER (ORDER BY label COLLATE \"C\", %s) - 1) %% %d AS fold "
            "FROM %s WHERE label IS NOT NULL AND %s IS NOT NULL"
            % (features, HASH[ftype] % features, FOLDS, rel, features))


def nbc_side(db, rel, features, grid, fold_view):
    """{options: (acc, acc_std, f1, f1_std, ll, ll_std)} of the count form; and
    whether the fold-column form over fold_view gives exactly the same rows."""
    q = ("SELECT options::text, accuracy, accuracy_std, macro_f1, macro_f1_std, log_loss, log_loss_std "
         "FROM nb_cross_validate(%s, 'label', %s, folds => 5, grid => %s)")
    rows = db.query(q, (rel, features, json.dumps(grid)))
    q2 = ("SELECT options::text, accuracy, accuracy_std, macro_f1, macro_f1_std, log_loss, log_loss_std "
          "FROM nb_cross_validate(%s, 'label', 'features', fold_column => 'fold', grid => %s)")
    rows2 = db.query(q2, (fold_view, json.dumps(grid)))
    return {json.dumps(json.loads(r[0]), sort_keys=True): r[1:] for r in rows}, sorted(rows) == sorted(rows2)


def log_loss_scorer(est, X, y):
    """log_loss of predict_proba's every column.  The "neg_log_loss" scorer,
    with two classes, keeps the second class's column only and recomputes the
    first as 1 - p, which loses the digits of a probability below about 1e-8
    (log loss off by up to 1e-3 on Reuters); this is log_loss itself."""
    return log_loss(y, est.predict_proba(X), labels=est.classes_)


def sk_side(X, y, folds, opts, pipeline):
    est = sk_estimator(opts, len(set(y)))
    model = Pipeline([("v", CountVectorizer(analyzer=identity)), ("nb", est)]) if pipeline else est
    r = cross_validate(model, X, y, cv=PredefinedSplit(folds),
                       scoring={"accuracy": "accuracy", "f1_macro": "f1_macro", "log_loss": log_loss_scorer},
                       error_score="raise")
    a, f, ll = r["test_accuracy"], r["test_f1_macro"], r["test_log_loss"]
    if opts.get("kind") == "complement":
        # ComplementNB's predict_proba normalizes scores that are not
        # probabilities of the data: nbc reports no log loss for them
        return (a.mean(), a.std(), f.mean(), f.std(), None, None)
    return (a.mean(), a.std(), f.mean(), f.std(), ll.mean(), ll.std())


def compare(desc, nbc, same_forms, sk):
    R.check(same_forms, desc + ": folds => 5 equals the documented fold column", "")
    for key, ref in sk.items():
        got = nbc.get(key)
        if got is None:
            R.check(False, "%s %s" % (desc, key), "no row from nb_cross_validate")
            continue
        # a log loss that is None in one must be None (NULL) in the other
        if any((a is None) != (b is None) for a, b in zip(got, ref)):
            R.check(False, "%s %s" % (desc, key), "NULL metrics differ (nbc %s, sklearn %s)" % (got, ref))
            continue
        err = max(abs(a - b) for a, b in zip(got, ref) if a is not None)
        R.check(err <= TOL, "%s %s" % (desc, key),
                "max abs err %s over mean and std of accuracy, macro F1, log loss (nbc %s, sklearn %s)"
                % (fmt(err), ", ".join("%.6g" % v if v is not None else "NULL" for v in got),
                   ", ".join("%.6g" % v if v is not None else "NULL" for v in ref)))


SEP = "\x01"


def text_sets(db):
    for ds, source, grid in TEXT_SETS:
        t0 = time.time()
        db.execute("DROP TABLE IF EXISTS nbc_cv_%s CASCADE" % ds)
        db.execute("CREATE TABLE nbc_cv_%s AS SELECT s.key, s.label, "
                   "ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), %%s, 'g') AS m) AS tokens "
                   "FROM (%s) s" % (ds, source), (TOKEN_RE,))
        db.execute("CREATE VIEW nbc_cv_%s_folds AS %s" % (ds, folded("nbc_cv_" + ds, "tokens", "text[]")))
        nbc, same = nbc_side(db, "nbc_cv_" + ds, "tokens", grid, "nbc_cv_%s_folds" % ds)
        rows = db.query("SELECT label, array_to_string(features, %s), cardinality(features), fold FROM nbc_cv_"
                        + ds + "_folds", (SEP,))
        X = [r[1].split(SEP) if r[2] else [] for r in rows]
        if any(len(x) != r[2] for x, r in zip(X, rows)):
            R.check(False, ds + ": export", "a token contains \\x01")
            continue
        y = np.array([r[0] for r in rows], dtype=object)
        folds = np.array([r[3] for r in rows])
        sk = {json.dumps(o, sort_keys=True): sk_side(X, y, folds, o, True) for o in grid}
        compare("%s text[] (%d rows)" % (ds, len(rows)), nbc, same, sk)
        R.note("%s: %.1fs" % (ds, time.time() - t0))
        db.execute("DROP TABLE nbc_cv_%s CASCADE" % ds)


def gauss_sets(db):
    for ds in GAUSS_SETS:
        for features, ftype in (("x", "float8[]"), ("j", "jsonb")):
            t0 = time.time()
            rel = "nbc_cv_%s_%s" % (ds, features)
            db.execute("DROP TABLE IF EXISTS %s CASCADE" % rel)
            db.execute("CREATE TABLE %s AS SELECT id, label, %s FROM nbc_mixed_rows WHERE ds = %%s"
                       % (rel, features), (ds,))
            db.execute("CREATE VIEW %s_folds AS %s" % (rel, folded(rel, features, ftype)))
            nbc, same = nbc_side(db, rel, features, GAUSS_GRID, rel + "_folds")
            rows = db.query("SELECT label, features, fold FROM %s_folds" % rel)
            # a jsonb object's values in the order of its keys: GaussianNB does
            # not depend on the order of the features
            X = np.array([r[1] if isinstance(r[1], list) else [r[1][k] for k in sorted(r[1])]
                          for r in rows], dtype=np.float64)
            y = np.array([r[0] for r in rows], dtype=object)
            folds = np.array([r[2] for r in rows])
            sk = {json.dumps(o, sort_keys=True): sk_side(X, y, folds, o, False) for o in GAUSS_GRID}
            compare("%s %s (%d rows)" % (ds, ftype, len(rows)), nbc, same, sk)
            R.note("%s %s: %.1fs" % (ds, ftype, time.time() - t0))
            db.execute("DROP TABLE %s CASCADE" % rel)


def main():
    db = DB()
    db.execute("SET client_min_messages = warning")
    db.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    for part in (text_sets, gauss_sets):
        try:
            part(db)
        except psycopg2.Error as e:
            R.check(False, part.__name__, str(e).strip().splitlines()[0])
    if R.failures:
        R.note("failed: " + "; ".join(R.failures))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
