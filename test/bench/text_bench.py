#!/usr/bin/python3
"""From a text column to probabilities: nbc against scikit-learn's Pipeline.

    text_bench.py [--reps N]

Runs against the cluster in the PG* environment (nbc installed, table
spamassassin loaded by test/data/load_spamassassin.py); test/bench/run.sh
runs it.  Makes its table tb_lines from the SpamAssassin corpus: every line
of every message that has a token, labelled and split (75/25) as its
message, the raw text as it is (over 100,000 documents).

Three figures, each a median (min-max) over --reps rounds of ratios
measured side by side in the same connection, the order alternating:

  * tokenizing: nb_tokens(body) over every line, against the tokenization
    the README showed before nbc had a tokenizer,
    ARRAY(SELECT m[1] FROM regexp_matches(lower(body), '[a-z][a-z0-9''$-]{1,30}', 'g') AS m),
    on the same rows; and the bytes floor, sum(octet_length(body)) over the
    same rows, as the cost per byte of reading them;
  * end to end: one statement that trains nb_train(label, body) on the
    training lines and computes nb_predict_proba of every held-out line
    (their number and a checksum of the probabilities come back), against
    scikit-learn fed from the same table: COPY out of the three columns,
    Pipeline([CountVectorizer(), MultinomialNB()]).fit on the training
    lines, predict_proba of the held-out ones;
  * the tokens per second both sides see, for the per-token cost against
    the floor.
"""
import argparse
import io
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import connect, log, measure, one, query, table_md, write_section  # noqa: E402

HEADING = "## Text in (test/bench/text_bench.py)"
SQL_TOKENS = "ARRAY(SELECT m[1] FROM regexp_matches(lower(body), '[a-z][a-z0-9''$-]{1,30}', 'g') AS m)"


def make_data(cur):
    if one(cur, "SELECT to_regclass('tb_lines') IS NOT NULL")[0]:
        log("data: tb_lines exists")
        return
    log("data: tb_lines (a document per line of every message)")
    cur.execute(r"""CREATE TABLE tb_lines AS
        SELECT s.label, s.split, l AS body FROM spamassassin s, string_to_table(s.body, E'\n') l
        WHERE l ~ '\w\w'""")
    cur.execute("VACUUM (FREEZE, ANALYZE) tb_lines")


def fmt(ratios):
    return "%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))


def tokenizing(cur, reps):
    cases = {
        "nb_tokens": query(cur, "SELECT sum(cardinality(nb_tokens(body))) FROM tb_lines"),
        "regexp_matches": query(cur, "SELECT sum(cardinality(%s)) FROM tb_lines" % SQL_TOKENS),
        "bytes floor": query(cur, "SELECT sum(octet_length(body)) FROM tb_lines"),
    }
    t = measure("tokenizing", cases, reps)
    tokens = cases["nb_tokens"].last[0][0]
    return t, tokens


def end_to_end(cur, reps):
    nbc = query(cur, """SELECT count(*), sum((p ->> 'spam')::float8)
        FROM (SELECT nb_predict_proba((SELECT nb_train(label, body) FROM tb_lines WHERE split = 'train'), body) AS p
              FROM tb_lines WHERE split = 'test') s""")

    def sklearn():
        import numpy as np
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.naive_bayes import MultinomialNB
        from sklearn.pipeline import Pipeline
        t0 = time.perf_counter()
        buf = io.StringIO()
        cur.copy_expert("COPY (SELECT split, label, body FROM tb_lines) TO STDOUT (FORMAT csv)", buf)
        buf.seek(0)
        import csv
        train_x, train_y, test_x = [], [], []
        for s, label, body in csv.reader(buf):
            if s == "train":
                train_x.append(body)
                train_y.append(label)
            else:
                test_x.append(body)
        pipe = Pipeline([("vec", CountVectorizer()), ("nb", MultinomialNB())]).fit(train_x, np.array(train_y))
        p = pipe.predict_proba(test_x)
        sklearn.result = (len(test_x), float(p[:, list(pipe.classes_).index("spam")].sum()))
        return time.perf_counter() - t0
    t = measure("end to end", {"nbc": nbc, "scikit-learn": sklearn}, reps)
    return [b / a for a, b in zip(t["nbc"], t["scikit-learn"])], nbc.last[0], sklearn.result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    args = ap.parse_args()
    conn = connect()
    cur = conn.cursor()
    make_data(cur)
    rows, size, train = one(cur, "SELECT count(*), sum(octet_length(body)), count(*) FILTER (WHERE split = 'train') "
                                 "FROM tb_lines")
    t, tokens = tokenizing(cur, args.reps)
    speedup = [b / a for a, b in zip(t["nb_tokens"], t["regexp_matches"])]
    floor = [a / b for a, b in zip(t["nb_tokens"], t["bytes floor"])]
    e2e, nbc_res, sk_res = end_to_end(cur, args.reps)
    if nbc_res[0] != sk_res[0] or abs(float(nbc_res[1]) - sk_res[1]) > 1e-6 * max(1.0, sk_res[1]):
        raise SystemExit("text_bench: nbc and scikit-learn disagree: %r vs %r" % (nbc_res, sk_res))
    ns_token = statistics.median(t["nb_tokens"]) / tokens * 1e9
    ns_byte = statistics.median(t["bytes floor"]) / size * 1e9
    rows_md = [
        ["nb_tokens(body) vs the README's regexp_matches tokenization (speed-up)", fmt(speedup)],
        ["nb_tokens(body) vs reading the bytes, sum(octet_length(body)) (times the floor)", fmt(floor)],
        ["end to end: train on text and nb_predict_proba of the held-out lines, "
         "scikit-learn's Pipeline (with COPY out) / nbc", fmt(e2e)],
    ]
    section = "\n".join([
        HEADING, "",
        "%d documents (lines of SpamAssassin messages, %d for training), %.1f MB of text, %d tokens "
        "(CountVectorizer's defaults); medians of %d rounds (min-max)." % (rows, train, size / 1e6, tokens, args.reps),
        "", table_md(["figure", "ratio"], rows_md), "",
        "Per token, nb_tokens took %.0f ns in this run against %.2f ns per byte to read the bytes "
        "(%.1f bytes per token): the ratio above is the one to compare across machines." %
        (ns_token, ns_byte, size / tokens), "",
        "Both sides agree: %d held-out lines, sum of P(spam) %.6f (nbc) and %.6f (scikit-learn)."
        % (nbc_res[0], float(nbc_res[1]), sk_res[1]), ""])
    print(section)
    write_section(args.out, HEADING, section)


if __name__ == "__main__":
    main()
