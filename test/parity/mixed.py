#!/usr/bin/python3
"""Parity of nbc's mixed feature types against scikit-learn on real data.

Run by test/parity/run.sh after parity.py; needs the tables of
test/data/load_mixed.py (nbc_mixed_rows, fashion_mnist) and a database
reachable through the libpq environment variables with nbc installed.

Features come as jsonb objects (string = categorical, number = Gaussian,
boolean = Bernoulli, JSON null or absent key = missing) or as float8[]
(Gaussian features named "1", "2", ...; NULL element = missing).  Rows are
exported from SQL as they are stored, so both sides see identical values.

References (never hard-coded numbers):
  * rows without missing values and with every categorical value seen in
    training: scikit-learn's fitted GaussianNB / CategoricalNB (ordinal
    encoding of the training values) / BernoulliNB(binarize=None), with the
    same alpha (force_alpha), var_smoothing, fit_prior / class_prior
    (GaussianNB: priors) and sample_weight.  A mixed model's joint log
    likelihood is the sum of the estimators' joint log likelihoods minus
    the log prior counted more than once.  The reference adds the fitted
    parameters' terms in long double (sklearn's own float64 result is
    shown beside and must be within 1e-6, else a "harness" check fails);
  * missing values and categorical values unseen in training: an
    independent available-case computation in numpy (RefNB below) from the
    formulas (per class weighted counts over the rows where a feature is
    present; Lidstone θ = (N_jvc + α)/(N_jc + α·K_j), unseen value
    α/(N_jc + α·K_j); Bernoulli (T + α)/(M + 2α); Gaussian weighted mean
    and ML variance + var_smoothing × the largest unweighted variance; a
    missing feature is left out of the prediction).  RefNB is also run on
    every sklearn case and must agree with it within 1e-9 ("harness").

Explaining and inspecting: nb_feature_log_prob against the fitted
GaussianNB's theta_ and var_, CategoricalNB's and BernoulliNB's
feature_log_prob_ (log(1 - t) for a boolean's false from BernoulliNB's
fitted counts) within 1e-12 (relative for a mean or variance above 1); and
nb_explain on every row of each data set: its contributions sum to the log
posterior odds of the prediction against the runner-up within 1e-9
(relative above 1), and every row of some rows equals the difference of the
numpy reference's terms (RefNB) within 1e-9.

Tolerances: probabilities 1e-9 absolute; natural-log posteriors 1e-9 ×
max(1, |reference|) (Gaussian posteriors of pixels constant within a class
reach -1e10, whose float64 spacing is 2e-6); labels equal.  Merged and
parallel models against the model trained at once: 1e-12.

Prints one TAP-style line per check ("ok - ..." / "not ok - ...: detail")
and closes with "N passed, N failed"; exits 1 when a check failed.

    mixed.py [--only SUBSTRING ...] [--keep] [--no-fashion]
"""

import argparse
import concurrent.futures
import inspect
import json
import math
import os
import sys
import threading
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data"))
from report import Report, fmt  # noqa: E402

try:
    import numpy as np
    import psycopg2
    from scipy.special import logsumexp
    from sklearn.metrics import mutual_info_score
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB
    import mpmath as mp
    import load_mixed
except ImportError as e:  # report it as a failed check, not a bare traceback
    print("not ok - mixed parity prerequisites: %s (Debian: python3-sklearn python3-psycopg2; "
          "run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

TOL = 1e-9           # nbc vs the references
MERGE_TOL = 1e-12    # merged / parallel model vs the model trained at once
HARNESS_TOL = 1e-6   # sklearn's own float64 output vs the long double reference
GAUSS_MI_TOL = 1e-6  # Gaussian mutual information vs the mpmath quadrature, relative
LD = np.longdouble

SK_SETS = load_mixed.SKLEARN_SETS
_FORCE = "force_alpha" in inspect.signature(CategoricalNB).parameters


# --------------------------------------------------------------------------
# reporting (test/parity/report.py)

R = Report()


def errline(e):
    s = str(e).strip().splitlines()
    return s[0] if s else repr(e)


def byte_sorted(labels):
    return sorted(set(labels), key=lambda s: s.encode("utf-8"))


def as_float(v):
    """A jsonb number, or a non-finite value however nbc spells it."""
    if v is None:
        return float("-inf")
    return float(v)


def opts_desc(opts):
    """Options as shown in a check's name (a long class_prior abbreviated)."""
    if opts is None:
        return "defaults"
    o = dict(opts)
    cp = o.get("class_prior")
    if cp and len(cp) > 3:
        o["class_prior"] = "{%d labels, p rising with the label's rank}" % len(cp)
    return json.dumps(o, sort_keys=True)


def parse_json(s):
    if s is None or isinstance(s, (dict, list)):
        return s
    return json.loads(s)


# --------------------------------------------------------------------------
# database

STATEMENT_LIMIT = 300   # seconds: statement_timeout of every session
HANG_LIMIT = float(os.environ.get("NBC_MIXED_HANG_LIMIT", 360))  # seconds: then the watchdog ends the suite


class Watchdog:
    """Ends the suite with a failed check when a statement hangs beyond
    statement_timeout (a backend in a loop that never checks for interrupts),
    instead of waiting forever."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = {}            # thread id -> (start, sql, backend pid)
        t = threading.Thread(target=self.loop, daemon=True)
        t.start()

    def begin(self, sql, pid):
        with self.lock:
            self.running[threading.get_ident()] = (time.time(), sql, pid)

    def end(self):
        with self.lock:
            self.running.pop(threading.get_ident(), None)

    def loop(self):
        while True:
            time.sleep(5)
            with self.lock:
                late = [v for v in self.running.values() if time.time() - v[0] > HANG_LIMIT]
            if late:
                start, sql, pid = late[0]
                R.check(False, "statement hung", "no answer after %.0fs from backend %s, statement_timeout "
                        "(%ds) did not stop it: %s" % (time.time() - start, pid, STATEMENT_LIMIT,
                                                      " ".join(sql.split())[:300]))
                R.note("failed: " + "; ".join(R.failures))
                print("%d passed, %d failed" % (R.passed, R.failed))
                sys.stdout.flush()
                os._exit(1)


WATCHDOG = Watchdog()


class DB:
    """One connection; after the server lost it (a crashed backend) the next
    statement reconnects, so one crash fails its check, not the rest."""

    def __init__(self):
        self.conn = None
        self.pid = None
        self.connect()

    def connect(self):
        self.conn = psycopg2.connect("")
        self.conn.autocommit = True
        self.conn.set_client_encoding("UTF8")
        with self.conn.cursor() as cur:
            cur.execute("SET client_min_messages = warning")
            cur.execute("SET statement_timeout = %s", ("%ds" % STATEMENT_LIMIT,))
            cur.execute("SELECT pg_backend_pid()")
            self.pid = cur.fetchone()[0]

    def cursor(self):
        if self.conn.closed:
            for _ in range(30):          # the server restarts after a crash
                try:
                    self.connect()
                    break
                except psycopg2.OperationalError:
                    time.sleep(1)
        return self.conn.cursor()

    def execute(self, sql, args=None):
        with self.cursor() as cur:
            WATCHDOG.begin(sql, self.pid)
            try:
                cur.execute(sql, args)
            finally:
                WATCHDOG.end()

    def query(self, sql, args=None):
        with self.cursor() as cur:
            WATCHDOG.begin(sql, self.pid)
            try:
                cur.execute(sql, args)
                return cur.fetchall()
            finally:
                WATCHDOG.end()


class Row:
    __slots__ = ("id", "label", "split", "weight", "complete", "x", "x_miss", "j", "j_bool", "j_miss")


def export_rows(db, ds):
    """All rows of one data set as stored (jsonb parsed, float8[] as lists)."""
    out = []
    for r in db.query("SELECT id, label, split, weight, complete, x, x_miss, j::text, j_bool::text, "
                      "j_miss::text FROM nbc_mixed_rows WHERE ds = %s ORDER BY id", (ds,)):
        row = Row()
        (row.id, row.label, row.split, row.weight, row.complete, row.x, row.x_miss) = r[:7]
        row.j, row.j_bool, row.j_miss = (parse_json(v) for v in r[7:])
        out.append(row)
    return out


def features_of(row, col):
    """A row's features as a dict (float8[] become {"1": x1, ...}; NULL -> None)."""
    if col in ("x", "x_miss"):
        v = getattr(row, col)
        return {str(k + 1): x for k, x in enumerate(v)}
    if col == "x123":
        return {str(k + 1): x for k, x in enumerate(row.x)}
    return getattr(row, col)


# SQL expression of each feature column (table alias r)
COL_SQL = {
    "x": "r.x", "x_miss": "r.x_miss", "j": "r.j", "j_bool": "r.j_bool", "j_miss": "r.j_miss",
    # the float8[] x as a jsonb object keyed "1", "2", ...
    "x123": "(SELECT jsonb_object_agg(u.o::text, u.v) FROM unnest(r.x) WITH ORDINALITY AS u(v, o))",
}


class Models:
    """nb_model values built in SQL into nbc_mixed_models, errors remembered."""

    def __init__(self, db):
        self.db = db
        self.errors = {}
        self.seconds = {}
        db.execute("SET client_min_messages = warning")
        db.execute("CREATE EXTENSION IF NOT EXISTS nbc")
        db.execute("DROP TABLE IF EXISTS nbc_mixed_models")
        db.execute("CREATE TABLE nbc_mixed_models (name text PRIMARY KEY, model nb_model)")

    def train(self, name, ds, col, weighted=False, where="r.split = 'train'", table="nbc_mixed_rows"):
        args = "r.label, %s%s" % (COL_SQL[col], ", r.weight" if weighted else "")
        dsw = "r.ds = %s AND " if ds is not None else ""
        return self.run(name, "INSERT INTO nbc_mixed_models SELECT %s, nb_train(" + args + ") FROM "
                        + table + " r WHERE " + dsw + where.replace("%", "%%"),
                        (name,) + ((ds,) if ds is not None else ()))

    def run(self, name, sql, args):
        t0 = time.time()
        try:
            self.db.execute(sql, args)
            n = self.db.query("SELECT count(*) FROM nbc_mixed_models WHERE name = %s AND model IS NOT NULL",
                              (name,))[0][0]
            if n != 1:
                raise RuntimeError("%d models named %r after training" % (n, name))
        except (psycopg2.Error, RuntimeError) as e:
            self.errors[name] = errline(e)
        self.seconds[name] = time.time() - t0
        return name not in self.errors

    def ok(self, name, desc):
        if name not in self.errors:
            return True
        R.check(False, desc, "training model %r failed: %s" % (name, self.errors[name]))
        return False


def predict_table(db, model, ds, col, opts, where="true"):
    """{id: (label, proba, log_proba)} of nbc for the rows of ds."""
    o = None if opts is None else json.dumps(opts)
    c = COL_SQL[col]
    rows = db.query(
        "SELECT r.id, nb_predict(m.model, " + c + ", %s::jsonb), nb_predict_proba(m.model, " + c +
        ", %s::jsonb)::text, nb_predict_log_proba(m.model, " + c + ", %s::jsonb)::text "
        "FROM nbc_mixed_rows r, nbc_mixed_models m WHERE m.name = %s AND r.ds = %s AND " + where,
        (o, o, o, model, ds))
    return {r[0]: (r[1], parse_json(r[2]), parse_json(r[3])) for r in rows}


def predict_values(db, model, feats, opts):
    """Predictions for features made in Python: [jsonb dict] -> [(label, proba, log_proba)]."""
    o = None if opts is None else json.dumps(opts)
    texts = [json.dumps(f) for f in feats]
    rows = db.query(
        "SELECT t.n, nb_predict(m.model, t.f, %s::jsonb), nb_predict_proba(m.model, t.f, %s::jsonb)::text, "
        "nb_predict_log_proba(m.model, t.f, %s::jsonb)::text "
        "FROM unnest(%s::text[]::jsonb[]) WITH ORDINALITY AS t(f, n), nbc_mixed_models m "
        "WHERE m.name = %s ORDER BY t.n", (o, o, o, texts, model))
    return {int(r[0]) - 1: (r[1], parse_json(r[2]), parse_json(r[3])) for r in rows}


# --------------------------------------------------------------------------
# references

def kind_of(v):
    if isinstance(v, bool):
        return "bern"
    if isinstance(v, (int, float)):
        return "gauss"
    if isinstance(v, str):
        return "cat"
    raise TypeError("feature value %r" % (v,))


def feature_kinds(dicts):
    kinds = {}
    for d in dicts:
        for k, v in d.items():
            if v is None:
                continue
            t = kind_of(v)
            if kinds.setdefault(k, t) != t:
                raise ValueError("feature %r is both %s and %s" % (k, kinds[k], t))
    return kinds


def prior_args(opts, classes):
    """(fit_prior, class_prior list or None) from nbc options."""
    opts = opts or {}
    cp = opts.get("class_prior")
    return bool(opts.get("fit_prior", True)), ([float(cp[c]) for c in classes] if cp else None)


def log_normalize(jll):
    """Long double joint log likelihoods -> float64 log posteriors (log-sum-exp)."""
    m = jll.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(jll - m).sum(axis=1, keepdims=True))
    return (jll - lse).astype(np.float64)


