"""Benchmark data for test/bench/bench.py, made from the SpamAssassin corpus.

Everything here runs against the database of the libpq environment, where
table ``spamassassin`` (test/data/load_spamassassin.py) is loaded and the
extensions nbc and pg_trgm are created.

Real messages (SQL)
    src(folder, msg_id, label, source, text, tokens): one row per real message.
    ``text`` is the message text: the body after the header block, with HTML
    tags and base64 lines (40+ characters of [A-Za-z0-9+/=]) removed.
    ``tokens`` are the lower-cased regexp tokens of the text, as in the README
    and the demo: [a-z][a-z0-9'$-]{1,30}.  ``source`` is where the message came
    from: 'spam' for spam; for ham its mailing list (List-Id) or else the
    domain of its From: address; sources with fewer than 10 messages are
    'other'.

Resampled documents (numpy, then COPY)
    docs(id, label, tokens):      2 classes (ham, spam).
    docs_many(id, label, tokens): one class per source (~35 classes).
    Each class keeps its real share of the messages.  A document of class c
    takes its length from the length of a random real message of c, and each
    of its tokens independently from the pool of every token occurrence in
    the real messages of c (so from c's empirical unigram distribution).
    Documents of all classes are shuffled together.

Trigram documents (Python cipher + pg_trgm)
    trgm_docs(id, label, tokens): 500 synthetic "languages", 100 documents
    each.  Language k is English under its own random letter substitution
    (a permutation of a-z): each document is a 300-character window of real
    ham text, lower-cased and enciphered with the language's permutation;
    tokens = pg_trgm's show_trgm(text).  Each class thus has a realistic but
    distinct character (trigram) distribution.
"""

import io
import random
import re
import threading

import numpy as np

TOKEN_RE = r"[a-z][a-z0-9''$-]{1,30}"  # doubled quote: inside a SQL literal

SRC_SQL = r"""
INSERT INTO src
SELECT folder, msg_id, label, source, text,
       ARRAY(SELECT m[1] FROM regexp_matches(lower(text), '@TOKEN_RE@', 'g') AS m)
FROM (SELECT folder, msg_id, label,
             CASE WHEN label = 'spam' THEN 'spam'
                  ELSE coalesce('list:' || lower(substring(hdr FROM '(?ni)^List-Id:[^<]*<([^>]+)>')),
                                'from:' || lower(substring(hdr FROM '(?ni)^From:.*@([A-Za-z0-9.-]+)')),
                                'other') END AS source,
             regexp_replace(regexp_replace(txt, '<[^>]*>', ' ', 'g'),
                            '^[A-Za-z0-9+/=]{40,}$', '', 'gn') AS text
      FROM (SELECT folder, msg_id, label,
                   substr(body, 1, strpos(body, E'\n\n')) AS hdr,
                   substr(body, strpos(body, E'\n\n') + 2) AS txt
            FROM spamassassin
            WHERE abs(hashtext(folder || '/' || msg_id)) % 2 = @PART@) b) s
""".replace("@TOKEN_RE@", TOKEN_RE)

MIN_SOURCE = 10          # sources with fewer messages are 'other'
N_LANGUAGES = 500
DOCS_PER_LANGUAGE = 100
SNIPPET_CHARS = 300


