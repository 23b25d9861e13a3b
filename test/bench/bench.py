#!/usr/bin/python3
"""nbc benchmark: every comparison in one run, on the same data, as ratios.

    bench.py [--reps N] [--docs N] [--out FILE]

Run by test/bench/run.sh, which makes a throwaway cluster and sets the libpq
environment (PGHOST, PGPORT, PGUSER, PGDATABASE).  Needs table spamassassin
(test/data/load_spamassassin.py) and may create any table.

Each figure is a ratio of two measurements taken side by side: for every
comparison the queries run in one connection, each once to warm up (except the
two slow baselines, whose tables are already warm from the queries before
them), then --reps rounds, alternating the order of the queries from one round
to the next (A B, B A, ...).  A query's time is the client's wall time from
sending it to having its (one-row) result.  Each round gives one ratio; the
table shows their median and their spread (min-max).
"""

import argparse
import datetime
import io
import os
import platform
import statistics
import sys
import threading
import time

import numpy as np
import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

SETTINGS = [("jit", "off"), ("work_mem", "256MB"),
            ("max_parallel_workers_per_gather", "0"),
            ("client_min_messages", "warning")]
ONE_ROW_QUERIES = 50
T0 = time.perf_counter()


def loadavg():
    return "%.1f %.1f %.1f" % os.getloadavg()


LOAD_START = loadavg()


def log(msg):
    print("[%6.1fs] %s" % (time.perf_counter() - T0, msg), file=sys.stderr, flush=True)


def connect():
    conn = psycopg2.connect("")
    conn.autocommit = True
    with conn.cursor() as cur:
        for k, v in SETTINGS:
            cur.execute("SET %s = '%s'" % (k, v))
    return conn


def one(cur, sql, args=None):
    cur.execute(sql, args)
    return cur.fetchone()


def query(cur, sql):
    """A case: runs sql, returns its wall time."""
    def run():
        t = time.perf_counter()
        cur.execute(sql)
        run.last = cur.fetchall()
        return time.perf_counter() - t
    run.last = None
    return run


def with_settings(cur, settings, fn):
    """A case run under extra SET commands (not timed)."""
    def run():
        for k, v in settings:
            cur.execute("SET %s = '%s'" % (k, v))
        try:
            return fn()
        finally:
            for k, _ in settings:
                cur.execute("RESET %s" % k)
            for k, v in SETTINGS:
                cur.execute("SET %s = '%s'" % (k, v))
    return run


def measure(name, cases, reps, warm=None):
    """Interleaved rounds.  cases: {key: fn() -> seconds}.  warm: keys warmed up
    once first (default: all).  Returns {key: [seconds per round]}."""
    keys = list(cases)
    for k in (keys if warm is None else warm):
        log("%s: warm-up %s" % (name, k))
        cases[k]()
    times = {k: [] for k in keys}
    for r in range(reps):
        order = keys if r % 2 == 0 else keys[::-1]
        for k in order:
            times[k].append(cases[k]())
        log("%s: round %d/%d  %s" % (name, r + 1, reps,
                                      "  ".join("%s %.3fs" % (k, times[k][-1]) for k in keys)))
    return times


class Results:
    def __init__(self):
        self.rows = []       # (measure, ratio definition, ratios, target text, passed or None)
        self.times = []      # (query, median seconds, rounds)
        self.notes = []

    def ratio(self, measure, definition, num, den, target=None, ok=None):
        ratios = [a / b for a, b in zip(num, den)]
        med = statistics.median(ratios)
        passed = None if ok is None else bool(ok(med))
        self.rows.append((measure, definition, ratios, target or "report only", passed))
        return med

    def add_times(self, label, times):
        for k, v in times.items():
            self.times.append(("%s: %s" % (label, k), statistics.median(v), len(v)))


def write_section(path, heading, section):
    """Replace the section under heading (a "## ..." line) in the Markdown file
    at path, or append it: the scripts that run after bench.py (which writes
    the file anew) add their sections to it."""
    text = open(path).read() if os.path.exists(path) else ""
    start = text.find(heading + "\n")
    if start < 0:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end < 0 else text[end:])
    with open(path, "w") as f:
        f.write(text)


def fmt_ratio(x):
    return "%.2f" % x if x < 100 else "%.0f" % x


def table_text(header, rows):
    w = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip()
    return "\n".join([line(header), line(["-" * x for x in w])] + [line(r) for r in rows])


