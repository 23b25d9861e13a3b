#!/usr/bin/python3
"""Where the end-to-end text time goes, in CPU time rather than wall time.

    text_cpu.py [--reps N]

The companion of test/bench/text_bench.py (same tables: tb_lines, which
text_bench.py makes, and spamassassin): each part of its end-to-end
statement run alone, timed as the CPU time the server backend spent on it
(/proc/PID/schedstat, so the server must run on this machine; no parallel
workers, whose time the backend's would not include), and scikit-learn's
pipeline as its own process time plus the backend's time for the COPY.  CPU
time moves far less than wall time when other work shares the machine, so
the parts can be told apart.  Prints a Markdown table of medians (min-max)
over --reps alternating rounds, and each side's cost per document and per
token from the lines and the whole messages, which hold the same tokens.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import connect, log, one  # noqa: E402
from text_bench import E2E_SQL, make_data, sklearn_case  # noqa: E402

MODEL = "(SELECT m FROM tc_model)"
PARTS = [
    ("scan of the training lines", "SELECT count(*) FROM tb_lines WHERE split = 'train'"),
    ("nb_tokens of the training lines", "SELECT sum(cardinality(nb_tokens(body))) FROM tb_lines WHERE split = 'train'"),
    ("nb_train on the training lines", "SELECT pg_column_size(nb_train(label, body)) FROM tb_lines WHERE split = 'train'"),
    ("scan of the held-out lines", "SELECT count(*) FROM tb_lines WHERE split = 'test'"),
    ("nb_predict of the held-out lines (a stored model)",
     "SELECT count(nb_predict(%s, body)) FROM tb_lines WHERE split = 'test'" % MODEL),
    ("nb_predict_proba of the held-out lines",
     "SELECT count(nb_predict_proba(%s, body)) FROM tb_lines WHERE split = 'test'" % MODEL),
    ("the same, and (p ->> 'spam')::float8 summed",
     "SELECT sum((nb_predict_proba(%s, body) ->> 'spam')::float8) FROM tb_lines WHERE split = 'test'" % MODEL),
    ("nb_probability of the held-out lines, summed",
     "SELECT sum(nb_probability(%s, body, 'spam')) FROM tb_lines WHERE split = 'test'" % MODEL),
    ("end to end, lines", E2E_SQL.format(t="tb_lines")),
    ("nb_tokens of the training messages",
     "SELECT sum(cardinality(nb_tokens(body))) FROM spamassassin WHERE split = 'train'"),
    ("nb_train on the training messages",
     "SELECT pg_column_size(nb_train(label, body)) FROM spamassassin WHERE split = 'train'"),
    ("end to end, messages", E2E_SQL.format(t="spamassassin")),
]
SKLEARN = [("scikit-learn end to end, lines", "tb_lines"), ("scikit-learn end to end, messages", "spamassassin")]


def backend_cpu(pid):
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    conn = connect()
    cur = conn.cursor()
    make_data(cur)
    pid = one(cur, "SELECT pg_backend_pid()")[0]
    cur.execute("SET client_min_messages = error")
    cur.execute("DROP TABLE IF EXISTS tc_model")
    cur.execute("CREATE TABLE tc_model AS SELECT nb_train(label, body) AS m FROM tb_lines WHERE split = 'train'")

    def sql_case(sql):
        def run():
            c0 = backend_cpu(pid)
            cur.execute(sql)
            cur.fetchall()
            return backend_cpu(pid) - c0
        return run

    def sklearn_cpu(table):
        fn = sklearn_case(cur, table)

        def run():
            c0, p0 = backend_cpu(pid), time.process_time()
            fn()
            return backend_cpu(pid) - c0 + time.process_time() - p0
        return run

    cases = [(name, sql_case(sql)) for name, sql in PARTS] + [(name, sklearn_cpu(t)) for name, t in SKLEARN]
    times = {name: [] for name, _ in cases}
    for name, fn in cases:
        fn()
    for r in range(args.reps):
        for name, fn in (cases if r % 2 == 0 else cases[::-1]):
            times[name].append(fn())
        log("round %d/%d" % (r + 1, args.reps))
    med = {k: statistics.median(v) for k, v in times.items()}
    print("| part | CPU ms, median (min-max) |\n|---|---|")
    for name, _ in cases:
        print("| %s | %.0f (%.0f-%.0f) |" % (name, med[name] * 1e3, min(times[name]) * 1e3, max(times[name]) * 1e3))
    lines, msgs = one(cur, "SELECT count(*) FROM tb_lines")[0], one(cur, "SELECT count(*) FROM spamassassin")[0]
    tokens = one(cur, "SELECT sum(cardinality(nb_tokens(body))) FROM spamassassin")[0]
    print()
    for side, a, b in [("nbc", "end to end, lines", "end to end, messages"),
                       ("scikit-learn", "scikit-learn end to end, lines", "scikit-learn end to end, messages")]:
        per_doc = (med[a] - med[b]) / (lines - msgs)
        per_token = (med[b] - msgs * per_doc) / tokens
        print("%s: %.0f ns per document, %.0f ns per token" % (side, per_doc * 1e9, per_token * 1e9))
    print("ratio scikit-learn / nbc: lines %.2f, messages %.2f" % (
        med["scikit-learn end to end, lines"] / med["end to end, lines"],
        med["scikit-learn end to end, messages"] / med["end to end, messages"]))
    cur.execute("DROP TABLE tc_model")


if __name__ == "__main__":
    main()
