#!/usr/bin/python3
"""Merging benchmark: the cost of nb_merge and of combining partial models,
as ratios to the cost of reading the same models.

    merge_bench.py [--rows N] [--rounds R] [--short-rows N]
                   [--build NAME=DIR ...] [--keep]

Runs against the cluster in the PG* environment (PGHOST, PGPORT, PGUSER,
PGDATABASE), in which nbc must be installed.  Generates its data in SQL
(tables bm_*, dropped at the end unless --keep; reused when they exist with
the same sizes), then measures, each round in alternating order:

  merge 2     SELECT nb_info(nb_merge(a, b)) over two models of half the
              corpus each, vs SELECT nb_info(a), nb_info(b)
  subtract 2  nb_subtract(w, b) of the merge w of the two half models and
              one half, vs nb_merge(a, b) of the halves and vs nb_info of
              w and b (its inputs)
  merge 16    SELECT nb_info(nb_merge(m)) over 16 models of a sixteenth
              each, vs SELECT of nb_info(m) of each
  citus       32 partial models in their text form, parsed and combined in
              sequence as Citus's coordinator does (the aggregate nb_merge,
              whose transition function is the combine function), vs
              training the same rows in one nb_train
  parallel    nb_train over a short-document corpus (20 tokens per row,
              12 classes, a Zipf vocabulary of 60,000) with 0, 1, 2 and 4
              parallel workers: serial / parallel

Merged and trained models are measured with pg_column_size(...), which
needs the size of the result: the merge of flat models computes the whole
merged model for it, but an expanded trainer (main's merge, and training)
only its size, not the sorting and writing of the serialized form, so
those times leave that part out.  With --build
NAME=DIR (twice or more), each round runs once per build, installing it
first with `make install` in DIR (PG_CONFIG from the environment) and
reconnecting: ratios of the builds measured in the same session.  Prints a
table of medians and ranges over the rounds; the machine may be shared, so
only the ratios mean something.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import psycopg2


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def connect():
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    cur.execute("SET work_mem = '256MB'")
    return db, cur


def timed(cur, sql, settings=()):
    for s in settings:
        cur.execute("SET " + s)
    t = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    elapsed = time.perf_counter() - t
    for s in settings:
        cur.execute("RESET " + s.split("=")[0].strip())
    return elapsed


def table_rows(cur, name):
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (name,))
    if not cur.fetchone()[0]:
        return None
    cur.execute("SELECT count(*) FROM " + name)
    return cur.fetchone()[0]


def make_data(cur, args):
    """The corpora and the partial models, in SQL."""
    t0 = time.perf_counter()
    if table_rows(cur, "bm_docs") != args.rows:
        log("== generating bm_docs: %d rows of 8 tokens, vocabulary up to %d" % (args.rows, args.vocab))
        cur.execute("DROP TABLE IF EXISTS bm_docs, bm_models, bm_citus")
        # token ranks log-uniform over the vocabulary (Zipf's law, s = 1);
        # the subquery refers to i so that it runs for every row
        cur.execute("""CREATE TABLE bm_docs AS
            SELECT i AS id, 'c' || (hashint4(i) & 3) AS label,
                   ARRAY(SELECT 't' || floor(exp(random() * ln(%s)))::int
                         FROM generate_series(1, 8 + 0 * i)) AS tokens
            FROM generate_series(1, %s) AS i""", (args.vocab, args.rows))
        cur.execute("VACUUM ANALYZE bm_docs")
    if table_rows(cur, "bm_models") is None:
        log("== training the partial models")
        cur.execute("CREATE TABLE bm_models (name text PRIMARY KEY, m nb_model)")
        cur.execute("""INSERT INTO bm_models
            SELECT 'half' || (id % 2), nb_train(label, tokens) FROM bm_docs GROUP BY id % 2""")
        cur.execute("""INSERT INTO bm_models
            SELECT 'part' || lpad((id % 16)::text, 2, '0'), nb_train(label, tokens)
            FROM bm_docs GROUP BY id % 16""")
        cur.execute("CREATE TABLE bm_citus (shard int PRIMARY KEY, state text)")
        cur.execute("""INSERT INTO bm_citus
            SELECT id % 32, nb_train(label, tokens)::text FROM bm_docs GROUP BY id % 32""")
        cur.execute("VACUUM ANALYZE bm_models, bm_citus")
    cur.execute("""INSERT INTO bm_models
        SELECT 'whole', nb_merge(a.m, b.m) FROM bm_models a, bm_models b
        WHERE a.name = 'half0' AND b.name = 'half1'
          AND NOT EXISTS (SELECT FROM bm_models WHERE name = 'whole')""")
    if table_rows(cur, "bm_short") != args.short_rows:
        log("== generating bm_short: %d rows of 20 tokens, 12 classes, vocabulary 60000"
            % args.short_rows)
        cur.execute("DROP TABLE IF EXISTS bm_short")
        # each class draws ranks by Zipf's law and shifts them its own way
        cur.execute("""CREATE TABLE bm_short AS
            SELECT i AS id, 'k' || (hashint4(i) %% 12 + 12) %% 12 AS label,
                   ARRAY(SELECT 'w' || ((floor(exp(random() * ln(60000)))::int
                                         + ((hashint4(i) %% 12 + 12) %% 12) * 7919) %% 60000)
                         FROM generate_series(1, 20 + 0 * i)) AS tokens
            FROM generate_series(1, %s) AS i""", (args.short_rows,))
        cur.execute("VACUUM ANALYZE bm_short")
    cur.execute("ALTER TABLE bm_short SET (parallel_workers = 4)")
    cur.execute("ALTER TABLE bm_docs SET (parallel_workers = 4)")
    elapsed = time.perf_counter() - t0
    cur.execute("""SELECT (nb_info(m)->>'vocabulary')::bigint, (nb_info(m)->>'entries')::bigint,
                          (nb_info(m)->>'bytes')::bigint, pg_column_size(m)
                   FROM bm_models WHERE name IN ('half0', 'part00') ORDER BY name""")
    shapes = cur.fetchall()
    cur.execute("SELECT (nb_info(nb_train(label, tokens))->>'vocabulary')::bigint FROM bm_short")
    short_vocab = cur.fetchone()[0]
    return elapsed, shapes, short_vocab


PAR = ("parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0")

CASES = {
    "read 2": ("SELECT nb_info(a.m), nb_info(b.m) FROM bm_models a, bm_models b "
               "WHERE a.name = 'half0' AND b.name = 'half1'", ()),
    "merge 2": ("SELECT pg_column_size(nb_merge(a.m, b.m)) FROM bm_models a, bm_models b "
                "WHERE a.name = 'half0' AND b.name = 'half1'", ()),
    "subtract 2": ("SELECT pg_column_size(nb_subtract(w.m, b.m)) FROM bm_models w, bm_models b "
                   "WHERE w.name = 'whole' AND b.name = 'half1'", ()),
    "read whole": ("SELECT nb_info(w.m), nb_info(b.m) FROM bm_models w, bm_models b "
                   "WHERE w.name = 'whole' AND b.name = 'half1'", ()),
    "read 16": ("SELECT count(nb_info(m)) FROM bm_models WHERE name LIKE 'part%'", ()),
    "merge 16": ("SELECT pg_column_size(nb_merge(m ORDER BY name)) FROM bm_models WHERE name LIKE 'part%'", ()),
    "citus": ("SELECT pg_column_size(nb_merge(state::nb_model ORDER BY shard)) FROM bm_citus", ()),
    "train": ("SELECT pg_column_size(nb_train(label, tokens)) FROM bm_docs", ()),
    "short 0": ("SELECT nb_info(nb_train(label, tokens)) FROM bm_short", ()),
    "short 1": ("SELECT nb_info(nb_train(label, tokens)) FROM bm_short",
                PAR + ("max_parallel_workers_per_gather = 1",)),
    "short 2": ("SELECT nb_info(nb_train(label, tokens)) FROM bm_short",
                PAR + ("max_parallel_workers_per_gather = 2",)),
    "short 4": ("SELECT nb_info(nb_train(label, tokens)) FROM bm_short",
                PAR + ("max_parallel_workers_per_gather = 4",)),
}

RATIOS = [
    ("nb_merge(a, b) of two half-corpus models / nb_info of both", "merge 2", "read 2", "<= 3"),
    ("nb_subtract(nb_merge(a, b), b) / nb_merge(a, b) of the same halves", "subtract 2", "merge 2", "<= 1"),
    ("nb_subtract(nb_merge(a, b), b) / nb_info of its inputs", "subtract 2", "read whole", "<= 3"),
    ("aggregate nb_merge over 16 models / nb_info of the 16", "merge 16", "read 16", "<= 3"),
    ("Citus coordinator: 32 text partial states combined / training the rows on one node",
     "citus", "train", "report"),
    ("short documents: serial / 1 worker", "short 0", "short 1", "report"),
    ("short documents: serial / 2 workers", "short 0", "short 2", ">= 1.5"),
    ("short documents: serial / 4 workers", "short 0", "short 4", "report"),
]


def install(build_dir):
    subprocess.run(["make", "install", "PG_CONFIG=" + os.environ.get("PG_CONFIG", "pg_config")],
                   cwd=build_dir, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def one_round(cur, order):
    times = {}
    for name in order:
        sql, settings = CASES[name]
        times[name] = timed(cur, sql, settings)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2000000)
    ap.add_argument("--vocab", type=int, default=1000000)
    ap.add_argument("--short-rows", type=int, default=228636)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build", action="append", default=[], metavar="NAME=DIR")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build] or [("installed", None)]

    if builds[0][1] is not None:
        install(builds[0][1])
    db, cur = connect()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    elapsed, shapes, short_vocab = make_data(cur, args)
    db.close()

    ratios = {b[0]: {r[0]: [] for r in RATIOS} for b in builds}
    times = {b[0]: {c: [] for c in CASES} for b in builds}
    names = list(CASES)
    for rnd in range(args.rounds + 1):
        for bname, bdir in builds if rnd % 2 == 0 else list(reversed(builds)):
            if bdir is not None:
                install(bdir)
            db, cur = connect()
            order = names if rnd % 2 == 0 else list(reversed(names))
            t = one_round(cur, order)
            db.close()
            if rnd == 0:
                log("== warm-up round done (%s)" % bname)
                continue
            log("== round %d (%s): %s" % (rnd, bname, ", ".join("%s %.3f" % (k, v) for k, v in t.items())))
            for c in CASES:
                times[bname][c].append(t[c])
            for title, num, den, _ in RATIOS:
                ratios[bname][title].append(t[num] / t[den])

    print("Data: %d rows of 8 tokens (vocabulary up to %d, log-uniform ranks), generated and "
          "trained in %.0f s; half model: vocabulary %d, %d entries, %d bytes (%d stored); "
          "sixteenth: vocabulary %d, %d entries, %d bytes (%d stored). Short documents: %d rows, "
          "vocabulary %d." % (args.rows, args.vocab, elapsed, *shapes[0], *shapes[1],
                              args.short_rows, short_vocab))
    print("Rounds: %d after a warm-up, alternating the order of the queries%s; medians (min-max)."
          % (args.rounds, " and of the builds" if len(builds) > 1 else ""))
    print()
    print("| ratio | target | " + " | ".join(b[0] for b in builds) + " |")
    print("|---|---|" + "---|" * len(builds))
    for title, _, _, target in RATIOS:
        cells = []
        for bname, _ in builds:
            v = ratios[bname][title]
            cells.append("%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v)))
        print("| %s | %s | %s |" % (title, target, " | ".join(cells)))
    print()
    print("| query | " + " | ".join("%s median s" % b[0] for b in builds) + " |")
    print("|---|" + "---|" * len(builds))
    for c in CASES:
        print("| %s | %s |" % (c, " | ".join("%.3f" % statistics.median(times[b[0]][c]) for b in builds)))

    if not args.keep:
        db, cur = connect()
        cur.execute("DROP TABLE IF EXISTS bm_docs, bm_models, bm_citus, bm_short")
        db.close()


if __name__ == "__main__":
    main()
