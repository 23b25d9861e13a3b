#!/usr/bin/python3
"""Held-out accuracy of EM (nb_train_em) against training on the labelled rows only.

    em_accuracy.py [--seeds N] [--first-seed N] [--iterations N] [--fractions 0.01,0.05,0.2] [--lambdas auto|0,0.1,...]
                   [--folds N] [--components K] [--models LIST] [--corpora LIST]

Connects with the libpq environment variables to a database with nbc and
the tables of test/data/load_spamassassin.py, load_reuters.py and
load_fortunes.py (a corpus whose table is missing is skipped and said so).
Prints a Markdown table (the README's, section "Learning from unlabelled
rows"); progress goes to standard error.

Corpora and their splits: SpamAssassin and Reuters grain/other with their
loaders' train/test splits; the Russian fortunes of 8 topical files (love,
polit, knowledge, education, flirt, computer, friendship, book: 5,101
short texts) with every row whose hashtext(label/n) is 0 mod 4 held out.
Tokens: nb_tokens' defaults.  And a control that fits EM's assumptions:
6,000 documents of 20 tokens drawn from the multinomial naive Bayes model of
SpamAssassin's training rows (make_sampled), a quarter held out.

For each fraction of the training labels kept and each seed, a training row
keeps its label when hashtext(seed || key) falls in that fraction of its
range; the other training rows are unlabelled (NULL).  Models:

  labelled only  nb_train over the labelled rows (EM's iteration 0);
  EM             nb_train_em with lambda 1 (the paper's basic EM) and at most
                 --iterations iterations (tolerance 1e-6);
  EM-CM          nb_train_em with lambda 1 and "components" --components (2):
                 each class a mixture of k multinomials (Nigam et al.'s EM-CM);
  EM, lambda auto  nb_train_em with "lambda" "auto" (or the candidates
                 --lambdas) and "folds" --folds (5): the lambda chosen by
                 nb_cross_validate_em (the lowest cross-validated log loss on
                 the labelled rows, the unlabelled rows in every fold's EM,
                 unless its gain is within its standard error: then 0, the
                 labelled rows alone, and a NOTICE says so);
  EM, lambda and k auto  the same with "components" "auto" too: the pair of
                 lambda and components (1, 2 or 4) chosen, 3 times the EM runs.

--models picks the columns (labelled, em, cm, lambda, auto; default all).

Accuracy is nb_predict's on the held-out rows: the mean over the seeds and
their population standard deviation (the spread across draws); "auto -
labelled" is the mean and the worst over the seeds of the difference for
the last automatic choice run (lambda and k, else lambda), "chosen" its
choice per seed and "notices" in how many draws it said that the unlabelled
rows (and components) did not help.
"""

import argparse
import json
import statistics
import sys
import time

import psycopg2

CORPORA = [
    ("spamassassin", "SpamAssassin",
     "SELECT msg_id AS k, label, nb_tokens(body) AS tokens, split FROM spamassassin"),
    ("reuters_grain", "Reuters grain",
     "SELECT id::text AS k, label, nb_tokens(body) AS tokens, split FROM reuters_grain"),
    ("fortunes", "Russian fortunes, 8 topics",
     "SELECT label || '/' || n AS k, label, nb_tokens(body) AS tokens, "
     "CASE WHEN hashtext(label || '/' || n) % 4 = 0 THEN 'test' ELSE 'train' END AS split "
     "FROM fortunes WHERE label IN ('ru/love', 'ru/polit', 'ru/knowledge', 'ru/education', 'ru/flirt', "
     "'ru/computer', 'ru/friendship', 'ru/book')"),
]
# the control: documents drawn from a naive Bayes model (see make_sampled)
CORPORA.append(("em_acc_sampled", "Sampled from SpamAssassin's model (control)",
                "SELECT k, label, tokens, split FROM em_acc_sampled"))
