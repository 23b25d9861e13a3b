#!/usr/bin/env bash
# The nbc reliability suite, one command:
#
#   bash test/reliability/run.sh [--quick|--long] [--only PART[,PART...]]
#
# --quick (the default, and what test/run_all.sh runs) takes a few minutes;
# --long is the full version (more clients and transactions, crash rounds,
# bigger models, and each other stream's script in its own long mode).
# Parts, in order (each a function below; a part whose script is missing is
# reported as skipped, with why, and is not a failure):
#
#   concurrency  concurrency.sh: pgbench, 16 clients (32 long) writing rows and
#                merging them into stored models in the same transaction,
#                retraining, rolling back, scoring and checking; every stored
#                model equals nb_train over the committed rows, byte for byte
#   crash        concurrency.sh --crash: the same load in a throwaway cluster
#                of its own, pg_ctl stop -m immediate, restart, the same
#                equalities, no committed row lost, amcheck (1 round, 3 long)
#   live         live.sh: live models under pgbench writers (insert, update,
#                delete, rollback) with readers and REPEATABLE READ checkers
#                comparing nb_live with nb_train; an immediate shutdown under
#                that load; pg_dump and pg_restore (8 clients 15 s; 16 for 60 s
#                long); then label types, writers' settings and overloads,
#                1e308 weights, TEMP sources, partitions and inheritance
#   dump         dump.sh: pg_dump -Fc, plain, --column-inserts and binary COPY
#                into fresh databases; models, forms, summaries, predictions
#                identical; live models the same and exact through writes
#   upgrade      upgrade.sh: from every released version (sql/ scripts) to
#                the current one: catalog, model bytes and predictions equal a
#                fresh install's
#   nonsuper     nonsuper.sh: trusted install by a database owner who is not a
#                superuser; what that owner and plain users can and cannot do,
#                live models under row security, folds, names per schema, and
#                the owner's dumps and restores with no superuser
#   limits       limits.sh: the model size limit at its boundary
#   memory       memory.sh: peak memory of training, tokenizing, merging, input and output
#                (quick: NBC_MEM_SCALE=0.25 unless set)
#   cancel       cancel.py: cancel latency of every long operation
#   crafted      crafted.*: mutated models through every entry point
#   sqlsmith     sqlsmith.*: random queries against nbc objects
# Our parts are given --quick or --long; the other streams' scripts --quick
# in quick mode and nothing in long mode (their default is the full run).
#
# The server: the libpq environment (PGHOST, PGPORT, PGUSER, PGPASSWORD,
# PGDATABASE) when any of PGHOST, PGPORT, PGDATABASE or PGSERVICE is set, as a
# superuser with nbc installed; otherwise a throwaway cluster this script
# starts and removes (the server binaries of pg_config --bindir, or of
# $PG_CONFIG; as user postgres when run as root).  The crash part always
# starts a cluster of its own, on the first free port from 56040, and the
# live part one from 56080 (both from NBC_REL_PORT_BASE when it is set).
#
# Output: TAP lines "ok - ..." / "not ok - ...", everything else as "# "
# comments, a summary per part, and a closing "N passed, N failed".  Exit
# status 1 when a check failed or a part exited non-zero without a failed
# check, timed out (NBC_REL_PART_TIMEOUT seconds, default 900 quick and
# 21600 long: a guard against a hang, not a timing check) or ran no check.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
py=${NBC_PYTHON:-/usr/bin/python3}

mode=quick
only=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) mode=quick ;;
	--long) mode=long ;;
	--only) only=,$2, && shift ;;
	*) echo "usage: $0 [--quick|--long] [--only PART[,PART...]]" >&2; exit 2 ;;
	esac
	shift
done
timeout_s=${NBC_REL_PART_TIMEOUT:-$([ "$mode" = quick ] && echo 900 || echo 21600)}

parts=(concurrency crash live dump upgrade nonsuper limits memory cancel crafted sqlsmith)
declare -A p_ok p_bad p_secs p_note
total_ok=0
total_bad=0

# as_tap: TAP lines and comments as they are, anything else as a comment
as_tap() {
	local line
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok([[:space:]]|$) || $line =~ ^# ]]; then
			echo "$line"
		else
			echo "# $line"
		fi
	done
}

