#!/usr/bin/env bash
# Live models under concurrent writes, an immediate shutdown and a dump:
#
#   bash test/reliability/live.sh [--quick|--long]
#
# A throwaway cluster of its own (it stops its server with "pg_ctl stop -m
# immediate"), a table docs with three live models over it: token bags
# (label, tokens text[]), text tokenized by the default tokenizer (label,
# body) and weighted token bags (integer weights, so every order of merging
# gives the same bits).  pgbench clients insert, update labels and
# features, delete, roll back and run several statements in one
# transaction, while readers score rows through a view on nb_live and
# checkers, each in a REPEATABLE READ snapshot, record whether every live
# model equals nb_train over the table in that snapshot, byte for byte.
# Then: the run had no failed transaction, at least the wanted number of
# snapshots was sampled and none differed, the live models equal nb_train
# at the end and their pending and merged deltas stay bounded; the same load again,
# stopped by an immediate shutdown, restarted: still equal, and writes
# after it too; pg_dump -Fc and pg_restore into a new database: equal
# there, and kept equal by writes there.
# Then what no writer can change or break (issue 39), in another database
# with a writer who is not a superuser: labels of every type whose text form
# depends on a setting (timestamptz, date, float8, interval, money, bytea,
# ...) are refused at create; writers in different TimeZone, DateStyle,
# IntervalStyle and extra_float_digits keep the live models over every
# accepted label type (text, varchar, char, name, int2/4/8, oid, numeric,
# bool, uuid, enum) equal to nb_train of the label's text; an overload
# nb_train(integer, text[]) in the writer's own schema, first on its
# search_path, is never called (while an uncast call there picks it);
# nb_live_create refuses while nbc's schema grants CREATE to another role;
# rows of weight 1e308 in two statements (fold_after 1) never fail a write,
# nb_live overflows (22003) as nb_train over the table does, and equals it
# again once a row is deleted; nb_live in a query with a parallel plan
# merges and is exact; a live model over a TEMP table is TEMP and
# goes with its session; ATTACH PARTITION of the source, an inheritance
# child or parent, SET UNLOGGED are refused (55000), and with that guard
# disabled nb_live refuses; partitioned, partition, inheritance and
# unlogged sources are refused at create.
# --quick: 8 clients for 15 s, at least 10 samples; --long: 16 clients for
# 60 s, at least 50 samples (README "Live models" gives a run's numbers).
# The cluster's port: the first free one from NBC_REL_PORT_BASE (56080).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

rel_mode "$@"
if [ "$mode" = quick ]; then
	clients=8 secs=15 min_samples=10
else
	clients=16 secs=60 min_samples=50
fi
seed=20261128
db=nbc_rel_live
fold_after=32

work=$(mktemp -d /tmp/nbc-rel-live.XXXXXX)
trap 'rel_drop_cluster "$work"' EXIT
if ! rel_start_cluster "$work" "${NBC_REL_PORT_BASE:-56080}" >"$work/start.log" 2>&1; then
	not_ok "live: start a throwaway cluster" "$(cat "$work/start.log")"
	rel_finish
	exit 1
fi

# the pgbench scripts; :ids (the id range writers aim at) comes from -D
cat >"$work/insert.sql" <<'SQL'
\set k random(1, 1000000000)
\set n random(1, 3)
INSERT INTO docs (label, tokens, body, weight)
SELECT CASE WHEN (:k + i) % 11 = 0 THEN NULL ELSE (ARRAY['spam', 'ham', 'eggs', 'späm'])[1 + (:k + i) % 4] END,
	ARRAY(SELECT 'w' || (((:k::bigint + i) * 7919 + j * 104729) % 500) FROM generate_series(1, 1 + (:k + i) % 6) j),
	'Word ' || ((:k + i) % 97) || ' and word ' || ((:k + i) % 31),
	1 + (:k + i) % 3
