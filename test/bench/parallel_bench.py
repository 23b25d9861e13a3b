#!/usr/bin/python3
"""Parallel training benchmark: nb_train with 0, 1, 2 and 4 parallel workers,
on short documents and on long ones, with where the CPU time goes.

    parallel_bench.py [--reps R] [--short-docs N] [--long-table TABLE]

Runs against the cluster in the PG* environment (PGHOST, PGPORT, PGUSER,
PGDATABASE), in which nbc must be installed; test/bench/bench.py (run.sh)
also runs it on its own data, and its rows then join the benchmark's table
in test/bench/results.md.  Short documents: table short_docs of
gen.make_short (N rows, default 1,000,000, of 10-30 tokens, 15 classes,
Zipf vocabulary of 100,000 tokens), made unless it is there with N rows; a
million rows so that worker start-up and the leader's merge do not dominate
a query of a few tenths of a second.  Long documents: TABLE (bench.py's
resampled SpamAssassin table docs, which standalone runs make from table
spamassassin, test/data/load_spamassassin.py, when it is missing; "none"
leaves them out).

Each query is SELECT nb_info(nb_train(label, tokens)) IS NOT NULL FROM
<table>, with max_parallel_workers_per_gather = 0, 1, 2 or 4 and
parallel_setup_cost = parallel_tuple_cost = 0 (the tables have
parallel_workers = 4), jit off: once each to warm up, then R rounds
alternating the order.  Wall time is the client's; besides it, when the
server runs on this machine, CPU time from /proc: the leader's (the
backend's utime + stime) and the workers' (what the postmaster's cutime +
cstime gain: it reaps the workers; nothing else may start or end in the
cluster meanwhile).  Then the ceiling of each plan on this machine: w + 1
serial trainings at once, in as many connections, each over 1/(w + 1) of
the rows (the work of the w workers and the leader, without passing on or
merging their partial states), against the serial time.  Once per table,
EXPLAIN ANALYZE VERBOSE of the 2-worker
plan gives each participant's partial aggregate and the leader's Finalize
(its combine of the partial states and the flattening of the merged model).
"""
import argparse
import os
import statistics
import sys
import threading
import time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import gen  # noqa: E402