SAMPLED_ROWS = 6000
SAMPLED_LENGTH = 20
# the columns: labelled only, EM, EM-CM, lambda auto, lambda and components auto
MODELS = ("labelled", "em", "cm", "lambda", "auto")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Run:
    def __init__(self, cur, iterations):
        self.cur = cur
        self.iterations = iterations

    def one(self, sql, args=None):
        self.cur.execute(sql, args)
        return self.cur.fetchone()[0]

    def em(self, rel, lam):
        """The model of rel(label, tokens): labelled only for lambda 0."""
        if lam == 0:
            return self.one("SELECT nb_train(label, tokens) FROM " + rel + " WHERE label IS NOT NULL")
        return self.one("SELECT nb_train_em(%s, 'label', 'tokens', %s)",
                        (rel, json.dumps({"lambda": lam, "iterations": self.iterations, "tolerance": 1e-6})))

    def cm(self, rel, components):
        """EM-CM: lambda 1, components per class."""
        return self.one("SELECT nb_train_em(%s, 'label', 'tokens', %s)",
                        (rel, json.dumps({"lambda": 1, "components": components, "iterations": self.iterations,
                                          "tolerance": 1e-6})))

    def auto(self, rel, lambdas, folds, components=None):
        """nb_train_em choosing lambda (and components, if given): the model, the choice as text
        ("lambda" or "lambda/k") and whether the NOTICE that nothing helped came."""
        del self.cur.connection.notices[:]
        opts = {"lambda": lambdas, "folds": folds, "iterations": self.iterations, "tolerance": 1e-6}
        if components is not None:
            opts["components"] = components
        m = self.one("SELECT nb_train_em(%s, 'label', 'tokens', %s)", (rel, json.dumps(opts)))
        notices = self.cur.connection.notices
        said = [n.split("lambda ")[1].split(" chosen")[0] for n in notices if " chosen by " in n][0]
        chosen = "/".join("%g" % float(x) for x in said.split(" and components "))
        return m, chosen, any("did not improve" in n or "improved the model" in n for n in notices)

    def accuracy(self, model, where):
        return self.one("SELECT avg((nb_predict(%s::nb_model, tokens) = truth)::int)::float8 FROM em_acc WHERE "
                        + where, (model,))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds --first-seed to --first-seed + --seeds - 1 (to split a long run; default 0)")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--fractions", default="0.01,0.05,0.2")
    ap.add_argument("--lambdas", default="auto",
                    help="the candidates of lambda, comma-separated (default: \"auto\", nb_cross_validate_em's grid)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--components", type=int, default=2, help="EM-CM's components per class (default 2)")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="the columns, comma-separated, of %s (default: all)" % ", ".join(MODELS))
    ap.add_argument("--corpora", default="spamassassin,reuters_grain,fortunes,em_acc_sampled",
                    help="tables of the corpora to run, comma-separated (default: all)")
    args = ap.parse_args()
    fractions = [float(f) for f in args.fractions.split(",")]
    lambdas = "auto" if args.lambdas == "auto" else [float(x) for x in args.lambdas.split(",")]
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET jit = off")
    cur.execute("SET nbc.unknown_features = ignore")
    run = Run(cur, args.iterations)
    models = [m for m in MODELS if m in args.models.split(",")]
    # each model of a draw: (model, choice, NOTICE) from the view em_acc_train
    train = {"labelled": lambda: (run.em("em_acc_train", 0), None, False),
             "em": lambda: (run.em("em_acc_train", 1.0), None, False),
             "cm": lambda: (run.cm("em_acc_train", args.components), None, False),
             "lambda": lambda: run.auto("em_acc_train", lambdas, args.folds),
             "auto": lambda: run.auto("em_acc_train", lambdas, args.folds, "auto")}
    judged = [m for m in ("auto", "lambda") if m in models][:1]
    heads = {"labelled": "labelled only", "em": "EM (λ = 1)", "cm": "EM-CM (λ = 1, k = %d)" % args.components,
             "lambda": "EM, λ auto", "auto": "EM, λ and k auto"}
    lines = ["| corpus | labels kept | labelled rows | unlabelled rows | test rows | "
             + " | ".join(heads[m] for m in models)
             + (" | auto − labelled: mean, worst | %s chosen | notices |" % ("λ/k" if judged == ["auto"] else "λ")
                if judged and "labelled" in models else " |"),
             "|---|---|---|---|---|" + "---|" * (len(models) + (3 if judged and "labelled" in models else 0))]
    for source, name, select in CORPORA:
        if source not in args.corpora.split(","):
            continue
        if source == "em_acc_sampled" and not one_missing(cur, "spamassassin"):
            make_sampled(cur)
        if one_missing(cur, source):
            log("em_accuracy: no table %s (load it with test/data/load_%s.py): skipped" % (source, source))
            continue
        cur.execute("DROP TABLE IF EXISTS em_acc CASCADE")
        cur.execute("CREATE TABLE em_acc AS SELECT k, label AS truth, tokens, split FROM (" + select + ") s")
        cur.execute("ANALYZE em_acc")
        n_train = run.one("SELECT count(*) FROM em_acc WHERE split = 'train'")
        n_test = run.one("SELECT count(*) FROM em_acc WHERE split = 'test'")
        for frac in fractions:
            acc = {m: [] for m in models}
            chosen, n_lab, notices = [], [], 0
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                keep = "(hashtext('%d/' || k) & 1048575) < %d" % (seed, int(round(frac * 1048576)))
                # the training rows with the labels kept
                cur.execute("CREATE OR REPLACE VIEW em_acc_train AS SELECT k, CASE WHEN %s THEN truth END AS label, "
                            "tokens FROM em_acc WHERE split = 'train'" % keep)
                n_lab.append(run.one("SELECT count(label) FROM em_acc_train"))
                for m in models:
                    start = time.perf_counter()
                    model, choice, notice = train[m]()
                    acc[m].append(run.accuracy(model, "split = 'test'"))
                    if m in judged:
                        chosen.append(choice)
                        notices += notice
                    log("em_accuracy: %s, %g%% of the labels (%d rows), seed %d: %s %.4f%s (%.1f s)" % (
                        name, frac * 100, n_lab[-1], seed, m, acc[m][-1],
                        "" if choice is None else ", chose %s%s" % (choice, ", NOTICE" if notice else ""),
                        time.perf_counter() - start))
            row = "| %s | %g%% | %.0f | %.0f | %d | %s |" % (
                name, frac * 100, statistics.mean(n_lab), n_train - statistics.mean(n_lab), n_test,
                " | ".join(spread(acc[m]) for m in models))
            if judged and "labelled" in models:
                diff = [a - b for a, b in zip(acc[judged[0]], acc["labelled"])]
                row += " %+.4f, %+.4f | %s | %d of %d |" % (statistics.mean(diff), min(diff), ", ".join(chosen),
                                                          notices, args.seeds)
            lines.append(row)
            log(lines[-1])
        cur.execute("DROP TABLE em_acc CASCADE")
        cur.execute("DROP TABLE IF EXISTS em_acc_sampled")
    print("Held-out accuracy, mean ± standard deviation over %d seeds (which rows keep their labels); EM at "
          "most %d iterations; λ auto among %s%s by %d-fold cross-validation."
          % (args.seeds, args.iterations, "nb_cross_validate_em's default grid" if lambdas == "auto" else
             ", ".join("%g" % x for x in lambdas), ", k among 1, 2 and 4" if "auto" in models else "", args.folds))
    print()
    print("\n".join(lines))
    conn.close()


