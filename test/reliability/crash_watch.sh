# crash_watch.sh — sourced by crafted.sh and sqlsmith.sh: did a backend crash
# while the test ran?  A crash makes the postmaster end every session, so the
# tests check that their connection survived; this also reads what the
# server logged meanwhile, when the log can be found:
#   $NBC_SERVER_LOG, else pg_current_logfile() (logging_collector), else
#   <data_directory>/log (pg_ctl -l there), else the Debian cluster log
#   /var/log/postgresql/postgresql-<cluster_name with - for />.log.
#
#   crash_watch_start            remember the log and its current size
#   crash_watch_check NUM DESC   print TAP test NUM; status 1 on a crash

crash_watch_log=
crash_watch_offset=0

crash_watch_start() {
	local f dir name
	f=${NBC_SERVER_LOG:-}
	if [ -z "$f" ]; then
		f=$(psql -XAtqc "SELECT coalesce(pg_current_logfile(), '')" 2>/dev/null || true)
		dir=$(psql -XAtqc "SELECT current_setting('data_directory')" 2>/dev/null || true)
		if [ -n "$f" ] && [ "${f#/}" = "$f" ]; then
			f=$dir/$f
		fi
		if [ -z "$f" ] && [ -n "$dir" ] && [ -f "$dir/log" ]; then
			f=$dir/log
		fi
		if [ -z "$f" ]; then
			name=$(psql -XAtqc "SELECT current_setting('cluster_name')" 2>/dev/null || true)
			[ -n "$name" ] && f=/var/log/postgresql/postgresql-${name//\//-}.log
		fi
	fi
	if [ -n "$f" ] && [ -r "$f" ]; then
		crash_watch_log=$f
		crash_watch_offset=$(stat -c %s "$f")
	fi
}

# Prints "ok NUM - DESC" or "not ok NUM - DESC" and the lines found.
crash_watch_check() {
	local num=$1 desc=$2 found
	if [ -z "$crash_watch_log" ] && [ -n "${NBC_SERVER_LOG:-}" ]; then
		# the test command names the log: not finding it is a failure
		echo "not ok $num - $desc"
		echo "# NBC_SERVER_LOG=$NBC_SERVER_LOG cannot be read"
		return 1
	fi
	if [ -z "$crash_watch_log" ]; then
		echo "ok $num - $desc # SKIP server log not found (set NBC_SERVER_LOG); the connection checks still ran"
		return 0
	fi
	found=$(tail -c +"$((crash_watch_offset + 1))" "$crash_watch_log" |
		grep -E 'terminated by signal|server process .* was terminated|was terminated by exception|terminating any other active server processes' |
		head -n 5)
	if [ -n "$found" ]; then
		echo "not ok $num - $desc"
		printf '%s\n' "$found" | sed 's/^/# /'
		return 1
	fi
	echo "ok $num - $desc ($crash_watch_log)"
}
