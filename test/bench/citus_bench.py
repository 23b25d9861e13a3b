#!/usr/bin/python3
"""Citus benchmark: nbc on a distributed table against the same rows in a
local table of the coordinator, as ratios measured in the same rounds.

    citus_bench.py [--rows N] [--rounds R] [--pitfall-rows N] [--wide-rows N] [--keep]
    citus_bench.py --train-breakdown [--rows N] [--rounds R] [--keep]

Runs against a Citus coordinator in the PG* environment (PGHOST, PGPORT,
PGUSER, PGDATABASE) with workers added and nbc installed on every node
(test/citus/run.sh's header says how to make such a cluster here).  Makes
its data in SQL: table cb_local, --rows documents of 20 tokens in 12
classes (half of each document's tokens from a common Zipf ranking of
60,000, half from its class's own), fold id % 5; table cb_dist, the same
rows distributed by id in 32 shards; a model of all the rows and the
README's out-of-fold models, in local tables for the local side and in
reference tables for the distributed side.  Each round, in alternating
order, runs each case on both tables:

  cv column   nb_cross_validate(T, 'label', 'tokens', fold_column => 'fold',
              grid => 20 option sets): target distributed / local <= 3
  cv folds    the same with folds => 5 (rows numbered by their contents)
  cv column read-only
              cv column in read-only transactions, where nb_cross_validate
              cannot copy the rows into a temporary table and reads them
              through a MATERIALIZED CTE
  recipe      README's hand-written scoring step; on the distributed side
              the rows read through a MATERIALIZED CTE (the form README's
              Citus section gives)
  distinct    count(*) FROM (SELECT DISTINCT nb_predict(model, tokens) ...),
              the form README gives for count(DISTINCT nb_predict(...))
  train       nb_train(label, tokens) of every row (Citus: a partial model
              per shard, combined on the coordinator)

and checks that both sides give the same result.  With --pitfall-rows N
(default 2,000; 0: none), the forms README warns about are timed once on N
distributed rows (cb_small) against the same rows local, under a
statement_timeout of 10 minutes: the recipe's scoring with the rows read
directly (refused since #44, and reported so) and count(DISTINCT
nb_predict(model, tokens)).  Prints a table of
medians and ranges; the machine may be shared, so only the ratios mean
something.

With --wide-rows N (default 0: none), training is also timed on merge_bench.py's
corpus shape (N rows of 8 tokens, ranks log-uniform over a vocabulary of up to
1,000,000; 2,000,000 rows is test/bench/README.md's "Citus coordinator" row): cb_wide, the
rows distributed in 32 shards, against cb_wide_local, --rounds rounds of
pg_column_size(nb_train(label, tokens)) on each, the models compared.

With --train-breakdown, only training, and where its time goes (#44): each
round times, on cb_dist and cb_local as above,
  local        nb_train of cb_local
  distributed  nb_train of cb_dist (Citus: worker_partial_agg per shard,
               coord_combine_agg on the coordinator)
  workers      run_command_on_shards: each shard's nb_train measured with
               pg_column_size (training only: an expanded model's size is
               arithmetic), then with octet_length of the text Citus's
               worker_partial_agg makes of it (training, serialization,
               packing and base64: what a worker sends)
  coordinator  those 32 partial texts, kept in a table of the coordinator:
               read (octet_length), parsed (text -> nb_model), parsed and
               combined (the aggregate nb_merge, whose transition function is
               the combine function Citus calls)
and reports medians and each part as a ratio to local; what the
distributed run spends beyond the workers' text and the coordinator's
parse and combine is Citus's transfer (libpq, TLS by default, its tuple
store).
"""
import argparse
import json
import os
import statistics
import sys
import time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cv_bench import GRID  # noqa: E402
from merge_bench import log, table_rows as rows_of  # noqa: E402


def connect(conninfo=""):
    db = psycopg2.connect(conninfo)
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET jit = off")
    cur.execute("SET client_min_messages = warning")
    return db, cur


