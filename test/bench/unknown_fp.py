#!/usr/bin/python3
"""False positives of the unknown-feature warning (nbc.unknown_features) on
correct queries, and the share it reports for the mistakes it is for.

    unknown_fp.py [--rows N]

Runs against the database in the PG* environment (nbc installed; tables
spamassassin, reuters_grain and nbc_mixed_rows loaded by test/data's
loaders).  Each model is trained on a corpus' train split and scores its
held-out test split, as trained (correct) or with a known mistake:

  spam_text     SpamAssassin messages, nb_train(label, body): text
  spam_subject  their Subject lines only (short documents, like tweets)
  spam_tsv      to_tsvector('english', body) at training and scoring
  spam_array    tsvector_to_array(to_tsvector('simple', body)) (text[])
  reuters_text  Reuters grain, text
  mixed_<ds>    each data set of nbc_mixed_rows, jsonb (j), and jsonb with
                missing values (j_miss) where the data set has them
  mixed_x_<ds>  the same as float8[] (x)

Mistakes: the text models scored with to_tsvector('english', body) (a
stemmed tsvector: the issue's example) and with tsvector_to_array of the
'simple' configuration (another tokenizer, unstemmed); the jsonb models
scored with one key written in upper case (a misspelled key).

Each case is scored in statements of three sizes: the whole split in one
statement, ten rows per statement, one row per statement (the first
--rows rows of the split, in id order, for the last two).  With
nbc.unknown_features_threshold = 1 every statement of at least
NB_MIN_OCCURRENCES (pg_unknown.c) feature occurrences that the model does
not know all of warns, and its warning says the share the model knew; the
script reads the share from it and counts, per threshold, the statements
below it (those that warn under that threshold).  A warning that names
misspelled jsonb keys warns under any threshold, and counts as such.

Then a parallel plan (the stemmed case over eight copies of the test
messages, up to 4 workers): each process reports the rows it scored, and the script
adds up the rows of the statement's warnings against the rows it scored.
"""
import argparse
import re

import psycopg2

SHARE = re.compile(r"model knew ([0-9.]+)% of the [0-9,]+ feature occurrences")
ROWS = re.compile(r"feature occurrences in ([0-9,]+) rows? scored")
THRESHOLDS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9]

TEXT_CORPORA = {
    "spam": ("spamassassin", "folder || '/' || msg_id"),
    "reuters": ("reuters_grain", "id::text"),
}

SUBJECT = "coalesce(substring(body from '(?m)^Subject: *(.*)$'), '')"


def setup(cur):
    cur.execute("SET nbc.unknown_features = ignore")
    for name, (table, key) in TEXT_CORPORA.items():
        cur.execute(f"""CREATE TEMP TABLE fp_{name} AS
            SELECT {key} AS id, label, split, body, {SUBJECT} AS subject FROM {table}""")
    cur.execute("""CREATE TEMP TABLE fp_models AS
        SELECT 'spam_text' AS name, nb_train(label, body) AS m FROM fp_spam WHERE split = 'train'
        UNION ALL SELECT 'spam_subject', nb_train(label, subject) FROM fp_spam WHERE split = 'train'
        UNION ALL SELECT 'spam_tsv', nb_train(label, to_tsvector('english', body)) FROM fp_spam WHERE split = 'train'
        UNION ALL SELECT 'spam_array', nb_train(label, tsvector_to_array(to_tsvector('simple', body)))
                  FROM fp_spam WHERE split = 'train'
        UNION ALL SELECT 'reuters_text', nb_train(label, body) FROM fp_reuters WHERE split = 'train'""")
    cur.execute("""INSERT INTO fp_models
        SELECT 'mixed_' || ds, nb_train(label, j) FROM nbc_mixed_rows WHERE split = 'train' GROUP BY ds
        UNION ALL SELECT 'mixed_miss_' || ds, nb_train(label, j_miss) FROM nbc_mixed_rows
                  WHERE split = 'train' AND j_miss IS NOT NULL GROUP BY ds
        UNION ALL SELECT 'mixed_x_' || ds, nb_train(label, x) FROM nbc_mixed_rows
                  WHERE split = 'train' AND x IS NOT NULL GROUP BY ds""")
    cur.execute("RESET nbc.unknown_features")


def cases(cur):
    """(name, correct, model, from-and-where of the held-out rows, features, order key)."""
    out = []
    for corpus in ("spam", "reuters"):
        rows = f"fp_{corpus} t WHERE t.split = 'test'"
        out.append((f"{corpus}_text", True, f"{corpus}_text", rows, "t.body"))
        out.append((f"{corpus}_text <- stemmed tsvector", False, f"{corpus}_text", rows,
                    "to_tsvector('english', t.body)"))
        out.append((f"{corpus}_text <- simple text[]", False, f"{corpus}_text", rows,
                    "tsvector_to_array(to_tsvector('simple', t.body))"))
    rows = "fp_spam t WHERE t.split = 'test'"
    out.append(("spam_subject", True, "spam_subject", rows, "t.subject"))
    out.append(("spam_tsv", True, "spam_tsv", rows, "to_tsvector('english', t.body)"))
    out.append(("spam_array", True, "spam_array", rows, "tsvector_to_array(to_tsvector('simple', t.body))"))
    cur.execute("SELECT DISTINCT ds FROM nbc_mixed_rows ORDER BY ds")
    for (ds,) in cur.fetchall():
        rows = f"nbc_mixed_rows t WHERE t.split = 'test' AND t.ds = '{ds}'"
        out.append((f"mixed_{ds}", True, f"mixed_{ds}", rows, "t.j"))
        out.append((f"mixed_{ds} <- misspelled key", False, f"mixed_{ds}", rows,
                    "(SELECT jsonb_object_agg(CASE WHEN k = (SELECT min(k2) FROM jsonb_object_keys(t.j) k2) "
                    "THEN upper(k) ELSE k END, v) FROM jsonb_each(t.j) e(k, v))"))
        out.append((f"mixed_x_{ds}", True, f"mixed_x_{ds}", rows + " AND t.x IS NOT NULL", "t.x"))
        cur.execute("SELECT count(*) FROM fp_models WHERE name = %s", (f"mixed_miss_{ds}",))
        if cur.fetchone()[0]:
            out.append((f"mixed_miss_{ds}", True, f"mixed_miss_{ds}", rows + " AND t.j_miss IS NOT NULL",
                        "t.j_miss"))
    return out


