#!/usr/bin/env bash
# The nbc benchmark:  bash test/bench/run.sh [--reps N] [--docs N]
#                     bash test/bench/run.sh --peers [--rounds N] [--cv-rounds N]
#
# --peers runs only README's Performance table (test/bench/peers_bench.py:
# nbc against scikit-learn and fastText on SpamAssassin, Reuters Grain and
# the Russian fortunes, and with NBC_CITUS set the Citus ratios of #44 on
# that cluster), about 15 minutes; the full run ends with it too.
#
# Separate from the test suite.  Makes its own throwaway PostgreSQL 15 cluster
# (initdb into a temporary folder, Unix socket only, removed at exit), loads the
# SpamAssassin corpus (test/data/load_spamassassin.py, which fetches it if
# needed), builds the benchmark data from it and runs every comparison
# (test/bench/bench.py), the forms of scoring with a model the query computes
# (test/bench/computed_bench.py), the tokenizer against the README's SQL
# tokenization (test/bench/tokens_bench.py), text in end to end against
# scikit-learn's Pipeline (test/bench/text_bench.py) and its parts in CPU
# time (test/bench/text_cpu.py, printed only), the cost of the check
# for rows with no known feature (test/bench/coverage_bench.py, about 2
# minutes), then cross-validation against scikit-learn's
# GridSearchCV on the same data (test/bench/cv_bench.py).  Prints tables of
# ratios to standard output (progress goes to standard error) and writes them
# as Markdown to test/bench/results.md.
#
# Needs nbc built and installed (bash test/setup.sh, or make && make install)
# and /usr/bin/python3 with scikit-learn, numpy and psycopg2 (test/setup.sh
# installs them).  Runs as root (the cluster then runs as user postgres) or as
# any user.  About 15 minutes on 2 cores, then the cross-validation half an
# hour to an hour more (3 rounds on 200,000 documents; 16 minutes with 2 rounds
# on 50,000 under a load average of 9).  NBC_BENCH_REPS (default 5) and
# NBC_BENCH_DOCS (default 200000) change the rounds and the size.
set -euo pipefail

peers_only=
if [ "${1:-}" = --peers ]; then
	peers_only=1
	shift
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
pg_config=${NBC_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
py=${NBC_PYTHON:-/usr/bin/python3}

die() {
	echo "run.sh: $*" >&2
	exit 1
}

[ -x "$pg_config" ] || die "$pg_config not found (apt-get install postgresql-server-dev-15)"
bindir=$("$pg_config" --bindir)
sharedir=$("$pg_config" --sharedir)
[ -f "$sharedir/extension/nbc.control" ] ||
	die "nbc is not installed (bash test/setup.sh, or make && make install)"
[ -f "$sharedir/extension/pg_trgm.control" ] ||
	die "pg_trgm is not installed (it ships with the postgresql-15 package)"
"$py" -c 'import sklearn, numpy, psycopg2' 2>/dev/null ||
	die "$py needs scikit-learn, numpy and psycopg2 (apt-get install python3-sklearn python3-psycopg2)"
"$py" -c 'import fasttext' 2>/dev/null ||
	die "$py needs fastText (apt-get install python3-fasttext)"

tmp=$(mktemp -d /tmp/nbc-bench.XXXXXX)
if [ "$(id -u)" -eq 0 ]; then
	# the server refuses to run as root
	id postgres >/dev/null 2>&1 || die "no user postgres to run the cluster"
	chown postgres "$tmp"
	as_pg=(runuser -u postgres --)
	superuser=postgres
else
	as_pg=()
	superuser=$(id -un)
fi

cleanup() {
	(cd "$tmp" && "${as_pg[@]}" "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop) \
		>/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== benchmark cluster in $tmp" >&2
(cd "$tmp" && "${as_pg[@]}" "$bindir/initdb" -D "$tmp/data" -A trust -U "$superuser" \
	-E UTF8 --locale=C) >"$tmp/initdb.log" 2>&1 ||
	{ cat "$tmp/initdb.log" >&2; die "initdb failed"; }
# A throwaway cluster: no durability, no background work that would add noise
# (autovacuum off: the benchmark vacuums its tables itself).  Unix socket in
# our own folder only, so the port cannot collide with another cluster.
cat >>"$tmp/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$tmp'
port = 5432
shared_buffers = 2GB
max_wal_size = 10GB
checkpoint_timeout = 1h
wal_level = minimal
max_wal_senders = 0
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
max_worker_processes = 8
max_parallel_workers = 8
jit = off
EOF
(cd "$tmp" && "${as_pg[@]}" "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w start) \
	>/dev/null || { cat "$tmp/server.log" >&2; die "the cluster did not start"; }

unset PGSERVICE PGPASSWORD PGSSLMODE PGOPTIONS
export PGHOST=$tmp PGPORT=5432 PGUSER=$superuser PGDATABASE=postgres
"$bindir/psql" -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION nbc' -c 'CREATE EXTENSION pg_trgm'
echo "== loading the SpamAssassin corpus" >&2
"$py" "$root/test/data/load_spamassassin.py" >&2
peers() {
	echo "== loading Reuters Grain and the fortunes" >&2
	"$py" "$root/test/data/load_reuters.py" >&2
	"$py" "$root/test/data/load_fortunes.py" >&2
	echo "== against scikit-learn and fastText (test/bench/peers_bench.py)" >&2
	"$py" "$here/peers_bench.py" --out "$here/results.md" "$@"
}
if [ -n "$peers_only" ]; then
	peers "$@"
	exit 0
fi
echo "== benchmark" >&2
"$py" "$here/bench.py" "$@"
echo "== models computed by the query (test/bench/computed_bench.py)" >&2
"$py" "$here/computed_bench.py" --out "$here/results.md"
echo "== the tokenizer (test/bench/tokens_bench.py)" >&2
"$py" "$here/tokens_bench.py" --out "$here/results.md"
echo "== text in, end to end (test/bench/text_bench.py)" >&2
"$py" "$here/text_bench.py" --out "$here/results.md"
echo "== text in, the parts in CPU time (test/bench/text_cpu.py)" >&2
"$py" "$here/text_cpu.py"
echo "== rows with no known feature (test/bench/coverage_bench.py)" >&2
"$py" "$here/coverage_bench.py" --out "$here/results.md"
echo "== cross-validation benchmark" >&2
"$py" "$here/cv_bench.py" "$@"
peers
