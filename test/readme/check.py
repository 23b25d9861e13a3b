#!/usr/bin/python3
"""Runs README.md's SQL and compares what it shows with what PostgreSQL prints.

    /usr/bin/python3 test/readme/check.py [README] [--show]

Every ```sql block of the README runs, in order, in one psql session
(`psql -X -q`) in a fresh database, so the README reads as one session: a
block sees the tables and settings of the blocks before it.  A block shows
its result in one of two ways, and the test compares it with what psql
prints, line by line (trailing blanks ignored):

  * a fence with no language (or `text`) right after the block holds the
    output of the whole block in psql's default aligned format; command
    tags (INSERT 0 4, CREATE TABLE) are not shown, since -q leaves them out;
  * a comment `-- → VALUE` right after a statement holds the output of the
    SQL since the previous such comment in psql's unaligned tuples-only
    format (psql -At): a single value, usually; several `-- → ` lines are
    several lines of output.

A block that shows neither must print nothing.  An error shows as psql
prints it (ERROR:, LINE, HINT), after the block's other output.  Every
statement ends with `;` before the block (or its `-- →` comment) ends.  A
block preceded by the line `<!-- readme-test: skip (REASON) -->` is not run.

Then the Reference section is checked against the catalog: every function
and aggregate of the extension has an entry with its arguments (names,
types, defaults) and result, every entry names one that exists, every
setting nbc.* is in the Setting table with its type and default, and every
other object of the extension (pg_depend deptype 'e': types, casts,
operators, operator classes and families, views, event triggers, and any
kind added later) has its entry (see object_entry).

Uses the libpq environment (PGHOST, PGPORT, PGUSER, ...); creates and drops
the database nbc_readme.  Prints one TAP line per block and per reference
check, with a diff for a failure, and closes with "N passed, N failed";
exits 1 if anything failed.  --show prints every block's actual output.
"""

import difflib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DB = "nbc_readme"
SKIP = re.compile(r"^<!--\s*readme-test:\s*skip\s*\((.+)\)\s*-->\s*$")
RESULT = re.compile(r"^\s*-- → ?(.*)$")
FENCE = re.compile(r"^```(\S*)\s*$")


class Block:
    def __init__(self, number, line, sql, skip):
        self.number = number      # 1-based among the sql blocks
        self.line = line          # line of the opening fence
        self.sql = sql            # lines of SQL
        self.skip = skip          # reason, or None
        self.shown = None         # lines of the output fence after it, if any


def parse(text):
    """The ```sql blocks of a Markdown text, with their shown output."""
    lines = text.split("\n")
    blocks = []
    i = 0
    last = None   # the last sql block, while only blank lines follow it
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                last = None
            i += 1
            continue
        lang = m.group(1)
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"README line {start + 1}: unclosed code fence")
        i += 1
        if lang == "sql":
            prev = start - 1
            while prev >= 0 and not lines[prev].strip():
                prev -= 1
            skip = SKIP.match(lines[prev].strip()) if prev >= 0 else None
            last = Block(len(blocks) + 1, start + 1, body,
                         skip.group(1) if skip else None)
            blocks.append(last)
        elif lang in ("", "text") and last is not None:
            last.shown = body
            last = None
        else:
            last = None
    return blocks


def segments(block):
    """Splits a block at its `-- →` comments: [(sql lines, shown or None)].

    With an output fence the whole block is one segment showing it; without
    one, the SQL after the last `-- →` comment must print nothing."""
    segs, sql, shown = [], [], []
    for line in block.sql:
        m = RESULT.match(line)
        if m:
            shown.append(m.group(1))
            continue
        if shown:
            segs.append((sql, shown))
            sql, shown = [], []
        sql.append(line)
    if shown:
        segs.append((sql, shown))
    elif any(line.strip() for line in sql) or not segs:
        segs.append((sql, None))
    if block.shown is not None:
        if len(segs) > 1 or segs[0][1] is not None:
            raise SystemExit(f"README line {block.line}: a block shows its output either "
                             "in an output fence or in -- → comments, not both")
        segs = [(segs[0][0], block.shown)]
    return segs


