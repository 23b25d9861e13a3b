#!/usr/bin/python3
"""Parity of nb_metrics against sklearn.metrics on real predictions.

Run by test/parity/run.sh after the loaders (tables spamassassin,
reuters_grain and nbc_mixed_rows, see test/data).  For each case a model is
trained in SQL on the 'train' split and scores the 'test' split, in SQL:
nb_predict gives the labels, nb_predict_proba the probabilities.  Then
nb_metrics runs over those rows in its four forms (labels or probabilities,
unweighted or weighted), the rows are exported, and scikit-learn computes
the same metrics on them:

  accuracy_score, balanced_accuracy_score, precision_recall_fscore_support
  (per class, macro, weighted), confusion_matrix, log_loss (labels = every
  class), roc_auc_score (one class against the rest, and
  multi_class='ovr' macro), average_precision_score (per class and macro),
  each with sample_weight for the weighted forms; the multi-class Brier
  score, which sklearn 1.2 lacks, in numpy (and for two classes against
  twice brier_score_loss); the calibration bins and the expected
  calibration error in numpy (calibration_ref: 10 equal-width bins of the
  top-class probability, bin min(floor(10 p), 9); per bin the weight, the
  mean top probability and the accuracy; ECE the weighted mean of
  |accuracy - confidence|).

Cases: binary (SpamAssassin and Reuters Grain, text[] tokens, multinomial
and Bernoulli, whose probabilities reach exactly 0 and 1 and so exercise
log loss's clipping) and multi-class (digits 10 classes and wine 3, Gaussian;
soybean 19 classes, categorical, also with alpha 0 for zero probabilities).
Every value within 1e-12 (absolute).  Also: the probability form's argmax is
nb_predict's label on every row, ties included; and partial states of the
rows (four parts, through nb_metrics_state's text form, as Citus moves
them) combined in two orders give the one-pass result bit for bit.

Prints one TAP-style line per check and closes with "N passed, N failed";
exits 1 when a check failed.
"""

import sys
import warnings

from report import Report, fmt

try:
    import numpy as np
    import psycopg2
    from sklearn import metrics as M