FROM generate_series(1, :n) i;
SQL
cat >"$work/update.sql" <<'SQL'
\set id random(1, :ids)
\set k random(1, 1000000000)
UPDATE docs SET label = (ARRAY['spam', 'ham', 'eggs', NULL])[1 + :k % 4] WHERE id = :id;
SQL
cat >"$work/update_features.sql" <<'SQL'
\set id random(1, :ids)
\set k random(1, 1000000000)
UPDATE docs SET tokens = ARRAY['u' || (:k % 50), 'w' || (:k % 500)], body = 'updated ' || (:k % 13), weight = 1 + :k % 4
WHERE id BETWEEN :id AND :id + 2;
SQL
cat >"$work/delete.sql" <<'SQL'
\set id random(1, :ids)
DELETE FROM docs WHERE id BETWEEN :id AND :id + 1;
SQL
cat >"$work/rollback.sql" <<'SQL'
\set id random(1, :ids)
BEGIN;
INSERT INTO docs (label, tokens, body, weight) VALUES ('spam', '{rolled,back}', 'rolled back', 2);
DELETE FROM docs WHERE id = :id;
ROLLBACK;
SQL
cat >"$work/transaction.sql" <<'SQL'
\set id random(1, :ids)
\set k random(1, 1000000000)
BEGIN;
INSERT INTO docs (label, tokens, body, weight) VALUES ('ham', ARRAY['t' || (:k % 40)], 'in a transaction', 1);
UPDATE docs SET label = 'eggs' WHERE id = :id;
DELETE FROM docs WHERE id = :id + 7;
COMMIT;
SQL
cat >"$work/reader.sql" <<'SQL'
\set id random(1, :ids)
SELECT count(*) FILTER (WHERE predicted = label) FROM predicted WHERE id BETWEEN :id AND :id + 50;
SELECT nb_predict_proba((SELECT nb_live('text')), 'word ' || :id);
SQL
cat >"$work/checker.sql" <<'SQL'
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO samples (tokens, text, weighted, rows)
SELECT nbc_model_send(nb_live('tokens')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens) FROM docs)),
	nbc_model_send(nb_live('text')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, body) FROM docs)),
	nbc_model_send(nb_live('weighted')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens, weight::float8) FROM docs)),
	(SELECT count(*) FROM docs);
COMMIT;
SQL

ids=3000
pgbench_cmd=("$REL_BIN/pgbench" -n -c "$clients" -j 2 --random-seed="$seed" -D ids="$ids"
	-f "$work/insert.sql@10" -f "$work/update.sql@4" -f "$work/update_features.sql@3"
	-f "$work/delete.sql@4" -f "$work/rollback.sql@1" -f "$work/transaction.sql@2"
	-f "$work/reader.sql@3" -f "$work/checker.sql@1")

# equal DB WHAT: every live model equals nb_train over the table (one snapshot)
equal() {
	local got
	got=$(rel_psql -d "$1" <<'SQL'
SELECT (nbc_model_send(nb_live('tokens')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens) FROM docs)))
	AND (nbc_model_send(nb_live('text')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, body) FROM docs)))
	AND (nbc_model_send(nb_live('weighted')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens, weight::float8) FROM docs)))
	AND nb_live('tokens') IS NOT NULL;
SQL
	) 2>&1
	is "live: $2: the three live models equal nb_train over the table, byte for byte" "$got" t
}

# write DB: a few more statements of each kind
write() {
	"$REL_BIN/pgbench" -n -c 2 -t 20 --random-seed="$seed" -D ids="$ids" -f "$work/insert.sql" \
		-f "$work/update.sql" -f "$work/delete.sql" -f "$work/update_features.sql" "$1" >"$work/write.log" 2>&1 ||
		diag "$(cat "$work/write.log")"
}

rel_psql -c "CREATE DATABASE $db" >/dev/null &&
	rel_psql -d "$db" <<SQL >/dev/null
CREATE EXTENSION nbc;
CREATE TABLE docs (id bigserial PRIMARY KEY, label text, tokens text[], body text, weight int NOT NULL);
CREATE TABLE samples (at timestamptz NOT NULL DEFAULT clock_timestamp(), tokens boolean, text boolean,
	weighted boolean, rows bigint);
