#!/usr/bin/env bash
# Prepares a Debian 12 machine with PostgreSQL 15 for the nbc tests and demo:
#   1. installs the build headers, the scikit-learn peer, the data packages
#      and libFuzzer (skipped quickly when all are installed already),
#   2. fetches the data sets (test/data/fetch_data.sh),
#   3. builds nbc and installs it into PostgreSQL 15, with 0.1.0's full script
#      (test/fixtures), the root of the update chain the upgrade tests need.
#
#   bash test/setup.sh           do all of that (as root, or with sudo)
#   source test/setup.sh         only define nbc_setup and nbc_virtualenv;
#                                test/run_all.sh and test/demo.sh do this
#
# Fails loudly: any step that fails stops the script with its status.

NBC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# the PostgreSQL installation nbc is built for and tested against
NBC_PG_CONFIG=${NBC_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

nbc_setup() {
	# build headers; scikit-learn, the parity peer, and the loaders' driver;
	# weka for its Reuters data; Russian and Chinese fortunes for the tokenizer's
	# parity; clang's libFuzzer for the unit suite's fuzz run
	local packages=(postgresql-server-dev-15 python3-sklearn python3-pandas python3-psycopg2 python3-mpmath weka
		dataset-fashion-mnist fortunes-ru fortunes-zh clang libclang-rt-14-dev sqlsmith)
	# the unit suite's cross builds (test/unit/cross.sh): without them it
	# skips those loudly, so an archive that does not serve them fails nothing
	local cross_packages=(gcc-aarch64-linux-gnu gcc-s390x-linux-gnu libc6-dev-arm64-cross
		libc6-dev-s390x-cross qemu-user-static)
	# fastText, a peer of the benchmarks only (test/bench/peers_bench.py)
	local bench_packages=(python3-fasttext)
	local sudo=() missing=() p status

	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "setup.sh: run as root (apt-get and make install need it)" >&2
			return 1
		}
		sudo=(sudo)
	fi

	for p in "${packages[@]}" "${cross_packages[@]}" "${bench_packages[@]}"; do
		status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$status" = installed ] || missing+=("$p")
	done
	# npm comes from Debian only when the machine has none of its own
	command -v npm >/dev/null || { packages+=(npm); missing+=(npm); }

	if [ ${#missing[@]} -gt 0 ]; then
		echo "== setup: installing ${missing[*]}"
		"${sudo[@]}" apt-get update
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${cross_packages[@]}" ||
			echo "== setup: !!! could not install ${cross_packages[*]}: the unit suite skips its cross builds" >&2
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${bench_packages[@]}" ||
			echo "== setup: !!! could not install ${bench_packages[*]}: the peers benchmark cannot run fastText" >&2
	else
		echo "== setup: packages already installed"
	fi

	echo "== setup: fetching data"
	bash "$NBC_ROOT/test/data/fetch_data.sh" >/dev/null

	echo "== setup: building nbc"
	make -C "$NBC_ROOT" -j2 PG_CONFIG="$NBC_PG_CONFIG"
	# An earlier build's full script (nbc--X.sql of an older version) would let
	# CREATE EXTENSION ... VERSION 'X' skip the update chain the tests check.
	"${sudo[@]}" rm -f "$("$NBC_PG_CONFIG" --sharedir)"/extension/nbc--*.sql
	"${sudo[@]}" make -C "$NBC_ROOT" install PG_CONFIG="$NBC_PG_CONFIG"
	# the root of the update chain, which the upgrade tests install from
	"${sudo[@]}" make -C "$NBC_ROOT" install-upgrade-root PG_CONFIG="$NBC_PG_CONFIG"
}

# nbc_virtualenv CMD...: run CMD in a throwaway PostgreSQL 15 cluster.
# pg_virtualenv exports PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE and
# PG_CONFIG for CMD and drops the cluster afterwards.  -t and a port of our own
# keep runs side by side (tests and demo at once) from colliding.
nbc_virtualenv() {
	local port start i
	start=$((5433 + RANDOM % 500))
	for ((i = 0; i < 500; i++)); do
		port=$((start + i))
		[ -e "/var/run/postgresql/.s.PGSQL.$port" ] && continue
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
		PGPORT=$port pg_virtualenv -t -v 15 "$@"
		return
	done
	echo "setup.sh: no free port for a PostgreSQL cluster" >&2
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	nbc_setup
fi
