#!/bin/sh
# cross.sh ARCH... — run by `make cross` and by check.sh: the unit test
# programs ($UNITS, from the Makefile) for other architectures (aarch64,
# s390x), built static with Debian's cross compiler (make cross-build-ARCH,
# into obj-ARCH/) and run under qemu-user (qemu-ARCH-static), their tests
# named "ARCH: ...", and the extension compiled for ARCH with -Werror
# against PostgreSQL 15's headers for ARCH (cross-pg.sh).  The architectures
# run side by side, each on a core; prints their lines in order, then one
# summary line for all.
#
# test_format flips one bit of each byte (NBT_FLIPS_PER_BYTE=1), not all
# eight: emulated, every bit takes minutes.  An architecture whose compiler,
# C library or qemu is not installed is skipped, loudly ("# SKIP ..."), and
# counts no test; once they are installed, a build that fails is a failed
# test.
cd "$(dirname "$0")" || exit 2
: "${UNITS:?set UNITS to the unit test programs (make cross does)}"
MAKE=${MAKE:-make}

passed=0
failed=0
. ./units.sh

# missing ARCH: what of the cross build and run of ARCH is not installed, as
# Debian's package names; nothing when all is.
missing() {
	case $1 in
	aarch64) libc=libc6-dev-arm64-cross ;;
	*) libc=libc6-dev-$1-cross ;;
	esac
	if command -v "$1-linux-gnu-gcc" >/dev/null 2>&1; then
		# the compiler prints the name alone when it finds no such file
		[ "$("$1-linux-gnu-gcc" -print-file-name=libc.a)" != libc.a ] || printf ' %s' "$libc"
	else
		printf ' gcc-%s-linux-gnu' "$1"
	fi
	command -v "qemu-$1-static" >/dev/null 2>&1 || printf ' qemu-user-static'
}

# cross_run ARCH: build and run ARCH's programs, then a summary line.
cross_run() {
	arch=$1
	passed=0
	failed=0
	if ! $MAKE -s "cross-build-$arch" >"cross-$arch-build.log" 2>&1; then
		echo "not ok - $arch: cannot build the unit tests, see test/unit/cross-$arch-build.log"
		failed=1
	else
		echo "# $arch: the unit tests built by $arch-linux-gnu-gcc, run under qemu-$arch-static;" \
			"test_format with NBT_FLIPS_PER_BYTE=1"
		programs=
		for unit in $UNITS; do
			programs="$programs obj-$arch/$unit"
		done
		NBT_FLIPS_PER_BYTE=1 UNIT_RUNNER=qemu-$arch-static run_units "$arch: " $programs
	fi
	# the extension itself, against PostgreSQL's headers for ARCH
	pg=$(./cross-pg.sh "$arch")
	printf '%s\n' "$pg"
	passed=$((passed + $(printf '%s\n' "$pg" | grep -c '^ok - ')))
	failed=$((failed + $(printf '%s\n' "$pg" | grep -c '^not ok - ')))
	echo "$passed passed, $failed failed"
}

jobs=
for arch in "$@"; do
	lacking=$(missing "$arch")
	if [ -n "$lacking" ]; then
		echo "# SKIP cross $arch: not installed:$lacking (test/setup.sh installs them)"
		continue
	fi
	cross_run "$arch" >"cross-$arch-check.log" 2>&1 &
	jobs="$jobs $!:$arch"
done
for job in $jobs; do
	wait "${job%%:*}"
	log=cross-${job#*:}-check.log
	summary=$(tail -n 1 "$log")
	sed '$d' "$log"
	if ! add_counts "$summary"; then
		printf '%s\n' "$summary"
		echo "not ok - ${job#*:}: no summary, see test/unit/$log"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