def psql(args, script):
    return subprocess.run(["psql", "-X", "-q", "-P", "pager=off"] + args,
                          input=script, capture_output=True, text=True, encoding="utf-8")


def normalize(lines):
    out = [line.rstrip() for line in lines]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return out


def run_blocks(blocks):
    """Runs every block in one session; returns {(block, segment): lines}."""
    script = []
    for b in blocks:
        if b.skip:
            continue
        for s, (sql, shown) in enumerate(segments(b)):
            aligned = b.shown is not None or shown is None
            script.append("\\pset format " + ("aligned" if aligned else "unaligned"))
            script.append("\\pset tuples_only " + ("off" if aligned else "on"))
            script.extend(sql)
            mark = f"@@readme {b.number} {s}@@"
            script.append(f"\\echo {mark}")
            script.append(f"\\warn {mark}")
    r = psql(["-d", DB, "-v", "ON_ERROR_STOP=0"], "\n".join(script) + "\n")
    out = split_marked(r.stdout)
    err = split_marked(r.stderr)
    return {k: out.get(k, []) + err.get(k, []) for k in set(out) | set(err)}


def split_marked(text):
    parts, cur = {}, []
    for line in text.split("\n"):
        m = re.match(r"^@@readme (\d+) (\d+)@@$", line)
        if m:
            parts[(int(m.group(1)), int(m.group(2)))] = cur
            cur = []
        else:
            cur.append(line)
    return parts


# ---- the reference section against the catalog

def norm_sig(s):
    """An argument list or result type as the README writes it: float8 for
    double precision, a default without its cast, single spaces."""
    s = " ".join(s.split())
    s = s.replace("double precision", "float8")
    s = re.sub(r"(DEFAULT [^,()]*?)::[\w.]+(\[\])?", r"\1", s)
    return s


def reference_entries(text):
    """{(kind, name, arguments, result)} and {setting: (type, default)} from
    the Reference section's tables."""
    if "\n## Reference" not in text:
        return set(), {}
    ref = text.split("\n## Reference", 1)[1].split("\n## ", 1)[0]
    entries, settings = set(), {}
    kind = None
    for line in ref.split("\n"):
        if line.startswith("### "):
            kind = "a" if "Aggregate" in line else "f"
            continue
        m = re.match(r"^`(nbc\.[a-z_]+)` \((\w+)[^;]*; default `([^`]+)`", line)
        if m:
            settings[m.group(1)] = (m.group(2), m.group(3))
            continue
        m = re.match(r"^`(\w+)\((.*)\) → ([^`]+)`", line)
        if not m:
            continue
        name, args, result = m.groups()
        # `f(a, b [, c])` stands for f(a, b) and f(a, b, c)
        opt = re.match(r"^(.*?)\s*\[,\s*([^\]]+)\]$", args)
        variants = [opt.group(1), opt.group(1) + ", " + opt.group(2)] if opt else [args]
        for v in variants:
            entries.add((kind, name, norm_sig(v), norm_sig(result)))
    return entries, settings


CATALOG = r"""
SELECT p.prokind, p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nbc'
ORDER BY 1, 2, 3;
"""


def catalog_entries():
    r = psql(["-d", DB, "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1"], CATALOG)
    if r.returncode:
        raise RuntimeError(r.stderr)
    entries = set()
    for line in r.stdout.splitlines():
        kind, name, args, result = line.split("\t")
        entries.add((kind, name, norm_sig(args), norm_sig(result)))
    return entries


