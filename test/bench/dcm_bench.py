#!/usr/bin/python3
"""Cost of kind "dcm" against the multinomial scorer, as ratios in one run.

    /usr/bin/python3 test/bench/dcm_bench.py [--reps N]

For vocabularies of 1,000, 10,000 and 100,000 tokens (2 classes, 4,000
documents of 60 tokens drawn from a skewed distribution, generated in SQL):
  - preparation: a one-row query with nbc.prepared_model_cache = 0 (so that
    every query prepares the model: for dcm, fitting every class) against
    the same query with the multinomial kind;
  - scoring: nb_predict over all 4,000 documents, the model kept prepared,
    dcm against multinomial.
Each query runs once to warm up, then --reps rounds alternating the order;
the table shows the median ratio of each round and the range.  Uses the
libpq environment; creates and drops its tables.
"""
import argparse
import statistics
import time

import psycopg2

VOCABS = [1000, 10000, 100000]
DCM = '{"kind": "dcm"}'
MULTI = '{"kind": "multinomial"}'


def timed(cur, sql, args=None):
    t = time.perf_counter()
    cur.execute(sql, args)
    cur.fetchall()
    return time.perf_counter() - t


def ratio(cur, sql_a, sql_b, args, reps):
    """Median and range of time(a) / time(b) over reps alternating rounds."""
    timed(cur, sql_a, args)
    timed(cur, sql_b, args)
    out = []
    for r in range(reps):
        if r % 2 == 0:
            a = timed(cur, sql_a, args)
            b = timed(cur, sql_b, args)
        else:
            b = timed(cur, sql_b, args)
            a = timed(cur, sql_a, args)
        out.append(a / b)
    return statistics.median(out), min(out), max(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    for s in ("jit = off", "max_parallel_workers_per_gather = 0", "client_min_messages = warning"):
        cur.execute("SET " + s)
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    print("| vocabulary | preparing dcm / multinomial | scoring 4,000 rows dcm / multinomial |")
    print("|---|---|---|")
    for V in VOCABS:
        cur.execute("DROP TABLE IF EXISTS nbc_dcm_bench, nbc_dcm_bench_model")
        # token k with probability ~ 1/k (the square of a uniform index), bursty per document
        cur.execute("""CREATE TABLE nbc_dcm_bench AS
            SELECT d AS id, CASE WHEN d %% 2 = 0 THEN 'a' ELSE 'b' END AS label,
                   ARRAY(SELECT 't' || (floor(%(V)s * power(random(), 2 + (d %% 2)))::int
                                        + CASE WHEN i %% 3 = 0 THEN d %% 7 ELSE 0 END)
                         FROM generate_series(1, 60) i) AS tokens
            FROM generate_series(1, 4000) d""", {"V": V})
        cur.execute("""CREATE TABLE nbc_dcm_bench_model AS
            SELECT nb_train(label, tokens) AS m FROM nbc_dcm_bench""")
        cur.execute("SELECT nb_info(m) ->> 'vocabulary' FROM nbc_dcm_bench_model")
        vocab = int(cur.fetchone()[0])
        one = "SELECT nb_predict(m, '{t1,t2}'::text[], %s) FROM nbc_dcm_bench_model"
        cur.execute("SET nbc.prepared_model_cache = 0")
        prep = ratio(cur, one.replace("%s", "'" + DCM + "'"), one.replace("%s", "'" + MULTI + "'"),
                     None, args.reps)
        cur.execute("RESET nbc.prepared_model_cache")
        allrows = ("SELECT count(nb_predict(m, d.tokens, %s)) FROM nbc_dcm_bench d, "
                   "nbc_dcm_bench_model")
        score = ratio(cur, allrows.replace("%s", "'" + DCM + "'"),
                      allrows.replace("%s", "'" + MULTI + "'"), None, args.reps)
        print("| %d | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) |" % ((vocab,) + prep + score))
    cur.execute("DROP TABLE IF EXISTS nbc_dcm_bench, nbc_dcm_bench_model")


if __name__ == "__main__":
    main()
