#!/usr/bin/env bash
# nbc for a database owner who is not a superuser (nbc.control: trusted):
#
#   bash test/reliability/nonsuper.sh [--quick|--long]
#
# Creates the roles nbc_rel_owner (owns the database nbc_rel_nonsuper) and
# nbc_rel_user (may only connect), with a random password each, and checks
#   can:    the owner installs nbc, updates it from the oldest released
#           version (0.1.0, whose full script test/fixtures holds and this
#           script installs first: rel_upgrade_root), trains every feature
#           type, merges, scores, inspects, casts, copies models in binary
#           and sets nbc.prepared_model_cache;
#           the results are the bytes a superuser gets; the plain user scores
#   cannot: change a setting of the server (ALTER SYSTEM), load the library
#           or bind its C symbols (LOAD, LANGUAGE c), replace, drop, or change
#           the owner of the extension's objects (all owned by the bootstrap
#           superuser, not by the installer); the plain user cannot install
#           or drop nbc; nobody but a superuser can set the ceiling
#           nbc.prepared_model_cache_limit (when the build has it; otherwise
#           reported as skipped).
# Live models (issue 39), with a second plain user nbc_rel_user2:
#   rls:    nb_live_create refuses a source with row-level security; once it
#           is enabled after creation, nb_live refuses a role to whom
#           row_security_active(source) applies (the owner too under FORCE),
#           while tenants' writes go on and the owner's model stays exact
#   fold:   a reader with SELECT on the live model's table reads it but
#           cannot fold it, lock its base row, delete its deltas or call
#           nbc_live_train; a role without SELECT cannot read it by any path
#           (nb_live, SELECT, nbc_live_train) nor see it in nb_lives or
#           nbc_lives(); a fold with nothing pending leaves the base row's
#           ctid and xmin unchanged; a reader holding the table in an open
#           transaction does not stop the owner's writes and fold
#   names:  each user makes a live model of the same name in its own
#           schema, reads its own, cannot read, drop or name one in the
#           other's schema
#   dumps:  the owner pg_dumps the database with nbc and no live model; in a
#           database the owner created (CREATEDB, not a superuser), three
#           live models (one in another schema, one with a tokenizer, one
#           weighted, an integer label): the owner's pg_dump -Fc and a
#           superuser's, each restored by the owner into a new database with
#           pg_restore --exit-on-error, give the same live models, exact,
#           and exact after writes by the owner and by the user whose grants
#           came with them.
# Every refusal is checked by its SQLSTATE.  Runs against the libpq
# environment as a superuser, which must let the three roles log in with a
# password (or trust); drops the databases and roles at the end.
# --long is the same as --quick.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"

for a in "$@"; do
	case $a in
	--quick | --long) ;;
	*) echo "usage: $0 [--quick|--long]" >&2; exit 2 ;;
	esac
done

db=nbc_rel_nonsuper
ldb=nbc_rel_nonsuper_live
owner=nbc_rel_owner
user=nbc_rel_user
user2=nbc_rel_user2
pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

cleanup() {
	rel_psql -c "DROP DATABASE IF EXISTS $db" -c "DROP DATABASE IF EXISTS $ldb" \
		-c "DROP DATABASE IF EXISTS ${ldb}_by_owner" -c "DROP DATABASE IF EXISTS ${ldb}_by_superuser" \
		-c "DROP ROLE IF EXISTS $owner" -c "DROP ROLE IF EXISTS $user" -c "DROP ROLE IF EXISTS $user2" 2>/dev/null
}
cleanup
work=$(mktemp -d /tmp/nbc-rel-nonsuper.XXXXXX)
if ! out=$(rel_psql -c "CREATE ROLE $owner LOGIN CREATEDB PASSWORD '$pw'" -c "CREATE ROLE $user LOGIN PASSWORD '$pw'" \
	-c "CREATE ROLE $user2 LOGIN PASSWORD '$pw'" -c "CREATE DATABASE $db OWNER $owner TEMPLATE template0" 2>&1); then
	not_ok "nonsuper: create the roles and the database" "$out"
	rel_finish
	exit