def _parallel(dsn_conns, sqls):
    """Runs one statement per connection, concurrently (2 cores)."""
    errs = []

    def run(conn, sql):
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        except Exception as e:  # pragma: no cover
            errs.append(e)
    ths = [threading.Thread(target=run, args=(c, s)) for c, s in zip(dsn_conns, sqls)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    if errs:
        raise errs[0]


def make_src(connect):
    """Tokenizes the real messages into table src, in two sessions at once."""
    a, b = connect(), connect()
    try:
        with a.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS src")
            cur.execute("""CREATE TABLE src (folder text, msg_id text, label text,
                           source text, text text, tokens text[])""")
        _parallel([a, b], [SRC_SQL.replace("@PART@", str(k)) for k in (0, 1)])
        with a.cursor() as cur:
            cur.execute("""UPDATE src SET source = 'other' WHERE source IN
                           (SELECT source FROM src GROUP BY source HAVING count(*) < %s)""",
                        (MIN_SOURCE,))
            cur.execute("ANALYZE src")
    finally:
        a.close()
        b.close()


def _literal(tok):
    """A token as an element of a text[] literal."""
    if tok.lower() == "null" or re.search(r'[{}",\\\s]', tok) or tok == "":
        return '"' + tok.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return tok


class RealCorpus:
    """The tokenized real messages, as vocabulary ids (numpy)."""

    def __init__(self, conn):
        buf = io.StringIO()
        with conn.cursor() as cur:
            cur.copy_expert("COPY (SELECT label, source, array_to_string(tokens, ' ') "
                            "FROM src ORDER BY folder, msg_id) TO STDOUT", buf)
        vocab = {}
        self.labels, self.sources, self.ids = [], [], []
        for line in buf.getvalue().split("\n"):
            if not line:
                continue
            label, source, toks = line.split("\t")
            toks = toks.split(" ") if toks else []
            self.labels.append(label)
            self.sources.append(source)
            self.ids.append(np.fromiter((vocab.setdefault(t, len(vocab)) for t in toks),
                                        dtype=np.int32, count=len(toks)))
        self.vocab = [None] * len(vocab)
        for t, i in vocab.items():
            self.vocab[i] = t
        self.literals = [_literal(t) for t in self.vocab]
        self.messages = len(self.ids)
        self.tokens = int(sum(len(x) for x in self.ids))


class Sample:
    """Resampled documents: labels, lengths, token ids (concatenated)."""

    def __init__(self, corpus, classes, ndocs, seed):
        rng = np.random.default_rng(seed)
        names = sorted(set(classes))
        members = {c: [i for i, k in enumerate(classes) if k == c] for c in names}
        share = np.array([len(members[c]) for c in names], dtype=float)
        counts = np.floor(share / share.sum() * ndocs).astype(int)
        counts[np.argmax(share)] += ndocs - counts.sum()
        lab, lens, ids = [], [], []
        for ci, c in enumerate(names):
            msgs = members[c]
            real_len = np.array([len(corpus.ids[i]) for i in msgs])
            pool = np.concatenate([corpus.ids[i] for i in msgs])
            L = rng.choice(real_len, size=counts[ci])
            lab.append(np.full(counts[ci], ci, dtype=np.int32))
            lens.append(L)
            ids.append(pool[rng.integers(0, len(pool), size=int(L.sum()))])
        lab = np.concatenate(lab)
        lens = np.concatenate(lens)
        ids = np.concatenate(ids)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        order = rng.permutation(ndocs)
        self.names = names
        self.label = lab[order]
        self.length = lens[order]
        self.start = starts[order]
        self.ids = ids
        self.documents = ndocs
        self.tokens = int(lens.sum())
        self.vocabulary = int(np.count_nonzero(np.bincount(ids)))
        self.classes = len(names)

    def vocabulary_of(self, ndocs):
        """Distinct tokens of the documents with id <= ndocs."""
        seen = np.zeros(self.ids.max() + 1, dtype=bool)
        for d in range(ndocs):
            s = self.start[d]
            seen[self.ids[s:s + self.length[d]]] = True
        return int(seen.sum())

    def copy_chunks(self, literals, lo=0, hi=None, chunk=4000):
        """COPY text of rows (id, label, tokens) for documents lo..hi-1, in chunks."""
        hi = self.documents if hi is None else hi
        lits = np.array(literals, dtype=object)
        names = self.names
        for a in range(lo, hi, chunk):
            b = min(a + chunk, hi)
            out = []
            for d in range(a, b):
                s = self.start[d]
                toks = lits[self.ids[s:s + self.length[d]]].tolist()
                out.append("%d\t%s\t{%s}\n" % (d + 1, names[self.label[d]], ",".join(toks)))
            yield "".join(out)


class _ChunkReader:
    def __init__(self, chunks):
        self.it = iter(chunks)

    def read(self, size=-1):
        return next(self.it, "")

    readline = read


def load_sample(connect, table, sample, literals):
    """Creates table (id, label, tokens) with the sample's documents: two COPY
    sessions at once (one per half), then VACUUM (FREEZE, ANALYZE)."""
    conns = [connect(), connect()]
    try:
        with conns[0].cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS %s" % table)
            cur.execute("CREATE TABLE %s (id int, label text, tokens text[])" % table)
        half = sample.documents // 2
        parts = [(0, half), (half, sample.documents)]
        errs = []

        def run(conn, lo, hi):
            try:
                with conn.cursor() as cur:
                    cur.copy_expert("COPY %s FROM STDIN" % table,
                                    _ChunkReader(sample.copy_chunks(literals, lo, hi)),
                                    size=1 << 20)
            except Exception as e:  # pragma: no cover
                errs.append(e)
        ths = [threading.Thread(target=run, args=(c, lo, hi)) for c, (lo, hi) in zip(conns, parts)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        if errs:
            raise errs[0]
        with conns[0].cursor() as cur:
            cur.execute("VACUUM (FREEZE, ANALYZE) %s" % table)
    finally:
        for c in conns:
            c.close()


def make_trgm(conn, seed):
    """500 enciphered-English languages, documents as show_trgm(text)."""
    rng = random.Random(seed)
    with conn.cursor() as cur:
        cur.execute("SELECT lower(text) FROM src WHERE label = 'ham'")
        text = " ".join(r[0] for r in cur.fetchall())
    text = re.sub(r"\s+", " ", text)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = io.StringIO()
    n = 0
    for k in range(N_LANGUAGES):
        perm = list(letters)
        rng.shuffle(perm)
        table = str.maketrans(letters, "".join(perm))
        for _ in range(DOCS_PER_LANGUAGE):
            o = rng.randrange(0, len(text) - SNIPPET_CHARS)
            snip = text[o:o + SNIPPET_CHARS].translate(table)
            snip = snip.replace("\\", " ").replace("\t", " ")
            n += 1
            out.write("%d\tlang%03d\t%s\n" % (n, k, snip))
    out.seek(0)
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS trgm_src")
        cur.execute("CREATE TABLE trgm_src (id int, label text, text text)")
        cur.copy_expert("COPY trgm_src FROM STDIN", out)
        cur.execute("DROP TABLE IF EXISTS trgm_docs")
        cur.execute("CREATE TABLE trgm_docs AS SELECT id, label, show_trgm(text) AS tokens "
                    "FROM trgm_src")
        cur.execute("VACUUM (FREEZE, ANALYZE) trgm_docs")


Q20_SMALL = 10000        # vocabulary of the small synthetic model
Q20_LARGE = 1000000      # and of the large one: 100 times larger
Q20_TOKENS = 20


def make_q20(connect, ndocs, seed):
    """q20_small, q20_large (id, label, tokens): documents of 20 tokens drawn
    uniformly from the vocabulary 'w0000000'.. of the small / large model;
    q20z_small, q20z_large: the same with tokens drawn by Zipf's law,
    P(rank r) ~ 1/r, the ranks given to the tokens in a random order."""
    rng = np.random.default_rng(seed)
    distinct = {}
    for table, vocab, zipf in (("q20_small", Q20_SMALL, False), ("q20_large", Q20_LARGE, False),
                               ("q20z_small", Q20_SMALL, True), ("q20z_large", Q20_LARGE, True)):
        lits = np.array(["w%07d" % i for i in range(vocab)], dtype=object)
        if zipf:
            cdf = np.cumsum(1.0 / np.arange(1, vocab + 1))
            ranks = np.searchsorted(cdf, rng.random((ndocs, Q20_TOKENS)) * cdf[-1])
            ids = rng.permutation(vocab)[np.minimum(ranks, vocab - 1)]
        else:
            ids = rng.integers(0, vocab, size=(ndocs, Q20_TOKENS))
        distinct[table] = int(len(np.unique(ids)))
        labels = rng.integers(0, 2, size=ndocs)
        toks = lits[ids]
        out = io.StringIO()
        for d in range(ndocs):
            out.write("%d\t%s\t{%s}\n" % (d + 1, "ab"[labels[d]], ",".join(toks[d].tolist())))
        out.seek(0)
        load_rows(connect, table, out, ["ANALYZE %s" % table])
    return distinct


def load_rows(connect, table, rows, after):
    """(Re)create table (id, label, tokens text[]) from rows, a file of COPY
    text lines, frozen as it is loaded; then run the statements after."""
    conn = connect()
    try:
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("DROP TABLE IF EXISTS %s" % table)
            cur.execute("CREATE TABLE %s (id int, label text, tokens text[])" % table)
            cur.copy_expert("COPY %s FROM STDIN WITH (FREEZE)" % table, rows)
            cur.execute("COMMIT")
            for sql in after:
                cur.execute(sql)
    finally:
        conn.close()


SHORT_CLASSES = 15
SHORT_VOCABULARY = 100000
SHORT_TOKENS = 20


def make_short(connect, ndocs, seed, table="short_docs"):
    """short_docs (id, label, tokens): sentence-like documents for parallel
    training, ndocs of them, 15 classes of equal share, lengths uniform in
    10..30 (20 on average), over a vocabulary of 100,000 tokens with Zipf's
    law, P(rank r) ~ 1/r.  Half of a document's tokens follow the common
    ranking (the same for every class), the other half a ranking of the
    class's own (its topic words): so frequent tokens occur in every class
    and the model has many (token, class) pairs, as real text has.  Returns
    the number of distinct tokens."""
    rng = np.random.default_rng(seed)
    lits = np.array(["s%05d" % i for i in range(SHORT_VOCABULARY)], dtype=object)
    cdf = np.cumsum(1.0 / np.arange(1, SHORT_VOCABULARY + 1))
    common = rng.permutation(SHORT_VOCABULARY)
    topic = [rng.permutation(SHORT_VOCABULARY) for _ in range(SHORT_CLASSES)]
    labels = rng.integers(0, SHORT_CLASSES, size=ndocs)
    lens = rng.integers(SHORT_TOKENS - 10, SHORT_TOKENS + 11, size=ndocs)
    total = int(lens.sum())
    ranks = np.minimum(np.searchsorted(cdf, rng.random(total) * cdf[-1]), SHORT_VOCABULARY - 1)
    own = rng.random(total) < 0.5
    doc_of = np.repeat(np.arange(ndocs), lens)
    ids = common[ranks]
    for c in range(SHORT_CLASSES):
        sel = own & (labels[doc_of] == c)
        ids[sel] = topic[c][ranks[sel]]
    toks = lits[ids]
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    out = io.StringIO()
    for d in range(ndocs):
        s = starts[d]
        out.write("%d\tc%02d\t{%s}\n" % (d + 1, labels[d], ",".join(toks[s:s + lens[d]].tolist())))
    out.seek(0)
    load_rows(connect, table, out, ["ALTER TABLE %s SET (parallel_workers = 4)" % table,
                                    "VACUUM (FREEZE, ANALYZE) %s" % table])
    return int(len(np.unique(ids)))
