#!/usr/bin/env bash
# The model size limit at its boundary: every model nbc makes can be dumped
# and restored as text, so none may pass NB_MODEL_MAX_SIZE (805306362 bytes,
# src/nb_format.h), the largest whose base64 text fits in a value.  Checks
# that a model of exactly that size is accepted and one byte more refused
# (SQLSTATE 54000) by training, text input, binary input and merge, and that
# the largest model goes through text and binary COPY byte for byte.
#
#   bash test/reliability/limits.sh [--quick]   (libpq environment: PGHOST, PGPORT, ...)
#
# --quick (what the test command runs) checks the training boundary only;
# text, binary and merge at the boundary take minutes more and run without it.
#
# Prints TAP lines ("ok - ...", "not ok - ..."), exits 1 if any failed.
# Heavy: models of ~800 MB; the server needs ~4 GB of free memory, the
# client ~1 GB and 3 GB of temporary disk.  Creates the extension if
# missing; works in schema nbc_limits, dropped at the end.
set -uo pipefail

export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
psql_cmd=(psql -X -q -At -v ON_ERROR_STOP=1)
tmp=$(mktemp -d /tmp/nbc-limits.XXXXXX)
trap 'rm -rf "$tmp"; "${psql_cmd[@]}" -c "DROP SCHEMA IF EXISTS nbc_limits CASCADE" >/dev/null 2>&1' EXIT

max=805306362
quick=0
[ "${1:-}" = --quick ] && quick=1

n=0
failed=0
ok() { n=$((n + 1)); echo "ok - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok - $1${2:+: $2}"; }
# check NAME EXPECTED ACTUAL
check() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected '$2', got '$3'"; fi; }
q() { "${psql_cmd[@]}" -c "$1" 2>&1; }
# The SQLSTATE of a statement, 00000 if it succeeds.
sqlstate() { q "SELECT nbc_limits.sqlstate(\$q\$$1\$q\$)"; }
# The SQLSTATE of a COPY ... FROM STDIN fed from standard input.
copy_state() {
	local out
	out=$(psql -X -q -At -v VERBOSITY=sqlstate -c "$1" 2>&1) && { echo 00000; return; }
	sed -n 's/^.*ERROR: *\([0-9A-Z]\{5\}\).*$/\1/p' <<<"$out" | head -n 1
}
# The md5 of a model's bytes, through binary COPY.
model_md5() {
	"${psql_cmd[@]}" -c "COPY (SELECT m FROM nbc_limits.m WHERE name = '$1') TO STDOUT (FORMAT binary)" |
		md5sum | cut -d' ' -f1
}
msize() { q "SELECT octet_length(nbc_model_send(m)) FROM nbc_limits.m WHERE name = '$1'"; }

if ! q "CREATE EXTENSION IF NOT EXISTS nbc;
	DROP SCHEMA IF EXISTS nbc_limits CASCADE;
	CREATE SCHEMA nbc_limits;
	CREATE TABLE nbc_limits.m (name text PRIMARY KEY, m nb_model);
	ALTER TABLE nbc_limits.m ALTER m SET STORAGE external;
	CREATE FUNCTION nbc_limits.sqlstate(query text) RETURNS text LANGUAGE plpgsql AS \$f\$
	BEGIN
		EXECUTE query;
		RETURN '00000';
	EXCEPTION WHEN OTHERS THEN
		RETURN SQLSTATE;
	END \$f\$;" >"$tmp/setup.log"; then
	not_ok "setup" "$(cat "$tmp/setup.log")"
	echo "1..$n"
	exit 1
fi

# One row with text[] features ARRAY['a'] and a label of L bytes makes a
# model of L + overhead bytes (the label is the only part that grows), and
# two such models with different labels merge into one of La + Lb +
# merge_overhead bytes; both overheads are measured here, from one-byte
# labels, so that they follow the format.  Labels of 'b' x merge_a and
# 'c' x merge_b then merge into exactly max bytes.
overhead=$(( $(q "SELECT octet_length(nbc_model_send(nb_train('x', ARRAY['a'])))") - 1 ))
merge_overhead=$(( $(q "SELECT octet_length(nbc_model_send(nb_merge(nb_train('x', ARRAY['a']),
	nb_train('y', ARRAY['a']))))") - 2 ))
merge_a=$(( (max - merge_overhead) / 2 ))
merge_b=$(( max - merge_overhead - merge_a ))

# training
check "train: a model of exactly $max bytes is made" "" \
	"$(q "INSERT INTO nbc_limits.m SELECT 'max', nb_train(repeat('a', $max - $overhead), ARRAY['a'])")"
