#!/usr/bin/python3
"""Held-out accuracy and log loss of kind "dcm" against the other kinds.

    /usr/bin/python3 test/bench/dcm_accuracy.py [--cv]

On every text corpus the tests use (SpamAssassin and Reuters Grain, loaded
by test/data/load_spamassassin.py and load_reuters.py; text[] rows of the
tokens \\w\\w+ of the lowercased body): models trained on the 'train' split
and scored on 'test', for kinds multinomial, complement, bernoulli and dcm
(each with its default alpha).

--cv: instead, how dcm's default alpha (its pseudo document count,
NB_DCM_DEFAULT_ALPHA in src/nb_dcm.h) is chosen, on the training side only:
5-fold cross-validation within the 'train' split (folds by a hash of the
row's key), for each value of ALPHAS, the multinomial beside it; the value
with the least log loss averaged over the corpora is the default.  The
test split is not read.  Prints Markdown tables.  Uses the libpq
environment; creates and drops its tables.
"""
import argparse
import json
import math

import psycopg2

CORPORA = {
    "SpamAssassin": "SELECT folder || '/' || msg_id AS key, label, split, body FROM spamassassin",
    "Reuters Grain": "SELECT lpad(id::text, 6, '0') AS key, label, split, body FROM reuters_grain",
}
KINDS = ["multinomial", "complement", "bernoulli", "dcm"]
ALPHAS = [0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 1]
FOLDS = 5


def scores(cur, where, options):
    """Accuracy and mean log loss over the rows of nbc_acc d (where) by the model of nbc_acc_model
    whose fold is d's (the training split's model has fold -1)."""
    cur.execute("""SELECT avg((nb_predict(m.m, d.tokens, %(o)s) = d.label)::int),
                          avg(-ln(greatest((nb_predict_proba(m.m, d.tokens, %(o)s) ->> d.label)::float8,
                                           1e-300)))
                   FROM nbc_acc d JOIN nbc_acc_model m ON m.fold = """ + where,
                {"o": json.dumps(options)})
    acc, loss = cur.fetchone()
    return float(acc), float(loss)


def fold_of(key):
    """SQL for the fold of a row with key (text): a byte of its MD5, mod FOLDS."""
    return "mod(get_byte(decode(md5(%s), 'hex'), 2), %d)" % (key, FOLDS)


def load(cur, source):
    cur.execute("DROP TABLE IF EXISTS nbc_acc, nbc_acc_model")
    cur.execute("""CREATE TABLE nbc_acc AS
        SELECT s.key, s.label, s.split, """ + fold_of("s.key") + """ AS fold,
               ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), '\\w\\w+', 'g') AS m) AS tokens
        FROM (""" + source + """) s""")
    # fold -1: the whole training split; fold f: the training split without fold f
    cur.execute("""CREATE TABLE nbc_acc_model AS
        SELECT f AS fold, (SELECT nb_train(label, tokens) FROM nbc_acc t
                           WHERE t.split = 'train' AND t.fold <> f) AS m
        FROM generate_series(-1, %s - 1) f""", (FOLDS,))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cv", action="store_true", help="choose dcm's default alpha on the training split")
    args = ap.parse_args()
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    if args.cv:
        print("| corpus | kind | alpha | %d-fold CV accuracy (train split) | CV log loss |" % FOLDS)
    else:
        print("| corpus | kind | accuracy | log loss |")
    print("|---|---|---|---|" + ("---|" if args.cv else ""))
    loss_by_alpha = {a: [] for a in ALPHAS}
    for corpus, source in CORPORA.items():
        load(cur, source)
        if not args.cv:
            for kind in KINDS:
                acc, loss = scores(cur, "-1 WHERE d.split = 'test'", {"kind": kind})
                print("| %s | %s | %.4f | %.4f |" % (corpus, kind, acc, loss))
            continue
        cv = "d.fold WHERE d.split = 'train'"
        acc, loss = scores(cur, cv, {"kind": "multinomial"})
        print("| %s | multinomial | 1 | %.4f | %.4f |" % (corpus, acc, loss))
        for a in ALPHAS:
            acc, loss = scores(cur, cv, {"kind": "dcm", "alpha": a})
            loss_by_alpha[a].append(loss)
            print("| %s | dcm | %g | %.4f | %.4f |" % (corpus, a, acc, loss))
    cur.execute("DROP TABLE IF EXISTS nbc_acc, nbc_acc_model")
    if args.cv:
        mean = {a: sum(v) / len(v) for a, v in loss_by_alpha.items()}
        if any(math.isnan(v) for v in mean.values()):
            raise SystemExit("a NaN score")
        print()
        print("least mean CV log loss: alpha %g (%.4f)" % min(((a, v) for a, v in mean.items()),
                                                             key=lambda p: p[1]))


if __name__ == "__main__":
    main()
