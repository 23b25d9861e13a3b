"""The database connection the parity suites share: libpq environment,
autocommit, UTF-8."""

import psycopg2


class DB:
    def __init__(self):
        self.conn = psycopg2.connect("")
        self.conn.autocommit = True
        self.conn.set_client_encoding("UTF8")

    def execute(self, sql, args=None):
        with self.conn.cursor() as cur:
            cur.execute(sql, args)

    def query(self, sql, args=None):
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchall()
