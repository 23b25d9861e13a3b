#!/usr/bin/env bash
# Parity of nbc against scikit-learn on real data:  bash test/parity/run.sh [parity.py options]
#
# Assumes the libpq environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD,
# PGDATABASE) point at a database where it may create tables, with nbc
# installed (make install); it runs CREATE EXTENSION IF NOT EXISTS nbc.
# Loads SpamAssassin (test/data/load_spamassassin.py, fetching it with
# test/data/fetch_data.sh if needed) and Reuters Grain (test/data/load_reuters.py,
# from Debian's weka package), then runs test/parity/parity.py, which prints
# "ok - ..." / "not ok - ..." lines and "N passed, N failed".
# Needs: python3-sklearn, python3-psycopg2, weka, npm (test/setup.sh installs them).
# Set NBC_PARITY_SKIP_LOAD=1 to reuse already loaded tables.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/../data
py=${NBC_PYTHON:-/usr/bin/python3}

psql -X -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' \
	-c 'CREATE EXTENSION IF NOT EXISTS nbc'

if [ "${NBC_PARITY_SKIP_LOAD:-0}" != 1 ]; then
	echo "# loading data"
	"$py" "$data/load_spamassassin.py" | sed 's/^/# /'
	"$py" "$data/load_reuters.py" | sed 's/^/# /'
fi

exec "$py" "$here/parity.py" "$@"
