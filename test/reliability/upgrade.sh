#!/usr/bin/env bash
# The extension update path, from every released version to the current one:
#
#   bash test/reliability/upgrade.sh [--quick|--long]
#
# The released versions are read from the update scripts in sql/install/
# (nbc--A--B.sql updates A to B); the current one is nbc.control's
# default_version, whose full script make builds from sql/objects/.  An older
# version V installs as 0.1.0's full script plus the updates to V: the script
# first installs that root of the chain, test/fixtures/nbc--0.1.0.sql (make
# install-upgrade-root), which make install leaves out.  For each older
# version V, in a fresh database: CREATE EXTENSION nbc VERSION 'V', store
# models of every kind V can train (fixture.sql; fixture_mixed.sql too when V
# has jsonb training), ALTER EXTENSION nbc UPDATE, then check that
#   - the installation is the current version and its objects are those of a
#     fresh install, defined alike (catalog.sql: signatures, properties, C
#     symbols and bodies, ACLs, aggregates, types, casts, operators and their
#     classes, views, event triggers, comments),
#   - the stored models kept their bytes,
#   - the models, their summaries and predictions (fingerprint.sql) are those
#     of a fresh install of the current version trained on the same rows.
# Also: every version is installable (pg_available_extension_versions) and
# has an update path to the current one.  --long: bigger models.
#
# Runs against the libpq environment; creates the databases nbc_rel_up_* and
# drops them when everything passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"

rel_mode "$@"
if [ "$mode" = quick ]; then
	scale=1500 vocab=1000
else
	scale=100000 vocab=100000
fi

rel_versions "$root"
if ! out=$(rel_upgrade_root "$root" 2>&1); then
	not_ok "upgrade: install 0.1.0's full script, the root of the update chain" "$out"
fi
older=()
for v in "${versions[@]}"; do
	[ "$v" = "$current" ] || older+=("$v")
done
if [ -z "$current" ] || [ ${#versions[@]} -eq 0 ]; then
	not_ok "upgrade: find the versions" "default_version '$current', scripts: $(ls "$root"/sql/install/nbc--*.sql 2>&1)"
	rel_finish
	exit
fi
diag "upgrade: current version $current; released before it: ${older[*]:-none}"

available=$(rel_psql -c "SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'nbc'")
for v in "${versions[@]}"; do
	if grep -qwF -- "$v" <<<"$available"; then
		ok "upgrade: version $v is installed (pg_available_extension_versions)"
	else
		not_ok "upgrade: version $v is installed (pg_available_extension_versions)" \
			"available: $available (is its script in the Makefile's DATA?)"
	fi
done

dbs=(nbc_rel_up_fresh)
for d in nbc_rel_up_fresh "${older[@]/#/nbc_rel_up_}"; do
	"$REL_BIN/dropdb" --if-exists "${d//./_}" 2>/dev/null
done

# the extension's members with their definitions (catalog.sql's view)
catalog_sql="SELECT object || ' | ' || definition FROM nbc_catalog ORDER BY object, definition"

# the reference: a fresh install of the current version, same rows
if ! out=$("$REL_BIN/createdb" -T template0 nbc_rel_up_fresh 2>&1 &&
	rel_psql -d nbc_rel_up_fresh -v scale=$scale -v vocab=$vocab -c 'CREATE EXTENSION nbc' \
		-f "$here/fixture.sql" -f "$here/fixture_mixed.sql" 2>&1) ||
	! fresh_catalog=$(rel_psql -d nbc_rel_up_fresh -f "$here/catalog.sql" -c "$catalog_sql" 2>&1) ||
	! fresh_models=$(rel_psql -d nbc_rel_up_fresh -f "$here/fingerprint.sql" 2>&1); then
	not_ok "upgrade: a fresh install of $current with models" "$out$fresh_catalog$fresh_models"
	rel_finish
	exit
fi

# same NAME WANT GOT
same() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "$(diff <(echo "$2") <(echo "$3") | head -n 20)"
	fi
}

# the bytes by their text form (base64 of them), which every version can write:
# the binary output function's name changed in 0.9.0
bytes_sql="SELECT string_agg(name || ' ' || coalesce(md5(m::text), 'null'), ' ' ORDER BY name) FROM rel_models"
for v in "${older[@]}"; do
	db=nbc_rel_up_${v//./_}
	dbs+=("$db")
	if ! out=$("$REL_BIN/createdb" -T template0 "$db" 2>&1 &&
		rel_psql -d "$db" -c "CREATE EXTENSION nbc VERSION '$v'" 2>&1); then
		not_ok "upgrade: CREATE EXTENSION nbc VERSION '$v'" "$out"
		continue
	fi
	ok "upgrade: CREATE EXTENSION nbc VERSION '$v'"
	path=$(rel_psql -d "$db" -c "SELECT path FROM pg_extension_update_paths('nbc') WHERE source = '$v' AND target = '$current'")
	if [ -n "$path" ]; then
		ok "upgrade: an update path from $v to $current ($path)"
	else
		not_ok "upgrade: an update path from $v to $current"
	fi
	# the kinds of model this version can train
	mixed=$(rel_psql -d "$db" -c "SELECT to_regprocedure('nb_train(text, jsonb)') IS NOT NULL")
	files=(-f "$here/fixture.sql")
	[ "$mixed" = t ] && files+=(-f "$here/fixture_mixed.sql")
	if ! out=$(rel_psql -d "$db" -v scale=$scale -v vocab=$vocab "${files[@]}" 2>&1); then
		not_ok "upgrade: store models with version $v" "$out"
		continue
	fi
	before=$(rel_psql -d "$db" -c "$bytes_sql")
	if ! out=$(rel_psql -d "$db" -c 'ALTER EXTENSION nbc UPDATE' 2>&1); then
		not_ok "upgrade: ALTER EXTENSION nbc UPDATE from $v" "$out"
		continue
	fi
	is "upgrade: ALTER EXTENSION nbc UPDATE from $v reaches $current" \
		"$(rel_psql -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = 'nbc'")" "$current"
	same "upgrade: from $v: the extension's objects are those of a fresh $current install" \
		"$fresh_catalog" "$(rel_psql -d "$db" -f "$here/catalog.sql" -c "$catalog_sql" 2>&1)"
	is "upgrade: from $v: the stored models kept their bytes" \
		"$(rel_psql -d "$db" -c "$bytes_sql")" "$before"
	# models of the kinds $v could not train, trained after the update
	if [ "$mixed" != t ] && ! out=$(rel_psql -d "$db" -f "$here/fixture_mixed.sql" 2>&1); then
		not_ok "upgrade: from $v: train the newer feature types after the update" "$out"
		continue
	fi
	same "upgrade: from $v: models, summaries and predictions equal a fresh $current install's" \
		"$fresh_models" "$(rel_psql -d "$db" -f "$here/fingerprint.sql" 2>&1)"
done

if [ "$REL_BAD" -eq 0 ]; then
	for d in "${dbs[@]}"; do
		"$REL_BIN/dropdb" --if-exists "$d" 2>/dev/null
	done
fi
rel_finish
