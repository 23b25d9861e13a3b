#!/usr/bin/python3
"""nb_metrics benchmark: the evaluation aggregates over a million prediction
rows, as ratios to SELECT actual, predicted, count(*) ... GROUP BY actual,
predicted over the same table in the same run.

    metrics_bench.py [--rows N] [--classes 2,10,10w] [--reps R] [--keep]

Runs against the cluster in the PG* environment (PGHOST, PGPORT, PGUSER,
PGDATABASE), in which nbc must be installed; test/bench/bench.py (run.sh)
also runs it, and its rows then join the benchmark's table in
test/bench/results.md.  Makes one table per class count, bm_metrics_<C>
(dropped at the end unless --keep; reused when it exists with N rows):
N rows of (actual, predicted, proba, w), actual uniform over C labels,
proba a jsonb object of C probabilities (as nb_predict_proba writes them:
float8 in shortest form), skewed towards the actual class so that about
half the predictions are right, predicted its most probable label, w = 1, 2
or 3.  The probabilities are e^(2u), u uniform in [0, 1) (plus 1.5 for the
actual class), normalized: between about 0.01 and 0.6 for 10 classes.  A
class count with a "w" (table bm_metrics_<C>_wide) spreads them as naive
Bayes does on real text instead, e^(230u) (plus 172.5): most of them far
below 10^-20, down to 10^-100.  Then, per table, in one connection, each query once to warm up and
R rounds alternating the order (A B ..., ... B A): the baseline and
nb_metrics(actual, predicted [, w]) and nb_metrics(actual, proba [, w]).
Settings: jit = off, work_mem = 256MB, no parallel workers.  A query's time
is the client's wall time until its one-row result is in; each round gives
one ratio per query, median and range over the rounds.  Prints a table.
"""
import argparse
import statistics
import sys
import time

import psycopg2

SETTINGS = [("jit", "off"), ("work_mem", "256MB"), ("max_parallel_workers_per_gather", "0")]
BASELINE = "count(*) GROUP BY actual, predicted"
TARGET = 2.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


SPREADS = {False: 2, True: 230}


def parse_spec(spec):
    """(classes, wide) of a class count such as "10" or "10w"."""
    return int(spec.rstrip("w")), spec.endswith("w")


def table_name(classes, wide=False):
    return "bm_metrics_%d%s" % (classes, "_wide" if wide else "")


def make_table(cur, rows, classes, wide=False):
    """The prediction rows of `classes` labels, unless already there."""
    name = table_name(classes, wide)
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (name,))
    if cur.fetchone()[0]:
        cur.execute("SELECT count(*) FROM " + name)
        if cur.fetchone()[0] == rows:
            return
        cur.execute("DROP TABLE " + name)
    log("metrics: making %s (%d rows, %d classes)" % (name, rows, classes))
    spread = SPREADS[wide]
    t = time.perf_counter()
    cur.execute("SELECT setseed(0.25)")
    # e: the unnormalised probability of label k, e^(U(0, s) + 0.75 s for the actual class)
    cur.execute("""
        CREATE TABLE """ + name + """ AS
        SELECT r.i, r.actual, s.predicted, s.proba, (1 + r.i %% 3)::float8 AS w
        FROM (SELECT i, 'c' || lpad(floor(random() * %(c)s)::int::text, 2, '0') AS actual
              FROM generate_series(1, %(n)s) AS i) AS r,
        LATERAL (
            SELECT jsonb_object_agg(k, e / total) AS proba,
                   (array_agg(k ORDER BY e DESC, k))[1] AS predicted
            FROM (SELECT k, e, sum(e) OVER () AS total
                  FROM (SELECT 'c' || lpad(j::text, 2, '0') AS k,
                               exp(%(s)s * random() + CASE WHEN 'c' || lpad(j::text, 2, '0') = r.actual
                                                           THEN 0.75 * %(s)s ELSE 0 END) AS e
                        FROM generate_series(0, %(c)s - 1) AS j) AS x) AS y) AS s""",
                {"c": classes, "n": rows, "s": spread})
    cur.execute("VACUUM ANALYZE " + name)
    log("metrics: %s made in %.0f s" % (name, time.perf_counter() - t))