CORPUS = """
    SELECT i AS id, 'k' || c AS label, i %% 5 AS fold,
           ARRAY(SELECT 'w' || ((floor(exp(random() * ln(60000)))::int
                                 + CASE WHEN random() < 0.5 THEN c * 7919 ELSE 0 END) %% 60000)
                 FROM generate_series(1, 20 + 0 * i)) AS tokens
    FROM generate_series(1, %s) AS i, LATERAL (SELECT (hashint4(i) %% 12 + 12) %% 12 AS c) l"""


def distribute(cur, local, dist):
    cur.execute("DROP TABLE IF EXISTS %s" % dist)
    cur.execute("CREATE TABLE %s (LIKE %s)" % (dist, local))
    cur.execute("SELECT create_distributed_table(%s, 'id', shard_count => 32)", (dist,))
    cur.execute("INSERT INTO %s SELECT * FROM %s" % (dist, local))
    cur.execute("VACUUM ANALYZE %s" % dist)


def models(cur, side, table):
    """cb_model_<side> (the model of every row) and cb_oof_<side> (README's
    out-of-fold models); reference tables on the distributed side."""
    cur.execute("DROP TABLE IF EXISTS cb_model_%s, cb_oof_%s" % (side, side))
    cur.execute("CREATE TABLE cb_model_%s AS SELECT nb_train(label, tokens) AS model FROM %s"
                % (side, table))
    cur.execute("""CREATE TABLE cb_oof_%s AS
        WITH f AS (SELECT fold, nb_train(label, tokens) AS model FROM %s GROUP BY fold)
        SELECT f.fold, nb_subtract(w.model, f.model) AS model
        FROM f, (SELECT nb_merge(model) AS model FROM f) AS w""" % (side, table))
    if side == "dist":
        cur.execute("SELECT create_reference_table('cb_model_dist')")
        cur.execute("SELECT create_reference_table('cb_oof_dist')")


def make_data(cur, args):
    t0 = time.perf_counter()
    if rows_of(cur, "cb_local") != args.rows or rows_of(cur, "cb_dist") != args.rows:
        log("== generating cb_local and cb_dist: %d rows" % args.rows)
        cur.execute("DROP TABLE IF EXISTS cb_local, cb_dist")
        cur.execute("CREATE TABLE cb_local AS" + CORPUS, (args.rows,))
        cur.execute("VACUUM ANALYZE cb_local")
        distribute(cur, "cb_local", "cb_dist")
    if rows_of(cur, "cb_model_local") != 1 or rows_of(cur, "cb_model_dist") != 1:
        models(cur, "local", "cb_local")
        models(cur, "dist", "cb_dist")
    if args.pitfall_rows and (rows_of(cur, "cb_small_local") != args.pitfall_rows
                              or rows_of(cur, "cb_small") != args.pitfall_rows):
        cur.execute("DROP TABLE IF EXISTS cb_small_local, cb_small")
        cur.execute("CREATE TABLE cb_small_local AS SELECT * FROM cb_local WHERE id <= %s",
                    (args.pitfall_rows,))
        distribute(cur, "cb_small_local", "cb_small")
    cur.execute("SELECT pg_column_size(model), (nb_info(model) ->> 'vocabulary')::bigint FROM cb_model_local")
    return time.perf_counter() - t0, cur.fetchone()