fi
trap 'cleanup; rm -rf "$work"' EXIT

# as ROLE PSQL-ARGS...: psql in $db as ROLE
as() {
	local role=$1
	shift
	PGUSER=$role PGPASSWORD=$pw rel_psql -d "$db" "$@"
}

# works NAME ROLE WANT SQL...: the statements succeed as ROLE in $db and print WANT
works() {
	PGUSER=$2 PGPASSWORD=$pw rel_works "$1" "$3" "$db" "${@:4}"
}

# refused NAME ROLE SQLSTATE SQL [FIRST]: SQL fails as ROLE in $db with
# SQLSTATE, in a session that has run FIRST (by default, it loads nbc so its
# settings are defined)
load_sql="SELECT nb_info(nb_train('a', ARRAY['x'])) IS NOT NULL"
refused() {
	PGUSER=$2 PGPASSWORD=$pw rel_refused "$1" "$3" "$db" "${5:-$load_sql}" "$4"
}

# refused_after NAME ROLE SQLSTATE SQL...: the statements run as ROLE in $db
# up to the last one, which fails with SQLSTATE
refused_after() {
	PGUSER=$2 PGPASSWORD=$pw rel_refused "$1" "$3" "$db" "${@:4}"
}

if ! out=$(as $owner -c 'SELECT 1' 2>&1); then
	not_ok "nonsuper: $owner logs in with its password" "$out" \
		"The server's pg_hba.conf must allow password (or trust) logins for new roles."
	rel_finish
	exit
fi

refused "nonsuper: a user without CREATE on the database cannot install nbc" $user 42501 \
	"CREATE EXTENSION nbc" "SELECT 1"

# install: trusted, so the owner may; the objects belong to the bootstrap superuser
works "nonsuper: the database owner, not a superuser, runs CREATE EXTENSION nbc" $owner "f" \
	"CREATE EXTENSION nbc" "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
works "nonsuper: the installer owns the extension, not its objects" $owner "$owner|0" "
SELECT e.extowner::regrole, count(*) FILTER (WHERE coalesce(p.proowner, t.typowner) = e.extowner)
FROM pg_extension e
	JOIN pg_depend d ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid AND d.deptype = 'e'
	LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
	LEFT JOIN pg_type t ON d.classid = 'pg_type'::regclass AND t.oid = d.objid
WHERE e.extname = 'nbc' GROUP BY e.extowner"

# the update path, as the owner
rel_versions "$root"
if ! out=$(rel_upgrade_root "$root" 2>&1); then
	not_ok "nonsuper: install 0.1.0's full script, the root of the update chain" "$out"
fi
if [ "${versions[0]}" != "$current" ]; then
	works "nonsuper: the owner installs ${versions[0]} and updates it to $current" $owner "$current" \
		"DROP EXTENSION nbc" "CREATE EXTENSION nbc VERSION '${versions[0]}'" "ALTER EXTENSION nbc UPDATE" \
		"SELECT extversion FROM pg_extension WHERE extname = 'nbc'"
else
	diag "SKIP nonsuper: update path: $current is the only version"
fi

# pg_dump -Fc as ROLE of DB into FILE
dump_as() {
	PGUSER=$1 PGPASSWORD=$pw "$REL_BIN/pg_dump" -Fc -f "$3" "$2" 2>&1
}
# restore_as_owner FILE NEW: the owner creates NEW and pg_restores FILE into it, stopping at any error
restore_as_owner() {
	PGUSER=$owner PGPASSWORD=$pw rel_psql -d "$db" -c "CREATE DATABASE $2" 2>&1 &&
		PGUSER=$owner PGPASSWORD=$pw "$REL_BIN/pg_restore" --exit-on-error -d "$2" "$1" 2>&1
}
if out=$(dump_as $owner "$db" "$work/empty.dump") && [ -z "$out" ]; then
	ok "nonsuper: the owner dumps the database with nbc installed and no live model (pg_dump -Fc)"
else
	not_ok "nonsuper: the owner dumps the database with nbc installed and no live model (pg_dump -Fc)" "$out"