class RefNB:
    """Independent available-case naive Bayes in numpy long double, from the formulas.

    rows: feature dicts (value None or absent key = missing); kinds from the
    JSON types of the training values.  Unseen categorical values score
    alpha / (N_jc + alpha K_j); features unknown to the model are ignored."""

    def __init__(self, rows, labels, weights=None, opts=None):
        opts = opts or {}
        self.alpha = LD(opts.get("alpha", 1.0))
        vs = float(opts.get("var_smoothing", 1e-9))
        self.classes = byte_sorted(labels)
        ci = {c: i for i, c in enumerate(self.classes)}
        C = len(self.classes)
        y = np.array([ci[l] for l in labels])
        w = np.ones(len(rows), dtype=LD) if weights is None else np.array(weights, dtype=LD)
        self.kinds = feature_kinds(rows)
        self.W = np.array([w[y == c].sum() for c in range(C)], dtype=LD)
        fit_prior, cp = prior_args(opts, self.classes)
        if cp is not None:
            self.log_prior = np.log(np.array(cp, dtype=LD))
        elif fit_prior:
            self.log_prior = np.log(self.W / self.W.sum())
        else:
            self.log_prior = np.full(C, -np.log(LD(C)), dtype=LD)
        self.cat, self.bern, self.gauss = {}, {}, {}
        maxvar = 0.0
        for k, kind in sorted(self.kinds.items()):
            pres = [(i, r[k]) for i, r in enumerate(rows) if r.get(k) is not None]
            idx = np.array([i for i, _ in pres])
            vals = [v for _, v in pres]
            yc, wc = y[idx], w[idx]
            if kind == "cat":
                seen = sorted(set(vals))
                vi = {v: n for n, v in enumerate(seen)}
                cnt = np.zeros((C, len(seen)), dtype=LD)
                np.add.at(cnt, (yc, np.array([vi[v] for v in vals])), wc)
                self.cat[k] = (vi, cnt, cnt.sum(axis=1))
            elif kind == "bern":
                t = np.array(vals, dtype=bool)
                T = np.array([wc[(yc == c) & t].sum() for c in range(C)], dtype=LD)
                M = np.array([wc[yc == c].sum() for c in range(C)], dtype=LD)
                self.bern[k] = (T, M)
            else:
                x = np.array(vals, dtype=np.float64)
                xl = x.astype(LD)
                mean = np.zeros(C, dtype=LD)
                var = np.zeros(C, dtype=LD)
                for c in range(C):
                    s = yc == c
                    if not s.any():
                        raise ValueError("class %r has no value of Gaussian feature %r" % (self.classes[c], k))
                    mean[c] = (wc[s] * xl[s]).sum() / wc[s].sum()
                    var[c] = (wc[s] * (xl[s] - mean[c]) ** 2).sum() / wc[s].sum()
                self.gauss[k] = (mean, var)
                maxvar = max(maxvar, float(np.var(x)))
        self.epsilon = LD(vs) * LD(maxvar)

    def jll(self, rows):
        C = len(self.classes)
        out = np.tile(self.log_prior, (len(rows), 1))
        a = self.alpha
        two_pi = LD(2) * LD(np.pi)
        for k in sorted(set(self.cat) | set(self.bern) | set(self.gauss)):
            pres = [(i, r[k]) for i, r in enumerate(rows) if r.get(k) is not None]
            if not pres:
                continue
            idx = np.array([i for i, _ in pres])
            vals = [v for _, v in pres]
            if k in self.cat:
                vi, cnt, N = self.cat[k]
                # an unseen value counts 0: alpha / (N_jc + alpha K_j)
                ext = np.concatenate([cnt, np.zeros((C, 1), dtype=LD)], axis=1)
                col = np.array([vi.get(v, len(vi)) for v in vals])
                out[idx] += np.log((ext[:, col].T + a) / (N + a * len(vi)))
            elif k in self.bern:
                T, M = self.bern[k]
                th = (T + a) / (M + 2 * a)
                t = np.array(vals, dtype=bool)
                out[idx] += np.where(t[:, None], np.log(th)[None, :], np.log(1 - th)[None, :])
            else:
                mean, var = self.gauss[k]
                var = var + self.epsilon
                x = np.array(vals, dtype=np.float64).astype(LD)
                out[idx] += (-LD(0.5) * np.log(two_pi * var)[None, :]
                             - LD(0.5) * (x[:, None] - mean[None, :]) ** 2 / var[None, :])
        return out

    def log_proba(self, rows):
        return log_normalize(self.jll(rows))


