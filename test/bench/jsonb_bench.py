#!/usr/bin/python3
"""Numbers in jsonb: training and scoring on Gaussian features given as jsonb,
as ratios to the same values given as float8[] in the same run.

    jsonb_bench.py [--rows N] [--reps R] [--keep]

Runs against the cluster in the PG* environment, in which nbc must be
installed.  Makes table bm_jsonb (dropped at the end unless --keep; reused
when it has N rows): N rows of a label (5 classes), features, a jsonb object
of four numbers as real data has them (x: 3 decimals, y: a float8 in
shortest form, z: an integer up to a million, w: a negative float8), and vec,
the same four values as float8[].  Queries, each once to warm up and then R
rounds in alternating order: training, nb_info(nb_train(label, features))
against the same on vec; scoring, count(nb_predict(model, features)) over
every row with the model trained on the same input, against the same on
vec.  Settings: jit = off, no parallel workers.  The jsonb forms read each
number from numeric's digits; float8[] needs no conversion, so the ratios
are what reading numbers from jsonb costs.  Prints a table.
"""
import argparse
import os
import statistics
import sys

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from metrics_bench import log, measure, timed  # noqa: E402

SETTINGS = [("jit", "off"), ("max_parallel_workers_per_gather", "0")]


def make_table(cur, rows):
    cur.execute("SELECT to_regclass('bm_jsonb') IS NOT NULL")
    if cur.fetchone()[0]:
        cur.execute("SELECT count(*) FROM bm_jsonb")
        if cur.fetchone()[0] == rows:
            return
        cur.execute("DROP TABLE bm_jsonb")
    log("jsonb: making bm_jsonb (%d rows)" % rows)
    cur.execute("SELECT setseed(0.5)")
    cur.execute("""
        CREATE TABLE bm_jsonb AS
        SELECT i, 'c' || (i %% 5) AS label,
               jsonb_build_object('x', x, 'y', y, 'z', z, 'w', w) AS features,
               ARRAY[x::float8, y, z, w] AS vec
        FROM (SELECT i, round((random() * 100 - 50 + i %% 5)::numeric, 3) AS x,
                     random() * 1000 + 10 * (i %% 5) AS y,
                     (random() * 1e6)::int AS z, -random() - (i %% 5) AS w
              FROM generate_series(1, %s) AS i) AS s""", (rows,))
    cur.execute("VACUUM ANALYZE bm_jsonb")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    for k, v in SETTINGS:
        cur.execute("SET %s = '%s'" % (k, v))
    make_table(cur, args.rows)
    cases = {
        "train jsonb": timed(cur, "SELECT nb_info(nb_train(label, features)) IS NOT NULL FROM bm_jsonb"),
        "train float8[]": timed(cur, "SELECT nb_info(nb_train(label, vec)) IS NOT NULL FROM bm_jsonb"),
        "score jsonb": timed(cur, "SELECT count(nb_predict((SELECT nb_train(label, features) FROM bm_jsonb), "
                             "features)) FROM bm_jsonb"),
        "score float8[]": timed(cur, "SELECT count(nb_predict((SELECT nb_train(label, vec) FROM bm_jsonb), "
                                "vec)) FROM bm_jsonb"),
    }
    times = measure(cases, args.reps, "jsonb")
    print("| comparison | ratio | median | spread (min-max) |")
    print("|---|---|---|---|")
    for what in ("train", "score"):
        ratios = [a / b for a, b in zip(times[what + " jsonb"], times[what + " float8[]"])]
        print("| %s on %s rows of four Gaussian features: jsonb vs float8[] | jsonb / float8[] "
              "| %.2f | %.2f-%.2f |" % ({"train": "training", "score": "training and scoring"}[what],
                                         "{:,}".format(args.rows), statistics.median(ratios),
                                         min(ratios), max(ratios)))
    if not args.keep:
        cur.execute("DROP TABLE bm_jsonb")


if __name__ == "__main__":
    main()
