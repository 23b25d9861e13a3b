#!/usr/bin/python3
"""Scoring with a model the query computes: per-row cost against a stored
model of the same bytes, end to end against scikit-learn, and merging.

    computed_bench.py [--reps N] [--merge-rows N]

Runs against the cluster in the PG* environment (nbc installed, table
spamassassin loaded by test/data/load_spamassassin.py); test/bench/run.sh
runs it.  Makes its tables (cb_*) from the SpamAssassin corpus:

  cb_mail   the messages, tokens as CountVectorizer's default pattern finds
            them (lower case, two or more word characters), split 75/25
  cb_lines  short documents: every line of every message with two tokens or
            more, labelled as its message, split as its message

For each corpus and each way of writing "train on the training rows, then
score rows in the same statement" (a scalar subquery, a MATERIALIZED CTE,
an inlined CTE, a join with a derived table, a function's result in a
scalar subquery, the nb_merge of stored halves), the per-row cost is (time
scoring every row of the table - time scoring one) / (rows - 1), training
included in both; its ratio to the same with a stored model (a join with a
one-row table) is the figure.
End to end is one statement that trains and counts the right predictions,
against scikit-learn fed from the same table (COPY out, CountVectorizer over
the same tokens, MultinomialNB fit and predict).  Merging is the shape of
issue #25: four partial models of GROUP BY g % 4 over --merge-rows rows of
three tokens, three classes; nb_merge(a, b) and the aggregate nb_merge of
the four, against reading the same models (nb_info of each).

Every figure is a median over --reps rounds of ratios measured side by side
in the same connection, the order of the cases alternating.
"""
import argparse
import io
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import connect, log, measure, one, query, write_section  # noqa: E402

TOKENS = r"[[:alnum:]_]{2,}"
HEADING = "## Models computed by the query (test/bench/computed_bench.py)"


def make_data(cur, merge_rows):
    if one(cur, "SELECT to_regclass('cb_lines') IS NOT NULL")[0]:
        log("data: cb_mail, cb_lines exist")
    else:
        log("data: cb_mail (tokenized messages)")
        cur.execute("""CREATE TABLE cb_mail AS
            SELECT label, split, ARRAY(SELECT m[1] FROM regexp_matches(lower(body), %s, 'g') m) AS tokens
            FROM spamassassin""", (TOKENS,))
        log("data: cb_lines (a document per line)")
        cur.execute("""CREATE TABLE cb_lines AS
            SELECT s.label, s.split, t.tokens FROM spamassassin s,
              LATERAL (SELECT ARRAY(SELECT m[1] FROM regexp_matches(lower(l), %s, 'g') m) AS tokens
                       FROM string_to_table(s.body, E'\\n') l) t
            WHERE cardinality(t.tokens) >= 2""", (TOKENS,))
        cur.execute("VACUUM (FREEZE, ANALYZE) cb_mail, cb_lines")
    if (one(cur, "SELECT to_regclass('cb_parts') IS NOT NULL")[0] and
            one(cur, "SELECT sum(n) FROM cb_parts")[0] == merge_rows):
        log("data: cb_parts exists")
    else:
        log("data: cb_parts (four partial models of %d rows)" % merge_rows)
        cur.execute("DROP TABLE IF EXISTS cb_parts")
        cur.execute("""CREATE TABLE cb_parts AS
            SELECT g %% 4 AS part, count(*) AS n,
                   nb_train((ARRAY['a', 'b', 'c'])[g %% 3 + 1],
                            ARRAY['tok' || (g::bigint * 7919 %% 1000000), 'w' || (g %% 50000), 'x' || (g %% 1000)]) AS m
            FROM generate_series(1, %s) g GROUP BY g %% 4""", (merge_rows,))
        cur.execute("DROP TABLE IF EXISTS cb_merged")
        cur.execute("""CREATE TABLE cb_merged AS
            SELECT (SELECT nb_merge(m) FROM cb_parts) AS four,
                   (SELECT nb_merge(m) FROM cb_parts WHERE part IN (0, 1)) AS two""")
        cur.execute("VACUUM (FREEZE, ANALYZE) cb_parts, cb_merged")


