#!/usr/bin/python3
"""What choosing EM's lambda (and components) by cross-validation costs, against the EM runs it stands for.

    em_cv_cost.py [--fraction 0.05] [--iterations N] [--folds N] [--lambdas 0,0.01,...]
                  [--components 1,2,4] [--reps N] [--corpora LIST]

Connects with the libpq environment variables to a database with nbc and
the tables of test/data/load_spamassassin.py, load_reuters.py and
load_fortunes.py (a missing one is skipped and said so); the corpora, their
training splits and the rows that keep their labels (seed 0) are
em_accuracy.py's.  Per corpus and round, in the same run:

  cv       nb_cross_validate_em with the grid --lambdas (L lambdas; default
           nb_cross_validate_em's own, 0, 0.01, 0.03, 0.1, 0.3, 1), the
           component counts --components (C of them; default 1: lambda
           only; "1,2,4" is what "components": "auto" tries) and --folds
           folds (K): L x C x K EM runs, each on the rows outside a fold;
  auto     nb_train_em with "lambda" and "components" that grid: that choice
           and one more EM run with the pair chosen on every row;
  calls    nb_train_em called L x C x K times on every training row, K times
           per pair of lambda and components of the grid: the EM runs the
           choice stands for (a run of k components costs more than one of 1).

Prints a Markdown table: the median seconds of each over the rounds and the
ratios cv / calls and auto / calls (#43's target: at most 2).
"""

import argparse
import json
import statistics
import sys
import time

import psycopg2

from em_accuracy import CORPORA, log, one_missing


def timed(cur, sql, args=None):
    start = time.perf_counter()
    cur.execute(sql, args)
    cur.fetchall()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--lambdas", default="0,0.01,0.03,0.1,0.3,1")
    ap.add_argument("--components", default="1")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--corpora", default="spamassassin,reuters_grain,fortunes")
    args = ap.parse_args()
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET jit = off")
    em = {"iterations": args.iterations, "tolerance": 1e-6}
    print("| corpus | labelled rows | unlabelled rows | λ × k × folds | cv (s) | auto (s) | calls (s) "
          "| cv / calls | auto / calls |")
    print("|---|---|---|---|---|---|---|---|---|")
    for source, name, select in CORPORA:
        if source not in args.corpora.split(","):
            continue
        if one_missing(cur, source):
            log("em_cv_cost: no table %s: skipped" % source)
            continue
        keep = "(hashtext('0/' || k) & 1048575) < %d" % int(round(args.fraction * 1048576))
        cur.execute("DROP TABLE IF EXISTS em_cost")
        cur.execute("CREATE TABLE em_cost AS SELECT k, CASE WHEN %s THEN label END AS label, tokens "
                    "FROM (%s) s WHERE split = 'train'" % (keep, select))
        cur.execute("SELECT count(label), count(*) - count(label) FROM em_cost")
        labelled, unlabelled = cur.fetchone()
        grid = [float(x) for x in args.lambdas.split(",")]
        ks = [int(x) for x in args.components.split(",")]
        t = {"cv": [], "auto": [], "calls": []}
        for r in range(args.reps):
            t["cv"].append(timed(cur, "SELECT * FROM nb_cross_validate_em('em_cost', 'label', 'tokens', %s, "
                                      "%s::float8[], options => %s, component_counts => %s::integer[])",
                                (args.folds, grid, json.dumps(em), ks)))
            t["auto"].append(timed(cur, "SELECT nb_train_em('em_cost', 'label', 'tokens', %s) IS NULL",
                                   (json.dumps(dict(em, **{"lambda": grid, "folds": args.folds},
                                                    **({} if ks == [1] else {"components": ks}))),)))
            calls = 0.0
            for lam in grid:
                for k in ks:
                    for _ in range(args.folds):
                        calls += timed(cur, "SELECT nb_train_em('em_cost', 'label', 'tokens', %s) IS NULL",
                                       (json.dumps(dict(em, **{"lambda": lam, "components": k})),))
            t["calls"].append(calls)
            log("em_cv_cost: %s round %d: cv %.2f s, auto %.2f s, calls %.2f s" % (
                name, r, t["cv"][-1], t["auto"][-1], calls))
        med = {key: statistics.median(v) for key, v in t.items()}
        print("| %s | %d | %d | %d × %d × %d | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            name, labelled, unlabelled, len(grid), len(ks), args.folds, med["cv"], med["auto"], med["calls"],
            med["cv"] / med["calls"], med["auto"] / med["calls"]))
        sys.stdout.flush()
        cur.execute("DROP TABLE em_cost")
    conn.close()


if __name__ == "__main__":
    main()
