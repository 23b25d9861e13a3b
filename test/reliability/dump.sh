#!/usr/bin/env bash
# Dump and restore of stored models:
#
#   bash test/reliability/dump.sh [--quick|--long]
#
# Builds a database of models of every feature type (fixture.sql,
# fixture_mixed.sql: token bags, weighted, tsvector, merged, jsonb, float8[],
# an array of models, a materialized view, an index on a prediction) and
# moves it into fresh databases four ways: pg_dump -Fc + pg_restore, plain
# pg_dump + psql, pg_dump --column-inserts (every model as a text literal),
# and binary COPY out and in.  Each copy must reproduce fingerprint.sql and
# fingerprint_restored.sql exactly: model bytes, text and jsonb forms,
# summaries, classes, mutual information and predictions.  --long: a bigger
# model (more rows, a larger vocabulary).
#
# Runs against the libpq environment (PGHOST, PGPORT, ...); creates the
# databases nbc_rel_dump_* and drops them when everything passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

rel_mode "$@"
if [ "$mode" = quick ]; then
	scale=3000 vocab=2000
else
	scale=200000 vocab=300000
fi

work=$(mktemp -d /tmp/nbc-rel-dump.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=nbc_rel_dump_src
targets=(nbc_rel_dump_custom nbc_rel_dump_plain nbc_rel_dump_inserts nbc_rel_dump_copy)

fingerprint() {
	rel_psql -d "$1" -f "$here/fingerprint.sql" -f "$here/fingerprint_restored.sql"
}

# same NAME DB: DB's fingerprint equals the source's
same() {
	local got
	if ! got=$(fingerprint "$2" 2>&1); then
		not_ok "$1" "$got"
	elif [ "$got" = "$want" ]; then
		ok "$1"
	else
		not_ok "$1" "$(diff <(echo "$want") <(echo "$got") | head -n 20)"
	fi
}

for d in "$src" "${targets[@]}"; do
	"$REL_BIN/dropdb" --if-exists "$d" 2>/dev/null
done
if ! out=$("$REL_BIN/createdb" -T template0 "$src" 2>&1 && rel_psql -d "$src" -v scale=$scale -v vocab=$vocab \
	-c 'CREATE EXTENSION nbc' -f "$here/fixture.sql" -f "$here/fixture_mixed.sql" 2>&1); then
	not_ok "dump: build the source database" "$out"
	rel_finish
	exit
fi
# the source's own fingerprint: a line per model and aspect, no error
if ! want=$(fingerprint "$src" 2>&1) || [ "$(grep -c '^predict ' <<<"$want")" -ne 8 ]; then
	not_ok "dump: fingerprint the source database" "$want"
	rel_finish
	exit
fi
size=$(rel_psql -d "$src" -c "SELECT pg_size_pretty(sum(length(nbc_model_send(m)))) FROM rel_models")
diag "dump: $scale rows, $(grep -c '^model ' <<<"$want") models ($size), from $src"

# pg_dump -Fc, pg_restore into a fresh database
"$REL_BIN/createdb" -T template0 nbc_rel_dump_custom
if out=$("$REL_BIN/pg_dump" -Fc -f "$work/src.dump" "$src" 2>&1 &&
	"$REL_BIN/pg_restore" --exit-on-error -d nbc_rel_dump_custom "$work/src.dump" 2>&1); then
	same "dump: pg_dump -Fc and pg_restore: models, predictions, arrays, view and index identical" nbc_rel_dump_custom
else
	not_ok "dump: pg_dump -Fc and pg_restore" "$out"
fi

# plain pg_dump into psql
"$REL_BIN/createdb" -T template0 nbc_rel_dump_plain
if out=$("$REL_BIN/pg_dump" -f "$work/src.sql" "$src" 2>&1 &&
	rel_psql -1 -d nbc_rel_dump_plain -f "$work/src.sql" 2>&1 >/dev/null); then
	same "dump: plain pg_dump and psql: models, predictions, arrays, view and index identical" nbc_rel_dump_plain
else
	not_ok "dump: plain pg_dump and psql" "$out"
fi

# every model as a text literal in an INSERT
"$REL_BIN/createdb" -T template0 nbc_rel_dump_inserts
if out=$("$REL_BIN/pg_dump" --column-inserts -f "$work/inserts.sql" "$src" 2>&1 &&
	rel_psql -1 -d nbc_rel_dump_inserts -f "$work/inserts.sql" 2>&1 >/dev/null); then
	same "dump: pg_dump --column-inserts: models, predictions, arrays, view and index identical" nbc_rel_dump_inserts
else
	not_ok "dump: pg_dump --column-inserts" "$out"
fi

# binary COPY of every table into the same schema (nbc_model_send/recv)
"$REL_BIN/createdb" -T template0 nbc_rel_dump_copy
copy_tables() {
	local t
	"$REL_BIN/pg_dump" --schema-only "$src" | rel_psql -d nbc_rel_dump_copy >/dev/null || return 1
	for t in rel_docs rel_models rel_model_arrays; do
		rel_psql -d "$src" -c "\\copy $t TO '$work/$t.bin' WITH (FORMAT binary)" || return 1
		rel_psql -d nbc_rel_dump_copy -c "\\copy $t FROM '$work/$t.bin' WITH (FORMAT binary)" || return 1
	done
	rel_psql -d nbc_rel_dump_copy -c 'REFRESH MATERIALIZED VIEW rel_per_label'
}
if out=$(copy_tables 2>&1); then
	same "dump: binary COPY out and in: models, predictions, arrays, view and index identical" nbc_rel_dump_copy
else
	not_ok "dump: binary COPY out and in" "$out"
fi

if [ "$REL_BAD" -eq 0 ]; then
	for d in "$src" "${targets[@]}"; do
		"$REL_BIN/dropdb" --if-exists "$d"
	done
fi
rel_finish