fi

# everything a user does with models: class a has x, class b has z, so x is a
# and z is b whatever the smoothing; the bytes must be a superuser's
train_sql="CREATE TABLE docs AS SELECT * FROM (VALUES
	(1, 'a', ARRAY['x', 'x', 'y'], '{\"c\": \"red\", \"s\": 1.5, \"ok\": true}'::jsonb, ARRAY[1.0, 2.0]::float8[]),
	(2, 'a', ARRAY['x', 'w'], '{\"c\": \"red\", \"s\": 1.0, \"ok\": true}', ARRAY[1.5, 2.5]),
	(3, 'b', ARRAY['z', 'y'], '{\"c\": \"blue\", \"s\": 9.0, \"ok\": false}', ARRAY[8.0, 9.0]),
	(4, 'b', ARRAY['z'], '{\"c\": \"blue\", \"s\": 8.0, \"ok\": false}', ARRAY[9.0, 7.5])) v(id, label, toks, f, vec)"
models_sql="CREATE TABLE models AS
	SELECT 'tokens' AS name, nb_train(label, toks ORDER BY id) AS m FROM docs
	UNION ALL SELECT 'tsvector', nb_train(label, array_to_tsvector(toks) ORDER BY id) FROM docs
	UNION ALL SELECT 'jsonb', nb_train(label, f ORDER BY id) FROM docs
	UNION ALL SELECT 'float8', nb_train(label, vec ORDER BY id) FROM docs
	UNION ALL SELECT 'merged', nb_merge(nb_train(label, toks) FILTER (WHERE id <= 2), nb_train(label, toks) FILTER (WHERE id > 2)) FROM docs
	UNION ALL SELECT 'merge_agg', nb_merge(m ORDER BY id) FROM (SELECT id, nb_train(label, toks) AS m FROM docs GROUP BY id) s"
bytes_sql="SELECT string_agg(name || ':' || md5(nbc_model_send(m)), ' ' ORDER BY name) FROM models"
works "nonsuper: the owner trains every feature type and merges" $owner "6" "$train_sql" "$models_sql" \
	"SELECT count(m) FROM models"
super_bytes=$(rel_psql -d "$db" -c "CREATE TEMP TABLE docs AS SELECT * FROM public.docs" \
	-c "${models_sql/CREATE TABLE models/CREATE TEMP TABLE models}" -c "$bytes_sql" 2>&1)
works "nonsuper: the owner's models are the bytes a superuser trains" $owner "$super_bytes" "$bytes_sql"
works "nonsuper: the owner scores, inspects and casts" $owner "a|b|a|b|a|b|t|t|4|t|t" "
SELECT nb_predict(t.m, ARRAY['x']), nb_predict(t.m, ARRAY['z']),
	nb_predict(j.m, '{\"c\": \"red\", \"s\": 1.2, \"ok\": true}'::jsonb), nb_predict(v.m, ARRAY[8.5, 8.0]),
	nb_predict(s.m, array_to_tsvector(ARRAY['x'])), nb_predict(g.m, ARRAY['z']),
	(nb_predict_proba(t.m, ARRAY['x']) ->> 'a')::float8 > 0.5,
	(nb_predict_log_proba(t.m, ARRAY['z']) ->> 'b')::float8 > ln(0.5),
	(nb_info(t.m) ->> 'documents')::int,
	(SELECT count(*) = 2 FROM nb_classes(t.m)) AND (SELECT count(*) > 0 FROM nb_mutual_info(t.m)),
	t.m::text::nb_model::text = t.m::text AND t.m::jsonb ? 'classes'
FROM models t, models j, models v, models s, models g
WHERE t.name = 'tokens' AND j.name = 'jsonb' AND v.name = 'float8' AND s.name = 'tsvector' AND g.name = 'merge_agg'"
copy_file=$(mktemp /tmp/nbc-rel-nonsuper.XXXXXX)
works "nonsuper: the owner copies models out and in, in binary" $owner "6" \
	"\\copy models TO '$copy_file' WITH (FORMAT binary)" \
	"CREATE TABLE models2 (LIKE models)" \
	"\\copy models2 FROM '$copy_file' WITH (FORMAT binary)" \
	"SELECT count(*) FROM models JOIN models2 USING (name) WHERE nbc_model_send(models.m) = nbc_model_send(models2.m)"