def wide(cur, args):
    """Distributed training on merge_bench.py's corpus shape: [(local s, distributed s)]."""
    if rows_of(cur, "cb_wide_local") != args.wide_rows or rows_of(cur, "cb_wide") != args.wide_rows:
        log("== generating cb_wide_local and cb_wide: %d rows of 8 tokens" % args.wide_rows)
        cur.execute("DROP TABLE IF EXISTS cb_wide_local, cb_wide")
        cur.execute("""CREATE TABLE cb_wide_local AS
            SELECT i AS id, 'c' || (hashint4(i) & 3) AS label,
                   ARRAY(SELECT 't' || floor(exp(random() * ln(1000000)))::int
                         FROM generate_series(1, 8 + 0 * i)) AS tokens
            FROM generate_series(1, %s) AS i""", (args.wide_rows,))
        cur.execute("VACUUM ANALYZE cb_wide_local")
        distribute(cur, "cb_wide_local", "cb_wide")
    out = []
    for rnd in range(args.rounds + 1):
        sides = ["cb_wide_local", "cb_wide"] if rnd % 2 == 0 else ["cb_wide", "cb_wide_local"]
        t = {}
        for table in sides:
            t[table], _ = timed(cur, "SELECT pg_column_size(nb_train(label, tokens)) FROM %s" % table)
        if rnd:
            out.append((t["cb_wide_local"], t["cb_wide"]))
            log("== wide round %d: distributed %.3f s, local %.3f s" % (rnd, t["cb_wide"], t["cb_wide_local"]))
    cur.execute("SELECT (SELECT nb_train(label, tokens) FROM cb_wide) = (SELECT nb_train(label, tokens) FROM cb_wide_local)")
    if not cur.fetchone()[0]:
        sys.exit("citus_bench.py: the distributed model of cb_wide is not the local one")
    return out


# what a worker sends for its shard: the query Citus runs there (EXPLAIN VERBOSE)
SHIPPED = ("pg_catalog.worker_partial_agg('nb_train(text,text[])'::regprocedure, "
           "ROW(label, tokens))::text")

BREAKDOWN = [
    ("local", "SELECT pg_column_size(nb_train(label, tokens)) FROM cb_local"),
    ("distributed", "SELECT pg_column_size(nb_train(label, tokens)) FROM cb_dist"),
    ("workers: training", "SELECT * FROM run_command_on_shards('cb_dist', "
     "$$SELECT pg_column_size(nb_train(label, tokens)) FROM %s$$)"),
    ("workers: training and text", "SELECT * FROM run_command_on_shards('cb_dist', "
     "$$SELECT octet_length(%s) FROM %%s$$)" % SHIPPED),
    ("coordinator: read 32 texts", "SELECT count(*) FROM cb_parts WHERE strpos(t, '!') = 0"),
    ("coordinator: parse 32 texts", "SELECT sum(pg_column_size(nbc_model_in(t::cstring))) FROM cb_parts"),
    ("coordinator: parse and combine", "SELECT pg_column_size(nb_merge(nbc_model_in(t::cstring))) FROM cb_parts"),
]


def train_breakdown(cur, args):
    """Rounds of BREAKDOWN: {name: [seconds]}, and the partial texts' total size."""
    cur.execute("DROP TABLE IF EXISTS cb_parts")
    # stored uncompressed, as the texts arrive on the coordinator
    cur.execute("CREATE TABLE cb_parts (t text)")
    cur.execute("ALTER TABLE cb_parts ALTER t SET STORAGE EXTERNAL")
    cur.execute("INSERT INTO cb_parts SELECT result FROM run_command_on_shards('cb_dist', "
                "$$SELECT %s FROM %%s$$)" % SHIPPED)
    cur.execute("SELECT count(*), sum(octet_length(t)) FROM cb_parts")
    parts, text_bytes = cur.fetchone()
    cur.execute("SELECT (SELECT nb_merge(t::nb_model) FROM cb_parts) = (SELECT nb_train(label, tokens) FROM cb_local)"
                " AND (SELECT nb_train(label, tokens) FROM cb_dist) = (SELECT nb_train(label, tokens) FROM cb_local)")
    if parts != 32 or not cur.fetchone()[0]:
        sys.exit("citus_bench.py: the combined partial models are not the local model")
    times = {name: [] for name, _ in BREAKDOWN}
    for rnd in range(args.rounds + 1):
        order = BREAKDOWN if rnd % 2 == 0 else BREAKDOWN[::-1]
        for name, sql in order:
            t, _ = timed(cur, sql)
            if rnd:
                times[name].append(t)
        if rnd:
            log("== breakdown round %d: %s" % (rnd, ", ".join("%s %.3f" % (n, times[n][-1]) for n, _ in BREAKDOWN)))
    return times, text_bytes


