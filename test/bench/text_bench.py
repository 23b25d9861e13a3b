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
    training lines and computes each held-out line's probability of spam,
    nb_probability (their number and the sum of the probabilities come
    back; also through nb_predict_proba's object, ->> 'spam'), against
    scikit-learn fed from the same table: COPY out of the three columns,
    Pipeline([CountVectorizer(), MultinomialNB()]).fit on the training
    lines, predict_proba of the held-out ones; the same statement with
    PostgreSQL's default of 2 parallel workers per Gather (the other
    figures run without, as test/bench/bench.py sets);
  * the same end to end on the whole messages (table spamassassin): the
    same text and the same tokens in 6,046 documents instead of over
    half a million, so the two runs split each side's time into a cost
    per document and a cost per token, (time(lines) - time(messages)) /
    (documents(lines) - documents(messages)) and the rest, and give the
    ratio documents of any length would have;
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
from bench import connect, log, measure, one, query, table_md, with_settings, write_section  # noqa: E402

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


E2E_SQL = """SELECT count(*), sum(p)
    FROM (SELECT nb_probability((SELECT nb_train(label, body) FROM {t} WHERE split = 'train'), body, 'spam') AS p
          FROM {t} WHERE split = 'test') s"""
# the same through the object of every class, as a query written before nb_probability reads it
E2E_JSONB_SQL = """SELECT count(*), sum((p ->> 'spam')::float8)
    FROM (SELECT nb_predict_proba((SELECT nb_train(label, body) FROM {t} WHERE split = 'train'), body) AS p
          FROM {t} WHERE split = 'test') s"""


def sklearn_case(cur, table):
    """scikit-learn's Pipeline fed by COPY out of table; its result in .result."""
    def run():
        import csv
        import numpy as np
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.naive_bayes import MultinomialNB
        from sklearn.pipeline import Pipeline
        t0 = time.perf_counter()
        buf = io.StringIO()
        cur.copy_expert("COPY (SELECT split, label, body FROM %s) TO STDOUT (FORMAT csv)" % table, buf)
        buf.seek(0)
        csv.field_size_limit(sys.maxsize)   # whole messages are longer than csv's default limit
        train_x, train_y, test_x = [], [], []
        for s, label, body in csv.reader(buf):
            if s == "train":
                train_x.append(body)
                train_y.append(label)
            else:
                test_x.append(body)
        pipe = Pipeline([("vec", CountVectorizer()), ("nb", MultinomialNB())]).fit(train_x, np.array(train_y))
        p = pipe.predict_proba(test_x)
        run.result = (len(test_x), float(p[:, list(pipe.classes_).index("spam")].sum()))
        return time.perf_counter() - t0
    return run


def agree(name, nbc_res, sk_res):
    if nbc_res[0] != sk_res[0] or abs(float(nbc_res[1]) - sk_res[1]) > 1e-6 * max(1.0, sk_res[1]):
        raise SystemExit("text_bench: nbc and scikit-learn disagree on %s: %r vs %r" % (name, nbc_res, sk_res))


def end_to_end(cur, reps):
    """Lines (serial and with parallel workers) and whole messages, side by side in each round."""
    cases = {
        "nbc lines": query(cur, E2E_SQL.format(t="tb_lines")),
        "nbc lines, nb_predict_proba ->> 'spam'": query(cur, E2E_JSONB_SQL.format(t="tb_lines")),
        "nbc lines, 2 parallel workers": with_settings(
            cur, [("max_parallel_workers_per_gather", "2")], query(cur, E2E_SQL.format(t="tb_lines"))),
        "scikit-learn lines": sklearn_case(cur, "tb_lines"),
        "nbc messages": query(cur, E2E_SQL.format(t="spamassassin")),
        "scikit-learn messages": sklearn_case(cur, "spamassassin"),
    }
    t = measure("end to end", cases, reps)
    agree("lines", cases["nbc lines"].last[0], cases["scikit-learn lines"].result)
    agree("messages", cases["nbc messages"].last[0], cases["scikit-learn messages"].result)
    return t, cases["nbc lines"].last[0], cases["scikit-learn lines"].result


