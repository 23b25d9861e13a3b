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
the table shows the median ratio of each round and the range.  A round's
time is the server backend's CPU time (utime + stime from
/proc/<pid>/stat) when the server runs on this machine, which other
processes' load disturbs far less than the wall clock; else the wall clock.
Each query repeats in a round until it has taken about 0.5 s (CPU time
counts in clock ticks).  Uses the libpq environment; creates and drops its
tables.
"""
import argparse
import os
import statistics
import time

import psycopg2

VOCABS = [1000, 10000, 100000]
DCM = '{"kind": "dcm"}'
MULTI = '{"kind": "multinomial"}'


ROUND_SECONDS = 0.5


def clock(cur):
    """A function giving the backend's CPU seconds, or the wall clock if /proc cannot tell."""
    cur.execute("SELECT pg_backend_pid()")
    path = "/proc/%d/stat" % cur.fetchone()[0]
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu():
        # fields after the command name (which may hold spaces): utime and stime are 14 and 15
        fields = open(path).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks
    try:
        cpu()
        return cpu
    except (OSError, IndexError, ValueError):
        return time.perf_counter


def timed(cur, now, sql, n):
    t = now()
    for _ in range(n):
        cur.execute(sql)
        cur.fetchall()
    return now() - t


def ratio(cur, now, sql_a, sql_b, reps):
    """Median and range of time(a) / time(b) over reps alternating rounds."""
    n = max(1, round(ROUND_SECONDS / max(timed(cur, time.perf_counter, sql_a, 1),
                                         timed(cur, time.perf_counter, sql_b, 1), 1e-6)))
    out = []
    for r in range(reps):
        if r % 2 == 0:
            a = timed(cur, now, sql_a, n)
            b = timed(cur, now, sql_b, n)
        else:
            b = timed(cur, now, sql_b, n)
            a = timed(cur, now, sql_a, n)
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
    now = clock(cur)
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
        prep = ratio(cur, now, one.replace("%s", "'" + DCM + "'"), one.replace("%s", "'" + MULTI + "'"),
                     args.reps)
        cur.execute("RESET nbc.prepared_model_cache")
        allrows = ("SELECT count(nb_predict(m, d.tokens, %s)) FROM nbc_dcm_bench d, "
                   "nbc_dcm_bench_model")
        score = ratio(cur, now, allrows.replace("%s", "'" + DCM + "'"),
                      allrows.replace("%s", "'" + MULTI + "'"), args.reps)
        print("| %d | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) |" % ((vocab,) + prep + score))
    cur.execute("DROP TABLE IF EXISTS nbc_dcm_bench, nbc_dcm_bench_model")


if __name__ == "__main__":
    main()
