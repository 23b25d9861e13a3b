#!/usr/bin/python3
"""Parity of kind "dcm" against an independent implementation (dcm_ref.py).

    /usr/bin/python3 test/parity/dcm.py

On SpamAssassin and Reuters Grain (the tables test/data/load_spamassassin.py
and load_reuters.py make), unweighted and weighted text[] rows: the model is
trained by nb_train on the training split; dcm_ref.py fits the same rows
from their raw token counts.  Checked:
  - every (token, class) parameter ratio beta/s (what nb_feature_log_prob
    gives for kind dcm: log of the probability of a one-token document)
    within PARAM_TOL relative;
  - every test document's posteriors (nb_predict_proba) within POST_TOL;
  - a model merged from two halves of the rows gives the same posteriors
    (exactly unweighted, within MERGE_TOL with fractional weights).
Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed".
Uses the libpq environment (PGHOST, PGPORT, PGDATABASE, ...).
"""
import collections
import json
import os
import sys

import numpy as np
import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dcm_ref import DcmNB  # noqa: E402

PARAM_TOL = 1e-8
POST_TOL = 1e-9
MERGE_TOL = 1e-12
TOKEN_RE = r"\w\w+"
SOURCES = {
    "spamassassin": "SELECT folder || '/' || msg_id AS key, label, split, body FROM spamassassin",
    "reuters_grain": "SELECT lpad(id::text, 6, '0') AS key, label, split, body FROM reuters_grain",
}
DCM = json.dumps({"kind": "dcm"})
DCM_ALPHA_1 = json.dumps({"kind": "dcm", "alpha": 1})

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - " + what + (": " + detail if detail else ""))


def main():
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    cur.execute("DROP TABLE IF EXISTS nbc_dcm_docs")
    cur.execute("CREATE TABLE nbc_dcm_docs AS " + " UNION ALL ".join(
        """SELECT 'DS'::text AS ds, s.key, s.label, s.split,
                  mod(get_byte(decode(md5(s.key), 'hex'), 0), 2) AS half,
                  0.5 + mod(get_byte(decode(md5(s.key), 'hex'), 1), 7) / 4.0::float8 AS weight,
                  ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), %(re)s, 'g') AS m) AS tokens
           FROM (SRC) s""".replace("DS", ds).replace("SRC", src) for ds, src in SOURCES.items()),
        {"re": TOKEN_RE})
    for ds in SOURCES:
        cur.execute("""SELECT key, label, split, weight, half, tokens FROM nbc_dcm_docs
                       WHERE ds = %s ORDER BY key""", (ds,))
        rows = cur.fetchall()
        train = [r for r in rows if r[2] == "train"]
        test = [r for r in rows if r[2] == "test"]
        for weighted in (False, True):
            name = "%s text[]%s" % (ds, " weighted" if weighted else "")
            wsql = ", weight" if weighted else ""
            ref = DcmNB([collections.Counter(r[5]) for r in train], [r[1] for r in train],
                        [r[3] for r in train] if weighted else None)
            cur.execute("DROP TABLE IF EXISTS nbc_dcm_model")
            cur.execute("""CREATE TABLE nbc_dcm_model AS
                SELECT nb_train(label, tokens%s) AS m FROM nbc_dcm_docs
                WHERE ds = %%s AND split = 'train'""" % wsql, (ds,))

            # parameters: log(beta / s) per (token, class)
            cur.execute("""SELECT f.value, f.label, f.log_prob
                           FROM nbc_dcm_model, nb_feature_log_prob(m, %s) f""", (DCM,))
            worst = 0.0
            n = 0
            for tok, label, lp in cur.fetchall():
                s, beta, beta0 = ref.params[label]
                want = np.log(beta.get(tok, beta0) / s)
                # a difference of logarithms: the relative difference of beta/s
                worst = max(worst, abs(lp - want))
                n += 1
            check(n == len(ref.vocab) * len(ref.classes) and worst <= PARAM_TOL,
                  "%s: %d parameters beta/s within %g relative" % (name, n, PARAM_TOL),
                  "worst %.3g" % worst)

            # posteriors of the test documents, alpha not given and alpha 1
            ref1 = DcmNB([collections.Counter(r[5]) for r in train], [r[1] for r in train],
                         [r[3] for r in train] if weighted else None, alpha=1.0)
            for opts, want_model in ((DCM, ref), (DCM_ALPHA_1, ref1)):
                cur.execute("""SELECT d.key, nb_predict_proba(m, d.tokens, %s)
                               FROM nbc_dcm_docs d, nbc_dcm_model
                               WHERE d.ds = %s AND d.split = 'test' ORDER BY d.key""", (opts, ds))
                got = dict(cur.fetchall())
                worst = 0.0
                for r in test:
                    want = want_model.predict_proba(collections.Counter(r[5]))
                    p = got[r[0]]
                    worst = max(worst, max(abs(p[c] - want[c]) for c in ref.classes))
                check(len(got) == len(test) and worst <= POST_TOL,
                      "%s %s: posteriors of %d test documents within %g" % (name, opts, len(test), POST_TOL),
                      "worst %.3g" % worst)

            # the halves merged: the same posteriors (the histograms merge exactly;
            # fractional weights add up in another order, hence MERGE_TOL)
            cur.execute("DROP TABLE IF EXISTS nbc_dcm_merged")
            cur.execute("""CREATE TABLE nbc_dcm_merged AS SELECT nb_merge(p) AS m FROM (
                               SELECT nb_train(label, tokens""" + wsql + """) AS p FROM nbc_dcm_docs
                               WHERE ds = %s AND split = 'train' GROUP BY half) x""", (ds,))
            cur.execute("""SELECT nb_predict_proba(h.m, d.tokens, %s), nb_predict_proba(w.m, d.tokens, %s)
                           FROM nbc_dcm_docs d, nbc_dcm_model w, nbc_dcm_merged h
                           WHERE d.ds = %s AND d.split = 'test'""", (DCM, DCM, ds))
            pairs = cur.fetchall()
            worst = max(abs(a[c] - b[c]) for a, b in pairs for c in ref.classes)
            tol = MERGE_TOL if weighted else 0.0
            check(worst <= tol, "%s: the model merged from two halves scores within %g" % (name, tol),
                  "worst %.3g" % worst)
    cur.execute("DROP TABLE IF EXISTS nbc_dcm_docs, nbc_dcm_model, nbc_dcm_merged")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