class SkMixed:
    """scikit-learn's estimators for a model without missing values, one per feature kind.

    Categorical features are ordinal-encoded over the values seen in
    training; rows with an unseen value cannot be scored (seen() tells)."""

    def __init__(self, rows, labels, weights=None, opts=None):
        opts = opts or {}
        self.kinds = feature_kinds(rows)
        self.classes = byte_sorted(labels)
        fit_prior, cp = prior_args(opts, self.classes)
        alpha = float(opts.get("alpha", 1.0))
        self.keys = {t: sorted(k for k, v in self.kinds.items() if v == t) for t in ("cat", "bern", "gauss")}
        self.codes = {k: {v: n for n, v in enumerate(sorted({r[k] for r in rows}))} for k in self.keys["cat"]}
        y = np.array(labels, dtype=object)
        sw = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.est = {}
        if self.keys["gauss"]:
            pri = None
            if cp is not None:
                pri = np.array(cp)
            elif not fit_prior:
                pri = np.full(len(self.classes), 1.0 / len(self.classes))
            self.est["gauss"] = GaussianNB(priors=pri, var_smoothing=float(opts.get("var_smoothing", 1e-9)))
        kw = dict(alpha=alpha, fit_prior=fit_prior, class_prior=cp)
        if _FORCE:
            kw["force_alpha"] = True
        if self.keys["cat"]:
            self.est["cat"] = CategoricalNB(**kw)
        if self.keys["bern"]:
            self.est["bern"] = BernoulliNB(binarize=None, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t, e in self.est.items():
                e.fit(self.matrix(rows, t), y, sample_weight=sw)
                if [str(c) for c in e.classes_] != self.classes:
                    raise ValueError("sklearn classes %r, expected %r" % (list(e.classes_), self.classes))

    def matrix(self, rows, t):
        if t == "cat":
            return np.array([[self.codes[k][r[k]] for k in self.keys["cat"]] for r in rows], dtype=np.int64)
        if t == "bern":
            return np.array([[1.0 if r[k] else 0.0 for k in self.keys["bern"]] for r in rows])
        return np.array([[r[k] for k in self.keys["gauss"]] for r in rows], dtype=np.float64)

    def seen(self, r):
        return (all(r.get(k) is not None for k in self.kinds)
                and all(r[k] in self.codes[k] for k in self.keys["cat"]))

    def scores(self, rows):
        """(reference log posteriors from the fitted parameters in long double,
        sklearn's own float64 log posteriors, sklearn's own predictions)."""
        n, C = len(rows), len(self.classes)
        jll = np.zeros((n, C), dtype=LD)
        own = np.zeros((n, C))
        log_prior = None
        for t, e in self.est.items():
            X = self.matrix(rows, t)
            if t == "gauss":
                th, var = e.theta_.astype(LD), e.var_.astype(LD)
                Xl = X.astype(LD)
                for c in range(C):
                    jll[:, c] += (-LD(0.5) * np.sum(np.log(LD(2) * LD(np.pi) * var[c]))
                                  - LD(0.5) * np.sum((Xl - th[c]) ** 2 / var[c], axis=1))
                lp = np.log(e.class_prior_)
            elif t == "cat":
                for j, flp in enumerate(e.feature_log_prob_):
                    jll += flp.astype(LD)[:, X[:, j]].T
                lp = e.class_log_prior_
            else:
                flp = e.feature_log_prob_
                neg = np.log(1 - np.exp(flp))          # as BernoulliNB computes it
                jll += X.astype(LD) @ (flp - neg).astype(LD).T + neg.astype(LD).sum(axis=1)
                lp = e.class_log_prior_
            if log_prior is None:
                log_prior = lp
            own += e.predict_joint_log_proba(X) - lp
        jll += log_prior.astype(LD)
        own += log_prior
        own_lp = own - logsumexp(own, axis=1, keepdims=True)
        return log_normalize(jll), own_lp, np.array(self.classes, dtype=object)[np.argmax(own, axis=1)]


def ref_terms(ref, row):
    """{feature: log-likelihood term per class (long double)} of RefNB for one row."""
    out = {}
    a = ref.alpha
    for k in set(ref.cat) | set(ref.bern) | set(ref.gauss):
        v = row.get(k)
        if v is None:
            continue
        if k in ref.cat:
            vi, cnt, N = ref.cat[k]
            num = cnt[:, vi[v]] if v in vi else np.zeros(len(N), dtype=LD)
            out[k] = np.log((num + a) / (N + a * len(vi)))
        elif k in ref.bern:
            T, M = ref.bern[k]
            th = (T + a) / (M + 2 * a)
            out[k] = np.log(th) if v else np.log(1 - th)
        else:
            mean, var = ref.gauss[k]
            var = var + ref.epsilon
            out[k] = -LD(0.5) * np.log(LD(2) * LD(np.pi) * var) - LD(0.5) * (LD(v) - mean) ** 2 / var
    return out


def log_odds(lp, pred):
    """log p(pred) - log p(runner-up) from nbc's log posteriors, and the runner-up."""
    others = sorted(((as_float(v), k.encode("utf-8")) for k, v in lp.items() if k != pred),
                    key=lambda t: (-t[0], t[1]))
    return as_float(lp[pred]) - others[0][0], others[0][1].decode("utf-8")


# --------------------------------------------------------------------------
# comparison

def compare(desc, got, ids, classes, ref_lp, own_lp=None, own_pred=None, also=None, extra=""):
    """Checks nbc's (label, proba, log_proba) per id against reference log posteriors.

    also: [(name, other reference log posteriors)] that must agree with
    ref_lp within TOL (the numpy reference beside sklearn): a harness check."""
    missing = [i for i in ids if i not in got]
    if missing:
        R.check(False, desc + ": rows", "nbc returned no row for %d of %d ids, e.g. %r"
                % (len(missing), len(ids), missing[:3]))
        return
    ref_p = np.exp(ref_lp)
    worst_p, worst_lp = [0.0, None], [0.0, None]
    bad_shape, nonfinite, mism = [], [], []
    for n, i in enumerate(ids):
        pred, p, lp = got[i]
        if not isinstance(p, dict) or sorted(p) != sorted(classes) or \
                not isinstance(lp, dict) or sorted(lp) != sorted(classes):
            bad_shape.append((i, p, lp))
            continue
        for c, cls in enumerate(classes):
            a, b = as_float(p[cls]), ref_p[n, c]
            e = abs(a - b)
            if not e <= worst_p[0]:
                worst_p = [e if e == e else float("inf"), (i, cls, p[cls], b)]
            a, b = as_float(lp[cls]), ref_lp[n, c]
            if math.isfinite(a) and math.isfinite(b):
                e = abs(a - b) / max(1.0, abs(b))
                if not e <= worst_lp[0]:
                    worst_lp = [e, (i, cls, lp[cls], b)]
            elif not a == b:
                nonfinite.append((i, cls, lp[cls], b))
        best = int(np.argmax(ref_lp[n]))
        if pred != classes[best]:
            srt = np.sort(ref_lp[n])
            mism.append((i, pred, classes[best], srt[-1] - srt[-2] if len(srt) > 1 else 0.0))
    if bad_shape:
        R.check(False, desc + ": result shape", "%d rows, e.g. id %r: %r / %r" % ((len(bad_shape),) + bad_shape[0]))
        return
    nheld = extra
    own = ""
    if own_lp is not None:
        sk_p = float(np.max(np.abs(np.exp(own_lp) - ref_p))) if len(ids) else 0.0
        fin = np.isfinite(own_lp) & np.isfinite(ref_lp)
        sk_lp = float(np.max(np.abs(own_lp - ref_lp)[fin] / np.maximum(1.0, np.abs(ref_lp[fin])))) if fin.any() else 0.0
        own = "; sklearn's float64 output vs reference %s / %s" % (fmt(sk_p), fmt(sk_lp))
        if sk_p > HARNESS_TOL or sk_lp > HARNESS_TOL:
            R.check(False, desc + ": harness reference", "long double reference differs from sklearn's own "
                    "output by %s (proba) / %s (log-proba, relative)" % (fmt(sk_p), fmt(sk_lp)))
        if own_pred is not None:
            d = sum(1 for n in range(len(ids)) if own_pred[n] != classes[int(np.argmax(ref_lp[n]))])
            if d:
                R.check(False, desc + ": harness predict", "%d rows where sklearn's predict differs from "
                        "the reference's argmax" % d)
    for name, other in also or ():
        e = float(np.max(np.abs(np.exp(other) - ref_p))) if len(ids) else 0.0
        fin = np.isfinite(other) & np.isfinite(ref_lp)
        e2 = float(np.max(np.abs(other - ref_lp)[fin] / np.maximum(1.0, np.abs(ref_lp[fin])))) if fin.any() else 0.0
        own += "; %s vs reference %s / %s" % (name, fmt(e), fmt(e2))
        if e > TOL or e2 > TOL:
            R.check(False, desc + ": harness " + name, "%s differs from the sklearn reference by %s (proba) / "
                    "%s (log-proba, relative)" % (name, fmt(e), fmt(e2)))
    e, w = worst_p
    R.check(e <= TOL, desc + ": nb_predict_proba",
            "%d rows%s, max abs err %s%s%s" % (len(ids), nheld, fmt(e),
                                               "" if w is None or e <= TOL else
                                               " at id %r class %r: nbc %r, reference %r" % w, own))
    e, w = worst_lp
    detail = "max rel err %s%s" % (fmt(e), "" if w is None or e <= TOL else
                                   " at id %r class %r: nbc %r, reference %r" % w)
    if nonfinite:
        detail += "; %d non-finite mismatches, e.g. id %r class %r: nbc %r reference %r" % (
            (len(nonfinite),) + nonfinite[0])
    R.check(e <= TOL and not nonfinite, desc + ": nb_predict_log_proba", detail)
    if mism:
        R.check(False, desc + ": nb_predict", "%d of %d differ, e.g. id %r: nbc %r reference %r "
                "(reference log-posterior gap %r)" % ((len(mism), len(ids)) + mism[0]))
    else:
        R.check(True, desc + ": nb_predict", "%d rows" % len(ids))


def compare_same(desc, a, b, ids, tol=MERGE_TOL):
    """Two nbc prediction sets (e.g. merged vs whole) agree within tol."""
    err, worst, nlabel = 0.0, None, 0
    for i in ids:
        if i not in a or i not in b or not isinstance(a[i][1], dict) or not isinstance(b[i][1], dict) \
                or sorted(a[i][1]) != sorted(b[i][1]):
            R.check(False, desc, "id %r: %r vs %r" % (i, a.get(i), b.get(i)))
            return
        nlabel += a[i][0] != b[i][0]
        for cls in a[i][1]:
            for x, y in ((as_float(a[i][1][cls]), as_float(b[i][1][cls])),
                         (as_float(a[i][2][cls]), as_float(b[i][2][cls]))):
                if math.isfinite(x) or math.isfinite(y):
                    e = abs(x - y) / max(1.0, abs(x))
                    if not e <= err:
                        err, worst = (e if e == e else float("inf")), (i, cls, x, y)
    R.check(err <= tol and nlabel == 0, desc, "max err %s (proba abs, log-proba rel), %d labels differ over %d rows%s"
            % (fmt(err), nlabel, len(ids), "" if err <= tol else "; worst id %r class %r: %r vs %r" % worst))


# --------------------------------------------------------------------------
# the suite

class Suite:
    def __init__(self, db, args):
        self.db = db
        self.args = args
        self.models = Models(db)
        self.rows = {}
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def selected(self, name):
        return not self.args.only or any(o in name for o in self.args.only)

    def data(self, ds):
        if ds not in self.rows:
            self.rows[ds] = export_rows(self.db, ds)
        return self.rows[ds]

    def predict(self, desc, model, ds, col, opts, where="true"):
        try:
            return predict_table(self.db, model, ds, col, opts, where)
        except psycopg2.Error as e:
            R.check(False, desc + ": query", errline(e))
            return None

    def predict_values(self, desc, model, feats, opts):
        try:
            return predict_values(self.db, model, feats, opts)
        except psycopg2.Error as e:
            R.check(False, desc + ": query", errline(e))
            return None

    # ---- a case: train rows -> model, score rows -> compare
    def case(self, desc, model, ds, col, opts, train, score, weighted, sklearn=True, where="true"):
        """train / score: lists of Row.  sklearn: compare with SkMixed (rows must be complete and
        seen; the others are left to RefNB), else RefNB only."""
        if not self.models.ok(model, desc):
            return None
        got = self.predict(desc, model, ds, col, opts, where)
        if got is None:
            return None
        tf = [features_of(r, col) for r in train]
        labels = [r.label for r in train]
        w = [r.weight for r in train] if weighted else None
        ref = RefNB(tf, labels, w, opts)
        sf = [features_of(r, col) for r in score]
        ids = [r.id for r in score]
        nheld = sum(r.split == "test" for r in score)
        extra = " (%d held out)" % nheld
        if sklearn:
            sk = SkMixed(tf, labels, w, opts)
            keep = [n for n, f in enumerate(sf) if sk.seen(f)]
            ids_s = [ids[n] for n in keep]
            lp, own_lp, own_pred = sk.scores([sf[n] for n in keep])
            if len(keep) < len(sf):
                extra += ", %d rows with a value unseen in training left to the numpy reference" % (len(sf) - len(keep))
            compare(desc, got, ids_s, sk.classes, lp, own_lp, own_pred,
                    also=[("numpy reference", ref.log_proba([sf[n] for n in keep]))],
                    extra=extra)
            kept = set(keep)
            rest = [n for n in range(len(sf)) if n not in kept]
            if rest:
                compare(desc + ", rows with unseen values vs numpy", got, [ids[n] for n in rest], ref.classes,
                        ref.log_proba([sf[n] for n in rest]))
        else:
            compare(desc, got, ids, ref.classes, ref.log_proba(sf), extra=extra)
        return got

    # ------------------------------------------------------------------
    def gaussian(self):
        """1. GaussianNB on iris, wine, breast_cancer, digits; float8[] and jsonb inputs."""
        for ds in SK_SETS:
            if not self.selected("gaussian " + ds):
                continue
            rows = self.data(ds)
            train = [r for r in rows if r.split == "train"]
            classes = byte_sorted(r.label for r in rows)
            for col in ("x", "j"):
                for weighted in (False, True):
                    self.models.train("%s %s%s" % (ds, col, " w" if weighted else ""), ds, col, weighted)
            cp = {c: (k + 1.0) / sum(range(1, len(classes) + 1)) for k, c in enumerate(classes)}
            cases = [("x", False, None), ("j", False, None), ("x", True, None), ("j", True, None),
                     ("x", False, {"var_smoothing": 1e-6}), ("j", True, {"var_smoothing": 1e-6}),
                     ("x", False, {"fit_prior": False}), ("x", False, {"class_prior": cp}),
                     ("j", True, {"fit_prior": False, "var_smoothing": 1e-3}),
                     # options of other feature kinds do not touch a Gaussian model
                     ("x", False, {"alpha": 0.25, "kind": "bernoulli"})]
            whole = {}
            for col, weighted, opts in cases:
                model = "%s %s%s" % (ds, col, " w" if weighted else "")
                desc = "gaussian %s %s%s %s" % (ds, "float8[]" if col == "x" else "jsonb",
                                                " weighted" if weighted else "",
                                                opts_desc(opts))
                got = self.case(desc, model, ds, col, opts, train, rows, weighted)
                whole[(col, weighted, json.dumps(opts))] = got
            # float8[] and the jsonb object keyed "1", "2", ... name the same features
            base = whole.get(("x", False, "null"))
            if base is not None:
                desc = "gaussian %s float8[] model scored with jsonb {\"1\": x1, ...}" % ds
                if self.models.ok("%s x" % ds, desc):
                    got = self.predict(desc, "%s x" % ds, ds, "x123", None)
                    if got is not None:
                        compare_same(desc + " = scored with float8[]", base, got, [r.id for r in rows])
                if ds == "iris":
                    # (scoring such a model with float8[] is an error by design: float8[] needs a
                    # model trained on float8[])
                    desc = "gaussian iris model trained on jsonb {\"1\": x1, ...}"
                    self.models.train("iris x123", ds, "x123")
                    if self.models.ok("iris x123", desc):
                        got = self.predict(desc, "iris x123", ds, "x123", None)
                        if got is not None:
                            compare_same(desc + " = float8[] model", base, got, [r.id for r in rows])

    # ------------------------------------------------------------------
    def categorical(self):
        """2. CategoricalNB on weather, vote, soybean (complete rows); unseen values vs numpy."""
        for ds in ("weather", "vote", "soybean"):
            if not self.selected("categorical " + ds):
                continue
            rows = [r for r in self.data(ds) if r.complete]
            train = [r for r in rows if r.split == "train"]
            classes = byte_sorted(r.label for r in train)
            where = "r.split = 'train' AND r.complete"
            self.models.train("%s j complete" % ds, ds, "j", False, where)
            self.models.train("%s j complete w" % ds, ds, "j", True, where)
            cp = {c: (k + 1.0) / sum(range(1, len(classes) + 1)) for k, c in enumerate(classes)}
            for weighted, opts in ((False, None), (False, {"alpha": 0.5}), (True, None), (True, {"alpha": 0.5}),
                                   (False, {"fit_prior": False}), (False, {"class_prior": cp, "alpha": 0.5}),
                                   (False, {"var_smoothing": 0.5, "kind": "bernoulli"})):
                model = "%s j complete%s" % (ds, " w" if weighted else "")
                desc = "categorical %s%s %s" % (ds, " weighted" if weighted else "",
                                                opts_desc(opts))
                self.case(desc, model, ds, "j", opts, train, rows, weighted, where="r.complete")
            # every held-out row with one value replaced by one never seen in training
            test = [r for r in rows if r.split == "test"]
            keys = sorted(train[0].j)
            feats = []
            for n, r in enumerate(test):
                f = dict(r.j)
                f[keys[n % len(keys)]] = "zz-never-seen"
                feats.append(f)
            tf = [r.j for r in train]
            for weighted, opts in ((False, None), (False, {"alpha": 0.5}), (True, {"alpha": 0.5})):
                model = "%s j complete%s" % (ds, " w" if weighted else "")
                desc = "categorical %s%s %s, an unseen value in each of %d held-out rows, vs numpy" % (
                    ds, " weighted" if weighted else "", opts_desc(opts), len(feats))
                if not self.models.ok(model, desc):
                    continue
                got = self.predict_values(desc, model, feats, opts)
                if got is None:
                    continue
                ref = RefNB(tf, [r.label for r in train], [r.weight for r in train] if weighted else None, opts)
                compare(desc, got, list(range(len(feats))), ref.classes, ref.log_proba(feats))

    # ------------------------------------------------------------------
    def booleans_and_mixed(self):
        """3. vote's y/n as JSON booleans vs BernoulliNB; credit-g categorical + Gaussian (+ Bernoulli)."""
        if self.selected("bernoulli vote"):
            rows = [r for r in self.data("vote") if r.complete]
            train = [r for r in rows if r.split == "train"]
            where = "r.split = 'train' AND r.complete"
            self.models.train("vote j_bool complete", "vote", "j_bool", False, where)
            self.models.train("vote j_bool complete w", "vote", "j_bool", True, where)
            for weighted, opts in ((False, None), (False, {"alpha": 0.5}), (True, None),
                                   (True, {"alpha": 0.5, "fit_prior": False})):
                model = "vote j_bool complete%s" % (" w" if weighted else "")
                desc = "bernoulli vote booleans%s %s" % (" weighted" if weighted else "",
                                                         opts_desc(opts))
                self.case(desc, model, "vote", "j_bool", opts, train, rows, weighted, where="r.complete")
        if self.selected("mixed credit_g"):
            rows = self.data("credit_g")
            train = [r for r in rows if r.split == "train"]
            for col in ("j", "j_bool"):
                for weighted in (False, True):
                    self.models.train("credit_g %s%s" % (col, " w" if weighted else ""), "credit_g", col, weighted)
            cp = {"bad": 0.5, "good": 0.5}
            for col, weighted, opts in (("j", False, None), ("j", False, {"alpha": 0.5}),
                                        ("j", False, {"var_smoothing": 1e-6}), ("j", True, None),
                                        ("j", True, {"alpha": 0.5, "var_smoothing": 1e-4}),
                                        ("j", False, {"class_prior": cp}), ("j", False, {"fit_prior": False}),
                                        ("j_bool", False, None), ("j_bool", False, {"alpha": 0.5}),
                                        ("j_bool", True, None), ("j_bool", True, {"alpha": 2.0, "class_prior": cp})):
                model = "credit_g %s%s" % (col, " w" if weighted else "")
                desc = "mixed credit_g %s%s %s" % (
                    "categorical+gaussian" if col == "j" else "categorical+gaussian+booleans",
                    " weighted" if weighted else "", opts_desc(opts))
                self.case(desc, model, "credit_g", col, opts, train, rows, weighted)

    # ------------------------------------------------------------------
    def missing(self):
        """5. Missing values (JSON null, absent keys, NULL float8[] elements) vs numpy."""
        specs = [("vote", "j", "categorical, '?' as null"), ("soybean", "j", "categorical, '?' as null"),
                 ("vote", "j_miss", "booleans, null or absent"),
                 ("soybean", "j_miss", "categorical+booleans, null or absent"),
                 ("credit_g", "j_miss", "categorical+gaussian+booleans, 10% holes, null or absent"),
                 ("credit_g", "x_miss", "float8[] with NULL elements")]
        for ds, col, what in specs:
            if not self.selected("missing %s %s" % (ds, col)):
                continue
            rows = self.data(ds)
            train = [r for r in rows if r.split == "train"]
            nmiss = sum(1 for r in rows if any(v is None for v in features_of(r, col).values())
                        or (col == "j_miss" and len(r.j_miss) < len(r.j)))
            for weighted in (False, True):
                self.models.train("%s %s all%s" % (ds, col, " w" if weighted else ""), ds, col, weighted)
            opts_list = [(False, None), (True, None), (False, {"alpha": 0.5})]
            if ds == "credit_g":
                opts_list += [(True, {"alpha": 0.5, "var_smoothing": 1e-4})]
            for weighted, opts in opts_list:
                model = "%s %s all%s" % (ds, col, " w" if weighted else "")
                desc = "missing %s %s (%d of %d rows incomplete)%s %s" % (
                    ds, what, nmiss, len(rows), " weighted" if weighted else "",
                    opts_desc(opts))
                self.case(desc, model, ds, col, opts, train, rows, weighted, sklearn=False)
            if col != "j_miss" or ds != "credit_g":
                continue
            # rows with nothing known (the prior alone), one feature of each kind alone, and
            # keys the model never saw (ignored)
            keys = sorted(train[0].j)
            kinds = feature_kinds([r.j_bool for r in train])
            feats = [{}, {k: None for k in keys}, {"zz-unknown": "x", "zz-other": 2.5}]
            for kind in ("cat", "gauss", "bern"):
                k = next(k for k in keys if kinds[k] == kind)
                feats.append({k: train[0].j_bool[k]})
            test = [r for r in rows if r.split == "test"][:40]
            for n, r in enumerate(test):
                f = dict(r.j_miss)
                f["zz-unknown"] = ["x", 1.5, True, "y"][n % 4]
                feats.append(f)
            for weighted, opts in ((True, None), (False, {"fit_prior": False, "alpha": 0.5})):
                model = "%s %s all%s" % (ds, col, " w" if weighted else "")
                desc = ("missing credit_g%s %s: empty object, all null, only unknown keys, one feature of each "
                        "kind, and %d held-out rows plus an unknown key" % (" weighted" if weighted else "",
                                                                           opts_desc(opts), len(test)))
                if not self.models.ok(model, desc):
                    continue
                got = self.predict_values(desc, model, feats, opts)
                if got is None:
                    continue
                ref = RefNB([r.j_miss for r in train], [r.label for r in train],
                            [r.weight for r in train] if weighted else None, opts)
                compare(desc, got, list(range(len(feats))), ref.classes, ref.log_proba(feats))

    # ------------------------------------------------------------------
    def explain(self):
        """6. nb_feature_log_prob vs scikit-learn's fitted parameters; nb_explain sums and rows."""
        specs = [("iris", "x", False, "r.split = 'train'", [None, {"var_smoothing": 1e-3}]),
                 ("wine", "j", True, "r.split = 'train'", [None, {"fit_prior": False}]),
                 ("vote", "j", False, "r.split = 'train' AND r.complete", [None, {"alpha": 0.5}]),
                 ("soybean", "j", True, "r.split = 'train' AND r.complete", [{"alpha": 0.5}]),
                 ("vote", "j_bool", True, "r.split = 'train' AND r.complete", [None, {"alpha": 2.0}]),
                 ("credit_g", "j_bool", False, "r.split = 'train'",
                  [None, {"alpha": 0.5, "var_smoothing": 1e-4}, {"class_prior": {"bad": 0.5, "good": 0.5}}]),
                 ("credit_g", "j_miss", True, "r.split = 'train'", [None])]
        for ds, col, weighted, where, opts_list in specs:
            name = "explain %s %s%s" % (ds, col, " w" if weighted else "")
            if not self.selected(name):
                continue
            rows = self.data(ds)
            train = [r for r in rows if r.split == "train" and (r.complete or "complete" not in where)]
            self.models.train(name, ds, col, weighted, where)
            tf = [features_of(r, col) for r in train]
            labels = [r.label for r in train]
            w = [r.weight for r in train] if weighted else None
            for opts in opts_list:
                desc = "%s %s%s %s" % (ds, col, " weighted" if weighted else "", opts_desc(opts))
                if not self.models.ok(name, desc):
                    continue
                if col != "j_miss":
                    self.feature_log_prob(desc, name, SkMixed(tf, labels, w, opts), opts)
                self.explain_rows(desc, name, ds, col, rows, RefNB(tf, labels, w, opts), opts)

    def feature_log_prob(self, desc, model, sk, opts):
        desc = "nb_feature_log_prob " + desc + " vs scikit-learn"
        try:
            rows = self.db.query("SELECT f.feature, f.value, f.label, f.log_prob FROM nbc_mixed_models m, "
                                 "nb_feature_log_prob(m.model, %s::jsonb) f WHERE m.name = %s",
                                 (None if opts is None else json.dumps(opts), model))
        except psycopg2.Error as e:
            R.check(False, desc, errline(e))
            return
        ci = {c: n for n, c in enumerate(sk.classes)}
        want = {}
        for t, est in sk.est.items():
            for n, k in enumerate(sk.keys[t]):
                for c, cls in enumerate(sk.classes):
                    if t == "gauss":
                        want[(k, "mean", cls)] = est.theta_[c, n]
                        want[(k, "variance", cls)] = est.var_[c, n]
                    elif t == "cat":
                        for v, code in sk.codes[k].items():
                            want[(k, v, cls)] = est.feature_log_prob_[n][c, code]
                    else:
                        a = float((opts or {}).get("alpha", 1.0))
                        want[(k, "true", cls)] = est.feature_log_prob_[c, n]
                        want[(k, "false", cls)] = (np.log(est.class_count_[c] - est.feature_count_[c, n] + a)
                                                   - np.log(est.class_count_[c] + 2 * a))
        err, worst, extra = 0.0, None, []
        for feature, value, label, lp in rows:
            ref = want.pop((feature, value, label), None)
            if ref is None or label not in ci:
                extra.append((feature, value, label))
                continue
            e = abs(lp - ref) / max(1.0, abs(ref))
            if not e <= err:
                err, worst = e, (feature, value, label, lp, ref)
        R.check(err <= 1e-12 and not extra and not want, desc,
                "%d rows, max error %s (relative above 1)%s%s%s" % (
                    len(rows), fmt(err), "" if err <= 1e-12 else ", worst %r %r %r: nbc %r sklearn %r" % worst,
                    "" if not extra else "; unexpected rows, e.g. %r" % (extra[0],),
                    "" if not want else "; %d missing, e.g. %r" % (len(want), next(iter(want)))))

    def explain_rows(self, desc, model, ds, col, rows, ref, opts):
        """nb_explain of every row of ds: the sum identity; every row of some rows vs RefNB."""
        desc = "nb_explain " + desc
        o = None if opts is None else json.dumps(opts)
        c = COL_SQL[col]
        sample = set(r.id for r in rows[::max(1, len(rows) // 20)])
        try:
            got = self.db.query(
                "SELECT r.id, nb_predict(m.model, " + c + ", %s::jsonb), "
                "nb_predict_log_proba(m.model, " + c + ", %s::jsonb)::text, "
                "(SELECT sum(e.contribution) FROM nb_explain(m.model, " + c + ", %s::jsonb) e), "
                "CASE WHEN r.id = ANY (%s) THEN (SELECT json_agg(json_build_array(e.feature, e.value, "
                "e.contribution::text))::text FROM nb_explain(m.model, " + c + ", %s::jsonb) e) END "
                "FROM nbc_mixed_rows r, nbc_mixed_models m WHERE m.name = %s AND r.ds = %s",
                (o, o, o, sorted(sample), o, model, ds))
        except psycopg2.Error as e:
            R.check(False, desc + ": query", errline(e))
            return
        by_id = {r.id: r for r in rows}
        ci = {cl: n for n, cl in enumerate(ref.classes)}
        err, worst = 0.0, None
        rerr, rworst, nrows, bad = 0.0, None, 0, []
        for rid, pred, lp, total, parts in got:
            odds, other = log_odds(parse_json(lp), pred)
            e = 0.0 if total == odds else abs(total - odds) / max(1.0, abs(odds))
            if not e <= err:
                err, worst = (e if e == e else float("inf")), (rid, total, odds)
            if parts is None:
                continue
            c1, c2 = ci[pred], ci[other]
            terms = ref_terms(ref, features_of(by_id[rid], col))
            for feature, value, contribution in parse_json(parts):
                nrows += 1
                if feature is None:
                    want = ref.log_prior[c1] - ref.log_prior[c2]
                elif feature in terms:
                    want = terms.pop(feature)
                    want = want[c1] - want[c2]
                else:
                    bad.append((rid, feature, value))
                    continue
                e = abs(float(contribution) - float(want))
                if not e <= rerr:
                    rerr, rworst = e, (rid, feature, value, contribution, float(want))
            if terms:
                bad.append((rid, "no row for %s" % sorted(terms)[0]))
        R.check(err <= TOL and len(got) == len(rows), desc + ": contributions sum to the log odds",
                "%d rows, max error %s (relative above 1)%s" % (
                    len(got), fmt(err), "" if err <= TOL else ", worst row %s: sum %r log odds %r" % worst))
        R.check(rerr <= TOL and not bad and nrows > 0,
                desc + ": every part of %d rows vs the numpy reference" % len(sample),
                "%d parts, max abs err %s%s%s" % (
                    nrows, fmt(rerr), "" if rerr <= TOL else ", worst row %s %r=%r: nbc %r numpy %r" % rworst,
                    "" if not bad else "; unexpected, e.g. %r" % (bad[0],)))

    # ------------------------------------------------------------------
    def mutual_info(self):
        """7. nb_mutual_info: categorical and boolean features vs mutual_info_score; Gaussian vs mpmath."""
        specs = [("vote", "vote j all", "j", False), ("soybean", "soybean j all", "j", False),
                 ("vote", "vote j_miss all", "j_miss", False), ("credit_g", "credit_g j_bool", "j_bool", False),
                 ("credit_g", "credit_g j_miss all", "j_miss", False),
                 ("credit_g", "credit_g j_miss all w", "j_miss", True),
                 ("soybean", "soybean j_miss all w", "j_miss", True), ("iris", "iris x", "x", False)]
        for ds, model, col, weighted in specs:
            desc = "nb_mutual_info %s %s%s" % (ds, col, " weighted" if weighted else "")
            if not self.selected(desc):
                continue
            if model not in self.models.seconds:
                # not trained by an earlier section (e.g. --only)
                self.models.train(model, ds, col, weighted)
            if not self.models.ok(model, desc):
                continue
            try:
                got = self.db.query("SELECT feature, mutual_info FROM nb_mutual_info("
                                    "(SELECT model FROM nbc_mixed_models WHERE name = %s))", (model,))
            except psycopg2.Error as e:
                R.check(False, desc + ": query", errline(e))
                continue
            train = [r for r in self.data(ds) if r.split == "train"]
            feats = [features_of(r, col) for r in train]
            kinds = feature_kinds(feats)
            names = [g[0] for g in got]
            R.check(sorted(names) == sorted(kinds) and len(names) == len(set(names)),
                    desc + ": one row per feature", "%d rows for %d features%s" % (
                        len(names), len(kinds), "" if sorted(names) == sorted(kinds) else
                        "; missing %r, extra %r" % (sorted(set(kinds) - set(names))[:5],
                                                    sorted(set(names) - set(kinds))[:5])))
            vals = dict(got)
            err, worst, harness = 0.0, None, 0.0
            labels = np.array([r.label for r in train], dtype=object)
            w = np.array([r.weight for r in train]) if weighted else np.ones(len(train))
            nk = {"cat": 0, "bern": 0, "gauss": 0}
            for k, kind in sorted(kinds.items()):
                nk[kind] += 1
                if k not in vals:
                    continue
                if kind == "gauss":
                    continue
                pres = [n for n, f in enumerate(feats) if f.get(k) is not None]
                v = [str(feats[n][k]) for n in pres]
                ref = plugin_mi(labels[pres], v, w[pres])
                if not weighted:
                    sk = mutual_info_score(labels[pres], v)
                    harness = max(harness, abs(sk - ref))
                    ref = sk
                e = abs(vals[k] - ref) if vals[k] is not None else float("inf")
                if not e <= err:
                    err, worst = e, (k, vals[k], ref)
            if harness > TOL:
                R.check(False, desc + ": harness",
                        "numpy plug-in MI differs from mutual_info_score by %s" % fmt(harness))
            if nk["cat"] + nk["bern"]:
                R.check(err <= TOL, desc + ": values vs %s" % (
                    "numpy weighted plug-in" if weighted else
                    "sklearn mutual_info_score (rows with the feature present)"),
                    "%d categorical, %d boolean features, max abs err %s%s" % (
                        nk["cat"], nk["bern"], fmt(err), "" if err <= TOL else
                        ", worst %r: nbc %r reference %r" % worst))
            if nk["gauss"]:
                gauss = [k for k, kind in kinds.items() if kind == "gauss"]
                floor = gaussian_floor(feats, gauss)
                gerr, gworst = 0.0, None
                for k in sorted(gauss):
                    pres = [n for n, f in enumerate(feats) if f.get(k) is not None]
                    ref = gaussian_mi_ref(labels[pres], [float(feats[n][k]) for n in pres], w[pres], floor)
                    e = rel_err(vals.get(k), ref)
                    if not e <= gerr:
                        gerr, gworst = e, (k, vals.get(k), ref)
                R.check(gerr <= GAUSS_MI_TOL, desc + ": Gaussian features vs mpmath quadrature of H(X)",
                        "%d Gaussian features, max rel err %s%s" % (
                            nk["gauss"], fmt(gerr), "" if gerr <= GAUSS_MI_TOL else
                            ", worst %r: nbc %r reference %r" % gworst))

    def gaussian_mutual_info(self):
        """7b. nb_mutual_info of synthetic Gaussian features vs mpmath (1e-6 relative)."""
        if not self.selected("nb_mutual_info gaussian synthetic"):
            return
        rng = np.random.default_rng(11)
        n = 40
        cases = [
            ("well separated", ["a"] * n + ["b"] * n,
             np.concatenate([rng.normal(0, 1, n), rng.normal(25, 1, n)]), None),
            ("overlapping", ["a"] * n + ["b"] * n,
             np.concatenate([rng.normal(0, 1, n), rng.normal(0.4, 1.2, n)]), None),
            ("nearly identical", ["a"] * n + ["b"] * n,
             np.concatenate([rng.normal(0, 1, n), rng.normal(0, 1, n)]), None),
            ("very different variances", ["a"] * n + ["b"] * n,
             np.concatenate([rng.normal(0, 1e-3, n), rng.normal(0, 10, n)]), None),
            ("three classes, unequal priors, weighted", ["a"] * n + ["b"] * (n // 4) + ["c"] * (2 * n),
             np.concatenate([rng.normal(-1, 0.5, n), rng.normal(3, 2, n // 4), rng.normal(0, 1, 2 * n)]),
             rng.uniform(0.1, 3, n + n // 4 + 2 * n)),
            ("constant classes (variance = the floor)", ["a"] * 5 + ["b"] * 7,
             np.array([1.0] * 5 + [2.0] * 7), None),
            ("constant classes at 1e12 (deviation below the resolution of x)", ["a"] * 5 + ["b"] * 7,
             np.array([1e12 + 1] * 5 + [1e12 + 2] * 7), None),
            ("one constant class inside a wide one", ["a"] * 5 + ["b"] * n,
             np.concatenate([[0.5] * 5, rng.normal(0, 3, n)]), None),
            ("one class", ["a"] * n, rng.normal(0, 1, n), None),
        ]
        err, worst = 0.0, None
        for name, labels, x, w in cases:
            labels = np.array(labels, dtype=object)
            wts = np.ones(len(x)) if w is None else w
            try:
                got = self.db.query(
                    "SELECT mutual_info FROM nb_mutual_info((SELECT nb_train(l, jsonb_build_object('x', x), w) "
                    "FROM unnest(%s::text[], %s::float8[], %s::float8[]) AS u(l, x, w)))",
                    (list(labels), [float(v) for v in x], [float(v) for v in wts]))[0][0]
            except psycopg2.Error as e:
                R.check(False, "nb_mutual_info gaussian synthetic %s: query" % name, errline(e))
                continue
            floor = gaussian_floor([{"x": float(v)} for v in x], ["x"])
            ref = gaussian_mi_ref(labels, [float(v) for v in x], wts, floor)
            e = rel_err(got, ref)
            if not e <= err:
                err, worst = e, (name, got, ref)
        R.check(err <= GAUSS_MI_TOL, "nb_mutual_info gaussian synthetic: %d cases vs mpmath quadrature of H(X)"
                % len(cases), "max rel err %s%s" % (fmt(err), "" if err <= GAUSS_MI_TOL else
                                                    ", worst %r: nbc %r reference %r" % worst))

    # ------------------------------------------------------------------
    def merge(self):
        """8. nb_merge of halves, the aggregate over groups and a parallel plan vs one model."""
        if not self.selected("merge credit_g"):
            return
        ds, col = "credit_g", "j_miss"
        rows = self.data(ds)
        ids = [r.id for r in rows]
        base_name = "credit_g j_miss all w"
        if base_name not in self.models.seconds:
            self.models.train(base_name, ds, col, True)
        m = self.models
        m.train("merge h0", ds, col, True, "r.split = 'train' AND r.id % 2 = 0")
        m.train("merge h1", ds, col, True, "r.split = 'train' AND r.id % 2 = 1")
        m.run("merge2", "INSERT INTO nbc_mixed_models SELECT %s, nb_merge(a.model, b.model) "
              "FROM nbc_mixed_models a, nbc_mixed_models b WHERE a.name = 'merge h1' AND b.name = 'merge h0'",
              ("merge2",))
        m.run("mergeagg", "INSERT INTO nbc_mixed_models SELECT %s, nb_merge(g.model ORDER BY g.k DESC) FROM ("
              "SELECT r.id %% 5 AS k, nb_train(r.label, r.j_miss, r.weight) AS model FROM nbc_mixed_rows r "
              "WHERE r.ds = 'credit_g' AND r.split = 'train' GROUP BY r.id %% 5) g", ("mergeagg",))
        # a table big enough for parallel workers: the training rows of credit_g and vote 20 times
        try:
            self.db.execute("DROP TABLE IF EXISTS nbc_mixed_par")
            self.db.execute("CREATE TABLE nbc_mixed_par AS SELECT r.ds, r.id, k, r.label, r.weight, r.j_miss "
                            "FROM nbc_mixed_rows r, generate_series(1, 20) k "
                            "WHERE r.ds IN ('credit_g', 'vote') AND r.split = 'train' ORDER BY k, r.ds, r.id")
            self.db.execute("ANALYZE nbc_mixed_par")
        except psycopg2.Error as e:
            R.check(False, "merge: parallel test table", errline(e))
        q = "SELECT r.ds, nb_train(r.label, r.j_miss, r.weight) FROM nbc_mixed_par r GROUP BY r.ds"
        plan = None
        for name, settings in (("par serial", ["max_parallel_workers_per_gather = 0"]),
                               ("par parallel", ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                                                 "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                                                 "parallel_leader_participation = off"])):
            try:
                for s in settings:
                    self.db.execute("SET " + s)
                if name == "par parallel":
                    plan = self.db.query("EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) " + q)[0][0]
                got = self.db.query("SELECT x.ds, x.m::text FROM (" + q + ") x(ds, m)")
                for ds_, mtext in got:
                    self.db.execute("INSERT INTO nbc_mixed_models VALUES (%s, %s::nb_model)",
                                    ("%s %s" % (name, ds_), mtext))
            except psycopg2.Error as e:
                m.errors["%s credit_g" % name] = m.errors["%s vote" % name] = errline(e)
            finally:
                for s in ("max_parallel_workers_per_gather", "parallel_setup_cost", "parallel_tuple_cost",
                          "min_parallel_table_scan_size", "parallel_leader_participation"):
                    self.db.execute("RESET " + s)
        if plan is not None:
            workers = plan_workers(plan)
            R.check(workers["launched"] >= 1 and workers["partial"] and workers["rows"] > 0,
                    "merge: the parallel plan ran partial aggregates in workers",
                    "%d workers launched, partial aggregate %s, %d rows read by workers"
                    % (workers["launched"], workers["partial"], workers["rows"]))
        whole = self.predict("merge: whole model", base_name, ds, col, None)
        if whole is None:
            return
        for name, what in (("merge2", "nb_merge(a, b) of two halves"),
                           ("mergeagg", "aggregate nb_merge over 5 GROUP BY models")):
            desc = "merge credit_g jsonb weighted %s = one model" % what
            if m.ok(name, desc):
                got = self.predict(desc, name, ds, col, None)
                if got is not None:
                    compare_same(desc, whole, got, ids)
        for dsp in ("credit_g", "vote"):
            desc = "merge %s jsonb weighted: parallel GROUP BY plan = serial plan" % dsp
            if m.ok("par serial %s" % dsp, desc) and m.ok("par parallel %s" % dsp, desc):
                a = self.predict(desc, "par serial %s" % dsp, dsp, col, {"alpha": 0.5})
                b = self.predict(desc, "par parallel %s" % dsp, dsp, col, {"alpha": 0.5})
                if a is not None and b is not None:
                    compare_same(desc, a, b, [r.id for r in self.data(dsp)])
        # nb_classes of the merged model and of the whole against the weights
        desc = "merge credit_g: nb_classes of whole and merged models = weighted class counts"
        try:
            got = self.db.query("SELECT m.name, c.label, c.documents, c.prior FROM nbc_mixed_models m, "
                                "nb_classes(m.model) c WHERE m.name IN (%s, 'merge2', 'mergeagg')", (base_name,))
            train = [r for r in rows if r.split == "train"]
            W = {}
            for r in train:
                W[r.label] = W.get(r.label, 0.0) + r.weight
            tot = sum(W.values())
            err = max((max(abs(d - W[lab]) / max(1, W[lab]), abs(p - W[lab] / tot)) for _, lab, d, p in got),
                      default=float("inf"))
            R.check(len(got) == 3 * len(W) and err <= MERGE_TOL, desc, "%d rows, max err %s" % (len(got), fmt(err)))
        except (psycopg2.Error, KeyError) as e:
            R.check(False, desc, errline(e))

    # ------------------------------------------------------------------
    def fashion(self):
        """6. Fashion-MNIST: 60,000 x 784 float8[] training rows, 10,000 test rows."""
        if self.args.no_fashion or not self.selected("fashion"):
            return
        t0 = time.time()
        self.models.run("fashion", "INSERT INTO nbc_mixed_models SELECT 'fashion', nb_train(label, pixels) "
                        "FROM fashion_mnist WHERE split = 'train'", ())
        t_train = time.time() - t0
        desc = "fashion-mnist"
        if not self.models.ok("fashion", desc + ": nb_train(label, float8[]) on 60000 rows"):
            return
        # nbc predicts in a second connection while scikit-learn fits
        fut = self.pool.submit(fashion_sql)
        Xtr, ytr, Xte, yte = load_mixed.fashion_arrays()
        t1 = time.time()
        sk = GaussianNB().fit(Xtr, ytr)
        sk_pred = sk.predict(Xte)
        t_sk = time.time() - t1
        try:
            preds, sample, t_sql = fut.result()
        except psycopg2.Error as e:
            R.check(False, desc + ": query", errline(e))
            return
        ids = np.arange(60000, 70000)
        if len(preds) != 10000:
            R.check(False, desc + ": nb_predict rows", "%d rows for 10000 test images" % len(preds))
            return
        nb_pred = np.array([preds[i] for i in ids], dtype=object)
        acc_nb = int(np.sum(nb_pred == yte))
        acc_sk = int(np.sum(sk_pred == yte))
        R.check(acc_nb == acc_sk, desc + ": accuracy of nb_predict = GaussianNB's",
                "nbc %d/10000 = %.4f, sklearn %d/10000 = %.4f; nbc trained in %.1fs, scored in %.1fs; "
                "sklearn fit+predict %.1fs" % (acc_nb, acc_nb / 1e4, acc_sk, acc_sk / 1e4, t_train, t_sql, t_sk))
        diff = np.flatnonzero(nb_pred != sk_pred)
        R.check(len(diff) == 0, desc + ": nb_predict = GaussianNB.predict on all 10000 test images",
                "%d differ%s" % (len(diff), "" if not len(diff) else ", e.g. id %d: nbc %r sklearn %r" % (
                    ids[diff[0]], nb_pred[diff[0]], sk_pred[diff[0]])))
        sids = sorted(sample)
        est = SkFromGaussian(sk)
        lp, own_lp = est.scores(Xte[np.array(sids) - 60000])
        compare(desc + ": %d sampled test images" % len(sids), sample, sids, list(sk.classes_), lp, own_lp,
                sk.predict(Xte[np.array(sids) - 60000]))

    def close(self):
        self.pool.shutdown(wait=True)


class SkFromGaussian:
    """Long double reference from a fitted GaussianNB on a dense matrix."""

    def __init__(self, est):
        self.est = est

    def scores(self, X):
        e = self.est
        th, var = e.theta_.astype(LD), e.var_.astype(LD)
        Xl = X.astype(LD)
        jll = np.zeros((X.shape[0], len(e.classes_)), dtype=LD)
        for c in range(len(e.classes_)):
            jll[:, c] = (np.log(LD(e.class_prior_[c])) - LD(0.5) * np.sum(np.log(LD(2) * LD(np.pi) * var[c]))
                         - LD(0.5) * np.sum((Xl - th[c]) ** 2 / var[c], axis=1))
        return log_normalize(jll), e.predict_log_proba(X)


def fashion_sql():
    """nb_predict of the 10000 test images; proba and log-proba of every 20th (500)."""
    db = DB()
    try:
        t0 = time.time()
        rows = db.query("SELECT f.id, nb_predict(m.model, f.pixels) FROM fashion_mnist f, nbc_mixed_models m "
                        "WHERE m.name = 'fashion' AND f.split = 'test'")
        preds = {r[0]: r[1] for r in rows}
        rows = db.query("SELECT f.id, nb_predict(m.model, f.pixels), nb_predict_proba(m.model, f.pixels)::text, "
                        "nb_predict_log_proba(m.model, f.pixels)::text FROM fashion_mnist f, nbc_mixed_models m "
                        "WHERE m.name = 'fashion' AND f.split = 'test' AND f.id % 20 = 0")
        sample = {r[0]: (r[1], parse_json(r[2]), parse_json(r[3])) for r in rows}
        return preds, sample, time.time() - t0
    finally:
        db.conn.close()


def plan_workers(plan):
    """Workers launched, whether a Partial Aggregate ran, rows read by workers, from EXPLAIN JSON."""
    out = {"launched": 0, "partial": False, "rows": 0}
    plan = parse_json(plan)

    def walk(node):
        if "Workers Launched" in node:
            out["launched"] = max(out["launched"], node["Workers Launched"])
        if node.get("Partial Mode") == "Partial":
            out["partial"] = True
        if node.get("Node Type") == "Seq Scan":
            out["rows"] += sum(wk.get("Actual Rows", 0) for wk in node.get("Workers", []))
        for ch in node.get("Plans", []):
            walk(ch)

    for p in plan:
        walk(p["Plan"])
    return out


def gaussian_floor(feats, gauss):
    """var_smoothing 1e-9 times the largest unweighted variance of a Gaussian feature."""
    largest = 0.0
    for k in gauss:
        v = np.array([float(f[k]) for f in feats if f.get(k) is not None], dtype=LD)
        if len(v):
            largest = max(largest, float(np.mean((v - v.mean()) ** 2)))
    return 1e-9 * largest


def gaussian_mi_ref(labels, x, w, floor):
    """Mutual information (nats) of the class and a Gaussian feature under the
    class-conditional normals a model fits (weighted mean, weighted population
    variance + floor, prior = weighted rows with the feature), by a formula
    other than nbc's: H(X) - sum_c pi_c log(2 pi e s2_c) / 2, with H(X) the
    entropy of the mixture integrated by mpmath (tanh-sinh, 40 digits) over
    pieces split at every mean +- 1, 2, 4, 8, 16 and 40 deviations."""
    mp.mp.dps = 40
    classes = []
    W = mp.mpf(0)
    for c in sorted(set(labels)):
        idx = [n for n, l in enumerate(labels) if l == c]
        wc = [mp.mpf(float(w[n])) for n in idx]
        xc = [mp.mpf(x[n]) for n in idx]
        sw = mp.fsum(wc)
        mean = mp.fsum(a * b for a, b in zip(wc, xc)) / sw
        var = mp.fsum(a * (b - mean) ** 2 for a, b in zip(wc, xc)) / sw + mp.mpf(floor)
        if var <= 0:
            var = mp.mpf(1)
        classes.append((sw, mean, var))
        W += sw
    if len(classes) < 2:
        return 0.0
    ps = [(sw / W, m, v) for sw, m, v in classes]

    def density(t):
        return mp.fsum(p * mp.exp(-(t - m) ** 2 / (2 * v)) / mp.sqrt(2 * mp.pi * v) for p, m, v in ps)

    def f(t):
        q = density(t)
        return -q * mp.log(q) if q > 0 else mp.mpf(0)

    pts = sorted(set(m + k * mp.sqrt(v) for _, m, v in ps
                     for k in (-40, -16, -8, -4, -2, -1, 0, 1, 2, 4, 8, 16, 40)))
    h = mp.fsum(mp.quad(f, [a, b]) for a, b in zip(pts, pts[1:]))
    return float(h - mp.fsum(p * mp.log(2 * mp.pi * mp.e * v) / 2 for p, m, v in ps))


def rel_err(got, ref):
    """|got - ref| relative to ref (absolute below 1e-300); inf for NULL."""
    if got is None:
        return float("inf")
    return abs(got - ref) / max(abs(ref), 1e-300) if ref != 0 else abs(got)


def plugin_mi(labels, values, w):
    """Plug-in mutual information (nats) from weighted counts."""
    ls = {l: n for n, l in enumerate(sorted(set(labels)))}
    vs = {v: n for n, v in enumerate(sorted(set(values)))}
    T = np.zeros((len(vs), len(ls)), dtype=LD)
    np.add.at(T, (np.array([vs[v] for v in values]), np.array([ls[l] for l in labels])), np.asarray(w, dtype=LD))
    P = T / T.sum()
    pv, pc = P.sum(axis=1, keepdims=True), P.sum(axis=0, keepdims=True)
    nz = P > 0
    return float(np.sum(P[nz] * np.log(P[nz] / (pv @ pc)[nz])))


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[],
                    help="run only the sections / data sets whose name contains this (repeatable): gaussian, "
                         "categorical, bernoulli, mixed, missing, explain, nb_mutual_info, merge, fashion, "
                         "or a data set")
    ap.add_argument("--keep", action="store_true", help="keep the table nbc_mixed_models afterwards")
    ap.add_argument("--no-fashion", action="store_true", help="skip Fashion-MNIST")
    args = ap.parse_args()

    t_start = time.time()
    try:
        db = DB()
        suite = Suite(db, args)
    except psycopg2.Error as e:
        R.check(False, "mixed parity: connect and create nbc_mixed_models", errline(e))
        print("%d passed, %d failed" % (R.passed, R.failed))
        return 1
    sections = [suite.fashion, suite.gaussian, suite.categorical, suite.booleans_and_mixed, suite.missing,
                suite.explain, suite.mutual_info, suite.gaussian_mutual_info, suite.merge]
    try:
        for sec in sections:
            t0 = time.time()
            try:
                sec()
            except Exception as e:  # a bug here must show as a failure, not end the suite
                import traceback
                R.check(False, "mixed parity section %s" % sec.__name__, "%s: %s" % (type(e).__name__, e))
                R.note(traceback.format_exc())
            R.note("%s: %.1fs" % (sec.__name__, time.time() - t0))
    finally:
        suite.close()
    if not args.keep:
        try:
            db.execute("DROP TABLE IF EXISTS nbc_mixed_models, nbc_mixed_par")
        except psycopg2.Error:
            pass
    R.note("total %.1fs" % (time.time() - t_start))
    if R.failures:
        R.note("failed: " + "; ".join(R.failures))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
