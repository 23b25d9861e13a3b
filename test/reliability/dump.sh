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
# summaries, classes, mutual information and predictions.  The source also
# has two live models (one weighted) with folded and pending deltas: in each
# copy they must be the source's, equal nb_train over their table byte for
# byte, and stay equal through writes there (the binary COPY copies their
# tables (as text) and the source's rows with triggers off, and moves the
# identity past the copied deltas, as pg_dump's data does).  --long: a bigger model
# (more rows, a larger vocabulary).
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

# live models over rel_live_docs (a part of rel_docs; its weights are
# multiples of 0.25, summed exactly in any order): statements of each kind
# after their creation leave folded and pending deltas
live_writes="DO \$\$ BEGIN FOR i IN 1..20 LOOP
	INSERT INTO rel_live_docs SELECT id + 1000000 * i, label, tokens || ARRAY['n' || i], weight FROM rel_docs WHERE id % 97 = i;
	UPDATE rel_live_docs SET label = 'ham', weight = weight + 0.5 WHERE id % 89 = i;
	DELETE FROM rel_live_docs WHERE id % 83 = i;
END LOOP; END \$\$"
live_bytes="SELECT count(*) || ' ' || string_agg(name::text || ':' || md5(nbc_model_send(nb_live(name::text))), ' ' ORDER BY name::text) FROM nb_lives"
live_exact="SELECT nbc_model_send(nb_live('rel_live_tokens')) = nbc_model_send((SELECT nb_train(label, tokens) FROM rel_live_docs))
	AND nbc_model_send(nb_live('rel_live_weighted')) = nbc_model_send((SELECT nb_train(label, tokens, weight) FROM rel_live_docs))"
if ! out=$(rel_psql -d "$src" -c "CREATE TABLE rel_live_docs AS SELECT * FROM rel_docs WHERE id % 3 = 0" \
	-c "SELECT live_model FROM nb_live_create('rel_live_tokens', 'rel_live_docs', 'label', 'tokens', options => '{\"fold_after\": 8}')" \
	-c "SELECT live_model FROM nb_live_create('rel_live_weighted', 'rel_live_docs', 'label', 'tokens', 'weight', '{\"fold_after\": 8}')" \
	-c "$live_writes" -c "$live_exact" 2>&1) || [ "$out" != $'rel_live_tokens\nrel_live_weighted\nt' ]; then
	not_ok "dump: live models in the source database" "$out"
	rel_finish
	exit
fi
live_want=$(rel_psql -d "$src" -c "$live_bytes" 2>&1)

# same_live NAME DB: DB's live models are the source's, exact, and stay exact through writes
same_live() {
	rel_works "$1: live models the source's" "$live_want" "$2" "$live_bytes"
	rel_works "$1: live models equal nb_train over their table, and after writes" $'t\nt' "$2" "$live_exact" \
		"${live_writes//1000000/2000000}" "$live_exact"
}
diag "dump: $scale rows, $(grep -c '^model ' <<<"$want") models ($size), from $src"

# pg_dump -Fc, pg_restore into a fresh database
"$REL_BIN/createdb" -T template0 nbc_rel_dump_custom
if out=$("$REL_BIN/pg_dump" -Fc -f "$work/src.dump" "$src" 2>&1 &&
	"$REL_BIN/pg_restore" --exit-on-error -d nbc_rel_dump_custom "$work/src.dump" 2>&1); then
	same "dump: pg_dump -Fc and pg_restore: models, predictions, arrays, view and index identical" nbc_rel_dump_custom
	same_live "dump: pg_dump -Fc and pg_restore" nbc_rel_dump_custom
else
	not_ok "dump: pg_dump -Fc and pg_restore" "$out"
fi

# plain pg_dump into psql
"$REL_BIN/createdb" -T template0 nbc_rel_dump_plain
if out=$("$REL_BIN/pg_dump" -f "$work/src.sql" "$src" 2>&1 &&
	rel_psql -1 -d nbc_rel_dump_plain -f "$work/src.sql" 2>&1 >/dev/null); then
	same "dump: plain pg_dump and psql: models, predictions, arrays, view and index identical" nbc_rel_dump_plain
	same_live "dump: plain pg_dump and psql" nbc_rel_dump_plain
else
	not_ok "dump: plain pg_dump and psql" "$out"
fi

# every model as a text literal in an INSERT
"$REL_BIN/createdb" -T template0 nbc_rel_dump_inserts
if out=$("$REL_BIN/pg_dump" --column-inserts -f "$work/inserts.sql" "$src" 2>&1 &&
	rel_psql -1 -d nbc_rel_dump_inserts -f "$work/inserts.sql" 2>&1 >/dev/null); then
	same "dump: pg_dump --column-inserts: models, predictions, arrays, view and index identical" nbc_rel_dump_inserts
	same_live "dump: pg_dump --column-inserts" nbc_rel_dump_inserts
else
	not_ok "dump: pg_dump --column-inserts" "$out"
fi

# binary COPY of every table into the same schema (nbc_model_send/recv)
"$REL_BIN/createdb" -T template0 nbc_rel_dump_copy
copy_tables() {
	local t
	"$REL_BIN/pg_dump" --schema-only "$src" | rel_psql -d nbc_rel_dump_copy >/dev/null || return 1
	# the live models' tables as text: their base row names its source by a
	# regclass, an OID in binary (another table's in another database)
	for t in rel_docs:binary rel_models:binary rel_model_arrays:binary rel_live_docs:binary \
		rel_live_tokens:text rel_live_weighted:text; do
		rel_psql -d "$src" -c "\\copy ${t%:*} TO '$work/${t%:*}.copy' WITH (FORMAT ${t#*:})" || return 1
		rel_psql -d nbc_rel_dump_copy -c "SET session_replication_role = replica" \
			-c "\\copy ${t%:*} FROM '$work/${t%:*}.copy' WITH (FORMAT ${t#*:})" || return 1
	done
	rel_psql -d nbc_rel_dump_copy -c "SELECT setval(pg_get_serial_sequence('rel_live_tokens', 'id'), max(id)) FROM rel_live_tokens" \
		-c "SELECT setval(pg_get_serial_sequence('rel_live_weighted', 'id'), max(id)) FROM rel_live_weighted" >/dev/null || return 1
	rel_psql -d nbc_rel_dump_copy -c 'REFRESH MATERIALIZED VIEW rel_per_label'
}
if out=$(copy_tables 2>&1); then
	same "dump: binary COPY out and in: models, predictions, arrays, view and index identical" nbc_rel_dump_copy
	same_live "dump: binary COPY out and in" nbc_rel_dump_copy
else
	not_ok "dump: binary COPY out and in" "$out"
fi

if [ "$REL_BAD" -eq 0 ]; then
	for d in "$src" "${targets[@]}"; do
		"$REL_BIN/dropdb" --if-exists "$d"
	done
fi
rel_finish