rm -f "$copy_file"
works "nonsuper: the owner sets nbc.prepared_model_cache and scores with it" $owner "a" \
	"SET nbc.prepared_model_cache = '2TB'" "SET nbc.prepared_model_cache = '1MB'" \
	"SELECT nb_predict(m, ARRAY['x']) FROM models WHERE name = 'tokens'"
works "nonsuper: a user who may only connect scores with a model" $user "b" \
	"SELECT nb_predict(nb_train(label, toks), ARRAY['z']) FROM (VALUES ('a', ARRAY['x']), ('b', ARRAY['z'])) v(label, toks)"

# what they cannot do
refused "nonsuper: the owner cannot ALTER SYSTEM" $owner 42501 "ALTER SYSTEM SET nbc.prepared_model_cache = '1GB'"
refused "nonsuper: the owner cannot LOAD the library" $owner 42501 "LOAD 'nbc'"
refused "nonsuper: the owner cannot bind nbc's C functions" $owner 42501 \
	"CREATE FUNCTION rel_in(cstring) RETURNS nb_model AS '\$libdir/nbc', 'nb_model_in' LANGUAGE c"
refused "nonsuper: the owner cannot replace an nbc function" $owner 42501 \
	"CREATE OR REPLACE FUNCTION nb_info(model nb_model) RETURNS jsonb LANGUAGE sql AS 'SELECT NULL::jsonb'"
refused "nonsuper: the owner cannot make an nbc function SECURITY DEFINER" $owner 42501 \
	"ALTER FUNCTION nb_info(nb_model) SECURITY DEFINER"
refused "nonsuper: the owner cannot take the type over" $owner 42501 "ALTER TYPE nb_model OWNER TO $owner"
refused "nonsuper: the owner cannot drop an nbc function alone" $owner 2BP01 "DROP FUNCTION nb_info(nb_model)"
refused "nonsuper: a user without CREATE on the database cannot drop nbc" $user 42501 "DROP EXTENSION nbc"

# the administrator's ceiling on the prepared-model cache: the setting must
# exist (its checks below would otherwise not run)
has_limit=$(as $owner -c "$load_sql" \
	-c "SELECT count(*) FROM pg_settings WHERE name = 'nbc.prepared_model_cache_limit'" | tail -n 1)
if [ "$has_limit" = 1 ]; then
	works "nonsuper: nbc.prepared_model_cache_limit is for superusers" $owner $'t\nsuperuser' \
		"$load_sql" "SELECT context FROM pg_settings WHERE name = 'nbc.prepared_model_cache_limit'"
	refused "nonsuper: the owner cannot SET nbc.prepared_model_cache_limit" $owner 42501 \
		"SET nbc.prepared_model_cache_limit = '1TB'"
	refused "nonsuper: the owner cannot ALTER ROLE ... SET nbc.prepared_model_cache_limit" $owner 42501 \
		"ALTER ROLE $owner SET nbc.prepared_model_cache_limit = '1TB'"
	refused "nonsuper: the owner cannot ALTER DATABASE ... SET nbc.prepared_model_cache_limit" $owner 42501 \
		"ALTER DATABASE $db SET nbc.prepared_model_cache_limit = '1TB'"
	refused "nonsuper: the owner cannot ALTER SYSTEM SET nbc.prepared_model_cache_limit" $owner 42501 \
		"ALTER SYSTEM SET nbc.prepared_model_cache_limit = '1TB'"
	if out=$(rel_psql -c "ALTER ROLE $owner IN DATABASE $db SET nbc.prepared_model_cache_limit = '1MB'" 2>&1); then
		works "nonsuper: a superuser sets the owner's ceiling, which the owner keeps" $owner $'t\n1MB' \
			"$load_sql" "SHOW nbc.prepared_model_cache_limit"
	else
		not_ok "nonsuper: a superuser sets the owner's nbc.prepared_model_cache_limit" "$out"
	fi
