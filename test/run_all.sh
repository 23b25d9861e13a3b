#!/usr/bin/env bash
# The nbc test command:  bash test/run_all.sh
# Runs test/setup.sh (packages, data, build, install), then, inside one
# throwaway PostgreSQL 15 cluster (pg_virtualenv), every suite:
#   pg_regress   make installcheck (sql/*.sql against expected/*.out)
#   parity       test/parity/run.sh (nbc against scikit-learn on real data)
#   unit         the pure-C unit tests, when test/unit/Makefile exists
#   readme       test/readme/check.py (README.md's SQL runs and prints what it shows)
#   versions     test/versions.sh: pg_regress and a parity subset on the other
#                PostgreSQL versions (servers from Debian's archive, cached)
#   reliability  test/reliability/run.sh --quick (concurrency, crash, dump,
#                update path, non-superuser and the other streams' parts)
# and closes with one line "N passed, N failed".  Exits 1 when a test failed
# or a suite could not run.
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
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		ok=${BASH_REMATCH[1]} bad=${BASH_REMATCH[2]}
		sed '$d' "$result"
	else
		ok=0 bad=0
		cat "$result"
	fi
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		# the cluster or the runner itself failed outside any suite
		echo "test cluster: exited with status $rc"
		bad=1
	fi
	echo "$ok passed, $bad failed"
	[ "$bad" -eq 0 ] || exit 1
	exit 0
fi

logs=$(mktemp -d /tmp/nbc-tests.XXXXXX)
trap 'rm -rf "$logs"' EXIT

suites=()     # suite names in run order
declare -A passed failed note

# record NAME PASSED FAILED [NOTE]
record() {
	suites+=("$1")
	passed[$1]=$2
	failed[$1]=$3
	note[$1]=${4:-}
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

# tally NAME PASSED FAILED RC: record a suite's counts; a suite that ran no
# test, or exited non-zero without a failed test, counts one failure.
tally() {
	local name=$1 ok=$2 bad=$3 rc=$4
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		record "$name" "$ok" 1 "exited with status $rc"
	elif [ $((ok + bad)) -eq 0 ]; then
		record "$name" 0 1 "ran no test"
	else
		record "$name" "$ok" "$bad"
	fi
}

# count_tap NAME LOG RC: a suite that prints "ok ..." / "not ok ..." lines.
count_tap() {
	local ok bad
	ok=$(grep -cE '^ok([[:space:]]|$)' "$2" || true)
	bad=$(grep -cE '^not ok([[:space:]]|$)' "$2" || true)
	tally "$1" "$ok" "$bad" "$3"
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
	local log=$logs/versions.log rc=0 ok bad skipped
	echo
	echo "=== versions (test/versions.sh: pg_regress and parity on PostgreSQL 16, 17, 18)"
	run_logged "$log" bash test/versions.sh || rc=$?
	ok=$(grep -cE '^ok([[:space:]]|$)' "$log" || true)
	bad=$(grep -cE '^not ok([[:space:]]|$)' "$log" || true)
	# a version that could not be obtained is no failure, but the summary says so
	skipped=$(sed -n 's/^# !!! SKIPPED PostgreSQL \([0-9]*\):.*/\1/p' "$log" | sort -u | paste -sd, -)
	if [ -n "$skipped" ] && [ "$rc" -eq 0 ] && [ $((ok + bad)) -eq 0 ]; then
		record versions 0 0 "SKIPPED PostgreSQL $skipped: not obtained"
		return
	fi
	tally versions "$ok" "$bad" "$rc"
	[ -z "$skipped" ] || [ -n "${note[versions]}" ] || note[versions]="SKIPPED PostgreSQL $skipped: not obtained"
}

suite_reliability() {
	local log=$logs/reliability.log rc=0
	echo
	echo "=== reliability (test/reliability/run.sh --quick)"
	run_logged "$log" bash test/reliability/run.sh --quick || rc=$?
	count_tap reliability "$log" "$rc"
}

# To add a suite: write suite_NAME (run it, then record or count_tap) and list it here.
for s in pg_regress parity unit readme reliability versions; do
	"suite_$s"
done

total_ok=0
total_bad=0
{
	echo "=== summary"
	for s in "${suites[@]}"; do
		printf '%-12s %5d passed, %d failed%s\n' "$s" "${passed[$s]}" "${failed[$s]}" \
			"${note[$s]:+  (${note[$s]})}"
		total_ok=$((total_ok + passed[$s]))
		total_bad=$((total_bad + failed[$s]))
	done
	echo "$total_ok passed, $total_bad failed"
} >"$NBC_TEST_RESULT"
[ "$total_bad" -eq 0 ]
