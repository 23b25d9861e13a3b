#!/usr/bin/env bash
# The nbc test command:  bash test/run_all.sh
# Runs test/setup.sh (packages, data, build, install), then, inside one
# throwaway PostgreSQL 15 cluster (pg_virtualenv), every suite:
#   pg_regress   make installcheck (sql/*.sql against expected/*.out)
#   parity       test/parity/run.sh (nbc against scikit-learn on real data)
#   unit         the pure-C unit tests, when test/unit/Makefile exists, also
#                built for aarch64 and s390x and run under qemu-user
#   readme       test/readme/check.py (README.md's SQL runs and prints what it shows)
#   versions     test/versions.sh: pg_regress and a parity subset on the other
#                PostgreSQL versions (servers from Debian's archive, cached)
#   reliability  test/reliability/run.sh --quick (concurrency, crash, live models, dump,
#                update path, non-superuser and the other streams' parts)
#   citus        test/citus/run.sh against the Citus coordinator that NBC_CITUS
#                names (a libpq connection string); without one, a loud skip
# and closes with one line "N passed, N failed, N skipped" (a skipped check is
# one that does not apply here, said loudly where it happens).  Exits 1 when a
# test failed or a suite could not run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ -z "${NBC_TEST_RESULT:-}" ]; then
	source test/setup.sh
	nbc_setup
	# the suites run in one throwaway cluster; they leave their summary in
	# $result, printed after pg_virtualenv (whose diagnostics on failure, the
	# server log and core backtraces, come first) so the count closes the output
	result=$(mktemp /tmp/nbc-result.XXXXXX)
	trap 'rm -f "$result"' EXIT
	rc=0
	nbc_virtualenv env NBC_TEST_RESULT="$result" bash "$root/test/run_all.sh" || rc=$?
	echo
	last=$(tail -n 1 "$result")
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		ok=${BASH_REMATCH[1]} bad=${BASH_REMATCH[2]} skipped=${BASH_REMATCH[3]}
		sed '$d' "$result"
	else
		ok=0 bad=0 skipped=0
		cat "$result"
	fi
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		# the cluster or the runner itself failed outside any suite
		echo "test cluster: exited with status $rc"
		bad=1
	fi
	echo "$ok passed, $bad failed, $skipped skipped"
	[ "$bad" -eq 0 ] || exit 1
	exit 0
fi

logs=$(mktemp -d /tmp/nbc-tests.XXXXXX)
trap 'rm -rf "$logs"' EXIT

# the throwaway cluster's server log (pg_virtualenv -t keeps it beside the
# cluster's configuration): the reliability suite's crash checks read it, and
# fail if it cannot be read
if [ -n "${PG_CLUSTER_CONF_ROOT:-}" ]; then
	export NBC_SERVER_LOG=${NBC_SERVER_LOG:-${PG_CLUSTER_CONF_ROOT%/postgresql}/log/postgresql-15-regress.log}
fi

suites=()     # suite names in run order
declare -A passed failed skipped note seconds

# record NAME PASSED FAILED [NOTE [SKIPPED]]
record() {
	suites+=("$1")
	passed[$1]=$2
	failed[$1]=$3
	note[$1]=${4:-}
	skipped[$1]=${5:-0}
}

# run_logged LOG CMD...: show the output as it comes, keep it in LOG, return CMD's status
run_logged() {
	local log=$1 rc
	shift
	set +e
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	return "$rc"
}

# tally NAME PASSED FAILED RC [SKIPPED]: record a suite's counts; a suite that
# ran no test, or exited non-zero without a failed test, counts one failure.
tally() {
	local name=$1 ok=$2 bad=$3 rc=$4 skip=${5:-0}
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		record "$name" "$ok" 1 "exited with status $rc" "$skip"
	elif [ $((ok + bad)) -eq 0 ]; then
		record "$name" 0 1 "ran no test" "$skip"
	else
		record "$name" "$ok" "$bad" "" "$skip"
	fi
}

# count_skips LOG: the checks a TAP log skipped ("ok ... # SKIP ...", a
# plan "1..0 # SKIP ...", a part skipped loudly "# SKIP ...")
count_skips() {
	grep -ciE '^(ok .*# skip|1\.\.0 # skip|# skip )' "$1" || true
}

# count_tap NAME LOG RC: a suite that prints "ok ..." / "not ok ..." lines;
# an "ok ... # SKIP" line counts as skipped, not passed.
count_tap() {
	local ok bad skip skip_ok
	ok=$(grep -cE '^ok([[:space:]]|$)' "$2" || true)
	skip_ok=$(grep -ciE '^ok .*# skip' "$2" || true)
	bad=$(grep -cE '^not ok([[:space:]]|$)' "$2" || true)
	skip=$(count_skips "$2")
	tally "$1" "$((ok - skip_ok))" "$bad" "$3" "$skip"
}

