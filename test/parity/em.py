#!/usr/bin/python3
"""Parity of nb_train_em_trace against an independent numpy implementation of
EM (Nigam, McCallum, Thrun & Mitchell 2000).

Run by test/parity/run.sh (suite "em"), which loads the data first: tables
spamassassin and reuters_grain (test/data/load_spamassassin.py,
load_reuters.py).

Rows: each corpus's training split, tokens by nb_tokens(body) (exported as
they are: the tokens are the input here, not what is checked); a row keeps
its label when hashtext of its key is below 5% of its range (the others are
unlabelled, NULL), and the test split is scored too.  For each option set
below, nb_train_em_trace runs a fixed number of iterations (tolerance 0),
and this file computes the same iterations from the formulas alone, with
scipy.sparse count matrices:

  iteration 0   theta from the labelled rows: theta_ct = (N_ct + a) /
                (N_c + a V), V the labelled rows' vocabulary, pi_c = (D_c +
                b) / (D + C b) (b the class_alpha pseudo-count, 0 unless
                given); tokens outside the vocabulary are ignored;
  E-step        log p(x, c) = log pi_c + sum_t x_t log theta_ct, the
                posterior its softmax;
  log likelihood  sum_labelled log p(x, y) + lambda sum_unlabelled
                logsumexp_c log p(x, c) + a sum_{c,t} log theta_ct +
                b sum_c log pi_c;
  M-step        weights: labelled rows 1 in their class, unlabelled lambda
                p(c | x) in every class; N_ct and D_c their weighted sums;
                the vocabulary every token of a row with positive weight.

EM-CM (option components k > 1, em_cm): classes are mixtures of k
components.  Iteration 0 is the labelled rows' model as above; the next
model is its start: the i-th labelled training row of a class (from 0, in
id order, the order nbc reads the rows) counted in that class's component
i mod k, the unlabelled rows left out; from then on the E-step is over
components, a class's posterior the sum of its components', a labelled
row's weights its class's components' posteriors divided by their sum, an
unlabelled row's lambda times every component's posterior; pi per
component; log p(x, y) the logsumexp over y's components.

Bernoulli (kind "bernoulli", beta [b1, b0]): t_ct = (d_ct + b1) / (D_c + b1
+ b0) with d_ct the weighted rows of class c that have token t; log p(x, c)
= log pi_c + sum over the vocabulary of log t_ct or log(1 - t_ct) as the
row has t or not; the prior's terms b1 log t_ct + b0 log(1 - t_ct).

The reference sums in long double (80-bit on x86-64) from logarithms taken in
long double: over rows of thousands of tokens (and for Bernoulli the whole
vocabulary), float64 parameters alone would be off by more than the
tolerance, each token's rounding multiplied by its count.

Checks per option set and iteration: nb_predict_proba of that iteration's
model on every row (training and test) equals the numpy posterior within
1e-9, and the log likelihood within 1e-9 relative.  Also that it never
decreases from iteration 1 on.

The lambda grid (nb_cross_validate_em, #43): on the same rows with fold =
id % 3 as the fold column (the unlabelled rows in every fold's EM), for
each option set of CV_OPTION_SETS and lambda of CV_LAMBDAS, the EM above run
on the training rows outside each fold (the fold's labelled rows left out
entirely), the fold's labelled rows scored with its last model, and their
accuracy, macro F1 and log loss by scikit-learn's metrics; the means and
population deviations over the folds, the mean gain in log loss over lambda
0 and its standard error (sample deviation / sqrt(folds)) must equal nbc's
within 1e-9, and the chosen lambda the rule's (the lowest log loss, unless
its gain is not above its standard error: 0).

Prints one TAP-style line per check and closes with "N passed, N failed".
"""

import json
import sys

from report import Report, fmt

try:
    import numpy as np
    import psycopg2  # noqa: F401 (db needs it)
    import scipy.sparse as sp
    from sklearn.metrics import f1_score, log_loss
