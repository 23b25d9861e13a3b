#!/usr/bin/python3
"""Loads the SpamAssassin public corpus into table ``spamassassin``.

    load_spamassassin.py [DIR]

DIR is the cache folder of test/data/fetch_data.sh (default
${NBC_DATA_DIR:-/var/cache/nbc-data}) or directly the package's data/
folder.  When the corpus is not there, fetch_data.sh is run first.
Connection settings come from the libpq environment variables.

Creates (replacing any previous one)

    spamassassin(folder text, msg_id text, label text, body text, split text,
                 primary key (folder, msg_id))

label is 'ham' (easy-ham-1, easy-ham-2, hard-ham-1) or 'spam' (spam-1,
spam-2); body is the raw message, headers included.  split is 'train' or
'test': a deterministic stratified 75/25 split -- within each label the
messages are ordered by md5('<folder>/<msg_id>') and the first
round(n/4) go to 'test'.
"""

import glob
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pgload  # noqa: E402

PKG_DATA = os.path.join("node_modules", "@stdlib", "datasets-spam-assassin", "data")
FOLDERS = {
    "easy-ham-1": "ham",
    "easy-ham-2": "ham",
    "hard-ham-1": "ham",
    "spam-1": "spam",
    "spam-2": "spam",
}
TEST_FRACTION = 0.25

CREATE = """CREATE TABLE spamassassin (
    folder text NOT NULL,
    msg_id text NOT NULL,
    label  text NOT NULL CHECK (label IN ('ham', 'spam')),
    body   text NOT NULL,
    split  text NOT NULL CHECK (split IN ('train', 'test')),
    PRIMARY KEY (folder, msg_id)
)"""


def data_dir(arg):
    base = arg or os.environ.get("NBC_DATA_DIR") or "/var/cache/nbc-data"
    for cand in (base, os.path.join(base, PKG_DATA)):
        if all(os.path.isdir(os.path.join(cand, f)) for f in FOLDERS):
            return cand
    out = subprocess.run([os.path.join(HERE, "fetch_data.sh"), base],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return out.strip().splitlines()[-1]


def read_messages(ddir):
    msgs = []
    for folder, label in sorted(FOLDERS.items()):
        files = sorted(glob.glob(os.path.join(ddir, folder, "*.json")))
        if not files:
            raise SystemExit("load_spamassassin: no messages in %s" % os.path.join(ddir, folder))
        for path in files:
            with open(path, "rb") as f:
                raw = f.read()
            # invalid UTF-8 becomes U+FFFD; lone surrogates / NULs are cleaned by pgload
            doc = json.loads(raw.decode("utf-8", errors="replace"))
            msg_id = str(doc.get("id") or os.path.basename(path).split(".")[0])
            body = doc.get("text")
            if body is None:
                raise SystemExit("load_spamassassin: %s has no field 'text'" % path)
            msgs.append([folder, msg_id, label, pgload.clean_text(body)])
    return msgs


def assign_split(msgs):
    by_label = {}
    for m in msgs:
        by_label.setdefault(m[2], []).append(m)
    for label, group in by_label.items():
        group.sort(key=lambda m: hashlib.md5(("%s/%s" % (m[0], m[1])).encode()).hexdigest())
        ntest = int(round(len(group) * TEST_FRACTION))
        for i, m in enumerate(group):
            m.append("test" if i < ntest else "train")
    return msgs


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    ddir = data_dir(argv[1] if len(argv) == 2 else None)
    msgs = assign_split(read_messages(ddir))
    keys = set((m[0], m[1]) for m in msgs)
    if len(keys) != len(msgs):
        raise SystemExit("load_spamassassin: duplicate (folder, msg_id)")
    msgs.sort(key=lambda m: (m[0], m[1]))
    n = pgload.replace_table("spamassassin", CREATE,
                             ["folder", "msg_id", "label", "body", "split"], msgs)
    counts = {}
    for m in msgs:
        counts[(m[2], m[4])] = counts.get((m[2], m[4]), 0) + 1
    print("spamassassin: %d messages from %s (%s)" % (
        n, ddir, ", ".join("%s/%s %d" % (k[0], k[1], v) for k, v in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
