#!/usr/bin/python3
"""Scoring cost of the unknown-feature check (nbc.unknown_features): per row,
the default setting against ignore, and against nbc built from before the
check.

    coverage_bench.py [--reps N] [--before-lib PATH] [--out FILE]

Runs against the cluster in the PG* environment (nbc installed, table
spamassassin loaded by test/data/load_spamassassin.py), as a superuser.
Makes its tables (cov_*) from the SpamAssassin corpus, tokens as
CountVectorizer's default pattern finds them, the model trained on the
training split of each:

  cov_mail   the messages
  cov_lines  short documents: every line of every message with two tokens
             or more (where a per-row cost weighs most against scoring)

Each is scored four ways: nb_predict of the tokens (as trained: few rows
have no known token), nb_predict of the tokens in upper case (another
tokenizer: every row has none, so every row takes the check's slow path and
is counted), nb_predict of jsonb rows {"body": tokens, "n": count} where the
model has "body" only (the unknown key counted in every row), and
nb_grid_metrics of the tokens under two option sets (nb_cross_validate's
scoring).

--before-lib names the nbc.so of the commit before the check, built from
its source, for example

    git archive e6abec2 | tar -x -C /tmp/nbc-base
    make -C /tmp/nbc-base PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config

The script then makes two databases beside the current one, its name with
_before and _after appended, each with the extension created and the same
copies of the tables and models; in _before every function of the
extension is pointed at that library (pg_proc.probin; it must serve the
same SQL functions), in _after they stay in the installed one.  One
connection to each runs the old code and the new side by side in the same
run, on tables written the same way (the tables the script makes first
are laid out a little differently: a scan of them differs by a few
percent).

The per-row cost is the time of a query scoring every row of the table
(reading the rows included; the model is kept prepared between queries, so
a query's fixed cost is negligible) over the number of rows.  The time is
the CPU time the backend spent on the query (from /proc/PID/schedstat: the
benchmark runs on the server's machine), not the wall time: on a shared
machine the wall time also holds the time the query waited for a CPU,
which moved the ratios by 10% from one round to the next where the
differences measured are a few percent.  Every figure is a median over
--reps rounds of ratios measured side by side, the order of the cases
alternating from one round to the next; min-max in brackets.
"""
import argparse
import datetime
import io
import os
import statistics
import sys

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import LOAD_START, SETTINGS, connect, loadavg, log, measure, one, write_section  # noqa: E402

TOKENS = r"[[:alnum:]_]{2,}"
HEADING = "## Rows with no known feature (test/bench/coverage_bench.py)"
CORPORA = (("SpamAssassin messages", "cov_mail"), ("SpamAssassin lines", "cov_lines"))


def make_data(cur):
    if one(cur, "SELECT to_regclass('cov_lines_model') IS NOT NULL")[0]:
        log("data: cov_* exist")
        return
    log("data: cov_mail (tokenized messages)")
    cur.execute("""CREATE TEMP TABLE cov_tokens AS
        SELECT label, split, ARRAY(SELECT m[1] FROM regexp_matches(lower(body), %s, 'g') m) AS tokens
        FROM spamassassin""", (TOKENS,))
    make_corpus(cur, "cov_mail")
    log("data: cov_lines (a document per line)")
    cur.execute("DROP TABLE cov_tokens")
    cur.execute("""CREATE TEMP TABLE cov_tokens AS
        SELECT s.label, s.split, t.tokens FROM spamassassin s,
          LATERAL (SELECT ARRAY(SELECT m[1] FROM regexp_matches(lower(l), %s, 'g') m) AS tokens
                   FROM string_to_table(s.body, E'\\n') l) t
        WHERE cardinality(t.tokens) >= 2""", (TOKENS,))
    make_corpus(cur, "cov_lines")
    cur.execute("DROP TABLE cov_tokens")