INSERT INTO docs (label, tokens, body, weight)
SELECT (ARRAY['spam', 'ham', 'eggs'])[1 + i % 3], ARRAY['w' || i % 500, 'w' || (i * 7) % 500],
	'Word ' || (i % 97), 1 + i % 3
FROM generate_series(1, $ids / 2) i;
SELECT nb_live_create('tokens', 'docs', 'label', 'tokens', options => '{"fold_after": $fold_after}');
SELECT nb_live_create('text', 'docs', 'label', 'body', options => '{"fold_after": $fold_after}');
SELECT nb_live_create('weighted', 'docs', 'label', 'tokens', 'weight', options => '{"fold_after": $fold_after}');
CREATE VIEW predicted AS
SELECT d.id, d.label, nb_predict((SELECT nb_live('tokens')), d.tokens) AS predicted FROM docs d;
SQL
[ $? -eq 0 ] || { not_ok "live: set up the database"; rel_finish; exit 1; }

# the load
"${pgbench_cmd[@]}" -T "$secs" "$db" >"$work/load.log" 2>&1
rc=$?
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/load.log")
done_x=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/load.log")
if [ $rc -eq 0 ] && [ "${failed:-0}" = 0 ] && [ "${done_x:-0}" -gt 0 ]; then
	ok "live: $clients clients for $secs s: $done_x transactions, none failed"
else
	not_ok "live: $clients clients for $secs s without a failed transaction (pgbench status $rc)" "$(tail -20 "$work/load.log")"
fi
IFS='|' read -r n bad rows < <(rel_psql -d "$db" -c \
	"SELECT count(*), count(*) FILTER (WHERE NOT (tokens AND text AND weighted)), max(rows) FROM samples")
if [ "${n:-0}" -ge "$min_samples" ] && [ "$bad" = 0 ]; then
	ok "live: $n REPEATABLE READ snapshots sampled during the load (up to $rows rows), in each every live model equal to nb_train, byte for byte"
else
	not_ok "live: at least $min_samples snapshots sampled, none with a live model different from nb_train" "$n samples, $bad differed"
fi
equal "$db" "after the load"
# the deltas past the last fold, and the merged ones (at most 16, pg_live.c
# fold_auto; a writer's delta that a fold could not see yet counts among
# them), of the live model with the most of each
read -r pending merged <<<"$(rel_psql -d "$db" -F ' ' -c "
WITH r AS (SELECT 'tokens' AS name, * FROM tokens UNION ALL SELECT 'text', * FROM \"text\"
	UNION ALL SELECT 'weighted', * FROM weighted)
SELECT max(p), max(m) FROM (
	SELECT count(*) FILTER (WHERE d.id > l.folded_through) AS p,
		count(*) FILTER (WHERE d.id > l.based_through AND d.id <= l.folded_through) AS m
	FROM r d JOIN r l ON l.name = d.name AND l.id = 0 WHERE d.id > 0 GROUP BY d.name) s")"
if [ "${pending:-999999}" -le $((fold_after + clients)) ] && [ "${merged:-999999}" -le $((16 + clients)) ]; then
	ok "live: deltas bounded by the automatic fold ($pending pending, bound $fold_after + $clients concurrent writers; $merged merged, bound 16 + $clients)"
else
	not_ok "live: deltas bounded by the automatic fold" "$pending pending, fold_after $fold_after; $merged merged"
fi
diag "$(grep -E '^(tps|latency average)' "$work/load.log" | tr '\n' ' ')"

# an immediate shutdown under the same load, a restart
"${pgbench_cmd[@]}" -T 60 "$db" >"$work/crash.log" 2>&1 &
load=$!
sleep 4
rows_before=$(rel_psql -d "$db" -c "SELECT count(*) FROM docs")
rel_pg_ctl stop-immediate
wait $load
if rel_pg_ctl start; then
	ok "live: restarted after an immediate shutdown under load"
	equal "$db" "after the immediate shutdown"
	write "$db"
	equal "$db" "after writes following the restart"
	diag "rows before the shutdown (one snapshot during the load): $rows_before; after: $(rel_psql -d "$db" -c 'SELECT count(*) FROM docs')"
