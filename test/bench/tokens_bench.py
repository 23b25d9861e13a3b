#!/usr/bin/python3
"""The tokenizer: nb_tokens against the SQL tokenization the README shows,
its cost per token over the bytes floor, and its memory on a 100 MB text.

    tokens_bench.py [--reps N] [--big-mb N] [--out FILE]

Runs against the cluster in the PG* environment (nbc installed, table
spamassassin loaded by test/data/load_spamassassin.py); test/bench/run.sh
runs it.  Makes its tables (tb_*):

  tb_mail   the SpamAssassin messages as they are (6046)
  tb_lines  every non-empty line of every message, a document each
  tb_big    one text of --big-mb million characters (the messages
            repeated), stored uncompressed so that reading it is a copy

Speed: for each corpus, the same rows tokenized by
  nb_tokens     sum(cardinality(nb_tokens(body)))
  regexp        the README's tokens, sum(cardinality(ARRAY(SELECT m[1] FROM
                regexp_matches(lower(body), '[a-z][a-z0-9''$-]{1,30}', 'g') m)))
  floor         sum(length(body)): every byte read, nothing made
in rounds, the order alternating (bench.measure).  The figures: regexp /
nb_tokens (the issue's target: 10 or more), and nb_tokens' cost per token
and per MB above the floor.

Memory: the backend's peak anonymous resident memory (RssAnon of
/proc/PID/status, sampled every millisecond from this process, which must
run on the server's machine) while a fresh backend computes
cardinality(nb_tokens(body)) of tb_big, against 3 times the text plus the
result (pg_column_size of the array); the issue's bound.
"""
import argparse
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import connect, log, measure, one, query, write_section  # noqa: E402

HEADING = "## The tokenizer (test/bench/tokens_bench.py)"
README_TOKENS = "[a-z][a-z0-9''$-]{1,30}"
TARGET = 10.0

CASES = {
    "nb_tokens": "SELECT sum(cardinality(nb_tokens(body))) FROM %s",
    "regexp": ("SELECT sum(cardinality(ARRAY(SELECT m[1] FROM regexp_matches(lower(body), '%s', 'g') m))) "
               "FROM %%s" % README_TOKENS),
    "floor": "SELECT sum(length(body)) FROM %s",
}


def make_data(cur, big_mb):
    if one(cur, "SELECT to_regclass('tb_lines') IS NOT NULL")[0]:
        log("data: tb_mail, tb_lines exist")
    else:
        log("data: tb_mail, tb_lines")
        cur.execute("CREATE TABLE tb_mail AS SELECT body FROM spamassassin")
        cur.execute("CREATE TABLE tb_lines AS SELECT l AS body FROM spamassassin s, "
                    "string_to_table(s.body, E'\\n') l WHERE l <> ''")
        cur.execute("VACUUM (FREEZE, ANALYZE) tb_mail, tb_lines")
    size = big_mb * 1000 * 1000
    if one(cur, "SELECT to_regclass('tb_big') IS NOT NULL")[0] and \
            one(cur, "SELECT length(body) FROM tb_big")[0] == size:
        log("data: tb_big exists")
    else:
        log("data: tb_big (%d MB)" % big_mb)
        cur.execute("DROP TABLE IF EXISTS tb_big")
        cur.execute("CREATE TABLE tb_big (body text)")
        cur.execute("ALTER TABLE tb_big ALTER body SET STORAGE EXTERNAL")
        # the first size characters of the messages repeated
        cur.execute("""INSERT INTO tb_big
            SELECT left(repeat(string_agg(body, E'\\n'), (%s / sum(length(body) + 1))::int + 1), %s)
            FROM spamassassin""", (size, size))
        cur.execute("VACUUM (FREEZE, ANALYZE) tb_big")


def speed(cur, table, reps):
    cases = {name: query(cur, sql % table) for name, sql in CASES.items()}
    t = measure(table, cases, reps)
    tokens = int(cases["nb_tokens"].last[0][0])
    readme_tokens = int(cases["regexp"].last[0][0])
    rows, chars, octets = one(cur, "SELECT count(*), sum(length(body)), sum(octet_length(body)) FROM %s" % table)
    ratio = [b / a for a, b in zip(t["nb_tokens"], t["regexp"])]
    above = [a - b for a, b in zip(t["nb_tokens"], t["floor"])]
    return dict(rows=rows, chars=int(chars), octets=int(octets), tokens=tokens, readme_tokens=readme_tokens,
                ratio=ratio, times=t,
                ns_token=[x / tokens * 1e9 for x in above],
                ms_mb=[x / (octets / 1e6) * 1e3 for x in above])