def make_corpus(cur, table):
    """The table of a corpus (from cov_tokens) and its models, written once
    (no update leaves dead rows to scan past), as the copies are."""
    cur.execute("""CREATE TABLE %s AS
        SELECT label, split, tokens, upper(tokens::text)::text[] AS upper_tokens,
               jsonb_build_object('body', to_jsonb(tokens), 'n', cardinality(tokens)) AS f
        FROM cov_tokens""" % table)
    cur.execute("""CREATE TABLE %s_model AS
        SELECT nb_train(label, tokens) AS m, nb_train(label, jsonb_build_object('body', to_jsonb(tokens))) AS j
        FROM %s WHERE split = 'train'""" % (table, table))
    cur.execute("VACUUM (FREEZE, ANALYZE) %s, %s_model" % (table, table))


def copy_database(conn, suffix, lib):
    """A database beside the current one (its name with suffix appended),
    with copies of the cov_* tables and nbc's functions in lib; returns a
    cursor of a connection to it."""
    cur = conn.cursor()
    db = one(cur, "SELECT current_database()")[0] + suffix
    if not one(cur, "SELECT count(*) FROM pg_database WHERE datname = %s", (db,))[0]:
        log("data: database %s" % db)
        cur.execute('CREATE DATABASE "%s"' % db)
        other = psycopg2.connect(dbname=db)
        other.autocommit = True
        ocur = other.cursor()
        ocur.execute("CREATE EXTENSION nbc")
        for _, table in CORPORA:
            for t, cols, types in ((table, "label, split, tokens, upper_tokens, f",
                                    "label text, split text, tokens text[], upper_tokens text[], f jsonb"),
                                   (table + "_model", "m, j", "m nb_model, j nb_model")):
                buf = io.StringIO()
                cur.copy_expert("COPY (SELECT %s FROM %s) TO STDOUT" % (cols, t), buf)
                buf.seek(0)
                ocur.execute("CREATE TABLE %s (%s)" % (t, types))
                ocur.copy_expert("COPY %s FROM STDIN" % t, buf)
        ocur.execute("VACUUM (FREEZE, ANALYZE)")
        other.close()
    # the extension's functions in lib, for the connections made from now on
    other = psycopg2.connect(dbname=db)
    other.autocommit = True
    other.cursor().execute("""UPDATE pg_proc SET probin = %s
                              WHERE probin IS DISTINCT FROM %s
                                AND oid IN (SELECT objid FROM pg_depend
                                            WHERE classid = 'pg_proc'::regclass AND deptype = 'e'
                                              AND refobjid = (SELECT oid FROM pg_extension
                                                              WHERE extname = 'nbc'))
                                AND prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')""",
                           (lib, lib))
    other.close()
    log("data: %s runs nbc from %s" % (db, lib))
    other = psycopg2.connect(dbname=db)
    other.autocommit = True
    ocur = other.cursor()
    for k, v in SETTINGS:
        ocur.execute("SET %s = '%s'" % (k, v))
    return ocur


def scorings(table):
    """Each scoring: a query over every row of the table."""
    model = "%s_model" % table
    return {
        "nb_predict, tokens as trained": "SELECT count(nb_predict(s.m, d.tokens)) FROM %s d, %s s"
                                         % (table, model),
        "nb_predict, tokens in upper case (none known)":
            "SELECT count(nb_predict(s.m, d.upper_tokens)) FROM %s d, %s s" % (table, model),
        "nb_predict, jsonb with an unknown key":
            "SELECT count(nb_predict(s.j, d.f)) FROM %s d, %s s" % (table, model),
        "nb_grid_metrics, 2 option sets":
            "SELECT nb_grid_metrics(s.m, d.tokens, d.label, ARRAY['{}'::jsonb, '{\"alpha\": 0.5}']) "
            "FROM %s d, %s s" % (table, model),
    }


def backend_cpu(cur):
    """The backend's CPU time so far, in seconds."""
    pid = one(cur, "SELECT pg_backend_pid()")[0]

    def seconds():
        with open("/proc/%d/schedstat" % pid) as f:
            return int(f.read().split()[0]) / 1e9
    return seconds


def cpu_query(cur, sql):
    """A case: runs sql, returns the CPU time the backend spent on it."""
    cpu = backend_cpu(cur)

    def run():
        start = cpu()
        cur.execute(sql)
        cur.fetchall()
        return cpu() - start
    return run