def timed(cur, sql):
    def run():
        t = time.perf_counter()
        cur.execute(sql)
        cur.fetchall()
        return time.perf_counter() - t
    return run


def measure(cases, reps, label):
    keys = list(cases)
    for k in keys:
        cases[k]()
    times = {k: [] for k in keys}
    for r in range(reps):
        for k in (keys if r % 2 == 0 else keys[::-1]):
            times[k].append(cases[k]())
        log("%s: round %d/%d  %s" % (label, r + 1, reps,
                                      "  ".join("%s %.3fs" % (k, times[k][-1]) for k in keys)))
    return times


def compare(cur, reps, rows=1000000, class_specs=("2", "10", "10w")):
    """Measures every table; returns (comparisons, times): comparisons as
    (measure, definition, numerator times, denominator times, target text,
    pass test), times as {query: [seconds per round]}."""
    for k, v in SETTINGS:
        cur.execute("SET %s = '%s'" % (k, v))
    comparisons = []
    all_times = {}
    for spec in class_specs:
        classes, wide = parse_spec(spec)
        make_table(cur, rows, classes, wide)
        name = table_name(classes, wide)
        cases = {
            BASELINE: timed(cur, "SELECT actual, predicted, count(*) FROM %s GROUP BY actual, predicted"
                            % name),
            "labels": timed(cur, "SELECT nb_metrics(actual, predicted) IS NOT NULL FROM " + name),
            "labels, weighted": timed(cur, "SELECT nb_metrics(actual, predicted, w) IS NOT NULL FROM "
                                      + name),
            "probabilities": timed(cur, "SELECT nb_metrics(actual, proba) IS NOT NULL FROM " + name),
            "probabilities, weighted": timed(cur, "SELECT nb_metrics(actual, proba, w) IS NOT NULL FROM "
                                             + name),
        }
        label = "nb_metrics, %d classes%s" % (classes, ", wide" if wide else "")
        times = measure(cases, reps, label)
        for k, v in times.items():
            all_times["%s, %s rows: %s" % (label, "{:,}".format(rows), k)] = v
        for form in ("labels", "labels, weighted", "probabilities", "probabilities, weighted"):
            comparisons.append((
                "evaluation: nb_metrics(actual, %s) over %s rows of %d classes%s vs count(*) "
                "GROUP BY actual, predicted" % (
                    {"labels": "predicted", "labels, weighted": "predicted, w",
                     "probabilities": "proba", "probabilities, weighted": "proba, w"}[form],
                    "{:,}".format(rows), classes,
                    " (probabilities spread as naive Bayes's on text, down to 1e-100)" if wide else ""),
                "nb_metrics / GROUP BY", times[form], times[BASELINE], "<= %g" % TARGET,
                lambda x: x <= TARGET))
    return comparisons, all_times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--classes", default="2,10,10w")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    class_specs = args.classes.split(",")
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    comparisons, _ = compare(cur, args.reps, args.rows, class_specs)
    print("| comparison | ratio | median | spread (min-max) | target | result |")
    print("|---|---|---|---|---|---|")
    for measure_name, definition, num, den, target, ok in comparisons:
        ratios = [a / b for a, b in zip(num, den)]
        med = statistics.median(ratios)
        print("| %s | %s | %.2f | %.2f-%.2f | %s | %s |" % (
            measure_name, definition, med, min(ratios), max(ratios), target,
            "PASS" if ok(med) else "MISS"))
    if not args.keep:
        for spec in class_specs:
            cur.execute("DROP TABLE IF EXISTS " + table_name(*parse_spec(spec)))


if __name__ == "__main__":
    main()
