#!/usr/bin/python3
"""A/B of two builds of nbc: the same queries against two servers, alternately.

    ab.py --a "host=... port=..." --b "host=... port=..." [--reps R] [--cpu [--runs N]] QUERYFILE

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
With --cpu a time is the server backend's CPU time (user + system, from
/proc/PID/stat: the servers must run on this machine and their processes
be readable) over --runs executions of the query: on a machine shared with
other work it moves far less than wall time.
test/bench/ab_jsonb.tsv is the A/B of src/pg_jsonb.c's private formats
(issue #27 part 2), test/bench/ab_metrics_keys.tsv that of nb_metrics'
reading of its rows' objects of probabilities (the same part),
test/bench/ab_huge_pages.tsv that of pg_alloc's advice for huge pages
(part 1; run it with nbc.prepared_model_cache = 2GB in the connection
options), test/bench/ab_token_refs.tsv that of the token batch's references
to stable tokens (issue #28; tables spamassassin and text_bench.py's
tb_lines, nbc.unknown_features = ignore in the connection options),
test/bench/ab_progress.tsv that of the progress count in nb_train's and
nb_grid_metrics' transitions (issue #42 item 7); results in
test/bench/results.md.
"""
import argparse
import os
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


def backend_cpu(pid):
    """The backend's user + system CPU seconds so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timer(cur, cpu, runs):
    """A function timing a query on cur: wall seconds, or with cpu the
    backend's CPU seconds over runs executions."""
    if not cpu:
        def timed(sql):
            t = time.perf_counter()
            cur.execute(sql)
            cur.fetchall()
            return time.perf_counter() - t
        return timed
    cur.execute("SELECT pg_backend_pid()")
    pid = cur.fetchone()[0]

    def timed_cpu(sql):
        t = backend_cpu(pid)
        for _ in range(runs):
            cur.execute(sql)
            cur.fetchall()
        return backend_cpu(pid) - t
    return timed_cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cpu", action="store_true", help="time the backends' CPU, not the wall clock")
    ap.add_argument("--runs", type=int, default=3, help="executions per time with --cpu")
    ap.add_argument("queries")
    args = ap.parse_args()
    a, b = connect(args.a), connect(args.b)
    time_a, time_b = timer(a, args.cpu, args.runs), timer(b, args.cpu, args.runs)
    lines = [line.rstrip("\n").split("\t", 1) for line in open(args.queries) if "\t" in line]
    for cur in (a, b):
        for name, sql in lines:
            if name == "setup":
                cur.execute(sql)
    queries = [(name, sql) for name, sql in lines if name != "setup"]
    print("| query | B/A median | range | A median %s |" % ("CPU s" if args.cpu else "s"))
    print("|---|---|---|---|")
    for name, sql in queries:
        time_a(sql)
        time_b(sql)
        ratios, ta = [], []
        for r in range(args.reps):
            if r % 2 == 0:
                x = time_a(sql)
                y = time_b(sql)
            else:
                y = time_b(sql)
                x = time_a(sql)
            ratios.append(y / x)
            ta.append(x)
        print("| %s | %.3f | %.3f-%.3f | %.3f |" % (name, statistics.median(ratios), min(ratios),
                                                  max(ratios), statistics.median(ta)), flush=True)


main()