check "train: it has $max bytes" "$max" "$(msize max)"
check "train: one byte more is refused with 54000" 54000 \
	"$(sqlstate "SELECT nb_train(repeat('a', $max - $overhead + 1), ARRAY['a'])")"
err=$(q "SELECT nb_train(repeat('a', $max - $overhead + 1), ARRAY['a'])")
if [[ $err == *"the limit of $max bytes"* && $err == *"could not be dumped"* ]]; then
	ok "train: the message names the limit and why"
else
	not_ok "train: the message names the limit and why" "$err"
fi

if [ "$quick" -eq 1 ]; then
	echo "# quick: text, binary and merge at the boundary run without --quick"
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit
fi

# text output and input
check "text: the largest model's text has 4/3 of its bytes" 1073741816 \
	"$(q "SELECT octet_length(m::text) FROM nbc_limits.m WHERE name = 'max'")"
if "${psql_cmd[@]}" -c "COPY (SELECT 'text', m FROM nbc_limits.m WHERE name = 'max') TO STDOUT" >"$tmp/max.txt" 2>"$tmp/err"; then
	ok "text: COPY TO writes the largest model"
else
	not_ok "text: COPY TO writes the largest model" "$(cat "$tmp/err")"
fi
check "text: COPY FROM reads it back" 00000 \
	"$(copy_state "COPY nbc_limits.m (name, m) FROM STDIN" <"$tmp/max.txt")"
rm -f "$tmp/max.txt"
want=$(model_md5 max)
check "text: the round trip is byte for byte" "$want" "$(model_md5 text)"
q "DELETE FROM nbc_limits.m WHERE name = 'text'" >/dev/null
# base64 of max + 1 bytes: 4 * 268435455 characters (a text value cannot
# hold them, but COPY passes them to the input function)
check "text: input of $((max + 1)) bytes is refused with 54000" 54000 \
	"$(head -c 1073741820 /dev/zero | tr '\0' A | copy_state "COPY nbc_limits.m (m) FROM STDIN")"

# binary COPY
"${psql_cmd[@]}" -c "COPY (SELECT 'binary', m FROM nbc_limits.m WHERE name = 'max') TO STDOUT (FORMAT binary)" >"$tmp/max.bin"
check "binary: COPY FROM reads the largest model" 00000 \
	"$(copy_state "COPY nbc_limits.m (name, m) FROM STDIN (FORMAT binary)" <"$tmp/max.bin")"
rm -f "$tmp/max.bin"
check "binary: the round trip is byte for byte" "$want" "$(model_md5 binary)"
q "DELETE FROM nbc_limits.m WHERE name IN ('binary', 'max')" >/dev/null
# a binary COPY file of one field of max + 1 bytes (zeros: the size is refused first)
binary_field() {
	python3 -c '
import struct, sys
n = int(sys.argv[1])
w = sys.stdout.buffer
w.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">iihi", 0, 0, 1, n))
block = bytes(1 << 20)
while n > 0:
	w.write(block[:min(n, len(block))])
	n -= len(block)
w.write(struct.pack(">h", -1))
' "$1"
}
check "binary: input of $((max + 1)) bytes is refused with 54000" 54000 \
	"$(binary_field $((max + 1)) | copy_state "COPY nbc_limits.m (m) FROM STDIN (FORMAT binary)")"

# merge
q "INSERT INTO nbc_limits.m SELECT 'a', nb_train(repeat('b', $merge_a), ARRAY['a']);
	INSERT INTO nbc_limits.m SELECT 'b', nb_train(repeat('c', $merge_b), ARRAY['a']);
	INSERT INTO nbc_limits.m SELECT 'b+1', nb_train(repeat('c', $merge_b + 1), ARRAY['a'])" >/dev/null
check "merge: two models that merge into exactly $max bytes" "" \
	"$(q "INSERT INTO nbc_limits.m SELECT 'ab', nb_merge(a.m, b.m) FROM nbc_limits.m a, nbc_limits.m b
		WHERE a.name = 'a' AND b.name = 'b'")"
check "merge: the result has $max bytes" "$max" "$(msize ab)"
q "DELETE FROM nbc_limits.m WHERE name = 'ab'" >/dev/null
check "merge: one byte more is refused with 54000" 54000 \
	"$(sqlstate "SELECT nb_merge(a.m, b.m) FROM nbc_limits.m a, nbc_limits.m b
		WHERE a.name = 'a' AND b.name = 'b+1'")"
check "merge: one byte more is refused with 54000 (aggregate)" 54000 \
	"$(sqlstate "SELECT nb_merge(m) FROM nbc_limits.m WHERE name IN ('a', 'b+1')")"

echo "1..$n"
[ "$failed" -eq 0 ]
