"""Loading helpers shared by the nbc data loaders.

Connection settings come from the libpq environment (PGHOST, PGPORT, PGUSER,
PGPASSWORD, PGDATABASE, ...).  psycopg2 is used when it is installed
(Debian: python3-psycopg2); otherwise rows are piped to ``psql`` with
``\\copy ... from pstdin``.  Either way the table is replaced in one
transaction: DROP TABLE IF EXISTS, CREATE TABLE, COPY, then ANALYZE.
"""

import io
import os
import re
import subprocess

try:
    import psycopg2  # noqa: F401
except ImportError:  # pragma: no cover - depends on the machine
    psycopg2 = None

_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(s):
    """Makes a string storable in a UTF-8 PostgreSQL text column.

    Drops NUL characters (PostgreSQL text cannot hold them) and replaces lone
    UTF-16 surrogates (which JSON escapes can produce and UTF-8 cannot encode)
    by U+FFFD.  Callers decode bytes with errors="replace", so invalid UTF-8
    arrives here already replaced by U+FFFD.
    """
    if s is None:
        return None
    s = s.replace("\x00", "")
    return _SURROGATES.sub("\ufffd", s)


def _copy_field(v):
    if v is None:
        return "\\N"
    s = clean_text(v if isinstance(v, str) else str(v))
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def copy_text(rows):
    """Rows as PostgreSQL COPY text format."""
    buf = io.StringIO()
    for row in rows:
        buf.write("\t".join(_copy_field(v) for v in row))
        buf.write("\n")
    return buf.getvalue()


def replace_table(table, create_sql, columns, rows, after_sql=()):
    """(Re)creates ``table`` with ``create_sql`` and fills it with ``rows``.

    ``table`` and ``columns`` are plain identifiers chosen by the loader (not
    user input).  ``after_sql`` statements run in the same transaction after
    the copy.  Returns the number of rows copied.
    """
    data = copy_text(rows)
    nrows = data.count("\n")
    cols = ", ".join(columns)
    stmts = ["SET client_min_messages = warning",
             "DROP TABLE IF EXISTS %s" % table, create_sql]
    if psycopg2 is not None:
        conn = psycopg2.connect("")
        try:
            conn.set_client_encoding("UTF8")
            with conn:  # one transaction
                with conn.cursor() as cur:
                    for s in stmts:
                        cur.execute(s)
                    cur.copy_expert("COPY %s (%s) FROM STDIN" % (table, cols), io.StringIO(data))
                    for s in list(after_sql) + ["ANALYZE %s" % table]:
                        cur.execute(s)
        finally:
            conn.close()
    else:
        args = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-1"]
        for s in stmts:
            args += ["-c", s]
        args += ["-c", "\\copy %s (%s) from pstdin" % (table, cols)]
        for s in list(after_sql) + ["ANALYZE %s" % table]:
            args += ["-c", s]
        env = dict(os.environ, PGCLIENTENCODING="UTF8")
        subprocess.run(args, input=data.encode("utf-8"), check=True, env=env)
    return nrows