def table_md(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def proc_status(pid):
    """The kB fields of /proc/PID/status (VmHWM: peak resident set, RssShmem, ...)."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                v = v.split()
                if len(v) == 2 and v[1] == "kB":
                    out[k] = int(v[0])
    except OSError:
        pass
    return out


class AnonSampler:
    """RssAnon (private memory) of a process, sampled every 2 ms in a thread."""

    def __init__(self, pid):
        self.pid, self.peak, self.done = pid, None, False
        self.start = self.read()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def read(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def run(self):
        while not self.done:
            kb = self.read()
            if kb is None:
                return
            self.peak = kb if self.peak is None else max(self.peak, kb)
            time.sleep(0.002)

    def stop(self):
        """The largest increase of RssAnon over its value at the start, in bytes."""
        self.done = True
        self.thread.join()
        if self.peak is None or self.start is None:
            return None
        return (self.peak - self.start) * 1024


def mb(nbytes):
    return "%.1f MB" % (nbytes / 1e6)


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------

def make_data(args):
    conn = connect()
    cur = conn.cursor()
    shape = {}

    log("data: tokenizing the real messages (table src)")
    gen.make_src(connect)
    corpus = gen.RealCorpus(conn)
    log("data: %d real messages, %d tokens, vocabulary %d"
        % (corpus.messages, corpus.tokens, len(corpus.vocab)))

    for table, classes, seed in (("docs", corpus.labels, 1), ("docs_many", corpus.sources, 2)):
        s = gen.Sample(corpus, classes, args.docs, seed)
        if table == "docs":
            tsv_vocabulary = s.vocabulary_of(min(args.tsv_docs, s.documents))
        log("data: %s: %d documents, %d classes, %d tokens; loading"
            % (table, s.documents, s.classes, s.tokens))
        gen.load_sample(connect, table, s, corpus.literals)
        lens = np.asarray(s.length)
        shape[table] = dict(documents=s.documents, classes=s.classes, tokens=s.tokens,
                            vocabulary=s.vocabulary, mean=float(lens.mean()),
                            median=float(np.median(lens)), p99=float(np.percentile(lens, 99)),
                            max=int(lens.max()))
    cur.execute("ALTER TABLE docs SET (parallel_workers = 2)")

    log("data: docs_tsv (to_tsvector of the first %d documents, 2 workers)" % args.tsv_docs)
    cur.execute("DROP TABLE IF EXISTS docs_tsv")
    cur.execute("SET max_parallel_workers_per_gather = 2")
    cur.execute("SET parallel_setup_cost = 0")
    cur.execute("SET parallel_tuple_cost = 0")
    cur.execute("""CREATE TABLE docs_tsv AS
                   SELECT id, label, tokens,
                          to_tsvector('simple', array_to_string(tokens, ' ')) AS lexemes
                   FROM docs WHERE id <= %d""" % args.tsv_docs)
    for k, v in SETTINGS:
        cur.execute("SET %s = '%s'" % (k, v))
    cur.execute("RESET parallel_setup_cost")
    cur.execute("RESET parallel_tuple_cost")
    cur.execute("VACUUM (FREEZE, ANALYZE) docs_tsv")

    log("data: trgm_docs (%d languages x %d documents, show_trgm)"
        % (gen.N_LANGUAGES, gen.DOCS_PER_LANGUAGE))
    gen.make_trgm(conn, 3)

    log("data: q20_small, q20_large, q20z_small, q20z_large (20-token documents)")
    q20_vocabulary = gen.make_q20(connect, args.q20_docs, 4)
    log("data: short_docs (%d short documents, Zipf vocabulary)" % args.short_docs)
    short_vocabulary = gen.make_short(connect, args.short_docs, 7)
    shape["_data_seconds"] = time.perf_counter() - T0
    log("data: models v10k, v1m, spam, many, trgm")
    cur.execute("DROP TABLE IF EXISTS models")
    cur.execute("CREATE TABLE models (name text PRIMARY KEY, model nb_model)")
    for name, vocab in (("v10k", gen.Q20_SMALL), ("v1m", gen.Q20_LARGE)):
        # every token in both classes: class a once, class b 1-3 times
        cur.execute("""INSERT INTO models
            SELECT %%s, nb_train(c, ARRAY(SELECT 'w' || lpad(i::text, 7, '0')
                                         FROM generate_series(g * 1000, g * 1000 + 999) i,
                                              generate_series(1, CASE WHEN c = 'a' THEN 1 ELSE 1 + mod(i, 3) END)))
            FROM generate_series(0, %d) g, (VALUES ('a'), ('b')) v(c)""" % (vocab // 1000 - 1),
                    (name,))
    for name, table in (("spam", "docs"), ("many", "docs_many"), ("trgm", "trgm_docs")):
        cur.execute("INSERT INTO models SELECT %s, nb_train(label, tokens) FROM " + table, (name,))
    cur.execute("VACUUM (FREEZE, ANALYZE) models")
    cur.execute("CHECKPOINT")

    for table in ("docs_tsv", "trgm_docs", "q20_small", "q20_large", "q20z_small", "q20z_large",
                  "short_docs"):
        r = one(cur, """SELECT count(*), count(DISTINCT label), sum(cardinality(tokens)),
                               avg(cardinality(tokens)),
                               percentile_cont(0.5) WITHIN GROUP (ORDER BY cardinality(tokens)),
                               percentile_cont(0.99) WITHIN GROUP (ORDER BY cardinality(tokens)),
                               max(cardinality(tokens)) FROM """ + table)
        shape[table] = dict(documents=r[0], classes=r[1], tokens=int(r[2]), mean=float(r[3]),
                            median=float(r[4]), p99=float(r[5]), max=r[6])
    shape["docs_tsv"]["lexemes"] = int(one(cur, "SELECT sum(length(lexemes)) FROM docs_tsv")[0])
    for table in [t for t in shape if not t.startswith("_")]:
        shape[table]["bytes"] = int(one(cur, "SELECT pg_total_relation_size(%s)", (table,))[0])
    r = one(cur, """SELECT (nb_info(model)->>'vocabulary')::bigint FROM models WHERE name = 'trgm'""")
    shape["trgm_docs"]["vocabulary"] = r[0]
    shape["docs_tsv"]["vocabulary"] = tsv_vocabulary
    shape["short_docs"]["vocabulary"] = short_vocabulary
    for t, v in q20_vocabulary.items():
        shape[t]["vocabulary"] = v
    shape["_real"] = dict(messages=corpus.messages, tokens=corpus.tokens,
                          vocabulary=len(corpus.vocab),
                          sources=len(set(corpus.sources)))
    conn.close()
    return shape


# --------------------------------------------------------------------------
# comparisons
# --------------------------------------------------------------------------

def run_comparisons(args, res):
    conn = connect()
    cur = conn.cursor()
    reps = args.reps
    checks = []

    floor = "SELECT sum(cardinality(tokens)) FROM docs"
    train = "SELECT nb_info(nb_train(label, tokens)) FROM docs"
    madlib = """SELECT count(*), sum(n) FROM (
                  SELECT label, t, count(*) AS n
                  FROM (SELECT label, unnest(tokens) AS t FROM docs) u
                  GROUP BY label, t) s"""

    # 1. training ----------------------------------------------------------
    cases = {"floor": query(cur, floor), "nbc": query(cur, train),
             "SQL GROUP BY": query(cur, madlib)}
    t = measure("training", cases, reps, warm=["floor", "nbc"])
    res.add_times("training (docs)", t)
    res.ratio("training: plain SQL unnest + GROUP BY vs nb_train(text[])", "SQL / nbc",
              t["SQL GROUP BY"], t["nbc"], ">= 20", lambda x: x >= 20)
    res.ratio("training: nb_train(text[]) vs scan floor", "nbc / floor",
              t["nbc"], t["floor"], "<= 3", lambda x: x <= 3)
    info = cases["nbc"].last[0][0]
    sql_pairs, sql_tokens = cases["SQL GROUP BY"].last[0]
    checks.append("SQL baseline and nbc agree: %d (label, token) pairs, %d tokens (nb_info: %s, %s)"
                  % (sql_pairs, sql_tokens, info["entries"], info["tokens"]))
    if sql_pairs != info["entries"] or int(sql_tokens) != int(info["tokens"]):
        checks[-1] = "MISMATCH: " + checks[-1]

    # 2. tsvector input ------------------------------------------------------
    cases = {"text[]": query(cur, "SELECT nb_info(nb_train(label, tokens)) FROM docs_tsv"),
             "tsvector": query(cur, "SELECT nb_info(nb_train(label, lexemes)) FROM docs_tsv")}
    t = measure("tsvector", cases, reps)
    res.add_times("tsvector input (docs_tsv)", t)
    res.ratio("training: tsvector input vs text[] input (docs_tsv)", "tsvector / text[]",
              t["tsvector"], t["text[]"])

    # 3. prediction, 2 classes; model by scalar subquery or by a join ----------
    pred_sub = """SELECT count(nb_predict((SELECT model FROM models WHERE name = 'spam'), tokens))
                  FROM docs"""
    pred_join = """SELECT count(nb_predict(m.model, d.tokens))
                   FROM models m JOIN docs d ON m.name = 'spam'"""
    cur.execute("EXPLAIN (COSTS OFF) " + pred_join)
    res.notes.append("Join plan: " + " / ".join(r[0].strip() for r in cur.fetchall()) + ".")
    cases = {"floor": query(cur, floor), "predict (subquery)": query(cur, pred_sub),
             "predict (join)": query(cur, pred_join)}
    t = measure("predict-2", cases, reps, warm=["floor"])
    res.add_times("prediction, 2 classes (docs)", t)
    res.ratio("nb_predict every row, 2 classes, vs scan floor", "nbc / floor",
              t["predict (subquery)"], t["floor"], "<= 3", lambda x: x <= 3)
    res.ratio("model from a join with the models table vs scalar subquery",
              "join / subquery", t["predict (join)"], t["predict (subquery)"],
              "<= 1.10", lambda x: x <= 1.10)

    # 4. prediction, many classes --------------------------------------------
    cases = {"floor": query(cur, "SELECT sum(cardinality(tokens)) FROM docs_many"),
             "predict": query(cur, """SELECT count(nb_predict((SELECT model FROM models
                                     WHERE name = 'many'), tokens)) FROM docs_many""")}
    t = measure("predict-many", cases, reps, warm=["floor"])
    res.add_times("prediction, many classes (docs_many)", t)
    res.ratio("nb_predict every row, %d classes, vs scan floor" % args.many_classes,
              "nbc / floor", t["predict"], t["floor"])

    # 5. vocabulary 100x larger ----------------------------------------------
    # Both models are kept prepared between queries (nbc.prepared_model_cache
    # large enough; the warm-up prepares them), so no timed query prepares a
    # model.  Per round: one query over the whole table and one query scoring a
    # single document, for each model; (whole - single) / documents is the
    # marginal cost of scoring one more document.
    q = """SELECT count(nb_predict((SELECT model FROM models WHERE name = '%s'), tokens))
           FROM %s"""
    q1 = "SELECT nb_predict((SELECT model FROM models WHERE name = %s), %s::text[])"
    kept = [("nbc.prepared_model_cache", "4GB")]
    per_query = [("nbc.prepared_model_cache", "0")]
    cases = {}
    one_doc = {}
    for label, name, table in (("10k", "v10k", "q20_small"), ("1M", "v1m", "q20_large")):
        doc = one(cur, "SELECT tokens FROM %s WHERE id = 1" % table)[0]
        one_doc[label] = cur.mogrify(q1, (name, doc)).decode()
        cases["V=%s, 1 document" % label] = with_settings(cur, kept, query(cur, one_doc[label]))
        cases["V=%s, table" % label] = with_settings(cur, kept, query(cur, q % (name, table)))
        cases["V=%s, Zipf table" % label] = with_settings(
            cur, kept, query(cur, q % (name, table.replace("q20", "q20z"))))
    t = measure("vocab", cases, reps)
    res.add_times("20-token documents (q20[z]_small / q20[z]_large), models kept prepared", t)
    for kind, target in (("table", "<= 1.5"), ("Zipf table", None)):
        marg = {v: [a - b for a, b in zip(t["V=%s, %s" % (v, kind)], t["V=%s, 1 document" % v])]
                for v in ("10k", "1M")}
        res.ratio("scoring a 20-token document, model vocabulary 1M vs 10k, tokens drawn %s "
                  "(marginal cost per document, model preparation excluded)"
                  % ("uniformly" if target else "by Zipf's law"),
                  "1M / 10k", marg["1M"], marg["10k"], target,
                  (lambda x: x <= 1.5) if target else None)
    # apart: a query with the cache off frees every model kept prepared
    cases = {"V=%s, 1 document" % v: with_settings(cur, per_query, query(cur, one_doc[v]))
             for v in ("10k", "1M")}
    t = measure("vocab-prepare", cases, reps, warm=[])
    res.add_times("one 20-token document, each query preparing its model", t)
    res.ratio("one query scoring one 20-token document, preparing the model, "
              "vocabulary 1M vs 10k", "1M / 10k", t["V=1M, 1 document"], t["V=10k, 1 document"])

    # 5b. one-row queries: the model prepared by each query, or kept prepared -----
    doc = one(cur, "SELECT tokens FROM docs LIMIT 1")[0]
    q1 = cur.mogrify("SELECT nb_predict((SELECT model FROM models WHERE name = 'spam'), %s::text[])",
                     (doc,)).decode()

    def queries(n, prime):
        def run():
            if prime:
                # prepare the model (the other case's queries freed it)
                cur.execute(q1)
                cur.fetchall()
            t = time.perf_counter()
            for _ in range(n):
                cur.execute(q1)
                cur.fetchall()
            return time.perf_counter() - t
        return run
    cases = {"prepared by each query": with_settings(cur, per_query, queries(ONE_ROW_QUERIES, False)),
             "kept prepared": queries(ONE_ROW_QUERIES, True)}
    t = measure("one-row", cases, reps)
    res.add_times("%d one-row queries (spam model)" % ONE_ROW_QUERIES, t)
    res.ratio("one-row queries with the 2-class spam model: prepared by each query "
              "(nbc.prepared_model_cache = 0) vs kept prepared between queries (the default)",
              "per query / kept", t["prepared by each query"], t["kept prepared"])

    # 6. end to end against scikit-learn ---------------------------------------
    def nbc_e2e():
        t0 = time.perf_counter()
        cur.execute("BEGIN")
        cur.execute("CREATE TEMP TABLE e2e_model AS SELECT nb_train(label, tokens) AS model FROM docs")
        cur.execute("""SELECT count(*) FILTER (WHERE nb_predict(m.model, d.tokens) = d.label)
                       FROM e2e_model m, docs d""")
        nbc_e2e.correct = cur.fetchone()[0]
        cur.execute("DROP TABLE e2e_model")
        cur.execute("COMMIT")
        return time.perf_counter() - t0

    def sklearn_e2e():
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.naive_bayes import MultinomialNB
        t0 = time.perf_counter()
        buf = io.StringIO()
        cur.copy_expert("COPY (SELECT label, array_to_string(tokens, ' ') FROM docs) TO STDOUT",
                        buf)
        labels, texts = [], []
        for line in buf.getvalue().split("\n"):
            if line:
                a, b = line.split("\t", 1)
                labels.append(a)
                texts.append(b)
        del buf
        X = CountVectorizer(analyzer=identity).fit_transform(
            (s.split(" ") if s else []) for s in texts)
        y = np.array(labels)
        clf = MultinomialNB().fit(X, y)
        sklearn_e2e.correct = int((clf.predict(X) == y).sum())
        return time.perf_counter() - t0
    cases = {"nbc": nbc_e2e, "scikit-learn": sklearn_e2e}
    t = measure("end-to-end", cases, reps, warm=["nbc"])
    res.add_times("end to end (docs)", t)
    res.ratio("end to end: export + CountVectorizer + MultinomialNB fit + predict, vs nbc train + predict",
              "sklearn / nbc", t["scikit-learn"], t["nbc"], ">= 5", lambda x: x >= 5)
    checks.append("end to end: training-set predictions right, nbc %d, scikit-learn %d"
                  % (nbc_e2e.correct, sklearn_e2e.correct))

    # 7. evaluation: nb_metrics (test/bench/metrics_bench.py) ----------------
    import metrics_bench
    comparisons, times = metrics_bench.compare(cur, reps, args.metrics_rows)
    res.add_times("evaluation", times)
    for measure_name, definition, num, den, target, ok in comparisons:
        res.ratio(measure_name, definition, num, den, target, ok)
    res.notes.append("Evaluation: see test/bench/metrics_bench.py for its tables and queries.")

    # 8. parallel training (test/bench/parallel_bench.py) -----------------------
    import parallel_bench
    comparisons, times, notes = parallel_bench.compare(
        cur, reps, [("short_docs", "%s short documents" % "{:,}".format(args.short_docs)),
                    ("docs", "long documents (docs)")])
    res.times += [(k, statistics.median(v), len(v)) for k, v in times.items()]
    for c in comparisons:
        res.ratio(*c)
    res.notes += notes
    conn.close()
    return checks


def identity(x):
    return x


def model_sizes(args, res):
    """Model sizes and the backend's peak memory while training, per model."""
    rows = []
    for name, table in (("spam", "docs"), ("many", "docs_many"), ("trgm", "trgm_docs")):
        conn = connect()
        cur = conn.cursor()
        pid = one(cur, "SELECT pg_backend_pid()")[0]
        # touch the table's buffers first, so the peak counts only what training adds
        for _ in range(2):
            one(cur, "SELECT sum(cardinality(tokens)) FROM " + table)
        before = proc_status(pid)
        sampler = AnonSampler(pid)
        time.sleep(0.01)
        one(cur, "SELECT nb_info(nb_train(label, tokens)) FROM " + table)
        anon = sampler.stop()
        after = proc_status(pid)
        shm = after.get("RssShmem", 0) - before.get("RssShmem", 0)
        if shm > 1024:
            res.notes.append("Model %s: %.1f MB of shared buffers were first touched during "
                             "training; its VmHWM figure counts them." % (name, shm / 1024))
        conn.close()
        conn = connect()
        cur = conn.cursor()
        info, stored = one(cur, "SELECT nb_info(model), pg_column_size(model) FROM models "
                                "WHERE name = %s", (name,))
        conn.close()
        dense = info["vocabulary"] * info["classes"] * 8
        peak = (after["VmHWM"] - before["VmHWM"]) * 1024 \
            if "VmHWM" in before and "VmHWM" in after else None
        rows.append(dict(name=name, table=table, classes=info["classes"],
                         vocabulary=info["vocabulary"], entries=info["entries"],
                         bytes=info["bytes"], stored=stored, dense=dense, peak=peak,
                         anon=anon))
        log("model %s: %s" % (name, rows[-1]))
    conn = connect()
    cur = conn.cursor()
    for name in ("v10k", "v1m"):
        info, stored = one(cur, "SELECT nb_info(model), pg_column_size(model) FROM models "
                                "WHERE name = %s", (name,))
        rows.append(dict(name=name, table="synthetic", classes=info["classes"],
                         vocabulary=info["vocabulary"], entries=info["entries"],
                         bytes=info["bytes"], stored=stored,
                         dense=info["vocabulary"] * info["classes"] * 8, peak=None, anon=None))
    conn.close()
    return rows


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------

def report(args, shape, res, checks, sizes, elapsed_data, elapsed):
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    with connect() as conn, conn.cursor() as cur:
        pgver = one(cur, "SHOW server_version")[0]
    import sklearn
    env = ("%s; PostgreSQL %s; scikit-learn %s; %d CPUs; Python %s; load average at start "
           "%s, at end %s" % (now, pgver, sklearn.__version__, os.cpu_count(),
                              platform.python_version(), LOAD_START, loadavg()))

    hdr = ["comparison", "ratio", "median", "spread (min-max)", "target", "result"]
    rows = []
    for measure, definition, ratios, target, passed in res.rows:
        rows.append([measure, definition, fmt_ratio(statistics.median(ratios)),
                     "%s-%s" % (fmt_ratio(min(ratios)), fmt_ratio(max(ratios))), target,
                     "" if passed is None else ("PASS" if passed else "MISS")])

    real = shape["_real"]
    dhdr = ["table", "documents", "classes", "tokens", "tokens/doc mean", "median", "p99", "max",
            "vocabulary", "size on disk"]
    drows = []
    for t in ("docs", "docs_many", "docs_tsv", "trgm_docs", "q20_small", "q20_large",
              "q20z_small", "q20z_large", "short_docs"):
        s = shape[t]
        drows.append([t, "{:,}".format(s["documents"]), s["classes"], "{:,}".format(s["tokens"]),
                      "%.0f" % s["mean"], "%.0f" % s["median"], "%.0f" % s["p99"], s["max"],
                      "{:,}".format(s["vocabulary"]), mb(s["bytes"])])

    mhdr = ["model", "classes", "vocabulary", "(token, class) pairs", "nb_info bytes",
            "pg_column_size", "dense V x C float64", "dense / nb_info",
            "peak backend memory while training (VmHWM)", "(RssAnon, sampled)"]
    mrows = []
    for m in sizes:
        mrows.append(["%s (%s)" % (m["name"], m["table"]), m["classes"],
                      "{:,}".format(m["vocabulary"]), "{:,}".format(m["entries"]), mb(m["bytes"]),
                      mb(m["stored"]), mb(m["dense"]), "%.1f" % (m["dense"] / m["bytes"]),
                      "-" if m["peak"] is None else mb(m["peak"]),
                      "-" if m["anon"] is None else mb(m["anon"])])

    thdr = ["query", "median s", "rounds"]
    trows = [[q, "%.3f" % s, n] for q, s, n in res.times]

    method = [
        "Each ratio compares two queries run side by side in one connection, after a warm-up "
        "run (of every training and vocabulary query and of nbc's end-to-end run; in the "
        "prediction groups and for the SQL baseline and scikit-learn, the table is warmed by "
        "the scan-floor query or the queries before), then %d rounds alternating the order (A B, B A, ...); one ratio "
        "per round; median and min-max of the rounds. Time = client wall time until the "
        "one-row result is in." % args.reps,
        "Settings for both sides: jit = off, work_mem = 256MB, max_parallel_workers_per_gather "
        "= 0 (1, 2 or 4 for the parallel runs, with parallel_setup_cost = parallel_tuple_cost = 0 "
        "and the table's parallel_workers = 4; see test/bench/parallel_bench.py for their CPU "
        "accounting). Tables use PostgreSQL's defaults (text[] over 2 kB "
        "is TOASTed and pglz-compressed).",
        "Scan floor: SELECT sum(cardinality(tokens)) FROM <table> (reads and decompresses "
        "every array). nbc training: SELECT nb_info(nb_train(label, tokens)) (the model is "
        "built and flattened). SQL baseline: SELECT count(*), sum(n) FROM (SELECT label, t, "
        "count(*) n FROM (SELECT label, unnest(tokens) t FROM docs) u GROUP BY label, t) s "
        "(token counts only; nbc also counts documents per token and per class). "
        "Prediction: SELECT count(nb_predict(<model>, tokens)) FROM <table>, the model from "
        "(SELECT model FROM models WHERE name = ...) or from FROM models m JOIN docs d ON "
        "m.name = 'spam'.",
        "End to end, nbc: CREATE TEMP TABLE of nb_train over docs, then count the rows where "
        "nb_predict = label (one transaction). scikit-learn %s: COPY (label, "
        "array_to_string(tokens, ' ')) TO STDOUT through psycopg2, split into the same token "
        "lists, CountVectorizer(analyzer=identity), MultinomialNB().fit, predict every row, "
        "count the right ones." % __import__("sklearn").__version__,
        "Vocabulary 100x: two synthetic 2-class models, 10,000 and 1,000,000 tokens (every "
        "token in both classes); per model, a table of %d documents of 20 tokens drawn "
        "uniformly from the model's vocabulary (q20_*), and one with tokens drawn by Zipf's "
        "law, P(rank r) ~ 1/r, ranks assigned to tokens at random (q20z_*). Both models are "
        "kept prepared between queries (nbc.prepared_model_cache = 4GB; the warm-up round "
        "prepares them), so no timed query prepares a model. Each round runs, per model, one "
        "query over the whole table and one query scoring a single document; marginal cost per "
        "document = (whole table - single) / documents, which includes reading the document "
        "from the table. Preparing the model is measured apart, with "
        "nbc.prepared_model_cache = 0: one query scoring one document per model." % args.q20_docs,
        "One-row queries: %d queries in a row, each scoring the same document of docs with the "
        "spam model from the models table, with nbc.prepared_model_cache = 0 (each query "
        "prepares the model) and with the default (the backend keeps it prepared; one "
        "untimed query first prepares it again, since the other case's queries freed it)."
        % ONE_ROW_QUERIES,
        "Peak memory: fresh connection; the table is scanned twice first (its shared buffers "
        "are then already counted in the backend's resident set); peak = VmHWM from "
        "/proc/<backend pid>/status after SELECT nb_info(nb_train(...)) minus VmHWM before "
        "(shared_buffers holds every table, so no shared page is first touched during "
        "training); as a check, the largest increase of RssAnon (private memory) sampled "
        "every 2 ms during the query. "
        "Dense = vocabulary x classes x 8 bytes, one float64 matrix (scikit-learn's "
        "MultinomialNB keeps two of them: feature_count_ and feature_log_prob_).",
    ]
    data_notes = [
        "Source: SpamAssassin public corpus, %d messages (%d real tokens, vocabulary %d). "
        "Message text = body after the header block, HTML tags and base64 lines removed; tokens "
        "= lower-cased regexp tokens [a-z][a-z0-9'$-]{1,30} made in SQL." % (
            real["messages"], real["tokens"], real["vocabulary"]),
        "docs: %d documents, ham/spam in their real proportions; each document takes the "
        "length of a random real message of its class and draws every token independently "
        "from all token occurrences of its class (the class's unigram distribution)."
        % shape["docs"]["documents"],
        "docs_many: the same resampling with one class per source: spam; for ham the "
        "mailing list (List-Id) or else the From: domain; sources with fewer than 10 messages "
        "pooled as 'other' (%d classes)." % shape["docs_many"]["classes"],
        "docs_tsv: the first %d documents of docs with lexemes = to_tsvector('simple', "
        "array_to_string(tokens, ' ')) precomputed (%s lexeme positions; the parser splits "
        "tokens at ' and -)." % (shape["docs_tsv"]["documents"],
                                 "{:,}".format(shape["docs_tsv"]["lexemes"])),
        "trgm_docs: %d synthetic languages x %d documents; language k is English under its "
        "own random letter substitution (a permutation of a-z), documents are %d-character "
        "windows of the real ham text enciphered that way, tokens = pg_trgm's show_trgm(text)."
        % (gen.N_LANGUAGES, gen.DOCS_PER_LANGUAGE, gen.SNIPPET_CHARS),
        "short_docs (parallel training): gen.make_short, sentence-like documents of 10-30 "
        "tokens in %d classes of equal share over a vocabulary of %d tokens with Zipf's law, "
        "half of a document's tokens ranked alike in every class, half by its class's own "
        "ranking." % (gen.SHORT_CLASSES, gen.SHORT_VOCABULARY),
        "Data generated in %.0f s (SQL tokenizing, numpy sampling, COPY), models for the "
        "prediction tests trained in %.0f s; whole run %.0f s."
        % (shape["_data_seconds"], elapsed_data - shape["_data_seconds"], elapsed),
    ]

    title = "nbc benchmark, %s" % now
    text = [title, "=" * len(title), env, "",
            table_text(hdr, rows), "", "Data", table_text(dhdr, drows), "",
            "Models", table_text(mhdr, mrows), "", "Checks"] + ["  " + c for c in checks] + \
           ["", "Median time of each query (context only; the machine is shared)",
            table_text(thdr, trows), "", "Notes"] + ["  - " + n for n in res.notes] + \
           ["  - " + n for n in data_notes + method]
    print("\n".join(text))

    md = ["# nbc benchmark", "", "%s. Command: `bash test/bench/run.sh`." % env, "",
          table_md(hdr, rows), "", "## Data", "", table_md(dhdr, drows), ""] + \
         ["- " + n for n in data_notes] + \
         ["", "## Models", "", table_md(mhdr, mrows), "", "## Checks", ""] + \
         ["- " + c for c in checks] + \
         ["", "## Method", ""] + ["- " + n for n in method + res.notes] + \
         ["", "## Median time of each query", "",
          "Context only: the machine is shared, so only the ratios above are meaningful.", "",
          table_md(thdr, trows), ""]
    with open(args.out, "w") as f:
        f.write("\n".join(md))
    log("wrote %s" % args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=int(os.environ.get("NBC_BENCH_REPS", 5)))
    ap.add_argument("--docs", type=int, default=int(os.environ.get("NBC_BENCH_DOCS", 200000)))
    ap.add_argument("--tsv-docs", type=int, default=25000)
    # a million: preparing the 1M-token model varies by tenths of a second from
    # run to run (it allocates and faults in some 300 MB), which must stay small
    # beside the table's own cost for the marginal cost to mean anything
    ap.add_argument("--q20-docs", type=int, default=1000000)
    ap.add_argument("--metrics-rows", type=int, default=1000000)
    # a million: at 20 tokens a row, fewer make a parallel query of tenths of a
    # second, which worker start-up and the leader's merge dominate
    ap.add_argument("--short-docs", type=int, default=1000000)
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    args = ap.parse_args()

    shape = make_data(args)
    args.many_classes = shape["docs_many"]["classes"]
    elapsed_data = time.perf_counter() - T0
    log("data ready")
    res = Results()
    checks = run_comparisons(args, res)
    sizes = model_sizes(args, res)
    report(args, shape, res, checks, sizes, elapsed_data, time.perf_counter() - T0)


if __name__ == "__main__":
    main()
