#!/usr/bin/python3
"""Live models benchmark: what a live model costs writers and readers, as
ratios to the same work without one, measured in the same run.

    live_bench.py [--copy-rows N] [--base-rows N] [--probe-rows N] [--secs S] [--rounds R]
                  [--fold-after N] [--keep]

Runs against the cluster in the PG* environment (PGHOST, PGPORT, PGUSER,
PGDATABASE), in which nbc must be installed; pgbench from the bin directory
of pg_config (PG_CONFIG) or the PATH.  Tables lb_*, dropped at the end
unless --keep.  Each round measures, in alternating order:

  insert     single-row INSERT of a short document, one client, S seconds
             in all with pgbench, in 5 pairs of runs alternating between a
             table with a live model and the same table without one:
             transactions per second, and the median of the pairs' ratios
             live / plain (with the server's synchronous_commit, and with
             synchronous_commit off, where the commit's WAL flush no longer
             hides the trigger)
  floor*     the same with synchronous_commit off into a table whose only
             trigger is an empty statement trigger with a transition table /
             into the table without it: what the trigger machinery alone
             costs
  copy       COPY of N short documents (label, token array) into an empty
             table with a live model / without one (--copy-rows 0: left out)
  read       nb_live(name) with fold_after - 1 deltas pending (the most the
             automatic fold leaves) over a model of --base-rows documents /
             reading the same model stored in a table; each is SELECT
             nb_info(model), so both include the same small inspection
  read*      the same nb_live right after a one-row insert, so that it
             merges the base with its deltas instead of reusing the model it
             computed for the rows it saw last / the same stored read
  score      scoring --probe-rows rows through a view on (SELECT nb_live(name)) /
             through the same query on the stored model (the prepared-model
             cache serves both: it knows a model by its bytes)

A read or a scoring query is timed 20 times in a round, alternating with
the query it is compared with: the fastest run of each is printed, and
the round's ratio is the median of the ratios of the runs side by side
(a change in the machine's load then falls on both alike).  Prints
medians over the rounds, and the ranges of the rounds' ratios.  The
machine may be shared, so only the ratios mean something.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import psycopg2


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def connect():
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    return db, cur


def pgbench():
    pgc = os.environ.get("PG_CONFIG")
    if pgc:
        bindir = subprocess.check_output([pgc, "--bindir"], text=True).strip()
        return os.path.join(bindir, "pgbench")
    return shutil.which("pgbench") or "pgbench"


# a short document: a label of 4 and 4 to 12 tokens of a Zipf-like vocabulary of 20,000
DOC_SQL = """
SELECT (ARRAY['spam', 'ham', 'eggs', 'toast'])[1 + (i * 7) %% 4],
       ARRAY(SELECT 'w' || floor(20000 ^ (((i::bigint * 2654435761 + j * 40503) %% 1000003) / 1000003.0))::int
             FROM generate_series(1, 4 + i %% 9) j)
FROM generate_series(%s, %s) i"""


def setup(cur, base_rows, probe_rows, fold_after):
    cur.execute("DROP TABLE IF EXISTS lb_plain, lb_live, lb_trigger, lb_copy_plain, lb_copy_live, lb_stored, lb_probe")
    cur.execute("DROP FUNCTION IF EXISTS lb_nothing()")
    cur.execute("SELECT name::text FROM nb_lives WHERE name::text LIKE 'lb\\_%'")
    for (name,) in cur.fetchall():
        cur.execute("SELECT nb_live_drop(%s)", (name,))
    for t in ("lb_plain", "lb_live", "lb_trigger", "lb_copy_plain", "lb_copy_live"):
        cur.execute(f"CREATE TABLE {t} (id bigserial PRIMARY KEY, label text, tokens text[])")
    for t in ("lb_plain", "lb_live", "lb_trigger"):
        cur.execute(f"INSERT INTO {t} (label, tokens) " + DOC_SQL, (1, base_rows))
    # the floor: a statement trigger with a transition table that does nothing
    cur.execute("CREATE FUNCTION lb_nothing() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'")
    cur.execute("CREATE TRIGGER lb_nothing AFTER INSERT ON lb_trigger REFERENCING NEW TABLE AS n "
                "FOR EACH STATEMENT EXECUTE FUNCTION lb_nothing()")
    opts = '{"fold_after": %d}' % fold_after
    cur.execute("SELECT nb_live_create('lb_model', 'lb_live', 'label', 'tokens', options => %s)", (opts,))
    cur.execute("SELECT nb_live_create('lb_copy', 'lb_copy_live', 'label', 'tokens', options => %s)", (opts,))
    cur.execute("CREATE TABLE lb_probe AS SELECT * FROM lb_plain ORDER BY id LIMIT %s", (probe_rows,))
    cur.execute("VACUUM ANALYZE lb_plain, lb_live, lb_trigger, lb_probe")


def timed(cur, sql, args=None):
    t = time.perf_counter()
    cur.execute(sql, args)
    cur.fetchall() if cur.description else None
    return time.perf_counter() - t


def interleaved(cur, queries, reps, rnd):
    """reps runs of each of the two queries {"live": ..., "stored": ...},
    alternating (after one run of each to warm up): the fastest run of each
    and the median of the ratios live/stored of the runs side by side, so
    that a change in the machine's load falls on both alike."""
    keys = ("live", "stored") if rnd % 2 == 0 else ("stored", "live")
    times = {k: [] for k in keys}
    for k in keys:
        timed(cur, queries[k])
    for _ in range(reps):
        for k in keys:
            times[k].append(timed(cur, queries[k]))
    ratio = statistics.median(x / y for x, y in zip(times["live"], times["stored"]))
    return min(times["live"]), min(times["stored"]), ratio