def corpus_setup(cur, table):
    cur.execute("DROP TABLE IF EXISTS cb_model, cb_halves")
    cur.execute("CREATE TABLE cb_model AS SELECT nb_train(label, tokens) AS m FROM %s WHERE split = 'train'"
                % table)
    # two halves whose merge is the model, byte for byte
    cur.execute("""CREATE TABLE cb_halves AS
        SELECT nb_train(label, tokens) AS m FROM (SELECT label, tokens, row_number() OVER () %% 2 AS h
                                                  FROM %s WHERE split = 'train') t GROUP BY h""" % table)
    cur.execute("""CREATE OR REPLACE FUNCTION cb_train() RETURNS nb_model LANGUAGE sql STABLE
                   AS 'SELECT nb_train(label, tokens) FROM %s WHERE split = ''train'''""" % table)
    cur.execute("VACUUM ANALYZE cb_model, cb_halves")
    same = one(cur, "SELECT (SELECT nb_merge(m) FROM cb_halves) = (SELECT m FROM cb_model)")[0]
    if not same:
        raise SystemExit("computed_bench: the merged halves are not the stored model")
    size, = one(cur, "SELECT pg_column_size(m) FROM cb_model")
    rows, = one(cur, "SELECT count(*) FROM %s" % table)
    return size, rows


def forms(table, fn, test):
    """Each form's query: fn applied to the model and the test row's tokens."""
    train = "SELECT nb_train(label, tokens) AS m FROM %s WHERE split = 'train'" % table
    score = fn
    return {
        "stored": "SELECT %s FROM %s d, cb_model s WHERE %s" % (score % ("s.m",), table, test),
        "scalar subquery": "SELECT %s FROM %s d WHERE %s" % (score % ("(%s)" % train,), table, test),
        "MATERIALIZED CTE": "WITH c AS MATERIALIZED (%s) SELECT %s FROM %s d, c WHERE %s"
                            % (train, score % ("c.m",), table, test),
        "inlined CTE": "WITH c AS (%s) SELECT %s FROM %s d, c WHERE %s"
                       % (train, score % ("c.m",), table, test),
        "derived table": "SELECT %s FROM %s d, (%s) c WHERE %s" % (score % ("c.m",), table, train, test),
        "function in a scalar subquery": "SELECT %s FROM %s d WHERE %s"
                                         % (score % ("(SELECT cb_train())",), table, test),
        "nb_merge of stored halves": "SELECT %s FROM %s d WHERE %s"
                                     % (score % ("(SELECT nb_merge(m) FROM cb_halves)",), table, test),
    }


FUNCTIONS = {
    "nb_predict_proba": "count(nb_predict_proba(%s, d.tokens))",
    "nb_predict": "count(nb_predict(%s, d.tokens))",
    "nb_predict_log_proba": "count(nb_predict_log_proba(%s, d.tokens))",
    "nb_grid_metrics": "nb_grid_metrics(%s, d.tokens, d.label, ARRAY['{}'::jsonb, '{\"alpha\": 0.5}'])",
}


def per_row(cur, table, rows, reps, fn, form_names):
    """{form: [per-row ratio to stored, per round]} for the scoring function fn."""
    one_row = "d.ctid = (SELECT min(ctid) FROM %s)" % table
    cases = {}
    for test_name, test in (("all", "true"), ("one", one_row)):
        for form, sql in forms(table, fn, test).items():
            if form in form_names:
                cases["%s/%s" % (form, test_name)] = query(cur, sql)
    t = measure("%s %s" % (table, fn[:24]), cases, reps)
    cost = {f: [(a - b) / (rows - 1) for a, b in zip(t[f + "/all"], t[f + "/one"])] for f in form_names}
    return {f: [a / b for a, b in zip(cost[f], cost["stored"])] for f in form_names if f != "stored"}, cost


def end_to_end(cur, table, reps):
    sql = ("SELECT count(*) FILTER (WHERE nb_predict((SELECT nb_train(label, tokens) FROM %s "
           "WHERE split = 'train'), tokens) = label), count(*) FROM %s WHERE split = 'test'" % (table, table))
    nbc = query(cur, sql)

    def sklearn():
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.naive_bayes import MultinomialNB
        import time
        t0 = time.perf_counter()
        buf = io.StringIO()
        cur.copy_expert("COPY (SELECT split, label, array_to_string(tokens, ' ') FROM %s) TO STDOUT"
                        % table, buf)
        train_x, train_y, test_x, test_y = [], [], [], []
        for line in buf.getvalue().split("\n"):
            if line:
                s, label, text = line.split("\t", 2)
                (train_x if s == "train" else test_x).append(text.split(" "))
                (train_y if s == "train" else test_y).append(label)
        vec = CountVectorizer(analyzer=lambda x: x)
        clf = MultinomialNB().fit(vec.fit_transform(train_x), np.array(train_y))
        sklearn.correct = int((clf.predict(vec.transform(test_x)) == np.array(test_y)).sum())
        return time.perf_counter() - t0
    t = measure("end to end %s" % table, {"nbc": nbc, "scikit-learn": sklearn}, reps)
    ratios = [b / a for a, b in zip(t["nbc"], t["scikit-learn"])]
    return ratios, nbc.last[0][0], sklearn.correct, nbc.last[0][1]