def rss_anon(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("tokens_bench: no RssAnon for backend %d" % pid)


def memory(opts):
    """Peak anonymous RSS of a fresh backend tokenizing tb_big, above its
    level before; the text's and the result's sizes."""
    conn = connect()
    cur = conn.cursor()
    pid = one(cur, "SELECT pg_backend_pid()")[0]
    text_bytes = one(cur, "SELECT octet_length(body) FROM tb_big")[0]
    before = rss_anon(pid)
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_anon(pid))
            time.sleep(0.001)
    th = threading.Thread(target=sample)
    th.start()
    t = time.perf_counter()
    n = one(cur, "SELECT cardinality(nb_tokens(body, %s)) FROM tb_big", (opts,))[0]
    seconds = time.perf_counter() - t
    done.set()
    th.join()
    conn.close()
    conn = connect()
    cur = conn.cursor()
    result_bytes = one(cur, "SELECT pg_column_size(nb_tokens(body, %s)) FROM tb_big", (opts,))[0]
    conn.close()
    return dict(text=text_bytes, result=result_bytes, peak=peak[0] - before, tokens=n, seconds=seconds)


def fmt(xs, f="%.2f"):
    return (f + " (" + f + "-" + f + ")") % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--big-mb", type=int, default=100)
    ap.add_argument("--out", help="also write the tables as a section of this Markdown file "
                                  "(test/bench/run.sh: results.md)")
    args = ap.parse_args()
    conn = connect()
    cur = conn.cursor()
    make_data(cur, args.big_mb)
    version = one(cur, "SHOW server_version")[0]
    out = ["| corpus | rows | MB | tokens (nb_tokens) | regexp / nb_tokens (target >= %g) "
           "| nb_tokens above the floor, ns a token | ms a MB | nb_tokens, median s |" % TARGET,
           "|---|---|---|---|---|---|---|---|"]
    failed = []
    for name, table in (("SpamAssassin messages", "tb_mail"), ("SpamAssassin lines", "tb_lines")):
        s = speed(cur, table, args.reps)
        med = statistics.median(s["ratio"])
        if med < TARGET:
            failed.append("%s: %.2f" % (name, med))
        out.append("| %s (%s) | %d | %.1f | %d | **%s** | %s | %s | %.3f |" % (
            name, table, s["rows"], s["octets"] / 1e6, s["tokens"], fmt(s["ratio"]),
            fmt(s["ns_token"], "%.1f"), fmt(s["ms_mb"], "%.1f"), statistics.median(s["times"]["nb_tokens"])))
    out.append("")
    out.append("| %d MB text, options | tokens | seconds | result | peak backend memory | "
               "bound: 3 x text + result |" % args.big_mb)
    out.append("|---|---|---|---|---|---|")
    for opts in ('{}', '{"ngram_range": [1, 2]}', '{"analyzer": "char_wb", "ngram_range": [3, 3]}'):
        m = memory(opts)
        bound = 3 * m["text"] + m["result"]
        if m["peak"] > bound:
            failed.append("memory %s: %d > %d" % (opts, m["peak"], bound))
        out.append("| `%s` | %d | %.2f | %.0f MB | %.0f MB (%.2f x text + result) | %.0f MB |" % (
            opts, m["tokens"], m["seconds"], m["result"] / 1e6, m["peak"] / 1e6,
            (m["peak"] - m["result"]) / m["text"], bound / 1e6))
    text = "\n".join(out)
    print(text)
    if args.out:
        write_section(args.out, HEADING, "%s\n\n%s, PostgreSQL %s, %d CPUs. Command: "
                      "`/usr/bin/python3 test/bench/tokens_bench.py --reps %d`; medians over the rounds, "
                      "min-max in brackets. regexp is the README's SQL tokenization "
                      "(regexp_matches over lower(body)); the floor is sum(length(body)) over the "
                      "same rows. Memory: peak RssAnon of the backend above its level before the "
                      "query.\n\n%s\n" % (HEADING, time.strftime("%Y-%m-%d"), version, os.cpu_count(),
                                         args.reps, text))
    for f in failed:
        print("not ok - %s" % f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
