#!/usr/bin/python3
"""Could any DCM beat the multinomial on the training side?  A check apart from nbc.

    /usr/bin/python3 test/bench/dcm_variants.py

README ("dcm") reports that on Reuters Grain no honest choice of kind "dcm"
reaches the multinomial's accuracy.  This script asks whether that is EDCM's
approximation or the DCM itself: from the raw token counts of the same rows,
folds and tokens as test/bench/dcm_accuracy.py --cv (5-fold cross-validation
within the 'train' split, folds by a hash of the row's key; the test split is
not read), written here with numpy and scipy rather than through nbc, it
scores

  multinomial  alpha 1, the vocabulary the training folds saw (as nbc: a
               token the model never saw is left out)
  edcm         Elkan's EDCM with nbc's rule: s from s = D / Z(s), beta_w =
               d_w / Z(s), and a / Z(s) for a token the class never saw
               (test/parity/dcm_ref.py's fit)
  exact        the DCM's maximum likelihood by Minka's fixed point
               (Minka 2000, eq. 55): alpha_w <- alpha_w sum_d [psi(n_dw +
               alpha_w) - psi(alpha_w)] / sum_d [psi(n_d + s) - psi(s)], from
               EDCM's parameters, for the tokens the class saw, each
               document's count of each token at hand (which no model
               keeps); unseen tokens as in edcm.  Stops when no parameter
               moves by more than 1e-9 relative, or after 5000 rounds
               (reported).

for the pseudo document counts a of ALPHAS, each class's prior its share of
the training rows.  Prints a Markdown table of accuracy and mean log loss.
Uses the libpq environment; needs tables spamassassin and reuters_grain
(test/data/load_spamassassin.py, load_reuters.py).
"""
import os
import re
import sys

import numpy as np
import psycopg2
from scipy import sparse
from scipy.special import digamma, gammaln

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "parity"))
from dcm_accuracy import CORPORA, FOLDS, fold_of  # noqa: E402
from dcm_ref import edcm_fixed_point  # noqa: E402

ALPHAS = (0.03, 0.1, 0.3)
TOKEN = re.compile(r"\w\w+")
EXACT_TOL = 1e-9
EXACT_ROUNDS = 5000


def load(cur, source):
    """Document-term counts, labels and folds of the training split (dcm_accuracy.py's rows and folds)."""
    cur.execute("SELECT s.label, s.body, " + fold_of("s.key") + " FROM (" + source + ") s WHERE s.split = 'train'")
    vocab, indices, indptr, data, labels, folds = {}, [], [0], [], [], []
    for label, body, fold in cur.fetchall():
        counts = {}
        for t in TOKEN.findall(body.lower()):
            counts[t] = counts.get(t, 0) + 1
        for t, x in counts.items():
            indices.append(vocab.setdefault(t, len(vocab)))
            data.append(x)
        indptr.append(len(indices))
        labels.append(label)
        folds.append(fold)
    X = sparse.csr_matrix((np.array(data, float), np.array(indices), np.array(indptr)),
                          shape=(len(labels), len(vocab)))
    return X, np.array(labels), np.array(folds)


def multinomial(Xc, Xte, a, V):
    counts = np.asarray(Xc.sum(axis=0)).ravel()
    return Xte @ (np.log(counts + a) - np.log(counts.sum() + a * V))


def dcm_log_likelihood(beta, Xte):
    """Murphy eq. 3.79 without the multinomial coefficient (the same for every class)."""
    n = np.asarray(Xte.sum(axis=1)).ravel()
    b = beta[Xte.indices]
    terms = np.append(gammaln(b + Xte.data) - gammaln(b), 0.0)
    per_doc = np.add.reduceat(terms, Xte.indptr[:-1]) * (np.diff(Xte.indptr) > 0)
    s = beta.sum()
    return gammaln(s) - gammaln(s + n) + per_doc


def dcm(Xc, Xte, a, exact, rounds):
    df = np.asarray((Xc > 0).sum(axis=0)).ravel().astype(float)
    lengths = np.asarray(Xc.sum(axis=1)).ravel()
    lengths = lengths[lengths > 0]
    s = edcm_fixed_point(df.sum(), lengths, np.ones(len(lengths)))
    z = np.sum(digamma(s + lengths) - digamma(s))
    seen = df > 0
    beta = np.where(seen, df, a) / z
    if exact:
        unseen_mass = a / z * np.count_nonzero(~seen)
        Xcsc = Xc.tocsc()
        column = np.repeat(np.arange(Xcsc.shape[1]), np.diff(Xcsc.indptr))
        for r in range(1, EXACT_ROUNDS + 1):
            total = beta[seen].sum() + unseen_mass
            den = np.sum(digamma(total + lengths) - digamma(total))
            bc = beta[column]
            num = np.bincount(column, weights=digamma(Xcsc.data + bc) - digamma(bc),
                              minlength=Xcsc.shape[1])
            new = np.where(seen, beta * num / den, beta)
            moved = np.max(np.abs(new - beta)[seen] / beta[seen])
            beta = new
            if moved <= EXACT_TOL:
                break
        rounds.append(r)
    return dcm_log_likelihood(beta, Xte)


def cross_validate(X, y, folds, score):
    classes = sorted(set(y))
    right, loss = 0, 0.0
    for f in range(FOLDS):
        train, test = folds != f, folds == f
        known = np.asarray((X[train] > 0).sum(axis=0)).ravel() > 0
        Xtr, Xte = X[train][:, known], X[test][:, known].tocsr()
        ytr, yte = y[train], y[test]
        logp = np.column_stack([np.log(np.mean(ytr == c)) + score(Xtr[ytr == c], Xte, Xtr.shape[1])
                                for c in classes])
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        p /= p.sum(axis=1, keepdims=True)
        actual = np.searchsorted(classes, yte)
        right += np.count_nonzero(p.argmax(axis=1) == actual)
        loss -= np.sum(np.log(np.maximum(p[np.arange(len(actual)), actual], 1e-300)))
    return right / len(y), loss / len(y)


def main():
    cur = psycopg2.connect("").cursor()
    print("| corpus | model | a | %d-fold CV accuracy (train split) | CV log loss | Minka rounds |" % FOLDS)
    print("|---|---|---|---|---|---|")
    for corpus, source in CORPORA.items():
        X, y, folds = load(cur, source)
        acc, loss = cross_validate(X, y, folds, lambda Xc, Xte, V: multinomial(Xc, Xte, 1.0, V))
        print("| %s | multinomial | 1 | %.4f | %.4f | |" % (corpus, acc, loss))
        for name, exact in (("edcm", False), ("exact", True)):
            for a in ALPHAS:
                rounds = []
                acc, loss = cross_validate(X, y, folds,
                                           lambda Xc, Xte, V: dcm(Xc, Xte, a, exact, rounds))
                print("| %s | %s | %g | %.4f | %.4f | %s |" % (
                    corpus, name, a, acc, loss, "%d-%d" % (min(rounds), max(rounds)) if exact else ""))


if __name__ == "__main__":
    main()
