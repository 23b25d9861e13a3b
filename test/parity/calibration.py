#!/usr/bin/python3
"""Calibrated probabilities: nb_calibrate against scikit-learn and numpy.

Run by test/parity/run.sh (suite "calibration"), after SpamAssassin, Reuters
Grain and the fortunes are loaded (test/data/load_spamassassin.py,
load_reuters.py, load_fortunes.py).  Each corpus has a training and a
held-out split (SpamAssassin's and Reuters' own; a quarter of the fortunes
by a hash of their place, the file's name the label, files of fewer than 20
training fortunes left out so that scikit-learn's 5-fold stratified split
has rows of every class in each fold).  Documents are text, tokenized by
nb_train(label, body) as scikit-learn's CountVectorizer() (the text suite
checks that), the model multinomial with alpha 1.

The folds of the training split are a column (a hash of the row's key mod
5), given to nb_calibrate as fold_column and to scikit-learn as a
PredefinedSplit.  Checks per corpus:

  * sigmoid, against scikit-learn: CalibratedClassifierCV(Pipeline(
    CountVectorizer(), MultinomialNB()), method="sigmoid", cv=those folds,
    ensemble=False) fits its sigmoids on the out-of-fold predict_proba and
    the classifier on every training row, as nb_calibrate does; its
    held-out predict_proba must equal nb_predict_proba with the fitted
    options within 1e-6 (scikit-learn's BFGS stops at a gradient norm of
    1e-5; nbc's Newton iterations go to convergence);
  * sigmoid, against numpy: the same convex problem (Platt's targets) solved
    to convergence by Newton's method in numpy from scikit-learn's
    out-of-fold probabilities: every (a, b) within 1e-7 relative;
  * temperature, against numpy/scipy: T minimizing the out-of-fold log loss
    of scikit-learn's out-of-fold log posteriors (scipy's brentq on the
    derivative in 1 / T): within 1e-8 relative;
  * T = 1 gives nb_predict_proba's bytes; the predicted labels under the
    fitted temperature are nb_predict's without it;
  * method "auto" (nb_calibrate's default) keeps the method of the lower
    out-of-fold log loss;
  * the target: on the held-out split, the log loss and Brier score (by
    nb_metrics' probability form) under nb_calibrate's default calibration
    are at most the uncalibrated ones, and the log loss is within 5% of
    (or below) CalibratedClassifierCV(MultinomialNB(), method="sigmoid",
    cv=5) with its defaults (5 stratified folds, an ensemble of the folds'
    models); each method alone is reported as a note.

Prints one TAP-style line per check, the table of test/bench/README.md ("# |"
lines), and closes with "N passed, N failed".
"""

import json
import sys
import time
import warnings

from report import Report, fmt

try:
    import numpy as np
    from scipy.optimize import brentq
    from scipy.special import expit, logsumexp
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.metrics import log_loss
    from sklearn.model_selection import PredefinedSplit, cross_val_predict
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import Pipeline
except ImportError as e:
    print("not ok - calibration prerequisites: %s (Debian: python3-sklearn python3-scipy; "
          "run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

from db import DB  # noqa: E402

R = Report()
FOLDS = 5
SK_TOL = 1e-6
AB_TOL = 1e-7
T_TOL = 1e-8

# (corpus, SQL of its rows: key, label, body, split)
CORPORA = [
    ("SpamAssassin", "SELECT folder || '/' || msg_id, label, body, split FROM spamassassin"),
    ("Reuters Grain", "SELECT lpad(id::text, 6, '0'), label, body, split FROM reuters_grain"),
    ("fortunes (ru, zh)",
     "SELECT * FROM (SELECT label || '/' || n AS key, label, body, "
     "CASE WHEN md5(label || '/' || n) < '4' THEN 'test' ELSE 'train' END AS split FROM fortunes) f "
     "WHERE label IN (SELECT label FROM fortunes WHERE md5(label || '/' || n) >= '4' "
     "GROUP BY label HAVING count(*) >= 20)"),
]


def pipeline():
    return Pipeline([("v", CountVectorizer()), ("nb", MultinomialNB())])


def platt_targets(y):
    n1 = y.sum()
    n0 = len(y) - n1
    return np.where(y, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))