else
	not_ok "live: restart after an immediate shutdown" "$(tail -20 "$REL_PGDATA/server.log")"
fi

# pg_dump and pg_restore
if "$REL_BIN/pg_dump" -Fc -f "$work/live.dump" "$db" 2>"$work/dump.log" &&
	rel_psql -c "CREATE DATABASE ${db}_restored" >/dev/null &&
	"$REL_BIN/pg_restore" -d "${db}_restored" "$work/live.dump" 2>>"$work/dump.log"; then
	ok "live: pg_dump -Fc and pg_restore"
	fingerprints="SELECT count(*) || ' ' || string_agg(name::text || ':' || md5(nbc_model_send(nb_live(name::text))), ',' ORDER BY name::text) FROM nb_lives"
	want=$(rel_psql -d "$db" -c "$fingerprints" 2>&1)
	if [[ $want == 3\ * ]]; then
		is "live: the restored live models are the dumped ones" "$(rel_psql -d "${db}_restored" -c "$fingerprints" 2>&1)" "$want"
	else
		not_ok "live: nb_lives lists the three live models" "$want"
	fi
	equal "${db}_restored" "restored"
	write "${db}_restored"
	equal "${db}_restored" "after writes to the restored database"
else
	not_ok "live: pg_dump -Fc and pg_restore" "$(cat "$work/dump.log")"
fi

# ---------------------------------------------------------------------------
# What no writer can change or break (issue 39 points 2, 3 and 6), in a
# database of its own, as the superuser (who owns the tables) and a writer
# who is not one.
hdb=nbc_rel_live_hostile
writer=nbc_rel_live_writer
# su / as_writer NAME WANT SQL... and their refused_ forms (rel_works, rel_refused in $hdb)
su() { PGUSER=postgres rel_works "$1" "$2" "$hdb" "${@:3}"; }
as_writer() { PGUSER=$writer rel_works "$1" "$2" "$hdb" "${@:3}"; }
su_refused() { PGUSER=postgres rel_refused "$1" "$2" "$hdb" "${@:3}"; }
writer_refused() { PGUSER=$writer rel_refused "$1" "$2" "$hdb" "${@:3}"; }

# the label columns of every type whose text form no setting changes, a live
# model over each (s_<column>), and columns of types whose text form depends
# on settings (r_...)
accepted="l_text l_varchar l_char l_name l_int2 l_int4 l_int8 l_oid l_numeric l_bool l_uuid l_enum"
label_rows="INSERT INTO labelled (tokens, l_text, l_varchar, l_char, l_name, l_int2, l_int4, l_int8, l_oid,
	l_numeric, l_bool, l_uuid, l_enum)
SELECT ARRAY['w' || i % 11, 'w' || i % 5], (ARRAY['spam', 'ham', 'eggs'])[1 + i % 3], 'v' || i % 4,
	(ARRAY['a', 'bb', 'ccc'])[1 + i % 3], 'n' || i % 3, i % 5 - 2, i % 7 * 1000, i % 3 * 10000000000,
	4000000000 + i % 3, (ARRAY[1.50, -0.25, 1e20, 'NaN', 3])[1 + i % 5], i % 2 = 0,
	md5('u' || i % 3)::uuid, (enum_range(NULL::mood))[1 + i % 3]
FROM generate_series"
# every live model over labelled equals nb_train of its column's text
exact_labels="SELECT count(*) FILTER (WHERE live_exact('labelled', c, 'tokens')) || '/' || count(*)
FROM unnest(string_to_array('$accepted', ' ')) c"
# settings that change how a timestamptz, date, interval, float, bytea or money prints
settings_a="SET TimeZone = 'Pacific/Chatham'; SET DateStyle = 'SQL, DMY'; SET IntervalStyle = 'sql_standard'; SET extra_float_digits = -15; SET bytea_output = 'escape'"
settings_b="SET TimeZone = 'America/St_Johns'; SET DateStyle = 'German'; SET IntervalStyle = 'iso_8601'; SET extra_float_digits = 3"
settings_c="SET TimeZone = 'Asia/Kathmandu'; SET DateStyle = 'Postgres, MDY'; SET extra_float_digits = 1"