except ImportError as e:
    print("not ok - em prerequisites: %s (Debian: python3-numpy python3-scipy python3-sklearn python3-psycopg2; "
          "run with /usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

from db import DB  # noqa: E402

TOL = 1e-9
ITERATIONS = 4
OPTION_SETS = [
    {"lambda": 1},
    {"lambda": 0.3, "alpha": 0.2, "class_alpha": 2},
    {"kind": "bernoulli", "lambda": 0.5, "beta": [0.5, 2]},
    {"lambda": 1, "components": 2},
    {"lambda": 0.3, "alpha": 0.5, "components": 3},
]
CV_FOLDS = 3
CV_LAMBDAS = [0, 0.03, 0.3, 1]
CV_OPTION_SETS = [{}, {"kind": "bernoulli", "alpha": 0.5}]
CORPORA = [
    ("spamassassin", "SELECT msg_id AS k, label, body, split FROM spamassassin"),
    ("reuters_grain", "SELECT id::text AS k, label, body, split FROM reuters_grain"),
]
SEP = "\x01"
R = Report()


def load(db, source, select):
    """Table em_parity_<source>: label (NULL when unlabelled), truth, tokens, split, row number."""
    rel = "em_parity_" + source
    db.execute("DROP TABLE IF EXISTS " + rel)
    db.execute("CREATE TABLE " + rel + " AS SELECT row_number() OVER (ORDER BY k) AS id, "
               "CASE WHEN split = 'train' AND (hashtext(k) & 1023) < 51 THEN label END AS label, "
               "label AS truth, split, nb_tokens(body) AS tokens FROM (" + select + ") s")
    rows = db.query("SELECT id, label, split, array_to_string(tokens, %s), cardinality(tokens) "
                    "FROM " + rel + " ORDER BY id", (SEP,))
    vocab = {}
    indptr, indices = [0], []
    for r in rows:
        toks = r[3].split(SEP) if r[4] > 0 else []
        if len(toks) != r[4]:
            raise RuntimeError("a token contains \\x01")
        for t in toks:
            indices.append(vocab.setdefault(t, len(vocab)))
        indptr.append(len(indices))
    X = sp.csr_matrix((np.ones(len(indices)), np.array(indices, dtype=np.int64), np.array(indptr)),
                      shape=(len(rows), len(vocab)))
    X.sum_duplicates()
    labels = [r[1] for r in rows]
    train = np.array([r[2] == "train" for r in rows])
    return rel, [r[0] for r in rows], X.tocsr(), labels, train


def fit(X, W, opts, keep):
    """Log parameters from weighted rows: (log theta or log t, log(1 - t) or None, log pi, vocabulary)."""
    a = opts.get("alpha", 1.0)
    b = opts.get("class_alpha", 0.0)
    bern = opts.get("kind") == "bernoulli"
    if bern:
        X = X.copy()
        X.data[:] = 1.0                          # presence
    # C x V, dense (the corpora are small); the logarithms in long double, as the sums below
    N = np.asarray((W.T @ X)).astype(np.longdouble)
    vocab = np.asarray((X[keep].sum(axis=0) > 0)).ravel()
    V = vocab.sum()
    D = W.sum(axis=0).astype(np.longdouble)
    log_p = np.full(N.shape, -np.inf, dtype=np.longdouble)
    log_q = None
    if bern:
        b1, b0 = opts.get("beta", [a, a])
        den = (D + b1 + b0)[:, None]
        t = (N[:, vocab] + b1) / den
        log_p[:, vocab] = np.log(N[:, vocab] + b1) - np.log(den)
        log_q = np.full(N.shape, -np.inf, dtype=np.longdouble)
        log_q[:, vocab] = np.where(t < 0.5, np.log1p(-t), np.log(D[:, None] - N[:, vocab] + b0) - np.log(den))
    else:
        Nc = N[:, vocab].sum(axis=1)
        log_p[:, vocab] = np.log(N[:, vocab] + a) - np.log(Nc + a * V)[:, None]
    C = W.shape[1]
    log_pi = np.log(D + b) - np.log(D.sum() + C * b)
    return log_p, log_q, log_pi, vocab


def row_sums(X, terms):
    """Per row of X, the sum of terms (C x nnz, one column per stored entry of X), in long double."""
    out = np.zeros((X.shape[0], terms.shape[0]), dtype=np.longdouble)
    lengths = np.diff(X.indptr)
    rows = np.nonzero(lengths)[0]
    if len(rows):
        out[rows] = np.add.reduceat(terms, X.indptr[rows], axis=1).T
    return out


def log_joint(X, params, bern):
    """log p(x, c) per row and class, summed in long double (80-bit on x86-64): the reference
    must be more precise than what it checks, over rows of thousands of tokens and, for
    Bernoulli, a sum over the whole vocabulary."""
    log_p, log_q, log_pi, vocab = params
    Xv = X[:, vocab].tocsr()
    lp = log_p[:, vocab]
    if not bern:
        return row_sums(Xv, Xv.data.astype(np.longdouble) * lp[:, Xv.indices]) + log_pi
    lq = log_q[:, vocab]
    return row_sums(Xv, (lp - lq)[:, Xv.indices]) + lq.sum(axis=1) + log_pi


def log_prior(params, opts):
    log_p, log_q, log_pi, vocab = params
    a = opts.get("alpha", 1.0)
    b = opts.get("class_alpha", 0.0)
    if opts.get("kind") == "bernoulli":
        b1, b0 = opts.get("beta", [a, a])
        theta = b1 * log_p[:, vocab].sum() + b0 * log_q[:, vocab].sum()
    else:
        theta = a * log_p[:, vocab].sum()
    return theta + b * log_pi.sum()


def logsumexp(a):
    """Per row of a (long double, -inf allowed), log sum exp."""
    m = a.max(axis=1)[:, None]
    return (m + np.log(np.exp(a - m).sum(axis=1))[:, None]).ravel()


def labelled_start(X, labels, classes, train):
    """The labelled and unlabelled training rows, each row's class (-1: none) and the weights of
    iteration 0's model (1 in a labelled row's class)."""
    lab = np.array([l is not None for l in labels]) & train
    y = np.array([classes.index(l) if l is not None else -1 for l in labels])
    W = np.zeros((X.shape[0], len(classes)))
    W[lab, y[lab]] = 1.0
    return lab, ~lab & train, y, W


def em_cm(X, labels, classes, train, opts, iterations=ITERATIONS):
    """EM-CM (see the docstring): per iteration the classes' posteriors and L."""
    lam = opts.get("lambda", 1.0)
    k = opts["components"]
    bern = opts.get("kind") == "bernoulli"
    K = len(classes)
    lab, unl, y, W = labelled_start(X, labels, classes, train)
    params = fit(X, W, opts, lab)
    seen = [0] * K
    start = []
    for i in np.nonzero(lab)[0]:
        start.append((i, y[i], seen[y[i]] % k))
        seen[y[i]] += 1
    # nbc's order of the components: by label, then by number
    comps = [(c, j) for c in range(K) for j in range(min(k, seen[c]))]
    owner = np.array([c for c, _ in comps])
    W = np.zeros((X.shape[0], len(comps)))
    for i, c, j in start:
        W[i, comps.index((c, j))] = 1.0
    keep = lab
    out = []
    for it in range(iterations + 1):
        joint = log_joint(X, params, bern)
        lse = logsumexp(joint)[:, None]
        post = np.exp(joint - lse)
        if it == 0:
            cls_post, own = post, joint[lab, y[lab]]
        else:
            cls_post = np.stack([post[:, owner == c].sum(axis=1) for c in range(K)], axis=1)
            in_class = np.where(owner[None, :] == y[:, None], joint, -np.inf)
            own = logsumexp(in_class[lab])
        out.append((cls_post.astype(np.float64),
                    float(own.sum() + lam * lse[unl].sum() + log_prior(params, opts))))
        if it > 0:
            W = np.zeros((X.shape[0], len(comps)))
            W[lab] = np.exp(in_class[lab] - logsumexp(in_class[lab])[:, None]).astype(np.float64)
            W[unl] = lam * post[unl].astype(np.float64)
            keep = (W.sum(axis=1) > 0) & train
        params = fit(X, W, opts, keep)
    return out


def em(X, labels, classes, train, opts, iterations=ITERATIONS):
    if opts.get("components", 1) > 1:
        return em_cm(X, labels, classes, train, opts, iterations)
    lam = opts.get("lambda", 1.0)
    bern = opts.get("kind") == "bernoulli"
    C = len(classes)
    lab, unl, y, W = labelled_start(X, labels, classes, train)
    out = []
    params = fit(X, W, opts, lab)
    for k in range(iterations + 1):
        joint = log_joint(X, params, bern)
        m = joint.max(axis=1)[:, None]
        lse = m + np.log(np.exp(joint - m).sum(axis=1))[:, None]
        post = np.exp(joint - lse).astype(np.float64)
        L = float(joint[lab, y[lab]].sum() + lam * lse[unl].sum() + log_prior(params, opts))
        out.append((post, L))
        W = np.zeros((X.shape[0], C))
        W[lab, y[lab]] = 1.0
        W[unl] = lam * post[unl]
        params = fit(X, W, opts, (W.sum(axis=1) > 0) & train)
    return out


def cv_reference(X, labels, classes, train, folds, opts):
    """Per lambda of CV_LAMBDAS: the metrics' means and deviations over the folds, gain and its error."""
    y = np.array([classes.index(l) if l is not None else -1 for l in labels])
    labelled = y >= 0
    per_fold = {}
    for lam in CV_LAMBDAS:
        for f in sorted(set(folds[labelled & train])):
            held = labelled & train & (folds == f)
            # nb_train_em stops at the model of the labelled rows for lambda 0
            post = em(X, labels, classes, train & ~held, dict(opts, **{"lambda": lam}),
                      ITERATIONS if lam > 0 else 0)[-1][0][held]
            present = sorted(set(y[labelled & train & ~held]))
            # nbc's model has only the classes of its training rows
            P = post[:, present]
            pred = np.array(present)[P.argmax(axis=1)]
            per_fold[lam, f] = (np.mean(pred == y[held]),
                                f1_score(y[held], pred, average="macro"),
                                log_loss(y[held], P, labels=present))
    fold_ids = sorted({f for _, f in per_fold})
    rows = []
    for lam in CV_LAMBDAS:
        m = np.array([per_fold[lam, f] for f in fold_ids])
        d = np.array([per_fold[0, f][2] - per_fold[lam, f][2] for f in fold_ids])
        rows.append((lam, m[:, 0].mean(), m[:, 0].std(), m[:, 1].mean(), m[:, 1].std(),
                     m[:, 2].mean(), m[:, 2].std(), d.mean(), d.std(ddof=1) / np.sqrt(len(d))))
    best = min(rows[1:], key=lambda r: r[5])
    chosen = best[0] if best[7] > best[8] else 0
    return rows, chosen


def check_cv(db, rel, source, ids, X, labels, classes, train):
    folds = np.array(ids) % CV_FOLDS
    db.execute("CREATE OR REPLACE VIEW %s_cv AS SELECT label, tokens, id %% %d AS fold FROM %s "
               "WHERE split = 'train'" % (rel, CV_FOLDS, rel))
    names = ("accuracy", "accuracy_std", "macro_f1", "macro_f1_std", "log_loss", "log_loss_std",
             "log_loss_gain", "log_loss_gain_se")
    for opts in CV_OPTION_SETS:
        o = dict(opts, iterations=ITERATIONS, tolerance=0)
        got = db.query("SELECT lambda, " + ", ".join(names) + ", chosen FROM nb_cross_validate_em(%s, 'label', "
                       "'tokens', fold_column => 'fold', lambdas => %s::float8[], options => %s) ORDER BY lambda",
                       (rel + "_cv", CV_LAMBDAS, json.dumps(o)))
        ref, chosen = cv_reference(X, labels, classes, train, folds, opts)
        what = "%s %s lambda grid %s" % (source, json.dumps(opts), CV_LAMBDAS)
        R.check([g[0] for g in got] == CV_LAMBDAS, what + ": a row per lambda", "nbc gave %s" % [g[0] for g in got])
        for g, r in zip(got, ref):
            err = max(abs(a - b) for a, b in zip(g[1:9], r[1:]))
            R.check(err <= TOL, "%s, lambda %s: %s" % (what, g[0], ", ".join(names)),
                    "max error %s" % fmt(err))
        picked = [g[0] for g in got if g[9]]
        R.check(picked == [chosen], what + ": lambda chosen", "nbc chose %s, the rule %s" % (picked, chosen))
    db.execute("DROP VIEW %s_cv" % rel)


def main():
    db = DB()
    db.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    db.execute("SET jit = off")
    for source, select in CORPORA:
        if db.query("SELECT to_regclass(%s)", (source,))[0][0] is None:
            R.check(False, "%s loaded" % source, "table %s is missing" % source)
            continue
        rel, ids, X, labels, train = load(db, source, select)
        classes = sorted({l for l in labels if l is not None})
        R.note("%s: %d rows (%d training, %d labelled), %d tokens" % (
            source, X.shape[0], train.sum(), sum(l is not None for l in labels), X.shape[1]))
        # the training rows only go into EM: a view of them
        db.execute("CREATE OR REPLACE VIEW %s_train AS SELECT label, tokens FROM %s WHERE split = 'train'"
                   % (rel, rel))
        for opts in OPTION_SETS:
            o = dict(opts, iterations=ITERATIONS, tolerance=0)
            trace = db.query("SELECT iteration, log_likelihood, model::text FROM nb_train_em_trace(%s, "
                             "'label', 'tokens', %s) ORDER BY iteration", (rel + "_train", json.dumps(o)))
            ref = em(X, labels, classes, train, opts)
            R.check(len(trace) == len(ref), "%s %s: %d iterations" % (source, json.dumps(opts), len(ref)),
                    "nbc gave %d" % len(trace))
            prev = None
            for (k, L, model), (post, Lref) in zip(trace, ref):
                got = db.query("SELECT id, nb_predict_proba(%s::nb_model, tokens) FROM " + rel + " ORDER BY id",
                               (model,))
                P = np.array([[p[c] for c in classes] for _, p in got])
                err = np.abs(P - post).max()
                R.check(err <= TOL, "%s %s iteration %d: posteriors of %d rows" % (
                    source, json.dumps(opts), k, len(got)), "max error %s" % fmt(err))
                rel_err = abs(L - Lref) / abs(Lref)
                R.check(rel_err <= TOL, "%s %s iteration %d: log likelihood" % (source, json.dumps(opts), k),
                        "%.6f vs numpy %.6f, relative error %s" % (L, Lref, fmt(rel_err)))
                if k >= (3 if opts.get("components", 1) > 1 else 2):
                    R.check(L >= prev - TOL * abs(prev), "%s %s iteration %d: log likelihood not decreasing" % (
                        source, json.dumps(opts), k), "%.6f after %.6f" % (L, prev))
                prev = L
        db.execute("DROP VIEW %s_train" % rel)
        check_cv(db, rel, source, ids, X, labels, classes, train)
        db.execute("DROP TABLE " + rel)
    print("%d passed, %d failed" % (R.passed, R.failed))
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