def platt_loss(p, y, ab):
    """Platt's cross-entropy of the sigmoid (a, b) at probabilities p of class indicators y."""
    u = ab[0] * p + ab[1]
    return np.sum(np.logaddexp(0, u) - (1 - platt_targets(y)) * u)


def platt_ref(p, y):
    """(a, b) minimizing Platt's cross-entropy, Newton's method to convergence."""
    n1 = y.sum()
    t = platt_targets(y)
    ab = np.array([0.0, np.log((len(y) - n1 + 1.0) / (n1 + 1.0))])

    def loss(ab):
        return platt_loss(p, y, ab)

    for _ in range(200):
        P = expit(-(ab[0] * p + ab[1]))
        r = t - P
        w = P * (1 - P)
        g = np.array([np.dot(r, p), r.sum()])
        if np.max(np.abs(g)) <= 1e-12 * len(p):
            break
        H = np.array([[np.dot(w, p * p), np.dot(w, p)], [np.dot(w, p), w.sum()]]) + 1e-12 * np.eye(2)
        d = -np.linalg.solve(H, g)
        step, l0 = 1.0, loss(ab)
        while step >= 1e-10 and loss(ab + step * d) > l0 + 1e-4 * step * np.dot(g, d):
            step /= 2
        if step < 1e-10 or np.all(ab + step * d == ab):
            break
        ab = ab + step * d
    return ab


def temperature_ref(L, y):
    """T minimizing the log loss of the log posteriors L (rows whose actual
    class has probability 0 left out), by brentq on the derivative in 1/T."""
    keep = L[np.arange(len(y)), y] > -1e300
    L, y = L[keep], y[keep]
    D = L - L.max(axis=1, keepdims=True)
    D = np.where(D < -1e300, -np.inf, D)
    dy = D[np.arange(len(y)), y]

    def deriv(beta):
        W = np.exp(beta * D)
        W /= W.sum(axis=1, keepdims=True)
        return np.sum(np.nansum(np.where(W > 0, W * D, 0.0), axis=1) - dy)

    hi = 1.0
    while deriv(hi) < 0:
        hi *= 2
    beta = brentq(deriv, 1e-12, hi, xtol=1e-16, rtol=1e-15, maxiter=500)
    return 1.0 / beta


def metrics(db, model_table, options):
    """nb_metrics' log loss and Brier score of the held-out rows under options."""
    q = ("SELECT m -> 'log_loss', m -> 'brier' FROM (SELECT nb_metrics(t.label, nb_predict_proba(m.model, t.body, %s)) AS m "
         "FROM nbc_cal_test t, " + model_table + " m) s")
    ll, br = db.query(q, (options,))[0]
    return float(ll), float(br)