def statements(cur, case, limit):
    """The queries of a case: the whole split, then batches of 10, then single rows."""
    name, correct, model, rows, features = case
    select = f"SELECT count(nb_predict(fp_models.m, {features})) FROM fp_models, {rows} AND fp_models.name = '{model}'"
    cur.execute(f"SELECT t.id FROM {rows} ORDER BY t.id LIMIT {limit}")
    ids = [r[0] for r in cur.fetchall()]
    yield "split", select
    for i in range(0, len(ids), 10):
        batch = ", ".join(f"'{x}'" for x in ids[i:i + 10])
        yield "10 rows", f"{select} AND t.id::text IN ({batch})"
    for x in ids:
        yield "1 row", f"{select} AND t.id::text = '{x}'"


def run(conn, cur, sql):
    """The share the statement's warning gives, negative if it names misspelled keys (a warning
    under any threshold), or None if quiet."""
    del conn.notices[:]
    cur.execute(sql)
    cur.fetchall()
    for notice in conn.notices:
        m = SHARE.search(notice)
        if m:
            share = float(m.group(1)) / 100
            return -share if "lacked keys the model has" in notice else share
    return None


def parallel(conn, cur):
    """A parallel plan: each process reports its own rows.  The rows of the
    warnings of one statement, added up, against the rows it scored."""
    for setting in ("parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                    "max_parallel_workers_per_gather = 4", "nbc.unknown_features_threshold = 1"):
        cur.execute("SET " + setting)
    # tables of their own (a plan reading a temporary table runs in the leader only), the
    # model an initplan's: workers score the rows they read
    sql = "SELECT count(nb_predict((SELECT m FROM fp_model_par), t.tsv)) FROM fp_spam_par t"
    cur.execute("""CREATE TABLE fp_spam_par AS SELECT tsv
                   FROM (SELECT to_tsvector('english', body) AS tsv FROM fp_spam WHERE split = 'test') s,
                        generate_series(1, 8)""")
    cur.execute("CREATE TABLE fp_model_par AS SELECT m FROM fp_models WHERE name = 'spam_text'")
    cur.execute("ANALYZE fp_spam_par, fp_model_par")
    cur.execute("EXPLAIN " + sql)
    workers = [r[0] for r in cur.fetchall() if "Workers Planned" in r[0]]
    del conn.notices[:]
    cur.execute(sql)
    scored = cur.fetchone()[0]
    rows = [int(ROWS.search(n).group(1).replace(",", "")) for n in conn.notices if ROWS.search(n)]
    cur.execute("DROP TABLE fp_spam_par, fp_model_par")
    cur.execute("RESET ALL")
    print(f"parallel ({', '.join(w.strip() for w in workers) or 'no workers planned'}): {scored} rows scored, "
          f"{len(rows)} warnings of {rows} rows, {sum(rows)} in all")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=300)
    args = ap.parse_args()
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    setup(cur)
    totals = {}
    print("case | statements | below 100% | share of the whole split | "
          + " | ".join(f"warn at {t}" for t in THRESHOLDS))
    for case in cases(cur):
        cur.execute("SET nbc.unknown_features_threshold = 1")
        per_size = {}
        for size, sql in statements(cur, case, args.rows):
            per_size.setdefault(size, []).append(run(conn, cur, sql))
        cur.execute("RESET nbc.unknown_features_threshold")
        whole = per_size["split"][0]
        for size, results in per_size.items():
            judged = [r for r in results if r is not None]
            warns = [sum(1 for s in judged if s < t) for t in THRESHOLDS]
            key = (case[1], size)
            tot = totals.setdefault(key, [0, 0] + [0] * len(THRESHOLDS))
            tot[0] += len(results)
            tot[1] += len(judged)
            for i, w in enumerate(warns):
                tot[2 + i] += w
            print(f"{case[0]} ({size}) | {len(results)} | {len(judged)} | "
                  f"{'-' if whole is None else f'{abs(whole):.3f}' + (' (keys named)' if whole < 0 else '')} | "
                  + " | ".join(str(w) for w in warns))
    print()
    parallel(conn, cur)
    print()
    print("totals: correct? size | statements | below 100% | " + " | ".join(f"warn at {t}" for t in THRESHOLDS))
    for (correct, size), tot in sorted(totals.items()):
        print(f"{'correct' if correct else 'mistake'} {size} | " + " | ".join(str(x) for x in tot))


if __name__ == "__main__":
    main()
