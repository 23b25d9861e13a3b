#!/bin/sh
# check.sh — run by `make check`: the unit test programs ($UNITS, from the
# Makefile) and the same built with NB_PORTABLE ($PORTABLE_UNITS, their
# tests named "portable: ..."), then short runs of the three fuzzers, each
# counted as one more test, then the unit tests built for $CROSS_ARCHS and
# run under qemu-user (cross.sh, their tests named "ARCH: ..."); prints one
# summary line for all.
cd "$(dirname "$0")" || exit 2
: "${UNITS:?set UNITS to the unit test programs (make check does)}"
: "${CROSS_ARCHS?set CROSS_ARCHS to the architectures of cross.sh (make check does)}"
MAKE=${MAKE:-make}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_DECODE_SECONDS=${FUZZ_DECODE_SECONDS:-10}
FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-4096}

passed=0
failed=0
. ./units.sh

# The portable programs run meanwhile, on another core where there is one:
# they take less than half the time of the sanitized ones.  Their lines and
# summary go to portable-check.log, printed after the others'.
(
	run_units "portable: " $PORTABLE_UNITS
	echo "$passed passed, $failed failed"
) >portable-check.log 2>&1 &
portable=$!
run_units "" $UNITS
wait $portable
summary=$(tail -n 1 portable-check.log)
sed '$d' portable-check.log
if ! add_counts "$summary"; then
	printf '%s\n' "$summary"
	echo "not ok - portable unit tests: no summary, see test/unit/portable-check.log"
	failed=$((failed + 1))
fi

# The compiler's extensions only through src/nb_port.h: -pedantic does not
# see builtins and attributes, and the portable build would still use them.
gnu=$(grep -nE '__builtin_|__attribute__|__int128|__extension__|__GNUC__|__clang__|__BYTE_ORDER__|__SIZEOF_INT128__|__x86_64__|__SSE2__' \
	../../src/nb_*.[ch] ../../src/workflows/nb_*.[ch] | grep -v '^\.\./\.\./src/nb_port\.h:')
if [ -z "$gnu" ]; then
	echo "ok - portable: compiler extensions in src/nb_* only through nb_port.h"
	passed=$((passed + 1))
else
	echo "not ok - portable: compiler extensions in src/nb_* outside nb_port.h:"
	printf '%s\n' "$gnu" | sed 's/^/# /'
	failed=$((failed + 1))
fi

# run_fuzzer NAME TARGET SECONDS WORKDIR LOG [MAX_LEN]: build TARGET, fuzz for
# SECONDS from corpus/ (new inputs in WORKDIR) with inputs up to MAX_LEN
# bytes (FUZZ_MAX_LEN), count the result as one test.
run_fuzzer() {
	name=$1 target=$2 seconds=$3 work=$4 log=$5 max_len=${6:-$FUZZ_MAX_LEN}
	if ! $MAKE -s "$target" >"$log" 2>&1; then
		echo "not ok - $name: cannot build the fuzzer (clang with libFuzzer: apt-get install clang libclang-rt-14-dev), see test/unit/$log"
		failed=$((failed + 1))
		return
	fi
	mkdir -p "$work" fuzz-artifacts
	./"$target" -max_total_time="$seconds" -max_len="$max_len" \
		-artifact_prefix=fuzz-artifacts/ -print_final_stats=1 "$work" corpus \
		>>"$log" 2>&1
	fstatus=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	if [ -z "$runs" ]; then
		runs=$(sed -n 's/.*#\([0-9][0-9]*\)[[:space:]].*/\1/p' "$log" | tail -n 1)
	fi
	if [ "$fstatus" -eq 0 ]; then
		echo "ok - $name (${runs:-?} runs in ${seconds} s)"
		passed=$((passed + 1))
	else
		what=$(grep -m 1 -E "^$target:|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error" "$log")
		artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		echo "not ok - $name: exit status $fstatus after ${runs:-?} runs: ${what:-see test/unit/$log}"
		if [ -n "$artifact" ] && [ -f "$artifact" ]; then
			echo "# input: test/unit/$artifact"
			echo "# hex: $(od -An -v -tx1 "$artifact" | tr -d ' \n')"
		fi
		echo "# full output: test/unit/$log"
		failed=$((failed + 1))
	fi
}

run_fuzzer "fuzz nb_view_open" fuzz_model "$FUZZ_SECONDS" fuzz-work fuzz-check.log
run_fuzzer "fuzz the decoder alone (fuzz_decode)" fuzz_decode "$FUZZ_DECODE_SECONDS" \
	fuzz-decode-work fuzz-decode-check.log
run_fuzzer "fuzz nb_metrics' serialized states (fuzz_metrics)" fuzz_metrics "$FUZZ_METRICS_SECONDS" \
	fuzz-metrics-work fuzz-metrics-check.log "$FUZZ_METRICS_MAX_LEN"

# The unit tests for the other architectures under qemu-user, both at once
# (cross.sh; "# SKIP cross ..." for one whose tools are not installed).
cross=$(./cross.sh $CROSS_ARCHS)
summary=$(printf '%s\n' "$cross" | tail -n 1)
printf '%s\n' "$cross" | sed '$d'
if ! add_counts "$summary"; then
	printf '%s\n' "$summary"
	echo "not ok - cross: cross.sh printed no summary"
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