if ! out=$(rel_psql -c "CREATE DATABASE $hdb" -c "CREATE ROLE $writer LOGIN" 2>&1 && rel_psql -d "$hdb" 2>&1 <<SQL
CREATE EXTENSION nbc;
-- the SQLSTATE of a statement, or ok
CREATE FUNCTION live_error(q text) RETURNS text LANGUAGE plpgsql AS \$\$
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END \$\$;
-- live model s_<label> over source equals nb_train over it of label's text, byte for byte
CREATE FUNCTION live_exact(source text, label text, features text) RETURNS boolean LANGUAGE plpgsql AS \$\$
DECLARE
	r boolean;
BEGIN
	EXECUTE format('SELECT nb_live(%L) IS NOT NULL AND nbc_model_send(nb_live(%L)) = nbc_model_send((SELECT nb_train(%I::text, %I) FROM %I))',
				   's_' || label, 's_' || label, label, features, source) INTO r;
	RETURN r;
END \$\$;
-- the plan of query q has a node of that name
CREATE FUNCTION plan_has(q text, node text) RETURNS boolean LANGUAGE plpgsql AS \$\$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line LIKE '%' || node || '%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END \$\$;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN stamp AS timestamptz;
CREATE TABLE labelled (id serial PRIMARY KEY, tokens text[], l_text text, l_varchar varchar(10), l_char char(3),
	l_name name, l_int2 int2, l_int4 int4, l_int8 int8, l_oid oid, l_numeric numeric, l_bool bool, l_uuid uuid,
	l_enum mood, r_timestamptz timestamptz, r_timestamp timestamp, r_date date, r_time time, r_timetz timetz,
	r_interval interval, r_float8 float8, r_float4 real, r_money money, r_bytea bytea, r_jsonb jsonb,
	r_inet inet, r_stamp stamp, r_array text[]);
$label_rows(1, 40) i;
GRANT SELECT, INSERT, UPDATE, DELETE ON labelled TO $writer;
GRANT USAGE ON SEQUENCE labelled_id_seq TO $writer;
CREATE SCHEMA w AUTHORIZATION $writer;
SELECT nb_live_create('s_' || c, 'labelled', c, 'tokens', options => '{"fold_after": 3}')
FROM unnest(string_to_array('$accepted', ' ')) c;
CREATE TABLE heavy (id serial PRIMARY KEY, label text, tokens text[], weight float8);
INSERT INTO heavy (label, tokens, weight)
SELECT (ARRAY['a', 'b'])[1 + i % 2], ARRAY['x' || i % 3], 1 + i % 3 FROM generate_series(1, 20) i;
GRANT SELECT, INSERT, UPDATE, DELETE ON heavy TO $writer;
GRANT USAGE ON SEQUENCE heavy_id_seq TO $writer;
SELECT nb_live_create('heavy_live', 'heavy', 'label', 'tokens', 'weight', '{"fold_after": 1}');
SQL
); then
	not_ok "live: set up $hdb" "$out"
	rel_finish
	exit 1
fi

# point 2: a label's text is the same in every writer's session
su "live: every label type whose text form depends on a setting is refused at create (42804)" \
	"r_timestamptz:42804 r_timestamp:42804 r_date:42804 r_time:42804 r_timetz:42804 r_interval:42804 r_float8:42804 r_float4:42804 r_money:42804 r_bytea:42804 r_jsonb:42804 r_inet:42804 r_stamp:42804 r_array:42804" \
	"SELECT string_agg(c || ':' || live_error(format('SELECT nb_live_create(%L, ''labelled'', %L, ''tokens'')', 'x_' || c, c)), ' ' ORDER BY o)
	FROM unnest(ARRAY['r_timestamptz', 'r_timestamp', 'r_date', 'r_time', 'r_timetz', 'r_interval', 'r_float8',
		'r_float4', 'r_money', 'r_bytea', 'r_jsonb', 'r_inet', 'r_stamp', 'r_array']) WITH ORDINALITY u(c, o)"
