#!/usr/bin/python3
"""A/B of two builds of nbc: the same queries against two servers, alternately.

    ab.py --a "host=... port=..." --b "host=... port=..." [--reps R] QUERYFILE

For the project's rule on micro-optimizations (one stays only with >= 10% on
its own): build the code with and without it into two private clusters
(e.g. two relocated copies of the server, each with its own nbc), load the
same data into both, and time the queries that exercise it.

QUERYFILE holds one statement per line: a name, a tab, the SQL.  Lines named
"setup" run once on each server first (their tables are replaced).  Each
other query runs once per server to warm up, then R rounds, each timing A
then B or B then A (alternating, so drift on a shared machine falls on
both).  Prints per query the median time ratio B/A and its range over the
rounds, and A's median time.  Settings: jit off, no parallel workers.
test/bench/ab_jsonb.tsv is the A/B of src/pg_jsonb.c's private formats
(issue #27 part 2), test/bench/ab_huge_pages.tsv that of pg_alloc's advice
for huge pages (part 1; run it with nbc.prepared_model_cache = 2GB in the
connection options); results in test/bench/results.md.
"""
import argparse
import statistics
import time

import psycopg2


def connect(dsn):
    c = psycopg2.connect(dsn)
    c.autocommit = True
    cur = c.cursor()
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    return cur


def timed(cur, sql):
    t = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("queries")
    args = ap.parse_args()
    a, b = connect(args.a), connect(args.b)
    lines = [line.rstrip("\n").split("\t", 1) for line in open(args.queries) if "\t" in line]
    for cur in (a, b):
        for name, sql in lines:
            if name == "setup":
                cur.execute(sql)
    queries = [(name, sql) for name, sql in lines if name != "setup"]
    print("| query | B/A median | range | A median s |")
    print("|---|---|---|---|")
    for name, sql in queries:
        timed(a, sql)
        timed(b, sql)
        ratios, ta = [], []
        for r in range(args.reps):
            if r % 2 == 0:
                x = timed(a, sql)
                y = timed(b, sql)
            else:
                y = timed(b, sql)
                x = timed(a, sql)
            ratios.append(y / x)
            ta.append(x)
        print("| %s | %.3f | %.3f-%.3f | %.3f |" % (name, statistics.median(ratios), min(ratios),
                                                  max(ratios), statistics.median(ta)), flush=True)


main()