suite_pg_regress() {
	local log=$logs/pg_regress.log rc=0 ok bad
	echo
	echo "=== pg_regress (make installcheck)"
	rm -rf results regression.diffs regression.out
	run_logged "$log" make installcheck PG_CONFIG="${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" || rc=$?
	# PG15: "test NAME ... ok", "     NAME ... ok" in parallel groups, "... FAILED"
	ok=$(grep -cE '^(test )?[[:space:]]*[^[:space:]]+[[:space:]]+\.\.\. ok\b' "$log" || true)
	bad=$(grep -cE '^(test )?[[:space:]]*[^[:space:]]+[[:space:]]+\.\.\. (FAILED|failed)\b' "$log" || true)
	if [ -s regression.diffs ]; then
		echo "--- regression.diffs"
		head -n 2000 regression.diffs
	fi
	tally pg_regress "$ok" "$bad" "$rc"
}

suite_parity() {
	local log=$logs/parity.log rc=0
	echo
	echo "=== parity (test/parity/run.sh)"
	if [ ! -f test/parity/run.sh ]; then
		record parity 0 1 "test/parity/run.sh is missing"
		return
	fi
	run_logged "$log" bash test/parity/run.sh || rc=$?
	count_tap parity "$log" "$rc"
}

suite_unit() {
	local log=$logs/unit.log rc=0
	[ -f test/unit/Makefile ] || return 0
	echo
	echo "=== unit (make -C test/unit check)"
	run_logged "$log" make -C test/unit check || rc=$?
	count_tap unit "$log" "$rc"
}

suite_readme() {
	local log=$logs/readme.log rc=0
	echo
	echo "=== readme (test/readme/check.py)"
	run_logged "$log" /usr/bin/python3 test/readme/check.py || rc=$?
	count_tap readme "$log" "$rc"
}

suite_versions() {
	local log=$logs/versions.log rc=0 ok bad versions_skipped n_skipped
	echo
	echo "=== versions (test/versions.sh: pg_regress and parity on PostgreSQL 16, 17, 18)"
	run_logged "$log" bash test/versions.sh || rc=$?
	ok=$(grep -cE '^ok([[:space:]]|$)' "$log" || true)
	bad=$(grep -cE '^not ok([[:space:]]|$)' "$log" || true)
	# a version that could not be obtained is no failure, but the summary says so
	versions_skipped=$(sed -n 's/^# !!! SKIPPED PostgreSQL \([0-9]*\):.*/\1/p' "$log" | sort -u | paste -sd, -)
	n_skipped=$(sed -n 's/^# !!! SKIPPED PostgreSQL \([0-9]*\):.*/\1/p' "$log" | sort -u | wc -l)
	if [ -n "$versions_skipped" ] && [ "$rc" -eq 0 ] && [ $((ok + bad)) -eq 0 ]; then
		record versions 0 0 "SKIPPED PostgreSQL $versions_skipped: not obtained" "$n_skipped"
		return
	fi
	tally versions "$ok" "$bad" "$rc" "$n_skipped"
	[ -z "$versions_skipped" ] || [ -n "${note[versions]}" ] ||
		note[versions]="SKIPPED PostgreSQL $versions_skipped: not obtained"
}

suite_reliability() {
	local log=$logs/reliability.log rc=0
	echo
	echo "=== reliability (test/reliability/run.sh --quick)"
	run_logged "$log" bash test/reliability/run.sh --quick || rc=$?
	count_tap reliability "$log" "$rc"
}

# Citus is not part of the throwaway cluster: the suite runs against the
# coordinator NBC_CITUS names, with nbc installed on every node; without it
# the suite is one loud skip (the plan "1..0 # SKIP ...")
suite_citus() {
	local log=$logs/citus.log rc=0
	echo
	echo "=== citus (test/citus/run.sh)"
	run_logged "$log" bash test/citus/run.sh || rc=$?
	if [ "$rc" -eq 0 ] && grep -qiE '^1\.\.0 # skip' "$log"; then
		record citus 0 0 "SKIPPED: no Citus cluster (NBC_CITUS not set)" 1
		return
	fi
	count_tap citus "$log" "$rc"
}

# To add a suite: write suite_NAME (run it, then record or count_tap) and list it here.
for s in pg_regress parity unit readme reliability versions citus; do
	started=$SECONDS
	"suite_$s"
	seconds[$s]=$((SECONDS - started))
done

total_ok=0
total_bad=0
total_skipped=0
{
	echo "=== summary"
	for s in "${suites[@]}"; do
		printf '%-12s %5d passed, %d failed, %d skipped, %4d s%s\n' "$s" "${passed[$s]}" "${failed[$s]}" \
			"${skipped[$s]}" "${seconds[$s]:-0}" "${note[$s]:+  (${note[$s]})}"
		total_ok=$((total_ok + passed[$s]))
		total_bad=$((total_bad + failed[$s]))
		total_skipped=$((total_skipped + skipped[$s]))
	done
	echo "$total_ok passed, $total_bad failed, $total_skipped skipped"
} >"$NBC_TEST_RESULT"
[ "$total_bad" -eq 0 ]