as_writer "live: a writer in one set of TimeZone, DateStyle, IntervalStyle, extra_float_digits inserts and updates" "" \
	"$settings_a" "${label_rows}(41, 70) i" \
	"UPDATE labelled SET l_numeric = 2.500, l_int4 = -7, l_enum = 'happy', l_char = 'z' WHERE id % 4 = 0"
as_writer "live: a writer in another set of them inserts, updates and deletes" "" \
	"$settings_b" "${label_rows}(71, 90) i" "UPDATE labelled SET l_numeric = 1e-3, l_text = 'fixed' WHERE id % 5 = 1" \
	"DELETE FROM labelled WHERE id % 7 = 3"
su "live: read in a third set of settings, the 12 live models (text, varchar, char, name, int2/4/8, oid, numeric, bool, uuid, enum labels) equal nb_train over the table, byte for byte" \
	"12/12" "$settings_c" "$exact_labels"

# point 2: an overload the writer controls is never called
as_writer "live: the writer's overload nb_train(integer, text[]) in its own schema wins an uncast call there" $'t\nt' \
	"CREATE TABLE w.called (who name, session_role name)" "GRANT USAGE ON SCHEMA w TO PUBLIC" \
	"GRANT INSERT ON w.called TO PUBLIC" \
	"CREATE FUNCTION w.trap(s public.nb_model, l integer, f text[]) RETURNS public.nb_model LANGUAGE plpgsql
	AS 'BEGIN INSERT INTO w.called VALUES (current_user, session_user); RETURN s; END'" \
	"CREATE AGGREGATE w.nb_train(integer, text[]) (sfunc = w.trap, stype = public.nb_model)" \
	"SET search_path = w, public" "SELECT nb_train(l_int4, tokens) IS NULL FROM labelled" "SELECT count(*) > 0 FROM w.called" \
	"TRUNCATE w.called"
as_writer "live: the writer writes with it first on its search_path" "" "SET search_path = w, public" \
	"${label_rows}(91, 100) i" "UPDATE labelled SET l_int4 = l_int4 + 1 WHERE id % 3 = 0" \
	"DELETE FROM labelled WHERE id % 11 = 2"
su "live: and the superuser too, with the writer's schema first" "" "SET search_path = w, public" \
	"${label_rows}(101, 104) i" "UPDATE labelled SET l_int4 = 5 WHERE id % 6 = 0"
su "live: the overload was never called, and the live models are exact" "0|12/12" \
	"SELECT (SELECT count(*) FROM w.called) || '|' || ($exact_labels)"
su_refused "live: nb_live_create refuses while nbc's schema grants CREATE to another role" 42501 \
	"GRANT CREATE ON SCHEMA public TO $writer" "SELECT nb_live_create('s_refused', 'labelled', 'l_text', 'tokens')"
su_refused "live: or to PUBLIC" 42501 "REVOKE CREATE ON SCHEMA public FROM $writer" \
	"GRANT CREATE ON SCHEMA public TO PUBLIC" "SELECT nb_live_create('s_refused', 'labelled', 'l_text', 'tokens')"
su "live: and creates once only the owner has CREATE there" "s_refused" "REVOKE CREATE ON SCHEMA public FROM PUBLIC" \
	"SELECT live_model FROM nb_live_create('s_refused', 'labelled', 'l_text', 'tokens')"

# point 3: sums that overflow float8 fail the readers as nb_train fails, never the writers
as_writer "live: two rows of weight 1e308 in two statements are written (fold_after 1)" "" \
	"INSERT INTO heavy (label, tokens, weight) VALUES ('a', '{x0}', 1e308)" \
	"INSERT INTO heavy (label, tokens, weight) VALUES ('a', '{x0}', 1e308)"
su_refused "live: nb_train over the table overflows" 22003 "SELECT nb_train(label, tokens, weight) FROM heavy"
su_refused "live: nb_live overflows as nb_train does" 22003 "SELECT nb_live('heavy_live')"
as_writer "live: writes keep succeeding while the sum overflows" "" \
	"INSERT INTO heavy (label, tokens, weight) VALUES ('b', '{x1}', 2)" "UPDATE heavy SET label = 'b' WHERE id = 3" \
	"DELETE FROM heavy WHERE id = 4"
