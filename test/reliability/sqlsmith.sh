#!/usr/bin/env bash
# sqlsmith.sh — random SQL (sqlsmith) against a database full of nbc objects;
# no backend may crash.
#
#   bash test/reliability/sqlsmith.sh [--quick | --long] [-n QUERIES] [--seed N]
#
#   --quick   3,000 queries (for the test command)
#   --long    60,000 queries (the default)
#
# Runs against the server of the PG* environment (a superuser, nbc
# installed).  Installs nothing: without sqlsmith (Debian: apt-get install
# sqlsmith; test/setup.sh installs it) it says so and skips.  Creates the role
# nbc_smith and the database nbc_sqlsmith (dropped first) with documents and
# models of every kind (sqlsmith.sql), then runs sqlsmith there with a fixed
# seed for a fixed number of queries as nbc_smith, who is not a superuser (so
# random calls cannot reconfigure or stop the server).  The checks: sqlsmith
# ran every query, it saw no broken connection, a connection opened before
# it is still the same backend afterwards (a crashed backend makes the
# postmaster end every session), and the server log shows no crashed
# backend.  Prints TAP; exit status 1 if a test failed (the database is
# then kept for a look).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
queries=60000
seed=2
limit=10800
while [ $# -gt 0 ]; do
	case $1 in
		--quick) queries=3000 seed=1 limit=900 ;;
		--long | --full) queries=60000 seed=2 limit=10800 ;;
		-n) queries=$2; shift ;;
		--seed) seed=$2; shift ;;
		*) echo "usage: sqlsmith.sh [--quick | --long] [-n QUERIES] [--seed N]" >&2; exit 2 ;;
	esac
	shift
done

if ! command -v sqlsmith >/dev/null; then
	echo "######## sqlsmith is not installed: the sqlsmith test is SKIPPED ########" >&2
	echo "# install it with: apt-get install sqlsmith (test/setup.sh does)"
	echo "1..0 # SKIP sqlsmith is not installed"
	exit 0
fi

source "$here/crash_watch.sh"

db=nbc_sqlsmith
role=nbc_smith
work=$(mktemp -d /tmp/nbc-sqlsmith.XXXXXX)
trap 'rm -rf "$work"' EXIT

if ! {
	psql -XqAt -v ON_ERROR_STOP=1 -d postgres <<-SQL
		DROP DATABASE IF EXISTS $db WITH (FORCE);
		DO \$\$ BEGIN
			IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN
				CREATE ROLE $role NOLOGIN;
			END IF;
		END \$\$;
		CREATE DATABASE $db OWNER $role;
	SQL
	PGOPTIONS="-c role=$role" psql -XqAt -v ON_ERROR_STOP=1 -d "$db" -f "$here/sqlsmith.sql"
} >"$work/setup.log" 2>&1; then
	echo "not ok 1 - set up the database $db"
	sed 's/^/# /' "$work/setup.log"
	echo "1..1"
	exit 1
fi

crash_watch_start
# a session that must outlive the run: a crash anywhere would end it
coproc WATCH { psql -XAtq -d "$db" 2>&1; }
# copies of the pipes: bash drops WATCH when psql ends
exec {watch_w}>&"${WATCH[1]}" {watch_r}<&"${WATCH[0]}"
echo "SELECT pg_backend_pid();" >&"$watch_w"
read -r -t 30 pid_before <&"$watch_r" || pid_before=

start=$(date +%s)
# the queries go through awk only to be counted: those that use nbc, and
# the calls of each of its functions
timeout "$limit" sqlsmith --target="dbname=$db options='-c role=$role'" --seed="$seed" \
	--max-queries="$queries" --exclude-catalog --verbose --dump-all-queries \
	2>"$work/sqlsmith.log" |
	awk 'BEGIN { RS = ";\n" }
		{
			rec = $0
			hit = rec ~ /::[ \t]*nb_model|as nb_model/
			while (match(rec, /(^|[^a-z_])nb_[a-z_]+[ \t\n]*\(/)) {
				name = substr(rec, RSTART, RLENGTH)
				sub(/^[^n]*/, "", name)
				sub(/[ \t\n]*\($/, "", name)
				calls[name]++
				hit = 1
				rec = substr(rec, RSTART + RLENGTH)
			}
			n += hit
		}
		END {
			printf "%d", n
			for (f in calls)
				printf " %s:%d", f, calls[f]
			print ""
		}' >"$work/nbc_queries"
status=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))

# the session may be gone, and psql with it: then writing must not kill us
trap '' PIPE
pid_after=
if echo "SELECT pg_backend_pid();" >&"$watch_w" 2>/dev/null; then
	read -r -t 30 pid_after <&"$watch_r" || pid_after=
fi
exec {watch_w}>&- {watch_r}<&-

ran=$(grep -a -o 'queries: [0-9]*' "$work/sqlsmith.log" | tail -n 1 | grep -o '[0-9]*$')
rate=$(grep -a -o 'error rate: [0-9.]*' "$work/sqlsmith.log" | tail -n 1 | grep -o '[0-9.]*$')
# the progress lines: one character per query, C for a broken connection
broken=$(grep -a -E '^[.etSC]+$' "$work/sqlsmith.log" | tr -cd 'C' | wc -c)
lost=$(grep -a -c -E 'server closed the connection|terminating connection because of crash|connection to server .* lost' \
	"$work/sqlsmith.log")
failed=0

if [ "$status" -eq 0 ] && [ "${ran:-0}" -eq "$queries" ]; then
	echo "ok 1 - sqlsmith ran $queries queries (seed $seed) in $elapsed s"
else
	why="exit status $status"
	[ "$status" -eq 124 ] && why="stopped after $limit s"
	echo "not ok 1 - sqlsmith ran ${ran:-?} of $queries queries (seed $seed), $why"
	tail -n 5 "$work/sqlsmith.log" | sed 's/^/# /'
	failed=1
fi
if [ "$broken" -eq 0 ] && [ "$lost" -eq 0 ]; then
	echo "ok 2 - sqlsmith saw no broken connection"
else
	echo "not ok 2 - sqlsmith saw $broken broken connections"
	grep -a -E 'server closed the connection|terminating connection because of crash' "$work/sqlsmith.log" |
		head -n 5 | sed 's/^/# /'
	failed=1
fi
if [ -n "$pid_before" ] && [ "$pid_before" = "$pid_after" ]; then
	echo "ok 3 - a session opened before the run survived it (backend $pid_before)"
else
	echo "not ok 3 - the session opened before the run did not survive it (backend ${pid_before:-?}, then ${pid_after:-none})"
	failed=1
fi
crash_watch_check 4 "the server log shows no crashed backend" || failed=1
read -r nbc_queries nbc_calls <"$work/nbc_queries"
echo "# $nbc_queries of ${ran:-?} queries call nbc's functions or use nb_model; error rate ${rate:-?}"
echo "# calls: ${nbc_calls:-none}"
echo "# most frequent errors (sqlsmith's last report):"
awk '/^[0-9]+\t/ { if (!inblock) n = 0; inblock = 1; if (n < 8) top[n++] = $0; next }
	{ inblock = 0 }
	END { for (i = 0; i < n; i++) print "#   " top[i] }' "$work/sqlsmith.log"
if [ "$failed" -eq 0 ]; then
	psql -XqAt -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
fi
echo "1..4"
exit "$failed"