else
	not_ok "nonsuper: nbc.prepared_model_cache_limit exists" "got: $has_limit settings of that name"
fi

# ---------------------------------------------------------------------------
# Live models (issue 39): row-level security, folding, names per schema, and
# dump and restore with no superuser.

# point 1: a reader sees through nbc nothing it could not SELECT itself
works "nonsuper: the owner makes tenants' tables, one with row-level security" $owner "" \
	"CREATE TABLE tenant_docs (tenant name NOT NULL DEFAULT current_user, label text, tokens text[])" \
	"INSERT INTO tenant_docs VALUES ('$user', 'a', '{x,mine}'), ('$user2', 'b', '{z,secret}'), ('$user2', 'a', '{x}')" \
	"CREATE TABLE shared_docs (LIKE tenant_docs INCLUDING DEFAULTS)" "INSERT INTO shared_docs SELECT * FROM tenant_docs" \
	"ALTER TABLE tenant_docs ENABLE ROW LEVEL SECURITY" \
	"CREATE POLICY own ON tenant_docs USING (tenant = current_user)" \
	"GRANT SELECT, INSERT, DELETE ON tenant_docs, shared_docs TO $user, $user2"
refused "nonsuper: nb_live_create refuses a source with row-level security" $owner 0A000 \
	"SELECT nb_live_create('tenant_live', 'tenant_docs', 'label', 'tokens')"
works "nonsuper: the owner makes a live model over the other and grants SELECT on it to $user" $owner "shared_live" \
	"SELECT live_model FROM nb_live_create('shared_live', 'shared_docs', 'label', 'tokens')" "GRANT SELECT ON shared_live TO $user"
works "nonsuper: $user reads it, exact" $user "t" \
	"SELECT nb_live('shared_live') = (SELECT nb_train(label, tokens) FROM shared_docs)"
works "nonsuper: the owner enables row-level security on the source afterwards" $owner "" \
	"ALTER TABLE shared_docs ENABLE ROW LEVEL SECURITY" "CREATE POLICY own ON shared_docs USING (tenant = current_user)"
works "nonsuper: $user now sees one row of the source, and tenants' writes still succeed" $user "true|1" \
	"INSERT INTO shared_docs (label, tokens) VALUES ('b', '{y}')" "DELETE FROM shared_docs WHERE label = 'b'" \
	"SELECT row_security_active('shared_docs')::text || '|' || (SELECT count(*) FROM shared_docs)"
refused "nonsuper: nb_live refuses $user, to whom row_security_active(source) applies" $user 42501 \
	"SELECT nb_live('shared_live')"
works "nonsuper: the owner, to whom it does not apply, reads it, exact with the tenants' writes" $owner "t" \
	"SELECT NOT row_security_active('shared_docs') AND nb_live('shared_live') = (SELECT nb_train(label, tokens) FROM shared_docs)"
refused_after "nonsuper: nor the owner under FORCE ROW LEVEL SECURITY" $owner 42501 \
	"ALTER TABLE shared_docs FORCE ROW LEVEL SECURITY" "SELECT nb_live('shared_live')"
works "nonsuper: nb_lives lists it to $user, who may SELECT its table" $user "shared_live" "SELECT name FROM nb_lives"

# point 4: folding needs UPDATE and DELETE on the live model's table, and
# writes nothing when nothing is pending
works "nonsuper: the owner makes live model fb_live, lets $user read it, $user2 write the source" $owner "fb_live" \
	"ALTER TABLE shared_docs NO FORCE ROW LEVEL SECURITY" \
	"CREATE TABLE fb (id serial PRIMARY KEY, label text, tokens text[])" \
	"INSERT INTO fb (label, tokens) SELECT (ARRAY['a', 'b'])[1 + i % 2], ARRAY['t' || i % 5] FROM generate_series(1, 30) i" \
	"SELECT live_model FROM nb_live_create('fb_live', 'fb', 'label', 'tokens', options => '{\"fold_after\": 1000}')" \
	"GRANT SELECT ON fb, fb_live TO $user" "GRANT SELECT, INSERT, DELETE ON fb TO $user2" \
	"GRANT USAGE ON SEQUENCE fb_id_seq TO $user2"