heavy_exact="SELECT nb_live('heavy_live') IS NOT NULL AND nbc_model_send(nb_live('heavy_live')) = nbc_model_send((SELECT nb_train(label, tokens, weight) FROM heavy))"
as_writer "live: the writer deletes a 1e308 row" "" "DELETE FROM heavy WHERE id = (SELECT max(id) FROM heavy WHERE weight = 1e308)"
su "live: then nb_live equals nb_train again, byte for byte" "t" "$heavy_exact"
as_writer "live: the writer writes more" "" "INSERT INTO heavy (label, tokens, weight) VALUES ('a', '{x2}', 3), ('b', '{x0}', 1)" \
	"UPDATE heavy SET weight = 2 WHERE id = 5"
su "live: still equal" "t" "$heavy_exact"

# nb_live in a query with a parallel plan (in parallel mode, in the leader
# too), after a write so that it merges
parallel="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2"
par_query="SELECT nbc_model_send(nb_live('par_live')) = nbc_model_send((SELECT nb_train(label, tokens) FROM par))"
su "live: nb_live in a query with a parallel plan (Gather) merges, exact" $'par_live\nt\nt' \
	"CREATE TABLE par AS SELECT (ARRAY['a', 'b'])[1 + i % 2] AS label, ARRAY['t' || i % 50] AS tokens FROM generate_series(1, 20000) i" \
	"ANALYZE par" "SELECT live_model FROM nb_live_create('par_live', 'par', 'label', 'tokens')" \
	"GRANT SELECT, INSERT, DELETE ON par TO $writer" "GRANT SELECT ON par_live TO $writer" "$parallel" \
	"INSERT INTO par VALUES ('a', '{new}')" "SELECT plan_has(\$q\$$par_query\$q\$, 'Gather')" "$par_query"
par_view="SELECT count(*) FILTER (WHERE nb_predict((SELECT nb_live('par_live')), tokens) = label) = count(*) FROM par"
as_writer "live: and so does a query scoring the table through (SELECT nb_live(...)), with a parallel plan" $'t\nt\nt' \
	"$parallel" "INSERT INTO par VALUES ('b', '{t1}')" "DELETE FROM par WHERE tokens = '{new}'" \
	"SELECT plan_has(\$q\$$par_view\$q\$, 'Gather')" "$par_view" "$par_query"

# point 6: a TEMP source's live model is TEMP and goes with its session
temp_pid=$(PGUSER=$writer rel_psql_c "$hdb" "CREATE TEMP TABLE tdocs (label text, tokens text[])" \
	"INSERT INTO tdocs VALUES ('a', '{x,y}'), ('b', '{z}')" \
	"SELECT live_model IS NULL FROM nb_live_create('tlive', 'tdocs', 'label', 'tokens')" \
	"INSERT INTO tdocs VALUES ('a', '{y}')" "DELETE FROM tdocs WHERE label = 'b'" \
	"SELECT relpersistence::text || '|' || (nbc_model_send(nb_live('tlive')) = nbc_model_send((SELECT nb_train(label, tokens) FROM tdocs))) || '|' || pg_backend_pid() FROM pg_class WHERE oid = 'tlive'::regclass" 2>&1)
if [[ $temp_pid =~ ^f$'\n't\|true\|([0-9]+)$ ]]; then
	ok "live: a live model over a TEMP table is a TEMP table, exact in its session"
	temp_pid=${BASH_REMATCH[1]}
	# the backend drops its temporary tables before it leaves pg_stat_activity
	for ((i = 0; i < 300; i++)); do
		[ "$(rel_psql -d "$hdb" -c "SELECT count(*) FROM pg_stat_activity WHERE pid = $temp_pid")" = 0 ] && break
		sleep 0.1
	done
	su "live: it is gone with its session" "0" "SELECT count(*) FROM pg_class WHERE relname IN ('tlive', 'tdocs')"
	writer_refused "live: nb_live does not find it in a later session" 42704 "SELECT nb_live('tlive')"
