#!/usr/bin/env bash
# nbc for a database owner who is not a superuser (nbc.control: trusted):
#
#   bash test/reliability/nonsuper.sh [--quick|--long]
#
# Creates the roles nbc_rel_owner (owns the database nbc_rel_nonsuper) and
# nbc_rel_user (may only connect), with a random password each, and checks
#   can:    the owner installs nbc, updates it from the oldest released
#           version, trains every feature type, merges, scores, inspects,
#           casts, copies models in binary and sets nbc.prepared_model_cache;
#           the results are the bytes a superuser gets; the plain user scores
#   cannot: change a setting of the server (ALTER SYSTEM), load the library
#           or bind its C symbols (LOAD, LANGUAGE c), replace, drop, or change
#           the owner of the extension's objects (all owned by the bootstrap
#           superuser, not by the installer); the plain user cannot install
#           or drop nbc; nobody but a superuser can set the ceiling
#           nbc.prepared_model_cache_limit (when the build has it; otherwise
#           reported as skipped).
# Every refusal is checked by its SQLSTATE.  Runs against the libpq
# environment as a superuser, which must let the two roles log in with a
# password (or trust); drops the database and roles at the end.
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
owner=nbc_rel_owner
user=nbc_rel_user
pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

cleanup() {
	rel_psql -c "DROP DATABASE IF EXISTS $db" -c "DROP ROLE IF EXISTS $owner" -c "DROP ROLE IF EXISTS $user" 2>/dev/null
}
cleanup
if ! out=$(rel_psql -c "CREATE ROLE $owner LOGIN PASSWORD '$pw'" -c "CREATE ROLE $user LOGIN PASSWORD '$pw'" \
	-c "CREATE DATABASE $db OWNER $owner TEMPLATE template0" 2>&1); then
	not_ok "nonsuper: create the roles and the database" "$out"
	rel_finish
	exit
fi
trap cleanup EXIT

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
if [ "${versions[0]}" != "$current" ]; then
	works "nonsuper: the owner installs ${versions[0]} and updates it to $current" $owner "$current" \
		"DROP EXTENSION nbc" "CREATE EXTENSION nbc VERSION '${versions[0]}'" "ALTER EXTENSION nbc UPDATE" \
		"SELECT extversion FROM pg_extension WHERE extname = 'nbc'"
else
	diag "SKIP nonsuper: update path: $current is the only version"
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

works "nonsuper: the owner drops nbc" $owner "0" "SET client_min_messages = warning" "DROP EXTENSION nbc CASCADE" \
	"SELECT count(*) FROM pg_extension WHERE extname = 'nbc'"
rel_finish