def setting(cur, value, fn):
    """A case run under nbc.unknown_features = value (the SET not timed)."""
    def run():
        cur.execute("SET nbc.unknown_features = '%s'" % value)
        return fn()
    return run


def has_setting(cur):
    """Whether the library the connection runs has nbc.unknown_features."""
    cur.execute("SELECT count(nb_info(m)) FROM cov_mail_model")
    return one(cur, "SELECT count(*) FROM pg_settings WHERE name = 'nbc.unknown_features'")[0] == 1


def per_row(cur, configs, before, table, rows, reps, name, sql):
    """{config: [per-row seconds per round]}: each of configs (settings of
    nbc.unknown_features, or "after" for the library as it is) and, with
    before, the old build."""
    cases = {c: cpu_query(cur, sql) if c == "after" else setting(cur, c, cpu_query(cur, sql))
             for c in configs}
    if before is not None:
        cases["before"] = cpu_query(before, sql)
    t = measure("%s %s" % (table, name), cases, reps)
    return {c: [x / rows for x in t[c]] for c in cases}


def fmt(ratios):
    return "%.3f (%.3f-%.3f)" % (statistics.median(ratios), min(ratios), max(ratios))


def ratio(cost, num, den):
    return fmt([a / b for a, b in zip(cost[num], cost[den])])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--before-lib", help="nbc.so built from the commit before the check")
    ap.add_argument("--after-lib", default="$libdir/nbc",
                    help="with --before-lib, the nbc.so of the other side (default: the installed one; "
                         "the same as --before-lib measures how far apart two identical builds come out)")
    ap.add_argument("--corpora", default="cov_mail,cov_lines",
                    help="which corpora to score (comma-separated; default both)")
    ap.add_argument("--out", help="also write the tables as a section of this Markdown file")
    args = ap.parse_args()
    conn = connect()
    cur = conn.cursor()
    make_data(cur)
    before = None
    if args.before_lib:
        before = copy_database(conn, "_before", os.path.abspath(args.before_lib))
        after = args.after_lib if args.after_lib.startswith("$libdir/") else os.path.abspath(args.after_lib)
        cur = copy_database(conn, "_after", after)
    configs = ["warning", "ignore"] if has_setting(cur) else ["after"]
    out = []
    for title, table in CORPORA:
        if table not in args.corpora.split(","):
            continue
        rows, = one(cur, "SELECT count(*) FROM %s" % table)
        # counted by the installed nbc, in the database the tables were made in
        unknown, = one(conn.cursor(), "SELECT count(*) FILTER (WHERE nb_coverage(s.m, d.tokens) = 0) "
                       "FROM %s d, %s_model s" % (table, table))
        out.append("\n### %s (%s): %d rows, %d of them with no known token\n" % (title, table, rows, unknown))
        if configs == ["after"]:
            columns = [("CPU per row", None), ("after / before", ("after", "before"))]
        else:
            columns = [("CPU per row, default (warning)", None), ("default / ignore", ("warning", "ignore"))]
            if before is not None:
                columns += [("default / before the check", ("warning", "before")),
                            ("ignore / before the check", ("ignore", "before"))]
        out.append("| scoring | %s |" % " | ".join(c for c, _ in columns))
        out.append("|---|%s" % ("---|" * len(columns)))
        for name, sql in scorings(table).items():
            cost = per_row(cur, configs, before, table, rows, args.reps, name, sql)
            cells = ["%.2f µs" % (statistics.median(cost[configs[0]]) * 1e6)]
            cells += [ratio(cost, *pair) for _, pair in columns[1:]]
            out.append("| %s | %s |" % (name, " | ".join(cells)))
    print("\n".join(out))
    if args.out:
        command = "/usr/bin/python3 test/bench/coverage_bench.py --reps %d%s" % (
            args.reps, " --before-lib BASE/nbc.so" if before is not None else "")
        write_section(args.out, HEADING, "%s\n\n%s, load average %s at the start and %s at the end. "
                      "Command: `%s`; per-row CPU time of the backend, ratios of each round's side-by-side "
                      "measurements, median (min-max) over the rounds.\n%s\n"
                      % (HEADING, datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), LOAD_START, loadavg(),
                         command, "\n".join(out)))


if __name__ == "__main__":
    main()
