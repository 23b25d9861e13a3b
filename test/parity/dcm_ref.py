"""An independent DCM naive Bayes, from the papers, for the parity tests.

Built from raw document-term counts (not from a model): Murphy eq. 3.79 for
the likelihood, with scipy's gammaln; Elkan (2006)'s EDCM maximum likelihood
fit by its published fixed point s <- D / sum_d [psi(s + n_d) - psi(s)],
beta_w = d_w / sum_d [psi(s + n_d) - psi(s)], with scipy's digamma; tokens a
class never saw get beta = a / Z (a the pseudo document count, nbc's alpha)
and s is the sum of every beta of the vocabulary.  Documents are dicts
{token: count}; weights multiply a document's share of every sum.

DEFAULT_ALPHA is the pseudo document count nbc uses when alpha is not given
(README, "dcm"): chosen by cross-validation within the training splits
(test/bench/dcm_accuracy.py --cv), a documented constant, not computed here.
"""
import numpy as np
from scipy.special import digamma, gammaln

DEFAULT_ALPHA = 0.1


def edcm_fixed_point(D, lengths, weights, tol=1e-15, max_iter=2_000_000):
    """s with s = D / Z(s), Z(s) = sum_d w_d [psi(s + n_d) - psi(s)]."""
    lengths = np.asarray(lengths, dtype=float)
    weights = np.asarray(weights, dtype=float)
    s = 1.0
    for _ in range(max_iter):
        z = np.sum(weights * (digamma(s + lengths) - digamma(s)))
        nxt = D / z
        if abs(nxt - s) <= tol * s:
            return nxt
        s = nxt
    raise RuntimeError("the EDCM fixed point did not converge")


class DcmNB:
    def __init__(self, docs, labels, weights=None, alpha=DEFAULT_ALPHA):
        weights = np.ones(len(docs)) if weights is None else np.asarray(weights, float)
        self.alpha = alpha
        self.classes = sorted(set(labels), key=lambda s: s.encode())
        self.vocab = sorted({t for d in docs for t in d})
        self.known = set(self.vocab)
        self.prior = {}
        self.params = {}
        total = float(np.sum(weights))
        for c in self.classes:
            idx = [i for i, l in enumerate(labels) if l == c]
            self.prior[c] = float(np.sum(weights[idx])) / total
            df = {}
            lengths = {}
            for i in idx:
                n = sum(docs[i].values())
                if n > 0:
                    lengths[n] = lengths.get(n, 0.0) + weights[i]
                for t in docs[i]:
                    df[t] = df.get(t, 0.0) + weights[i]
            D = sum(df.values())
            if not lengths:
                self.params[c] = (alpha * len(self.vocab), {}, alpha)
                continue
            ls = sorted(lengths)
            ws = [lengths[n] for n in ls]
            s = edcm_fixed_point(D, ls, ws)
            z = np.sum(np.asarray(ws) * (digamma(s + np.asarray(ls, float)) - digamma(s)))
            beta = {t: d / z for t, d in df.items()}
            beta0 = alpha / z
            s_all = (D + alpha * (len(self.vocab) - len(df))) / z
            self.params[c] = (s_all, beta, beta0)

    def log_likelihood(self, doc, c):
        """log p(x | c) without the multinomial coefficient (the same in every class)."""
        s, beta, beta0 = self.params[c]
        known = {t: x for t, x in doc.items() if t in self.known}
        n = sum(known.values())
        ll = gammaln(s) - gammaln(s + n)
        for t, x in known.items():
            b = beta.get(t, beta0)
            ll += gammaln(b + x) - gammaln(b)
        return ll

    def predict_proba(self, doc):
        scores = np.array([np.log(self.prior[c]) + self.log_likelihood(doc, c) for c in self.classes])
        scores -= scores.max()
        p = np.exp(scores)
        return dict(zip(self.classes, p / p.sum()))