def check_settings(settings):
    """Problems between the README's settings and pg_settings (after LOAD)."""
    sql = ["LOAD 'nbc';",
           "SELECT name || E'\\t' || vartype FROM pg_settings WHERE name LIKE 'nbc.%' ORDER BY 1;"]
    for name, (_, default) in settings.items():
        lit = default.replace("'", "''")
        sql.append(f"SET {name} = '{lit}';")
        sql.append(f"SELECT '=' || name || E'\\t' || (setting = boot_val) "
                   f"FROM pg_settings WHERE name = '{name}';")
        sql.append(f"RESET {name};")
    r = psql(["-d", DB, "-At", "-v", "ON_ERROR_STOP=1"], "\n".join(sql) + "\n")
    if r.returncode:
        return [r.stderr.strip()]
    have, same = {}, {}
    for line in r.stdout.splitlines():
        name, val = line.split("\t")
        if name.startswith("="):
            same[name[1:]] = val == "true"
        else:
            have[name] = val
    problems = []
    for name in sorted(set(have) - set(settings)):
        problems.append(f"setting {name} ({have[name]}) is missing from the Setting table")
    for name, (vartype, default) in sorted(settings.items()):
        if name not in have:
            problems.append(f"setting {name} is in the README but not in pg_settings")
            continue
        if vartype != have[name]:
            problems.append(f"setting {name}: README says {vartype}, pg_settings {have[name]}")
        if not same.get(name):
            problems.append(f"setting {name}: README's default {default} is not its boot value")
    return problems


OBJECTS = r"""
SELECT 'type', t.typname, '', '' FROM pg_type t
 WHERE t.oid IN (SELECT objid FROM ext WHERE classid = 'pg_type'::regclass)
UNION ALL
SELECT 'cast', format_type(c.castsource, NULL), format_type(c.casttarget, NULL), '' FROM pg_cast c
 WHERE c.oid IN (SELECT objid FROM ext WHERE classid = 'pg_cast'::regclass)
UNION ALL
SELECT 'operator', o.oprname, format_type(o.oprleft, NULL), format_type(o.oprright, NULL) FROM pg_operator o
 WHERE o.oid IN (SELECT objid FROM ext WHERE classid = 'pg_operator'::regclass)
UNION ALL
SELECT 'operator class', c.opcname, a.amname, '' FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
 WHERE c.oid IN (SELECT objid FROM ext WHERE classid = 'pg_opclass'::regclass)
UNION ALL
SELECT 'operator family', f.opfname, a.amname, '' FROM pg_opfamily f JOIN pg_am a ON a.oid = f.opfmethod
 WHERE f.oid IN (SELECT objid FROM ext WHERE classid = 'pg_opfamily'::regclass)
UNION ALL
SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'r' THEN 'table' WHEN 'S' THEN 'sequence'
                      ELSE 'relation of kind ' || c.relkind::text END, c.relname, '', ''
  FROM pg_class c
 WHERE c.oid IN (SELECT objid FROM ext WHERE classid = 'pg_class'::regclass)
UNION ALL
SELECT 'event trigger', e.evtname, '', '' FROM pg_event_trigger e
 WHERE e.oid IN (SELECT objid FROM ext WHERE classid = 'pg_event_trigger'::regclass)
UNION ALL
SELECT 'object', pg_describe_object(classid, objid, objsubid), '', '' FROM ext
 WHERE classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_cast'::regclass,
                       'pg_operator'::regclass, 'pg_opclass'::regclass, 'pg_opfamily'::regclass,
                       'pg_class'::regclass, 'pg_event_trigger'::regclass)
ORDER BY 1, 2, 3, 4;
"""
EXT = """WITH ext AS (SELECT classid, objid, objsubid FROM pg_depend
             WHERE deptype = 'e' AND refclassid = 'pg_extension'::regclass
               AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'nbc'))
"""


def catalog_objects():
    """Every object of the extension but its functions: (kind, name, a, b)."""
    r = psql(["-d", DB, "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1"], EXT + OBJECTS)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return [tuple(line.split("\t")) for line in r.stdout.splitlines()]


def reference_sections(text):
    """{subsection title: its text} of the Reference section."""
    if "\n## Reference" not in text:
        return {}
    ref = text.split("\n## Reference", 1)[1].split("\n## ", 1)[0]
    return {part.split("\n", 1)[0].strip(): part for part in ref.split("\n### ")[1:]}


