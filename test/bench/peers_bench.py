#!/usr/bin/python3
"""nbc against the peers a user would pick: scikit-learn and fastText.

    peers_bench.py [--rounds N] [--cv-rounds N] [--out FILE]
    NBC_CITUS='host=... port=... dbname=...' peers_bench.py ...

Runs against the cluster in the PG* environment (nbc installed; tables
spamassassin, reuters_grain and fortunes loaded by test/data's loaders;
test/bench/run.sh loads them and runs this).  On each corpus, one
held-out split, the same rows for every side, one thread each:

  SpamAssassin   6,046 raw e-mails, ham/spam, its split column (75/25)
  Reuters Grain  2,158 news stories, grain/other, the ModApte split
  Russian fortunes
                 20,893 fortunes of fortunes-ru, 98 classes (the file each
                 comes from), every fourth by a hash of label and number held
                 out (abs(hashtext(label || '/' || n)) % 4 = 0)

  nbc            one statement: nb_train(label, body) of the training rows
                 (its default tokenizer) and the count of held-out rows whose
                 nb_predict is their label; serial (no parallel workers)
  scikit-learn   the rows read out of the same table (COPY), then
                 Pipeline([CountVectorizer(), MultinomialNB()]).fit on the
                 training rows and predict of the held-out ones
  fastText       the rows read out the same way, written to a training file
                 (one line per row: __label__<label> and the text, line ends
                 as spaces), train_supervised with its defaults and
                 thread=1, predict of the held-out ones

Each round runs the three in alternating order; the table gives accuracy,
nbc's median time and each peer's time over nbc's in the same round
(median, min-max).  Cross-validation (--cv-rounds, default 1; 0: none), on
every SpamAssassin message: nb_cross_validate(folds => 5, grid => cv_bench.py's
20 option sets) against GridSearchCV(Pipeline([CountVectorizer(), nb]), the
same 20 option sets (cv_bench.sklearn_grid), 5 stratified folds, n_jobs=1
(the vectorizer fitted again for each option set and fold, as the plain
pipeline of scikit-learn's text tutorial does; with memory= the cache
spent 2.5-4.3 s hashing the raw texts on each call, by joblib's warnings);
each side's own folds, the best mean accuracy of each.

With NBC_CITUS set (a libpq connection string of a Citus coordinator, as
test/citus/run.sh takes it), the Citus ratios of issue #44 follow, from
citus_bench.py --issue-ratios on that cluster; without it, a loud "not
measured: no Citus cluster" line.  The tables go to standard output and, as
a section, to --out (default test/bench/results.md).
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import connect, log, one, write_section  # noqa: E402
from cv_bench import GRID, sklearn_grid  # noqa: E402

csv.field_size_limit(1 << 30)

HEADING = "## Against scikit-learn and fastText (test/bench/peers_bench.py)"
CORPORA = [
    ("SpamAssassin", "SELECT label, body, split = 'test' AS test FROM spamassassin"),
    ("Reuters Grain", "SELECT label, body, split = 'test' AS test FROM reuters_grain"),
    ("Russian fortunes", "SELECT label, body, abs(hashtext(label || '/' || n)) % 4 = 0 AS test "
                         "FROM fortunes WHERE lang = 'ru'"),
]


def nbc_case(cur, rows):
    sql = ("WITH r AS MATERIALIZED (%s), m AS (SELECT nb_train(label, body) AS model FROM r WHERE NOT test) "
           "SELECT count(*) FILTER (WHERE nb_predict(m.model, r.body) = r.label), count(*) "
           "FROM r, m WHERE r.test" % rows)

    def run():
        t = time.perf_counter()
        right, n = one(cur, sql)
        run.accuracy = right / n
        return time.perf_counter() - t
    return run


def export(cur, rows):
    """(labels, texts, test flags) of rows, read out with COPY."""
    buf = io.StringIO()
    cur.copy_expert("COPY (%s) TO STDOUT WITH (FORMAT csv)" % rows, buf)
    buf.seek(0)
    labels, texts, test = [], [], []
    for label, body, flag in csv.reader(buf):
        labels.append(label)
        texts.append(body)
        test.append(flag == "t")
    return labels, texts, test


def sklearn_case(cur, rows):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import Pipeline

    def run():
        t = time.perf_counter()
        labels, texts, test = export(cur, rows)
        train = [i for i, x in enumerate(test) if not x]
        held = [i for i, x in enumerate(test) if x]
        p = Pipeline([("vec", CountVectorizer()), ("nb", MultinomialNB())])
        p.fit([texts[i] for i in train], [labels[i] for i in train])
        pred = p.predict([texts[i] for i in held])
        run.accuracy = sum(pred[k] == labels[i] for k, i in enumerate(held)) / len(held)
        return time.perf_counter() - t
    return run


def fasttext_case(cur, rows, tmp):
    import fasttext

    def line(text):
        return " ".join(text.split())

    def run():
        t = time.perf_counter()
        labels, texts, test = export(cur, rows)
        path = os.path.join(tmp, "train.txt")
        with open(path, "w") as f:
            for label, text, x in zip(labels, texts, test):
                if not x:
                    f.write("__label__%s %s\n" % (label.replace(" ", "_"), line(text)))
        model = fasttext.train_supervised(input=path, thread=1, verbose=0)
        held = [i for i, x in enumerate(test) if x]
        pred, _ = model.predict([line(texts[i]) for i in held])
        run.accuracy = sum(p[0] == "__label__" + labels[i].replace(" ", "_")
                           for p, i in zip(pred, held)) / len(held)
        return time.perf_counter() - t
    return run


def fmt(ratios):
    return "%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))


def corpus_row(cur, name, rows, rounds, tmp):
    cur.execute("SELECT count(*) FILTER (WHERE NOT test), count(*) FILTER (WHERE test), "
                "count(DISTINCT label) FROM (%s) r" % rows)
    n_train, n_test, classes = cur.fetchone()
    cases = {"nbc": nbc_case(cur, rows), "scikit-learn": sklearn_case(cur, rows),
             "fastText": fasttext_case(cur, rows, tmp)}
    times = {k: [] for k in cases}
    for k in cases:
        cases[k]()
    for r in range(rounds):
        for k in (list(cases) if r % 2 == 0 else list(cases)[::-1]):
            times[k].append(cases[k]())
        log("== %s round %d: %s" % (name, r + 1, ", ".join("%s %.3f s" % (k, v[-1]) for k, v in times.items())))
    ratio = {k: [a / b for a, b in zip(times[k], times["nbc"])] for k in ("scikit-learn", "fastText")}
    return ("| %s (%d / %d held out, %d classes) | %.3f; %.2f s | %.3f; %s | %.3f; %s |"
            % (name, n_train, n_test, classes, cases["nbc"].accuracy, statistics.median(times["nbc"]),
               cases["scikit-learn"].accuracy, fmt(ratio["scikit-learn"]),
               cases["fastText"].accuracy, fmt(ratio["fastText"])))


def cv_row(cur, rounds):
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import Pipeline
    grid = sklearn_grid()
    rows = "SELECT label, body, false AS test FROM spamassassin"
    nbc_sql = ("SELECT max(accuracy) FROM nb_cross_validate('spamassassin', 'label', 'body', folds => 5, "
               "grid => '%s')" % GRID)

    def nbc():
        t = time.perf_counter()
        nbc.accuracy = one(cur, nbc_sql)[0]
        return time.perf_counter() - t

    def sklearn():
        t = time.perf_counter()
        labels, texts, _ = export(cur, rows)
        gs = GridSearchCV(Pipeline([("vec", CountVectorizer()), ("nb", MultinomialNB())]), grid,
                          scoring="accuracy", cv=StratifiedKFold(5, shuffle=True, random_state=0),
                          n_jobs=1, refit=False)
        gs.fit(texts, np.array(labels))
        sklearn.accuracy = max(gs.cv_results_["mean_test_score"])
        return time.perf_counter() - t

    times = {"nbc": [], "sk": []}
    for r in range(rounds):
        for k, fn in ((("nbc", nbc), ("sk", sklearn)) if r % 2 == 0 else (("sk", sklearn), ("nbc", nbc))):
            times[k].append(fn())
        log("== cross-validation round %d: nbc %.3f s, GridSearchCV %.3f s" % (r + 1, times["nbc"][-1],
                                                                              times["sk"][-1]))
    ratio = [a / b for a, b in zip(times["sk"], times["nbc"])]
    return ("| SpamAssassin, 5-fold cross-validation of 20 option sets (`nb_cross_validate`, `GridSearchCV`): "
            "best accuracy | %.3f; %.2f s | %.3f; %s | — |"
            % (nbc.accuracy, statistics.median(times["nbc"]), sklearn.accuracy, fmt(ratio)))


def citus_rows():
    """The Citus rows of the table, and a line on the run (or on its absence)."""
    conninfo = os.environ.get("NBC_CITUS")
    if not conninfo:
        log("!!! Citus: not measured: no Citus cluster (set NBC_CITUS)")
        return ["| Citus | **not measured: no Citus cluster** (set NBC_CITUS) | — | — |"], ""
    out = subprocess.run([sys.executable, os.path.join(HERE, "citus_bench.py"), "--issue-ratios",
                          "--conninfo", conninfo, "--rows", "1000000", "--rounds", "3", "--pitfall-rows", "0"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout.strip("\n").split("\n")
    # citus_bench.py's table: a header, its rule, a row per workload, then a note
    rows = ["| Citus, distributed / local: %s | %s | — | — |" % tuple(c.strip() for c in r.strip("|").split("|"))
            for r in out[2:] if r.startswith("|")]
    return rows, out[1 + out.index("")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cv-rounds", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    args = ap.parse_args()
    cur = connect().cursor()
    cur.execute("SET max_parallel_workers_per_gather = 0")
    lines = ["| workload | nbc: accuracy; time | scikit-learn: accuracy; time / nbc's | "
             "fastText: accuracy; time / nbc's |", "|---|---|---|---|"]
    citus, citus_note = citus_rows()
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in CORPORA:
            lines.append(corpus_row(cur, name, rows, args.rounds, tmp))
        if args.cv_rounds:
            lines.append(cv_row(cur, args.cv_rounds))
    lines += citus + ["", citus_note]
    load = os.getloadavg()
    section = "%s\n\n%s\n\nRounds: %d (cross-validation %d); load average at the end %.1f.\n" % (
        HEADING, "\n".join(lines), args.rounds, args.cv_rounds, load[0])
    print(section)
    write_section(args.out, HEADING, section)


if __name__ == "__main__":
    main()