# run_part NAME CMD...: run one part's script, show its output as it comes
# (through as_tap), count its checks
run_part() {
	local name=$1 out rc start ok bad
	shift
	echo "# === $name: ${*/#$here\//}"
	out=$(mktemp /tmp/nbc-rel-part.XXXXXX)
	start=$SECONDS
	timeout --kill-after=30 "$timeout_s" "$@" </dev/null 2>&1 | tee "$out" | as_tap
	rc=${PIPESTATUS[0]}
	ok=$(grep -cE '^ok([[:space:]]|$)' "$out")
	bad=$(grep -cE '^not ok([[:space:]]|$)' "$out")
	rm -f "$out"
	if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ $((SECONDS - start)) -ge "$timeout_s" ]; }; then
		echo "not ok - $name: timed out after $timeout_s s (a hang?)"
		bad=$((bad + 1))
	elif [ $rc -ne 0 ] && [ "$bad" -eq 0 ]; then
		echo "not ok - $name: exited with status $rc"
		bad=1
	elif [ $((ok + bad)) -eq 0 ]; then
		echo "not ok - $name: ran no check"
		bad=1
	fi
	# a part may be several scripts (crafted.sh and crafted.py, say)
	p_ok[$name]=$((${p_ok[$name]:-0} + ok))
	p_bad[$name]=$((${p_bad[$name]:-0} + bad))
	p_secs[$name]=$((${p_secs[$name]:-0} + SECONDS - start))
	total_ok=$((total_ok + ok))
	total_bad=$((total_bad + bad))
}

# skip NAME WHY: a part that cannot run here, said loudly, not a failure
skip() {
	echo "# === $1"
	echo "# SKIP $1: $2"
	p_note[$1]="skipped: $2"
}

# run_other NAME DESCRIPTION PATTERN: the scripts another stream writes,
# test/reliability/PATTERN (.sh run with bash, .py with python3, other
# executables directly; anything else, such as .sql or .c, is theirs to
# use), given --quick in quick mode and no option in long mode (their
# default is their full run)
run_other() {
	local name=$1 what=$2 pattern=$3 f found=0 args=()
	[ "$mode" = quick ] && args=(--quick)
	for f in "$here"/$pattern; do
		[ -f "$f" ] || continue
		case $f in
		*.sh) run_part "$name" bash "$f" "${args[@]}" ;;
		*.py) run_part "$name" "$py" "$f" "${args[@]}" ;;
		*)
			[ -x "$f" ] || continue
			run_part "$name" "$f" "${args[@]}"
			;;
		esac
		found=1
	done
	[ $found -eq 1 ] || skip "$name" "no test/reliability/$pattern in this tree ($what)"
}

part_concurrency() { run_part concurrency bash "$here/concurrency.sh" "--$mode"; }
part_crash() { run_part crash bash "$here/concurrency.sh" "--$mode" --crash; }
part_live() { run_part live bash "$here/live.sh" "--$mode"; }
part_dump() { run_part dump bash "$here/dump.sh" "--$mode"; }
part_upgrade() { run_part upgrade bash "$here/upgrade.sh" "--$mode"; }
part_nonsuper() { run_part nonsuper bash "$here/nonsuper.sh" "--$mode"; }
part_limits() { run_other limits "model size limit boundary" limits.sh; }
# memory.sh's own knob for smaller models, unless the caller chose a scale
part_memory() {
	[ "$mode" = quick ] && export NBC_MEM_SCALE=${NBC_MEM_SCALE:-0.25}
	run_other memory "peak memory report" memory.sh
}
part_cancel() { run_other cancel "cancel latency" cancel.py; }
part_crafted() { run_other crafted "mutated models through every entry point" 'crafted*'; }
part_sqlsmith() { run_other sqlsmith "sqlsmith queries" 'sqlsmith*'; }

# the server: the libpq environment, or a throwaway cluster of our own
own=
if [ -z "${PGHOST:-}${PGPORT:-}${PGDATABASE:-}${PGSERVICE:-}" ]; then
	own=$(mktemp -d /tmp/nbc-rel-server.XXXXXX)
	trap 'rel_drop_cluster "$own"' EXIT
	if ! rel_start_cluster "$own" 56045 >"$own/start.log" 2>&1; then
		echo "not ok - start a throwaway cluster ($REL_BIN)"
		sed 's/^/# /' "$own/start.log"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "# server: a throwaway cluster ($REL_BIN, port $PGPORT)"
else
	echo "# server: the libpq environment (${PGHOST:-default host}, port ${PGPORT:-default})"
fi
if ! n=$(rel_psql -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'nbc'" 2>&1) || [ "$n" != 1 ]; then
	echo "not ok - nbc is installed in the server ($REL_BIN: make install PG_CONFIG=.../pg_config)"
	diag "$n"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "# mode: $mode"

for p in "${parts[@]}"; do
	[ -z "$only" ] || [[ $only == *,$p,* ]] || continue
	"part_$p"
done

echo "# === summary ($mode)"
for p in "${parts[@]}"; do
	[ -z "$only" ] || [[ $only == *,$p,* ]] || continue
	if [ -n "${p_note[$p]:-}" ]; then
		printf '# %-12s %s\n' "$p" "${p_note[$p]}"
	else
		printf '# %-12s %4d passed, %d failed  (%d s)\n' "$p" "${p_ok[$p]}" "${p_bad[$p]}" "${p_secs[$p]}"
	fi
done
echo "$total_ok passed, $total_bad failed"
[ "$total_bad" -eq 0 ]