def spread(xs):
    return "%.4f ± %.4f" % (statistics.mean(xs), statistics.pstdev(xs))


def make_sampled(cur):
    """Table em_acc_sampled(k, label, tokens, split): SAMPLED_ROWS documents of SAMPLED_LENGTH
    tokens drawn from the multinomial naive Bayes model of SpamAssassin's training rows (tokens
    seen at least 5 times, probabilities (count + 0.1) / sum, the classes' proportions), a
    quarter held out: data that satisfy the model's assumptions (one multinomial per class)."""
    import numpy as np
    cur.execute("SELECT label, tok, count(*) FROM spamassassin, unnest(nb_tokens(body)) AS tok "
                "WHERE split = 'train' GROUP BY 1, 2")
    counts = {}
    for label, tok, n in cur.fetchall():
        counts.setdefault(label, {})[tok] = n
    total = {}
    for per in counts.values():
        for tok, n in per.items():
            total[tok] = total.get(tok, 0) + n
    vocab = sorted(t for t, n in total.items() if n >= 5)
    labels = sorted(counts)
    cur.execute("SELECT label, count(*) FROM spamassassin WHERE split = 'train' GROUP BY 1 ORDER BY 1")
    prior = np.array([n for _, n in cur.fetchall()], dtype=float)
    prior /= prior.sum()
    rng = np.random.RandomState(31)
    rows = []
    for i in range(SAMPLED_ROWS):
        c = rng.choice(len(labels), p=prior)
        rows.append((c, i))
    theta = []
    for label in labels:
        v = np.array([counts[label].get(t, 0) + 0.1 for t in vocab])
        theta.append(v / v.sum())
    cur.execute("DROP TABLE IF EXISTS em_acc_sampled")
    cur.execute("CREATE TABLE em_acc_sampled (k text, label text, tokens text[], split text)")
    data = []
    for c, i in rows:
        toks = [vocab[j] for j in rng.choice(len(vocab), size=SAMPLED_LENGTH, p=theta[c])]
        data.append(("s%05d" % i, labels[c], toks, "test" if i % 4 == 0 else "train"))
    cur.executemany("INSERT INTO em_acc_sampled VALUES (%s, %s, %s, %s)", data)


def one_missing(cur, source):
    cur.execute("SELECT to_regclass(%s)", (source,))
    return cur.fetchone()[0] is None


if __name__ == "__main__":
    main()
