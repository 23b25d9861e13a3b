#!/usr/bin/python3
"""Accuracy of Rennie et al.'s transformed weight-normalized complement naive
Bayes (TWCNB) done in SQL, beside nbc's other event models, on held-out splits.

    /usr/bin/python3 test/bench/twcnb.py [--markdown]

Connects through the libpq environment variables (PGHOST, PGPORT, ...) to a
database with nbc installed (it runs CREATE EXTENSION IF NOT EXISTS nbc) and
loads the corpora the parity suite uses when their tables are missing
(test/data/load_spamassassin.py, test/data/load_reuters.py).  20 Newsgroups
is not on this machine (no Debian package ships it and nothing may be
downloaded), so it is not measured.

Per corpus, tokens are made in SQL as in test/parity/parity.py
(regexp_matches(lower(body), '\\w\\w+')).  The recipe is the README's
("Recipe: Rennie's transformed weight-normalized complement NB"), in two SQL
passes over the training rows:
  1. document frequency df_j and the number N of training documents:
     idf_j = ln(N / df_j);
  2. each document (training and test) as a jsonb bag {token: weight} with
     weight log(1 + tf) * idf_j over the training vocabulary, divided by the
     bag's Euclidean length; trained with nb_train and scored with
     {"kind": "complement", "norm": true}.
Beside it, the raw token counts scored as multinomial, Bernoulli,
complement and complement with norm, and the transformed bags as multinomial
and complement without norm (alpha 1 throughout).

Reports accuracy and, where the posterior is a calibrated probability
(multinomial, Bernoulli), the log loss -mean(ln p(true class)); complement
scores are not probabilities of the data (with norm they are close to
uniform), so their log loss is not shown.  Also checks the SQL recipe
against an independent numpy transform of the exported token counts fed to
scikit-learn's ComplementNB(norm=True): the same labels and posteriors
within 1e-9.  Prints "ok - ..." / "not ok - ..." lines, the table, and
"N passed, N failed"; exits 1 if a check failed.
"""

import collections
import json
import os
import subprocess
import sys

import numpy as np
import psycopg2
import psycopg2.extras
import scipy.sparse as sp
from sklearn.naive_bayes import ComplementNB

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
PY = os.environ.get("NBC_PYTHON", "/usr/bin/python3")
TOL = 1e-9

CORPORA = collections.OrderedDict([
    ("SpamAssassin", dict(table="spamassassin", loader="load_spamassassin.py",
                          source="SELECT folder || '/' || msg_id AS key, label, split, body FROM spamassassin")),
    ("Reuters-21578 Grain", dict(table="reuters_grain", loader="load_reuters.py",
                                 source="SELECT lpad(id::text, 6, '0') AS key, label, split, body FROM reuters_grain")),
])

# the recipe's two passes, for the table twcnb_docs(key, label, split, tokens)
RECIPE = """
CREATE TEMP TABLE twcnb_idf (token text PRIMARY KEY, idf float8);
INSERT INTO twcnb_idf
SELECT token, ln((SELECT count(*) FROM twcnb_docs WHERE split = 'train') / count(*)::float8)
FROM twcnb_docs, LATERAL (SELECT DISTINCT unnest(tokens) AS token) AS t
WHERE split = 'train' AND token IS NOT NULL
GROUP BY token;
ANALYZE twcnb_idf;
CREATE OR REPLACE FUNCTION pg_temp.twcnb_bag(tokens text[]) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_object_agg(token, w / norm), '{}')
  FROM (SELECT token, w, sqrt(sum(w * w) OVER ()) AS norm
        FROM (SELECT token, ln(1 + count(*)) * i.idf AS w
              FROM unnest(tokens) AS token JOIN twcnb_idf i USING (token)
              GROUP BY token, i.idf) AS tf) AS x
  WHERE w > 0
$$;
ALTER TABLE twcnb_docs ADD COLUMN bag jsonb;
UPDATE twcnb_docs SET bag = jsonb_build_object('body', pg_temp.twcnb_bag(tokens));
"""

KINDS = [
    ("multinomial", "raw counts", "tokens", {"kind": "multinomial"}, True),
    ("bernoulli", "raw counts", "tokens", {"kind": "bernoulli"}, True),
    ("complement", "raw counts", "tokens", {"kind": "complement"}, False),
    ("complement + norm", "raw counts", "tokens", {"kind": "complement", "norm": True}, False),
    ("multinomial", "log(1 + tf) · idf, length 1", "bag", {"kind": "multinomial"}, True),
    ("complement", "log(1 + tf) · idf, length 1", "bag", {"kind": "complement"}, False),
    ("TWCNB: complement + norm", "log(1 + tf) · idf, length 1", "bag", {"kind": "complement", "norm": True}, False),
]

passed = failed = 0


def check(ok, desc, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - %s%s" % (desc, " (%s)" % detail if detail else ""))
    else:
        failed += 1
        print("not ok - %s: %s" % (desc, detail))
    sys.stdout.flush()


def ensure_loaded(cur, spec):
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (spec["table"],))
    if cur.fetchone()[0]:
        return
    out = subprocess.run([PY, os.path.join(DATA, spec["loader"])], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (spec["loader"], out.stderr.strip()[-500:]))


