#!/usr/bin/python3
"""Cost of nb_calibrate against nb_cross_validate with the same folds, as ratios.

    calibrate_bench.py [--reps N]

Uses the libpq environment; needs tables spamassassin, reuters_grain and
fortunes (test/data/load_spamassassin.py, load_reuters.py,
load_fortunes.py).  Makes, per corpus, a table of text[] rows (the tokens
\\w\\w+ of the lowercased body, as the parity suites make them) with a fold
column (a hash of the row's key mod 5), then times, each round in
alternating order:

  cv        nb_cross_validate(..., fold_column => 'fold', grid => '{}'): one
            option set, the defaults, which nb_calibrate also scores under;
  cv grid   the same with the default grid (nb_grid_default: 20 option sets
            for a model of token bags), for scale;
  calibrate nb_calibrate(..., fold_column => 'fold', method => M) for M
            temperature, sigmoid and auto (both fits).

Each round gives the ratio of each calibration to that round's cv; the
report is the median ratio and its spread over the rounds (the machine is
shared: the rounds of one run see the same load), and the median times.
The target of issue #31: a calibration costs at most 2 x one
nb_cross_validate with the same folds.
"""

import argparse
import statistics
import sys
import time

import psycopg2

CORPORA = [
    ("SpamAssassin", "SELECT folder || '/' || msg_id AS key, label, body FROM spamassassin WHERE split = 'train'"),
    ("Reuters Grain", "SELECT lpad(id::text, 6, '0') AS key, label, body FROM reuters_grain WHERE split = 'train'"),
    ("fortunes (101 classes)", "SELECT label || '/' || n AS key, label, body FROM fortunes"),
]

CASES = [
    ("cv", "SELECT count(*) FROM nb_cross_validate('nbc_calbench', 'label', 'tokens', fold_column => 'fold', "
           "grid => '{}')"),
    ("cv grid", "SELECT count(*) FROM nb_cross_validate('nbc_calbench', 'label', 'tokens', fold_column => 'fold')"),
    ("temperature", "SELECT count(*) FROM nb_calibrate('nbc_calbench', 'label', 'tokens', fold_column => 'fold', "
                    "method => 'temperature')"),
    ("sigmoid", "SELECT count(*) FROM nb_calibrate('nbc_calbench', 'label', 'tokens', fold_column => 'fold', "
                "method => 'sigmoid')"),
    ("auto", "SELECT count(*) FROM nb_calibrate('nbc_calbench', 'label', 'tokens', fold_column => 'fold')"),
]


def timed(cur, sql):
    t0 = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    print("| corpus | rows | classes | cv (s) | cv grid / cv | temperature / cv | sigmoid / cv | auto / cv |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for name, source in CORPORA:
        cur.execute("DROP TABLE IF EXISTS nbc_calbench")
        cur.execute("CREATE TABLE nbc_calbench AS SELECT s.key, s.label, "
                    "ARRAY(SELECT m[1] FROM regexp_matches(lower(s.body), '\\w\\w+', 'g') AS m) AS tokens, "
                    "abs(hashtext(s.key)) % 5 AS fold FROM (" + source + ") s")
        cur.execute("VACUUM ANALYZE nbc_calbench")
        cur.execute("SELECT count(*), count(DISTINCT label) FROM nbc_calbench")
        n, classes = cur.fetchone()
        for _, sql in CASES:  # warm-up: caches and the table
            timed(cur, sql)
        times = {c: [] for c, _ in CASES}
        ratios = {c: [] for c, _ in CASES}
        for r in range(args.reps):
            order = CASES if r % 2 == 0 else CASES[::-1]
            got = {c: timed(cur, sql) for c, sql in order}
            for c, _ in CASES:
                times[c].append(got[c])
                ratios[c].append(got[c] / got["cv"])

        def cell(c):
            return "%.2f (%.2f-%.2f)" % (statistics.median(ratios[c]), min(ratios[c]), max(ratios[c]))

        print("| %s | %d | %d | %.3f | %s | %s | %s | %s |"
              % (name, n, classes, statistics.median(times["cv"]), cell("cv grid"), cell("temperature"),
                 cell("sigmoid"), cell("auto")))
        sys.stdout.flush()
        worst = max(worst, *(statistics.median(ratios[c]) for c in ("temperature", "sigmoid", "auto")))
        cur.execute("DROP TABLE nbc_calbench")
    print("\nworst median ratio of a calibration to nb_cross_validate: %.2f (target <= 2)" % worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