def print_breakdown(times, text_bytes, args):
    local = times["local"]
    print("Training %d rows in 32 shards; partial states %.1f MB of text in all; rounds: %d after a "
          "warm-up, alternating the order; load average at the end %.1f %.1f %.1f."
          % (args.rows, text_bytes / 1e6, args.rounds, *os.getloadavg()))
    print()
    print("| part | median s | / local, median (min-max) |")
    print("|---|---|---|")
    for name, _ in BREAKDOWN:
        r = [t / l for t, l in zip(times[name], local)]
        print("| %s | %.3f | %.2f (%.2f-%.2f) |" % (name, statistics.median(times[name]),
                                                 statistics.median(r), min(r), max(r)))


def recipe(table, oof, materialized):
    rows = "SELECT id %% 5 AS fold, label, tokens FROM %s" % table
    source = ("WITH d AS MATERIALIZED (%s) " % rows, "d") if materialized else ("", "(%s)" % rows)
    return ("%sSELECT m.fold, nb_grid_metrics(m.model, d.tokens, d.label, "
            "ARRAY(SELECT nb_grid_options('%s'))) FROM %s AS d JOIN %s AS m ON m.fold = d.fold "
            "GROUP BY m.fold ORDER BY m.fold" % (source[0], GRID, source[1], oof))


def cases(side, table):
    return {
        "cv column": "SELECT * FROM nb_cross_validate('%s', 'label', 'tokens', fold_column => 'fold', "
                     "grid => '%s')" % (table, GRID),
        "cv folds": "SELECT * FROM nb_cross_validate('%s', 'label', 'tokens', folds => 5, grid => '%s')"
                    % (table, GRID),
        "cv column read-only": "BEGIN READ ONLY; "
                               "SELECT * FROM nb_cross_validate('%s', 'label', 'tokens', "
                               "fold_column => 'fold', grid => '%s')" % (table, GRID),
        "recipe": recipe(table, "cb_oof_" + side, side == "dist"),
        "distinct": "SELECT count(*) FROM (SELECT DISTINCT nb_predict(m.model, d.tokens) "
                    "FROM %s d, cb_model_%s m) s" % (table, side),
        "train": "SELECT nb_train(label, tokens) FROM %s" % table,
    }


def issue_cases(side, table):
    """#44's four workloads, {name: (SQL run and timed, SQL of the result compared)}."""
    model = "cb_model_" + side
    rows = "SELECT tokens, label FROM %s WHERE id <= 1000" % table
    grid = ("%sSELECT nb_grid_metrics(m.model, d.tokens, d.label, ARRAY(SELECT nb_grid_options('%s'))) "
            "FROM %s AS d, %s AS m" % ("WITH d AS MATERIALIZED (%s) " % rows if side == "dist" else "",
                                       GRID, "d" if side == "dist" else "(%s)" % rows, model))
    distinct = ("SELECT count(*) FROM (SELECT DISTINCT nb_predict(m.model, d.tokens) FROM %s d, %s m) s"
                if side == "dist" else "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM %s d, %s m")
    return {
        "`nb_train` over 32 shards": ("SELECT nb_train(label, tokens) FROM %s" % table, None),
        "scoring every row into a table": (
            "TRUNCATE cb_scores_%s; INSERT INTO cb_scores_%s SELECT d.id, nb_predict(m.model, d.tokens) "
            "FROM %s d, %s m" % (side, side, table, model),
            "SELECT label, count(*) FROM cb_scores_%s GROUP BY 1 ORDER BY 1" % side),
        "`nb_grid_metrics` with a stored model column (%s model, 1,000 rows)": (grid, None),
        "`count(DISTINCT nb_predict(m.model, …))`": (distinct % (table, model), None),
    }