WORKERS = (1, 2, 4)
TARGETS = {"short_docs": 1.5, "docs": 1.6}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_times(pid):
    """(utime + stime, cutime + cstime) of a process in seconds, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # after the command: state ppid ... utime stime cutime cstime are the 12th to 15th
    return ((int(fields[11]) + int(fields[12])) / CLK_TCK,
            (int(fields[13]) + int(fields[14])) / CLK_TCK)


def parent_pid(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


class Cpu:
    """CPU seconds of the leader and of the workers over each timed query."""

    def __init__(self, cur):
        backend = bench.one(cur, "SELECT pg_backend_pid()")[0]
        self.backend = backend
        self.postmaster = parent_pid(backend) if proc_times(backend) else None
        self.seen = {}

    def timed(self, cur, key, sql, workers):
        def run():
            cur.execute("SET max_parallel_workers_per_gather = %d" % workers)
            before = self.sample()
            t = time.perf_counter()
            cur.execute(sql)
            cur.fetchall()
            wall = time.perf_counter() - t
            if before is not None:
                # the postmaster counts a worker once it has reaped it
                time.sleep(0.2)
                after = self.sample()
                self.seen.setdefault(key, []).append(
                    (after[0] - before[0], after[1] - before[1]))
            return wall
        return run

    def sample(self):
        if self.postmaster is None:
            return None
        return proc_times(self.backend)[0], proc_times(self.postmaster)[1]


def participants(cur, sql):
    """Milliseconds of the 2-worker plan: each participant's partial aggregate,
    the Finalize (after the last partial state came), and the whole query."""
    cur.execute("SET max_parallel_workers_per_gather = 2")
    cur.execute("EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) " + sql)
    plan = cur.fetchone()[0][0]
    top = plan["Plan"]
    gather = top["Plans"][0]
    partial = gather["Plans"][0]
    workers = [w["Actual Total Time"] for w in partial.get("Workers", [])]
    leader = partial["Actual Total Time"] * partial["Actual Loops"] - sum(workers)
    return dict(finalize=top["Actual Total Time"] - gather["Actual Total Time"],
                leader=leader, workers=workers, total=plan["Execution Time"],
                launched=gather.get("Workers Launched", 0),
                shape="%s %s over Gather" % (top.get("Partial Mode", ""), top["Node Type"]))


def ceiling(cur, table, reps):
    """The most w workers with the leader can gain on this machine: seconds of
    w + 1 serial trainings at once, in w + 1 connections, each over the first
    1/(w + 1) of the table's rows (in a table of its own, made here and
    dropped after), before any partial state is passed on or merged.
    Returns {w: [seconds per round]}."""
    rows = bench.one(cur, "SELECT count(*) FROM " + table)[0]
    result = {}
    for w in WORKERS:
        part = "%s_ceiling_%d" % (table, w + 1)
        cur.execute("DROP TABLE IF EXISTS " + part)
        cur.execute("CREATE TABLE %s AS SELECT label, tokens FROM %s LIMIT %d"
                    % (part, table, rows // (w + 1)))
        cur.execute("VACUUM ANALYZE " + part)
        conns = [bench.connect() for _ in range(w + 1)]
        curs = [c.cursor() for c in conns]
        sql = "SELECT nb_info(nb_train(label, tokens)) IS NOT NULL FROM " + part

        def one(c):
            c.execute("SET max_parallel_workers_per_gather = 0")
            c.execute(sql)
            c.fetchall()

        def together():
            threads = [threading.Thread(target=one, args=(c,)) for c in curs]
            t = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            return time.perf_counter() - t
        together()
        result[w] = [together() for _ in range(reps)]
        for c in conns:
            c.close()
        cur.execute("DROP TABLE " + part)
    return result


def compare(cur, reps, tables):
    """tables: [(table, description)].  Returns (comparisons, times, notes):
    comparisons as (measure, definition, numerator times, denominator times,
    target text, pass test), times as {query: [seconds per round]}."""
    for k, v in bench.SETTINGS + [("parallel_setup_cost", "0"), ("parallel_tuple_cost", "0")]:
        cur.execute("SET %s = '%s'" % (k, v))
    comparisons, all_times, notes = [], {}, []
    for table, description in tables:
        cur.execute("ALTER TABLE %s SET (parallel_workers = %d)" % (table, max(WORKERS)))
        sql = "SELECT nb_info(nb_train(label, tokens)) IS NOT NULL FROM " + table
        cpu = Cpu(cur)
        keys = ["serial"] + ["%d workers" % w if w > 1 else "1 worker" for w in WORKERS]
        cases = {k: cpu.timed(cur, k, sql, w) for k, w in zip(keys, (0,) + WORKERS)}
        times = bench.measure("parallel, %s" % table, cases, reps)
        for k, v in times.items():
            all_times["parallel training, %s: %s" % (table, k)] = v
        for k, w in zip(keys[1:], WORKERS):
            target = TARGETS.get(table) if w == 2 else None
            comparisons.append((
                "training on %s: serial vs %s (and the leader)" % (description, k),
                "serial / parallel", times["serial"], times[k],
                None if target is None else ">= %g" % target,
                None if target is None else (lambda x, t=target: x >= t)))
        if cpu.postmaster is not None:
            # the warm-up ran first: the last reps samples are the timed rounds
            serial = [a + b for a, b in cpu.seen["serial"][-reps:]]
            for k in keys[1:]:
                total = [a + b for a, b in cpu.seen[k][-reps:]]
                leader = [a for a, _ in cpu.seen[k][-reps:]]
                comparisons.append((
                    "CPU time of training on %s, %s: leader and workers together vs serial"
                    % (description, k), "parallel CPU / serial CPU", total, serial, None, None))
                notes.append("%s, %s: CPU %.2f s (leader %.2f s, workers %.2f s) against "
                             "%.2f s serial (medians of %d rounds)."
                             % (table, k, statistics.median(total), statistics.median(leader),
                                statistics.median(total) - statistics.median(leader),
                                statistics.median(serial), reps))
        bound = ceiling(cur, table, reps)
        for k, w in zip(keys[1:], WORKERS):
            comparisons.append((
                "the ceiling of %s on this machine: serial training on %s vs %d serial "
                "trainings of 1/%d of the rows at once, before any merge"
                % (k, description, w + 1, w + 1),
                "serial / together", times["serial"], bound[w], None, None))
        p = participants(cur, sql)
        notes.append("%s, 2 workers (%s, %d launched), EXPLAIN ANALYZE once: partial "
                     "aggregates %s ms (leader %.0f); Finalize %.0f ms of %.0f ms (%.0f%%)."
                     % (table, p["shape"], p["launched"],
                        ", ".join("%.0f" % x for x in p["workers"]), p["leader"],
                        p["finalize"], p["total"], 100 * p["finalize"] / p["total"]))
        cur.execute("SET max_parallel_workers_per_gather = 0")
    return comparisons, all_times, notes


def short_table(connect, cur, ndocs):
    """short_docs with ndocs rows, made unless it is there."""
    if bench.one(cur, "SELECT to_regclass('short_docs') IS NOT NULL")[0] and \
            bench.one(cur, "SELECT count(*) FROM short_docs")[0] == ndocs:
        return
    bench.log("parallel: making short_docs (%d rows)" % ndocs)
    gen.make_short(connect, ndocs, 7)


def long_table(connect, cur, table):
    """bench.py's long documents (docs), made as bench.py makes them if missing."""
    if bench.one(cur, "SELECT to_regclass(%s) IS NOT NULL", (table,))[0]:
        return
    if not bench.one(cur, "SELECT to_regclass('spamassassin') IS NOT NULL")[0]:
        sys.exit("parallel_bench.py: no table %s and no table spamassassin to make it from "
                 "(test/data/load_spamassassin.py)" % table)
    bench.log("parallel: making %s from spamassassin" % table)
    gen.make_src(connect)
    corpus = gen.RealCorpus(connect())
    gen.load_sample(connect, table, gen.Sample(corpus, corpus.labels, 200000, 1), corpus.literals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--short-docs", type=int, default=1000000)
    ap.add_argument("--long-table", default="docs")
    args = ap.parse_args()
    conn = bench.connect()
    cur = conn.cursor()
    short_table(bench.connect, cur, args.short_docs)
    tables = [("short_docs", "%s short documents" % "{:,}".format(args.short_docs))]
    if args.long_table != "none":
        long_table(bench.connect, cur, args.long_table)
        tables.append((args.long_table, "long documents (%s)" % args.long_table))
    comparisons, _, notes = compare(cur, args.reps, tables)
    res = bench.Results()
    for c in comparisons:
        res.ratio(*c)
    rows = [[m, d, bench.fmt_ratio(statistics.median(r)),
             "%s-%s" % (bench.fmt_ratio(min(r)), bench.fmt_ratio(max(r))), t,
             "" if ok is None else ("PASS" if ok else "MISS")]
            for m, d, r, t, ok in res.rows]
    print(bench.table_md(["comparison", "ratio", "median", "spread (min-max)", "target",
                          "result"], rows))
    print()
    print("load average %s at the start, %s at the end" % (bench.LOAD_START, bench.loadavg()))
    for n in notes:
        print("- " + n)


if __name__ == "__main__":
    main()