except ImportError as e:
    print("not ok - metrics parity prerequisites: %s (Debian: python3-sklearn "
          "python3-psycopg2; run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

TOL = 1e-12
TOKEN_RE = r"\w\w+"
R = Report()

# name -> (training rows, test rows, feature expression, [option sets])
# Each source yields (key, label, split, weight, features).
TEXT_SOURCE = """SELECT %(key)s AS key, label, split,
       0.5 + (get_byte(decode(md5(%(key)s), 'hex'), 1) %% 7) / 4.0::float8 AS weight,
       ARRAY(SELECT m[1] FROM regexp_matches(lower(body), '""" + TOKEN_RE + """', 'g') AS m) AS features
FROM %(table)s"""
CASES = [
    ("spamassassin", TEXT_SOURCE % {"key": "folder || '/' || msg_id", "table": "spamassassin"},
     [None, '{"kind": "bernoulli"}']),
    ("reuters_grain", TEXT_SOURCE % {"key": "lpad(id::text, 6, '0')", "table": "reuters_grain"},
     [None, '{"kind": "bernoulli"}']),
    ("digits", "SELECT id::text AS key, label, split, weight, x AS features "
               "FROM nbc_mixed_rows WHERE ds = 'digits'", [None]),
    ("wine", "SELECT id::text AS key, label, split, weight, x AS features "
             "FROM nbc_mixed_rows WHERE ds = 'wine'", [None]),
    ("soybean", "SELECT id::text AS key, label, split, weight, j AS features "
                "FROM nbc_mixed_rows WHERE ds = 'soybean'", [None, '{"alpha": 0}']),
]


def connect():
    conn = psycopg2.connect("")
    conn.autocommit = True
    conn.set_client_encoding("UTF8")
    return conn


def query(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall() if cur.description else None


def byte_sorted(labels):
    return sorted(labels, key=lambda s: s.encode("utf-8"))


class Checker:
    """Collects the largest difference per metric of one case, then reports."""

    def __init__(self, name):
        self.name = name
        self.err = {}
        self.problems = []

    def near(self, what, got, want):
        if got is None or want is None or (isinstance(want, float) and np.isnan(want)):
            if not (got is None and (want is None or np.isnan(want))):
                self.problems.append("%s: %r, sklearn %r" % (what, got, want))
            return
        e = abs(float(got) - float(want))
        key = what.split("[")[0]
        self.err[key] = max(self.err.get(key, 0.0), e)
        if not e <= TOL:
            self.problems.append("%s: %.17g, sklearn %.17g" % (what, got, want))

    def report(self):
        worst = max(self.err.values()) if self.err else 0.0
        R.check(not self.problems, self.name,
                "; ".join(self.problems[:5]) if self.problems
                else "%d metrics, max abs err %s" % (len(self.err), fmt(worst)))


def label_metrics(c, m, y, pred, w):
    """The keys both forms have, against sklearn on (y, pred)."""
    labels = byte_sorted(set(y) | set(pred))
    c.near("rows", m["rows"], len(y))
    c.near("accuracy", m["accuracy"], M.accuracy_score(y, pred, sample_weight=w))
    c.near("balanced_accuracy", m["balanced_accuracy"],
           M.balanced_accuracy_score(y, pred, sample_weight=w))
    p, r, f, s = M.precision_recall_fscore_support(y, pred, labels=labels, sample_weight=w,
                                                   zero_division=0)
    if sorted(m["classes"]) != sorted(labels):
        c.problems.append("classes %r, sklearn %r" % (sorted(m["classes"]), labels))
        return
    for i, lab in enumerate(labels):
        cm = m["classes"][lab]
        c.near("precision[%s]" % lab, cm["precision"], p[i])
        c.near("recall[%s]" % lab, cm["recall"], r[i])
        c.near("f1[%s]" % lab, cm["f1"], f[i])
        c.near("support[%s]" % lab, cm["support"], s[i])
    for avg in ("macro", "weighted"):
        p, r, f, _ = M.precision_recall_fscore_support(y, pred, labels=labels, average=avg,
                                                       sample_weight=w, zero_division=0)
        c.near(avg + "_precision", m[avg]["precision"], p)
        c.near(avg + "_recall", m[avg]["recall"], r)
        c.near(avg + "_f1", m[avg]["f1"], f)
    cmx = M.confusion_matrix(y, pred, labels=labels, sample_weight=w)
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            c.near("confusion[%s,%s]" % (a, b), m["confusion"][a][b], cmx[i, j])


def proba_metrics(c, m, y, P, classes, w):
    """log loss, Brier, ROC AUC and average precision against sklearn."""
    Y = (np.array(y)[:, None] == np.array(classes)[None, :]).astype(np.float64)
    c.near("log_loss", m["log_loss"], M.log_loss(y, P, sample_weight=w, labels=classes))
    brier = np.average(((P - Y) ** 2).sum(axis=1), weights=w)
    c.near("brier", m["brier"], brier)
    if len(classes) == 2:
        c.near("brier_binary", m["brier"],
               2 * M.brier_score_loss(Y[:, 1], P[:, 1], sample_weight=w))
    auc, ap = [], []
    for k, lab in enumerate(classes):
        pos = Y[:, k] == 1
        wk = np.ones(len(y)) if w is None else np.asarray(w)
        if wk[pos].sum() > 0 and wk[~pos].sum() > 0:
            auc.append(M.roc_auc_score(Y[:, k], P[:, k], sample_weight=w))
            c.near("roc_auc[%s]" % lab, m["roc_auc"]["classes"][lab], auc[-1])
        else:
            c.near("roc_auc[%s]" % lab, m["roc_auc"]["classes"][lab], None)
        if wk[pos].sum() > 0:
            ap.append(M.average_precision_score(Y[:, k], P[:, k], sample_weight=w))
            c.near("average_precision[%s]" % lab, m["average_precision"]["classes"][lab], ap[-1])
        else:
            c.near("average_precision[%s]" % lab, m["average_precision"]["classes"][lab], None)
    if len(classes) > 2:
        c.near("roc_auc_macro_mean", m["roc_auc"]["macro"], np.mean(auc))
    c.near("average_precision_macro_mean", m["average_precision"]["macro"], np.mean(ap))
    if len(auc) == len(classes):
        if len(classes) == 2:
            want = M.roc_auc_score(Y[:, 1], P[:, 1], sample_weight=w)
        else:
            want = M.roc_auc_score(y, P, multi_class="ovr", average="macro",
                                   sample_weight=w, labels=classes)
        c.near("roc_auc_macro", m["roc_auc"]["macro"], want)
    if len(ap) == len(classes):
        c.near("average_precision_macro", m["average_precision"]["macro"],
               M.average_precision_score(Y, P, average="macro", sample_weight=w))


def calibration_ref(P, right, w):
    """Bins (weight, mean confidence, accuracy) and ECE of the top-class probabilities."""
    top = P.max(axis=1)
    ww = np.ones(len(top)) if w is None else np.asarray(w, dtype=np.float64)
    b = np.minimum(np.floor(top * 10).astype(int), 9)
    bins = []
    for k in range(10):
        inb = b == k
        wk = ww[inb].sum()
        if wk > 0:
            bins.append((wk, np.dot(ww[inb], top[inb]) / wk, ww[inb & right].sum() / wk))
        else:
            bins.append((0.0, None, None))
    ece = sum(wk / ww.sum() * abs(acc - conf) for wk, conf, acc in bins if wk > 0)
    return bins, ece


def calibration_metrics(c, m, P, right, w):
    bins, ece = calibration_ref(P, right, w)
    cal = m["calibration"]
    c.near("ece", cal["ece"], ece)
    for k, (wk, conf, acc) in enumerate(bins):
        got = cal["bins"][k]
        c.near("bin_count[%d]" % k, got["count"], wk)
        c.near("bin_confidence[%d]" % k, got["confidence"], conf)
        c.near("bin_accuracy[%d]" % k, got["accuracy"], acc)
        c.near("bin_lower[%d]" % k, got["lower"], k / 10)


PARTIAL_AGGREGATES = [
    "DROP AGGREGATE IF EXISTS nbc_parity_partial(text, jsonb, float8)",
    "DROP AGGREGATE IF EXISTS nbc_parity_partial(text, jsonb)",
    "DROP AGGREGATE IF EXISTS nbc_parity_combine(nb_metrics_state)",
    "CREATE AGGREGATE nbc_parity_partial(text, jsonb) "
    "(SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state)",
    "CREATE AGGREGATE nbc_parity_partial(text, jsonb, float8) "
    "(SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state)",
    "CREATE AGGREGATE nbc_parity_combine(nb_metrics_state) "
    "(SFUNC = nbc_metrics_combine, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final)",
]


def partial_states_check(conn, tag):
    """Four parts' states through their text form, combined in two orders, against one pass:
    the same bits without weights; with these weights (not binary fractions) the same
    log loss, Brier score and calibration (exact sums), the rest within its bound."""
    for weighted in (False, True):
        arg = "label, proba" + (", weight" if weighted else "")
        got = query(conn, """
            WITH parts AS (SELECT get_byte(decode(md5(key), 'hex'), 0) % 4 AS part,
                                  nbc_parity_partial(""" + arg + """)::text AS s
                           FROM nbc_metrics_pred GROUP BY 1)
            SELECT (SELECT nbc_parity_combine(s::nb_metrics_state ORDER BY part) FROM parts),
                   (SELECT nbc_parity_combine(s::nb_metrics_state ORDER BY part DESC) FROM parts),
                   (SELECT nb_metrics(""" + arg + """) FROM nbc_metrics_pred)""")[0]
        name = "nb_metrics partial states combined in any order = one pass%s: %s" % (
            ", weight" if weighted else "", tag)
        if not weighted:
            same = got[0] == got[2] and got[1] == got[2]
            R.check(same, name, "the same bits" if same else "they differ")
            continue
        exact = all(g[k] == got[2][k] for g in got[:2] for k in ("log_loss", "brier", "calibration"))
        c = Checker(name)
        for g in got[:2]:
            for k in ("accuracy", "balanced_accuracy"):
                c.near(k, g[k], got[2][k])
            for lab, v in got[2]["roc_auc"]["classes"].items():
                c.near("roc_auc[%s]" % lab, g["roc_auc"]["classes"][lab], v)
        if not exact:
            c.problems.append("log loss, Brier score or calibration differ")
        c.report()


def run_case(conn, name, source, options):
    opt = "NULL::jsonb" if options is None else "'%s'::jsonb" % options
    query(conn, "DROP TABLE IF EXISTS nbc_metrics_pred")
    query(conn, """CREATE TABLE nbc_metrics_pred AS
        WITH rows AS (""" + source + """),
             model AS (SELECT nb_train(label, features) AS m FROM rows WHERE split = 'train')
        SELECT r.key, r.label, r.weight, nb_predict(model.m, r.features, """ + opt + """) AS predicted,
               nb_predict_proba(model.m, r.features, """ + opt + """) AS proba
        FROM rows r, model WHERE r.split = 'test'""")
    got = query(conn, """SELECT nb_metrics(label, predicted), nb_metrics(label, predicted, weight),
                                nb_metrics(label, proba), nb_metrics(label, proba, weight)
                         FROM nbc_metrics_pred""")[0]
    rows = query(conn, "SELECT label, predicted, proba, weight FROM nbc_metrics_pred ORDER BY key")
    y = [r[0] for r in rows]
    pred = [r[1] for r in rows]
    w = np.array([r[3] for r in rows])
    classes = byte_sorted(set(y) | {k for r in rows for k in r[2]})
    P = np.array([[r[2].get(k, 0.0) for k in classes] for r in rows])
    tag = "%s%s, %d rows, %d classes" % (name, "" if options is None else " " + options,
                                         len(rows), len(classes))

    # the probability form's argmax (first in byte order on ties) is nb_predict's label
    argmax = [classes[int(np.flatnonzero(p == p.max())[0])] for p in P]
    ties = sum(int((p == p.max()).sum() > 1) for p in P)
    saturated = int(((P == 0) | (P == 1)).any(axis=1).sum())
    R.check(argmax == pred, "nb_metrics argmax = nb_predict: " + tag,
            "%d rows with tied probabilities, %d with a probability of exactly 0 or 1"
            % (ties, saturated))

    for weighted in (False, True):
        ww = w if weighted else None
        c = Checker("nb_metrics(actual, predicted%s) = sklearn: %s" % (", weight" if weighted else "", tag))
        label_metrics(c, got[1 if weighted else 0], y, pred, ww)
        c.report()
        c = Checker("nb_metrics(actual, probabilities%s) = sklearn: %s" % (", weight" if weighted else "", tag))
        label_metrics(c, got[3 if weighted else 2], y, argmax, ww)
        proba_metrics(c, got[3 if weighted else 2], y, P, classes, ww)
        calibration_metrics(c, got[3 if weighted else 2], P, np.array(argmax) == np.array(y), ww)
        c.report()
    partial_states_check(conn, tag)


def main():
    warnings.simplefilter("ignore")
    conn = connect()
    query(conn, "SET client_min_messages = warning")
    query(conn, "CREATE EXTENSION IF NOT EXISTS nbc")
    for sql in PARTIAL_AGGREGATES:
        query(conn, sql)
    for name, source, option_sets in CASES:
        for options in option_sets:
            try:
                run_case(conn, name, source, options)
            except Exception as e:  # a broken case is a failed check, the others still run
                R.check(False, "metrics case %s %s" % (name, options or ""), repr(e))
    query(conn, "DROP TABLE IF EXISTS nbc_metrics_pred")
    for sql in PARTIAL_AGGREGATES[:3]:
        query(conn, sql)
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
