#!/usr/bin/env bash
# Parity of nbc against scikit-learn on real data:
#
#   bash test/parity/run.sh [parity.py options]
#
# Assumes the libpq environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD,
# PGDATABASE) point at a database where it may create tables, with nbc
# installed (make install); it runs CREATE EXTENSION IF NOT EXISTS nbc.
# Loads SpamAssassin (test/data/load_spamassassin.py, which runs
# test/data/fetch_data.sh if the corpus is not cached yet) and Reuters Grain
# (test/data/load_reuters.py, from Debian's weka package), then runs
# test/parity/parity.py: one "ok - ..." / "not ok - ..." line per check and a
# closing "N passed, N failed"; exit status 1 if anything failed.
#
# Needs: python3-sklearn python3-pandas python3-psycopg2 weka npm (test/setup.sh
# installs them).  NBC_PARITY_SKIP_LOAD=1 reuses already loaded tables;
# NBC_PYTHON overrides /usr/bin/python3 (the interpreter that sees sklearn).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/../data
py=${NBC_PYTHON:-/usr/bin/python3}

# fail STEP LOG: report a setup step that failed as one failed check
fail() {
	echo "not ok - $1: $(tail -n 3 "$2" | tr '\n' ' ')"
	echo "0 passed, 1 failed"
	exit 1
}

log=$(mktemp /tmp/nbc-parity.XXXXXX)
trap 'rm -f "$log"' EXIT

psql -X -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' \
	-c 'CREATE EXTENSION IF NOT EXISTS nbc' >"$log" 2>&1 || fail "CREATE EXTENSION nbc" "$log"

if [ "${NBC_PARITY_SKIP_LOAD:-0}" != 1 ]; then
	for loader in load_spamassassin.py load_reuters.py; do
		"$py" "$data/$loader" >"$log" 2>&1 || fail "test/data/$loader" "$log"
		sed 's/^/# /' "$log"
	done
fi

exec "$py" "$here/parity.py" "$@"