def corpus(db, name, source):
    t0 = time.time()
    db.execute("DROP TABLE IF EXISTS nbc_cal_train, nbc_cal_test, nbc_cal_model")
    db.execute("CREATE TABLE nbc_cal_train AS SELECT key, label, body, "
               "abs(hashtext(key)) %% %d AS fold FROM (%s) s(key, label, body, split) WHERE split = 'train'"
               % (FOLDS, source))
    db.execute("CREATE TABLE nbc_cal_test AS SELECT key, label, body FROM (%s) s(key, label, body, split) "
               "WHERE split = 'test'" % source)
    db.execute("CREATE TABLE nbc_cal_model AS SELECT nb_train(label, body) AS model FROM nbc_cal_train")
    fitted = {}
    oof_loss = {}
    for method in ("temperature", "sigmoid", "auto"):
        opts, oof_ll, cal_ll, oof_br, cal_br = db.query(
            "SELECT calibrated_options, log_loss, calibrated_log_loss, brier, calibrated_brier "
            "FROM nb_calibrate('nbc_cal_train', 'label', 'body', fold_column => 'fold', method => %s)",
            (method,))[0]
        fitted[method] = opts
        oof_loss[method] = cal_ll
        R.note("%s %s: %s; out of fold log loss %.4f -> %.4f, Brier %.4f -> %.4f"
               % (name, method, json.dumps(opts)[:200], oof_ll, cal_ll, oof_br, cal_br))

    train = db.query("SELECT label, body, fold FROM nbc_cal_train ORDER BY key")
    test = db.query("SELECT key, label, body FROM nbc_cal_test ORDER BY key")
    Xtr = [r[1] for r in train]
    ytr = np.array([r[0] for r in train], dtype=object)
    folds = np.array([r[2] for r in train])
    Xte = [r[2] for r in test]
    yte = np.array([r[1] for r in test], dtype=object)
    classes = np.array(sorted(set(ytr), key=lambda s: s.encode()), dtype=object)
    position = {c: k for k, c in enumerate(classes)}
    yidx = np.array([position[v] for v in ytr])

    # sigmoid against scikit-learn with the same folds, no ensemble
    sk = CalibratedClassifierCV(pipeline(), method="sigmoid", cv=PredefinedSplit(folds), ensemble=False)
    sk.fit(Xtr, ytr)
    sk_proba = sk.predict_proba(Xte)
    nbc = db.query("SELECT nb_predict_proba(m.model, t.body, %s) FROM nbc_cal_test t, nbc_cal_model m ORDER BY t.key",
                   (json.dumps(fitted["sigmoid"]),))
    nbc_proba = np.array([[float(r[0].get(c, 0.0)) for c in sk.classes_] for r in nbc])
    oof = cross_val_predict(pipeline(), Xtr, ytr, cv=PredefinedSplit(folds), method="predict_proba")
    sig = fitted["sigmoid"]["sigmoid"]
    calibrators = sk.calibrated_classifiers_[0].calibrators
    # each calibrator's class: the second with two classes, else in order
    cal_class = [1] if len(classes) == 2 else list(range(len(classes)))
    short = []
    worse = 0.0
    for cal, k in zip(calibrators, cal_class):
        ours = platt_loss(oof[:, k], yidx == k, sig[classes[k]])
        theirs = platt_loss(oof[:, k], yidx == k, (cal.a_, cal.b_))
        worse = max(worse, (ours - theirs) / theirs)
        if theirs > ours * (1 + 1e-9):
            short.append("%s (%.6g > %.6g)" % (classes[k], theirs, ours))
    R.check(worse <= 1e-12, "%s sigmoid: each Platt loss at most scikit-learn's BFGS result" % name,
            "max rel excess %s; scikit-learn stopped short on %d of %d classes" % (fmt(worse), len(short), len(cal_class)))
    err = np.max(np.abs(nbc_proba - sk_proba))
    R.check(err <= SK_TOL or short, "%s sigmoid: held-out probabilities = CalibratedClassifierCV(ensemble=False, "
            "same folds) within %g where its BFGS converged" % (name, SK_TOL),
            "max abs err %s over %d rows x %d classes%s" % (fmt(err), len(test), len(sk.classes_),
                                                          "; BFGS stopped short on " + ", ".join(short) if short else ""))
    # scikit-learn's way of applying the sigmoids, given nbc's parameters
    for cal, k in zip(calibrators, cal_class):
        cal.a_, cal.b_ = sig[classes[k]]
    err = np.max(np.abs(nbc_proba - sk.predict_proba(Xte)))
    R.check(err <= 1e-12, "%s sigmoid: held-out probabilities = CalibratedClassifierCV's with nbc's (a, b)" % name,
            "max abs err %s" % fmt(err))

    # sigmoid against numpy's Newton on scikit-learn's out-of-fold probabilities
    worst = 0.0
    for k in cal_class:
        ref = platt_ref(oof[:, k], yidx == k)
        got = np.array(sig[classes[k]])
        worst = max(worst, np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)))
    R.check(worst <= AB_TOL, "%s sigmoid: every (a, b) = numpy's Newton to convergence" % name,
            "max rel err %s" % fmt(worst))

    # temperature against scipy on scikit-learn's out-of-fold log posteriors
    oof_log = cross_val_predict(pipeline(), Xtr, ytr, cv=PredefinedSplit(folds), method="predict_log_proba")
    t_ref = temperature_ref(oof_log, yidx)
    t_got = fitted["temperature"]["temperature"]
    R.check(abs(t_got - t_ref) <= T_TOL * t_ref, "%s temperature: T = scipy's minimum of the out-of-fold log loss"
            % name, "nbc %.12g, reference %.12g, rel err %s" % (t_got, t_ref, fmt(abs(t_got - t_ref) / t_ref)))

    # T = 1 changes no byte; the fitted T changes no predicted label
    same = db.query("SELECT bool_and(nb_predict_proba(m.model, t.body)::text = nb_predict_proba(m.model, t.body, "
                    "'{\"temperature\": 1}')::text AND nb_predict(m.model, t.body) = nb_predict(m.model, t.body, "
                    "%s)) FROM nbc_cal_test t, nbc_cal_model m", (json.dumps(fitted["temperature"]),))[0][0]
    R.check(same, "%s temperature: T = 1 gives the same bytes, the fitted T the same labels" % name)

    # the target, on the held-out split, for nb_calibrate's default (auto)
    base = metrics(db, "nbc_cal_model", None)
    got = {m: metrics(db, "nbc_cal_model", json.dumps(o)) for m, o in fitted.items()}
    ref = CalibratedClassifierCV(pipeline(), method="sigmoid", cv=FOLDS)
    ref.fit(Xtr, ytr)
    ref_ll = log_loss(yte, ref.predict_proba(Xte), labels=ref.classes_)
    auto = "temperature" if oof_loss["temperature"] <= oof_loss["sigmoid"] else "sigmoid"
    R.check(fitted["auto"] == fitted[auto], "%s auto: the fit of the method of the lower out-of-fold log loss (%s)"
            % (name, auto), "temperature %.6f, sigmoid %.6f" % (oof_loss["temperature"], oof_loss["sigmoid"]))
    ll, br = got["auto"]
    R.check(ll <= base[0] and br <= base[1], "%s auto (%s): held-out log loss and Brier at most uncalibrated"
            % (name, auto), "log loss %.4f <= %.4f, Brier %.4f <= %.4f" % (ll, base[0], br, base[1]))
    R.check(ll <= 1.05 * ref_ll, "%s auto (%s): held-out log loss within 5%% of CalibratedClassifierCV(sigmoid, cv=5)"
            % (name, auto), "%.4f against %.4f" % (ll, ref_ll))
    for method in ("temperature", "sigmoid"):
        ll, br = got[method]
        R.note("%s %s alone: log loss %.4f (%s uncalibrated, %s 1.05 x sklearn's), Brier %.4f (%s uncalibrated)"
               % (name, method, ll, "<=" if ll <= base[0] else ">", "<=" if ll <= 1.05 * ref_ll else ">",
                  br, "<=" if br <= base[1] else ">"))
    R.note("| %s | %d / %d | %.4f | %.4f (T = %.3g) | %.4f | %.4f (%s) | %.4f | %.4f | %.4f | %.4f | %.4f |"
           % (name, len(train), len(test), base[0], got["temperature"][0], fitted["temperature"]["temperature"],
              got["sigmoid"][0], got["auto"][0], auto, ref_ll, base[1], got["temperature"][1], got["sigmoid"][1],
              got["auto"][1]))
    R.note("%s: %.1fs" % (name, time.time() - t0))
    db.execute("DROP TABLE nbc_cal_train, nbc_cal_test, nbc_cal_model")


def main():
    # scikit-learn warns of fortune files that a training fold lacks: nbc's
    # out-of-fold models lack them too (probability 0), the case under test
    warnings.filterwarnings("ignore", category=UserWarning)
    db = DB()
    db.execute("SET client_min_messages = warning")
    db.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    R.note("| corpus | train / test rows | log loss | temperature | sigmoid | auto | scikit-learn sigmoid, cv=5 "
           "| Brier | temperature | sigmoid | auto |")
    R.note("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, source in CORPORA:
        try:
            corpus(db, name, source)
        except Exception as e:  # a corpus that fails is a failed check, the others still run
            R.check(False, name, str(e).strip().splitlines()[0])
    if R.failures:
        R.note("failed: " + "; ".join(R.failures))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
