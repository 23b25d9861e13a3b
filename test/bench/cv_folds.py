#!/usr/bin/python3
"""Cross-validation with many folds: time and peak backend memory of
nb_cross_validate as the number of folds grows.

    cv_folds.py [--folds 5,20,100] [--table cv_bench_spam] [--function nb_cross_validate]

Runs against the cluster in the PG* environment, in which nbc must be
installed, on a table of (label, tokens) such as cv_bench.py's
cv_bench_spam (the SpamAssassin messages; run cv_bench.py once to make it).
For each number of folds, in a new connection (so that the backend's peak
memory is this call's), SELECT count(*) FROM <function>(<table>, 'label',
'tokens', folds => N, grid => '{"kind": "multinomial"}'), once: the
client's wall time, and the backend's peak resident memory (VmHWM of
/proc/<pid>/status; "n/a" when the server is not on this machine).
--function names another function of the same signature, for example a copy
of an earlier release's nb_cross_validate in another schema, to compare.
"""
import argparse
import time

import psycopg2


def peak_rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def one(function, table, folds):
    conn = psycopg2.connect("")
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute("SET jit = off")
        cur.execute("SELECT pg_backend_pid()")
        pid = cur.fetchone()[0]
        start = time.perf_counter()
        cur.execute("SELECT count(*) FROM " + function + "(%s, 'label', 'tokens', folds => %s, "
                    "grid => '{\"kind\": \"multinomial\"}')", (table, folds))
        cur.fetchall()
        return time.perf_counter() - start, peak_rss_mb(pid)
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folds", default="5,20,100")
    ap.add_argument("--table", default="cv_bench_spam")
    ap.add_argument("--function", default="nb_cross_validate")
    args = ap.parse_args()
    print("| function | folds | seconds | backend peak RSS (MB) |")
    print("|---|---|---|---|")
    for folds in (int(f) for f in args.folds.split(",")):
        seconds, rss = one(args.function, args.table, folds)
        print("| %s | %d | %.2f | %s |" % (args.function, folds, seconds, "n/a" if rss is None else rss))


if __name__ == "__main__":
    main()
