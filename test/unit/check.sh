#!/bin/sh
# check.sh — run by `make check`: the unit tests (test_model, test_merge), then a short fuzz run that
# counts as one more test; prints one summary line for all of them.
cd "$(dirname "$0")" || exit 2
MAKE=${MAKE:-make}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-4096}

passed=0
failed=0
for unit in test_model test_merge; do
	out=$(./$unit)
	status=$?
	summary=$(printf '%s\n' "$out" | tail -n 1)
	printf '%s\n' "$out" | sed '$d'
	p=$(printf '%s\n' "$summary" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$summary" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
		# the test binary died before its summary (a sanitizer abort, for example)
		printf '%s\n' "$summary"
		echo "not ok - unit tests: $unit exited with status $status before its summary"
		p=0
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done

name="fuzz nb_view_open"
if ! $MAKE -s fuzz_model >fuzz-check.log 2>&1; then
	echo "not ok - $name: cannot build the fuzzer (clang with libFuzzer: apt-get install clang libclang-rt-14-dev), see test/unit/fuzz-check.log"
	failed=$((failed + 1))
else
	mkdir -p fuzz-work fuzz-artifacts
	./fuzz_model -max_total_time="$FUZZ_SECONDS" -max_len="$FUZZ_MAX_LEN" \
		-artifact_prefix=fuzz-artifacts/ -print_final_stats=1 fuzz-work corpus \
		>>fuzz-check.log 2>&1
	fstatus=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' fuzz-check.log | tail -n 1)
	if [ -z "$runs" ]; then
		runs=$(sed -n 's/.*#\([0-9][0-9]*\)[[:space:]].*/\1/p' fuzz-check.log | tail -n 1)
	fi
	if [ "$fstatus" -eq 0 ]; then
		echo "ok - $name (${runs:-?} runs in ${FUZZ_SECONDS} s)"
		passed=$((passed + 1))
	else
		what=$(grep -m 1 -E '^fuzz_model:|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error' fuzz-check.log)
		artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' fuzz-check.log | tail -n 1)
		echo "not ok - $name: exit status $fstatus after ${runs:-?} runs: ${what:-see test/unit/fuzz-check.log}"
		if [ -n "$artifact" ] && [ -f "$artifact" ]; then
			echo "# input: test/unit/$artifact"
			echo "# hex: $(od -An -v -tx1 "$artifact" | tr -d ' \n')"
		fi
		echo "# full output: test/unit/fuzz-check.log"
		failed=$((failed + 1))
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
