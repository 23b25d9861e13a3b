"""A small, dependency-free reader for Weka's ARFF format.

Follows what Weka's own ArffLoader accepts (it tokenizes with Java's
StreamTokenizer):

* ``%`` starts a comment (outside quotes) that runs to the end of the line;
* values are separated by commas and/or white space;
* values may be quoted with ``'`` or ``"``; inside quotes a backslash escapes
  the next character: ``\\n \\t \\r \\b \\f \\a \\v``, octal ``\\ddd``, and any
  other character (``\\' \\" \\\\ \\%``) stands for itself.  A quoted value ends
  at its closing quote and cannot span lines (escaped newlines are ``\\n``);
* an unquoted ``?`` is a missing value (``None``); a quoted ``'?'`` is the
  string ``?``;
* sparse rows ``{index value, index value, ...}`` (omitted numeric values are
  0, omitted nominal values are the first label);
* attribute types ``numeric``/``real``/``integer``, ``string``, ``date
  [format]`` (kept as text) and nominal ``{a, b, ...}``.  ``relational``
  attributes are rejected.

Usage::

    rel = arff.load("file.arff")
    rel.name, rel.attributes  # [Attribute(name, kind, labels)]
    for row in rel.rows: ...  # list of values, one per attribute
"""

import collections

Attribute = collections.namedtuple("Attribute", "name kind labels")
Relation = collections.namedtuple("Relation", "name attributes rows")


class ArffError(ValueError):
    pass


_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "a": "\a", "v": "\v",
}
_OCTAL = "01234567"


class _Token(str):
    """A token; ``quoted`` tells a quoted '?' from the missing value."""
    quoted = False


def _tokens(line, lineno):
    """Split one line into tokens (quoted and unquoted values, '{', '}')."""
    out = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t\r\n\f\v," or ord(c) < 32:
            i += 1
        elif c == "%":
            break
        elif c in "{}":
            out.append(_Token(c))
            i += 1
        elif c in "'\"":
            quote = c
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise ArffError("line %d: unterminated %s-quoted value" % (lineno, quote))
                c = line[i]
                if c == quote:
                    i += 1
                    break
                if c == "\\":
                    i += 1
                    if i >= n:
                        raise ArffError("line %d: backslash at end of line" % lineno)
                    e = line[i]
                    if e in _SIMPLE_ESCAPES:
                        buf.append(_SIMPLE_ESCAPES[e])
                        i += 1
                    elif e in _OCTAL:
                        # Java StreamTokenizer: up to 3 digits if the first is 0-3, else 2
                        maxlen = 3 if e <= "3" else 2
                        j = i
                        while j < n and j - i < maxlen and line[j] in _OCTAL:
                            j += 1
                        buf.append(chr(int(line[i:j], 8)))
                        i = j
                    else:
                        buf.append(e)
                        i += 1
                else:
                    buf.append(c)
                    i += 1
            t = _Token("".join(buf))
            t.quoted = True
            out.append(t)
        else:
            j = i
            while j < n and line[j] not in " \t\r\n\f\v,{}%'\"" and ord(line[j]) >= 32:
                j += 1
            out.append(_Token(line[i:j]))
            i = j
    return out


def _parse_attribute(toks, lineno):
    # toks[0] is '@attribute'
    if len(toks) < 3:
        raise ArffError("line %d: incomplete @attribute" % lineno)
    name = str(toks[1])
    kind = toks[2]
    if kind == "{" and not kind.quoted:
        if "}" not in toks[3:]:
            raise ArffError("line %d: nominal attribute %r without '}'" % (lineno, name))
        end = toks.index("}", 3)
        labels = [str(t) for t in toks[3:end]]
        return Attribute(name, "nominal", labels)
    k = kind.lower()
    if k in ("numeric", "real", "integer"):
        return Attribute(name, "numeric", None)
    if k == "string":
        return Attribute(name, "string", None)
    if k == "date":
        return Attribute(name, "date", None)
    raise ArffError("line %d: unsupported attribute type %r for %r" % (lineno, str(kind), name))


def _convert(attr, tok, lineno):
    if tok == "?" and not tok.quoted:
        return None
    if attr.kind == "numeric":
        try:
            return float(tok)
        except ValueError:
            raise ArffError("line %d: %r is not numeric (attribute %r)" % (lineno, str(tok), attr.name))
    if attr.kind == "nominal" and tok not in attr.labels:
        raise ArffError("line %d: %r is not a label of %r" % (lineno, str(tok), attr.name))
    return str(tok)


def _default(attr):
    if attr.kind == "numeric":
        return 0.0
    if attr.kind == "nominal":
        return attr.labels[0]
    return ""


def parse(text):
    """Parses the text of an ARFF file into a Relation."""
    name = None
    attributes = []
    rows = []
    in_data = False
    # split on \n only: str.splitlines() would also split on \v, \f, \x1c..
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        toks = _tokens(line, lineno)
        if not toks:
            continue
        if not in_data:
            head = toks[0].lower() if not toks[0].quoted else ""
            if head == "@relation":
                if len(toks) < 2:
                    raise ArffError("line %d: @relation without a name" % lineno)
                name = str(toks[1])
            elif head == "@attribute":
                attributes.append(_parse_attribute(toks, lineno))
            elif head == "@data":
                if not attributes:
                    raise ArffError("line %d: @data before any @attribute" % lineno)
                in_data = True
                rest = toks[1:]
                if rest:
                    raise ArffError("line %d: values on the @data line" % lineno)
            else:
                raise ArffError("line %d: unexpected %r in the header" % (lineno, str(toks[0])))
            continue
        if toks[0] == "{" and not toks[0].quoted:
            # sparse row
            if toks[-1] != "}":
                raise ArffError("line %d: sparse row without '}'" % lineno)
            row = [_default(a) for a in attributes]
            body = toks[1:-1]
            if len(body) % 2:
                raise ArffError("line %d: odd number of tokens in a sparse row" % lineno)
            for k in range(0, len(body), 2):
                try:
                    idx = int(body[k])
                except ValueError:
                    raise ArffError("line %d: bad sparse index %r" % (lineno, str(body[k])))
                if not 0 <= idx < len(attributes):
                    raise ArffError("line %d: sparse index %d out of range" % (lineno, idx))
                row[idx] = _convert(attributes[idx], body[k + 1], lineno)
            rows.append(row)
            continue
        # Weka allows a trailing instance weight "{w}"
        if len(toks) == len(attributes) + 3 and toks[-3] == "{" and toks[-1] == "}":
            toks = toks[:-3]
        if len(toks) != len(attributes):
            raise ArffError("line %d: %d values for %d attributes" % (lineno, len(toks), len(attributes)))
        rows.append([_convert(a, t, lineno) for a, t in zip(attributes, toks)])
    if not in_data:
        raise ArffError("no @data section")
    return Relation(name, attributes, rows)


def load(path, encoding="utf-8"):
    """Reads and parses an ARFF file (undecodable bytes become U+FFFD)."""
    with open(path, "rb") as f:
        data = f.read()
    return parse(data.decode(encoding, errors="replace"))


if __name__ == "__main__":
    import sys
    rel = load(sys.argv[1])
    print("relation:", rel.name)
    for a in rel.attributes:
        print("  %s %s%s" % (a.name, a.kind, " %s" % a.labels if a.labels else ""))
    print("rows:", len(rel.rows))