INSERT_PAIRS = 5


def insert_tps(table, secs, sync):
    script = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    script.write("\\set k random(1, 1000000000)\n"
                 f"INSERT INTO {table} (label, tokens) VALUES "
                 "((ARRAY['spam', 'ham', 'eggs', 'toast'])[1 + :k % 4], "
                 "ARRAY['w' || (:k % 20000), 'w' || (:k % 997), 'w' || (:k % 13), 'w' || (:k % 5003)]);\n")
    script.close()
    env = dict(os.environ)
    if not sync:
        env["PGOPTIONS"] = (env.get("PGOPTIONS", "") + " -c synchronous_commit=off").strip()
    out = subprocess.run([pgbench(), "-n", "-c", "1", "-T", str(secs), "-f", script.name],
                         env=env, capture_output=True, text=True, check=True).stdout
    os.unlink(script.name)
    for line in out.splitlines():
        if line.startswith("tps ="):
            return float(line.split()[2])
    raise RuntimeError(out)


def insert_ratio(secs, sync, rnd, table="lb_live"):
    """Single-row inserts into table and lb_plain in INSERT_PAIRS pairs of
    secs / INSERT_PAIRS seconds each, alternating: the mean rate of each and
    the median of the pairs' ratios table/plain."""
    part = max(1, round(secs / INSERT_PAIRS))
    tps = {table: [], "lb_plain": []}
    ratios = []
    for i in range(INSERT_PAIRS):
        order = ("lb_plain", table) if (rnd + i) % 2 == 0 else (table, "lb_plain")
        for t in order:
            tps[t].append(insert_tps(t, part, sync))
        ratios.append(tps[table][-1] / tps["lb_plain"][-1])
    return statistics.mean(tps[table]), statistics.mean(tps["lb_plain"]), statistics.median(ratios)


def copy_time(cur, path, table):
    cur.execute(f"TRUNCATE {table}")
    cur.execute("CHECKPOINT")
    t = time.perf_counter()
    with open(path) as f:
        cur.copy_expert(f"COPY {table} (label, tokens) FROM STDIN", f)
    return time.perf_counter() - t


def pending_deltas(cur, fold_after):
    """Fold, then leave fold_after - 1 deltas pending (single-row inserts).
    A writer counts the deltas pending by the ids past the last fold's, and
    the ids of every live model's deltas come from one sequence: a delta of
    this live model just before the fold makes its last id the sequence's,
    rather than one that lb_copy's COPY has moved past."""
    cur.execute("INSERT INTO lb_live (label, tokens) VALUES ('ham', ARRAY['pending', 'w1'])")
    cur.execute("SELECT nb_live_fold('lb_model')")
    for i in range(fold_after - 1):
        cur.execute("INSERT INTO lb_live (label, tokens) VALUES ('ham', ARRAY['pending' || %s::text, 'w1'])", (i,))
    cur.execute("SELECT pending_deltas FROM nb_lives WHERE name::text = 'lb_model'")
    return cur.fetchone()[0]


