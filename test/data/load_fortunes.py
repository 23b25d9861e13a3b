#!/usr/bin/python3
"""Loads Debian's Russian and Chinese fortune cookies into table ``fortunes``.

    load_fortunes.py [DIR]

DIR is the fortune folder (default /usr/share/games/fortunes), as Debian's
packages fortunes-ru (Cyrillic, DIR/ru/*) and fortunes-zh (Chinese:
DIR/chinese, DIR/tang300, DIR/song100) install it.  Each fortune file is
split on its lines of a single "%"; the index files (*.dat) and the *.u8
links to the same files are skipped.  The text is kept as it is, CRLF line
ends and the terminal colour escapes of the Chinese files included (the
tokenizer must cope with them); invalid UTF-8 becomes U+FFFD.
Connection settings come from the libpq environment variables.

Creates (replacing any previous one)

    fortunes(lang text 'ru' or 'zh', label text, n int, body text,
             primary key (label, n))

label is the fortune file's name (ru/amur, chinese, tang300, ...), n the
fortune's place in it from 1.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pgload  # noqa: E402

ZH_FILES = ("chinese", "tang300", "song100")

CREATE = """CREATE TABLE fortunes (
    lang  text NOT NULL CHECK (lang IN ('ru', 'zh')),
    label text NOT NULL,
    n     int  NOT NULL,
    body  text NOT NULL,
    PRIMARY KEY (label, n)
)"""


def fortune_files(base):
    """(lang, label, path) of every fortune file, in order."""
    ru = os.path.join(base, "ru")
    if not os.path.isdir(ru) or not all(os.path.isfile(os.path.join(base, f)) for f in ZH_FILES):
        raise SystemExit("load_fortunes: no fortunes in %s (apt-get install fortunes-ru fortunes-zh)" % base)
    files = []
    for name in sorted(os.listdir(ru)):
        path = os.path.join(ru, name)
        if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
            continue
        files.append(("ru", "ru/" + name, path))
    for name in ZH_FILES:
        files.append(("zh", name, os.path.join(base, name)))
    return files


def split_fortunes(text):
    """The fortunes of a file: the text between lines that are a lone "%"."""
    out, cur = [], []
    for line in text.splitlines(keepends=True):
        if line.rstrip("\r\n") == "%":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(line)
    out.append("".join(cur))
    return [f for f in out if f.strip()]


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    base = argv[1] if len(argv) == 2 else "/usr/share/games/fortunes"
    rows = []
    counts = {}
    for lang, label, path in fortune_files(base):
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        for i, body in enumerate(split_fortunes(text), 1):
            rows.append([lang, label, i, pgload.clean_text(body)])
            counts[lang] = counts.get(lang, 0) + 1
    n = pgload.replace_table("fortunes", CREATE, ["lang", "label", "n", "body"], rows)
    print("fortunes: %d fortunes from %s (%s)" % (
        n, base, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
