#!/usr/bin/python3
"""Held-out accuracy and log loss of kind "dcm" against the other kinds.

    /usr/bin/python3 test/bench/dcm_accuracy.py

On every text corpus the tests use (SpamAssassin and Reuters Grain, loaded
by test/data/load_spamassassin.py and load_reuters.py; text[] rows of the
tokens \\w\\w+ of the lowercased body): models trained on the 'train' split
and scored on 'test', for kinds multinomial, complement, bernoulli and dcm
(alpha 1, the default).  Then the choice of dcm's alpha (its pseudo
document count) on the training side only: 5-fold cross-validation within
the 'train' split for a few values, the test split untouched.  Prints
Markdown tables.  Uses the libpq environment.
"""
import math

import psycopg2

CORPORA = {
    "SpamAssassin": "SELECT folder || '/' || msg_id AS key, label, split, body FROM spamassassin",
    "Reuters Grain": "SELECT lpad(id::text, 6, '0') AS key, label, split, body FROM reuters_grain",
}
KINDS = ["multinomial", "complement", "bernoulli", "dcm"]
ALPHAS = [0.01, 0.1, 0.5, 1, 2]
FOLDS = 5


def scores(cur, train_where, test_where, options):
    """Accuracy and mean log loss of a model trained on train_where, scored on test_where."""
    cur.execute("""WITH m AS (SELECT nb_train(label, tokens) AS m FROM nbc_acc WHERE """ + train_where + """)
                   SELECT avg((nb_predict(m.m, d.tokens, %(o)s) = d.label)::int),
                          avg(-ln(greatest((nb_predict_proba(m.m, d.tokens, %(o)s) ->> d.label)::float8,
                                           1e-300)))
                   FROM nbc_acc d, m WHERE """ + test_where, {"o": options})
    acc, loss = cur.fetchone()
    return float(acc), float(loss)


def main():
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    print("| corpus | kind | accuracy | log loss |")
    print("|---|---|---|---|")
    cv = {}
    for corpus, source in CORPORA.items():
        cur.execute("DROP TABLE IF EXISTS nbc_acc")
        cur.execute("""CREATE TABLE nbc_acc AS
            SELECT s.key, s.label, s.split, mod(get_byte(decode(md5(s.key), 'hex'), 2), %s) AS fold,
                   ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), '\\w\\w+', 'g') AS m) AS tokens
            FROM (""" + source + """) s""", (FOLDS,))
        for kind in KINDS:
            acc, loss = scores(cur, "split = 'train'", "d.split = 'test'", '{"kind": "%s"}' % kind)
            print("| %s | %s | %.4f | %.4f |" % (corpus, kind, acc, loss))
        for a in ALPHAS:
            opts = '{"kind": "dcm", "alpha": %s}' % a
            accs = []
            losses = []
            for f in range(FOLDS):
                acc, loss = scores(cur, "split = 'train' AND fold <> %d" % f,
                                   "d.split = 'train' AND d.fold = %d" % f, opts)
                accs.append(acc)
                losses.append(loss)
            cv[(corpus, a)] = (sum(accs) / FOLDS, sum(losses) / FOLDS)
    print()
    print("| corpus | dcm alpha | %d-fold CV accuracy (train split) | CV log loss |" % FOLDS)
    print("|---|---|---|---|")
    for (corpus, a), (acc, loss) in cv.items():
        print("| %s | %g | %.4f | %.4f |" % (corpus, a, acc, loss))
    cur.execute("DROP TABLE IF EXISTS nbc_acc")
    if any(math.isnan(v) for pair in cv.values() for v in pair):
        raise SystemExit("a NaN score")


if __name__ == "__main__":
    main()
