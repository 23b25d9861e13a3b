# units.sh — sourced by check.sh and cross.sh: run unit test programs and
# add up their summary lines.  The caller sets passed and failed to 0.

# add_counts LINE: add the counts of a summary line "N passed, N failed";
# false if LINE is not one.
add_counts() {
	p=$(printf '%s\n' "$1" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$1" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	[ -n "$p" ] || return 1
	passed=$((passed + p))
	failed=$((failed + f))
}

# run_units PREFIX UNIT...: run each program (./UNIT, under $UNIT_RUNNER when
# set, an emulator say), print its lines but its summary, with PREFIX
# before each test's name, and add its counts; a program that dies before
# its summary is one more failed test.
run_units() {
	prefix=$1
	shift
	for unit in "$@"; do
		out=$($UNIT_RUNNER ./$unit)
		status=$?
		summary=$(printf '%s\n' "$out" | tail -n 1)
		if add_counts "$summary"; then
			out=$(printf '%s\n' "$out" | sed '$d')
		else
			# the test binary died before its summary (a sanitizer abort, for example)
			out=$(printf '%s\n' "$out" "not ok - unit tests: $unit exited with status $status before its summary")
			failed=$((failed + 1))
		fi
		printf '%s\n' "$out" | sed -e "s/^ok - /ok - $prefix/" -e "s/^not ok - /not ok - $prefix/"
	done
}
