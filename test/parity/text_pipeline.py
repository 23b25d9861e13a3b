#!/usr/bin/python3
"""From raw text to probabilities: nbc against scikit-learn's Pipeline.

Run by test/parity/run.sh (suite "text"), after the SpamAssassin corpus and
the fortunes (test/data/load_fortunes.py: Russian and Chinese, a quarter of
each fortune file held out by a hash of its place) are loaded.

For every tokenizer option set of a grid (the char analyzers on the
fortunes only) and every kind (multinomial,
bernoulli, complement), nbc trains with nb_train(label, body, tokenizer) on
the training split and scores the held-out bodies with nb_predict_proba /
nb_predict_log_proba / nb_predict given text (the model's own tokenizer);
scikit-learn fits Pipeline([CountVectorizer(**tokenizer), <NB>()]) on the
same bodies.  The yardstick is the fitted pipeline's log posterior with its
terms added in long double (parity.reference_log_proba, as the token-bag
suite does): within 1e-9 for every document and class, and the same
predicted label.  The model's vocabulary must also be exactly the
vectorizer's vocabulary_.

Prints one "ok - ..." / "not ok - ..." line per check, then
"N passed, N failed"; exits 1 if any failed.
"""

import json
import math
import sys

from report import Report, fmt

try:
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB
except ImportError as e:
    print("not ok - text pipeline prerequisites: %s (Debian: python3-sklearn; run with "
          "/usr/bin/python3)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

from db import DB  # noqa: E402
from parity import reference_log_proba  # noqa: E402

R = Report()
TOL = 1e-9

# (data set, the SQL of its rows: key, label, body, split; whether the char
# analyzers run on it too: on long e-mails their vocabularies take minutes)
CORPORA = [
    ("SpamAssassin", "SELECT folder || '/' || msg_id, label, body, split FROM spamassassin", False),
    # a quarter of each file held out, by a hash of its place
    ("fortunes (ru, zh)", "SELECT label || '/' || n, label, body, "
                          "CASE WHEN md5(label || '/' || n) < '4' THEN 'test' ELSE 'train' END FROM fortunes", True),
]

TOKENIZERS = [
    {},
    {"ngram_range": [1, 2]},
    {"stop_words": "english", "strip_accents": "unicode"},
    {"lowercase": False, "token_pattern": r"(?u)\b\w+\b"},
    {"analyzer": "char_wb", "ngram_range": [2, 4]},
    {"analyzer": "char", "ngram_range": [1, 3], "strip_accents": "ascii"},
]

KINDS = ["multinomial", "bernoulli", "complement"]


def estimator(kind):
    if kind == "multinomial":
        return MultinomialNB()
    if kind == "bernoulli":
        return BernoulliNB(binarize=0.0)
    return ComplementNB()


def check_corpus(db, name, rows_sql, char_analyzers):
    rows = db.query(rows_sql + " ORDER BY 1")
    train = [r for r in rows if r[3] == "train"]
    test = [r for r in rows if r[3] == "test"]
    if not train or not test:
        R.check(False, "%s: rows" % name, "%d training and %d test rows" % (len(train), len(test)))
        return
    db.execute("DROP TABLE IF EXISTS text_pipeline_rows")
    db.execute("CREATE TEMP TABLE text_pipeline_rows (key text, label text, body text, split text)")
    db.execute("INSERT INTO text_pipeline_rows " + rows_sql)
    for tok in TOKENIZERS:
        if tok.get("analyzer", "word") != "word" and not char_analyzers:
            continue
        vec = CountVectorizer(**{k: tuple(v) if k == "ngram_range" else v for k, v in tok.items()})
        X_train = vec.fit_transform([r[2] for r in train])
        X_test = vec.transform([r[2] for r in test])
        y_train = [r[1] for r in train]
        db.execute("DROP TABLE IF EXISTS text_pipeline_model")
        db.execute("CREATE TEMP TABLE text_pipeline_model AS "
                   "SELECT nb_train(label, body, %s::jsonb) AS m FROM text_pipeline_rows WHERE split = 'train'",
                   (json.dumps(tok),))
        desc = "%s %s" % (name, json.dumps(tok))
        vocab = db.query("SELECT (nb_info(m) ->> 'vocabulary')::bigint FROM text_pipeline_model")[0][0]
        R.check(vocab == len(vec.vocabulary_), desc + ": vocabulary",
                "nbc %d tokens, CountVectorizer %d" % (vocab, len(vec.vocabulary_)))
        for kind in KINDS:
            est = estimator(kind).fit(X_train, y_train)
            ref = reference_log_proba(est, kind, X_test)
            classes = list(est.classes_)
            got = db.query(
                "SELECT r.key, nb_predict(m, r.body, o), nb_predict_proba(m, r.body, o)::text, "
                "nb_predict_log_proba(m, r.body, o)::text "
                "FROM text_pipeline_rows r, text_pipeline_model, (SELECT %s::jsonb AS o) opts "
                "WHERE r.split = 'test' ORDER BY r.key", (json.dumps({"kind": kind}),))
            worst = 0.0
            where = None
            mismatched = 0
            for i, (key, pred, p, lp) in enumerate(got):
                p = json.loads(p)
                lp = json.loads(lp)
                for c, cls in enumerate(classes):
                    e = abs(float(p[cls]) - math.exp(ref[i, c]))
                    b = ref[i, c]
                    a = lp[cls]
                    if a is None or not math.isfinite(b):
                        e2 = 0.0 if (a is None and b == -math.inf) else math.inf
                    else:
                        e2 = abs(float(a) - b)
                    e = max(e, e2)
                    if not e <= worst:
                        worst, where = (e if e == e else math.inf), (key, cls, p[cls], lp[cls], b)
                if pred != classes[int(np.argmax(ref[i]))]:
                    gap = sorted(ref[i])[-1] - sorted(ref[i])[-2] if len(classes) > 1 else 0
                    if gap > 1e-9:
                        mismatched += 1
            R.check(len(got) == len(test) and worst <= TOL,
                    "%s %s: probabilities of %d held-out documents" % (desc, kind, len(test)),
                    "max abs err %s%s" % (fmt(worst), "" if worst <= TOL else " at %r" % (where,)))
            R.check(mismatched == 0, "%s %s: predicted labels" % (desc, kind),
                    "%d of %d differ" % (mismatched, len(got)))


def main():
    db = DB()
    for name, sql, char_analyzers in CORPORA:
        check_corpus(db, name, sql, char_analyzers)
    print("%d passed, %d failed" % (R.passed, R.failed))
    sys.exit(1 if R.failed else 0)


if __name__ == "__main__":
    main()
