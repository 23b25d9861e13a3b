#!/usr/bin/env bash
# The nbc demo:  bash test/demo.sh
# Runs test/setup.sh (packages, data, build, install), then, in a throwaway
# PostgreSQL 15 cluster (pg_virtualenv): CREATE EXTENSION nbc, loads the
# SpamAssassin corpus into table spamassassin (test/data/load_spamassassin.py)
# and runs test/demo.sql with psql, echoing every query: a spam filter is
# trained, evaluated and tuned (cross-validation over event models and alpha)
# in SQL.  Then loads test/data/load_mixed.py's tables
# and runs test/demo_mixed.sql: mixed jsonb features (Weka's credit-g) and
# dense float8[] features (Fashion-MNIST).  Exits non-zero if any step fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ -z "${NBC_DEMO_CLUSTER:-}" ]; then
	source test/setup.sh
	nbc_setup
	rc=0
	nbc_virtualenv env NBC_DEMO_CLUSTER=1 bash "$root/test/demo.sh" || rc=$?
	exit "$rc"
fi

psql=(psql -X -v ON_ERROR_STOP=1 -P pager=off)

echo
echo "== loading the SpamAssassin corpus"
"${psql[@]}" --echo-queries -c 'CREATE EXTENSION nbc'
/usr/bin/python3 test/data/load_spamassassin.py

echo
"${psql[@]}" --echo-queries -f test/demo.sql

echo
echo "== loading scikit-learn's, Weka's and Fashion-MNIST's data sets"
/usr/bin/python3 test/data/load_mixed.py

echo
"${psql[@]}" --echo-queries -f test/demo_mixed.sql
