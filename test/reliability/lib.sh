# Shared helpers of the reliability suite (test/reliability/*.sh source this).
#
# TAP:      ok NAME / not_ok NAME [DIAG...] / is NAME GOT WANT / diag TEXT
# SQL:      rel_works NAME WANT DB SQL... / rel_refused NAME SQLSTATE DB SQL...
# Server:   rel_bindir, rel_psql, rel_start_cluster DIR (a throwaway cluster
#           of our own, for the parts that must kill their server),
#           rel_versions (the extension's versions, from sql/)
#
# Every check line goes to stdout as "ok - NAME" or "not ok - NAME"; the
# counts are kept in REL_OK and REL_BAD, and rel_finish prints the closing
# "N passed, N failed" of a script run on its own.

REL_OK=0
REL_BAD=0

ok() {
	echo "ok - $1"
	REL_OK=$((REL_OK + 1))
}

not_ok() {
	local name=$1
	shift
	echo "not ok - $name"
	REL_BAD=$((REL_BAD + 1))
	local line
	for line in "$@"; do
		diag "$line"
	done
}

diag() {
	printf '%s\n' "$1" | sed 's/^/# /'
}

# is NAME GOT WANT: ok when the two strings are equal
is() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "got:  $2" "want: $3"
	fi
}

rel_finish() {
	echo "$REL_OK passed, $REL_BAD failed"
	[ "$REL_BAD" -eq 0 ]
}

# the server binaries of the PostgreSQL nbc is built for
rel_bindir() {
	local pgc=${PG_CONFIG:-}
	if [ -z "$pgc" ]; then
		pgc=$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)
	fi
	"$pgc" --bindir
}

# rel_psql [ARGS...]: psql that stops at the first error, unaligned, no headers
rel_psql() {
	"$REL_BIN/psql" -X -q -v ON_ERROR_STOP=1 -At "$@"
}

# rel_works NAME WANT DB SQL...: the statements (psql -c each, so \copy
# too) succeed in DB, as PGUSER, and print WANT
rel_works() {
	local name=$1 want=$2 out
	if ! out=$(rel_psql_c "${@:3}" 2>&1); then
		not_ok "$name" "$out"
	elif [ "$out" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name" "got:  $out" "want: $want"
	fi
}

# rel_refused NAME SQLSTATE DB SQL...: the statements run in DB, as PGUSER,
# up to the first error, which is the last statement's, of SQLSTATE
rel_refused() {
	local name=$1 state=$2 out
	out=$(REL_VERBOSITY=sqlstate rel_psql_c "${@:3}" 2>&1)
	if [ $? -ne 0 ] && [ "$(grep -c '^ERROR:' <<<"$out")" -eq 1 ] &&
		[ "$(tail -n 1 <<<"$out")" = "ERROR:  $state" ]; then
		ok "$name ($state)"
	else
		not_ok "$name ($state)" "$out"
	fi
}

# rel_psql_c DB SQL...: rel_psql -d DB -c SQL for each SQL (with VERBOSITY
# REL_VERBOSITY when set)
rel_psql_c() {
	local db=$1 args=() s
	shift
	for s in "$@"; do
		args+=(-c "$s")
	done
	rel_psql -v VERBOSITY="${REL_VERBOSITY:-default}" -d "$db" "${args[@]}"
}

# rel_as_owner CMD...: run CMD as the cluster owner (postgres when we are root)
rel_as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# rel_start_cluster DIR [BASE]: initdb a cluster in DIR/data and start it,
# with its socket in DIR and no TCP listener (so ports only collide on
# sockets), on the first port from BASE (default NBC_REL_PORT_BASE, else
# 56040) with no socket or lock in /tmp, /var/run/postgresql or DIR.
# Exports PGHOST, PGPORT, PGUSER, PGDATABASE for it and unsets PGPASSWORD,
# PGSERVICE and PGSYSCONFDIR so nothing points elsewhere; sets REL_PGDATA.
rel_start_cluster() {
	local dir=$1 base=${2:-${NBC_REL_PORT_BASE:-56040}} port i
	for ((i = 0; i < 100; i++)); do
		port=$((base + i))
		[ -e "/tmp/.s.PGSQL.$port" ] || [ -e "/tmp/.s.PGSQL.$port.lock" ] && continue
		[ -e "/var/run/postgresql/.s.PGSQL.$port" ] && continue
		[ -e "$dir/.s.PGSQL.$port" ] && continue
		break
	done
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$dir"
	fi
	chmod 755 "$dir"
	REL_PGDATA=$dir/data
	rel_as_owner "$REL_BIN/initdb" -D "$REL_PGDATA" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$REL_PGDATA/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
max_connections = 40
log_min_messages = warning
CONF
	unset PGPASSWORD PGSERVICE PGSYSCONFDIR PGHOSTADDR PGSSLMODE
	export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	rel_pg_ctl start
}

# rel_pg_ctl start|stop-immediate: the cluster of rel_start_cluster
rel_pg_ctl() {
	case $1 in
	start) rel_as_owner "$REL_BIN/pg_ctl" -D "$REL_PGDATA" -l "$REL_PGDATA/server.log" -w -t 120 start >/dev/null ;;
	stop-immediate) rel_as_owner "$REL_BIN/pg_ctl" -D "$REL_PGDATA" -m immediate -w stop >/dev/null ;;
	esac
}

# rel_drop_cluster DIR: stop the cluster of rel_start_cluster if it runs, remove DIR
rel_drop_cluster() {
	local dir=$1
	if [ -n "${REL_PGDATA:-}" ] && [ -f "$REL_PGDATA/postmaster.pid" ]; then
		rel_as_owner "$REL_BIN/pg_ctl" -D "$REL_PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
}

# rel_versions ROOT: the extension's versions from the update scripts in
# ROOT/sql/install (nbc--A--B.sql updates A to B) into the array versions,
# oldest first, and nbc.control's default_version into current
rel_versions() {
	local root=$1 f
	current=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\(.*\)'.*/\1/p" "$root/nbc.control")
	mapfile -t versions < <(
		for f in "$root"/sql/install/nbc--*--*.sql; do
			f=${f##*/nbc--}
			f=${f%.sql}
			sed 's/--/\n/g' <<<"$f"
		done | sort -uV
	)
}

# rel_upgrade_root ROOT: install the root of the update chain, 0.1.0's full
# script (ROOT/test/fixtures, installed by the Makefile's target
# install-upgrade-root into the server's extension directory), without which
# CREATE EXTENSION nbc VERSION 'V' of an older V has no script to start from:
# make install installs only the current full script and the updates
rel_upgrade_root() {
	make -s -C "$1" install-upgrade-root PG_CONFIG="$REL_BIN/pg_config"
}

REL_BIN=${REL_BIN:-$(rel_bindir)}

# rel_mode ARGS...: set mode to quick (the default) or long from --quick /
# --long, the only arguments a part takes; anything else is a usage error.
rel_mode() {
	mode=quick
	for a in "$@"; do
		case $a in
		--quick) mode=quick ;;
		--long) mode=long ;;
		*) echo "usage: $0 [--quick|--long]" >&2; exit 2 ;;
		esac
	done
}