works "nonsuper: $user2 writes it without reading the live model" $user2 "" \
	"INSERT INTO fb (label, tokens) VALUES ('a', '{new}'), ('b', '{other}')" "DELETE FROM fb WHERE id = 3"
works "nonsuper: $user, with SELECT only, reads it, exact" $user "t" \
	"SELECT nb_live('fb_live') = (SELECT nb_train(label, tokens) FROM fb)"
refused "nonsuper: $user cannot fold it" $user 42501 "SELECT nb_live_fold('fb_live')"
refused "nonsuper: nor lock its base row" $user 42501 "SELECT 1 FROM fb_live WHERE id = 0 FOR KEY SHARE"
refused "nonsuper: nor delete its deltas" $user 42501 "DELETE FROM fb_live WHERE id > 0"
refused "nonsuper: nor call nbc_live_train (its owner's)" $user 42501 "SELECT nbc_live_train('fb_live')"
# a role without SELECT on the live model's table
refused "nonsuper: $user2, without SELECT on fb_live, cannot nb_live it" $user2 42501 "SELECT nb_live('fb_live')"
refused "nonsuper: nor SELECT its deltas" $user2 42501 "SELECT count(*) FROM fb_live"
refused "nonsuper: nor call nbc_live_train" $user2 42501 "SELECT nbc_live_train('fb_live')"
works "nonsuper: nb_lives and nbc_lives() list none of the live models to $user2" $user2 "0|0" \
	"SELECT (SELECT count(*) FROM nb_lives) || '|' || (SELECT count(*) FROM nbc_lives())"
# the base row's version before and after a fold
base_version="SELECT ctid::text || ' ' || xmin::text FROM fb_live WHERE id = 0"
works "nonsuper: the owner folds the pending deltas: the base row is rewritten, none is left" $owner $'2\nt\n0\nf' \
	"CREATE TEMP TABLE v AS $base_version" "SELECT count(*) FROM fb_live WHERE id > 0" \
	"SELECT nb_live_fold('fb_live') IS NOT NULL" "SELECT count(*) FROM fb_live WHERE id > 0" \
	"SELECT ($base_version) = (SELECT * FROM v)"
works "nonsuper: with nothing pending, three folds write nothing (the base row's ctid and xmin unchanged), and it stays exact" \
	$owner $'t\nt\nt\nt\nt' \
	"CREATE TEMP TABLE v AS $base_version" "SELECT nb_live_fold('fb_live') IS NOT NULL" \
	"SELECT nb_live_fold('fb_live') IS NOT NULL" "SELECT nb_live_fold('fb_live') IS NOT NULL" \
	"SELECT ($base_version) = (SELECT * FROM v)" \
	"SELECT nb_live('fb_live') = (SELECT nb_train(label, tokens) FROM fb)"
# a reader in an open transaction holds no lock that a fold waits for
PGUSER=$user PGPASSWORD=$pw rel_psql -d "$db" -c "BEGIN" -c "SELECT nb_live('fb_live') IS NOT NULL" \
	-c "SELECT count(*) FROM fb_live" -c "SELECT pg_sleep(300)" >/dev/null 2>&1 &
reader=$!
reader_pid=
for ((i = 0; i < 300; i++)); do
	reader_pid=$(rel_psql -d "$db" -c "SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE a.usename = '$user' AND l.relation = 'fb_live'::regclass AND l.granted AND a.query LIKE '%pg_sleep%'")
	[ -n "$reader_pid" ] && break
	sleep 0.1
done
if [ -n "$reader_pid" ]; then
	works "nonsuper: while $user holds fb_live in an open transaction, the owner writes and folds it (lock_timeout 30s)" \
		$owner $'t\n0|true' "SET lock_timeout = '30s'" "INSERT INTO fb (label, tokens) VALUES ('a', '{later}')" \
		"SELECT nb_live_fold('fb_live') IS NOT NULL" \
		"SELECT count(*) || '|' || (SELECT nb_live('fb_live') = (SELECT nb_train(label, tokens) FROM fb)) FROM fb_live WHERE id > 0"
	rel_psql -d "$db" -c "SELECT pg_terminate_backend($reader_pid)" >/dev/null