def issue_ratios(cur, args, model_bytes):
    """#44's table: the four workloads distributed / local, as Markdown rows."""
    cur.execute("DROP TABLE IF EXISTS cb_scores_local, cb_scores_dist")
    cur.execute("CREATE TABLE cb_scores_local (id int, label text)")
    cur.execute("CREATE TABLE cb_scores_dist (id int, label text)")
    cur.execute("SELECT create_distributed_table('cb_scores_dist', 'id', colocate_with => 'cb_dist')")
    cur.execute("SET statement_timeout = '5min'")
    direct = "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM cb_dist d, cb_model_dist m"
    try:
        cur.execute(direct)
        refused = "runs"
    except psycopg2.errors.FeatureNotSupported:
        refused = "refused (0A000); the rewrite its hint gives:"
    except psycopg2.errors.QueryCanceled:
        refused = "over 5 minutes; the rewrite:"
    cur.execute("RESET statement_timeout")
    local, dist = issue_cases("local", "cb_local"), issue_cases("dist", "cb_dist")
    times = {n: ([], []) for n in local}
    for rnd in range(args.rounds + 1):
        for n in (list(local) if rnd % 2 == 0 else list(local)[::-1]):
            res = []
            for i, cases in ((0, local), (1, dist)) if rnd % 2 == 0 else ((1, dist), (0, local)):
                t, out = timed(cur, cases[n][0])
                if cases[n][1]:
                    out = timed(cur, cases[n][1])[1]
                res.append(out)
                if rnd:
                    times[n][i].append(t)
            if res[0] != res[1]:
                sys.exit("citus_bench.py: %s gives another result on the distributed table" % n)
        if rnd:
            log("== #44 round %d: %s" % (rnd, ", ".join("%.3f/%.3f" % (d[-1], l[-1]) for l, d in times.values())))
    out = ["| workload | distributed / local, median (min-max) |", "|---|---|"]
    for n, (l, d) in times.items():
        r = [b / a for a, b in zip(l, d)]
        name = n % ("%d KB" % (model_bytes // 1000)) if "%s" in n else n
        if n.startswith("`count"):
            name += ", " + refused
        out.append("| %s | %.2f (%.2f-%.2f) |" % (name, statistics.median(r), min(r), max(r)))
    cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'citus'")
    out += ["", "Citus %s, coordinator and workers on this machine, %d rows in 32 shards against the "
            "same rows in a local table; %d rounds after a warm-up, every result equal to local; load "
            "average at the end %.1f." % (cur.fetchone()[0], args.rows, args.rounds, os.getloadavg()[0])]
    cur.execute("DROP TABLE cb_scores_local, cb_scores_dist")
    return out


def timed(cur, sql):
    t = time.perf_counter()
    cur.execute(sql)
    out = cur.fetchall() if cur.description else None
    elapsed = time.perf_counter() - t
    if cur.connection.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_INTRANS:
        cur.execute("COMMIT")
    return elapsed, out


def pitfalls(cur):
    """The forms README warns about, once on the small tables."""
    out = []
    forms = [
        ("recipe, rows read directly",
         recipe("cb_small_local", "cb_oof_local", False), recipe("cb_small", "cb_oof_dist", False)),
        ("count(DISTINCT nb_predict(model, tokens))",
         "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM cb_small_local d, cb_model_local m",
         "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM cb_small d, cb_model_dist m"),
    ]
    cur.execute("SET statement_timeout = '10min'")
    for name, local_sql, dist_sql in forms:
        tl, _ = timed(cur, local_sql)
        try:
            td, _ = timed(cur, dist_sql)
            cell = "%.3f" % td
        except psycopg2.errors.QueryCanceled:
            cell = "> 600 (cancelled)"
        except psycopg2.errors.FeatureNotSupported:
            cell = "refused (0A000)"
        log("== pitfall %s: local %.3f s, distributed %s s" % (name, tl, cell))
        out.append((name, tl, cell))
    cur.execute("RESET statement_timeout")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pitfall-rows", type=int, default=2000)
    ap.add_argument("--wide-rows", type=int, default=0)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--train-breakdown", action="store_true")
    ap.add_argument("--issue-ratios", action="store_true")
    ap.add_argument("--conninfo", default="")
    args = ap.parse_args()

    db, cur = connect(args.conninfo)
    cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'citus'")
    citus = cur.fetchone()
    if citus is None:
        sys.exit("citus_bench.py: the database of the PG* environment has no citus extension")
    cur.execute("CREATE EXTENSION IF NOT EXISTS nbc")
    elapsed, (model_bytes, vocabulary) = make_data(cur, args)
    cur.execute("SELECT count(*) FROM pg_dist_node WHERE shouldhaveshards AND isactive")
    workers = cur.fetchone()[0]

    if args.issue_ratios:
        print("\n".join(issue_ratios(cur, args, model_bytes)))
        return

    if args.train_breakdown:
        times, text_bytes = train_breakdown(cur, args)
        print("Citus %s, %d workers; %d rows (vocabulary %d, model %d bytes)."
              % (citus[0], workers, args.rows, vocabulary, model_bytes))
        print_breakdown(times, text_bytes, args)
        if not args.keep:
            cur.execute("DROP TABLE IF EXISTS cb_parts")
        return

    local, dist = cases("local", "cb_local"), cases("dist", "cb_dist")
    names = list(local)
    times = {n: {"local": [], "dist": []} for n in names}
    for rnd in range(args.rounds + 1):
        order = names if rnd % 2 == 0 else names[::-1]
        for n in order:
            sides = [("local", local[n]), ("dist", dist[n])]
            if rnd % 2:
                sides.reverse()
            res = {}
            for side, sql in sides:
                t, res[side] = timed(cur, sql)
                if rnd:
                    times[n][side].append(t)
            if res["local"] != res["dist"]:
                sys.exit("citus_bench.py: %s gives another result on the distributed table:\n%s\n%s"
                         % (n, json.dumps(res["local"], default=str)[:2000],
                            json.dumps(res["dist"], default=str)[:2000]))
        log("== %s done: %s" % ("warm-up" if rnd == 0 else "round %d" % rnd,
                                 ", ".join("%s %.3f/%.3f" % (n, times[n]["dist"][-1], times[n]["local"][-1])
                                           for n in names) if rnd else "results equal"))
    found = pitfalls(cur) if args.pitfall_rows else []
    trained = wide(cur, args) if args.wide_rows else []
    cur.execute("SELECT pg_size_pretty(pg_total_relation_size('cb_local'))")
    size = cur.fetchone()[0]

    print("Citus %s, %d workers; %d rows (%s) distributed in 32 shards by id, and the same rows "
          "in a local table of the coordinator; model of all rows: vocabulary %d, %d bytes stored; "
          "made in %.0f s. Rounds: %d after a warm-up, alternating the order; load average at "
          "the end %.1f %.1f %.1f. Every case gave the same result on both tables."
          % (citus[0], workers, args.rows, size, vocabulary, model_bytes, elapsed, args.rounds,
             *os.getloadavg()))
    print()
    print("| case | local median s | distributed median s | distributed / local, median (min-max) |")
    print("|---|---|---|---|")
    for n in names:
        r = [d / l for d, l in zip(times[n]["dist"], times[n]["local"])]
        print("| %s | %.3f | %.3f | %.2f (%.2f-%.2f) |"
              % (n, statistics.median(times[n]["local"]), statistics.median(times[n]["dist"]),
                 statistics.median(r), min(r), max(r)))
    if found:
        print()
        print("Forms to avoid, once on %d rows:" % args.pitfall_rows)
        print()
        print("| form | local s | distributed s |")
        print("|---|---|---|")
        for name, tl, cell in found:
            print("| %s | %.3f | %s |" % (name, tl, cell))

    if trained:
        r = [d / l for l, d in trained]
        print()
        print("Training on %d rows of 8 tokens (merge_bench.py's shape), distributed in 32 shards "
              "/ local: %.2f (%.2f-%.2f); medians %.3f s distributed, %.3f s local; the models equal."
              % (args.wide_rows, statistics.median(r), min(r), max(r),
                 statistics.median(d for _, d in trained), statistics.median(l for l, _ in trained)))

    if not args.keep:
        cur.execute("DROP TABLE IF EXISTS cb_local, cb_dist, cb_small_local, cb_small, "
                    "cb_model_local, cb_model_dist, cb_oof_local, cb_oof_dist, cb_wide_local, cb_wide")
    db.close()


if __name__ == "__main__":
    main()