def sklearn_twcnb(rows):
    """The recipe's transform in numpy from the exported tokens, then
    scikit-learn's ComplementNB(norm=True): {key: (label, {class: proba})}
    for the test rows."""
    train = [r for r in rows if r[2] == "train"]
    test = [r for r in rows if r[2] == "test"]
    df = collections.Counter(t for r in train for t in set(r[3]))
    n = len(train)
    # a token in every training document has idf 0: no weight anywhere, not in nbc's vocabulary
    vocab = sorted(t for t, d in df.items() if np.log(n / d) > 0)
    col = {t: j for j, t in enumerate(vocab)}
    idf = np.array([np.log(n / df[t]) for t in vocab])

    def matrix(part):
        data, ri, ci = [], [], []
        for i, r in enumerate(part):
            for t, c in collections.Counter(r[3]).items():
                if t in col:
                    data.append(np.log1p(c) * idf[col[t]])
                    ri.append(i)
                    ci.append(col[t])
        X = sp.csr_matrix((data, (ri, ci)), shape=(len(part), len(vocab)))
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1
        return sp.diags(1 / norms) @ X

    est = ComplementNB(alpha=1.0, norm=True).fit(matrix(train), [r[1] for r in train])
    P = est.predict_proba(matrix(test))
    pred = est.predict(matrix(test))
    return {r[0]: (pred[i], dict(zip(est.classes_, P[i]))) for i, r in enumerate(test)}


def run_corpus(conn, name, spec):
    cur = conn.cursor()
    ensure_loaded(cur, spec)
    cur.execute("DROP TABLE IF EXISTS twcnb_docs, twcnb_idf")
    cur.execute("""CREATE TEMP TABLE twcnb_docs AS
        SELECT s.key, s.label, s.split,
               ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), '\\w\\w+', 'g') AS m) AS tokens
        FROM (""" + spec["source"] + ") s")
    cur.execute(RECIPE)
    cur.execute("""CREATE TEMP TABLE twcnb_models AS
        SELECT nb_train(label, tokens) AS raw,
               nb_train(label, bag) AS bag
        FROM twcnb_docs WHERE split = 'train'""")
    cur.execute("SELECT count(*) FILTER (WHERE split = 'train'), count(*) FILTER (WHERE split = 'test') FROM twcnb_docs")
    ntrain, ntest = cur.fetchone()
    results = []
    for kind, features, doc_col, opts, calibrated in KINDS:
        column = "raw" if doc_col == "tokens" else "bag"
        cur.execute("""SELECT avg((nb_predict(m.""" + column + ", d." + doc_col + """, %s::jsonb) = d.label)::int),
                              -avg((nb_predict_log_proba(m.""" + column + ", d." + doc_col + """, %s::jsonb)
                                    ->> d.label)::float8)
                       FROM twcnb_docs d, twcnb_models m WHERE d.split = 'test'""",
                    (psycopg2.extras.Json(opts), psycopg2.extras.Json(opts)))
        acc, loss = cur.fetchone()
        results.append((name, kind, features, float(acc), float(loss) if calibrated and loss is not None else None))

    # the recipe against numpy + scikit-learn
    cur.execute("SELECT key, label, split, tokens FROM twcnb_docs ORDER BY key")
    ref = sklearn_twcnb(cur.fetchall())
    cur.execute("""SELECT d.key, nb_predict(m.bag, d.bag, '{"kind": "complement", "norm": true}'),
                          nb_predict_proba(m.bag, d.bag, '{"kind": "complement", "norm": true}')::text
                   FROM twcnb_docs d, twcnb_models m WHERE d.split = 'test'""")
    err, labels = 0.0, 0
    got = cur.fetchall()
    for key, pred, proba in got:
        p = json.loads(proba)
        labels += pred != ref[key][0]
        err = max([err] + [abs(float(p[c]) - ref[key][1][c]) for c in ref[key][1]])
    check(err <= TOL and labels == 0 and len(got) == len(ref),
          "%s: the SQL recipe equals numpy + ComplementNB(norm=True)" % name,
          "%d test documents, %d labels differ, max abs err of probabilities %.3g" % (len(got), labels, err))
    cur.execute("DROP TABLE twcnb_models, twcnb_docs, twcnb_idf")
    return results, ntrain, ntest


def main():
    markdown = "--markdown" in sys.argv[1:]
    conn = psycopg2.connect("")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SET client_min_messages = warning")
        cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    table = []
    for name, spec in CORPORA.items():
        try:
            results, ntrain, ntest = run_corpus(conn, name, spec)
        except (psycopg2.Error, RuntimeError) as e:
            check(False, name, str(e).strip().splitlines()[0])
            continue
        print("# %s: %d training, %d test documents" % (name, ntrain, ntest))
        table += results
    if markdown:
        print("Corpus | Model | Features | Accuracy | Log loss")
        print("--- | --- | --- | --- | ---")
        for name, kind, features, acc, loss in table:
            print("%s | %s | %s | %.4f | %s" % (name, kind, features, acc, "—" if loss is None else "%.4f" % loss))
    else:
        for name, kind, features, acc, loss in table:
            print("# %-20s %-26s %-30s accuracy %.4f  log loss %s"
                  % (name, kind, features, acc, "-" if loss is None else "%.4f" % loss))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