else
	not_ok "nonsuper: $user holds fb_live in an open transaction" "no such backend after 30 s"
	kill $reader
fi
wait $reader

# point 6: live models are named per schema, as tables are
works "nonsuper: the owner lets $user and $user2 create schemas" $owner "" "GRANT CREATE ON DATABASE $db TO $user, $user2"
for u in $user $user2; do
	works "nonsuper: $u makes live model notes_live over its own table notes, in its own schema" $u "notes_live" \
		"CREATE SCHEMA $u" "CREATE TABLE notes (label text, tokens text[])" \
		"INSERT INTO notes VALUES ('$u', '{by,$u}'), ('other', '{x}')" \
		"SELECT live_model FROM nb_live_create('notes_live', 'notes', 'label', 'tokens')"
done
for u in $user $user2; do
	works "nonsuper: $u reads its own notes_live, exact" $u "true|$u" \
		"SELECT (nb_live('notes_live') = (SELECT nb_train(label, tokens) FROM notes))::text || '|' || nb_predict(nb_live('notes_live'), ARRAY['by', '$u'])"
done
refused "nonsuper: $user cannot read $user2's" $user 42501 "SELECT nb_live('$user2.notes_live')"
refused "nonsuper: nor drop it" $user 42501 "SELECT nb_live_drop('$user2.notes_live')"
refused "nonsuper: nor take a name in $user2's schema" $user 42501 \
	"SELECT nb_live_create('$user2.taken', 'notes', 'label', 'tokens')"
works "nonsuper: $user2 drops its own, triggers and all; $user's stays" $user2 $'t\n0|1' \
	"SELECT nb_live_drop('notes_live') IS NOT NULL" \
	"SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'notes'::regclass) || '|' || (SELECT count(*) FROM pg_class WHERE relname = 'notes_live')"

# point 5: dumps and restores by the owner, no superuser anywhere; and a
# superuser's dump restored by the owner
live_exact="SELECT (nbc_model_send(nb_live('tokens_live')) = nbc_model_send((SELECT nb_train(label, tokens) FROM docs)))::text
	|| '|' || (nbc_model_send(nb_live('side.text_live')) = nbc_model_send((SELECT nb_train(label, body, '{\"ngram_range\": [1, 2]}'::jsonb) FROM docs)))::text
	|| '|' || (nbc_model_send(nb_live('weighted_live')) = nbc_model_send((SELECT nb_train(stars::text, tokens, weight::float8) FROM docs)))::text
	|| '|' || (SELECT count(*) FROM nb_lives)"