def merging(cur, reps):
    """Each merge, and the floor of a merge followed by a read of its result:
    reading the inputs and reading the merged model (stored), against reading
    the inputs."""
    cases = {
        "nb_merge(a, b)": query(cur, "SELECT nb_info(nb_merge(a.m, b.m)) FROM cb_parts a, cb_parts b "
                                     "WHERE a.part = 0 AND b.part = 1"),
        "read a, b": query(cur, "SELECT nb_info(a.m), nb_info(b.m) FROM cb_parts a, cb_parts b "
                                "WHERE a.part = 0 AND b.part = 1"),
        "read merged two": query(cur, "SELECT nb_info(two) FROM cb_merged"),
        "nb_merge of four": query(cur, "SELECT nb_info(nb_merge(m)) FROM cb_parts"),
        "read four": query(cur, "SELECT nb_info(m) FROM cb_parts"),
        "read merged four": query(cur, "SELECT nb_info(four) FROM cb_merged"),
    }
    t = measure("merge", cases, reps)

    def ratio(num, den):
        return [a / b for a, b in zip(t[num], t[den])]

    def floor(merged, inputs):
        return [(a + b) / b for a, b in zip(t[merged], t[inputs])]
    return (ratio("nb_merge(a, b)", "read a, b"), floor("read merged two", "read a, b"),
            ratio("nb_merge of four", "read four"), floor("read merged four", "read four"))


def fmt(ratios):
    return "%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--merge-rows", type=int, default=2000000)
    ap.add_argument("--corpora", default="cb_mail,cb_lines",
                    help="which corpora to score (comma-separated; default both)")
    ap.add_argument("--no-merge", action="store_true", help="leave the merging rows out")
    ap.add_argument("--out", help="also write the tables as a section of this Markdown file "
                                  "(test/bench/run.sh: results.md)")
    args = ap.parse_args()
    conn = connect()
    cur = conn.cursor()
    make_data(cur, args.merge_rows)
    out = []
    all_forms = list(forms("t", "%s", "true"))
    for name, table in (("SpamAssassin messages", "cb_mail"), ("SpamAssassin lines", "cb_lines")):
        if table not in args.corpora.split(","):
            continue
        size, rows = corpus_setup(cur, table)
        out.append("\n### %s (%s): %d documents, model %.0f kB\n" % (name, table, rows, size / 1024))
        out.append("| form | scoring function | per row, computed / stored |")
        out.append("|---|---|---|")
        for fn_name, fn in FUNCTIONS.items():
            names = all_forms if fn_name == "nb_predict_proba" else ["stored", "scalar subquery"]
            ratios, cost = per_row(cur, table, rows, args.reps, fn, names)
            for form, r in ratios.items():
                out.append("| %s | %s | %s |" % (form, fn_name, fmt(r)))
            if fn_name == "nb_predict_proba":
                out.append("| (stored: %.2f µs a row) | | |" % (statistics.median(cost["stored"]) * 1e6))
        ratios, right, sk_right, total = end_to_end(cur, table, args.reps)
        out.append("\nEnd to end, one statement (train, score %d test rows, count the right ones) "
                   "vs scikit-learn from the same table: **%s** times faster (right: nbc %d, "
                   "scikit-learn %d)." % (total, fmt(ratios), right, sk_right))
    if not args.no_merge:
        out.extend(merge_rows(cur, args))
    print("\n".join(out))
    if args.out:
        write_section(args.out, HEADING, "%s\n\nCommand: `/usr/bin/python3 test/bench/computed_bench.py "
                      "--reps %d`; ratios of medians over the rounds, min-max in brackets.\n%s\n"
                      % (HEADING, args.reps, "\n".join(out)))


def merge_rows(cur, args):
    two, two_floor, four, four_floor = merging(cur, args.reps)
    out = []
    out.append("\n### Merging (%d rows, four partial models)\n" % args.merge_rows)
    out.append("| query | ratio to reading the inputs | floor: reading the inputs and the result |")
    out.append("|---|---|---|")
    out.append("| nb_info(nb_merge(a, b)) | %s | %s |" % (fmt(two), fmt(two_floor)))
    out.append("| nb_info of the aggregate nb_merge of the four | %s | %s |" % (fmt(four), fmt(four_floor)))
    return out


if __name__ == "__main__":
    main()