else
	not_ok "live: a live model over a TEMP table is a TEMP table, exact in its session" "$temp_pid"
fi

# point 6: a source may not become a partition, gain an inheritance child or
# parent or turn unlogged (refused instead of drifting); such tables are
# refused at create
su "live: set up a partition, an inheritance child and parent" $'part_live\nchild_live\nparent_live' \
	"CREATE TABLE part_src (id int, label text, tokens text[])" "CREATE TABLE child_src (LIKE part_src)" \
	"CREATE TABLE parent_src (LIKE part_src)" \
	"INSERT INTO part_src VALUES (1, 'a', '{x}'), (2, 'b', '{y}')" \
	"INSERT INTO child_src SELECT * FROM part_src" "INSERT INTO parent_src SELECT * FROM part_src" \
	"SELECT live_model FROM nb_live_create('part_live', 'part_src', 'label', 'tokens')" \
	"SELECT live_model FROM nb_live_create('child_live', 'child_src', 'label', 'tokens')" \
	"SELECT live_model FROM nb_live_create('parent_live', 'parent_src', 'label', 'tokens')" \
	"CREATE TABLE parted (id int, label text, tokens text[]) PARTITION BY RANGE (id)"
su "live: before, the three are exact" "true|true|true" \
	"SELECT (nb_live('part_live') = (SELECT nb_train(label, tokens) FROM part_src)) || '|' ||
	(nb_live('child_live') = (SELECT nb_train(label, tokens) FROM child_src)) || '|' ||
	(nb_live('parent_live') = (SELECT nb_train(label, tokens) FROM parent_src))"
su_refused "live: ATTACH PARTITION of its source is refused" 55000 \
	"ALTER TABLE parted ATTACH PARTITION part_src FOR VALUES FROM (0) TO (1000)"
su_refused "live: an inheritance child of its source is refused" 55000 \
	"CREATE TABLE child_child () INHERITS (child_src)"
su_refused "live: its source inheriting is refused" 55000 \
	"CREATE TABLE parent_parent (LIKE parent_src)" "ALTER TABLE parent_src INHERIT parent_parent"
su_refused "live: its source turning unlogged is refused" 55000 "ALTER TABLE part_src SET UNLOGGED"
su "live: after, the three are still exact" "true|true|true" \
	"INSERT INTO part_src VALUES (3, 'a', '{z}')" "INSERT INTO child_src VALUES (3, 'a', '{z}')" \
	"SELECT (nb_live('part_live') = (SELECT nb_train(label, tokens) FROM part_src)) || '|' ||
	(nb_live('child_live') = (SELECT nb_train(label, tokens) FROM child_src)) || '|' ||
	(nb_live('parent_live') = (SELECT nb_train(label, tokens) FROM parent_src))"
su_refused "live: with the guard disabled, a source with an inheritance child makes nb_live refuse" 55000 \
	"BEGIN" "ALTER EVENT TRIGGER nbc_live_guard DISABLE" "CREATE TABLE child_child () INHERITS (child_src)" \
	"SELECT nb_live('child_live')"
su "live: a partitioned table, a partition, a table with inheritance, an unlogged table are refused at create" \
	"0A000|0A000|0A000|0A000" \
	"CREATE UNLOGGED TABLE unlogged_src (LIKE part_src)" \
	"CREATE TABLE part_b PARTITION OF parted FOR VALUES FROM (1000) TO (2000)" \
	"CREATE TABLE inh_parent (LIKE part_src)" "CREATE TABLE inh_child () INHERITS (inh_parent)" \
	"SELECT live_error('SELECT nb_live_create(''x1'', ''parted'', ''label'', ''tokens'')') || '|' ||
	live_error('SELECT nb_live_create(''x2'', ''part_b'', ''label'', ''tokens'')') || '|' ||
	live_error('SELECT nb_live_create(''x3'', ''inh_child'', ''label'', ''tokens'')') || '|' ||
	live_error('SELECT nb_live_create(''x4'', ''unlogged_src'', ''label'', ''tokens'')')"

rel_finish
