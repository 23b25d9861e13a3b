#!/usr/bin/python3
"""Parity of nbc against scikit-learn on real data (SpamAssassin, Reuters Grain).

Run by test/parity/run.sh, which loads the data first.  Needs a database
reachable through the libpq environment variables with nbc installed and the
tables spamassassin and reuters_grain loaded (test/data/load_*.py).

Tokens are made in SQL only (a text[] from regexp_matches over lower(body),
and to_tsvector('english', body)) and exported as they are to Python, so
both sides see identical token lists.  Count matrices use the training
vocabulary only (nbc ignores tokens it never saw in training too).

What is compared, per data set, input (text[], tsvector, strip(tsvector))
and weighting (none, or 0.5 + (hash % 7) / 4 per row):
  * nb_predict_proba / nb_predict_log_proba of every test document and class
    against scikit-learn's MultinomialNB / BernoulliNB(binarize=0) /
    ComplementNB(norm=False, and norm=True for the option norm), fitted with
    the same alpha, fit_prior, class_prior and sample_weight, within 1e-9;
    also the options estimator, beta and class_alpha where scikit-learn has
    the same estimator (estimator_sets).  The reference is the fitted
    sklearn model's log posterior with its terms added in long
    double (see reference_log_proba): sklearn's own float64 predict_log_proba
    is itself up to ~4e-9 off on long SpamAssassin messages, so it is shown
    beside each result but is not the yardstick;
  * nb_predict against sklearn's predict (ties: first class in sorted order);
  * nb_predict_top with every class: the first label nb_predict's, every
    probability nb_predict_proba's exactly, most probable first;
  * nb_model_to_jsonb counts, nb_classes, nb_mutual_info (Murphy eq. 3.76
    in numpy for every token, sklearn.metrics.mutual_info_score for 50, and
    the order), and nb_merge of two disjoint halves against the whole;
  * nb_feature_log_prob against the fitted estimator's feature_log_prob_,
    every token and class, within 1e-12 (FLP_TOL; relative for the
    normalized complement weights of norm); for ComplementNB against its
    fitted counts without its rounding (see check_feature_log_prob);
  * nb_explain: for every test document and kind, the contributions sum to
    the log posterior odds of nb_predict_log_proba (predicted class against
    the runner-up) within 1e-9 relative; for some documents every row
    against the fitted estimator's parameters: a token's x_j times the
    difference of feature_log_prob_ (Bernoulli: once), the prior's
    class_log_prior_ (complement: 0), Bernoulli's absent tokens (value: how
    many) sum_j log(1 - exp(feature_log_prob_)) over the tokens not in the
    document.

Prints one TAP-style line per check, "ok - ..." or "not ok - ...: detail",
and closes with "N passed, N failed".  Exits 1 when a check failed.

    parity.py [--only 'DATASET INPUT'...] [--keep] [--no-prepare]
"""

import argparse
import collections
import concurrent.futures
import inspect
import json
import math
import sys
import time

from report import Report, fmt

try:
    import numpy as np
    import pandas as pd
    import psycopg2
    import scipy.sparse as sp
    from sklearn.metrics import mutual_info_score
    from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB
except ImportError as e:  # report it as a failed check, not a bare traceback
    print("not ok - parity prerequisites: %s (Debian: python3-sklearn python3-pandas "
          "python3-psycopg2; run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

from db import DB  # noqa: E402 (after the prerequisites are checked)

TOL = 1e-9          # nbc vs scikit-learn and vs the independent MI computation
MERGE_TOL = 1e-12   # merged model vs the model trained at once
FLP_TOL = 1e-12     # nb_feature_log_prob vs feature_log_prob_
EXPLAIN_DOCS = 25   # documents whose every nb_explain row is checked, per case

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

# input name -> SQL expression of the per-document features (table alias d)
INPUTS = collections.OrderedDict([
    ("text[]", "d.tokens"),
    ("tsvector", "d.tsv"),
    ("strip(tsvector)", "strip(d.tsv)"),    # no positions: each lexeme counts once
])

# the combinations (input, weighted) that are trained and checked
COMBOS = [("text[]", False), ("text[]", True), ("tsvector", False), ("tsvector", True),
          ("strip(tsvector)", False)]
# those whose model is also trained in two halves and merged
MERGE_COMBOS = [("text[]", False), ("text[]", True), ("tsvector", False)]
# those whose nb_feature_log_prob and nb_explain are checked
EXPLAIN_COMBOS = [("text[]", False), ("text[]", True), ("tsvector", False)]

KINDS = ("multinomial", "bernoulli", "complement")


# --------------------------------------------------------------------------
# reporting (test/parity/report.py)

R = Report()


# --------------------------------------------------------------------------
# database

def prepare_sql(db):
    """Token table and every model, built once."""
    db.execute("SET client_min_messages = warning")
    db.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    db.execute("DROP TABLE IF EXISTS nbc_parity_models, nbc_parity_docs")
    # tokenizing is the slow part: let CREATE TABLE AS use a parallel worker
    for setting in ("parallel_setup_cost = 0", "parallel_tuple_cost = 0",
                    "min_parallel_table_scan_size = 0"):
        db.execute("SET " + setting)
    parts = []
    args = []
    for ds, spec in DATASETS.items():
        # half: the two disjoint parts for nb_merge; weight: 0.5 + (hash % 7) / 4
        parts.append("""SELECT %s::text AS ds, s.key, s.label, s.split,
                   get_byte(decode(md5(s.key), 'hex'), 0) %% 2 AS half,
                   0.5 + (get_byte(decode(md5(s.key), 'hex'), 1) %% 7) / 4.0::float8 AS weight,
                   ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), %s, 'g') AS m) AS tokens,
                   to_tsvector('english', s.body) AS tsv
            FROM (""" + spec["source"] + """) s""")
        args += [ds, TOKEN_RE]
    db.execute("CREATE TABLE nbc_parity_docs AS " + " UNION ALL ".join(parts), args)
    for setting in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size"):
        db.execute("RESET " + setting)
    db.execute("ALTER TABLE nbc_parity_docs ADD PRIMARY KEY (ds, key)")
    db.execute("ANALYZE nbc_parity_docs")
    db.execute("""CREATE TABLE nbc_parity_models (
        ds text, input text, weighted bool, part text, model nb_model,
        PRIMARY KEY (ds, input, weighted, part))""")
    for inp, weighted in COMBOS:
        args = "d.label, %s%s" % (INPUTS[inp], ", d.weight" if weighted else "")
        db.execute("""INSERT INTO nbc_parity_models
            SELECT d.ds, %s, %s, 'all', nb_train(""" + args + """)
            FROM nbc_parity_docs d WHERE d.split = 'train' GROUP BY d.ds""", (inp, weighted))
        if (inp, weighted) not in MERGE_COMBOS:
            continue
        db.execute("""INSERT INTO nbc_parity_models
            SELECT d.ds, %s, %s, 'h' || d.half, nb_train(""" + args + """)
            FROM nbc_parity_docs d WHERE d.split = 'train' GROUP BY d.ds, d.half""", (inp, weighted))
        # the halves merged: pairwise, and by the aggregate (in the other order)
        db.execute("""INSERT INTO nbc_parity_models
            SELECT a.ds, a.input, a.weighted, 'merge2', nb_merge(a.model, b.model)
            FROM nbc_parity_models a JOIN nbc_parity_models b USING (ds, input, weighted)
            WHERE a.input = %s AND a.weighted = %s AND a.part = 'h0' AND b.part = 'h1'""",
                   (inp, weighted))
        db.execute("""INSERT INTO nbc_parity_models
            SELECT ds, input, weighted, 'mergeagg', nb_merge(model ORDER BY part DESC)
            FROM nbc_parity_models
            WHERE input = %s AND weighted = %s AND part IN ('h0', 'h1')
            GROUP BY ds, input, weighted""", (inp, weighted))


# --------------------------------------------------------------------------
# the Python side: identical token lists, count matrices

class Docs:
    """One data set's documents as exported from SQL, for one input kind."""

    def __init__(self, keys, labels, splits, weights, bags):
        self.keys = keys
        self.labels = labels
        self.splits = splits
        self.weights = np.asarray(weights, dtype=np.float64)
        is_train = np.array([s == "train" for s in splits])
        self.train = np.flatnonzero(is_train)
        self.test = np.flatnonzero(np.array([s == "test" for s in splits]))
        # one entry per (document, distinct token)
        lengths = np.array([len(b) for b in bags], dtype=np.int64)
        tokens = [t for b in bags for t in b]
        counts = np.fromiter((c for b in bags for c in b.values()), dtype=np.float64, count=len(tokens))
        rows = np.repeat(np.arange(len(bags)), lengths)
        codes, uniques = pd.factorize(pd.Series(tokens, dtype=object), sort=False)
        in_train = np.zeros(len(uniques), dtype=bool)
        in_train[codes[is_train[rows]]] = True
        self.vocab = sorted(uniques[in_train])          # the training vocabulary
        self.col = {t: j for j, t in enumerate(self.vocab)}
        col_of_code = np.full(len(uniques), -1, dtype=np.int64)
        col_of_code[in_train] = pd.Index(self.vocab).get_indexer(uniques[in_train])
        cols = col_of_code[codes]
        known = cols >= 0                               # tokens unseen in training are ignored
        X = sp.csr_matrix((counts[known], (rows[known], cols[known])),
                          shape=(len(bags), len(self.vocab)))
        X.sort_indices()
        self.X_train = X[self.train]
        self.X_test = X[self.test]
        self.y_train = np.array([labels[i] for i in self.train], dtype=object)
        self.w_train = self.weights[self.train]
        self.test_keys = [keys[i] for i in self.test]


SEP = "\x01"   # joins exported tokens; the counts exported alongside catch a token containing it


def export_docs(db, ds, inp):
    """The documents' tokens exactly as SQL has them (strings joined by SEP for speed)."""
    if inp == "text[]":
        rows = db.query("""SELECT d.key, d.label, d.split, d.weight,
                                  array_to_string(d.tokens, %s), cardinality(d.tokens), NULL
                           FROM nbc_parity_docs d WHERE d.ds = %s ORDER BY d.key""", (SEP, ds))
    else:
        # nbc counts a lexeme once per position, once if it has none (stripped)
        rows = db.query("""SELECT d.key, d.label, d.split, d.weight, u.lx, length(""" + INPUTS[inp] + """), u.cnt
                           FROM nbc_parity_docs d LEFT JOIN LATERAL (
                               SELECT string_agg(lexeme, %s) AS lx,
                                      string_agg(coalesce(cardinality(positions), 1)::text, ',') AS cnt
                               FROM unnest(""" + INPUTS[inp] + """)) u ON true
                           WHERE d.ds = %s ORDER BY d.key""", (SEP, ds))
    bags = []
    for r in rows:
        toks = r[4].split(SEP) if r[5] else []
        if len(toks) != r[5]:
            raise RuntimeError("%s: %d tokens exported for %d (a token contains \\x01?)" % (r[0], len(toks), r[5]))
        if r[6] is None:
            bags.append(collections.Counter(toks))
        else:
            cnt = [float(c) for c in r[6].split(",")] if r[5] else []
            bag = dict(zip(toks, cnt))
            if len(bag) != len(toks):
                raise RuntimeError("%s: duplicate lexeme in a tsvector" % r[0])
            bags.append(bag)
    return Docs([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                [r[3] for r in rows], bags)


_FORCE_ALPHA = "force_alpha" in inspect.signature(MultinomialNB).parameters


def sk_estimator(kind, alpha, fit_prior, class_prior, norm=False):
    kw = dict(alpha=alpha, fit_prior=fit_prior, class_prior=class_prior)
    if _FORCE_ALPHA:
        kw["force_alpha"] = True
    if kind == "multinomial":
        return MultinomialNB(**kw)
    if kind == "bernoulli":
        return BernoulliNB(binarize=0.0, **kw)   # presence: count > 0
    if kind == "complement":
        return ComplementNB(norm=norm, **kw)
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


def estimator_sets(weighted_or_tsvector):
    """The options of issue #12 that scikit-learn has an estimator for: the
    posterior mode with alpha is Lidstone smoothing with alpha - 1 (computed
    here as Python computes it), Beta(b, b) is alpha b, class_alpha 0 is the
    fitted prior, norm is ComplementNB(norm=True)."""
    out = [("complement norm=true", {"kind": "complement", "norm": True},
            ("complement", 1.0, True, None, True)),
           ("bernoulli estimator=map alpha=2", {"kind": "bernoulli", "estimator": "map", "alpha": 2},
            ("bernoulli", 2.0 - 1, True, None))]
    if weighted_or_tsvector:
        return out
    return out + [
        ("multinomial estimator=map alpha=2", {"estimator": "map", "alpha": 2}, ("multinomial", 2.0 - 1, True, None)),
        ("multinomial estimator=map alpha=1.1", {"estimator": "map", "alpha": 1.1},
         ("multinomial", 1.1 - 1, True, None)),
        ("bernoulli beta=[0.5, 0.5]", {"kind": "bernoulli", "beta": [0.5, 0.5]}, ("bernoulli", 0.5, True, None)),
        ("complement estimator=map alpha=2", {"kind": "complement", "estimator": "map", "alpha": 2},
         ("complement", 2.0 - 1, True, None)),
        ("complement norm=true alpha=0.1", {"kind": "complement", "norm": True, "alpha": 0.1},
         ("complement", 0.1, True, None, True)),
        ("complement norm=true estimator=map alpha=1.5",
         {"kind": "complement", "norm": True, "estimator": "map", "alpha": 1.5},
         ("complement", 1.5 - 1, True, None, True)),
        ("multinomial class_alpha=0", {"class_alpha": 0}, ("multinomial", 1.0, True, None)),
    ]


def option_sets(ds, inp, weighted):
    """(name, options jsonb or None, (kind, alpha, fit_prior, class_prior list[, norm])) per case."""
    cp = DATASETS[ds]["class_prior"]
    cpl = [cp[c] for c in sorted(cp)]
    cpname = json.dumps(cp, sort_keys=True)

    def alpha1(kind):
        return ("%s alpha=1" % kind, {"kind": kind}, (kind, 1.0, True, None))

    def alpha01(kind):
        return ("%s alpha=0.1" % kind, {"kind": kind, "alpha": 0.1}, (kind, 0.1, True, None))

    def nofit(kind):
        return ("%s fit_prior=false" % kind, {"kind": kind, "fit_prior": False}, (kind, 1.0, False, None))

    def given(kind):
        return ("%s class_prior=%s" % (kind, cpname), {"kind": kind, "class_prior": cp}, (kind, 1.0, True, cpl))

    if inp == "text[]" and not weighted:
        out = [("NULL options (defaults)", None, ("multinomial", 1.0, True, None))]
        for kind in KINDS:
            out += [alpha1(kind), alpha01(kind), nofit(kind), given(kind)]
        # several options at once
        out.append(("bernoulli alpha=0.1 fit_prior=false",
                    {"kind": "bernoulli", "alpha": 0.1, "fit_prior": False}, ("bernoulli", 0.1, False, None)))
        return out + estimator_sets(False)
    if (inp == "text[]" and weighted) or (inp == "tsvector" and not weighted):
        out = []
        for kind in KINDS:
            out += [alpha1(kind), alpha01(kind)]
        out += [nofit("multinomial"), nofit("bernoulli"), given("multinomial"), given("bernoulli")]
        return out + estimator_sets(True)
    return [alpha1(kind) for kind in KINDS]


def model_sql(ds, inp, weighted, part="all"):
    return ("(SELECT model FROM nbc_parity_models WHERE ds = %s AND input = %s "
            "AND weighted = %s AND part = %s)"), (ds, inp, weighted, part)


def query_predictions(db, ds, inp, weighted, opts, part="all"):
    """{key: (label, proba dict, log-proba dict)} of nbc for every test document."""
    col = INPUTS[inp]
    msql, margs = model_sql(ds, inp, weighted, part)
    ojson = None if opts is None else json.dumps(opts)
    rows = db.query(
        "SELECT d.key, nb_predict(mm.m, " + col + ", %s::jsonb), "
        "nb_predict_proba(mm.m, " + col + ", %s::jsonb)::text, "
        "nb_predict_log_proba(mm.m, " + col + ", %s::jsonb)::text "
        "FROM nbc_parity_docs d, " + msql + " AS mm(m) "
        "WHERE d.ds = %s AND d.split = 'test'",
        (ojson, ojson, ojson) + margs + (ds,))
    return {r[0]: (r[1], parse_json(r[2]), parse_json(r[3])) for r in rows}


class Predictions:
    """nbc's prediction queries, run in order on a second connection in a
    background thread while this one exports tokens and fits scikit-learn."""

    def __init__(self):
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.db = None
        self.futures = {}

    def _run(self, key):
        if self.db is None:
            self.db = DB()
        t0 = time.time()
        got = query_predictions(self.db, *key)
        return got, time.time() - t0

    def submit(self, ds, inp, weighted, opts, part="all"):
        key = (ds, inp, weighted, opts, part)
        fkey = (ds, inp, weighted, json.dumps(opts, sort_keys=True), part)
        if fkey not in self.futures:
            self.futures[fkey] = self.pool.submit(self._run, key)

    def get(self, ds, inp, weighted, opts, part="all"):
        """(predictions, seconds); raises the query's error."""
        self.submit(ds, inp, weighted, opts, part)
        return self.futures[(ds, inp, weighted, json.dumps(opts, sort_keys=True), part)].result()

    def close(self):
        for f in self.futures.values():
            f.cancel()
        self.pool.shutdown(wait=True)


def reference_log_proba(est, kind, X):
    """Log posteriors of scikit-learn's fitted model, summed in extended precision.

    Uses the estimator's own fitted parameters (feature_log_prob_,
    class_log_prior_) and the formula of its _joint_log_likelihood, but adds
    the terms in long double (64-bit mantissa) instead of a float64 sparse
    dot product.  On long documents (log-posteriors around -1e4) sklearn's own
    float64 rounding reaches a few 1e-9, the size of the tolerance; the
    reference is good to ~1e-12 there.
    """
    LD = np.longdouble
    flp64 = est.feature_log_prob_
    flp = flp64.astype(LD)
    clp = est.class_log_prior_.astype(LD)
    C = flp.shape[0]
    X = sp.csr_matrix(X)
    X.sort_indices()
    n = X.shape[0]
    lengths = np.diff(X.indptr)
    nonempty = lengths > 0
    starts = X.indptr[:-1][nonempty]
    jll = np.zeros((n, C), dtype=LD)
    if kind == "bernoulli":
        neg = np.log(1 - np.exp(flp64)).astype(LD)   # as BernoulliNB computes it
        present = (X.data > 0).astype(LD)
    for c in range(C):
        if kind == "bernoulli":
            terms = present * (flp[c, X.indices] - neg[c, X.indices])
            const = clp[c] + np.sum(neg[c])
        else:
            terms = X.data.astype(LD) * flp[c, X.indices]
            # ComplementNB adds the prior only when there is a single class
            const = clp[c] if (kind == "multinomial" or C == 1) else LD(0)
        sums = np.zeros(n, dtype=LD)
        if terms.size:
            sums[nonempty] = np.add.reduceat(terms, starts)
        jll[:, c] = sums + const
    m = jll.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(jll - m).sum(axis=1, keepdims=True))
    return (jll - lse).astype(np.float64)


def sklearn_side(docs, weighted, skargs, cache):
    ck = (weighted,) + tuple(skargs[:3]) + (tuple(skargs[3] or ()),) + tuple(skargs[4:])
    if ck not in cache:
        est = sk_estimator(*skargs)
        est.fit(docs.X_train, docs.y_train, sample_weight=docs.w_train if weighted else None)
        ref = reference_log_proba(est, skargs[0], docs.X_test)
        cache[ck] = dict(classes=list(est.classes_), P=est.predict_proba(docs.X_test),
                         LP=est.predict_log_proba(docs.X_test), pred=est.predict(docs.X_test),
                         ref_lp=ref, ref_p=np.exp(ref))
    return cache[ck]


def run_case(preds, docs, ds, inp, weighted, name, opts, skargs, cache, keep):
    desc = "%s %s%s %s" % (ds, inp, " weighted" if weighted else "", name)
    try:
        got, t_sql = preds.get(ds, inp, weighted, opts)
    except psycopg2.Error as e:
        R.check(False, desc + ": query", str(e).strip().splitlines()[0])
        return
    keep[json.dumps(opts, sort_keys=True)] = got
    sk = sklearn_side(docs, weighted, skargs, cache)
    classes = sk["classes"]

    if sorted(got) != sorted(docs.test_keys):
        R.check(False, desc + ": test documents", "nbc returned %d rows for %d test documents"
                % (len(got), len(docs.test_keys)))
        return
    worst_p = [0.0, None]
    worst_lp = [0.0, None]
    sk_p = sk_lp = 0.0           # sklearn's own outputs vs the exactly summed reference
    bad_shape, nonfinite, pred_mismatch = [], [], []
    for i, key in enumerate(docs.test_keys):
        pred, p, lp = got[key]
        if not isinstance(p, dict) or sorted(p) != classes or not isinstance(lp, dict) or sorted(lp) != classes:
            bad_shape.append((key, p, lp))
            continue
        for c, cls in enumerate(classes):
            a, b = as_float(p[cls]), sk["ref_p"][i, c]
            e = abs(a - b)
            if not e <= worst_p[0]:   # also NaN
                worst_p = [e if e == e else float("inf"), (key, cls, p[cls], b, sk["P"][i, c])]
            sk_p = max(sk_p, abs(sk["P"][i, c] - b))
            a, b = as_float(lp[cls]), sk["ref_lp"][i, c]
            if math.isfinite(a) and math.isfinite(b):
                e = abs(a - b)
                if not e <= worst_lp[0]:
                    worst_lp = [e, (key, cls, lp[cls], b, sk["LP"][i, c])]
            elif not a == b:
                nonfinite.append((key, cls, lp[cls], b))
            if math.isfinite(sk["LP"][i, c]) and math.isfinite(b):
                sk_lp = max(sk_lp, abs(sk["LP"][i, c] - b))
        if pred != sk["pred"][i]:
            gap = sk["ref_lp"][i].max() - sorted(sk["ref_lp"][i])[-2] if len(classes) > 1 else 0.0
            pred_mismatch.append((key, pred, sk["pred"][i], gap, lp))

    if bad_shape:
        R.check(False, desc + ": result shape", "%d documents, e.g. %s: %r / %r"
                % ((len(bad_shape),) + bad_shape[0]))
        return
    where = " at doc %s class %s: nbc %r, reference %r (sklearn's own %r)"
    e, w = worst_p
    R.check(e <= TOL, desc + ": nb_predict_proba",
            "max abs err %s%s; sklearn.predict_proba vs reference %s"
            % (fmt(e), "" if w is None or e <= TOL else where % w, fmt(sk_p)))
    e, w = worst_lp
    detail = "max abs err %s%s; sklearn.predict_log_proba vs reference %s" % (
        fmt(e), "" if w is None or e <= TOL else where % w, fmt(sk_lp))
    if nonfinite:
        detail += "; %d non-finite mismatches, e.g. doc %s class %s: nbc %r reference %r" % (
            (len(nonfinite),) + nonfinite[0])
    R.check(e <= TOL and not nonfinite, desc + ": nb_predict_log_proba", detail)
    if sk_lp > 1e-6 or sk_p > 1e-6:
        # the reference must be sklearn's model: anything beyond rounding is a bug of this script
        R.check(False, desc + ": harness reference", "exactly summed reference differs from sklearn "
                "by %s (log-proba) / %s (proba)" % (fmt(sk_lp), fmt(sk_p)))
    if pred_mismatch:
        k, a, b, gap, nl = pred_mismatch[0]
        R.check(False, desc + ": nb_predict",
                "%d of %d differ, e.g. doc %s: nbc %r sklearn %r (reference log-posterior gap %r; nbc log-proba %r)"
                % (len(pred_mismatch), len(got), k, a, b, gap, nl))
    else:
        R.check(True, desc + ": nb_predict", "%d docs, sql %.1fs" % (len(got), t_sql))


def check_no_known_tokens(db, docs, ds, cache):
    """Documents without a known token: exact ties between classes.

    With a uniform prior a multinomial model scores every class the same, and
    the complement model always does: scikit-learn then predicts the first
    class in sorted order, nbc the smallest label in byte order (the same for
    these ASCII labels)."""
    unseen = "zz" * 20 + "unseen"
    assert unseen not in docs.col
    tests = [("empty text[]", "'{}'::text[]"), ("only unseen tokens", "ARRAY[%s, %s]")]
    cases = [("multinomial fit_prior=false", {"kind": "multinomial", "fit_prior": False},
              ("multinomial", 1.0, False, None)),
             ("complement alpha=1", {"kind": "complement"}, ("complement", 1.0, True, None)),
             ("multinomial alpha=1", {"kind": "multinomial"}, ("multinomial", 1.0, True, None)),
             ("bernoulli fit_prior=false", {"kind": "bernoulli", "fit_prior": False},
              ("bernoulli", 1.0, False, None))]
    msql, margs = model_sql(ds, "text[]", False)
    for tname, texpr in tests:
        targs = (unseen, unseen) if "%s" in texpr else ()
        for cname, opts, skargs in cases:
            desc = "%s text[] %s, %s: ties and no-evidence posterior" % (ds, tname, cname)
            o = json.dumps(opts)
            try:
                pred, p = db.query("SELECT nb_predict(mm.m, " + texpr + ", %s::jsonb), "
                                   "nb_predict_proba(mm.m, " + texpr + ", %s::jsonb)::text FROM "
                                   + msql + " AS mm(m)", targs + (o,) + targs + (o,) + margs)[0]
            except psycopg2.Error as e:
                R.check(False, desc, str(e).strip().splitlines()[0])
                continue
            p = parse_json(p)
            est = sk_estimator(*skargs).fit(docs.X_train, docs.y_train)
            zero = sp.csr_matrix((1, len(docs.vocab)))
            ref = np.exp(reference_log_proba(est, skargs[0], zero))[0]
            skpred = est.predict(zero)[0]
            err = max(abs(as_float(p[c]) - ref[k]) for k, c in enumerate(est.classes_)) \
                if isinstance(p, dict) and sorted(p) == list(est.classes_) else float("inf")
            R.check(pred == skpred and err <= TOL, desc, "nbc %r %r, sklearn %r %s, max abs err %s" % (
                pred, p, skpred, dict(zip(est.classes_, ref.tolist())), fmt(err)))


def check_model_counts(db, docs, ds, inp, weighted):
    """nb_model_to_jsonb of the trained model against the counts of the exported tokens."""
    desc = "%s %s%s model counts" % (ds, inp, " weighted" if weighted else "")
    msql, margs = model_sql(ds, inp, weighted)
    try:
        m = parse_json(db.query("SELECT nb_model_to_jsonb(" + msql + ")::text", margs)[0][0])
    except psycopg2.Error as e:
        R.check(False, desc, str(e).strip().splitlines()[0])
        return
    classes = sorted(set(docs.y_train))
    w = docs.w_train if weighted else np.ones(len(docs.y_train))
    Xw = sp.diags(w) @ docs.X_train
    Xb = sp.diags(w) @ (docs.X_train > 0).astype(np.float64)
    err, worst = 0.0, None

    def cmp(what, a, b):
        nonlocal err, worst
        e = abs(a - b)
        if not e <= err:
            err, worst = e, (what, a, b)

    if sorted(m.get("classes", {})) != classes or sorted(m.get("tokens", {})) != docs.vocab:
        R.check(False, desc, "classes %r (expected %r), %d tokens (expected %d)" % (
            sorted(m.get("classes", {})), classes, len(m.get("tokens", {})), len(docs.vocab)))
        return
    for c, cls in enumerate(classes):
        rows = np.flatnonzero(docs.y_train == cls)
        cmp("%s documents" % cls, m["classes"][cls]["documents"], float(w[rows].sum()))
        cmp("%s tokens" % cls, m["classes"][cls]["tokens"], float(Xw[rows].sum()))
        F = np.asarray(Xw[rows].sum(axis=0)).ravel()
        D = np.asarray(Xb[rows].sum(axis=0)).ravel()
        for j, t in enumerate(docs.vocab):
            e = m["tokens"][t].get(cls)
            cmp("%r in %s count" % (t, cls), e["count"] if e else 0.0, F[j])
            cmp("%r in %s documents" % (t, cls), e["documents"] if e else 0.0, D[j])
    R.check(err <= TOL, desc, "max abs err %s over %d tokens x %d classes%s" % (
        fmt(err), len(docs.vocab), len(classes), "" if err <= TOL else ", worst %s: nbc %r python %r" % worst))


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


PRUNE_OPTIONS = [{"top_k": 1000}, {"min_documents": 5, "max_document_fraction": 0.3},
                 {"top_k": 200, "min_documents": 3}]


def check_prune(db, docs, ds, inp, weighted):
    """nb_prune: the kept tokens are the ones the options select, computed here from the
    training columns (document frequencies; top_k: the k highest Murphy eq. 3.76
    values), and the pruned model's probabilities equal scikit-learn fitted on
    CountVectorizer columns restricted to the kept tokens."""
    msql, margs = model_sql(ds, inp, weighted)
    classes, Nc, njc = presence_stats(docs, weighted)
    df = njc.sum(axis=0)
    D = Nc.sum()
    mi = murphy_mi(Nc, njc)
    for n, opts in enumerate(PRUNE_OPTIONS):
        desc = "%s %s%s nb_prune %s" % (ds, inp, " weighted" if weighted else "", json.dumps(opts))
        part = "prune%d" % n
        try:
            db.execute("DELETE FROM nbc_parity_models WHERE ds = %s AND input = %s AND weighted = %s "
                       "AND part = %s", (ds, inp, weighted, part))
            db.execute("INSERT INTO nbc_parity_models SELECT %s, %s, %s, %s, nb_prune(" + msql +
                       ", %s::jsonb)", (ds, inp, weighted, part) + margs + (json.dumps(opts),))
            kept = [r[0] for r in db.query("SELECT feature FROM nb_mutual_info(" + msql + ")",
                                           model_sql(ds, inp, weighted, part)[1])]
        except psycopg2.Error as e:
            R.check(False, desc + ": query", str(e).strip().splitlines()[0])
            continue
        ok = np.ones(len(docs.vocab), dtype=bool)
        if "min_documents" in opts:
            ok &= df >= opts["min_documents"]
        if "max_document_fraction" in opts:
            ok &= df <= opts["max_document_fraction"] * D
        cols = np.array(sorted(docs.col[t] for t in kept if t in docs.col), dtype=np.int64)
        if "top_k" in opts:
            k = min(opts["top_k"], int(ok.sum()))
            got_mi = mi[cols] if len(cols) else np.zeros(0)
            dropped = np.setdiff1d(np.flatnonzero(ok), cols)
            sel_ok = (len(cols) == k and bool(ok[cols].all()) and
                      (len(dropped) == 0 or got_mi.min() >= mi[dropped].max() - 1e-12))
            R.check(sel_ok, desc + ": kept the %d tokens of highest mutual information" % k,
                    "%d kept, %d in the document filters, lowest kept %s, highest dropped %s" % (
                        len(cols), int(ok[cols].sum()) if len(cols) else 0,
                        fmt(got_mi.min()) if len(cols) else "-",
                        fmt(mi[dropped].max()) if len(dropped) else "-"))
        else:
            want = set(np.array(docs.vocab, dtype=object)[ok])
            R.check(set(kept) == want, desc + ": kept the tokens within the document frequencies",
                    "%d kept, %d expected; %d missing, %d extra" % (
                        len(kept), len(want), len(want - set(kept)), len(set(kept) - want)))
        for kind in KINDS:
            est = sk_estimator(kind, 1.0, True, None)
            Xtr = docs.X_train[:, cols]
            est.fit(Xtr, docs.y_train, sample_weight=docs.w_train if weighted else None)
            ref = np.exp(reference_log_proba(est, kind, docs.X_test[:, cols]))
            try:
                got = query_predictions(db, ds, inp, weighted, {"kind": kind}, part)
            except psycopg2.Error as e:
                R.check(False, desc + " %s: predictions" % kind, str(e).strip().splitlines()[0])
                continue
            err = 0.0
            for i, key in enumerate(docs.test_keys):
                p = got[key][1]
                err = max(err, max(abs(p[c] - ref[i, j]) for j, c in enumerate(est.classes_)))
            R.check(err <= TOL, desc + " %s: probabilities vs scikit-learn on the kept columns" % kind,
                    "%d tokens kept of %d, %d test documents, max abs err %s" % (
                        len(cols), len(docs.vocab), len(docs.test_keys), fmt(err)))


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


def check_predict_top(db, ds, inp, weighted):
    """nb_predict_top with every class, on every test document: its first label
    is nb_predict's, each probability exactly nb_predict_proba's (both checked
    against scikit-learn above), most probable first, ties in byte order."""
    col = INPUTS[inp]
    msql, margs = model_sql(ds, inp, weighted)
    for opts in (None, {"kind": "bernoulli"}, {"alpha": 0.1, "fit_prior": False}):
        desc = "%s %s%s nb_predict_top %s" % (ds, inp, " weighted" if weighted else "",
                                             json.dumps(opts) if opts else "defaults")
        ojson = None if opts is None else json.dumps(opts)
        try:
            docs, rows, first_differs, p_differs, out_of_order = db.query(
                "SELECT count(DISTINCT key), count(*), count(*) FILTER (WHERE n = 1 AND label <> predicted), "
                "count(*) FILTER (WHERE probability IS DISTINCT FROM (proba ->> label)::float8), "
                "count(*) FILTER (WHERE prev_p < probability OR (prev_p = probability AND prev_label COLLATE \"C\" > label)) "
                "FROM (SELECT d.key, t.n, t.label, t.probability, nb_predict(mm.m, " + col + ", %s::jsonb) AS predicted, "
                "             nb_predict_proba(mm.m, " + col + ", %s::jsonb) AS proba, "
                "             lag(t.probability) OVER w AS prev_p, lag(t.label) OVER w AS prev_label "
                "      FROM nbc_parity_docs d, " + msql + " AS mm(m), "
                "           nb_predict_top(mm.m, " + col + ", NULL, %s::jsonb) WITH ORDINALITY AS t(label, probability, n) "
                "      WHERE d.ds = %s AND d.split = 'test' WINDOW w AS (PARTITION BY d.key ORDER BY t.n)) s",
                (ojson, ojson) + margs + (ojson, ds))[0]
        except psycopg2.Error as e:
            R.check(False, desc, str(e).strip().splitlines()[0])
            continue
        R.check(docs > 0 and first_differs == 0 and p_differs == 0 and out_of_order == 0, desc,
                "%d documents, %d rows: %d first labels not nb_predict's, %d probabilities not "
                "nb_predict_proba's, %d out of order" % (docs, rows, first_differs, p_differs, out_of_order))


def merge_variants():
    return [("nb_merge(a, b)", "merge2", KINDS), ("aggregate nb_merge(model)", "mergeagg", ("multinomial",))]


def check_merge(db, preds, ds, inp, weighted, keep):
    """Models of two disjoint halves of the training rows, merged, against the whole."""
    desc = "%s %s%s" % (ds, inp, " weighted" if weighted else "")
    whole, wargs = model_sql(ds, inp, weighted, "all")
    for name, part, kinds in merge_variants():
        other, oargs = model_sql(ds, inp, weighted, part)
        try:
            same, cw, co = db.query(
                "SELECT nb_model_to_jsonb(" + whole + ") = nb_model_to_jsonb(" + other + "), "
                "(SELECT array_agg(c ORDER BY c.label) FROM nb_classes(" + whole + ") c)::text, "
                "(SELECT array_agg(c ORDER BY c.label) FROM nb_classes(" + other + ") c)::text",
                wargs + oargs + wargs + oargs)[0]
        except psycopg2.Error as e:
            R.check(False, "%s %s: query" % (desc, name), str(e).strip().splitlines()[0])
            continue
        # counts are integers or sums of multiples of 1/4: exact in any order
        R.check(bool(same), "%s %s of the two halves: same counts as the whole (nb_model_to_jsonb)"
                % (desc, name), "" if same else "models differ")
        R.check(cw == co, "%s %s: nb_classes as the whole" % (desc, name),
                cw if cw == co else "whole %s merged %s" % (cw, co))
        for kind in kinds:
            opts = {"kind": kind}
            base = keep.get(json.dumps(opts, sort_keys=True))
            d = "%s %s: predicts as the whole, %s" % (desc, name, kind)
            if base is None:
                R.check(False, d, "no predictions of the whole model to compare with")
                continue
            try:
                got, _ = preds.get(ds, inp, weighted, opts, part)
            except psycopg2.Error as e:
                R.check(False, d, str(e).strip().splitlines()[0])
                continue
            err, worst, nlabel = 0.0, None, 0
            for key, (pred, p, lp) in base.items():
                g = got.get(key)
                if g is None or not isinstance(g[1], dict) or sorted(g[1]) != sorted(p):
                    err, worst = float("inf"), (key, "-", g, (pred, p, lp))
                    continue
                nlabel += g[0] != pred
                for cls in p:
                    for a, b in ((as_float(p[cls]), as_float(g[1][cls])),
                                 (as_float(lp[cls]), as_float(g[2][cls]))):
                        if math.isfinite(a) or math.isfinite(b):
                            e = abs(a - b)
                            if not e <= err:
                                err, worst = (e if e == e else float("inf")), (key, cls, a, b)
            R.check(err <= MERGE_TOL and nlabel == 0 and len(got) == len(base), d,
                    "max abs err %s (proba and log-proba), %d labels differ over %d docs%s" % (
                        fmt(err), nlabel, len(base),
                        "" if err <= MERGE_TOL else "; worst doc %s class %s: whole %r merged %r" % worst))


def fitted(docs, weighted, kind, alpha, fit_prior=True, class_prior=None, norm=False):
    est = sk_estimator(kind, alpha, fit_prior, class_prior, norm)
    est.fit(docs.X_train, docs.y_train, sample_weight=docs.w_train if weighted else None)
    return est


def check_feature_log_prob(db, docs, ds, inp, weighted):
    """nb_feature_log_prob: every (token, class) against feature_log_prob_."""
    msql, margs = model_sql(ds, inp, weighted)
    for kind, norm in [(k, False) for k in KINDS] + [("complement", True)]:
        for alpha in (1.0, 0.1):
            opts = {"kind": kind, "alpha": alpha}
            if norm:
                opts["norm"] = True
            desc = "%s %s%s nb_feature_log_prob %s%s alpha=%g vs feature_log_prob_" % (
                ds, inp, " weighted" if weighted else "", kind, " norm=true" if norm else "", alpha)
            try:
                rows = db.query("SELECT f.feature, f.value, f.label, f.log_prob FROM nb_feature_log_prob("
                                + msql + ", %s::jsonb) f", margs + (json.dumps(opts),))
            except psycopg2.Error as e:
                R.check(False, desc, str(e).strip().splitlines()[0])
                continue
            est = fitted(docs, weighted, kind, alpha, norm=norm)
            ci = {c: k for k, c in enumerate(est.classes_)}
            flp = est.feature_log_prob_
            harness = ""
            if kind == "complement":
                # ComplementNB computes (F_j + alpha) - N_jc, which for a token of one class
                # with a large count F_j = N_jc rounds alpha (0.1 + 12345 - 12345 is
                # 0.10000000000036): its feature_log_prob_ is off by up to ~4e-12 there.  The
                # reference is its own fitted counts with the difference taken first.
                comp = (est.feature_all_.astype(np.longdouble) - est.feature_count_) + alpha
                exact = -np.log(comp / comp.sum(axis=1, keepdims=True))
                if norm:
                    exact = exact / exact.sum(axis=1, keepdims=True)
                off = float(np.max(np.abs(exact - flp)))
                harness = "; feature_log_prob_ itself differs by %s" % fmt(off)
                if off > 1e-9:
                    R.check(False, desc + ": harness reference", "exact complement weights differ from "
                            "feature_log_prob_ by %s" % fmt(off))
                flp = exact.astype(np.float64)
            err, worst, bad = 0.0, None, 0
            seen = set()
            for feature, value, label, lp in rows:
                j = docs.col.get(value)
                if feature != "" or j is None or label not in ci:
                    bad += 1
                    continue
                seen.add((j, label))
                # normalized weights are about 1/V: compared relatively
                e = abs(lp - flp[ci[label], j]) / (abs(flp[ci[label], j]) if norm else 1.0)
                if not e <= err:
                    err, worst = e, (value, label, lp, flp[ci[label], j])
            complete = len(seen) == len(rows) == flp.size
            R.check(err <= FLP_TOL and bad == 0 and complete, desc,
                    "%d rows for %d tokens x %d classes, %d not in the vocabulary; max %s err %s%s%s" % (
                        len(rows), len(docs.vocab), len(ci), bad, "relative" if norm else "abs", fmt(err),
                        "" if err <= FLP_TOL else ", worst %r %s: nbc %r sklearn %r" % worst, harness))


def log_odds(lp, pred):
    """log p(pred) - log p(runner-up) from nbc's log posteriors (null: probability 0)."""
    others = sorted(((as_float(v), k.encode("utf-8")) for k, v in lp.items() if k != pred),
                    key=lambda t: (-t[0], t[1]))
    if not others:
        return None, None
    return as_float(lp[pred]) - others[0][0], others[0][1].decode("utf-8")


def check_explain(db, docs, ds, inp, weighted):
    """nb_explain on every test document: the sum identity; every row of some documents by hand."""
    msql, margs = model_sql(ds, inp, weighted)
    col = INPUTS[inp]
    sample = set(docs.test_keys[::max(1, len(docs.test_keys) // EXPLAIN_DOCS)][:EXPLAIN_DOCS])
    row_of = {k: docs.test[n] for n, k in enumerate(docs.test_keys)}
    X = sp.csr_matrix(docs.X_test)
    test_pos = {k: n for n, k in enumerate(docs.test_keys)}
    for kind, alpha, fit_prior, norm in (("multinomial", 1.0, True, False), ("bernoulli", 1.0, True, False),
                                         ("complement", 1.0, True, False), ("multinomial", 0.1, False, False),
                                         ("bernoulli", 0.1, False, False), ("complement", 1.0, True, True)):
        opts = {"kind": kind, "alpha": alpha, "fit_prior": fit_prior}
        if norm:
            opts["norm"] = True
        o = json.dumps(opts)
        desc = "%s %s%s nb_explain %s%s alpha=%g%s" % (ds, inp, " weighted" if weighted else "", kind,
                                                       " norm=true" if norm else "", alpha,
                                                       "" if fit_prior else " fit_prior=false")
        try:
            got = db.query(
                "SELECT d.key, nb_predict(mm.m, " + col + ", %s::jsonb), "
                "nb_predict_log_proba(mm.m, " + col + ", %s::jsonb)::text, "
                "(SELECT sum(e.contribution) FROM nb_explain(mm.m, " + col + ", %s::jsonb) e), "
                "CASE WHEN d.key = ANY (%s) THEN (SELECT json_agg(json_build_array(e.feature, e.value, "
                "e.contribution::text))::text FROM nb_explain(mm.m, " + col + ", %s::jsonb) e) END "
                "FROM nbc_parity_docs d, " + msql + " AS mm(m) WHERE d.ds = %s AND d.split = 'test'",
                (o, o, o, sorted(sample), o) + margs + (ds,))
        except psycopg2.Error as e:
            R.check(False, desc + ": query", str(e).strip().splitlines()[0])
            continue
        err, worst = 0.0, None
        for key, pred, lp, total, _ in got:
            odds, _other = log_odds(parse_json(lp), pred)
            e = 0.0 if total == odds else abs(total - odds) / max(1.0, abs(odds))
            if not e <= err:
                err, worst = (e if e == e else float("inf")), (key, total, odds)
        R.check(err <= TOL and len(got) == len(docs.test_keys),
                desc + ": contributions sum to the log odds",
                "%d documents, max error %s (relative where the log odds exceed 1)%s" % (
                    len(got), fmt(err), "" if err <= TOL else ", worst doc %s: sum %r log odds %r" % worst))

        est = fitted(docs, weighted, kind, alpha, fit_prior, norm=norm)
        ci = {c: k for k, c in enumerate(est.classes_)}
        flp = est.feature_log_prob_
        neg = np.log(1 - np.exp(flp)) if kind == "bernoulli" else None
        err, worst, nrows, bad = 0.0, None, 0, []
        for key, pred, lp, total, rows in got:
            if rows is None:
                continue
            _odds, other = log_odds(parse_json(lp), pred)
            c1, c2 = ci[pred], ci[other]
            x = X[test_pos[key]]
            present = dict(zip((docs.vocab[j] for j in x.indices), x.data))
            want = {}
            prior = 0.0 if kind == "complement" else est.class_log_prior_[c1] - est.class_log_prior_[c2]
            for t, cnt in present.items():
                j = docs.col[t]
                mult = 1.0 if kind == "bernoulli" else cnt
                want[(t, "%g" % cnt)] = mult * (flp[c1, j] - flp[c2, j])
            if kind == "bernoulli":
                absent = np.ones(len(docs.vocab), dtype=bool)
                absent[x.indices] = False
                want[("", "%g" % absent.sum())] = float(np.sum(neg[c1, absent] - neg[c2, absent]))
            seen = 0
            for feature, value, contribution in parse_json(rows):
                nrows += 1
                c = float(contribution)
                if feature is None:
                    ref = prior
                else:
                    k = (feature, None if value is None else "%g" % float(value))
                    if k not in want:
                        bad.append((key, feature, value))
                        continue
                    ref = want[k]
                    seen += 1
                e = abs(c - ref)
                if not e <= err:
                    err, worst = e, (key, feature, value, c, ref)
            if seen != len(want):
                bad.append((key, "%d rows for %d expected" % (seen, len(want))))
        R.check(err <= TOL and not bad and nrows > 0,
                desc + ": every row of %d documents vs scikit-learn's parameters" % len(sample),
                "%d rows, max abs err %s%s%s" % (
                    nrows, fmt(err), "" if err <= TOL else ", worst doc %s %r=%r: nbc %r sklearn %r" % worst,
                    "" if not bad else "; unexpected rows, e.g. %r" % (bad[0],)))


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[],
                    help="run only the data sets / inputs whose 'dataset input' contains this (repeatable)")
    ap.add_argument("--no-prepare", action="store_true",
                    help="reuse nbc_parity_docs / nbc_parity_models from an earlier run (implies --keep)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the tables nbc_parity_docs and nbc_parity_models afterwards")
    args = ap.parse_args()

    t_start = time.time()
    db = DB()
    if not args.no_prepare:
        t0 = time.time()
        try:
            prepare_sql(db)
        except psycopg2.Error as e:
            R.check(False, "build token table and models in SQL", str(e).strip().splitlines()[0])
            print("%d passed, %d failed" % (R.passed, R.failed))
            return 1
        R.note("tokens and models built in SQL in %.1fs" % (time.time() - t0))

    def selected(ds, inp):
        return not args.only or any(o in "%s %s" % (ds, inp) for o in args.only)

    # queue every nbc prediction query now, in the order the checks consume them
    preds = Predictions()
    for ds in DATASETS:
        for inp, weighted in COMBOS:
            if not selected(ds, inp):
                continue
            for name, opts, skargs in option_sets(ds, inp, weighted):
                preds.submit(ds, inp, weighted, opts)
            if (inp, weighted) in MERGE_COMBOS:
                for name, part, kinds in merge_variants():
                    for kind in kinds:
                        preds.submit(ds, inp, weighted, {"kind": kind}, part)

    try:
        run_checks(db, preds, selected)
    finally:
        preds.close()
    if not (args.keep or args.no_prepare):
        db.execute("DROP TABLE IF EXISTS nbc_parity_models, nbc_parity_docs")
    R.note("total %.1fs" % (time.time() - t_start))
    if R.failures:
        R.note("failed: " + "; ".join(R.failures))
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


def run_checks(db, preds, selected):
    for ds in DATASETS:
        for inp in INPUTS:
            if not selected(ds, inp):
                continue
            t0 = time.time()
            docs = export_docs(db, ds, inp)
            R.note("%s %s: %d train / %d test documents, vocabulary %d, exported in %.1fs" % (
                ds, inp, len(docs.train), len(docs.test), len(docs.vocab), time.time() - t0))
            cache = {}
            for weighted in (False, True):
                if (inp, weighted) not in COMBOS:
                    continue
                check_model_counts(db, docs, ds, inp, weighted)
                check_classes(db, docs, ds, inp, weighted)
                check_predict_top(db, ds, inp, weighted)
                keep = {}
                for name, opts, skargs in option_sets(ds, inp, weighted):
                    run_case(preds, docs, ds, inp, weighted, name, opts, skargs, cache, keep)
                if inp != "strip(tsvector)":
                    check_mutual_info(db, docs, ds, inp, weighted)
                if inp == "text[]":
                    check_prune(db, docs, ds, inp, weighted)
                if (inp, weighted) in MERGE_COMBOS:
                    check_merge(db, preds, ds, inp, weighted, keep)
                if (inp, weighted) in EXPLAIN_COMBOS:
                    check_feature_log_prob(db, docs, ds, inp, weighted)
                    check_explain(db, docs, ds, inp, weighted)
            if inp == "text[]":
                check_no_known_tokens(db, docs, ds, cache)


if __name__ == "__main__":
    sys.exit(main())