def object_entry(obj, sections):
    """Whether the Reference has an entry for one object: a type is a row of
    the Type table, a cast `source::target` in the Cast section, an operator
    `left op right` (or `op` after its first form) in the Operators section,
    an operator class or family `name` there with its access method, and a
    view, table or event trigger `name` on a line of the Reference that says
    its kind.  Any other kind of object has no rule, and so no entry."""
    kind, name, a, b = obj
    section = lambda title: sections.get(title, "")
    if kind == "type":
        return re.search(rf"^`{re.escape(name)}` \|", section("Type"), re.M) is not None
    if kind == "cast":
        return f"`{name}::{a}`" in section("Cast")
    if kind == "operator":
        ops = section("Operators")
        return f"`{a} {name} {b}`" in ops or (f"`{a} " in ops and f"`{name}`" in ops)
    if kind in ("operator class", "operator family"):
        ops = section("Operators")
        return f"`{name}`" in ops and re.search(rf"\b{a}\b", ops) is not None
    if kind in ("view", "table", "sequence", "event trigger"):
        return any(f"{kind} `{name}" in line for part in sections.values()
                   for line in part.split("\n"))
    return False


def fmt_entry(e):
    kind, name, args, result = e
    what = "aggregate" if kind == "a" else "function"
    return f"{what} {name}({args}) → {result}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show = "--show" in sys.argv[1:]
    readme = args[0] if args else os.path.join(HERE, "..", "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    blocks = parse(text)

    setup = psql(["-d", "postgres", "-v", "ON_ERROR_STOP=1"],
                 f"SET client_min_messages = warning;\nDROP DATABASE IF EXISTS {DB};\n"
                 f"CREATE DATABASE {DB};\n")
    if setup.returncode:
        print(f"not ok - create database {DB}\n# " + setup.stderr.strip().replace("\n", "\n# "))
        print("0 passed, 1 failed")
        return 1

    passed = failed = 0

    def report(ok, what, detail=()):
        nonlocal passed, failed
        print(("ok - " if ok else "not ok - ") + what)
        for d in detail:
            print("# " + d)
        if ok:
            passed += 1
        else:
            failed += 1

    try:
        actual = run_blocks(blocks)
        for b in blocks:
            if b.skip:
                print(f"# skip block {b.number} (line {b.line}): {b.skip}")
                continue
            diff = []
            for s, (_, shown) in enumerate(segments(b)):
                got = normalize(actual.get((b.number, s), ["(no output: the session ended)"]))
                want = normalize(shown or [])
                if show:
                    print(f"# --- block {b.number} (line {b.line}), part {s + 1}")
                    for line in got:
                        print("# " + line)
                if got != want:
                    diff += list(difflib.unified_diff(
                        want, got, "README", "psql", lineterm="", n=2))
            report(not diff, f"block {b.number} (line {b.line})", diff)

        entries, settings = reference_entries(text)
        have = catalog_entries()
        missing = sorted(have - entries)
        stale = sorted(entries - have)
        report(not missing, f"reference lists all {len(have)} functions and aggregates",
               ["not in the README: " + fmt_entry(e) for e in missing])
        report(not stale, f"every one of the {len(entries)} reference entries exists",
               ["not in the database: " + fmt_entry(e) for e in stale])
        objects = catalog_objects()
        sections = reference_sections(text)
        lacking = [o for o in objects if not object_entry(o, sections)]
        report(not lacking, f"reference has an entry for each of the {len(objects)} other objects",
               ["no entry in the README: " + " ".join(x for x in o if x) for o in lacking])
        problems = check_settings(settings)
        report(not problems, f"reference lists the {len(settings)} settings nbc.*", problems)
    finally:
        psql(["-d", "postgres"], f"SET client_min_messages = warning;\nDROP DATABASE IF EXISTS {DB};\n")

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