def summary(name, a, b, label_a, label_b, unit, target, ratios=None):
    """Medians of a and b over the rounds, and of the rounds' ratios: those
    given (paired within each round), else a / b."""
    if ratios is None:
        ratios = [x / y for x, y in zip(a, b)]
    print(f"{name:8s} {label_a}: {statistics.median(a):10.4g} {unit}  {label_b}: {statistics.median(b):10.4g} {unit}  "
          f"ratio {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f}; target {target})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copy-rows", type=int, default=1000000)
    ap.add_argument("--base-rows", type=int, default=100000)
    ap.add_argument("--probe-rows", type=int, default=20000)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fold-after", type=int, default=256)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    db, cur = connect()
    log(f"setup: two tables of {a.base_rows} documents, live models with fold_after {a.fold_after}")
    setup(cur, a.base_rows, a.probe_rows, a.fold_after)
    tmp = tempfile.mkdtemp(prefix="live_bench.")
    path = os.path.join(tmp, "docs.copy")
    if a.copy_rows > 0:
        with open(path, "w") as f:
            cur.copy_expert("COPY (" + cur.mogrify(DOC_SQL, (1, a.copy_rows)).decode() + ") TO STDOUT", f)
        log(f"copy file: {a.copy_rows} documents, {os.path.getsize(path) / 1e6:.1f} MB")

    r = {k: [] for k in ("ins_live", "ins_plain", "ins_live_async", "ins_plain_async",
                         "ins_trigger_async", "ins_plain_trigger_async",
                         "copy_live", "copy_plain", "read_live", "read_stored", "read_changed", "score_live", "score_stored")}
    ratios = {k: [] for k in ("ins", "ins_async", "ins_trigger_async", "read", "score")}
    reps = 20
    for rnd in range(a.rounds):
        log(f"round {rnd + 1}/{a.rounds}")
        for sync in (True, False):
            suffix = "" if sync else "_async"
            live, plain, ratio = insert_ratio(a.secs, sync, rnd)
            r["ins_live" + suffix].append(live)
            r["ins_plain" + suffix].append(plain)
            ratios["ins" + suffix].append(ratio)
        trig, plain, ratio = insert_ratio(a.secs, False, rnd, "lb_trigger")
        r["ins_trigger_async"].append(trig)
        r["ins_plain_trigger_async"].append(plain)
        ratios["ins_trigger_async"].append(ratio)
        order = ("lb_copy_plain", "lb_copy_live") if rnd % 2 == 0 else ("lb_copy_live", "lb_copy_plain")
        for t in order if a.copy_rows > 0 else ():
            r["copy_" + t[8:]].append(copy_time(cur, path, t))
        cur.execute("SELECT nb_live('lb_copy') IS NOT DISTINCT FROM (SELECT nb_train(label, tokens) FROM lb_copy_live)")
        assert cur.fetchone()[0], "the live model after COPY differs from nb_train"

        n = pending_deltas(cur, a.fold_after)
        cur.execute("DROP TABLE IF EXISTS lb_stored")
        cur.execute("CREATE TABLE lb_stored AS SELECT 1 AS id, nb_live('lb_model') AS m")
        cur.execute("SELECT (SELECT m FROM lb_stored) = (SELECT nb_train(label, tokens) FROM lb_live), "
                    "pg_column_size((SELECT m FROM lb_stored))")
        same, size = cur.fetchone()
        assert same, "the live model differs from nb_train"
        if rnd == 0:
            log(f"read: {n} deltas pending over a model of {size / 1e6:.2f} MB stored")
        reads = {"live": "SELECT nb_info(nb_live('lb_model'))",
                 "stored": "SELECT nb_info(m) FROM lb_stored WHERE id = 1"}
        scores = {"live": "SELECT count(*) FILTER (WHERE p = label) FROM (SELECT label, "
                          "nb_predict((SELECT nb_live('lb_model')), tokens) AS p FROM lb_probe) s",
                  "stored": "SELECT count(*) FILTER (WHERE p = label) FROM (SELECT label, "
                            "nb_predict((SELECT m FROM lb_stored WHERE id = 1), tokens) AS p FROM lb_probe) s"}
        live, stored, ratio = interleaved(cur, reads, reps, rnd)
        r["read_live"].append(live)
        r["read_stored"].append(stored)
        ratios["read"].append(ratio)
        changed = []
        for i in range(reps):
            cur.execute("INSERT INTO lb_live (label, tokens) VALUES ('eggs', ARRAY['changed' || %s::text])", (i,))
            changed.append(timed(cur, reads["live"]))
        r["read_changed"].append(min(changed))
        live, stored, ratio = interleaved(cur, scores, reps, rnd)
        r["score_live"].append(live)
        r["score_stored"].append(stored)
        ratios["score"].append(ratio)

    print(f"live models benchmark: {a.rounds} rounds, base {a.base_rows} documents, "
          f"COPY of {a.copy_rows}, {a.probe_rows} rows scored, fold_after {a.fold_after}")
    summary("insert", r["ins_live"], r["ins_plain"], "live", "plain", "tps", ">= 0.5", ratios["ins"])
    summary("insert*", r["ins_live_async"], r["ins_plain_async"], "live", "plain", "tps", ">= 0.5 (synchronous_commit off)",
            ratios["ins_async"])
    summary("floor*", r["ins_trigger_async"], r["ins_plain_trigger_async"], "trigger", "plain", "tps",
            "(an empty statement trigger with a transition table, synchronous_commit off)", ratios["ins_trigger_async"])
    if a.copy_rows > 0:
        summary("copy", r["copy_live"], r["copy_plain"], "live", "plain", "s", "<= 1.5")
    summary("read", r["read_live"], r["read_stored"], "live", "stored", "s", "<= 2", ratios["read"])
    summary("read*", r["read_changed"], r["read_stored"], "live", "stored", "s", "(after a write)")
    summary("score", r["score_live"], r["score_stored"], "live", "stored", "s", "<= 1.1", ratios["score"])

    shutil.rmtree(tmp)
    if not a.keep:
        cur.execute("SELECT nb_live_drop('lb_model'), nb_live_drop('lb_copy')")
        cur.execute("DROP TABLE lb_plain, lb_live, lb_trigger, lb_copy_plain, lb_copy_live, lb_stored, lb_probe")
        cur.execute("DROP FUNCTION lb_nothing()")


if __name__ == "__main__":
    main()