def split_costs(t, rows_lines, rows_msgs, tokens):
    """Per document and per token costs of each side (seconds), from the medians."""
    out = {}
    for side in ("nbc", "scikit-learn"):
        lines = statistics.median(t["%s lines" % side])
        msgs = statistics.median(t["%s messages" % side])
        per_doc = (lines - msgs) / (rows_lines - rows_msgs)
        out[side] = (per_doc, (msgs - rows_msgs * per_doc) / tokens)
    return out


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
    msgs = one(cur, "SELECT count(*) FROM spamassassin")[0]
    e2e_t, nbc_res, sk_res = end_to_end(cur, args.reps)
    e2e = [b / a for a, b in zip(e2e_t["nbc lines"], e2e_t["scikit-learn lines"])]
    e2e_jsonb = [b / a for a, b in zip(e2e_t["nbc lines, nb_predict_proba ->> 'spam'"], e2e_t["scikit-learn lines"])]
    e2e_par = [b / a for a, b in zip(e2e_t["nbc lines, 2 parallel workers"], e2e_t["scikit-learn lines"])]
    e2e_msg = [b / a for a, b in zip(e2e_t["nbc messages"], e2e_t["scikit-learn messages"])]
    costs = split_costs(e2e_t, rows, msgs, tokens)
    (nb_doc, nb_tok), (sk_doc, sk_tok) = costs["nbc"], costs["scikit-learn"]
    ns_token = statistics.median(t["nb_tokens"]) / tokens * 1e9
    ns_byte = statistics.median(t["bytes floor"]) / size * 1e9
    rows_md = [
        ["nb_tokens(body) vs the README's regexp_matches tokenization (speed-up)", fmt(speedup)],
        ["nb_tokens(body) vs reading the bytes, sum(octet_length(body)) (times the floor)", fmt(floor)],
        ["end to end: train on text and the held-out lines' probability of spam (nb_probability), "
         "scikit-learn's Pipeline (with COPY out) / nbc", fmt(e2e)],
        ["the same, the probability read from nb_predict_proba's object (->> 'spam')", fmt(e2e_jsonb)],
        ["the same, nbc with 2 parallel workers per Gather", fmt(e2e_par)],
        ["end to end on the %d whole messages (the same tokens), scikit-learn / nbc" % msgs, fmt(e2e_msg)],
    ]
    costs_md = [
        ["nbc", "%.0f ns" % (nb_doc * 1e9), "%.0f ns" % (nb_tok * 1e9)],
        ["scikit-learn (with COPY out)", "%.0f ns" % (sk_doc * 1e9), "%.0f ns" % (sk_tok * 1e9)],
    ]
    per_doc_tokens = tokens / rows
    section = "\n".join([
        HEADING, "",
        "%d documents (lines of SpamAssassin messages, %d for training), %.1f MB of text, %d tokens "
        "(CountVectorizer's defaults); medians of %d rounds (min-max)." % (rows, train, size / 1e6, tokens, args.reps),
        "", table_md(["figure", "ratio"], rows_md), "",
        "Per token, nb_tokens took %.0f ns in this run against %.2f ns per byte to read the bytes "
        "(%.1f bytes per token): the ratio above is the one to compare across machines." %
        (ns_token, ns_byte, size / tokens), "",
        "Each side's end-to-end time split into a cost per document and a cost per token (train and "
        "score together; from the serial medians of the lines and the messages, which hold the same tokens):", "",
        table_md(["side", "per document", "per token"], costs_md), "",
        "At these costs documents of %.1f tokens (the lines) give %.1f, and the ratio tends to %.1f "
        "as documents grow." % (per_doc_tokens, (sk_doc + per_doc_tokens * sk_tok) / (nb_doc + per_doc_tokens * nb_tok),
                                 sk_tok / nb_tok), "",
        "Both sides agree: %d held-out lines, sum of P(spam) %.6f (nbc) and %.6f (scikit-learn)."
        % (nbc_res[0], float(nbc_res[1]), sk_res[1]), ""])
    print(section)
    write_section(args.out, HEADING, section)


if __name__ == "__main__":
    main()