live_bytes="SELECT string_agg(name::text || ':' || md5(nbc_model_send(nb_live(name::text))), ' ' ORDER BY name::text) FROM nb_lives"
# writes STEP: statements of every kind on docs, each its own delta
live_writes() {
	echo "DO \$\$ BEGIN FOR i IN 1..12 LOOP
		INSERT INTO docs (label, tokens, body, stars, weight) VALUES ((ARRAY['spam', 'ham', 'new'])[1 + i % 3],
			ARRAY['w' || i % 17, 'n' || $1], 'a new fox ' || i, 1 + i % 5, 1 + i % 4);
		UPDATE docs SET label = 'ham', stars = 2 WHERE id = i * 7 + $1;
		DELETE FROM docs WHERE id = i * 11 + $1;
	END LOOP; END \$\$"
}
if out=$(PGUSER=$owner PGPASSWORD=$pw rel_psql -d "$db" -c "CREATE DATABASE $ldb" 2>&1 &&
	PGUSER=$owner PGPASSWORD=$pw rel_psql -d "$ldb" 2>&1 <<SQL
CREATE EXTENSION nbc;
CREATE SCHEMA side;
CREATE TABLE docs (id serial PRIMARY KEY, label text, tokens text[], body text, stars int, weight int NOT NULL);
INSERT INTO docs (label, tokens, body, stars, weight)
SELECT (ARRAY['spam', 'ham', 'eggs'])[1 + i % 3], ARRAY['w' || i % 17, 'w' || i % 5],
	'The ' || (ARRAY['quick', 'lazy'])[1 + i % 2] || ' fox ' || i % 7, 1 + i % 5, 1 + i % 3
FROM generate_series(1, 200) i;
SELECT nb_live_create('tokens_live', 'docs', 'label', 'tokens', options => '{"fold_after": 4}');
SELECT nb_live_create('side.text_live', 'docs', 'label', 'body', options => '{"tokenizer": {"ngram_range": [1, 2]}, "fold_after": 4}');
SELECT nb_live_create('weighted_live', 'docs', 'stars', 'tokens', 'weight', '{"fold_after": 4}');
GRANT SELECT, INSERT, UPDATE, DELETE ON docs TO $user;
GRANT SELECT ON tokens_live TO $user;
GRANT USAGE ON SEQUENCE docs_id_seq TO $user;
$(live_writes 1);
SQL
); then
	ok "nonsuper: the owner creates database $ldb with three live models (one in another schema, with a tokenizer, weighted) and writes"
else
	not_ok "nonsuper: the owner creates database $ldb with three live models and writes" "$out"
fi
db=$ldb works "nonsuper: there the live models equal nb_train over the table, byte for byte" $owner "true|true|true|3" "$live_exact"
want_bytes=$(PGUSER=$owner PGPASSWORD=$pw rel_psql -d "$ldb" -c "$live_bytes" 2>&1)

# restored NAME DB: DB's live models are $ldb's, exact, and stay exact
# through writes by the owner and by $user (whose grants were restored)
restored() {
	db=$2 works "nonsuper: $1: the live models are the dumped ones" $owner "$want_bytes" "$live_bytes"
	db=$2 works "nonsuper: $1: they equal nb_train over the table, byte for byte" $owner "true|true|true|3" "$live_exact"
	db=$2 works "nonsuper: $1: $user writes" $user "" "$(live_writes 2)"
	db=$2 works "nonsuper: $1: the owner writes, and they stay equal" $owner "true|true|true|3" \
		"$(live_writes 3)" "$live_exact"
	db=$2 works "nonsuper: $1: $user reads tokens_live (its grant was restored), exact" $user "t" \
		"SELECT nb_live('tokens_live') = (SELECT nb_train(label, tokens) FROM docs)"
}
if out=$(dump_as $owner "$ldb" "$work/live_owner.dump") && [ -z "$out" ] &&
	out=$(restore_as_owner "$work/live_owner.dump" "${ldb}_by_owner") && [ -z "$out" ]; then
	ok "nonsuper: the owner dumps $ldb (pg_dump -Fc) and restores it into a new database (pg_restore --exit-on-error)"
	restored "the owner's dump restored by the owner" "${ldb}_by_owner"
else
	not_ok "nonsuper: the owner dumps $ldb (pg_dump -Fc) and restores it into a new database (pg_restore --exit-on-error)" "$out"
fi
if out=$("$REL_BIN/pg_dump" -Fc -f "$work/live_super.dump" "$ldb" 2>&1) && [ -z "$out" ] &&
	out=$(restore_as_owner "$work/live_super.dump" "${ldb}_by_superuser") && [ -z "$out" ]; then
	ok "nonsuper: a superuser dumps $ldb (pg_dump -Fc), the owner restores it into a new database (pg_restore --exit-on-error)"
	restored "a superuser's dump restored by the owner" "${ldb}_by_superuser"
else
	not_ok "nonsuper: a superuser dumps $ldb (pg_dump -Fc), the owner restores it into a new database (pg_restore --exit-on-error)" "$out"
fi

works "nonsuper: the owner drops nbc" $owner "0" "SET client_min_messages = warning" "DROP EXTENSION nbc CASCADE" \
	"SELECT count(*) FROM pg_extension WHERE extname = 'nbc'"
rel_finish
