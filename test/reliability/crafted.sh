#!/usr/bin/env bash
# crafted.sh — mutated nb_model values through every entry point (crafted.c).
#
#   bash test/reliability/crafted.sh [--quick | --long] [-n COUNT] [--seed N]
#
#   --quick   10,000 values (for the test command)
#   --long    120,000 values (the default)
#
# Runs against the server of the PG* environment (a superuser, nbc
# installed): creates the extension if needed and the schema "crafted"
# (crafted.sql), builds crafted.c with the pure code (src/nb_*.c: nb_format.c needs
# more of it than it used to) and test/unit's malloc_alloc.c (gcc or cc and libpq),
# then prints TAP: no crash, specific SQLSTATEs, agreement of the inputs,
# byte-identical round trips, accepted values usable, unvalidated bytes
# (through a cast from bytea that it creates for the run when it is a
# superuser) rejected by every function; and the distribution
# of outcomes.  Failing values are kept as hex in $CRAFTED_FAILDIR
# (default: a directory under /tmp, printed), and the schema is kept after a
# failure.  Exit status 1 if a test failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
count=120000
seed=15
while [ $# -gt 0 ]; do
	case $1 in
		--quick) count=10000 ;;
		--long | --full) count=120000 ;;
		-n) count=$2; shift ;;
		--seed) seed=$2; shift ;;
		*) echo "usage: crafted.sh [--quick | --long] [-n COUNT] [--seed N]" >&2; exit 2 ;;
	esac
	shift
done

source "$here/crash_watch.sh"

work=$(mktemp -d /tmp/nbc-crafted.XXXXXX)
faildir=${CRAFTED_FAILDIR:-$work/failures}
mkdir -p "$faildir"
raw=0
# the work directory stays when it holds failing values
cleanup() {
	[ "$raw" = 1 ] && psql -XqAt -c "DROP CAST IF EXISTS (bytea AS nb_model)" >/dev/null 2>&1
	rm -f "$work/crafted" "$work/build.log" "$work/setup.log"
	rmdir "$faildir" "$work" 2>/dev/null || true
}
trap cleanup EXIT

pg_config=${PG_CONFIG:-pg_config}
incdir=$("$pg_config" --includedir 2>/dev/null || echo /usr/include/postgresql)
[ -f "$incdir/libpq-fe.h" ] || incdir=/usr/include/postgresql
libdir=$("$pg_config" --libdir 2>/dev/null || true)
cc=${CC:-$(command -v gcc || command -v cc)}
if ! "$cc" -std=gnu99 -O2 -Wall -Wextra -I"$root/src" -I"$root/src/workflows" -I"$incdir" -o "$work/crafted" \
	"$here/crafted.c" "$root"/src/nb_*.c "$root"/src/workflows/nb_*.c "$root/test/unit/malloc_alloc.c" \
	${libdir:+-L"$libdir"} -lpq -lm 2>"$work/build.log"; then
	echo "not ok 1 - build crafted.c (libpq headers: postgresql-server-dev-15)"
	sed 's/^/# /' "$work/build.log"
	echo "1..1"
	exit 1
fi

if ! psql -XqAt -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS nbc" \
	-f "$here/crafted.sql" >"$work/setup.log" 2>&1; then
	echo "not ok 1 - set up the crafted schema"
	sed 's/^/# /' "$work/setup.log"
	echo "1..1"
	exit 1
fi

# unvalidated bytes need a binary-coercible cast, which only a superuser can create
if [ "$(psql -XAtqc "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")" = t ] &&
	psql -XqAt -v ON_ERROR_STOP=1 -c "DROP CAST IF EXISTS (bytea AS nb_model)" \
		-c "CREATE CAST (bytea AS nb_model) WITHOUT FUNCTION" >/dev/null 2>&1; then
	raw=1
fi

crash_watch_start
start=$(date +%s)
"$work/crafted" "$count" "$seed" "$faildir" "$raw"
status=$?
elapsed=$(($(date +%s) - start))
crash_watch_check 7 "the server log shows no crashed backend" || status=1
echo "# ran for $elapsed s"
if [ "$status" -eq 0 ]; then
	psql -XqAt -c "DROP SCHEMA crafted CASCADE" >/dev/null 2>&1
fi
if ls "$faildir"/*.hex >/dev/null 2>&1; then
	echo "# failing values (hex): $faildir"
fi
echo "1..7"
exit "$status"
