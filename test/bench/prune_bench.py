#!/usr/bin/python3
"""Accuracy, size and scoring speed of pruned models against k (nb_prune top_k).

    /usr/bin/python3 test/bench/prune_bench.py [--repeats N] [--ks 100,300,...]

Needs the tables of test/data/load_spamassassin.py and load_reuters.py (run
them first, or test/parity/run.sh, which loads both) and a database reachable
through the libpq environment variables with nbc installed.  Documents are
tokenized as the parity suite does (lower-case \\w\\w+ runs); each data set's
own train/test split: the model is trained on train, pruned to the k tokens
of highest mutual information for k from 100 to the whole vocabulary, and
scored on test.

Prints a Markdown table per data set: k, the model's bytes relative to the
unpruned model, multinomial and Bernoulli accuracy on the test split, and
the time to score the test split (repeated to about 10000 documents per
query) relative to the unpruned model, each the best of --repeats runs
interleaved with the unpruned model's in the same run (never an absolute
time), and the same for one query that predicts a single document with a
model not prepared before (nbc.prepared_model_cache = 0: the model is read,
validated and indexed in the query, which is what a smaller model saves
most).
"""

import argparse
import sys
import time

import psycopg2

DATASETS = [
    ("SpamAssassin", "SELECT label, body, split FROM spamassassin"),
    ("Reuters grain", "SELECT label, body, split FROM reuters_grain"),
]
TOKEN_RE = r"\w\w+"
SCORED = 10000


def query(cur, sql, args=None):
    cur.execute(sql, args)
    return cur.fetchall()


def score_seconds(cur, model_sql, args, kind, rounds):
    """Seconds to predict every test document `rounds` times (the model stays prepared
    between calls, so this is scoring alone)."""
    t0 = time.perf_counter()
    cur.execute("SELECT count(nb_predict(m, d.tokens, %s::jsonb)) FROM pb_docs d, (" + model_sql +
                ") mm(m), generate_series(1, %s) r WHERE d.split = 'test'", (kind,) + args + (rounds,))
    cur.fetchall()
    return time.perf_counter() - t0


def cold_seconds(cur, model_sql, args, kind):
    """Seconds of one query predicting one document with a model not prepared before
    (nbc.prepared_model_cache = 0: read, validated and indexed in the query)."""
    cur.execute("SET nbc.prepared_model_cache = 0")
    # the lower limit frees the cache at the next scoring call: make that one of its own
    cur.execute("SELECT nb_predict(nb_train('a', ARRAY['x']), ARRAY['x'])")
    t0 = time.perf_counter()
    cur.execute("SELECT nb_predict(m, d.tokens, %s::jsonb) FROM (" + model_sql + ") mm(m), "
                "(SELECT tokens FROM pb_docs WHERE split = 'test' LIMIT 1) d", (kind,) + args)
    cur.fetchall()
    seconds = time.perf_counter() - t0
    cur.execute("RESET nbc.prepared_model_cache")
    return seconds


def accuracy(cur, model_sql, args, kind):
    return query(cur, "SELECT avg((nb_predict(m, d.tokens, %s::jsonb) = d.label)::int) FROM pb_docs d, (" +
                 model_sql + ") mm(m) WHERE d.split = 'test'", (kind,) + args)[0][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ks", default="100,300,1000,3000,10000,30000")
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    multinomial = '{"kind": "multinomial"}'
    bernoulli = '{"kind": "bernoulli"}'
    for name, source in DATASETS:
        cur.execute("DROP TABLE IF EXISTS pb_docs, pb_models")
        cur.execute("CREATE TABLE pb_docs AS SELECT s.label, s.split, "
                    "ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), %s, 'g') AS m) AS tokens "
                    "FROM (" + source + ") s", (TOKEN_RE,))
        cur.execute("CREATE TABLE pb_models (k bigint PRIMARY KEY, m nb_model)")
        cur.execute("INSERT INTO pb_models SELECT -1, nb_train(label, tokens) FROM pb_docs WHERE split = 'train'")
        vocab, full_bytes = query(cur, "SELECT (nb_info(m) ->> 'vocabulary')::bigint, (nb_info(m) ->> 'bytes')::bigint "
                                       "FROM pb_models WHERE k = -1")[0]
        n_train, n_test = query(cur, "SELECT count(*) FILTER (WHERE split = 'train'), "
                                     "count(*) FILTER (WHERE split = 'test') FROM pb_docs")[0]
        sizes = [k for k in ks if k < vocab] + [vocab]
        for k in sizes:
            cur.execute("INSERT INTO pb_models SELECT %s, nb_prune(m, jsonb_build_object('top_k', %s)) "
                        "FROM pb_models WHERE k = -1", (k, k))
        full = "SELECT m FROM pb_models WHERE k = -1"
        pruned = "SELECT m FROM pb_models WHERE k = %s"
        # about SCORED documents per timed query, so that a query outlasts the noise
        rounds = max(1, -(-SCORED // n_test))
        # warm up: prepare every model once
        for k in sizes:
            score_seconds(cur, pruned, (k,), multinomial, 1)
        score_seconds(cur, full, (), multinomial, 1)
        print("\n%s: %d training and %d test documents, vocabulary %d, unpruned model %d bytes\n" % (
            name, n_train, n_test, vocab, full_bytes))
        print("k | bytes (ratio) | multinomial accuracy | Bernoulli accuracy | scoring time (ratio) | "
              "first prediction (ratio)")
        print("--- | --- | --- | --- | --- | ---")
        for k in sizes:
            bytes_k = query(cur, "SELECT (nb_info(m) ->> 'bytes')::bigint FROM pb_models WHERE k = %s", (k,))[0][0]
            t_k, t_full, c_k, c_full = [], [], [], []
            for _ in range(args.repeats):
                t_k.append(score_seconds(cur, pruned, (k,), multinomial, rounds))
                t_full.append(score_seconds(cur, full, (), multinomial, rounds))
                c_k.append(cold_seconds(cur, pruned, (k,), multinomial))
                c_full.append(cold_seconds(cur, full, (), multinomial))
            print("%s | %.3f | %.4f | %.4f | %.2f | %.3f" % (
                "%d (all)" % k if k == vocab else k, bytes_k / full_bytes,
                accuracy(cur, pruned, (k,), multinomial), accuracy(cur, pruned, (k,), bernoulli),
                min(t_k) / min(t_full), min(c_k) / min(c_full)))
            sys.stdout.flush()
        cur.execute("DROP TABLE pb_docs, pb_models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
